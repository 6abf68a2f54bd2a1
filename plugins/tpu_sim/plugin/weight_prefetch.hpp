// Weight prefetch in compiled programs: an MXU kernel's weights load during
// the kernel before it on the same core, in the HBM time that kernel left
// idle, when they fit the other half of VMEM (tpu::prefetch_weights has the
// rule). Which calls count as one program follows tpu_sim.vmem_residency,
// as on-chip residency does: `fused` (default) prefetches when this kernel
// or the one before it is a fused kernel (edges only a compiled program
// has), `all` on every MXU op, `off` never. Eager code sends no fused
// kernel, so its timing is unchanged. docs/tpu-emulator.md, "Compiled programs".
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cstdint>

#include "timing/op_timing.hpp"
#include "vmem_residency.hpp"

namespace accel::tpu_sim {

// What the prefetch needs to know about the kernel costed before, per core.
struct PreviousKernel {
  std::int64_t idle_hbm_cycles = 0;  // HBM time it left unused
  bool fused = false;                // a fused kernel (is_fused_kernel)
};

// Applies the prefetch to `timing` (the kernel `op` about to run; `fused`:
// it is a fused kernel) after `previous`, then makes it the previous kernel.
// Returns the weight bytes prefetched (0: `timing` unchanged).
std::int64_t prefetch_kernel_weights(const tpu::TimingModel& model, AccelOp op, bool fused, ResidencyMode mode,
                                     PreviousKernel& previous, tpu::OpTiming& timing);

}  // namespace accel::tpu_sim
