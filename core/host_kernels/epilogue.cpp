// Epilogues of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT: which ones the host
// kernels run (supports_epilogue), how a call's attributes and extra inputs
// become an Epilogue, and the pass that applies it to a finished output.
//
// The pass works on rows of the output's last dimension in blocks that stay
// in the first-level cache, doing every step on a block before the next, with
// the formulas of the plain ops (elementwise_functors.hpp): for F32 the fused
// result equals GEMM, ADD, the activation and RELU_BACKWARD run one by one.
#include "epilogue.hpp"

#include "element_conversions.hpp"
#include "elementwise_functors.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

namespace accel::host_kernels {
namespace detail {
namespace {

constexpr int32_t kAllEpilogueFlags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;
constexpr int64_t kEpilogueBlock = 1024;

bool takes_epilogue(AccelOp op) {
  return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT;
}

bool is_epilogue_activation(AccelOp activation) {
  return activation == ACCEL_OP_RELU || activation == ACCEL_OP_SIGMOID || activation == ACCEL_OP_TANH;
}

template <typename Attributes>
EpilogueRequest request_of(const void* attributes) noexcept {
  auto* typed = static_cast<const Attributes*>(attributes);
  EpilogueRequest request;
  if (typed == nullptr || !ACCEL_STRUCT_HOLDS(typed, Attributes, epilogue_flags)) return request;
  request.flags = typed->epilogue_flags;
  if (ACCEL_STRUCT_HOLDS(typed, Attributes, activation)) request.activation = typed->activation;
  return request;
}

template <typename Activation>
void activate(float* __restrict y, int64_t count) {
  const Activation activation;
  for (int64_t i = 0; i < count; ++i) y[i] = activation(y[i]);
}

}  // namespace

EpilogueRequest epilogue_request(AccelOp op, const void* attributes) noexcept {
  if (op == ACCEL_OP_MATMUL) return request_of<AccelMatmulAttributes>(attributes);
  if (op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT || op == ACCEL_OP_CONV2D_BACKWARD_FILTER) {
    return request_of<AccelConv2dAttributes>(attributes);
  }
  return {};
}

int epilogue_input_count(const EpilogueRequest& request) noexcept {
  return ((request.flags & ACCEL_EPILOGUE_BIAS) ? 1 : 0) + ((request.flags & ACCEL_EPILOGUE_RELU_MASK) ? 1 : 0);
}

Epilogue bind_epilogue(AccelOp op, const EpilogueRequest& request, std::span<const HostTensor> extra_inputs,
                       const HostTensor& y) {
  Epilogue epilogue;
  if (request.flags == 0) return epilogue;
  if (!takes_epilogue(op)) invalid("only MATMUL, CONV2D and CONV2D_BACKWARD_INPUT take an epilogue");
  if ((request.flags & ~kAllEpilogueFlags) != 0) {
    invalid("unknown epilogue flags " + std::to_string(request.flags & ~kAllEpilogueFlags));
  }
  epilogue.flags = request.flags;
  if (epilogue.has(ACCEL_EPILOGUE_ACTIVATION)) {
    if (!is_epilogue_activation(request.activation)) {
      invalid(std::string("epilogue activation must be RELU, SIGMOID or TANH, got ") + op_name(request.activation));
    }
    epilogue.activation = request.activation;
  }
  if (static_cast<int>(extra_inputs.size()) != epilogue_input_count(request)) {
    invalid("the epilogue takes " + std::to_string(epilogue_input_count(request)) + " extra inputs, got " +
            std::to_string(extra_inputs.size()));
  }
  const int64_t columns = y.rank > 0 ? y.shape[y.rank - 1] : 1;
  size_t next = 0;
  if (epilogue.has(ACCEL_EPILOGUE_BIAS)) {
    epilogue.bias = &extra_inputs[next++];
    if (epilogue.bias->rank != 1 || epilogue.bias->shape[0] != columns) {
      invalid("epilogue bias must be [" + std::to_string(columns) + "] (the output's last dimension), got " +
              describe(*epilogue.bias));
    }
  }
  if (epilogue.has(ACCEL_EPILOGUE_RELU_MASK)) {
    epilogue.mask = &extra_inputs[next++];
    if (!same_shape(*epilogue.mask, y)) {
      invalid("epilogue mask must have the output's shape " + describe(y) + ", got " + describe(*epilogue.mask));
    }
  }
  return epilogue;
}

namespace {

// The epilogue over one block of `length` values of a row, in float.
void apply_to_block(const Epilogue& epilogue, bool bias, bool activation, bool mask, float* __restrict out,
                    const float* __restrict bias_values, const float* __restrict mask_values, int64_t length) {
  if (bias) {
    const Add add;
    for (int64_t i = 0; i < length; ++i) out[i] = add(out[i], bias_values[i]);
  }
  if (activation) {
    switch (epilogue.activation) {
      case ACCEL_OP_SIGMOID: activate<Sigmoid>(out, length); break;
      case ACCEL_OP_TANH: activate<Tanh>(out, length); break;
      default: activate<Relu>(out, length); break;
    }
  }
  if (mask) {
    const ReluBackward relu_backward;
    for (int64_t i = 0; i < length; ++i) out[i] = relu_backward(out[i], mask_values[i]);
  }
}

template <typename S>
void widen_block(const S* __restrict source, float* __restrict values, int64_t length) {
  for (int64_t i = 0; i < length; ++i) values[i] = widen(source[i]);
}

}  // namespace

void apply_epilogue(const Epilogue& epilogue, const HostTensor& y, bool skip_bias_and_activation) {
  const bool bias = epilogue.has(ACCEL_EPILOGUE_BIAS) && !skip_bias_and_activation;
  const bool activation = epilogue.has(ACCEL_EPILOGUE_ACTIVATION) && !skip_bias_and_activation;
  const bool mask = epilogue.has(ACCEL_EPILOGUE_RELU_MASK);
  if (!bias && !activation && !mask) return;
  const int64_t count = element_count(y);
  const int64_t columns = y.rank > 0 ? y.shape[y.rank - 1] : 1;
  if (count == 0 || columns == 0) return;
  const bool transcendental = activation && epilogue.activation != ACCEL_OP_RELU;
  const int64_t work_per_element = 1 + (transcendental ? 16 : 0);
  // Blocks never cross a row, so the bias index is the column.
  const int64_t blocks_per_row = (columns + kEpilogueBlock - 1) / kEpilogueBlock;
  auto run = [&](auto storage) {
    using S = decltype(storage);
    S* y_data = data_of<S>(y);
    const S* bias_data = bias ? data_of<const S>(*epilogue.bias) : nullptr;
    const S* mask_data = mask ? data_of<const S>(*epilogue.mask) : nullptr;
    parallel_ranges(count / columns * blocks_per_row, grain_for(std::min(columns, kEpilogueBlock) * work_per_element),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t item = begin; item < end; ++item) {
                        const int64_t row = item / blocks_per_row;
                        const int64_t column = (item % blocks_per_row) * kEpilogueBlock;
                        const int64_t length = std::min(kEpilogueBlock, columns - column);
                        S* out = y_data + row * columns + column;
                        const S* bias_values = bias ? bias_data + column : nullptr;
                        const S* mask_values = mask ? mask_data + row * columns + column : nullptr;
                        if constexpr (std::is_same_v<S, float>) {
                          apply_to_block(epilogue, bias, activation, mask, out, bias_values, mask_values, length);
                        } else {
                          // 16-bit outputs: each step in float and rounded to S, as the
                          // plain ops round each result (a mask's select is exact).
                          float values[kEpilogueBlock], bias_floats[kEpilogueBlock], mask_floats[kEpilogueBlock];
                          widen_block(out, values, length);
                          if (bias) widen_block(bias_values, bias_floats, length);
                          if (mask) widen_block(mask_values, mask_floats, length);
                          auto round = [&] {
                            for (int64_t i = 0; i < length; ++i) values[i] = widen(narrow<S>(values[i]));
                          };
                          apply_to_block(epilogue, bias, false, false, values, bias_floats, nullptr, length);
                          if (bias) round();
                          apply_to_block(epilogue, false, activation, mask, values, nullptr, mask_floats, length);
                          for (int64_t i = 0; i < length; ++i) out[i] = narrow<S>(values[i]);
                        }
                      }
                    });
  };
  switch (y.dtype) {
    case ACCEL_DTYPE_F32: return run(float{});
    case ACCEL_DTYPE_BF16: return run(bf16_t{});
    case ACCEL_DTYPE_F16: return run(f16_t{});
    default: invalid("epilogue on a non-float output");
  }
}

}  // namespace detail

bool supports_epilogue(AccelOp op, AccelDType dtype, int32_t epilogue_flags, AccelOp activation) noexcept {
  if (!detail::takes_epilogue(op) || !supports(op, dtype)) return false;
  if ((epilogue_flags & ~detail::kAllEpilogueFlags) != 0) return false;
  if ((epilogue_flags & ACCEL_EPILOGUE_ACTIVATION) != 0 && !detail::is_epilogue_activation(activation)) return false;
  return true;
}

}  // namespace accel::host_kernels
