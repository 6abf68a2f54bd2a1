// Batch normalization fused with its neighbours in compiled programs, as
// XLA compiles a training step for a TPU: the statistics of BATCH_NORM come
// out of the fusion that produced x (a multi-output fusion with the
// convolution writing it), the sums of BATCH_NORM_BACKWARD out of the one
// that produced dy, and the elementwise kernel right after a batch norm
// (the activation, the residual add) continues the normalization's loop
// (XLA's consumer fusion), reading its output where it was made.
//
// The emulator sees one call at a time, so "fused with" means "one of the
// last few calls on the same core (kRecentKernels) wrote that tensor, and
// both are ops of a compiled step" (ACCEL_OP_CALL_COMPILED): the small ops a
// step puts in between (a batch norm's moving averages) belong to other
// fusions. Eager ops never qualify: each is its own program there. Owns the
// record of the recent kernels' outputs per core.
// docs/tpu-emulator.md, "Batch normalization in compiled programs".
#pragma once

#include <accel/plugin/host_kernels.hpp>

#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "vmem_residency.hpp"

namespace accel::tpu_sim {

// What a recent kernel on a core wrote, and what it was.
struct ProducerKernel {
  AccelOp op = ACCEL_OP_COUNT;
  bool compiled = false;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> outputs;  // [begin, end) of each tensor written
};

// The kernels that can still be a fusion's producer, newest last.
inline constexpr std::size_t kRecentKernels = 8;
using RecentKernels = std::deque<ProducerKernel>;

// Per input of `op`: read from its producer's fusion (true) rather than
// from HBM. The producer is the newest recent kernel that wrote the input.
// BATCH_NORM: x written by an MXU op (its statistics pass reads nothing).
// BATCH_NORM_BACKWARD: dy written by any kernel (its sums pass reads only
// x). An elementwise kernel (FUSED_ELEMENTWISE, an elementwise op, a cast):
// an output of a batch norm or its gradient. Empty when the call or the
// producer is not compiled, or under tpu_sim.vmem_residency=off.
ResidentInputs inputs_from_producer(const RecentKernels& recent, AccelOp op, bool compiled,
                                    std::span<const host_kernels::HostTensor> inputs, ResidencyMode mode);

// Makes this call the newest recent kernel of its core.
void record_producer(RecentKernels& recent, AccelOp op, bool compiled,
                     std::span<const host_kernels::HostTensor> written);

}  // namespace accel::tpu_sim
