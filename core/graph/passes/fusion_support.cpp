// FusionSupport::of_devices: what the fusion passes may emit, as the devices'
// plugins answer it (LogicalDevice::supports / supports_epilogue). A plugin
// built for API 1.0 or 1.1 claims neither, and so gets the plain ops; one
// built for 1.2 gets ops added in 1.3 (ERF) as plain ops (it never claims them).
#include "graph/passes/passes.hpp"

#include "runtime/logical_device.hpp"

namespace accel::graph {

FusionSupport FusionSupport::of_devices() {
  FusionSupport support;
  support.fused_elementwise = [](detail::LogicalDevice* device, AccelDType dtype) {
    return device != nullptr && device->supports(ACCEL_OP_FUSED_ELEMENTWISE, dtype);
  };
  support.epilogue = [](detail::LogicalDevice* device, AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                        AccelOp activation) {
    return device != nullptr && device->supports_epilogue(op, dtype, epilogue_flags, activation);
  };
  support.plain_op = [](detail::LogicalDevice* device, AccelOp op, AccelDType dtype) {
    return device != nullptr && device->supports(op, dtype);
  };
  return support;
}

}  // namespace accel::graph
