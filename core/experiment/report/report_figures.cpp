#include "report_figures.hpp"

#include <algorithm>

namespace accel::experiment {

bool op_ran_on_run_device(const RunResult& run, const OpSummary& op) { return op.device == run.device; }

bool op_ran_on_another_replica(const RunResult& run, const OpSummary& op) {
  if (!run.distribution || op.device == run.device) return false;
  const std::vector<std::string>& replicas = run.distribution->replica_devices;
  return std::find(replicas.begin(), replicas.end(), op.device) != replicas.end();
}

std::map<std::string, double> category_seconds_per_step(const RunResult& run) {
  std::map<std::string, double> seconds;
  if (run.profiled_steps <= 0) return seconds;
  for (const OpSummary& op : run.ops) {
    if (op_ran_on_another_replica(run, op)) continue;
    const std::string key = op_ran_on_run_device(run, op) ? op.category : op.category + " on " + op.device;
    seconds[key] += op.seconds / static_cast<double>(run.profiled_steps);
  }
  return seconds;
}

std::vector<EmulatorOpRow> emulator_op_rows(const RunResult& run) {
  std::vector<EmulatorOpRow> rows;
  if (run.profiled_steps <= 0) return rows;
  const double steps = static_cast<double>(run.profiled_steps);
  for (const OpSummary& op : run.ops) {
    if (op.time_source != kSimulated || op_ran_on_another_replica(run, op)) continue;
    rows.push_back({op.op, static_cast<double>(op.count) / steps, op.seconds / steps, op.mxu_utilization,
                    op.bytes / steps, op.flops / steps});
  }
  std::sort(rows.begin(), rows.end(), [](const EmulatorOpRow& a, const EmulatorOpRow& b) {
    return a.simulated_seconds_per_step > b.simulated_seconds_per_step;
  });
  return rows;
}

std::optional<double> hbm_bytes_per_step(const RunResult& run) {
  if (!run.emulator) return std::nullopt;
  const std::vector<EmulatorOpRow> rows = emulator_op_rows(run);
  if (!rows.empty()) {
    double bytes = 0;
    for (const EmulatorOpRow& row : rows) bytes += row.hbm_bytes_per_step;
    return bytes;
  }
  if (run.steps.empty()) return std::nullopt;
  return static_cast<double>(run.emulator->hbm_bytes) / static_cast<double>(run.steps.size());
}

}  // namespace accel::experiment
