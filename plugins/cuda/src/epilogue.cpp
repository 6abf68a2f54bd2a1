// The epilogue of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT (see epilogue.hpp):
// the request read from the op's attributes with ACCEL_STRUCT_HOLDS (a struct
// from before 1.2 requests none), the extra inputs checked by the rules of the
// CPU reference (core/host_kernels/epilogue.cpp), and one kernel launch.
#include "epilogue.hpp"

#include <string>

namespace accel::cuda {
namespace {

constexpr int32_t kAllEpilogueFlags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;

bool takes_epilogue(AccelOp op) {
  return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT;
}

bool is_epilogue_activation(AccelOp activation) {
  return activation == ACCEL_OP_RELU || activation == ACCEL_OP_SIGMOID || activation == ACCEL_OP_TANH;
}

template <typename Attributes>
void read_request(const void* attributes, Epilogue& epilogue) {
  auto* typed = static_cast<const Attributes*>(attributes);
  if (typed == nullptr || !ACCEL_STRUCT_HOLDS(typed, Attributes, epilogue_flags)) return;
  epilogue.flags = typed->epilogue_flags;
  if (ACCEL_STRUCT_HOLDS(typed, Attributes, activation)) epilogue.activation = typed->activation;
}

int32_t extra_input_count(const Epilogue& epilogue) {
  return (epilogue.has(ACCEL_EPILOGUE_BIAS) ? 1 : 0) + (epilogue.has(ACCEL_EPILOGUE_RELU_MASK) ? 1 : 0);
}

}  // namespace

bool epilogue_supported(const AccelDevice& device, AccelOp op, AccelDType dtype, int32_t flags,
                       AccelOp activation) {
  if (!takes_epilogue(op) || !supports(device, op, dtype)) return false;
  if ((flags & ~kAllEpilogueFlags) != 0) return false;
  return (flags & ACCEL_EPILOGUE_ACTIVATION) == 0 || is_epilogue_activation(activation);
}

Epilogue bind_epilogue(const AccelOpCall& call, const View& y, const char* name) {
  Epilogue epilogue;
  if (call.op == ACCEL_OP_MATMUL) {
    read_request<AccelMatmulAttributes>(call.attributes, epilogue);
  } else {
    read_request<AccelConv2dAttributes>(call.attributes, epilogue);
  }
  const std::string where = std::string(name) + ": ";
  if (epilogue.any()) {
    if (!takes_epilogue(call.op)) invalid(where + "only MATMUL, CONV2D and CONV2D_BACKWARD_INPUT take an epilogue");
    if ((epilogue.flags & ~kAllEpilogueFlags) != 0) {
      invalid(where + "unknown epilogue flags " + std::to_string(epilogue.flags & ~kAllEpilogueFlags));
    }
    if (epilogue.has(ACCEL_EPILOGUE_ACTIVATION) && !is_epilogue_activation(epilogue.activation)) {
      invalid(where + "epilogue activation must be RELU, SIGMOID or TANH, got op " +
              std::to_string(static_cast<int>(epilogue.activation)));
    }
  }
  const int32_t extra = extra_input_count(epilogue);
  if (call.num_inputs != 2 + extra) {
    invalid(where + "expected 2 inputs and " + std::to_string(extra) + " for the epilogue, got " +
            std::to_string(call.num_inputs));
  }
  const int64_t columns = y.rank > 0 ? y.shape[y.rank - 1] : 1;
  int32_t next = 2;
  if (epilogue.has(ACCEL_EPILOGUE_BIAS)) {
    epilogue.bias = view_of(call.inputs[next++], "epilogue bias");
    if (epilogue.bias.rank != 1 || epilogue.bias.shape[0] != columns || epilogue.bias.dtype != y.dtype) {
      invalid(where + "epilogue bias must be " + sdk::dtype_name(y.dtype) + "[" + std::to_string(columns) +
              "] (the output's last dimension), got " + sdk::dtype_name(epilogue.bias.dtype) +
              shape_text(epilogue.bias));
    }
  }
  if (epilogue.has(ACCEL_EPILOGUE_RELU_MASK)) {
    epilogue.mask = view_of(call.inputs[next++], "epilogue mask");
    if (!same_shape(epilogue.mask, y) || epilogue.mask.dtype != y.dtype) {
      invalid(where + "epilogue mask must have the output's shape " + sdk::dtype_name(y.dtype) + shape_text(y) +
              ", got " + sdk::dtype_name(epilogue.mask.dtype) + shape_text(epilogue.mask));
    }
  }
  return epilogue;
}

void apply_epilogue(AccelDevice& device, const Epilogue& epilogue, const View& y, const float* staged) {
  if ((!epilogue.any() && staged == nullptr) || y.count == 0) return;
  EpiloguePlan plan;
  plan.count = y.count;
  plan.columns = y.rank > 0 ? y.shape[y.rank - 1] : 1;
  plan.staged = staged;
  plan.bias = epilogue.has(ACCEL_EPILOGUE_BIAS) ? epilogue.bias.data : nullptr;
  plan.activation = epilogue.has(ACCEL_EPILOGUE_ACTIVATION);
  plan.activation_op = epilogue.activation;
  plan.mask = epilogue.has(ACCEL_EPILOGUE_RELU_MASK) ? epilogue.mask.data : nullptr;
  check_launch(launch_epilogue(y.dtype, y.data, plan, device.stream), "epilogue");
}

}  // namespace accel::cuda
