#include <accel/experiment/headline.hpp>
#include <accel/experiment/results_json.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace accel::experiment {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const char* kStatusNames[] = {"completed", "skipped", "failed", "interrupted", "not_run"};

// The unit of every figure in the file, by key.
ordered_json units_table() {
  return {{"wall_seconds", "s (measured wall clock)"},
          {"device_seconds", "s (sum of the device's op times: simulated, CUDA events or CPU kernel wall)"},
          {"simulated_seconds", "s (emulator: cycles / clock)"},
          {"seconds", "s"},
          {"flops", "floating-point operations"},
          {"bytes", "bytes"},
          {"hbm_bytes", "bytes"},
          {"cycles", "cycles of the emulated clock"},
          {"clock_hz", "Hz"},
          {"mxu_utilization", "fraction of peak MXU MACs in [0, 1]"},
          {"peak_flops_per_second", "FLOP/s"},
          {"bandwidth_bytes_per_second", "bytes/s"},
          {"examples_per_second", "examples/s"},
          {"loss", "the loss's own unit"},
          {"accuracy", "fraction in [0, 1]"},
          {"ratio_to_first", "step time / the first run's step time"},
          {"all_reduce_seconds", "s (simulated: the gradient all-reduce over the emulated interconnect)"},
          {"all_reduce_bytes_per_step", "bytes"},
          {"size", "the op's problem size as written (N, or [M, N, K] for matmul)"},
          {"fusion_bytes_saved", "bytes per training step"},
          {"eager_peak_bytes", "bytes"},
          {"planned_peak_bytes", "bytes"},
          {"held_out_unigram_entropy", "nats per byte (text data: a byte-frequency model's loss on the held-out bytes)"},
          {"hbm_traffic_per_step", "bytes per training step (emulator)"},
          {"energy_per_step", "J per training step (emulator: every core of the emulated system)"},
          {"total_j", "J (emulator: dynamic energy from the preset's energy figures)"},
          {"mac_j", "J"},
          {"sram_j", "J"},
          {"hbm_j", "J"},
          {"link_j", "J (null: link bytes moved without a figure)"},
          {"vector_j", "J (null: vector work ran without a figure)"}};
}

// JSON has no NaN or infinity, and nlohmann writes them as null, which then
// fails to read back as a number. A run whose loss diverged still has a report:
// non-finite numbers are written as the strings below (JavaScript's and
// Python's names) and read back as numbers; the document says it holds some.
constexpr const char* kNotANumber = "NaN";
constexpr const char* kInfinity = "Infinity";
constexpr const char* kNegativeInfinity = "-Infinity";

// Replaces every non-finite number under `value`; returns how many.
template <typename Json>
int64_t encode_non_finite(Json& value) {
  int64_t replaced = 0;
  if (value.is_number_float()) {
    const double number = value.template get<double>();
    if (!std::isfinite(number)) {
      value = std::isnan(number) ? kNotANumber : number > 0 ? kInfinity : kNegativeInfinity;
      ++replaced;
    }
  } else if (value.is_structured()) {
    for (auto& element : value) replaced += encode_non_finite(element);
  }
  return replaced;
}

// A number written by this file: a JSON number, one of the strings above, or
// null (files written before non-finite numbers were encoded) read as NaN.
double number_from(const json& value, const char* key) {
  if (value.is_number()) return value.get<double>();
  if (value.is_null()) return std::nan("");
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == kNotANumber) return std::nan("");
    if (text == kInfinity) return HUGE_VAL;
    if (text == kNegativeInfinity) return -HUGE_VAL;
  }
  throw std::runtime_error(std::string("\"") + key + "\" is " + value.dump() + ", not a number");
}
double number(const json& object, const char* key) {  // 0 when absent, as the reader's other defaults
  const auto found = object.find(key);
  return found == object.end() ? 0.0 : number_from(*found, key);
}
std::optional<double> optional_number(const json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return std::nullopt;
  return number_from(*found, key);
}
std::map<std::string, double> number_map(const json& object, const char* key) {
  std::map<std::string, double> values;
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return values;
  if (!found->is_object()) throw std::runtime_error(std::string("\"") + key + "\" is not an object of numbers");
  for (const auto& [name, value] : found->items()) values[name] = number_from(value, name.c_str());
  return values;
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

ordered_json figure(const std::optional<double>& value, const char* unit, const std::string& source) {
  ordered_json result = {{"value", optional_json(value)}, {"unit", unit}};
  if (!source.empty()) result["clock"] = source;
  return result;
}

ordered_json headline_json(const HeadlineRow& row) {
  return {{"time_source", row.time_source},
          {"step_time", figure(row.step_seconds, "s", row.time_source)},
          {"epoch_time", figure(row.epoch_seconds, "s", row.time_source)},
          {"throughput", figure(row.examples_per_second, "examples/s", row.time_source)},
          {"measured_step_time", figure(row.measured_step_seconds, "s", kMeasuredWall)},
          {"final_accuracy", figure(row.final_accuracy, "fraction", row.accuracy_source)},
          {"final_loss", figure(row.final_loss, "loss", "")},
          {"ratio_to_first", figure(row.ratio_to_first, "x", row.time_source)},
          {"hbm_traffic_per_step", figure(row.hbm_bytes_per_step, "bytes", row.hbm_bytes_per_step ? kSimulated : "")},
          {"energy_per_step", figure(row.energy_joules_per_step, "J", row.energy_joules_per_step ? kSimulated : "")}};
}

// The emulator's energy over the training; a part that ran without a figure is null.
ordered_json energy_json(const TpuEnergy& energy) {
  return {{"scope", "every core of the emulated system, over the training"},
          {"total_j", energy.total_j},
          {"mac_j", energy.mac_j},
          {"sram_j", energy.sram_j},
          {"hbm_j", energy.hbm_j},
          {"link_j", energy.link_missing ? ordered_json(nullptr) : ordered_json(energy.link_j)},
          {"vector_j", energy.vector_missing ? ordered_json(nullptr) : ordered_json(energy.vector_j)},
          {"static_j", energy.static_missing ? ordered_json(nullptr) : ordered_json(energy.static_j)}};
}

std::optional<TpuEnergy> energy_from_json(const json& entry) {
  if (!entry.is_object()) return std::nullopt;
  TpuEnergy energy;
  energy.total_j = number(entry, "total_j");
  energy.mac_j = number(entry, "mac_j");
  energy.sram_j = number(entry, "sram_j");
  energy.hbm_j = number(entry, "hbm_j");
  energy.link_missing = entry.contains("link_j") && entry["link_j"].is_null();
  energy.vector_missing = entry.contains("vector_j") && entry["vector_j"].is_null();
  if (!energy.link_missing) energy.link_j = number(entry, "link_j");
  if (!energy.vector_missing) energy.vector_j = number(entry, "vector_j");
  // Files from before the static part have no key: missing, as the value was not counted.
  energy.static_missing = !entry.contains("static_j") || entry["static_j"].is_null();
  if (!energy.static_missing) energy.static_j = number(entry, "static_j");
  return energy;
}

ordered_json compiled_step_json(const CompiledStepResult& step) {
  return {{"setting", step.setting},
          {"jit_compile", step.jit_compile},
          {"per_replica", step.per_replica},
          {"eager_reason", step.eager_reason},
          {"traces", step.traces},
          {"replays", step.replays},
          {"eager_calls", step.eager_calls},
          {"traced_ops", step.traced_ops},
          {"compiled_ops", step.compiled_ops},
          {"fusions", step.fusions},
          {"ops_fused", step.ops_fused},
          {"fusion_bytes_saved", step.fusion_bytes_saved},
          {"eager_peak_bytes", step.eager_peak_bytes},
          {"planned_peak_bytes", step.planned_peak_bytes},
          {"remat", step.remat},
          {"ops_recomputed", step.ops_recomputed},
          {"recorded_nodes", step.recorded_nodes},
          {"recorded_runs", step.recorded_runs},
          {"recorded_replays", step.recorded_replays},
          {"recording_reason", step.recording_reason}};
}

CompiledStepResult compiled_step_from_json(const json& entry) {
  CompiledStepResult step;
  step.setting = entry.value("setting", "");
  step.jit_compile = entry.value("jit_compile", false);
  step.per_replica = entry.value("per_replica", false);
  step.eager_reason = entry.value("eager_reason", "");
  step.traces = entry.value("traces", int64_t{0});
  step.replays = entry.value("replays", int64_t{0});
  step.eager_calls = entry.value("eager_calls", int64_t{0});
  step.traced_ops = entry.value("traced_ops", int64_t{0});
  step.compiled_ops = entry.value("compiled_ops", int64_t{0});
  step.fusions = entry.value("fusions", int64_t{0});
  step.ops_fused = entry.value("ops_fused", int64_t{0});
  step.fusion_bytes_saved = entry.value("fusion_bytes_saved", int64_t{0});
  step.eager_peak_bytes = entry.value("eager_peak_bytes", int64_t{0});
  step.planned_peak_bytes = entry.value("planned_peak_bytes", int64_t{0});
  step.remat = entry.value("remat", "none");
  step.ops_recomputed = entry.value("ops_recomputed", int64_t{0});
  step.recorded_nodes = entry.value("recorded_nodes", int64_t{0});
  step.recorded_runs = entry.value("recorded_runs", int64_t{0});
  step.recorded_replays = entry.value("recorded_replays", int64_t{0});
  step.recording_reason = entry.value("recording_reason", "");
  return step;
}

ordered_json run_json(const RunResult& run) {
  ordered_json steps = ordered_json::array();
  for (const StepRecord& step : run.steps) {
    ordered_json entry = {{"step", step.step}, {"epoch", step.epoch}, {"wall_seconds", step.wall_seconds},
                          {"logs", step.logs}};
    if (step.device_seconds) entry["device_seconds"] = *step.device_seconds;
    if (step.simulated_seconds) entry["simulated_seconds"] = *step.simulated_seconds;
    if (step.all_reduce_seconds) entry["all_reduce_seconds"] = *step.all_reduce_seconds;
    steps.push_back(std::move(entry));
  }
  ordered_json epochs = ordered_json::array();
  for (const EpochRecord& epoch : run.epochs) {
    ordered_json entry = {{"epoch", epoch.epoch}, {"steps", epoch.steps}, {"wall_seconds", epoch.wall_seconds},
                          {"logs", epoch.logs}};
    if (epoch.simulated_seconds) entry["simulated_seconds"] = *epoch.simulated_seconds;
    epochs.push_back(std::move(entry));
  }
  ordered_json ops = ordered_json::array();
  for (const OpSummary& op : run.ops) {
    ops.push_back({{"op", op.op}, {"category", op.category}, {"device", op.device}, {"time_source", op.time_source},
                   {"count", op.count}, {"seconds", op.seconds}, {"flops", op.flops}, {"bytes", op.bytes},
                   {"cycles", op.busy_cycles}, {"mxu_utilization", op.mxu_utilization}});
  }
  ordered_json result = {
      {"name", run.name},
      {"description", run.description},
      {"device", run.device},
      {"device_description", run.device_description},
      {"device_type", run.device_type},
      {"status", run_status_name(run.status)},
      {"reason", run.reason},
      {"notes", run.notes},
      {"batch_size", run.batch_size},
      {"dtype_policy", run.dtype_policy},
      {"steps_per_epoch", run.steps_per_epoch},
      {"epochs_planned", run.epochs_planned},
      {"total_wall_seconds", run.total_wall_seconds},
      {"fit_wall_seconds", run.fit_wall_seconds},
      {"evaluation", run.evaluation},
      {"evaluation_wall_seconds", run.evaluation_wall_seconds},
      {"evaluation_examples", run.evaluation_examples},
      {"held_out_unigram_entropy", optional_json(run.held_out_unigram_entropy)},
      {"profiled_first_step", run.profiled_first_step},
      {"profiled_steps", run.profiled_steps},
      {"peak",
       {{"device", run.peak.device},
        {"peak_flops_per_second", optional_json(run.peak.peak_flops_per_second)},
        {"bandwidth_bytes_per_second", optional_json(run.peak.bandwidth_bytes_per_second)},
        {"source", run.peak.source}}},
      {"emulator", nullptr},
      {"tpu_system", nullptr},
      {"distribution", nullptr},
      {"compiled_step", run.compiled_step ? compiled_step_json(*run.compiled_step) : ordered_json(nullptr)},
      {"benchmark", ordered_json::array()},
      {"epochs", std::move(epochs)},
      {"ops", std::move(ops)},
      {"steps", std::move(steps)}};
  if (run.emulator) {
    const EmulatorTotals& totals = *run.emulator;
    result["emulator"] = {{"ops", totals.ops},
                          {"cycles", totals.cycles},
                          {"simulated_seconds", totals.seconds},
                          {"clock_hz", totals.clock_hz},
                          {"hbm_bytes", totals.hbm_bytes},
                          {"stall_cycles", totals.stall_cycles},
                          {"mxu_utilization", totals.mxu_utilization},
                          {"collective_cycles", totals.collective_cycles},
                          {"idle_cycles", totals.idle_cycles},
                          {"energy", run.emulator_energy ? energy_json(*run.emulator_energy) : ordered_json(nullptr)}};
  }
  if (!run.tpu_system_json.empty()) {
    result["tpu_system"] = ordered_json::parse(run.tpu_system_json, nullptr, false);
    if (result["tpu_system"].is_discarded()) result["tpu_system"] = run.tpu_system_json;
  }
  if (run.distribution) {
    const DistributionResult& distribution = *run.distribution;
    result["distribution"] = {{"strategy", distribution.strategy},
                              {"replicas_in_sync", distribution.replicas_in_sync},
                              {"workers", distribution.workers},
                              {"worker_index", distribution.worker_index},
                              {"replica_devices", distribution.replica_devices},
                              {"cross_device_ops", distribution.cross_device_ops},
                              {"all_reduce_seconds_per_step", optional_json(distribution.all_reduce_seconds_per_step)},
                              {"all_reduce_bytes_per_step", optional_json(distribution.all_reduce_bytes_per_step)}};
  }
  for (const BenchmarkPoint& point : run.benchmark) {
    result["benchmark"].push_back({{"op", point.op}, {"size", point.size}, {"dtype", point.dtype},
                                   {"repeats", point.repeats}, {"flops", point.flops}, {"bytes", point.bytes},
                                   {"seconds", point.seconds}, {"time_source", point.time_source},
                                   {"wall_seconds", point.wall_seconds}});
  }
  return result;
}

RunResult run_from_json(const json& entry) {
  RunResult run;
  run.name = entry.at("name").get<std::string>();
  run.description = entry.value("description", "");
  run.device = entry.value("device", "");
  run.device_description = entry.value("device_description", "");
  run.device_type = entry.value("device_type", "");
  run.status = parse_run_status(entry.value("status", "not_run"));
  run.reason = entry.value("reason", "");
  run.notes = entry.value("notes", std::vector<std::string>{});
  run.batch_size = entry.value("batch_size", int64_t{0});
  run.dtype_policy = entry.value("dtype_policy", std::string());
  run.steps_per_epoch = entry.value("steps_per_epoch", int64_t{0});
  run.epochs_planned = entry.value("epochs_planned", 0);
  run.total_wall_seconds = number(entry, "total_wall_seconds");
  run.fit_wall_seconds = number(entry, "fit_wall_seconds");
  run.evaluation = number_map(entry, "evaluation");
  run.evaluation_wall_seconds = number(entry, "evaluation_wall_seconds");
  run.evaluation_examples = entry.value("evaluation_examples", int64_t{0});
  run.held_out_unigram_entropy = optional_number(entry, "held_out_unigram_entropy");
  run.profiled_first_step = entry.value("profiled_first_step", int64_t{0});
  run.profiled_steps = entry.value("profiled_steps", int64_t{0});
  if (entry.contains("peak")) {
    const json& peak = entry["peak"];
    run.peak.device = peak.value("device", "");
    run.peak.peak_flops_per_second = optional_number(peak, "peak_flops_per_second");
    run.peak.bandwidth_bytes_per_second = optional_number(peak, "bandwidth_bytes_per_second");
    run.peak.source = peak.value("source", "");
  }
  if (entry.contains("emulator") && entry["emulator"].is_object()) {
    const json& totals = entry["emulator"];
    run.emulator = EmulatorTotals{totals.value("ops", int64_t{0}),           totals.value("cycles", int64_t{0}),
                                  number(totals, "simulated_seconds"),       number(totals, "clock_hz"),
                                  totals.value("hbm_bytes", int64_t{0}),     totals.value("stall_cycles", int64_t{0}),
                                  number(totals, "mxu_utilization"),      totals.value("collective_cycles", int64_t{0}),
                                  totals.value("idle_cycles", int64_t{0})};
    if (totals.contains("energy")) run.emulator_energy = energy_from_json(totals["energy"]);
  }
  if (entry.contains("distribution") && entry["distribution"].is_object()) {
    const json& distribution = entry["distribution"];
    DistributionResult& result = run.distribution.emplace();
    result.strategy = distribution.value("strategy", "");
    result.replicas_in_sync = distribution.value("replicas_in_sync", 1);
    result.workers = distribution.value("workers", 1);
    result.worker_index = distribution.value("worker_index", 0);
    result.replica_devices = distribution.value("replica_devices", std::vector<std::string>{});
    result.cross_device_ops = distribution.value("cross_device_ops", "");
    result.all_reduce_seconds_per_step = optional_number(distribution, "all_reduce_seconds_per_step");
    result.all_reduce_bytes_per_step = optional_number(distribution, "all_reduce_bytes_per_step");
  }
  if (entry.contains("compiled_step") && entry["compiled_step"].is_object()) {
    run.compiled_step = compiled_step_from_json(entry["compiled_step"]);
  }
  for (const json& point : entry.value("benchmark", json::array())) {
    BenchmarkPoint& result = run.benchmark.emplace_back();
    result.op = point.value("op", "");
    result.size = point.value("size", std::vector<int64_t>{});
    result.dtype = point.value("dtype", "");
    result.repeats = point.value("repeats", int64_t{0});
    result.flops = number(point, "flops");
    result.bytes = number(point, "bytes");
    result.seconds = number(point, "seconds");
    result.time_source = point.value("time_source", "");
    result.wall_seconds = number(point, "wall_seconds");
  }
  if (entry.contains("tpu_system") && !entry["tpu_system"].is_null()) {
    run.tpu_system_json = entry["tpu_system"].is_string() ? entry["tpu_system"].get<std::string>() : entry["tpu_system"].dump();
  }
  for (const json& epoch : entry.value("epochs", json::array())) {
    EpochRecord record;
    record.epoch = epoch.value("epoch", 0);
    record.steps = epoch.value("steps", int64_t{0});
    record.wall_seconds = number(epoch, "wall_seconds");
    record.logs = number_map(epoch, "logs");
    record.simulated_seconds = optional_number(epoch, "simulated_seconds");
    run.epochs.push_back(std::move(record));
  }
  for (const json& op : entry.value("ops", json::array())) {
    OpSummary summary;
    summary.op = op.value("op", "");
    summary.category = op.value("category", "");
    summary.device = op.value("device", "");
    summary.time_source = op.value("time_source", "");
    summary.count = op.value("count", int64_t{0});
    summary.seconds = number(op, "seconds");
    summary.flops = number(op, "flops");
    summary.bytes = number(op, "bytes");
    summary.busy_cycles = number(op, "cycles");
    summary.mxu_utilization = number(op, "mxu_utilization");
    run.ops.push_back(std::move(summary));
  }
  const json& steps = entry.contains("steps") ? entry["steps"] : json::array();
  run.steps.reserve(steps.size());
  for (const json& step : steps) {
    StepRecord record;
    record.step = step.value("step", int64_t{0});
    record.epoch = step.value("epoch", 0);
    record.wall_seconds = number(step, "wall_seconds");
    record.logs = number_map(step, "logs");
    record.device_seconds = optional_number(step, "device_seconds");
    record.simulated_seconds = optional_number(step, "simulated_seconds");
    record.all_reduce_seconds = optional_number(step, "all_reduce_seconds");
    run.steps.push_back(std::move(record));
  }
  return run;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read (is this a results directory of `accel run`?)");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

const char* run_status_name(RunStatus status) { return kStatusNames[static_cast<int>(status)]; }

RunStatus parse_run_status(const std::string& name) {
  for (int index = 0; index < 5; ++index) {
    if (name == kStatusNames[index]) return static_cast<RunStatus>(index);
  }
  return RunStatus::kNotRun;
}

std::string results_to_json_text(const ExperimentResults& results) {
  const std::vector<HeadlineRow> headline = headline_rows(results);
  ordered_json runs = ordered_json::array();
  for (size_t index = 0; index < results.runs.size(); ++index) {
    ordered_json run = run_json(results.runs[index]);
    // The headline first, where a reader looks.
    ordered_json with_headline = {{"name", run["name"]}, {"status", run["status"]}, {"reason", run["reason"]},
                                  {"headline", headline_json(headline[index])}};
    for (auto& [key, value] : run.items()) {
      if (!with_headline.contains(key)) with_headline[key] = value;
    }
    runs.push_back(std::move(with_headline));
  }
  ordered_json document = {{"format", "accel-experiment-results"},
                           {"version", kResultsFormatVersion},
                           {"experiment", results.experiment},
                           {"description", results.description},
                           {"source_file", results.source_file},
                           {"started_at", results.started_at},
                           {"overrides", results.overrides},
                           {"interrupted", results.interrupted},
                           {"units", units_table()},
                           {"non_finite_numbers", false},
                           {"runs", std::move(runs)}};
  document["non_finite_numbers"] = encode_non_finite(document["runs"]) > 0;
  return document.dump(1) + "\n";
}

ExperimentResults results_from_json_text(const std::string& text) {
  const json document = json::parse(text);
  if (document.value("format", "") != "accel-experiment-results") {
    throw std::runtime_error("not an accel results file (\"format\" is not accel-experiment-results)");
  }
  ExperimentResults results;
  results.experiment = document.value("experiment", "");
  results.description = document.value("description", "");
  results.source_file = document.value("source_file", "");
  results.started_at = document.value("started_at", "");
  results.overrides = document.value("overrides", std::vector<std::string>{});
  results.interrupted = document.value("interrupted", false);
  for (const json& run : document.value("runs", json::array())) results.runs.push_back(run_from_json(run));
  return results;
}

std::string run_result_to_json_text(const RunResult& run) {
  ordered_json document = run_json(run);
  encode_non_finite(document);
  return document.dump() + "\n";
}
RunResult run_result_from_json_text(const std::string& text) {
  try {
    return run_from_json(json::parse(text));
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(std::string("malformed run result: ") + error.what());
  }
}

void write_results_json(const ExperimentResults& results, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out << results_to_json_text(results);
  if (!out) throw std::runtime_error(path + ": cannot be written");
}

ExperimentResults read_results_json(const std::string& path) {
  try {
    return results_from_json_text(read_file(path));
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(path + ": malformed results file: " + error.what());
  }
}

}  // namespace accel::experiment
