// The roof of the run's backend for the roofline chart: peak compute
// (FLOP/s) and memory bandwidth (bytes/s). Taken from the physical device's
// properties (peak_flops, hbm_bandwidth: the TPU emulator's), derived from
// them (a GPU's memory clock x bus width), or measured on the device (a
// 1024^3 float32 matmul, a large add), and always labelled with which. A
// figure that cannot be had stays unset ("unknown"); none is made up.
#pragma once

#include <accel/experiment/run_results.hpp>

#include <string>

namespace accel::experiment {

// `device` is the logical device name the run uses ("/CPU:0").
BackendPeak backend_peak(const std::string& device);

// A roof is the rate the device's best kernel reaches: when an op of the run
// (an op benchmark's point, or a training op timed over at least 1 ms in all)
// computed or moved data faster than the roof, the roof is raised to that op's
// rate and the source says so, so that no utilization exceeds 100 %. (A
// measured roof is one 1024^3 matmul and one add, which a larger, warmer
// kernel can beat.)
void raise_to_the_runs_best(BackendPeak& peak, const RunResult& run);

}  // namespace accel::experiment
