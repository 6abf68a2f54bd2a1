// An op benchmark run (`benchmark:` of an experiment file; the TensorFlow
// GPU guide's matmul timing, on every backend): the op at each size on the
// run's device, `warmup` untimed executions, then `repeats` timed ones. Each
// execution is timed by the device's own clock through the profiler
// (simulated cycles on the TPU emulator, CUDA events on a GPU, kernel wall on
// the CPU) and by the host around it (synchronized wall); both medians are kept.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/run_results.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace accel::experiment {

// Stops between sizes once `interrupt` is set.
std::vector<BenchmarkPoint> run_op_benchmark(const BenchmarkConfig& benchmark, const std::string& device,
                                             const std::atomic<bool>* interrupt = nullptr);

}  // namespace accel::experiment
