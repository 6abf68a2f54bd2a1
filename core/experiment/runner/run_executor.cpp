// execute_run: one run of an experiment in this process. A model run applies
// the device settings, builds the strategy (if any), the data, the model
// (inside the strategy's scope) and the callbacks, trains with Keras fit
// while a StepRecorder records every step, then evaluates on the test data.
// A benchmark run times its op at each size (op_benchmark.hpp).
#include <accel/experiment/run_executor.hpp>

#include "backend_peak.hpp"
#include "callback_factory.hpp"
#include "compiled_step.hpp"
#include "device_setup.hpp"
#include "emulator_totals.hpp"
#include "mesh_distribution.hpp"
#include "model_factory.hpp"
#include "op_benchmark.hpp"
#include "step_recorder.hpp"
#include "strategy_factory.hpp"
#include "training_data.hpp"

#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/distribute/tpu_strategy.hpp>
#include <accel/experiment/experiment_loader.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/placement.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

namespace accel::experiment {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Why this runner cannot run `run`, or "" when it can.
std::string unsupported_reason(const RunConfig& run) {
  if (run.benchmark) return "";
  if (!run.model || !run.data || !run.training) return "the run has no model, data and training";
  return "";
}

std::string physical_description(const std::string& device_name) {
  const Device device = find_device(device_name);
  for (const config::LogicalDevice& logical : config::list_logical_devices()) {
    if (logical.name != device.name()) continue;
    for (const config::PhysicalDevice& physical : config::list_physical_devices()) {
      if (physical.name == logical.physical_device) return physical.description;
    }
  }
  return "";
}

bool shuffle_enabled(const DataConfig& data) {
  auto found = data.options.find("shuffle");
  if (found == data.options.end() || !found->second.is_set()) return true;
  const Value& value = found->second;
  if (std::holds_alternative<std::string>(value.data)) return value.as_text() != "false";
  if (std::holds_alternative<bool>(value.data)) return value.as_bool();
  return true;
}

int64_t batch_size(const DataConfig& data) {
  auto found = data.options.find("batch");
  return found != data.options.end() && found->second.is_set() ? found->second.as_int() : 32;
}

int emulator_core_of(const std::string& device_name) {
  if (device_name.rfind("/TPU:", 0) != 0) return -1;
  return std::stoi(device_name.substr(5));
}

// The device a run's results are reported for: its strategy's first replica, else its device.
std::string reported_device(const RunConfig& run, const distribute::Strategy* strategy) {
  return strategy != nullptr ? strategy->replica_devices().front().short_name() : run_device_name(run);
}

// TPUStrategy: each step's simulated time and all-reduce, as the strategy measured them.
void record_tpu_steps(const distribute::TPUStrategy& strategy, RunResult& result) {
  const std::vector<distribute::TpuStepTime>& times = strategy.step_times();
  std::vector<double> all_reduce;
  for (size_t step = 0; step < result.steps.size() && step < times.size(); ++step) {
    result.steps[step].simulated_seconds = times[step].total_seconds;
    result.steps[step].all_reduce_seconds = times[step].all_reduce_seconds;
    all_reduce.push_back(times[step].all_reduce_seconds);
  }
  if (all_reduce.empty()) return;
  std::nth_element(all_reduce.begin(), all_reduce.begin() + static_cast<std::ptrdiff_t>(all_reduce.size() / 2),
                   all_reduce.end());
  result.distribution->all_reduce_seconds_per_step = all_reduce[all_reduce.size() / 2];
  result.distribution->all_reduce_bytes_per_step = times.front().all_reduce_bytes;
}

void run_benchmark(const RunConfig& run, const RunExecutionOptions& options, RunOutput& output) {
  RunResult& result = output.result;
  const Clock::time_point start = Clock::now();
  apply_device_settings(run);
  const std::string device = run_device_name(run);
  result.device_description = physical_description(device);
  if (emulator_core_of(device) >= 0) result.tpu_system_json = emulator_system_json();
  result.peak = backend_peak(device);
  result.benchmark = run_op_benchmark(*run.benchmark, device, options.interrupt);
  raise_to_the_runs_best(result.peak, result);
  const bool interrupted = options.interrupt != nullptr && options.interrupt->load() &&
                           result.benchmark.size() < run.benchmark->sizes.size();
  result.status = interrupted ? RunStatus::kInterrupted : RunStatus::kCompleted;
  if (interrupted) result.reason = fmt::format("interrupted (Ctrl-C) after {} sizes", result.benchmark.size());
  result.total_wall_seconds = seconds_since(start);
}

// The run's distribution: a mesh of the run's device type's first devices
// (as many as the mesh has), laid out by auto_distribution, set for the rest
// of this run's process (each run has its own) before compile reads it.
void shard_over_mesh(const DistributionConfig& config, const std::string& device, const std::vector<Variable>& weights,
                     std::vector<std::string>& notes) {
  const int64_t count = mesh_device_count(config.mesh);
  const std::string type = find_device(device).type();
  std::vector<std::string> devices;
  for (const config::LogicalDevice& candidate : config::list_logical_devices(type)) {
    if (static_cast<int64_t>(devices.size()) < count) devices.push_back(candidate.name);
  }
  if (static_cast<int64_t>(devices.size()) < count) {
    throw InvalidArgumentError(fmt::format(
        "distribution.mesh needs {} {} devices, the run has {}: split one into logical devices "
        "(devices: [{{device: {}, logical_devices: [{{}}, ...]}}])",
        count, type, devices.size(), type));
  }
  keras::distribution::set_distribution(mesh_distribution(config.mesh, std::move(devices), weights));
  notes.push_back(fmt::format("sharded over a mesh of {} {} devices ({}): the train step traced, partitioned and run "
                              "on each of them",
                              count, type, mesh_text(config.mesh)));
}

// The data sources give one example tensor and one label tensor per step:
// a model.graph of several inputs or outputs validates, but cannot train here yet.
void train_and_evaluate(const RunConfig& run, const RunExecutionOptions& options, RunOutput& output) {
  RunResult& result = output.result;
  const Clock::time_point run_start = Clock::now();
  apply_device_settings(run);
  const TrainingConfig& training = *run.training;
  keras::clear_session();
  if (training.seed) keras::set_random_seed(static_cast<uint64_t>(*training.seed));

  const std::unique_ptr<distribute::Strategy> strategy = make_strategy(run, result.notes);
  if (strategy) result.distribution = describe_strategy(*strategy);
  const std::string device = reported_device(run, strategy.get());
  result.device = device;
  const std::string full_device = find_device(device).name();
  result.device_description = physical_description(device);
  if (emulator_core_of(device) >= 0) result.tpu_system_json = emulator_system_json();

  std::vector<int64_t> input_shape = model_input_shape(*run.model, run.data->example_shape);
  std::optional<uint64_t> seed;
  if (training.seed) seed = static_cast<uint64_t>(*training.seed);
  TrainingData data = load_training_data(*run.data, model_ends(*run.model, *run.data, input_shape), seed);
  if (input_shape.empty()) {
    const auto& dims = data.train_x.front().shape().dims();
    input_shape.assign(dims.begin() + 1, dims.end());
  }
  result.notes.insert(result.notes.end(), data.notes.begin(), data.notes.end());
  result.held_out_unigram_entropy = data.test_unigram_entropy;

  result.peak = backend_peak(device);
  // Without a strategy the model lives on the run's device; with one, the
  // strategy places every replica (and keeps the data where it was read).
  std::optional<DeviceScope> on_device;
  if (!strategy) on_device.emplace(device);
  std::shared_ptr<keras::Model> model;
  result.dtype_policy = training.mixed_precision;
  {
    std::optional<distribute::StrategyScope> in_scope;
    if (strategy) in_scope.emplace(*strategy);
    // Keras's set_global_policy for this run's layers (and compile's loss scaling) only.
    const keras::mixed_precision::GlobalPolicyScope policy(keras::DTypePolicy(training.mixed_precision));
    model = make_model(*run.model, input_shape);
    if (run.distribution) shard_over_mesh(*run.distribution, device, model->weights(), result.notes);
    // A strategy run passes jit_compile too: the model compiles what it can
    // of a strategy's step by itself, and the results say what that was
    // (compiled_step.hpp).
    model->compile(make_optimizer(training.optimizer), make_loss(training.loss), make_metrics(training.metrics),
                   keras::CompileOptions{.jit_compile = resolve_jit_compile(training.jit_compile, result.device_type),
                                         .remat = training.remat,
                                         .remat_blocks = training.remat_blocks});
  }

  result.batch_size = batch_size(*run.data);
  result.epochs_planned = static_cast<int>(training.epochs);
  const int64_t examples = data.train_x.front().shape()[0];
  const int64_t training_examples =
      static_cast<int64_t>(std::floor(static_cast<double>(examples) * (1.0 - training.validation_split)));
  result.steps_per_epoch = training.steps_per_epoch.value_or((training_examples + result.batch_size - 1) / result.batch_size);

  StepRecorderOptions recorder_options;
  recorder_options.device = full_device;
  recorder_options.first_profiled_step = 1;
  recorder_options.profiled_steps = options.profiled_steps;
  recorder_options.emulator_core = emulator_core_of(device);
  recorder_options.interrupt = options.interrupt;
  auto recorder = std::make_shared<StepRecorder>(recorder_options);

  keras::FitOptions fit;
  fit.epochs = static_cast<int>(training.epochs);
  fit.batch_size = result.batch_size;
  fit.verbose = options.verbose;
  fit.callbacks = {recorder};
  for (keras::CallbackPointer& callback : make_callbacks(training.callbacks)) fit.callbacks.push_back(callback);
  fit.validation_split = training.validation_split;
  fit.shuffle = shuffle_enabled(*run.data);
  fit.seed = seed;
  fit.steps_per_epoch = training.steps_per_epoch;
  auto* tpu_strategy = dynamic_cast<distribute::TPUStrategy*>(strategy.get());
  if (tpu_strategy != nullptr) tpu_strategy->reset_step_times();
  const Clock::time_point fit_start = Clock::now();
  if (data.train_x.size() == 1 && data.train_y.size() == 1) {
    model->fit(data.train_x.front(), data.train_y.front(), fit);
  } else {
    model->fit(data.train_x, data.train_y, fit);
  }
  runtime::synchronize();
  result.fit_wall_seconds = seconds_since(fit_start);
  if (recorder_options.emulator_core >= 0) {
    result.emulator = read_emulator_totals(recorder_options.emulator_core);
    result.emulator_energy = read_emulator_energy();
  }

  result.steps = recorder->steps();
  result.compiled_step = read_compiled_step(*model, training.jit_compile, static_cast<int64_t>(result.steps.size()));
  result.epochs = recorder->epochs();
  result.profiled_first_step = recorder_options.first_profiled_step;
  result.profiled_steps = recorder->profiled_steps_done();
  result.ops = recorder->op_summaries();
  raise_to_the_runs_best(result.peak, result);
  if (tpu_strategy != nullptr) record_tpu_steps(*tpu_strategy, result);
  output.trace = recorder->take_trace();

  if (recorder->interrupted()) {
    result.status = RunStatus::kInterrupted;
    result.reason = fmt::format("interrupted (Ctrl-C) after {} steps", result.steps.size());
  } else {
    if (!data.test_x.empty()) {
      const Clock::time_point evaluate_start = Clock::now();
      keras::EvaluateOptions evaluate;
      evaluate.batch_size = result.batch_size;
      evaluate.verbose = options.verbose;
      evaluate.steps = training.evaluation_steps;
      result.evaluation = data.test_x.size() == 1 && data.test_y.size() == 1
                              ? model->evaluate(data.test_x.front(), data.test_y.front(), evaluate)
                              : model->evaluate(data.test_x, data.test_y, evaluate);
      result.evaluation_wall_seconds = seconds_since(evaluate_start);
      result.evaluation_examples = data.test_x.front().shape()[0];
      if (training.evaluation_steps) {
        result.evaluation_examples = std::min(result.evaluation_examples, *training.evaluation_steps * result.batch_size);
      }
      output.trace.push_back({"host", "evaluate", "evaluate", std::chrono::duration<double>(evaluate_start - fit_start).count(),
                              result.evaluation_wall_seconds, ""});
    }
    result.status = RunStatus::kCompleted;
  }
  result.total_wall_seconds = seconds_since(run_start);
}

}  // namespace

void check_model_files(const ModelConfig& model, const std::vector<int64_t>& example_shape) {
  DeviceScope on_cpu("/CPU:0");
  keras::clear_session();
  (void)make_model(model, model_input_shape(model, example_shape));
  keras::clear_session();
}

bool writes_results(const RunConfig& run) { return runs_as_chief(run); }

RunOutput execute_run(const RunConfig& run, const RunExecutionOptions& options) {
  RunOutput output;
  RunResult& result = output.result;
  result.name = run.name;
  result.description = run.description;
  result.device = run_device_name(run);
  result.device_type = run_device_type(run);
  if (run.skipped_reason) {
    result.status = RunStatus::kSkipped;
    result.reason = *run.skipped_reason;
    return output;
  }
  if (std::string reason = unsupported_reason(run); !reason.empty()) {
    result.status = RunStatus::kSkipped;
    result.reason = reason;
    return output;
  }
  try {
    register_plugins(run.plugins);
    if (run.benchmark) {
      run_benchmark(run, options, output);
    } else {
      train_and_evaluate(run, options, output);
    }
  } catch (const std::exception& error) {
    result.status = RunStatus::kFailed;
    result.reason = error.what();
  }
  return output;
}

}  // namespace accel::experiment
