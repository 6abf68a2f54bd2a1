// Synthetic experiment results for the report tests and the report benchmark:
// a CPU run and an emulated TPU run of `steps` steps each (compiled steps),
// and a skipped GPU run.
#pragma once

#include <accel/experiment/run_results.hpp>

#include <cmath>
#include <string>

namespace accel::experiment {

inline RunResult training_run(const std::string& name, int64_t steps, bool emulated) {
  RunResult run;
  run.name = name;
  run.device = emulated ? "/TPU:0" : "/CPU:0";
  run.device_type = emulated ? "TPU" : "CPU";
  run.status = RunStatus::kCompleted;
  run.batch_size = 64;
  run.steps_per_epoch = steps;
  run.epochs_planned = 1;
  for (int64_t step = 0; step < steps; ++step) {
    StepRecord record;
    record.step = step;
    record.wall_seconds = 0.010 + 0.001 * std::sin(static_cast<double>(step));
    record.logs = {{"loss", 2.0 / (1.0 + 0.01 * static_cast<double>(step))}, {"accuracy", 0.9 - 0.8 / (1.0 + 0.01 * static_cast<double>(step))}};
    if (step >= 1 && step <= 20) record.device_seconds = emulated ? 0.0003 : 0.009;
    run.steps.push_back(std::move(record));
  }
  run.epochs.push_back({0, steps, 0.010 * static_cast<double>(steps), std::nullopt, {{"loss", 0.5}, {"accuracy", 0.8}}});
  run.evaluation = {{"loss", 0.45}, {"accuracy", 0.83}};
  run.profiled_first_step = 1;
  run.profiled_steps = 20;
  const std::string time_source = emulated ? kSimulated : kMeasuredWall;
  run.ops = {{"Conv2D", "convolution", run.device, time_source, 40, 0.004, 4e9, 2e7, emulated ? 4e6 : 0, emulated ? 0.6 : 0},
             {"AddV2", "elementwise", run.device, time_source, 80, 0.001, 1e6, 1.2e7, emulated ? 1e5 : 0, 0}};
  run.peak = {run.device, emulated ? 1.376e14 : 5e10, emulated ? 1.2e12 : 2.5e10, "test figures"};
  if (emulated) run.emulator = EmulatorTotals{100, 300000, 0.0003 * static_cast<double>(steps), 1.05e9, 1000000, 10, 0.4};
  // Compiled with jit_compile: auto, one trace and the other steps replayed.
  run.compiled_step = CompiledStepResult{.setting = "auto", .jit_compile = true, .eager_reason = "", .traces = 1,
                                         .replays = steps - 1, .eager_calls = 0, .traced_ops = 50, .compiled_ops = 33,
                                         .fusions = 8, .ops_fused = 21, .fusion_bytes_saved = 15093312,
                                         .eager_peak_bytes = 17102508, .planned_peak_bytes = 15712012};
  return run;
}

// `run` as it runs with training.jit_compile: false; on the emulator its ops
// move `hbm_factor` times the bytes.
inline RunResult eager_twin(RunResult run, const std::string& name, double hbm_factor) {
  run.name = name;
  run.compiled_step = CompiledStepResult{.setting = "false", .jit_compile = false};
  for (OpSummary& op : run.ops) op.bytes *= hbm_factor;
  return run;
}

inline ExperimentResults two_runs(int64_t steps) {
  ExperimentResults results;
  results.experiment = "unit";
  results.started_at = "2026-01-01T00:00:00Z";
  results.runs = {training_run("cpu", steps, false), training_run("tpu_v4", steps, true)};
  RunResult gpu;
  gpu.name = "gpu";
  gpu.device = "/GPU:0";
  gpu.status = RunStatus::kSkipped;
  gpu.reason = "no GPU device here";
  results.runs.push_back(gpu);
  return results;
}

}  // namespace accel::experiment
