// Weight prefetch between the kernels of a compiled program (see weight_prefetch.hpp).
#include "weight_prefetch.hpp"

#include "op_costing.hpp"
#include "timing/program_timing.hpp"

namespace accel::tpu_sim {

std::int64_t prefetch_kernel_weights(const tpu::TimingModel& model, AccelOp op, bool fused, ResidencyMode mode,
                                     PreviousKernel& previous, tpu::OpTiming& timing) {
  const bool in_program = mode == ResidencyMode::kAll || (mode == ResidencyMode::kFused && (fused || previous.fused));
  std::int64_t prefetched = 0;
  if (in_program && runs_on_mxu(op) && timing.useful_macs > 0) {
    prefetched = tpu::prefetch_weights(model, timing, previous.idle_hbm_cycles);
  }
  previous = {tpu::idle_hbm_cycles(timing), fused};
  return prefetched;
}

}  // namespace accel::tpu_sim
