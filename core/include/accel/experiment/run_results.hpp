// What running an experiment produced, as plain data: per run its steps,
// epochs, evaluation, op summaries of the profiled steps, the backend's
// peaks, the emulator's totals, and what compiling its train step did. results.json is this structure
// (results_json.hpp); every report is generated from it, so `accel report`
// regenerates the same files from results.json alone.
//
// Units are fixed by field name: *_seconds in seconds, *_bytes in bytes,
// flops in floating-point operations, *_per_second per second.
#pragma once

#include <accel/tpu_emulator.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel::experiment {

// Which clock a time came from.
inline constexpr const char* kMeasuredWall = "measured wall";       // host steady clock
inline constexpr const char* kDeviceEvents = "device events";       // CUDA events
inline constexpr const char* kSimulated = "simulated";              // emulator cycles / clock

enum class RunStatus { kCompleted, kSkipped, kFailed, kInterrupted, kNotRun };
const char* run_status_name(RunStatus status);
RunStatus parse_run_status(const std::string& name);

// One optimizer step (one batch) of fit.
struct StepRecord {
  int64_t step = 0;  // 0-based across epochs
  int epoch = 0;     // 0-based
  double wall_seconds = 0;  // measured around train_step on the host
  std::map<std::string, double> logs;  // running epoch means after this batch ("loss", "accuracy")
  // Profiled steps only: the sum of the op durations the run's device reported
  // (simulated for the TPU emulator, CUDA events for a GPU, kernel wall time for the CPU).
  std::optional<double> device_seconds;
  // TPUStrategy: this step's simulated time (the slowest core, all-reduce
  // included) and the part of it spent in the gradient all-reduce.
  std::optional<double> simulated_seconds;
  std::optional<double> all_reduce_seconds;
};

struct EpochRecord {
  int epoch = 0;
  int64_t steps = 0;
  double wall_seconds = 0;
  std::optional<double> simulated_seconds;  // emulator: simulated time of this epoch's training ops
  std::map<std::string, double> logs;       // epoch results, "val_" entries included
};

// One op (by TensorFlow name and device) over the profiled steps.
struct OpSummary {
  std::string op;
  std::string category;
  std::string device;
  std::string time_source;  // kMeasuredWall, kDeviceEvents or kSimulated
  int64_t count = 0;
  double seconds = 0;
  double flops = 0;
  double bytes = 0;             // bytes accessed (HBM bytes on the emulator)
  double busy_cycles = 0;       // emulator: cycles
  double mxu_utilization = 0;   // emulator MXU ops: cycle-weighted mean in [0, 1]
};

// The roof of a backend for the roofline chart. A figure that is neither a
// device property nor measured stays unset and is reported as "unknown".
struct BackendPeak {
  std::string device;
  std::optional<double> peak_flops_per_second;
  std::optional<double> bandwidth_bytes_per_second;
  std::string source;  // "device properties peak_flops, hbm_bandwidth", "measured: ...", "unknown: ..."
};

// The TPU emulator's totals of the run's training: its first core's
// simulated timeline (accel/tpu_emulator.hpp).
using EmulatorTotals = TpuCoreTotals;

// How a run was distributed (its strategy), from the point of view of the
// worker whose results these are (the chief's in a multi-worker run).
struct DistributionResult {
  std::string strategy;            // "MirroredStrategy", "TPUStrategy", ...
  int replicas_in_sync = 1;        // over every worker
  int workers = 1;
  int worker_index = 0;
  std::vector<std::string> replica_devices;  // this worker's, "/CPU:0"
  std::string cross_device_ops;    // "ReductionToOneDevice", "TpuCrossReplicaSum", "CollectiveAllReduce", ...
  // TPUStrategy: the simulated gradient all-reduce of a step (median), its bytes.
  std::optional<double> all_reduce_seconds_per_step;
  std::optional<double> all_reduce_bytes_per_step;
};

// One size of an op benchmark (`benchmark:` runs): the op repeated, timed by
// the device's clock (simulated, CUDA events or kernel wall) and on the host.
struct BenchmarkPoint {
  std::string op;                 // "matmul"
  std::vector<int64_t> size;      // as written: N, or [M, N, K] for matmul
  std::string dtype;
  int64_t repeats = 0;
  double flops = 0;               // per op
  double bytes = 0;               // inputs and outputs per op
  double seconds = 0;             // median per op, by the device's clock
  std::string time_source;        // kMeasuredWall, kDeviceEvents or kSimulated
  double wall_seconds = 0;        // median per op, host wall (synchronized)
};

// How fit's train step ran: compiled (training.jit_compile, Keras's
// model.train_function) or eagerly op by op, and what compiling it did.
// The figures below jit_compile are the compiled function's statistics after
// fit (accel/function.hpp: the latest batch signature traced); they stay 0
// for an eager run.
struct CompiledStepResult {
  std::string setting;       // training.jit_compile as written: "true", "false" or "auto"
  bool jit_compile = false;  // what the model was compiled with (auto resolved)
  // Under a strategy only each replica's forward and backward pass is
  // compiled (the all-reduce and the update run eagerly): the figures are
  // the first replica's pass (model.replica_train_function(0)).
  bool per_replica = false;
  // Compiled but run eagerly: why (the trace's reason, or no compiled step
  // made); "" when the step replayed.
  std::string eager_reason;
  int64_t traces = 0;         // batch signatures traced
  int64_t replays = 0;        // steps that ran the compiled graph
  int64_t eager_calls = 0;    // steps that ran the body eagerly (fallback)
  int64_t traced_ops = 0;     // device ops the trace recorded
  int64_t compiled_ops = 0;   // device ops after the passes (a fusion counts once)
  int64_t fusions = 0;        // fused kernels (elementwise chains and epilogues)
  int64_t ops_fused = 0;      // ops they replaced
  int64_t fusion_bytes_saved = 0;   // intermediates no longer written and read back, per step
  int64_t eager_peak_bytes = 0;     // the step's own tensors at their peak: as eager dispatch holds them
  int64_t planned_peak_bytes = 0;   // and as buffer planning places them
  std::string remat = "none";       // training.remat: which activations the backward pass recomputes
  int64_t ops_recomputed = 0;       // ops it runs again for them
  // On a device that records (CUDA graphs): device ops replayed as recordings,
  // in how many runs, how many replays, and why a run was given up ("" if none).
  int64_t recorded_nodes = 0;
  int64_t recorded_runs = 0;
  int64_t recorded_replays = 0;
  std::string recording_reason;

  // Compiled, and the steps replayed the graph (no eager fallback).
  bool ran_compiled() const { return jit_compile && eager_reason.empty() && replays > 0; }
};

struct RunResult {
  std::string name;
  std::string description;
  std::string device;              // the device asked for, "/CPU:0"
  std::string device_description;  // "TPU v4 (emulated, chip 0 core 0)"
  std::string device_type;         // "CPU", "TPU", "GPU"
  RunStatus status = RunStatus::kNotRun;
  std::string reason;              // skipped / failed / interrupted: why
  std::vector<std::string> notes;  // limitations that applied ("callbacks not applied: ...")

  int64_t batch_size = 0;
  // The global Keras dtype policy the model was built under (training.mixed_precision); "" for op benchmarks.
  std::string dtype_policy;
  int64_t steps_per_epoch = 0;     // as run (the config's, or the dataset's batches)
  int epochs_planned = 0;
  double total_wall_seconds = 0;   // the whole run: data, build, fit, evaluate
  double fit_wall_seconds = 0;
  std::vector<StepRecord> steps;
  std::vector<EpochRecord> epochs;
  std::map<std::string, double> evaluation;  // on the test data: "loss", "accuracy"
  // Text data: the unigram entropy (nats) of the held-out bytes, the loss of
  // a model that knows only byte frequencies; a language model must go below.
  std::optional<double> held_out_unigram_entropy;
  double evaluation_wall_seconds = 0;
  int64_t evaluation_examples = 0;

  // Steps [profiled_first_step, profiled_first_step + profiled_steps) were profiled.
  int64_t profiled_first_step = 0;
  int64_t profiled_steps = 0;
  std::vector<OpSummary> ops;
  BackendPeak peak;
  std::optional<EmulatorTotals> emulator;
  // The TPU emulator's energy over the training, every core of the emulated
  // system summed; nullopt when its preset has no energy figures.
  std::optional<TpuEnergy> emulator_energy;
  std::string tpu_system_json;  // the emulated system, or ""
  std::optional<DistributionResult> distribution;  // runs with a strategy
  std::vector<BenchmarkPoint> benchmark;           // op benchmark runs
  std::optional<CompiledStepResult> compiled_step; // model runs
};

struct ExperimentResults {
  std::string experiment;
  std::string description;
  std::string source_file;
  std::string started_at;  // UTC, ISO 8601
  std::vector<std::string> overrides;
  bool interrupted = false;
  std::vector<RunResult> runs;
};

}  // namespace accel::experiment
