// Figures derived from results for the report pages (Markdown and HTML share
// them): time per op category per profiled step, and the emulator's per-op
// rows (MXU utilization, HBM bytes per step). Under a strategy they describe
// the first replica's device (the others run the same ops at the same time).
#pragma once

#include <accel/experiment/run_results.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel::experiment {

// category (suffixed " on /CPU:0" for ops another device ran) -> seconds per profiled step.
std::map<std::string, double> category_seconds_per_step(const RunResult& run);

struct EmulatorOpRow {
  std::string op;
  double count_per_step = 0;
  double simulated_seconds_per_step = 0;
  double mxu_utilization = 0;  // cycle-weighted, [0, 1]
  double hbm_bytes_per_step = 0;
  double flops_per_step = 0;
};
// The ops the emulator timed (simulated time source), by simulated time, largest first.
std::vector<EmulatorOpRow> emulator_op_rows(const RunResult& run);

// Emulator runs: HBM bytes read and written per training step. From the
// profiled steps' per-op rows (steps after the first, which for a compiled
// run is the eager trace: the figure is the replayed graph's), else the
// emulator's totals / steps run; nullopt without the emulator.
std::optional<double> hbm_bytes_per_step(const RunResult& run);

// The run's device as the profiler names its ops: "/TPU:0".
bool op_ran_on_run_device(const RunResult& run, const OpSummary& op);
// Under a strategy, an op of a replica other than the first: the same work
// in parallel, left out of the per-step figures (they show the first replica).
bool op_ran_on_another_replica(const RunResult& run, const OpSummary& op);

}  // namespace accel::experiment
