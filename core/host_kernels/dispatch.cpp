// The public face of the host kernels: supports(), execute(), flops().
//
// execute() checks what every op shares (operand counts, dtypes, attribute
// structs), stages BF16/F16 operands of float-math ops through F32 copies
// (except the ops whose kernels take BF16 themselves, runs_in_16_bit),
// and hands the call to the kernel file that owns the op (kernels.hpp). Any
// error is rethrown with the op, dtypes and shapes in front of its message.
// FUSED_ELEMENTWISE is checked by its planner (fused_program.cpp): its
// operands' dtypes and counts follow from its program.
#include "kernels.hpp"
#include "onednn_support.hpp"

#include <accel/plugin/op_classes.hpp>
#include <accel/plugin/op_set_names.hpp>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace accel::host_kernels {
namespace detail {

void fail(AccelStatusCode code, const std::string& message) { throw sdk::PluginError(code, message); }

std::string describe(const HostTensor& tensor) {
  std::string text = sdk::dtype_name(tensor.dtype);
  text += '[';
  for (int32_t axis = 0; axis < tensor.rank; ++axis) {
    if (axis > 0) text += ',';
    text += std::to_string(tensor.shape[axis]);
  }
  return text + ']';
}

}  // namespace detail

namespace {

using namespace detail;

bool is_float(AccelDType dtype) {
  return dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_BF16 || dtype == ACCEL_DTYPE_F16;
}
bool is_integer(AccelDType dtype) { return dtype == ACCEL_DTYPE_I32 || dtype == ACCEL_DTYPE_I64; }
bool is_numeric(AccelDType dtype) { return is_float(dtype) || is_integer(dtype); }
bool is_known(AccelDType dtype) { return dtype >= ACCEL_DTYPE_F32 && dtype < ACCEL_DTYPE_COUNT; }

// How an op's operands relate to its principal dtype.
enum class OpClass {
  kFloatMath,    // float only, staged through F32
  kNumericMath,  // float (staged) or I32/I64
  kComparison,   // numeric inputs, BOOL output
  kReduction,    // numeric
  kMoveAnyType,  // moves elements of any dtype
  kOther,        // checked by the op itself
};

OpClass class_of(AccelOp op) {
  switch (op) {
    case ACCEL_OP_NEG: case ACCEL_OP_ABS: case ACCEL_OP_SQUARE: case ACCEL_OP_RELU: case ACCEL_OP_SIGN:
    case ACCEL_OP_ADD: case ACCEL_OP_SUB: case ACCEL_OP_MUL: case ACCEL_OP_DIV:
    case ACCEL_OP_MAXIMUM: case ACCEL_OP_MINIMUM:
      return OpClass::kNumericMath;
    case ACCEL_OP_EQUAL: case ACCEL_OP_NOT_EQUAL: case ACCEL_OP_LESS: case ACCEL_OP_LESS_EQUAL:
    case ACCEL_OP_GREATER: case ACCEL_OP_GREATER_EQUAL:
      return OpClass::kComparison;
    case ACCEL_OP_REDUCE_SUM: case ACCEL_OP_REDUCE_MEAN: case ACCEL_OP_REDUCE_MAX:
    case ACCEL_OP_REDUCE_MIN: case ACCEL_OP_ARGMAX:
      return OpClass::kReduction;
    case ACCEL_OP_SELECT: case ACCEL_OP_TRANSPOSE: case ACCEL_OP_COPY: case ACCEL_OP_BROADCAST_TO:
    case ACCEL_OP_SLICE: case ACCEL_OP_CONCAT: case ACCEL_OP_PAD: case ACCEL_OP_GATHER:
      return OpClass::kMoveAnyType;
    case ACCEL_OP_LOGICAL_NOT: case ACCEL_OP_CAST: case ACCEL_OP_FILL: case ACCEL_OP_RANDOM_UNIFORM:
    case ACCEL_OP_RANDOM_NORMAL: case ACCEL_OP_RANDOM_TRUNCATED_NORMAL: case ACCEL_OP_ONE_HOT:
    case ACCEL_OP_FUSED_ELEMENTWISE:
      return OpClass::kOther;
    default:
      return OpClass::kFloatMath;  // MATMUL..AVG_POOL_BACKWARD, EXP.., *_BACKWARD, POW, softmax, optimizers, ERF
  }
}

struct Arity {
  int min_inputs, max_inputs, outputs;
};

Arity arity_of(AccelOp op) {
  switch (op) {
    case ACCEL_OP_MATMUL: case ACCEL_OP_CONV2D: case ACCEL_OP_CONV2D_BACKWARD_INPUT:
    case ACCEL_OP_CONV2D_BACKWARD_FILTER: case ACCEL_OP_MAX_POOL_BACKWARD: case ACCEL_OP_GATHER:
      return {2, 2, 1};
    case ACCEL_OP_SELECT: case ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER: return {3, 3, 1};
    case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY: return {2, 2, 2};
    case ACCEL_OP_BATCH_NORM: return {3, 3, 3};
    case ACCEL_OP_BATCH_NORM_BACKWARD: return {5, 5, 3};
    case ACCEL_OP_FILL: case ACCEL_OP_RANDOM_UNIFORM: case ACCEL_OP_RANDOM_NORMAL:
    case ACCEL_OP_RANDOM_TRUNCATED_NORMAL:
      return {0, 0, 1};
    case ACCEL_OP_CONCAT: return {1, 1 << 20, 1};
    case ACCEL_OP_SGD_UPDATE: return {2, 3, 0};
    case ACCEL_OP_ADAM_UPDATE: return {4, 4, 0};
    case ACCEL_OP_RMSPROP_UPDATE: return {5, 5, 0};
    default:
      if (sdk::is_binary_elementwise(op)) return {2, 2, 1};
      return {1, 1, 1};
  }
}

// The dtype supports() is asked about for this call.
AccelDType principal_dtype(AccelOp op, std::span<const HostTensor> inputs,
                           std::span<const HostTensor> outputs) {
  if (op == ACCEL_OP_SELECT) return inputs[1].dtype;
  if (inputs.empty()) return outputs[0].dtype;
  return inputs[0].dtype;
}

// The attribute struct, at least `minimum_size` bytes of it: fields appended
// later are read only where the struct holds them (ACCEL_STRUCT_HOLDS).
template <typename Attributes>
const Attributes& attributes_as(const void* attributes, size_t minimum_size = sizeof(Attributes)) {
  auto* typed = static_cast<const Attributes*>(attributes);
  if (typed == nullptr || typed->struct_size < minimum_size) invalid("op attributes missing or too small");
  return *typed;
}

// MATMUL and convolution attributes as version 1.0 wrote them: no epilogue.
constexpr size_t kMatmulAttributes10 = offsetof(AccelMatmulAttributes, epilogue_flags);
constexpr size_t kConv2dAttributes10 = offsetof(AccelConv2dAttributes, epilogue_flags);

void check_operands(AccelOp op, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                    const void* attributes) {
  if (op == ACCEL_OP_FUSED_ELEMENTWISE) {
    if (inputs.size() > ACCEL_FUSED_MAX_INPUTS || outputs.empty() || outputs.size() > ACCEL_FUSED_MAX_OUTPUTS) {
      invalid("expected 0 to " + std::to_string(ACCEL_FUSED_MAX_INPUTS) + " inputs and 1 to " +
              std::to_string(ACCEL_FUSED_MAX_OUTPUTS) + " outputs");
    }
  } else {
    Arity arity = arity_of(op);
    const int epilogue_inputs = epilogue_input_count(epilogue_request(op, attributes));
    arity.min_inputs += epilogue_inputs;
    arity.max_inputs += epilogue_inputs;
    if (static_cast<int>(inputs.size()) < arity.min_inputs || static_cast<int>(inputs.size()) > arity.max_inputs ||
        static_cast<int>(outputs.size()) != arity.outputs) {
      invalid("expected " + std::to_string(arity.min_inputs) +
              (arity.max_inputs != arity.min_inputs ? "+" : "") + " inputs and " +
              std::to_string(arity.outputs) + " outputs");
    }
  }
  for (auto group : {inputs, outputs}) {
    for (const HostTensor& tensor : group) {
      if (!is_known(tensor.dtype)) invalid("unknown dtype " + std::to_string(tensor.dtype));
      if (tensor.rank < 0 || tensor.rank > ACCEL_MAX_RANK) invalid("rank out of range");
      for (int32_t axis = 0; axis < tensor.rank; ++axis) {
        if (tensor.shape[axis] < 0) invalid("negative dimension in " + describe(tensor));
      }
      if (tensor.data == nullptr && element_count(tensor) != 0) invalid("null data for " + describe(tensor));
    }
  }
  const AccelDType dtype = principal_dtype(op, inputs, outputs);
  if (!supports(op, dtype)) {
    fail(ACCEL_STATUS_UNIMPLEMENTED, std::string("no kernel for dtype ") + sdk::dtype_name(dtype));
  }
  auto expect = [](const HostTensor& tensor, AccelDType expected, const char* role) {
    if (tensor.dtype != expected) {
      invalid(std::string(role) + " must be " + sdk::dtype_name(expected) + ", got " + describe(tensor));
    }
  };
  auto expect_index = [](const HostTensor& tensor, const char* role) {
    if (!is_integer(tensor.dtype)) invalid(std::string(role) + " must be int32 or int64, got " + describe(tensor));
  };
  switch (op) {
    case ACCEL_OP_SELECT:
      expect(inputs[0], ACCEL_DTYPE_BOOL, "condition");
      expect(inputs[2], dtype, "b");
      expect(outputs[0], dtype, "output");
      return;
    case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY:
      expect_index(inputs[1], "labels");
      expect(outputs[0], dtype, "loss");
      expect(outputs[1], dtype, "backprop");
      return;
    case ACCEL_OP_GATHER:
      expect_index(inputs[1], "indices");
      expect(outputs[0], dtype, "output");
      return;
    case ACCEL_OP_ARGMAX: expect(outputs[0], ACCEL_DTYPE_I64, "output"); return;
    case ACCEL_OP_BATCH_NORM: case ACCEL_OP_BATCH_NORM_BACKWARD: {
      // TensorFlow's FusedBatchNormV3 types: activations T (x, y; dy, dx) and
      // per-feature operands U, which is T or, for 16-bit T, float32.
      const bool forward = op == ACCEL_OP_BATCH_NORM;
      const size_t activations = forward ? 1 : 2;
      const AccelDType per_feature = inputs[activations].dtype;
      if (per_feature != dtype && !(per_feature == ACCEL_DTYPE_F32 && is_float(dtype))) {
        invalid(std::string("per-feature operands must be ") + sdk::dtype_name(dtype) + " or float32, got " +
                describe(inputs[activations]));
      }
      for (size_t i = 0; i < inputs.size(); ++i) expect(inputs[i], i < activations ? dtype : per_feature, "input");
      expect(outputs[0], dtype, forward ? "y" : "dx");
      for (size_t i = 1; i < outputs.size(); ++i) expect(outputs[i], per_feature, "per-feature output");
      return;
    }
    case ACCEL_OP_FUSED_ELEMENTWISE: return;  // the program gives every dtype (fused_program.cpp)
    case ACCEL_OP_CAST: case ACCEL_OP_FILL: case ACCEL_OP_RANDOM_UNIFORM: case ACCEL_OP_RANDOM_NORMAL:
    case ACCEL_OP_RANDOM_TRUNCATED_NORMAL: case ACCEL_OP_ONE_HOT:
      return;  // any output dtype (random: checked by supports)
    default: break;
  }
  for (const HostTensor& input : inputs) expect(input, dtype, "every input");
  const AccelDType output_dtype = class_of(op) == OpClass::kComparison ? ACCEL_DTYPE_BOOL : dtype;
  for (const HostTensor& output : outputs) expect(output, output_dtype, "output");
}

// Float buffers kept per thread from one staged call to the next: a fresh
// allocation of tens of MB faults in every page each time (16,000 faults
// per eager step of the tutorial CNN at batch 256 under mixed_bfloat16).
// Up to kKeptBuffers buffers of kKeptBytes in all stay; the rest are freed.
class StagingBuffers {
 public:
  struct Buffer {
    std::unique_ptr<float[]> data;
    int64_t capacity = 0;
  };
  // The smallest kept buffer of at least `count` floats, else a new one. Not
  // zeroed: the kernel writes every element of an output, the conversion
  // every element of an input.
  static Buffer take(int64_t count) {
    std::vector<Buffer>& kept = buffers();
    auto best = kept.end();
    for (auto buffer = kept.begin(); buffer != kept.end(); ++buffer) {
      if (buffer->capacity >= count && (best == kept.end() || buffer->capacity < best->capacity)) best = buffer;
    }
    if (best == kept.end()) return {std::unique_ptr<float[]>(new float[static_cast<size_t>(std::max<int64_t>(count, 1))]), count};
    Buffer taken = std::move(*best);
    kept.erase(best);
    return taken;
  }
  static void give_back(Buffer buffer) {
    std::vector<Buffer>& kept = buffers();
    kept.push_back(std::move(buffer));
    // The largest first: the next calls of a training step are alike.
    std::sort(kept.begin(), kept.end(), [](const Buffer& a, const Buffer& b) { return a.capacity > b.capacity; });
    int64_t bytes = 0;
    size_t keep = 0;
    while (keep < kept.size() && keep < kKeptBuffers &&
           bytes + kept[keep].capacity * static_cast<int64_t>(sizeof(float)) <= kKeptBytes) {
      bytes += kept[keep].capacity * static_cast<int64_t>(sizeof(float));
      ++keep;
    }
    kept.resize(keep);
  }

 private:
  static constexpr size_t kKeptBuffers = 4;
  static constexpr int64_t kKeptBytes = int64_t{128} << 20;
  static std::vector<Buffer>& buffers() {
    thread_local std::vector<Buffer> kept;
    return kept;
  }
};

// F32 working copies of a call's BF16/F16 operands.
class F32Staging {
 public:
  F32Staging(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs)
      : original_inputs_(inputs), original_outputs_(outputs) {
    inputs_.reserve(inputs.size());
    outputs_.reserve(outputs.size());
    for (const HostTensor& tensor : inputs) inputs_.push_back(stage(tensor, true));
    for (const HostTensor& tensor : outputs) outputs_.push_back(stage(tensor, false));
  }
  ~F32Staging() {
    for (StagingBuffers::Buffer& buffer : storage_) StagingBuffers::give_back(std::move(buffer));
  }
  F32Staging(const F32Staging&) = delete;
  F32Staging& operator=(const F32Staging&) = delete;
  std::span<const HostTensor> inputs() const { return inputs_; }
  std::span<const HostTensor> outputs() const { return outputs_; }

  // Writes results back; `inputs_too` for ops that update inputs in place.
  void write_back(bool inputs_too) const {
    for (size_t i = 0; i < outputs_.size(); ++i) narrow(outputs_[i], original_outputs_[i]);
    if (inputs_too) {
      for (size_t i = 0; i < inputs_.size(); ++i) narrow(inputs_[i], original_inputs_[i]);
    }
  }

 private:
  static bool is_half(AccelDType dtype) { return dtype == ACCEL_DTYPE_BF16 || dtype == ACCEL_DTYPE_F16; }

  HostTensor stage(const HostTensor& tensor, bool copy_in) {
    if (!is_half(tensor.dtype)) return tensor;
    HostTensor staged = tensor;
    staged.dtype = ACCEL_DTYPE_F32;
    const int64_t count = element_count(tensor);
    float* storage = storage_.emplace_back(StagingBuffers::take(count)).data.get();
    staged.data = storage;
    if (copy_in) cast(tensor, staged);  // CAST's kernel: parallel chunks
    return staged;
  }

  static void narrow(const HostTensor& staged, const HostTensor& original) {
    if (!is_half(original.dtype)) return;
    cast(staged, original);
  }

  std::span<const HostTensor> original_inputs_, original_outputs_;
  std::vector<HostTensor> inputs_, outputs_;
  std::vector<StagingBuffers::Buffer> storage_;
};

// Ops whose kernels take BF16 operands themselves (docs/PERFORMANCE.md,
// "What runs where"): matmuls and convolutions on CPUs where oneDNN has bf16
// kernels (float32 accumulation, each result rounded once: 2x float32's rate
// on the compute-bound ones), and on every CPU the memory-bound kernels that
// widen as they read (half the bytes of staging's extra passes).
// ACCEL_CPU_BF16_KERNELS=0 stages every one of them too, as before they took
// BF16 (read at each call, so that a test or benchmark can compare the two).
bool runs_in_16_bit(AccelOp op, AccelDType dtype) {
  if (dtype != ACCEL_DTYPE_BF16) return false;
  const char* setting = std::getenv("ACCEL_CPU_BF16_KERNELS");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  switch (op) {
    case ACCEL_OP_MATMUL: case ACCEL_OP_CONV2D: case ACCEL_OP_CONV2D_BACKWARD_INPUT:
    case ACCEL_OP_CONV2D_BACKWARD_FILTER:
      return onednn_has_bf16();
    case ACCEL_OP_MAX_POOL: case ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER: case ACCEL_OP_BATCH_NORM:
    case ACCEL_OP_BATCH_NORM_BACKWARD:
      return true;
    default: return sdk::is_unary_elementwise(op);
  }
}

bool needs_staging(AccelOp op, AccelDType dtype) {
  const OpClass op_class = class_of(op);
  const bool float_math = op_class == OpClass::kFloatMath || op_class == OpClass::kNumericMath ||
                          op_class == OpClass::kComparison || op_class == OpClass::kReduction;
  return float_math && (dtype == ACCEL_DTYPE_BF16 || dtype == ACCEL_DTYPE_F16) && !runs_in_16_bit(op, dtype);
}

void run(AccelOp op, std::span<const HostTensor> in, std::span<const HostTensor> out, const void* attributes,
         EpilogueRounding rounding) {
  switch (op) {
    case ACCEL_OP_MATMUL: {
      static const AccelMatmulAttributes no_transposes{sizeof(AccelMatmulAttributes), 0, 0, 0, {}};
      const Epilogue epilogue = bind_epilogue(op, epilogue_request(op, attributes), in.subspan(2), out[0]);
      return matmul(in[0], in[1], out[0],
                    attributes ? attributes_as<AccelMatmulAttributes>(attributes, kMatmulAttributes10) : no_transposes,
                    epilogue);
    }
    case ACCEL_OP_CONV2D: case ACCEL_OP_CONV2D_BACKWARD_INPUT: case ACCEL_OP_CONV2D_BACKWARD_FILTER: {
      const AccelConv2dAttributes& geometry = attributes_as<AccelConv2dAttributes>(attributes, kConv2dAttributes10);
      const Epilogue epilogue = bind_epilogue(op, epilogue_request(op, attributes), in.subspan(2), out[0]);
      return conv2d(op, in[0], in[1], out[0], geometry, epilogue, rounding);
    }
    case ACCEL_OP_FUSED_ELEMENTWISE:
      return fused_elementwise(in, out, attributes_as<AccelFusedElementwiseAttributes>(attributes));
    case ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER:
      return pool_filter_gradient(in[0], in[1], in[2], out[0],
                                  attributes_as<AccelPoolFilterGradientAttributes>(attributes), rounding);
    case ACCEL_OP_BATCH_NORM:
      return batch_norm(in[0], in[1], in[2], out[0], out[1], out[2], attributes_as<AccelBatchNormAttributes>(attributes));
    case ACCEL_OP_BATCH_NORM_BACKWARD:
      return batch_norm_backward(in, out, attributes_as<AccelBatchNormAttributes>(attributes));
    case ACCEL_OP_MAX_POOL: return max_pool(in[0], out[0], attributes_as<AccelPoolAttributes>(attributes));
    case ACCEL_OP_MAX_POOL_BACKWARD:
      return max_pool_backward(in[0], in[1], out[0], attributes_as<AccelPoolAttributes>(attributes));
    case ACCEL_OP_AVG_POOL: return avg_pool(in[0], out[0], attributes_as<AccelPoolAttributes>(attributes));
    case ACCEL_OP_AVG_POOL_BACKWARD:
      return avg_pool_backward(in[0], out[0], attributes_as<AccelPoolAttributes>(attributes));
    case ACCEL_OP_SELECT: return select(in[0], in[1], in[2], out[0]);
    case ACCEL_OP_REDUCE_SUM: case ACCEL_OP_REDUCE_MEAN: case ACCEL_OP_REDUCE_MAX: case ACCEL_OP_REDUCE_MIN:
      return reduce(op, in[0], out[0], attributes_as<AccelReduceAttributes>(attributes));
    case ACCEL_OP_ARGMAX: return argmax(in[0], out[0], attributes_as<AccelAxisAttributes>(attributes).axis);
    case ACCEL_OP_SOFTMAX: return softmax(in[0], out[0], false);
    case ACCEL_OP_LOG_SOFTMAX: return softmax(in[0], out[0], true);
    case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY:
      return sparse_softmax_cross_entropy(in[0], in[1], out[0], out[1]);
    case ACCEL_OP_CAST: return cast(in[0], out[0]);
    case ACCEL_OP_FILL: return fill(out[0], attributes_as<AccelFillAttributes>(attributes).value);
    case ACCEL_OP_RANDOM_UNIFORM: case ACCEL_OP_RANDOM_NORMAL: case ACCEL_OP_RANDOM_TRUNCATED_NORMAL:
      return random(op, out[0], attributes_as<AccelRandomAttributes>(attributes));
    case ACCEL_OP_TRANSPOSE:
      return transpose(in[0], out[0], attributes_as<AccelTransposeAttributes>(attributes).permutation);
    case ACCEL_OP_COPY: return copy(in[0], out[0]);
    case ACCEL_OP_BROADCAST_TO: return broadcast_to(in[0], out[0]);
    case ACCEL_OP_SLICE: return slice(in[0], out[0], attributes_as<AccelSliceAttributes>(attributes).begin);
    case ACCEL_OP_CONCAT: return concat(in, out[0], attributes_as<AccelAxisAttributes>(attributes).axis);
    case ACCEL_OP_PAD: return pad(in[0], out[0], attributes_as<AccelPadAttributes>(attributes));
    case ACCEL_OP_GATHER: return gather(in[0], in[1], out[0], attributes_as<AccelAxisAttributes>(attributes).axis);
    case ACCEL_OP_ONE_HOT: return one_hot(in[0], out[0], attributes_as<AccelOneHotAttributes>(attributes));
    case ACCEL_OP_SGD_UPDATE: return sgd_update(in, attributes_as<AccelSgdAttributes>(attributes));
    case ACCEL_OP_ADAM_UPDATE: return adam_update(in, attributes_as<AccelAdamAttributes>(attributes));
    case ACCEL_OP_RMSPROP_UPDATE: return rmsprop_update(in, attributes_as<AccelRmspropAttributes>(attributes));
    default: break;
  }
  if (sdk::is_unary_elementwise(op)) return unary(op, in[0], out[0]);
  if (sdk::is_binary_elementwise(op)) return binary(op, in[0], in[1], out[0]);
  fail(ACCEL_STATUS_UNIMPLEMENTED, "unknown op");
}

std::string describe_call(AccelOp op, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs) {
  std::string text = op_name(op);
  text += '(';
  for (size_t i = 0; i < inputs.size(); ++i) text += (i ? ", " : "") + describe(inputs[i]);
  text += " -> ";
  for (size_t i = 0; i < outputs.size(); ++i) text += (i ? ", " : "") + describe(outputs[i]);
  return text + ")";
}

// One operation per element for each op on float values (SELECT and CAST
// move values) and for each float reduction; 0 for a malformed program.
double fused_flops(const void* attributes) noexcept {
  auto* program = static_cast<const AccelFusedElementwiseAttributes*>(attributes);
  if (program == nullptr || program->struct_size < sizeof(*program) || program->rank < 0 ||
      program->rank > ACCEL_MAX_RANK || program->num_instructions < 0 ||
      program->num_instructions > ACCEL_FUSED_MAX_INSTRUCTIONS || program->num_outputs < 0 ||
      program->num_outputs > ACCEL_FUSED_MAX_OUTPUTS ||
      (program->num_instructions > 0 && program->instructions == nullptr) ||
      (program->num_outputs > 0 && program->outputs == nullptr)) {
    return 0.0;
  }
  double elements = 1;
  for (int32_t axis = 0; axis < program->rank; ++axis) elements *= static_cast<double>(program->shape[axis]);
  auto is_float_value = [&](int32_t value) {
    return value >= 0 && value < program->num_instructions && is_float(program->instructions[value].dtype);
  };
  double per_element = 0;
  for (int32_t i = 0; i < program->num_instructions; ++i) {
    const AccelFusedInstruction& instruction = program->instructions[i];
    const bool moves = instruction.op == ACCEL_OP_SELECT || instruction.op == ACCEL_OP_CAST;
    if (instruction.kind == ACCEL_FUSED_OP && !moves && is_float_value(instruction.operands[0])) ++per_element;
  }
  for (int32_t j = 0; j < program->num_outputs; ++j) {
    if (program->outputs[j].reduce_op != 0 && is_float_value(program->outputs[j].value)) ++per_element;
  }
  return elements * per_element;
}

bool is_in_place(AccelOp op) {
  return op == ACCEL_OP_SGD_UPDATE || op == ACCEL_OP_ADAM_UPDATE || op == ACCEL_OP_RMSPROP_UPDATE;
}

}  // namespace

bool supports(AccelOp op, AccelDType dtype) noexcept {
  if (!is_known(dtype) || op < 0 || op >= ACCEL_OP_COUNT) return false;
  switch (op) {
    case ACCEL_OP_LOGICAL_NOT: return dtype == ACCEL_DTYPE_BOOL;
    case ACCEL_OP_EQUAL: case ACCEL_OP_NOT_EQUAL: return is_numeric(dtype) || dtype == ACCEL_DTYPE_BOOL;
    case ACCEL_OP_CAST: case ACCEL_OP_FILL: case ACCEL_OP_FUSED_ELEMENTWISE: return true;
    case ACCEL_OP_RANDOM_UNIFORM: case ACCEL_OP_RANDOM_NORMAL: case ACCEL_OP_RANDOM_TRUNCATED_NORMAL:
      return is_float(dtype);
    case ACCEL_OP_ONE_HOT: return is_integer(dtype) || dtype == ACCEL_DTYPE_U8;
    default: break;
  }
  switch (class_of(op)) {
    case OpClass::kFloatMath: return is_float(dtype);
    case OpClass::kNumericMath: case OpClass::kComparison: case OpClass::kReduction: return is_numeric(dtype);
    case OpClass::kMoveAnyType: return true;
    default: return false;
  }
}

void execute(AccelOp op, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
             const void* attributes, EpilogueRounding rounding) {
  try {
    check_operands(op, inputs, outputs, attributes);
    if (needs_staging(op, principal_dtype(op, inputs, outputs))) {
      F32Staging staging(inputs, outputs);
      run(op, staging.inputs(), staging.outputs(), attributes, rounding);
      staging.write_back(is_in_place(op));
      return;
    }
    run(op, inputs, outputs, attributes, rounding);
  } catch (const sdk::PluginError& error) {
    throw sdk::PluginError(error.code(), describe_call(op, inputs, outputs) + ": " + error.what());
  }
}

double flops(AccelOp op, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
             const void* attributes) noexcept {
  auto count = [](const HostTensor& tensor) { return static_cast<double>(element_count(tensor)); };
  switch (op) {
    case ACCEL_OP_MATMUL: {
      if (inputs.size() < 2 || outputs.size() != 1 || inputs[0].rank < 2) return 0.0;
      auto* typed = static_cast<const AccelMatmulAttributes*>(attributes);
      const bool transpose_a =
          typed != nullptr && ACCEL_STRUCT_HOLDS(typed, AccelMatmulAttributes, transpose_a) && typed->transpose_a;
      const int64_t k = inputs[0].shape[inputs[0].rank - (transpose_a ? 2 : 1)];
      return 2.0 * count(outputs[0]) * static_cast<double>(k);
    }
    case ACCEL_OP_CONV2D: case ACCEL_OP_CONV2D_BACKWARD_INPUT: case ACCEL_OP_CONV2D_BACKWARD_FILTER: {
      if (inputs.size() < 2 || outputs.size() != 1) return 0.0;
      // 2 * (elements of the forward output) * R * S * C.
      const HostTensor& filter = op == ACCEL_OP_CONV2D_BACKWARD_FILTER ? outputs[0] : inputs[1];
      const HostTensor& y = op == ACCEL_OP_CONV2D ? outputs[0]
                            : op == ACCEL_OP_CONV2D_BACKWARD_INPUT ? inputs[0] : inputs[1];
      if (filter.rank != 4 || filter.shape[3] == 0) return 0.0;
      return 2.0 * count(y) * count(filter) / static_cast<double>(filter.shape[3]);
    }
    case ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER:
      // The filter gradient's, with the pooling input's shape as its dy; the pooling gradient only moves values.
      if (inputs.size() != 3) return 0.0;
      return flops(ACCEL_OP_CONV2D_BACKWARD_FILTER, inputs.first(2), outputs, nullptr);
    case ACCEL_OP_FUSED_ELEMENTWISE: return fused_flops(attributes);
    default: return 0.0;
  }
}

const char* gemm_library() noexcept {
  static const std::string name = [] {
    const dnnl_version_t* version = dnnl_version();
    return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
           std::to_string(version->patch);
  }();
  return name.c_str();
}

const char* op_name(AccelOp op) noexcept { return sdk::op_set_name(op); }

}  // namespace accel::host_kernels
