// Runs one run of an experiment in this process: applies its device settings,
// builds its strategy (or places it on its device), loads its data, builds and
// compiles its model, fits it with the Keras progress bar and its callbacks,
// profiles a sample of steps, evaluates on the test data, and returns
// everything measured; a benchmark run times its op instead. The runtime
// takes device settings once per process, so `accel run` calls this in a
// child process per run (`accel run FILE --single-run NAME`).
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/run_results.hpp>
#include <accel/experiment/trace_merge.hpp>

#include <atomic>
#include <cstdint>
#include <vector>

namespace accel::experiment {

struct RunExecutionOptions {
  // Steps profiled op by op, starting after the first (warm-up) step. The
  // profiler costs time per op, so a long run is profiled on a sample only.
  int64_t profiled_steps = 20;
  int verbose = -1;  // keras::kVerboseAuto
  // When set and true, training stops after the current step (Ctrl-C).
  const std::atomic<bool>* interrupt = nullptr;
};

struct RunOutput {
  RunResult result;
  std::vector<TraceSpan> trace;
};

// Never throws for a run's own failure: an error while running becomes
// status failed with the error as the reason. A run with skipped_reason is
// returned as skipped without touching the runtime.
RunOutput execute_run(const RunConfig& run, const RunExecutionOptions& options);

// Builds the run's model as execute_run does (its layers, graph or .keras
// file, on the CPU) and loads model.initial_weights, then drops it: throws
// accel::Error for a file that does not fit the model. accel validate's
// LoadOptions::check_model_files.
void check_model_files(const ModelConfig& model, const std::vector<int64_t>& example_shape);

// False for a multi-worker run in which this process is not the chief: it
// trains with the others, and the chief writes the results (TensorFlow's rule).
bool writes_results(const RunConfig& run);

}  // namespace accel::experiment
