// The table behind op_registry.hpp; one row per AccelOp, in enum order.
#include "runtime/op_registry.hpp"

#include "runtime/op_observer.hpp"

#include <accel/plugin/op_set_names.hpp>

#include <array>
#include <cctype>

namespace accel::detail {
namespace {

constexpr size_t kNone = 0;
constexpr size_t kMatmul = sizeof(AccelMatmulAttributes);
constexpr size_t kConv = sizeof(AccelConv2dAttributes);
constexpr size_t kPool = sizeof(AccelPoolAttributes);
constexpr size_t kReduce = sizeof(AccelReduceAttributes);
constexpr size_t kAxis = sizeof(AccelAxisAttributes);
constexpr size_t kRandom = sizeof(AccelRandomAttributes);

const std::array<OpInfo, ACCEL_OP_COUNT> kOps = {{
    {"MatMul", "matmul", kMatmul, 0},
    {"Conv2D", "convolution", kConv, 0},
    {"Conv2DBackpropInput", "convolution", kConv, 0},
    {"Conv2DBackpropFilter", "convolution", kConv, 0},
    {"MaxPool", "pooling", kPool, 0},
    {"MaxPoolGrad", "pooling", kPool, 0},
    {"AvgPool", "pooling", kPool, 0},
    {"AvgPoolGrad", "pooling", kPool, 0},
    {"Neg", "elementwise", kNone, 0},
    {"Abs", "elementwise", kNone, 0},
    {"Exp", "elementwise", kNone, 0},
    {"Log", "elementwise", kNone, 0},
    {"Sqrt", "elementwise", kNone, 0},
    {"Rsqrt", "elementwise", kNone, 0},
    {"Square", "elementwise", kNone, 0},
    {"Relu", "elementwise", kNone, 0},
    {"Sigmoid", "elementwise", kNone, 0},
    {"Tanh", "elementwise", kNone, 0},
    {"Sign", "elementwise", kNone, 0},
    {"Reciprocal", "elementwise", kNone, 0},
    {"LogicalNot", "elementwise", kNone, 0},
    {"AddV2", "elementwise", kNone, 0},
    {"Sub", "elementwise", kNone, 0},
    {"Mul", "elementwise", kNone, 0},
    {"RealDiv", "elementwise", kNone, 0},
    {"Maximum", "elementwise", kNone, 0},
    {"Minimum", "elementwise", kNone, 0},
    {"Pow", "elementwise", kNone, 0},
    {"Equal", "elementwise", kNone, 0},
    {"NotEqual", "elementwise", kNone, 0},
    {"Less", "elementwise", kNone, 0},
    {"LessEqual", "elementwise", kNone, 0},
    {"Greater", "elementwise", kNone, 0},
    {"GreaterEqual", "elementwise", kNone, 0},
    {"ReluGrad", "elementwise", kNone, 0},
    {"SigmoidGrad", "elementwise", kNone, 0},
    {"TanhGrad", "elementwise", kNone, 0},
    {"SelectV2", "elementwise", kNone, 0},
    {"Sum", "reduction", kReduce, 0},
    {"Mean", "reduction", kReduce, 0},
    {"Max", "reduction", kReduce, 0},
    {"Min", "reduction", kReduce, 0},
    {"ArgMax", "reduction", kAxis, 0},
    {"Softmax", "softmax", kNone, 0},
    {"LogSoftmax", "softmax", kNone, 0},
    {"SparseSoftmaxCrossEntropyWithLogits", "softmax", kNone, 0},
    {"Cast", "data movement", kNone, 0},
    {"Fill", "data movement", sizeof(AccelFillAttributes), 0},
    {"StatelessRandomUniformV2", "random", kRandom, 0},
    {"StatelessRandomNormalV2", "random", kRandom, 0},
    {"StatelessTruncatedNormalV2", "random", kRandom, 0},
    {"Transpose", "data movement", sizeof(AccelTransposeAttributes), 0},
    {"Identity", "data movement", kNone, 0},
    {"BroadcastTo", "data movement", kNone, 0},
    {"Slice", "data movement", sizeof(AccelSliceAttributes), 0},
    {"ConcatV2", "data movement", kAxis, 0},
    {"PadV2", "data movement", sizeof(AccelPadAttributes), 0},
    {"GatherV2", "data movement", kAxis, 0},
    {"OneHot", "data movement", sizeof(AccelOneHotAttributes), 0},
    {"ResourceApplyKerasMomentum", "optimizer", sizeof(AccelSgdAttributes), 0b101},
    {"ResourceApplyAdam", "optimizer", sizeof(AccelAdamAttributes), 0b0111},
    {"ResourceApplyRMSProp", "optimizer", sizeof(AccelRmspropAttributes), 0b01111},
    {"Fusion", "fusion", sizeof(AccelFusedElementwiseAttributes), 0},
    {"Erf", "elementwise", kNone, 0},
    {"MaxPoolGrad+Conv2DBackpropFilter", "convolution", sizeof(AccelPoolFilterGradientAttributes), 0},
    {"FusedBatchNormV3", "normalization", sizeof(AccelBatchNormAttributes), 0},
    {"FusedBatchNormGradV3", "normalization", sizeof(AccelBatchNormAttributes), 0},
}};

const OpInfo kReshape = {"Reshape", "data movement", kNone, 0};
const OpInfo kUnknown = {"Unknown", "other", kNone, 0};

// Lower case letters and digits only: "Conv2D" and "CONV2D", "MaxPool" and
// "MAX_POOL" spell one name.
std::string spelling_of(const std::string& name) {
  std::string letters;
  for (char c : name) {
    if (c != '_') letters += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return letters;
}

std::string display_name_of(int32_t op) {
  const std::string tensorflow = op_info(op).name;
  if (op < 0 || op >= ACCEL_OP_COUNT) return tensorflow;
  const std::string op_set = sdk::op_set_name(op);
  return spelling_of(tensorflow) == spelling_of(op_set) ? tensorflow : tensorflow + " (" + op_set + ")";
}

}  // namespace

const OpInfo& op_info(AccelOp op) { return op_info(static_cast<int32_t>(op)); }

const OpInfo& op_info(int32_t op) {
  if (op >= 0 && op < ACCEL_OP_COUNT) return kOps[static_cast<size_t>(op)];
  if (op == kReshapeOp) return kReshape;
  return kUnknown;
}

const std::string& op_display_name(int32_t op) {
  static const std::array<std::string, ACCEL_OP_COUNT> names = [] {
    std::array<std::string, ACCEL_OP_COUNT> all;
    for (int32_t index = 0; index < ACCEL_OP_COUNT; ++index) all[static_cast<size_t>(index)] = display_name_of(index);
    return all;
  }();
  static const std::string reshape = kReshape.name;
  static const std::string unknown = kUnknown.name;
  if (op >= 0 && op < ACCEL_OP_COUNT) return names[static_cast<size_t>(op)];
  return op == kReshapeOp ? reshape : unknown;
}

}  // namespace accel::detail
