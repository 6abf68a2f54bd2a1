// One TPU step's op records (the profiler's, of one core) summed by kernel
// name, most simulated time first: the breakdown of tpu_step_estimate and
// tpu_pod_estimate.
#pragma once

#include <accel/experiment/tpu_step_estimate.hpp>
#include <accel/profiler.hpp>

#include <vector>

namespace accel::experiment {

std::vector<TpuOpCost> costs_by_op(const std::vector<profiler::OpRecord>& records);

}  // namespace accel::experiment
