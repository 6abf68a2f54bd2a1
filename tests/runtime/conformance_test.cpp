// The conformance suite: every op of the primitive set, on every loaded
// device other than the reference CPU:0, against the CPU plugin, on random
// shapes including empty, size-1 and odd ones, with dtype-aware tolerances.
// A new plugin is accepted by passing it (ops it lacks fall back to the CPU and
// pass trivially; that is the point: a backend may start with matmul alone).
// Every binary op runs on equal shapes (empty and rank-0 included), with
// either side broadcast alone (a lower rank, a size-1 axis, a rank-0 operand)
// and with both sides broadcast at once, empty results included. Every op of
// the "float" dtype class runs again in bfloat16 and in float16
// (has_16_bit_variant), under those dtypes' tolerances.
//
// The program (conformance_main.cpp) refuses to run when a plugin named on its
// command line or in ACCEL_PLUGIN_PATH did not load, and ends with a table per
// device of the ops that ran natively, fell back to the CPU, or failed
// (conformance_summary.hpp). ACCEL_CONFORMANCE_REQUIRE_DEVICE=TYPE also makes
// the run fail unless a device of that type was tested.
//
// The optional kernels of plugin API 1.2 (FUSED_ELEMENTWISE programs, MATMUL
// and convolution epilogues) run only on devices that claim them
// (supports_op / supports_epilogue) and are skipped elsewhere: an unclaimed
// kernel never reaches a plugin. They are sent through the runtime's op
// dispatch (runtime/dispatch.hpp), which needs core/ on the include path.
#include <accel/accel.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "conformance_summary.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/logical_device.hpp"

namespace accel {
namespace {

using OpFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct InputSpec {
  Shape shape;
  DType dtype = DType::kFloat32;
  double low = -1.0;
  double high = 1.0;
};

enum class Tolerance {
  kExact,          // data movement, integer and boolean results
  kElementwise,    // one rounding
  kTranscendental, // libm-class functions
  kAccumulation,   // matmul / convolution / reductions: bounded by sum of |terms|
};

struct OpCase {
  std::string name;
  std::vector<InputSpec> inputs;
  OpFunction run;
  Tolerance tolerance = Tolerance::kElementwise;
  // For kAccumulation: the same computation on |inputs|, bounding rounding error.
  OpFunction magnitude;
  // For optional kernels: whether a device claims them (else the case is skipped).
  std::function<bool(const Device&)> claimed;
};

Device reference_device() { return find_device("/CPU:0"); }

Tensor make_input(const InputSpec& spec, uint64_t seed) {
  DeviceScope scope(reference_device());
  Tensor values = ops::random_uniform(spec.shape, seed, spec.low, spec.high);
  if (spec.dtype == DType::kFloat32) return values;
  if (spec.dtype == DType::kBool) return ops::greater(values, ops::zeros(Shape{}));
  if (spec.dtype == DType::kInt32 || spec.dtype == DType::kInt64 || spec.dtype == DType::kUInt8) {
    // Integers in [low, high): floor of the uniform values.
    std::vector<float> host = values.to_vector<float>();
    for (float& value : host) value = std::floor(value);
    return ops::cast(Tensor::from_vector<float>(host, spec.shape), spec.dtype);
  }
  return ops::cast(values, spec.dtype);
}

std::vector<float> as_floats(const Tensor& tensor) {
  DeviceScope scope(reference_device());
  Tensor local = tensor.to(reference_device());
  return (local.dtype() == DType::kFloat32 ? local : ops::cast(local, DType::kFloat32)).to_vector<float>();
}

double epsilon_for(DType dtype, bool bf16_matmul) {
  if (bf16_matmul || dtype == DType::kBFloat16) return 1.0 / 128;
  if (dtype == DType::kFloat16) return 1.0 / 1024;
  return 1e-6;
}

// ------------------------------------------------------------------- cases

Shape shape_of(std::initializer_list<int64_t> dims) { return Shape(dims); }

OpFunction unary(Tensor (*function)(const Tensor&)) {
  return [function](const std::vector<Tensor>& in) { return std::vector<Tensor>{function(in[0])}; };
}

OpFunction binary(Tensor (*function)(const Tensor&, const Tensor&)) {
  return [function](const std::vector<Tensor>& in) { return std::vector<Tensor>{function(in[0], in[1])}; };
}

// ------------------------------------------------- fusions and epilogues (1.2)

constexpr AccelDType kF32 = ACCEL_DTYPE_F32;
constexpr AccelDType kBool = ACCEL_DTYPE_BOOL;

AccelFusedInstruction load(int32_t input, AccelDType dtype = kF32) {
  return {ACCEL_FUSED_LOAD, ACCEL_OP_MATMUL, dtype, {input, 0, 0}, 0.0};
}
AccelFusedInstruction constant(double value, AccelDType dtype = kF32) {
  return {ACCEL_FUSED_CONSTANT, ACCEL_OP_MATMUL, dtype, {0, 0, 0}, value};
}
AccelFusedInstruction fused_op(AccelOp op, AccelDType dtype, int32_t a, int32_t b = 0, int32_t c = 0) {
  return {ACCEL_FUSED_OP, op, dtype, {a, b, c}, 0.0};
}
AccelFusedOutput stored(int32_t value) { return {value, static_cast<AccelOp>(0), 0, {}, 0}; }
AccelFusedOutput reduced(int32_t value, AccelOp reduce_op, std::vector<int32_t> axes, bool keep_dims) {
  AccelFusedOutput output{value, reduce_op, static_cast<int32_t>(axes.size()), {}, keep_dims ? 1 : 0};
  for (size_t k = 0; k < axes.size(); ++k) output.axes[k] = axes[k];
  return output;
}

struct FusedProgram {
  Shape shape;
  std::vector<AccelFusedInstruction> instructions;
  std::vector<AccelFusedOutput> outputs;
  std::vector<detail::OutputSpec> specs;  // of the outputs
};

OpFunction run_fused(FusedProgram program) {
  auto shared = std::make_shared<FusedProgram>(std::move(program));
  return [shared](const std::vector<Tensor>& in) {
    AccelFusedElementwiseAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    attributes.rank = shared->shape.rank();
    for (int32_t axis = 0; axis < attributes.rank; ++axis) attributes.shape[axis] = shared->shape[axis];
    attributes.num_instructions = static_cast<int32_t>(shared->instructions.size());
    attributes.instructions = shared->instructions.data();
    attributes.num_outputs = static_cast<int32_t>(shared->outputs.size());
    attributes.outputs = shared->outputs.data();
    return detail::run_op(ACCEL_OP_FUSED_ELEMENTWISE, in, shared->specs, &attributes);
  };
}

std::function<bool(const Device&)> claims_fusion(AccelDType dtype) {
  return [dtype](const Device& device) { return device.internal()->supports(ACCEL_OP_FUSED_ELEMENTWISE, dtype); };
}

std::function<bool(const Device&)> claims_epilogue(AccelOp op, int32_t flags, AccelOp activation) {
  return [=](const Device& device) { return device.internal()->supports_epilogue(op, kF32, flags, activation); };
}

// MATMUL / CONV2D / CONV2D_BACKWARD_INPUT with an epilogue: inputs are the
// op's two, then the bias (if any), then the mask (if any). Also any other
// op of one float output, from its attribute bytes.
OpFunction run_with_epilogue(AccelOp op, const void* attributes_bytes, size_t attributes_size, Shape output) {
  auto attributes = std::make_shared<std::vector<unsigned char>>(
      static_cast<const unsigned char*>(attributes_bytes), static_cast<const unsigned char*>(attributes_bytes) + attributes_size);
  return [=](const std::vector<Tensor>& in) {
    const detail::OutputSpec spec{output, DType::kFloat32};
    return detail::run_op(op, in, {&spec, 1}, attributes->data());
  };
}

// The unfused epilogue on magnitudes: |op(|first|, |second|)| + |bias|, a
// bound for the rounding of every step (the activations and the mask do
// not grow it).
OpFunction epilogue_magnitude(std::function<Tensor(const Tensor&, const Tensor&)> plain, bool has_bias) {
  return [=](const std::vector<Tensor>& in) {
    Tensor y = plain(ops::abs(in[0]), ops::abs(in[1]));
    if (has_bias) y = ops::add(y, ops::abs(in[2]));
    return std::vector<Tensor>{y};
  };
}

const char* activation_name(AccelOp activation) {
  return activation == ACCEL_OP_SIGMOID ? "Sigmoid" : activation == ACCEL_OP_TANH ? "Tanh" : "Relu";
}

void add_fused_cases(std::vector<OpCase>& cases) {
  // y = sigmoid(x * 2 + bias); dx = relu_backward(dy * y, x), with the bias broadcast.
  for (const Shape& shape : {shape_of({7}), shape_of({4, 37}), shape_of({3, 5, 129})}) {
    const Shape bias{shape[shape.rank() - 1]};
    FusedProgram program{shape,
                         {load(0), load(1), load(2), constant(2.0), fused_op(ACCEL_OP_MUL, kF32, 0, 3),
                          fused_op(ACCEL_OP_ADD, kF32, 4, 2), fused_op(ACCEL_OP_SIGMOID, kF32, 5),
                          fused_op(ACCEL_OP_MUL, kF32, 1, 6), fused_op(ACCEL_OP_RELU_BACKWARD, kF32, 7, 0)},
                         {stored(6), stored(8)},
                         {{shape, DType::kFloat32}, {shape, DType::kFloat32}}};
    cases.push_back({fmt::format("FusedSigmoidChain_{}", fmt::join(shape.dims(), "x")),
                     {{shape, DType::kFloat32, -3, 3}, {shape}, {bias}}, run_fused(std::move(program)),
                     Tolerance::kTranscendental, {}, claims_fusion(kF32)});
  }
  {  // leaky ReLU by SELECT on a comparison, a cast, the comparison itself
    const Shape shape = shape_of({6, 33});
    FusedProgram program{shape,
                         {load(0), constant(0.0), fused_op(ACCEL_OP_GREATER, kBool, 0, 1), constant(0.5),
                          fused_op(ACCEL_OP_MUL, kF32, 0, 3), fused_op(ACCEL_OP_SELECT, kF32, 2, 0, 4),
                          constant(16.0), fused_op(ACCEL_OP_MUL, kF32, 0, 6),
                          fused_op(ACCEL_OP_CAST, ACCEL_DTYPE_I32, 7)},
                         {stored(5), stored(8), stored(2)},
                         {{shape, DType::kFloat32}, {shape, DType::kInt32}, {shape, DType::kBool}}};
    cases.push_back({"FusedSelectCastCompare", {{shape, DType::kFloat32, -4, 4}}, run_fused(std::move(program)),
                     Tolerance::kExact, {}, claims_fusion(kF32)});
  }
  {  // the exact GELU, 0.5 x (1 + erf(x / sqrt(2))): ERF (1.3) inside a fusion, and erf itself
    const Shape shape = shape_of({5, 67});
    FusedProgram program{shape,
                         {load(0), constant(0.7071067811865476), fused_op(ACCEL_OP_MUL, kF32, 0, 1),
                          fused_op(ACCEL_OP_ERF, kF32, 2), constant(1.0), fused_op(ACCEL_OP_ADD, kF32, 3, 4),
                          constant(0.5), fused_op(ACCEL_OP_MUL, kF32, 0, 6), fused_op(ACCEL_OP_MUL, kF32, 7, 5)},
                         {stored(8), stored(3)},
                         {{shape, DType::kFloat32}, {shape, DType::kFloat32}}};
    cases.push_back({"FusedGeluErf", {{shape, DType::kFloat32, -4, 4}}, run_fused(std::move(program)),
                     Tolerance::kTranscendental, {}, [](const Device& device) {
                       return claims_fusion(kF32)(device) && device.internal()->supports(ACCEL_OP_ERF, kF32);
                     }});
  }
  {  // reductions of a gradient: columns (a bias gradient), rows kept as [N, 1], everything
    const Shape shape = shape_of({64, 48});
    FusedProgram program{shape,
                         {load(0), load(1), fused_op(ACCEL_OP_RELU_BACKWARD, kF32, 1, 0)},
                         {reduced(2, ACCEL_OP_REDUCE_SUM, {0}, false), reduced(2, ACCEL_OP_REDUCE_MEAN, {1}, true),
                          reduced(2, ACCEL_OP_REDUCE_MAX, {0, 1}, false), stored(2)},
                         {{shape_of({48}), DType::kFloat32}, {shape_of({64, 1}), DType::kFloat32},
                          {shape_of({}), DType::kFloat32}, {shape, DType::kFloat32}}};
    cases.push_back({"FusedReductions", {{shape}, {shape}}, run_fused(std::move(program)), Tolerance::kAccumulation,
                     [](const std::vector<Tensor>& in) {
                       Tensor magnitude = ops::abs(ops::relu_backward(in[1], in[0]));
                       return std::vector<Tensor>{ops::reduce_sum(magnitude, {0}), ops::reduce_mean(magnitude, {1}, true),
                                                  ops::reduce_max(magnitude), magnitude};
                     },
                     claims_fusion(kF32)});
  }
  {  // integers: a quotient, its square, a sum
    const Shape shape = shape_of({5, 9});
    const AccelDType i32 = ACCEL_DTYPE_I32;
    FusedProgram program{shape,
                         {load(0, i32), load(1, i32), fused_op(ACCEL_OP_DIV, i32, 0, 1),
                          fused_op(ACCEL_OP_SQUARE, i32, 2), fused_op(ACCEL_OP_MAXIMUM, i32, 3, 0)},
                         {stored(4), reduced(4, ACCEL_OP_REDUCE_SUM, {1}, false)},
                         {{shape, DType::kInt32}, {shape_of({5}), DType::kInt32}}};
    cases.push_back({"FusedInt32", {{shape, DType::kInt32, -50, 50}, {shape_of({9}), DType::kInt32, 1, 9}},
                     run_fused(std::move(program)), Tolerance::kExact, {}, claims_fusion(ACCEL_DTYPE_I32)});
  }

  const std::vector<std::pair<int32_t, AccelOp>> epilogues = {
      {ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_RELU},
      {ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_SIGMOID},
      {ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_TANH},
      {ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_RELU}};
  for (const auto& [flags, activation] : epilogues) {
    const bool bias = (flags & ACCEL_EPILOGUE_BIAS) != 0, mask = (flags & ACCEL_EPILOGUE_RELU_MASK) != 0;
    const std::string suffix = fmt::format("{}{}{}", bias ? "Bias" : "",
                                           (flags & ACCEL_EPILOGUE_ACTIVATION) ? activation_name(activation) : "",
                                           mask ? "Mask" : "");
    {
      const Shape y = shape_of({33, 65});
      std::vector<InputSpec> inputs{{shape_of({33, 17})}, {shape_of({17, 65})}};
      if (bias) inputs.push_back({shape_of({65})});
      if (mask) inputs.push_back({y});
      const AccelMatmulAttributes attributes{sizeof(AccelMatmulAttributes), 0, 0, flags, activation};
      cases.push_back({"MatMulEpilogue_" + suffix, inputs,
                       run_with_epilogue(ACCEL_OP_MATMUL, &attributes, sizeof(attributes), y), Tolerance::kAccumulation,
                       epilogue_magnitude([](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); }, bias),
                       claims_epilogue(ACCEL_OP_MATMUL, flags, activation)});
    }
    {
      const Shape x = shape_of({2, 7, 6, 3}), filter = shape_of({3, 3, 3, 4}), y = shape_of({2, 5, 4, 4});
      const ops::Conv2DOptions options{{1, 1}, ops::Padding::kValid, {1, 1}};
      const AccelConv2dAttributes attributes{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, flags, activation};
      std::vector<InputSpec> forward{{x}, {filter}};
      if (bias) forward.push_back({shape_of({4})});
      if (mask) forward.push_back({y});
      cases.push_back({"Conv2DEpilogue_" + suffix, forward,
                       run_with_epilogue(ACCEL_OP_CONV2D, &attributes, sizeof(attributes), y), Tolerance::kAccumulation,
                       epilogue_magnitude([options](const Tensor& a, const Tensor& b) { return ops::conv2d(a, b, options); }, bias),
                       claims_epilogue(ACCEL_OP_CONV2D, flags, activation)});
      std::vector<InputSpec> backward{{y}, {filter}};
      if (bias) backward.push_back({shape_of({3})});
      if (mask) backward.push_back({x});
      cases.push_back({"Conv2DBackpropInputEpilogue_" + suffix, backward,
                       run_with_epilogue(ACCEL_OP_CONV2D_BACKWARD_INPUT, &attributes, sizeof(attributes), x),
                       Tolerance::kAccumulation,
                       epilogue_magnitude([options, x](const Tensor& a, const Tensor& b) {
                         return ops::conv2d_backward_input(a, b, x, options);
                       }, bias),
                       claims_epilogue(ACCEL_OP_CONV2D_BACKWARD_INPUT, flags, activation)});
    }
  }

  // MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER (1.4): one input channel (the
  // CPU plugin's direct loop) and three (its oneDNN path).
  for (int64_t channels : {1, 3}) {
    const Shape x = shape_of({5, 12, 12, channels}), pool_x = shape_of({5, 10, 10, 32});
    const Shape pool_dy = shape_of({5, 5, 5, 32}), filter = shape_of({3, 3, channels, 32});
    const ops::Conv2DOptions convolution{{1, 1}, ops::Padding::kValid, {1, 1}};
    const ops::Pool2DOptions pool{{2, 2}, {2, 2}, ops::Padding::kValid};
    const AccelPoolFilterGradientAttributes attributes{
        sizeof(AccelPoolFilterGradientAttributes),
        {sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, 0, {}},
        {sizeof(AccelPoolAttributes), 2, 2, 2, 2, 0, 0, 0, 0}};
    cases.push_back({fmt::format("MaxPoolGradConv2DBackpropFilter_{}Channel", channels), {{x}, {pool_x}, {pool_dy}},
                     run_with_epilogue(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, &attributes,
                                       sizeof(attributes), filter),
                     Tolerance::kAccumulation,
                     [=](const std::vector<Tensor>& in) {
                       const Tensor pooling_gradient = ops::max_pool2d_backward(in[1], ops::abs(in[2]), pool);
                       return std::vector<Tensor>{
                           ops::conv2d_backward_filter(ops::abs(in[0]), pooling_gradient, filter, convolution)};
                     },
                     [](const Device& device) {
                       return device.internal()->supports(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, kF32);
                     }});
  }
}

std::string shape_name(const Shape& shape) {
  return shape.rank() == 0 ? std::string("scalar") : fmt::format("{}", fmt::join(shape.dims(), "x"));
}

// Every binary op of the op set (21-36), with the input range and dtype it is tested on.
struct BinaryOp {
  const char* name;
  Tensor (*function)(const Tensor&, const Tensor&);
  DType dtype;
  double low, high;
  Tolerance tolerance;
};

const std::vector<BinaryOp>& binary_ops() {
  static const std::vector<BinaryOp> ops = {
      {"Add", ops::add, DType::kFloat32, -2, 2, Tolerance::kElementwise},
      {"AddInt32", ops::add, DType::kInt32, -50, 50, Tolerance::kExact},
      {"Sub", ops::sub, DType::kFloat32, -2, 2, Tolerance::kElementwise},
      {"Mul", ops::mul, DType::kFloat32, -2, 2, Tolerance::kElementwise},
      {"Div", ops::div, DType::kFloat32, 0.5, 2, Tolerance::kElementwise},
      {"Maximum", ops::maximum, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"Minimum", ops::minimum, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"Pow", ops::pow, DType::kFloat32, 0.5, 2, Tolerance::kTranscendental},
      {"Equal", ops::equal, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"NotEqual", ops::not_equal, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"Less", ops::less, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"LessEqual", ops::less_equal, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"Greater", ops::greater, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"GreaterEqual", ops::greater_equal, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"ReluGrad", ops::relu_backward, DType::kFloat32, -2, 2, Tolerance::kExact},
      {"SigmoidGrad", ops::sigmoid_backward, DType::kFloat32, 0, 1, Tolerance::kElementwise},
      {"TanhGrad", ops::tanh_backward, DType::kFloat32, -1, 1, Tolerance::kElementwise}};
  return ops;
}

// Operand shapes that broadcast (NumPy rules): the left side alone, the right
// side alone, both at once, against rank-0 operands and into empty results. A
// kernel that indexes the smaller operand modulo its size passes the
// trailing-row cases and fails the rest.
struct BroadcastPair {
  Shape left, right;
};

const std::vector<BroadcastPair>& broadcast_pairs() {
  static const std::vector<BroadcastPair> pairs = {
      {shape_of({5}), shape_of({4, 5})},          // left: a lower rank
      {shape_of({4, 1}), shape_of({4, 5})},       // left: a size-1 axis
      {shape_of({}), shape_of({6, 7})},           // left: rank 0
      {shape_of({4, 5}), shape_of({5})},          // right: a lower rank
      {shape_of({4, 5}), shape_of({4, 1})},       // right: a size-1 axis
      {shape_of({6, 7}), shape_of({})},           // right: rank 0
      {shape_of({3, 1, 5}), shape_of({1, 4, 1})}, // both: size-1 axes on each side
      {shape_of({4, 1}), shape_of({3, 1, 5})},    // both: a lower rank and size-1 axes
      {shape_of({2, 1, 3, 1}), shape_of({5, 1, 4})},
      {shape_of({0, 1}), shape_of({1, 5})},       // both, into an empty result
      {shape_of({0, 5}), shape_of({5})},          // right, into an empty result
      {shape_of({}), shape_of({0})}};             // rank 0 against empty
  return pairs;
}

void add_binary_cases(std::vector<OpCase>& cases, const std::vector<Shape>& equal_shapes) {
  for (const BinaryOp& op : binary_ops()) {
    // Equal shapes keep the names the suite always had ("Add_3x5").
    for (const Shape& shape : equal_shapes) {
      cases.push_back({fmt::format("{}_{}", op.name, shape_name(shape)),
                       {{shape, op.dtype, op.low, op.high}, {shape, op.dtype, op.low, op.high}},
                       binary(op.function), op.tolerance, {}});
    }
    for (const BroadcastPair& pair : broadcast_pairs()) {
      cases.push_back({fmt::format("{}Broadcast_{}_{}", op.name, shape_name(pair.left), shape_name(pair.right)),
                       {{pair.left, op.dtype, op.low, op.high}, {pair.right, op.dtype, op.low, op.high}},
                       binary(op.function), op.tolerance, {}});
    }
  }
}

std::vector<OpCase> float32_and_integer_cases() {
  std::vector<OpCase> cases;
  const std::vector<Shape> elementwise_shapes = {shape_of({}), shape_of({0}), shape_of({1}), shape_of({7}),
                                                 shape_of({3, 5}), shape_of({2, 3, 33})};
  for (const auto& shape : elementwise_shapes) {
    const std::string suffix = shape_name(shape);
    struct Unary { const char* name; Tensor (*function)(const Tensor&); double low, high; Tolerance tolerance; };
    for (const Unary& op : std::initializer_list<Unary>{
             {"Neg", ops::neg, -2, 2, Tolerance::kExact}, {"Abs", ops::abs, -2, 2, Tolerance::kExact},
             {"Exp", ops::exp, -3, 3, Tolerance::kTranscendental}, {"Log", ops::log, 0.1, 4, Tolerance::kTranscendental},
             {"Sqrt", ops::sqrt, 0.1, 4, Tolerance::kElementwise}, {"Rsqrt", ops::rsqrt, 0.1, 4, Tolerance::kTranscendental},
             {"Square", ops::square, -2, 2, Tolerance::kElementwise}, {"Relu", ops::relu, -2, 2, Tolerance::kExact},
             {"Sigmoid", ops::sigmoid, -4, 4, Tolerance::kTranscendental}, {"Tanh", ops::tanh, -3, 3, Tolerance::kTranscendental},
             {"Sign", ops::sign, -2, 2, Tolerance::kExact}, {"Reciprocal", ops::reciprocal, 0.5, 3, Tolerance::kElementwise},
             {"Erf", ops::erf, -3, 3, Tolerance::kTranscendental}}) {
      cases.push_back({fmt::format("{}_{}", op.name, suffix), {{shape, DType::kFloat32, op.low, op.high}},
                       unary(op.function), op.tolerance, {}});
    }
    cases.push_back({"LogicalNot_" + suffix, {{shape, DType::kBool}}, unary(ops::logical_not), Tolerance::kExact, {}});
    cases.push_back({"Cast_" + suffix, {{shape, DType::kFloat32, -100, 100}},
                     [](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::cast(in[0], DType::kInt32), ops::cast(in[0], DType::kBFloat16),
                                                  ops::cast(in[0], DType::kFloat16), ops::cast(in[0], DType::kBool)};
                     },
                     Tolerance::kExact, {}});
  }
  add_binary_cases(cases, elementwise_shapes);
  // Out-of-range float to uint8 saturates (TensorFlow's CPU cast), it does not wrap.
  cases.push_back({"CastToUint8Saturates", {{shape_of({64}), DType::kFloat32, -400, 400}},
                   [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::cast(in[0], DType::kUInt8),
                                                ops::cast(ops::cast(in[0], DType::kBool), DType::kFloat32)};
                   },
                   Tolerance::kExact, {}});
  cases.push_back({"Select", {{shape_of({4, 3}), DType::kBool}, {shape_of({4, 3})}, {shape_of({3})}},
                   [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::select(in[0], in[1], in[2])}; },
                   Tolerance::kExact, {}});
  // All three operands broadcast, each along another axis.
  cases.push_back({"SelectBroadcast_4x1_1x3_scalar", {{shape_of({4, 1}), DType::kBool}, {shape_of({1, 3})}, {shape_of({})}},
                   [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::select(in[0], in[1], in[2])}; },
                   Tolerance::kExact, {}});

  // Matmul family.
  struct MatmulShape { int64_t m, k, n; bool transpose_a, transpose_b; };
  for (const MatmulShape& s : std::initializer_list<MatmulShape>{
           {1, 1, 1, false, false}, {7, 5, 3, false, false}, {0, 4, 3, false, false}, {4, 0, 3, false, false},
           {33, 17, 65, false, false}, {16, 9, 8, true, false}, {5, 12, 7, false, true}, {9, 13, 11, true, true},
           {130, 70, 129, false, false}}) {
    Shape a = s.transpose_a ? shape_of({s.k, s.m}) : shape_of({s.m, s.k});
    Shape b = s.transpose_b ? shape_of({s.n, s.k}) : shape_of({s.k, s.n});
    auto run = [s](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::matmul(in[0], in[1], s.transpose_a, s.transpose_b)}; };
    auto magnitude = [s](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{ops::matmul(ops::abs(in[0]), ops::abs(in[1]), s.transpose_a, s.transpose_b)};
    };
    cases.push_back({fmt::format("MatMul_{}x{}x{}_{}{}", s.m, s.k, s.n, s.transpose_a ? "T" : "N", s.transpose_b ? "T" : "N"),
                     {{a}, {b}}, run, Tolerance::kAccumulation, magnitude});
  }
  cases.push_back({"BatchMatMul_3x4x5x6", {{shape_of({3, 4, 5})}, {shape_of({3, 5, 6})}},
                   binary([](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); }), Tolerance::kAccumulation,
                   [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::matmul(ops::abs(in[0]), ops::abs(in[1]))}; }});

  // Convolutions and pooling.
  struct ConvCase { const char* name; Shape input; Shape filter; ops::Conv2DOptions options; };
  for (const ConvCase& c : std::initializer_list<ConvCase>{
           {"Valid", shape_of({2, 7, 6, 3}), shape_of({3, 3, 3, 4}), {{1, 1}, ops::Padding::kValid, {1, 1}}},
           {"SameStride2", shape_of({1, 9, 8, 2}), shape_of({3, 2, 2, 5}), {{2, 2}, ops::Padding::kSame, {1, 1}}},
           {"Dilated", shape_of({1, 10, 10, 1}), shape_of({3, 3, 1, 2}), {{1, 1}, ops::Padding::kSame, {2, 2}}},
           {"Tutorial", shape_of({4, 28, 28, 1}), shape_of({3, 3, 1, 32}), {{1, 1}, ops::Padding::kValid, {1, 1}}}}) {
    auto options = c.options;
    auto forward = [options](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::conv2d(in[0], in[1], options)}; };
    auto forward_magnitude = [options](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{ops::conv2d(ops::abs(in[0]), ops::abs(in[1]), options)};
    };
    cases.push_back({fmt::format("Conv2D_{}", c.name), {{c.input}, {c.filter}}, forward, Tolerance::kAccumulation, forward_magnitude});
    Shape input_shape = c.input;
    Shape filter_shape = c.filter;
    Shape output_shape;
    {
      DeviceScope scope(reference_device());
      output_shape = ops::conv2d(ops::zeros(input_shape), ops::zeros(filter_shape), options).shape();
    }
    cases.push_back({fmt::format("Conv2DBackpropInput_{}", c.name), {{output_shape}, {filter_shape}},
                     [options, input_shape](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::conv2d_backward_input(in[0], in[1], input_shape, options)};
                     },
                     Tolerance::kAccumulation,
                     [options, input_shape](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::conv2d_backward_input(ops::abs(in[0]), ops::abs(in[1]), input_shape, options)};
                     }});
    cases.push_back({fmt::format("Conv2DBackpropFilter_{}", c.name), {{input_shape}, {output_shape}},
                     [options, filter_shape](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::conv2d_backward_filter(in[0], in[1], filter_shape, options)};
                     },
                     Tolerance::kAccumulation,
                     [options, filter_shape](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::conv2d_backward_filter(ops::abs(in[0]), ops::abs(in[1]), filter_shape, options)};
                     }});
  }
  for (auto padding : {ops::Padding::kValid, ops::Padding::kSame}) {
    ops::Pool2DOptions options{{3, 2}, {2, 2}, padding};
    std::string suffix = padding == ops::Padding::kValid ? "Valid" : "Same";
    Shape input = shape_of({2, 7, 9, 3});
    Shape output;
    {
      DeviceScope scope(reference_device());
      output = ops::max_pool2d(ops::zeros(input), options).shape();
    }
    cases.push_back({"MaxPool_" + suffix, {{input}}, [options](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::max_pool2d(in[0], options)}; }, Tolerance::kExact, {}});
    // Averages are sums: a backend (cuDNN) may add the window in another order.
    cases.push_back({"AvgPool_" + suffix, {{input}}, [options](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::avg_pool2d(in[0], options)}; }, Tolerance::kAccumulation,
                     [options](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::avg_pool2d(ops::abs(in[0]), options)}; }});
    cases.push_back({"MaxPoolGrad_" + suffix, {{input}, {output}}, [options](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::max_pool2d_backward(in[0], in[1], options)}; }, Tolerance::kElementwise, {}});
    cases.push_back({"AvgPoolGrad_" + suffix, {{output}}, [options, input](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::avg_pool2d_backward(in[0], input, options)}; }, Tolerance::kAccumulation,
                     [options, input](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::avg_pool2d_backward(ops::abs(in[0]), input, options)}; }});
  }

  // Windows that tile the input (stride = window, no padding), exactly and with
  // a row and a column left over; signs (-1, 0, 1) tie within windows (the first
  // maximum in scan order takes the gradient). A backend may scatter per window.
  struct TiledPooling {
    Shape input;
    int32_t window_h, window_w;
  };
  for (const TiledPooling& pooling : {TiledPooling{shape_of({2, 6, 8, 3}), 2, 2}, TiledPooling{shape_of({2, 7, 9, 3}), 2, 2},
                                      TiledPooling{shape_of({1, 7, 8, 5}), 3, 3}, TiledPooling{shape_of({2, 4, 9, 2}), 1, 2},
                                      TiledPooling{shape_of({1, 2, 2, 3}), 3, 3}}) {
    const Shape& input = pooling.input;
    const ops::Pool2DOptions tiled{{pooling.window_h, pooling.window_w}, {pooling.window_h, pooling.window_w},
                                   ops::Padding::kValid};
    Shape output;
    {
      DeviceScope scope(reference_device());
      output = ops::max_pool2d(ops::zeros(input), tiled).shape();
    }
    cases.push_back({fmt::format("MaxPoolGradTiled_{}_{}x{}", fmt::join(input.dims(), "x"), pooling.window_h,
                                 pooling.window_w),
                     {{input}, {output}},
                     [tiled](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::max_pool2d_backward(in[0], in[1], tiled),
                                                  ops::max_pool2d_backward(ops::sign(in[0]), in[1], tiled)};
                     },
                     Tolerance::kElementwise, {}});
  }

  // A window longer than the input fits no times (TensorFlow's rule, not 1 by
  // integer division): empty outputs, and gradients that are all zeros.
  {
    ops::Pool2DOptions pool{{3, 3}, {2, 2}, ops::Padding::kValid};
    ops::Conv2DOptions conv{{2, 2}, ops::Padding::kValid, {1, 1}};
    Shape input = shape_of({2, 2, 2, 3});
    Shape filter = shape_of({3, 3, 3, 4});
    cases.push_back({"WindowPastInput", {{input}, {shape_of({2, 0, 0, 3})}, {filter}, {shape_of({2, 0, 0, 4})}},
                     [pool, conv, input, filter](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{
                           ops::max_pool2d(in[0], pool), ops::max_pool2d_backward(in[0], in[1], pool),
                           ops::avg_pool2d_backward(in[1], input, pool), ops::conv2d(in[0], in[2], conv),
                           ops::conv2d_backward_input(in[3], in[2], input, conv),
                           ops::conv2d_backward_filter(in[0], in[3], filter, conv)};
                     },
                     Tolerance::kExact, {}});
  }

  // Reductions, softmax family.
  for (const Shape& shape : {shape_of({5, 7}), shape_of({1, 1}), shape_of({3, 4, 9}), shape_of({0, 3})}) {
    std::string suffix = fmt::format("{}", fmt::join(shape.dims(), "x"));
    auto magnitude_sum = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::reduce_sum(ops::abs(in[0]), {0}), ops::reduce_sum(ops::abs(in[0]), {-1}, true), ops::reduce_sum(ops::abs(in[0]))}; };
    cases.push_back({"Sum_" + suffix, {{shape}}, [](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::reduce_sum(in[0], {0}), ops::reduce_sum(in[0], {-1}, true), ops::reduce_sum(in[0])}; },
                     Tolerance::kAccumulation, magnitude_sum});
    cases.push_back({"Mean_" + suffix, {{shape}}, [](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::reduce_mean(in[0], {-1})}; },
                     Tolerance::kAccumulation, [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::reduce_mean(ops::abs(in[0]), {-1})}; }});
    cases.push_back({"MaxMin_" + suffix, {{shape}}, [](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::reduce_max(in[0], {0}), ops::reduce_min(in[0], {-1})}; }, Tolerance::kExact, {}});
    if (shape.element_count() > 0) {
      cases.push_back({"ArgMax_" + suffix, {{shape}}, [](const std::vector<Tensor>& in) {
                         return std::vector<Tensor>{ops::argmax(in[0], -1)}; }, Tolerance::kExact, {}});
    }
    cases.push_back({"Softmax_" + suffix, {{shape, DType::kFloat32, -5, 5}}, [](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::softmax(in[0]), ops::log_softmax(in[0])}; }, Tolerance::kTranscendental, {}});
  }
  // Reductions that keep a run of neighbouring elements over many rows (batch
  // norm's statistics over [N, H, W, C]): a device may split the rows across
  // blocks and combine partial results (the CUDA plugin does from 33 rows and
  // 8 kept elements on), so the shapes straddle those sizes, a partial column
  // tile (33, 40) and axes of size 1 among the reduced ones.
  auto banded = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{ops::reduce_sum(in[0], {0}), ops::reduce_mean(in[0], {0}), ops::reduce_max(in[1], {0}),
                               ops::reduce_min(in[1], {0}), ops::reduce_sum(in[2], {0, 1, 2}, true),
                               ops::reduce_mean(in[3], {1, 2}), ops::reduce_sum(in[4], {1}), ops::reduce_sum(in[5], {0}),
                               ops::reduce_mean(in[6], {1})};
  };
  auto banded_magnitude = [banded](const std::vector<Tensor>& in) {
    std::vector<Tensor> magnitudes;
    for (const Tensor& input : in) magnitudes.push_back(ops::abs(input));
    return banded(magnitudes);
  };
  cases.push_back({"BandedReductions",
                   {{shape_of({4000, 40})}, {shape_of({300, 17})}, {shape_of({8, 12, 12, 33})}, {shape_of({3, 50, 2, 20})},
                    {shape_of({1, 70, 1, 9})}, {shape_of({40, 8})}, {shape_of({3, 1000, 40})}},
                   banded, Tolerance::kAccumulation, banded_magnitude});
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    cases.push_back({fmt::format("BandedIntReductions_{}", dtype_name(dtype)), {{shape_of({600, 16}), dtype, -50, 50}},
                     [](const std::vector<Tensor>& in) {
                       return std::vector<Tensor>{ops::reduce_sum(in[0], {0}), ops::reduce_mean(in[0], {0}),
                                                  ops::reduce_max(in[0], {0}), ops::reduce_min(in[0], {0})};
                     },
                     Tolerance::kExact, {}});
  }
  // Integer reductions; the mean divides toward zero.
  cases.push_back({"IntReductions", {{shape_of({4, 5}), DType::kInt32, -50, 50}},
                   [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::reduce_max(in[0], {-1}), ops::reduce_min(in[0], {-1}),
                                                ops::reduce_mean(in[0], {-1})};
                   },
                   Tolerance::kExact, {}});
  cases.push_back({"SparseSoftmaxCrossEntropy", {{shape_of({6, 10}), DType::kFloat32, -4, 4}, {shape_of({6}), DType::kInt32, 0, 10}},
                   [](const std::vector<Tensor>& in) {
                     auto [loss, backprop] = ops::sparse_softmax_cross_entropy(in[0], in[1]);
                     return std::vector<Tensor>{loss, backprop};
                   },
                   Tolerance::kTranscendental, {}});

  // Batch normalization (API 1.6): BATCH_NORM where the device claims it (else
  // the primitive ops it stands for), and its gradient. x is shifted off zero so
  // that the variance is not the mean square; one row gives a zero variance; the
  // rows of the largest split into many slices on a GPU.
  for (const Shape& shape : {shape_of({7, 3}), shape_of({4, 9, 9, 32}), shape_of({2000, 40}), shape_of({1, 5}),
                             shape_of({0, 8})}) {
    const Shape features{shape[shape.rank() - 1]};
    cases.push_back({fmt::format("BatchNorm_{}", fmt::join(shape.dims(), "x")),
                     {{shape, DType::kFloat32, 1, 5}, {features, DType::kFloat32, 0.5, 2}, {features}},
                     [](const std::vector<Tensor>& in) {
                       const ops::BatchNormResult result = ops::batch_norm(in[0], in[1], in[2], 1e-3);
                       return std::vector<Tensor>{result.y, result.mean, result.variance};
                     },
                     Tolerance::kTranscendental, {}});
    cases.push_back({fmt::format("BatchNormGrad_{}", fmt::join(shape.dims(), "x")),
                     {{shape}, {shape, DType::kFloat32, 1, 5}, {features, DType::kFloat32, 0.5, 2},
                      {features, DType::kFloat32, 2, 4}, {features, DType::kFloat32, 0.5, 2}},
                     [](const std::vector<Tensor>& in) {
                       auto [dx, dscale, doffset] = ops::batch_norm_backward(in[0], in[1], in[2], in[3], in[4], 1e-3);
                       return std::vector<Tensor>{dx, dscale, doffset};
                     },
                     Tolerance::kTranscendental, {}});
  }

  // Creation and data movement.
  cases.push_back({"FillAndRandom", {}, [](const std::vector<Tensor>&) {
                     return std::vector<Tensor>{ops::fill(Shape{3, 5}, 2.5), ops::random_uniform(Shape{257}, 11, -1, 3),
                                                ops::random_normal(Shape{257}, 12, 1, 2), ops::truncated_normal(Shape{33, 3}, 13)};
                   },
                   Tolerance::kTranscendental, {}});
  cases.push_back({"Transpose", {{shape_of({2, 3, 4, 5})}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::transpose(in[0], {3, 1, 0, 2}), ops::transpose(in[0])}; }, Tolerance::kExact, {}});
  cases.push_back({"CopyBroadcastTo", {{shape_of({3, 1})}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::copy(in[0]), ops::broadcast_to(in[0], Shape{2, 3, 4})}; }, Tolerance::kExact, {}});
  cases.push_back({"Slice", {{shape_of({5, 6, 7})}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::slice(in[0], {1, 0, 2}, {3, 6, 4}), ops::slice(in[0], {4, 5, 6}, {1, 1, 1})}; },
                   Tolerance::kExact, {}});
  cases.push_back({"Concat", {{shape_of({2, 3})}, {shape_of({2, 5})}, {shape_of({2, 0})}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::concat(in, 1)}; }, Tolerance::kExact, {}});
  cases.push_back({"Pad", {{shape_of({3, 4})}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::pad(in[0], {{1, 2}, {0, 3}}, 0.5)}; }, Tolerance::kExact, {}});
  cases.push_back({"Gather", {{shape_of({6, 4})}, {shape_of({5}), DType::kInt64, 0, 6}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::gather(in[0], in[1], 0)}; }, Tolerance::kExact, {}});
  cases.push_back({"GatherAxis1", {{shape_of({3, 8, 2})}, {shape_of({2, 2}), DType::kInt32, 0, 8}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::gather(in[0], in[1], 1)}; }, Tolerance::kExact, {}});
  cases.push_back({"OneHot", {{shape_of({7}), DType::kInt32, 0, 5}}, [](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{ops::one_hot(in[0], 5)}; }, Tolerance::kExact, {}});

  // Optimizer updates (in place): the results are the updated buffers.
  Shape variable = shape_of({37});
  cases.push_back({"SgdMomentumNesterov", {{variable}, {variable}, {variable}}, [](const std::vector<Tensor>& in) {
                     ops::sgd_update(in[0], in[1], in[2], 0.1, 0.9, true);
                     return std::vector<Tensor>{in[0], in[2]}; }, Tolerance::kElementwise, {}});
  cases.push_back({"SgdPlain", {{variable}, {variable}}, [](const std::vector<Tensor>& in) {
                     ops::sgd_update(in[0], in[1], Tensor(), 0.05);
                     return std::vector<Tensor>{in[0]}; }, Tolerance::kElementwise, {}});
  cases.push_back({"Adam", {{variable}, {variable}, {variable, DType::kFloat32, 0, 1}, {variable}}, [](const std::vector<Tensor>& in) {
                     ops::adam_update(in[0], in[1], in[2], in[3], 1e-3, 0.9, 0.999, 1e-7, 3);
                     return std::vector<Tensor>{in[0], in[1], in[2]}; }, Tolerance::kTranscendental, {}});
  cases.push_back({"RmspropCentered", {{variable}, {variable, DType::kFloat32, 1, 2}, {variable}, {variable, DType::kFloat32, -0.1, 0.1}, {variable}},
                   [](const std::vector<Tensor>& in) {
                     ops::rmsprop_update(in[0], in[1], in[2], in[3], in[4], 1e-3, 0.9, 0.5, 1e-7, true);
                     return std::vector<Tensor>{in[0], in[1], in[2], in[3]}; }, Tolerance::kTranscendental, {}});
  // Keras's default RMSprop (no momentum, not centered) divides by sqrt(ms) + epsilon; a large
  // epsilon makes that placement visible.
  cases.push_back({"RmspropPlain", {{variable}, {variable, DType::kFloat32, 0, 0.01}, {variable}, {variable}, {variable}},
                   [](const std::vector<Tensor>& in) {
                     ops::rmsprop_update(in[0], in[1], in[2], in[3], in[4], 1e-3, 0.9, 0.0, 1e-2, false);
                     return std::vector<Tensor>{in[0], in[1]}; }, Tolerance::kTranscendental, {}});
  add_fused_cases(cases);
  return cases;
}

// The cases whose ops have bfloat16 and float16 variants (docs/op-set.md's
// "float" dtype class): elementwise, matmul, convolution, pooling,
// reduction, softmax, loss, batch norm and data-movement ops. Each runs
// again with its float32 inputs in the 16-bit dtype (other inputs, such as
// indices and labels, as they were), compared with the CPU plugin's 16-bit
// results under that dtype's tolerance. Fusions and epilogues build programs
// of float32 instructions, and the optimizer updates keep float32 variables
// (Keras's mixed policies), so they have no 16-bit case here.
bool has_16_bit_variant(const std::string& name) {
  static const char* const kPrefixes[] = {
      "Neg_", "Abs_", "Exp_", "Log_", "Sqrt_", "Rsqrt_", "Square_", "Relu_", "Sigmoid_", "Tanh_", "Sign_",
      "Reciprocal_", "Erf_", "Add_", "AddBroadcast", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow", "Equal",
      "NotEqual", "Less", "Greater", "ReluGrad", "SigmoidGrad", "TanhGrad", "Select", "MatMul_", "BatchMatMul",
      "Conv2D_", "Conv2DBackpropInput_", "Conv2DBackpropFilter_", "MaxPool_", "AvgPool_", "MaxPoolGrad_",
      "AvgPoolGrad_", "Sum_", "Mean_", "MaxMin_", "ArgMax_", "Softmax_", "SparseSoftmaxCrossEntropy", "BatchNorm_",
      "BatchNormGrad_", "Transpose", "CopyBroadcastTo", "Slice", "Concat", "Pad", "Gather"};
  for (const char* prefix : kPrefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::vector<OpCase> all_cases() {
  std::vector<OpCase> cases = float32_and_integer_cases();
  const size_t float32_cases = cases.size();
  for (const DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    for (size_t index = 0; index < float32_cases; ++index) {
      if (!has_16_bit_variant(cases[index].name)) continue;
      OpCase variant = cases[index];
      bool any_float = false;
      for (InputSpec& input : variant.inputs) {
        if (input.dtype != DType::kFloat32) continue;
        input.dtype = dtype;
        any_float = true;
      }
      if (!any_float) continue;
      variant.name += "_" + std::string(dtype_name(dtype));
      cases.push_back(std::move(variant));
    }
  }
  return cases;
}

// ------------------------------------------------------------------ runner

struct Param {
  std::string device;
  std::string device_type;
  bool bf16_matmul;
  size_t case_index;
};

const std::vector<OpCase>& cases() {
  static const std::vector<OpCase> all = all_cases();
  return all;
}

// How GoogleTest names a failing case's parameter: the device and the case.
void PrintTo(const Param& param, std::ostream* stream) {
  *stream << param.device << " " << cases()[param.case_index].name;
}

// A comma-separated list from the environment, empty when unset.
std::vector<std::string> listed(const char* variable) {
  std::vector<std::string> items;
  const char* value = std::getenv(variable);
  for (std::string_view rest = value != nullptr ? value : ""; !rest.empty();) {
    const size_t comma = rest.find(',');
    items.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return items;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::vector<Param> params() {
  // accel-conformance's filters (conformance_main.cpp): --device-type, and the named plugins' devices.
  const std::vector<std::string> types = listed("ACCEL_CONFORMANCE_DEVICE_TYPES");
  const std::vector<std::string> plugins = listed("ACCEL_CONFORMANCE_PLUGINS");
  std::vector<Param> result;
  for (const auto& device : config::list_logical_devices()) {
    if (device.name == reference_device().name()) continue;
    if (!types.empty() && !contains(types, device.device_type)) continue;
    if (!plugins.empty()) {
      std::string plugin;
      for (const auto& physical : config::list_physical_devices()) {
        if (physical.name == device.physical_device) plugin = physical.plugin;
      }
      if (!contains(plugins, plugin)) continue;
    }
    bool bf16 = false;
    for (const auto& physical : config::list_physical_devices()) {
      if (physical.name != device.physical_device) continue;
      auto precision = physical.properties.find("matmul_precision");
      bf16 = precision != physical.properties.end() && precision->second == "bfloat16";
    }
    for (size_t index = 0; index < cases().size(); ++index) result.push_back({device.name, device.device_type, bf16, index});
  }
  return result;
}

// Records each case's ops and result for the closing tables (conformance_summary.hpp).
class ConformanceTest : public ::testing::TestWithParam<Param> {
 protected:
  void TearDown() override {
    conformance::CaseOutcome outcome;
    outcome.device = GetParam().device;
    outcome.case_name = cases()[GetParam().case_index].name;
    if (recorder_) outcome.runs = recorder_->runs();
    outcome.result = IsSkipped()   ? conformance::CaseResult::kSkipped
                     : HasFailure() ? conformance::CaseResult::kFailed
                                    : conformance::CaseResult::kPassed;
    recorder_.reset();
    conformance::record_case(std::move(outcome));
  }

  // Starts recording the ops this thread runs; stop it before comparing.
  conformance::OpRecorder& record_ops() {
    recorder_ = std::make_unique<conformance::OpRecorder>();
    return *recorder_;
  }

 private:
  std::unique_ptr<conformance::OpRecorder> recorder_;
};

std::vector<Tensor> copies_on(const std::vector<Tensor>& inputs, const Device& device) {
  std::vector<Tensor> copies;
  for (const Tensor& input : inputs) {
    if (!input.defined()) {
      copies.push_back(input);
      continue;
    }
    Tensor copy = Tensor::empty(input.shape(), input.dtype(), device);
    copy.assign(input);
    copies.push_back(copy);
  }
  return copies;
}

TEST_P(ConformanceTest, MatchesTheCpuPlugin) {
  const Param& param = GetParam();
  const OpCase& op_case = cases()[param.case_index];
  std::vector<Tensor> inputs;
  for (size_t index = 0; index < op_case.inputs.size(); ++index) {
    inputs.push_back(make_input(op_case.inputs[index], 1000 + param.case_index * 16 + index));
  }
  Device device = find_device(param.device);
  if (op_case.claimed && !op_case.claimed(device)) {
    GTEST_SKIP() << param.device << " does not claim this optional kernel";
  }
  std::vector<Tensor> expected, actual, bound;
  {
    DeviceScope scope(reference_device());
    expected = op_case.run(copies_on(inputs, reference_device()));
    if (op_case.magnitude) bound = op_case.magnitude(copies_on(inputs, reference_device()));
  }
  {
    DeviceScope scope(device);
    std::vector<Tensor> device_inputs = copies_on(inputs, device);
    conformance::OpRecorder& recorder = record_ops();
    actual = op_case.run(device_inputs);
    recorder.stop();
  }
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t output = 0; output < expected.size(); ++output) {
    ASSERT_EQ(actual[output].shape(), expected[output].shape()) << "output " << output;
    ASSERT_EQ(actual[output].dtype(), expected[output].dtype()) << "output " << output;
    std::vector<float> want = as_floats(expected[output]);
    std::vector<float> got = as_floats(actual[output]);
    std::vector<float> magnitude = bound.empty() ? std::vector<float>() : as_floats(bound[output]);
    // The 16-bit inputs' tolerance, when any input is 16-bit (a mixed case's indices come second).
    DType dtype = op_case.inputs.empty() ? expected[output].dtype() : op_case.inputs[0].dtype;
    for (const InputSpec& input : op_case.inputs) {
      if (input.dtype == DType::kBFloat16 || input.dtype == DType::kFloat16) dtype = input.dtype;
    }
    double epsilon = epsilon_for(dtype, param.bf16_matmul && op_case.tolerance == Tolerance::kAccumulation);
    int reported = 0;
    for (size_t index = 0; index < want.size() && reported < 5; ++index) {
      double tolerance = 0.0;
      switch (op_case.tolerance) {
        case Tolerance::kExact: tolerance = 0.0; break;
        case Tolerance::kElementwise: tolerance = 4 * epsilon * (1.0 + std::fabs(want[index])); break;
        case Tolerance::kTranscendental: tolerance = 64 * epsilon * (1.0 + std::fabs(want[index])); break;
        case Tolerance::kAccumulation: tolerance = 16 * epsilon * (1.0 + magnitude[index]); break;
      }
      bool same = got[index] == want[index] || (std::isnan(want[index]) && std::isnan(got[index]));
      if (!same && !(std::fabs(double(got[index]) - want[index]) <= tolerance)) {
        ADD_FAILURE() << op_case.name << " output " << output << " element " << index << " on " << param.device
                      << ": got " << got[index] << ", CPU gives " << want[index] << " (tolerance " << tolerance << ")";
        ++reported;
      }
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string device = info.param.device.substr(info.param.device.rfind("device:") + 7);
  for (char& character : device) if (character == ':') character = '_';
  return device + "_" + cases()[info.param.case_index].name;
}

INSTANTIATE_TEST_SUITE_P(AllDevices, ConformanceTest, ::testing::ValuesIn(params()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceTest);

TEST(ConformanceCoverage, RequiredDeviceTypeWasTested) {
  std::vector<std::string> tested;
  for (const auto& param : params()) {
    if (tested.empty() || tested.back() != param.device) tested.push_back(param.device);
  }
  std::printf("conformance devices: %s\n", tested.empty() ? "(none besides the reference CPU:0)"
                                                           : fmt::format("{}", fmt::join(tested, ", ")).c_str());
  if (const char* required = std::getenv("ACCEL_CONFORMANCE_REQUIRE_DEVICE")) {
    bool found = false;
    for (const auto& param : params()) found = found || param.device_type == required;
    EXPECT_TRUE(found) << "no device of type " << required << " was loaded";
  }
}

}  // namespace
}  // namespace accel
