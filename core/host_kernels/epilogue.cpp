// Epilogues of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT: which ones the host
// kernels run (supports_epilogue), how a call's attributes and extra inputs
// become an Epilogue, and the pass that applies it to a finished output.
//
// The pass works on rows of the output's last dimension in blocks that stay
// in the first-level cache, doing every step on a block before the next, with
// the formulas of the plain ops (elementwise_functors.hpp): for F32 the fused
// result equals GEMM, ADD, the activation and RELU_BACKWARD run one by one.
#include "epilogue.hpp"

#include "elementwise_functors.hpp"

#include <algorithm>
#include <string>

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

void apply_epilogue(const Epilogue& epilogue, const HostTensor& y, bool skip_bias_and_activation) {
  const bool bias = epilogue.has(ACCEL_EPILOGUE_BIAS) && !skip_bias_and_activation;
  const bool activation = epilogue.has(ACCEL_EPILOGUE_ACTIVATION) && !skip_bias_and_activation;
  const bool mask = epilogue.has(ACCEL_EPILOGUE_RELU_MASK);
  if (!bias && !activation && !mask) return;
  const int64_t count = element_count(y);
  const int64_t columns = y.rank > 0 ? y.shape[y.rank - 1] : 1;
  if (count == 0 || columns == 0) return;
  float* y_data = data_of<float>(y);
  const float* bias_data = bias ? data_of<const float>(*epilogue.bias) : nullptr;
  const float* mask_data = mask ? data_of<const float>(*epilogue.mask) : nullptr;
  const bool transcendental = activation && epilogue.activation != ACCEL_OP_RELU;
  const int64_t work_per_element = 1 + (transcendental ? 16 : 0);
  // Blocks never cross a row, so the bias index is the column.
  const int64_t blocks_per_row = (columns + kEpilogueBlock - 1) / kEpilogueBlock;
  parallel_ranges(count / columns * blocks_per_row, grain_for(std::min(columns, kEpilogueBlock) * work_per_element),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t item = begin; item < end; ++item) {
                      const int64_t row = item / blocks_per_row;
                      const int64_t column = (item % blocks_per_row) * kEpilogueBlock;
                      const int64_t length = std::min(kEpilogueBlock, columns - column);
                      float* __restrict out = y_data + row * columns + column;
                      if (bias) {
                        const float* __restrict b = bias_data + column;
                        const Add add;
                        for (int64_t i = 0; i < length; ++i) out[i] = add(out[i], b[i]);
                      }
                      if (activation) {
                        switch (epilogue.activation) {
                          case ACCEL_OP_SIGMOID: activate<Sigmoid>(out, length); break;
                          case ACCEL_OP_TANH: activate<Tanh>(out, length); break;
                          default: activate<Relu>(out, length); break;
                        }
                      }
                      if (mask) {
                        const float* __restrict m = mask_data + row * columns + column;
                        const ReluBackward relu_backward;
                        for (int64_t i = 0; i < length; ++i) out[i] = relu_backward(out[i], m[i]);
                      }
                    }
                  });
}

}  // namespace detail

bool supports_epilogue(AccelOp op, AccelDType dtype, int32_t epilogue_flags, AccelOp activation) noexcept {
  if (!detail::takes_epilogue(op) || !supports(op, dtype)) return false;
  if ((epilogue_flags & ~detail::kAllEpilogueFlags) != 0) return false;
  if ((epilogue_flags & ACCEL_EPILOGUE_ACTIVATION) != 0 && !detail::is_epilogue_activation(activation)) return false;
  return true;
}

}  // namespace accel::host_kernels
