// Op dispatch: the one path every primitive op takes. It places the op, falls
// back to the CPU when the device's plugin lacks it (copies counted, one
// warning), allocates outputs, calls the plugin, logs placement and tells the
// thread's op observers (GradientTape).
#pragma once

#include <accel/plugin/accel_plugin.h>
#include <accel/tensor.hpp>

#include <span>
#include <vector>

namespace accel::detail {

class LogicalDevice;

struct OutputSpec {
  Shape shape;
  DType dtype;
};

std::vector<Tensor> run_op(AccelOp op, std::span<const Tensor> inputs,
                           std::span<const OutputSpec> outputs, const void* attributes);

// Whether run_op_into would run `op` on `device` itself: the device claims
// it and every input already lives there (no CPU fallback, no copy).
bool runs_natively(LogicalDevice* device, AccelOp op, std::span<const Tensor> inputs,
                   std::span<const Tensor> outputs);

// Runs `op` on `device` into outputs the caller allocated (a compiled step's
// planned buffers), with run_op's CPU fallback, input copies, placement log
// and observers. `call_flags` are the AccelOpCall's ACCEL_OP_CALL_* bits.
void run_op_into(LogicalDevice* device, AccelOp op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                 const void* attributes, uint32_t call_flags = 0);

// The device an op with these inputs runs on: the innermost DeviceScope, else
// the first input's device, else the default device.
LogicalDevice* place_op(std::span<const Tensor> inputs);

// Tells observers about an op that ran without a device (reshape).
void notify_observers(int32_t op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                      const void* attributes);

void set_log_placement(bool enable);
// Off: an op pinned by a DeviceScope to a device lacking it is an error, not a CPU fallback.
void set_soft_placement(bool enable);
bool soft_placement_enabled();

// Copies a tensor to another device through host memory.
Tensor copy_to_device(const Tensor& tensor, LogicalDevice* device);
// Writes `source` (on another device) into `destination` at `offset` on
// `device`, through a per-thread host buffer that is kept and reused.
void copy_through_host(const Tensor& source, LogicalDevice* device, AccelBuffer* destination, uint64_t offset);

}  // namespace accel::detail
