#include "tpu_model_estimate.hpp"

#ifdef HAVE_ACCEL_EXPERIMENT
#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/experiment/source_node.hpp>
#include <accel/input_file.hpp>
#include <accel/experiment/experiment_error.hpp>
#include <accel/experiment/experiment_loader.hpp>
#include <accel/experiment/tpu_pod_estimate.hpp>
#include <accel/experiment/tpu_step_estimate.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "keras_file_inspection.hpp"

// The timing library checks the preset and times slices as one replica.
#if defined(HAVE_ACCEL_TPU_TIMING) && defined(HAVE_ACCEL_DISTRIBUTE)
#define ACCEL_TPU_TIMING_IN_ESTIMATE 1
#include <accel/distribute/tpu_cluster_resolver.hpp>

#include "timing/interconnect_model.hpp"
#include "timing/presets.hpp"
#endif

namespace accel::cli {
namespace {

std::string read_text(const std::string& path) {
  try {
    return read_input_file(path, "--model", experiment::SourceLimits{}.max_bytes);
  } catch (const NotFoundError&) {
    throw NotFoundError(path + ": no such file (expected an experiment YAML file or one with name: and model:)");
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// One example's shape, from the model section alone (a file without data):
// the graph's input, the first layer's input_shape, or the .keras file's input.
std::vector<int64_t> model_example_shape(const YAML::Node& model, const experiment::LoadOptions& options,
                                         const std::string& file) {
  if (const YAML::Node graph = model["graph"]) {
    for (const auto& input : graph["inputs"]) return input.second["shape"].as<std::vector<int64_t>>();
  }
  if (const YAML::Node layers = model["layers"]; layers && layers.IsSequence() && layers.size() > 0) {
    const YAML::Node first = layers[0];
    if (first.IsMap()) {
      for (const auto& layer : first) {
        if (layer.second.IsMap() && layer.second["input_shape"]) return layer.second["input_shape"].as<std::vector<int64_t>>();
      }
    }
  }
  if (const YAML::Node keras_file = model["keras_file"]) {
    std::string path = keras_file.as<std::string>();
    if (!path.empty() && path[0] != '/') {
      const size_t slash = file.rfind('/');
      if (slash != std::string::npos) path = file.substr(0, slash + 1) + path;
    }
    return options.inspect_keras_file(path);
  }
  throw InvalidArgumentError(file +
                             ": a file without 'data' needs the model's input shape: model.graph inputs, input_shape "
                             "on the first of model.layers, or model.keras_file");
}

// The file's text, with what a model-only file leaves out: synthetic data of
// the model's input shape (one-hot labels, so that a mean squared error
// compares them with a [batch, classes] output) and an SGD step on a mean
// squared error; and a TPUStrategy on `slice` ("v4-8") when asked.
std::string completed_experiment(const std::string& file, const std::string& slice,
                                 const experiment::LoadOptions& options) {
  std::string text = read_text(file);
  const YAML::Node root = YAML::Load(text);
  if (!root.IsMap() || !root["model"]) return text;  // the loader names what is wrong
  if (!root["data"]) {
    text += fmt::format("\ndata: {{source: synthetic, shape: {}, classes: 10, one_hot: true, samples: 32, batch: 32}}\n",
                        shape_text(model_example_shape(root["model"], options, file)));
  }
  if (!root["training"]) text += "\ntraining: {optimizer: sgd, loss: mean_squared_error}\n";
  if (!slice.empty()) {
    if (root["strategy"]) throw InvalidArgumentError(file + ": --slice and the file's own strategy: keep one");
    text += "\nstrategy: {tpu: {tpu: 'sim://" + slice + "'}}\n";
  }
  return text;
}

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

#ifdef ACCEL_TPU_TIMING_IN_ESTIMATE
// The gradient all-reduce overlapped with the backward pass, as XLA's
// asynchronous all-reduces run: whenever the links are free, one all-reduce
// starts on every gradient ready by then (those that became ready while the
// previous one ran are combined into it). Returns the links' busy time; the
// part after the backward pass ends is what the step waits for.
struct OverlappedAllReduce {
  double busy_seconds = 0;
  double exposed_seconds = 0;
};

OverlappedAllReduce overlap_all_reduce(const tpu::Hardware& hw, std::vector<experiment::TpuGradientReady> gradients,
                                       double backward_end) {
  std::stable_sort(gradients.begin(), gradients.end(),
                   [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  OverlappedAllReduce result;
  double links_free = 0;
  for (std::size_t next = 0; next < gradients.size();) {
    const double start = std::max(links_free, gradients[next].seconds);
    double bytes = 0;
    while (next < gradients.size() && gradients[next].seconds <= start) bytes += gradients[next++].bytes;
    const double seconds = tpu::estimate_all_reduce(hw, bytes).seconds;
    result.busy_seconds += seconds;
    links_free = start + seconds;
  }
  result.exposed_seconds = std::max(0.0, links_free - backward_end);
  return result;
}

// The emulated slice a --slice names, as one replica's device sees it: the
// preset with the slice's chips on Cloud TPU's shape (tpu::slice_dims), the
// --set overrides, and megacore's view of a chip where asked.
tpu::Hardware slice_hardware(const TpuModelEstimateRequest& request, const distribute::TpuSliceDescription& slice) {
  tpu::SystemSelection selection{.preset_or_file = slice.preset};
  for (const std::string& field : request.overrides) selection.overrides.push_back(tpu::parse_field_override(field));
  tpu::Hardware hw = tpu::load_system(selection);
  hw.chips = slice.chips;
  hw.interconnect.dims = tpu::slice_dims(hw, slice.chips);
  return request.megacore ? tpu::megacore_view(hw) : hw;
}
#endif

void print_table(const experiment::TpuStepEstimate& estimate, std::ostream& out) {
  const nlohmann::json system = nlohmann::json::parse(estimate.system_json, nullptr, false);
  const std::string preset = system.is_object() ? system.value("preset", std::string("?")) : std::string("?");
  out << fmt::format("{} on {} ({}), batch {}, one compiled {} step\n", estimate.model, preset,
                     estimate.one_replica_timed
                         ? fmt::format("TPUStrategy, {} replicas: one timed, the slice's all-reduce added", estimate.replicas)
                     : estimate.replicas > 1 ? fmt::format("TPUStrategy, {} replicas; ops of TPU:0", estimate.replicas)
                                             : std::string("TPU:0"),
                     estimate.batch, estimate.training ? "training" : "inference");
  out << fmt::format("step time   {:.6g} ms simulated ({} cycles, {} op calls); estimated in {:.3f} s\n",
                     estimate.step_seconds * 1e3, estimate.cycles, estimate.ops, estimate.wall_seconds);
  const double cycles = static_cast<double>(estimate.cycles);
  out << fmt::format("time by     MXU {:.1f}%, vector unit {:.1f}%, HBM stalls {:.1f}% of the core's cycles{}\n",
                     percent(static_cast<double>(estimate.mxu_cycles), cycles),
                     percent(static_cast<double>(estimate.vector_cycles), cycles),
                     percent(static_cast<double>(estimate.stall_cycles), cycles),
                     estimate.replicas > 1
                         ? fmt::format("; collectives {:.1f}% of the step",
                                       percent(estimate.one_replica_timed ? estimate.all_reduce_exposed_seconds
                                                                          : estimate.all_reduce_seconds,
                                               estimate.step_seconds))
                         : std::string());
  if (estimate.one_replica_timed && estimate.training) {
    out << fmt::format("all-reduce  {:.6g} ms on the links, {:.4g} MB of gradients overlapped with the backward pass; "
                       "{:.6g} ms of it exposed\n",
                       estimate.all_reduce_seconds * 1e3, estimate.all_reduce_bytes / 1e6,
                       estimate.all_reduce_exposed_seconds * 1e3);
  } else if (estimate.replicas > 1) {
    out << fmt::format("all-reduce  {:.6g} ms of it, {:.4g} MB of gradients over the interconnect\n",
                       estimate.all_reduce_seconds * 1e3, estimate.all_reduce_bytes / 1e6);
  }
  out << fmt::format("compute     {:.4g} GFLOP, {:.4g} TFLOP/s of {:.4g} peak; MXU utilization {:.1f}%\n",
                     estimate.flops / 1e9, estimate.achieved_flops / 1e12, estimate.peak_flops / 1e12,
                     100.0 * estimate.mxu_utilization);
  out << fmt::format("HBM         {:.4g} MB, {:.1f}% of cycles stalled on it\n", estimate.hbm_bytes / 1e6,
                     percent(static_cast<double>(estimate.stall_cycles), static_cast<double>(estimate.cycles)));
  if (estimate.energy) {
    const TpuEnergy& energy = *estimate.energy;
    out << fmt::format("energy      {:.4g} J per step, every core (MAC {:.3g}, SRAM {:.3g}, HBM {:.3g}, vector {:.3g}{}{})\n",
                       energy.total_j, energy.mac_j, energy.sram_j, energy.hbm_j, energy.vector_j,
                       energy.link_missing ? "; links not counted: the preset has no figure" : fmt::format(", links {:.3g}", energy.link_j),
                       energy.static_missing ? "; no static power: the preset publishes no idle power"
                                             : fmt::format(", static {:.3g}", energy.static_j));
    out << fmt::format("power       {:.4g} W per chip on average over the step\n", estimate.average_power_w);
  } else {
    out << "energy      n/a (the preset has no per-operation energies)\n";
  }
  out << fmt::format("roofline    {:.4g} FLOP/byte -> {:.4g} TFLOP/s attainable ({} bound)\n",
                     estimate.arithmetic_intensity, estimate.roofline_flops / 1e12,
                     estimate.roofline_flops < estimate.peak_flops ? "memory" : "compute");
  out << fmt::format("\n{:<48} {:>6} {:>11} {:>7} {:>9} {:>9} {:>9} {:>8}\n", "op / fusion", "calls", "time ms",
                     "share", "GFLOP", "HBM MB", "stalls", "bound");
  for (const experiment::TpuOpCost& cost : estimate.by_op) {
    out << fmt::format("{:<48} {:>6} {:>11.5g} {:>6.1f}% {:>9.4g} {:>9.4g} {:>8.1f}% {:>8}\n", cost.op.substr(0, 48),
                       cost.count, cost.seconds * 1e3, percent(cost.seconds, estimate.step_seconds), cost.flops / 1e9,
                       cost.hbm_bytes / 1e6, percent(static_cast<double>(cost.stall_cycles), static_cast<double>(cost.cycles)),
                       cost.compute_bound_share >= 0.5 ? "compute" : "memory");
  }
}

std::string asynchronous_kinds(const std::set<std::string>& kinds) {
  if (kinds.empty()) return "synchronous";
  if (kinds == experiment::collective_kinds()) return "asynchronous";
  std::string names;
  for (const std::string& kind : kinds) names += (names.empty() ? "" : ", ") + kind;
  return "asynchronous: " + names;
}

void print_pod_table(const experiment::TpuPodEstimate& estimate, std::ostream& out) {
  const nlohmann::json system = nlohmann::json::parse(estimate.system_json, nullptr, false);
  const std::string preset = system.is_object() ? system.value("preset", std::string("?")) : std::string("?");
  const double step = estimate.step_seconds;
  out << fmt::format("{} on {}{} x {} chips, mesh {}, batch {} ({} per chip), remat {}, collectives {}{}; one training step\n",
                     estimate.model, estimate.slices > 1 ? fmt::format("{} slices of ", estimate.slices) : std::string(),
                     preset, estimate.chips, estimate.mesh, estimate.batch, estimate.batch_per_chip,
                     estimate.remat, asynchronous_kinds(estimate.async_collectives),
                     estimate.scan_layers ? ", blocks scanned" : "");
  out << fmt::format("step time   {:.6g} s simulated (one chip's program: {} ops, {} recomputed); estimated in {:.3f} s\n",
                     step, estimate.compiled_ops, estimate.ops_recomputed, estimate.wall_seconds);
  out << fmt::format("time by     MXU {:.1f}%, vector unit {:.1f}%, HBM stalls {:.1f}%, reductions' sums {:.1f}%, exposed "
                     "collectives {:.1f}% of the step\n",
                     100.0 * estimate.shares.mxu, 100.0 * estimate.shares.vector, 100.0 * estimate.shares.hbm_stalls,
                     100.0 * estimate.shares.reduction_sums, 100.0 * estimate.shares.exposed_collectives);
  out << fmt::format("collectives {:.6g} s on the links, {:.6g} s of it exposed\n", estimate.schedule.link_busy_seconds,
                     estimate.schedule.exposed_collective_seconds);
  for (const experiment::TpuCollectiveCost& cost : estimate.collectives) {
    out << fmt::format("            {} over {}: {} of them, {:.4g} GB, {:.6g} s{}\n", cost.kind, cost.axes, cost.count,
                       cost.bytes / 1e9, cost.seconds,
                       cost.chip_seconds > 0 ? fmt::format(" (and {:.4g} s of sums on the chip)", cost.chip_seconds) : "");
  }
  if (estimate.formula) {
    const experiment::ModelFlopsFormula& f = *estimate.formula;
    out << fmt::format("model       {:.4g} TFLOP/s per chip, MFU {:.1f}% of {:.4g} (6 N S B + 12 H L hd S^2 B: N {:.4g}, S {}, "
                       "B {}, H {}, L {}, hd {})\n",
                       estimate.model_flops_per_chip_per_second / 1e12, 100.0 * estimate.mfu,
                       estimate.peak_flops_per_chip / 1e12, f.parameters, f.sequence, f.batch, f.heads, f.layers, f.head_dim);
  } else {
    out << "model       MFU n/a: MaxText's formula is for a model whose input is a sequence of token ids\n";
  }
  out << fmt::format("hardware    {:.4g} TFLOP/s per chip executed (recomputation included), {:.4g} TFLOP per chip per step\n",
                     estimate.hardware_flops_per_chip_per_second / 1e12, estimate.hardware_flops_per_chip / 1e12);
  const experiment::PodMemoryFit& memory = estimate.memory;
  out << fmt::format("HBM         {:.4g} GB per chip of {:.4g} GB: weights and optimizer state {:.4g}, batch {:.4g}, step values {:.4g}; {}\n",
                     memory.total_bytes / 1e9, memory.capacity_bytes / 1e9, memory.state_bytes / 1e9,
                     memory.batch_bytes / 1e9, memory.activation_bytes / 1e9,
                     memory.fits ? std::string("fits") : "does not fit: " + memory.advice);
  if (estimate.energy_j) {
    out << fmt::format("energy      {:.4g} J per step, every chip; {:.4g} W per chip on average{}\n", *estimate.energy_j,
                       estimate.average_power_w, estimate.energy_note.empty() ? "" : " (" + estimate.energy_note + ")");
  } else {
    out << "energy      " << estimate.energy_note << "\n";
  }
  out << fmt::format("\n{:<48} {:>6} {:>11} {:>7} {:>10}\n", "op / fusion (one chip)", "calls", "time s", "share", "TFLOP");
  for (const experiment::TpuOpCost& cost : estimate.by_op) {
    out << fmt::format("{:<48} {:>6} {:>11.5g} {:>6.1f}% {:>10.4g}\n", cost.op.substr(0, 48), cost.count, cost.seconds,
                       percent(cost.seconds, step), cost.flops / 1e12);
  }
}

std::vector<std::pair<std::string, int64_t>> parse_mesh(const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> mesh;
  std::stringstream list(text);
  for (std::string axis; std::getline(list, axis, ',');) {
    const size_t equals = axis.find('=');
    int64_t size = 0;
    const std::string number = equals == std::string::npos ? std::string() : axis.substr(equals + 1);
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), size);
    if (equals == std::string::npos || equals == 0 || error != std::errc() || end != number.data() + number.size() || size < 1) {
      throw InvalidArgumentError("--mesh '" + text + "': expected NAME=SIZE[,NAME=SIZE...] with sizes >= 1, e.g. fsdp=256");
    }
    mesh.emplace_back(axis.substr(0, equals), size);
  }
  if (mesh.empty()) throw InvalidArgumentError("--mesh '': expected NAME=SIZE, e.g. fsdp=256");
  return mesh;
}

// --async-collectives: all (or on), none (or off), or kinds separated by commas.
std::set<std::string> parse_async_collectives(const std::string& text) {
  const std::set<std::string>& kinds = experiment::collective_kinds();
  if (text == "all" || text == "on") return kinds;
  if (text == "none" || text == "off") return {};
  std::set<std::string> chosen;
  std::stringstream list(text);
  for (std::string kind; std::getline(list, kind, ',');) {
    if (!kinds.contains(kind)) {
      throw InvalidArgumentError("--async-collectives '" + text + "': '" + kind +
                                 "' is not a collective; expected all, none, or some of all_gather, reduce_scatter, "
                                 "all_reduce and all_to_all separated by commas");
    }
    chosen.insert(kind);
  }
  if (chosen.empty()) throw InvalidArgumentError("--async-collectives '': expected all, none or a list of kinds");
  return chosen;
}

// One child `accel tpu estimate --model ... --json` per swept value.
int run_sweep(const TpuModelEstimateRequest& request, std::ostream& out, std::ostream& err) {
  const size_t equals = request.sweep.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == request.sweep.size()) {
    err << "accel tpu estimate: --sweep '" << request.sweep << "': expected KEY=V1,V2,... e.g. core.mxu.rows=64,128\n";
    return 2;
  }
  const std::string key = request.sweep.substr(0, equals);
  std::vector<std::string> values;
  std::stringstream list(request.sweep.substr(equals + 1));
  for (std::string value; std::getline(list, value, ',');) values.push_back(value);
  // This program's own path: popen's shell would read /proc/self/exe as itself.
  std::error_code error;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) throw InternalError("cannot find this program's path: " + error.message());
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const std::string& value : values) {
    std::string command = fmt::format("'{}' tpu estimate --model '{}' --values {} --json", self, request.file,
                                      request.values);
    if (request.preset_given) command += fmt::format(" --preset '{}'", request.preset);
    if (request.batch > 0) command += fmt::format(" --batch {}", request.batch);
    if (request.inference) command += " --inference";
    if (request.megacore) command += " --megacore";
    if (!request.mesh.empty()) command += fmt::format(" --mesh '{}'", request.mesh);
    if (!request.remat.empty()) command += fmt::format(" --remat '{}'", request.remat);
    if (request.slices > 1) command += fmt::format(" --slices {}", request.slices);
    if (!request.async_collectives.empty()) command += fmt::format(" --async-collectives '{}'", request.async_collectives);
    if (!request.scan_layers.empty()) command += fmt::format(" --scan-layers {}", request.scan_layers);
    // `slice` sweeps the TPUStrategy's slice (the number of chips: v4-8, v4-16, ...).
    const std::string slice = key == "slice" ? value : request.slice;
    if (!slice.empty()) command += fmt::format(" --slice '{}'", slice);
    for (const std::string& field : request.file_overrides) command += fmt::format(" --model-set '{}'", field);
    if (!request.run.empty()) command += fmt::format(" --run '{}'", request.run);
    for (const std::string& field : request.overrides) command += fmt::format(" --set '{}'", field);
    if (key != "slice") command += fmt::format(" --set '{}={}'", key, value);
    command += " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) throw InternalError("cannot start " + command);
    std::string output;
    char buffer[4096];
    for (size_t read; (read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, read);
    const int status = ::pclose(pipe);
    const nlohmann::json point = nlohmann::json::parse(output, nullptr, false);
    if (status != 0 || point.is_discarded()) {
      // The child's message already says "accel tpu estimate: ..."; name the swept value before it once.
      constexpr std::string_view kPrefix = "accel tpu estimate: ";
      const std::string_view reason = std::string_view(output).starts_with(kPrefix)
                                          ? std::string_view(output).substr(kPrefix.size())
                                          : std::string_view(output);
      err << fmt::format("accel tpu estimate: --sweep {}={}: {}", key, value, reason);
      return 2;
    }
    // A pod estimate (a mesh) reports model TFLOP/s and HBM per chip instead
    // of one core's utilization and traffic.
    const bool pod = point.contains("mesh");
    points.push_back({{"value", value},
                      {"step_seconds", point["step_seconds"]},
                      {"mxu_utilization", pod ? nlohmann::json(nullptr) : point["mxu_utilization"]},
                      {"hbm_bytes", pod ? point["hbm_traffic_bytes_per_chip"] : point["hbm_bytes"]},
                      {"arithmetic_intensity", pod ? nlohmann::json(nullptr) : point["arithmetic_intensity"]},
                      {"model_tflops_per_chip", pod ? point["model_tflops_per_chip"] : nlohmann::json(nullptr)}});
  }
  if (request.json) {
    out << nlohmann::ordered_json{{"sweep", key}, {"points", points}}.dump(2) << "\n";
    return 0;
  }
  const bool pod = !points.empty() && points.front()["mxu_utilization"].is_null();
  out << fmt::format("{:<24} {:>14} {:>12} {:>12}\n", key, "step ms", pod ? "TFLOP/s/chip" : "MXU", "HBM MB");
  for (const auto& point : points) {
    const std::string middle = pod ? fmt::format("{:>12.4g}", point["model_tflops_per_chip"].is_number()
                                                                   ? point["model_tflops_per_chip"].get<double>()
                                                                   : 0.0)
                                   : fmt::format("{:>11.1f}%", 100.0 * point["mxu_utilization"].get<double>());
    out << fmt::format("{:<24} {:>14.6g} {} {:>12.4g}\n", point["value"].get<std::string>(),
                       point["step_seconds"].get<double>() * 1e3, middle, point["hbm_bytes"].get<double>() / 1e6);
  }
  return 0;
}

std::string joined(const std::vector<std::string>& fields) {
  std::string text;
  for (const std::string& field : fields) text += (text.empty() ? "" : ";") + field;
  return text;
}

const experiment::RunConfig& chosen_run(const experiment::Experiment& experiment, const TpuModelEstimateRequest& request) {
  for (const experiment::RunConfig& run : experiment.runs) {
    if (request.run.empty() || run.name == request.run) return run;
  }
  throw InvalidArgumentError(request.file + ": no run named '" + request.run + "'");
}

// The emulated system: --preset, else the chosen run's `tpu:` section (its
// preset and hardware fields), else tpu_v4; then the --set fields.
std::pair<std::string, std::vector<std::string>> emulated_system(const TpuModelEstimateRequest& request,
                                                                 const experiment::RunConfig& chosen) {
  std::string preset = request.preset;
  std::vector<std::string> overrides;
  if (!request.preset_given && chosen.tpu) {
    preset = chosen.tpu->preset_path.empty() ? chosen.tpu->preset : chosen.tpu->preset_path;
    std::istringstream fields(experiment::tpu_sim_overrides(*chosen.tpu));
    for (std::string field; std::getline(fields, field, ';');) overrides.push_back(field);
  }
  overrides.insert(overrides.end(), request.overrides.begin(), request.overrides.end());
  return {preset, overrides};
}

// The emulator's settings, made before anything lists devices (it reads
// them when it loads); the preset and fields checked here first, so that a
// bad file or key is named (file:line:column, the key) rather than the
// plugin failing to load.
void use_emulated_system(const std::string& preset, const std::vector<std::string>& overrides, const std::string& values,
                         bool megacore) {
#ifdef ACCEL_TPU_TIMING_IN_ESTIMATE
  tpu::SystemSelection selection{.preset_or_file = preset};
  for (const std::string& field : overrides) selection.overrides.push_back(tpu::parse_field_override(field));
  (void)tpu::load_system(selection);
#endif
  config::set_setting("tpu_sim.preset", preset);
  config::set_setting("tpu_sim.overrides", joined(overrides));
  config::set_setting("tpu_sim.values", values);
  if (megacore) config::set_setting("tpu_sim.megacore", "on");
}

// --mesh, or a run with a `distribution:` section: the model sharded over an
// emulated pod. Without --slice, the pod has as many chips as the mesh.
int run_pod_estimate(const TpuModelEstimateRequest& request, const experiment::RunConfig& chosen, std::ostream& out) {
  if (request.values != "none") {
    throw InvalidArgumentError("--values " + request.values +
                               " with a mesh (--mesh or the run's distribution): a pod estimate runs one chip's program "
                               "on shard shapes alone (--values none)");
  }
  if (request.inference) {
    throw InvalidArgumentError("--inference with a mesh (--mesh or the run's distribution): a pod estimate times a training step");
  }
  auto [preset, overrides] = emulated_system(request, chosen);
  experiment::TpuPodOptions pod;
  pod.mesh = request.mesh.empty() ? chosen.distribution->mesh : parse_mesh(request.mesh);
  int64_t chips = 1;
  if (request.slice.empty()) {
    for (const auto& axis : pod.mesh) {
      chips *= std::clamp<int64_t>(axis.second, 1, 65536);
      if (chips > 65536) throw InvalidArgumentError("the mesh has more than 65536 devices");
    }
  } else {
#ifdef ACCEL_TPU_TIMING_IN_ESTIMATE
    const distribute::TpuSliceDescription slice = distribute::describe_tpu_slice(request.slice);
    if (request.preset_given && request.preset != slice.preset) {
      throw InvalidArgumentError("--slice " + request.slice + " is a " + slice.preset + " slice; --preset " +
                                 request.preset + " names another chip: keep one");
    }
    preset = slice.preset;
    chips = slice.chips;
#else
    throw InvalidArgumentError("--slice: this build has no TPU timing library");
#endif
  }
  use_emulated_system(preset, overrides, "none", request.megacore);
  config::set_setting("tpu_sim.devices", "first");  // one chip's program: a slice of thousands of chips lists one device
  config::set_setting("tpu_sim.chips", std::to_string(chips));
  pod.batch = request.batch;
  if (!request.remat.empty()) {
    pod.remat = parse_remat_policy(request.remat);
    if (!pod.remat) throw InvalidArgumentError("--remat '" + request.remat + "': expected none, full or minimal");
  }
  // The flags, else the run's distribution section, else the defaults.
  const std::optional<experiment::DistributionConfig>& section = chosen.distribution;
  if (!request.async_collectives.empty()) {
    pod.async_collectives = parse_async_collectives(request.async_collectives);
  } else if (section && section->async_collectives) {
    pod.async_collectives = {section->async_collectives->begin(), section->async_collectives->end()};
  }
  if (!request.scan_layers.empty()) {
    pod.scan_layers = request.scan_layers == "on";
  } else if (section && section->scan_layers) {
    pod.scan_layers = *section->scan_layers;
  }
  pod.slices = request.slices;
  const experiment::TpuPodEstimate estimate = experiment::estimate_tpu_pod_step(chosen, pod);
  if (request.json) {
    out << experiment::tpu_pod_estimate_json(estimate) << "\n";
  } else {
    print_pod_table(estimate, out);
  }
  return 0;
}

}  // namespace

int run_tpu_model_estimate(const TpuModelEstimateRequest& request, std::ostream& out, std::ostream& err) {
  try {
    if (!request.sweep.empty()) return run_sweep(request, out, err);
    if (request.values != "none" && request.values != "compute") {
      throw InvalidArgumentError("--values '" + request.values + "': expected none (timing only) or compute");
    }
    experiment::LoadOptions options;
    inspect_keras_files(options);
    options.overrides = request.file_overrides;
    // Devices are listed by the estimate itself, after a slice is initialized.
    options.device_catalog = [] { return experiment::fixed_device_catalog({{"CPU", 1}, {"TPU", 4096}}); };
    {
      const experiment::Experiment plain =
          experiment::load_experiment_text(completed_experiment(request.file, "", options), request.file, options);
      const experiment::RunConfig& chosen = chosen_run(plain, request);
      if (!request.mesh.empty() || chosen.distribution) return run_pod_estimate(request, chosen, out);
    }
    // A large slice: one replica on one chip of its preset, then the slice's all-reduce.
    std::string slice = request.slice;
#ifdef ACCEL_TPU_TIMING_IN_ESTIMATE
    std::optional<tpu::Hardware> one_replica_of;
    std::optional<std::string> slice_preset;  // the one replica's chip
    if (!slice.empty()) {
      const distribute::TpuSliceDescription description = distribute::describe_tpu_slice(slice);
      tpu::Hardware hw = slice_hardware(request, description);
      if (request.one_replica || tpu::device_count(hw) > kLargestSliceRunWhole) {
        slice_preset = description.preset;
        one_replica_of = std::move(hw);
        slice.clear();
      }
    }
#else
    if (request.one_replica) throw InvalidArgumentError("--time-one-replica: this build has no TPU timing library");
#endif
    const experiment::Experiment experiment =
        experiment::load_experiment_text(completed_experiment(request.file, slice, options), request.file, options);
    const experiment::RunConfig* chosen = &chosen_run(experiment, request);
    auto [preset, overrides] = emulated_system(request, *chosen);
#ifdef ACCEL_TPU_TIMING_IN_ESTIMATE
    if (slice_preset) preset = *slice_preset;
#endif
    use_emulated_system(preset, overrides, request.values, request.megacore);
#ifdef ACCEL_TPU_TIMING_IN_ESTIMATE
    if (one_replica_of) {
      const int replicas = tpu::device_count(*one_replica_of);
      const int64_t global = request.batch > 0 ? request.batch : chosen->data->options.at("batch").as_int();
      if (global % replicas != 0) {
        throw InvalidArgumentError(fmt::format("--slice {}: a global batch of {} does not split over its {} replicas",
                                               request.slice, global, replicas));
      }
      experiment::TpuStepEstimate estimate =
          experiment::estimate_tpu_step(*chosen, {.batch = global / replicas, .training = !request.inference});
      estimate.one_replica_timed = true;
      estimate.replicas = replicas;
      estimate.batch = global;
      if (!request.inference) {
        const OverlappedAllReduce all_reduce =
            overlap_all_reduce(*one_replica_of, estimate.gradients_ready, estimate.backward_end_seconds);
        estimate.all_reduce_seconds = all_reduce.busy_seconds;
        estimate.all_reduce_exposed_seconds = all_reduce.exposed_seconds;
        estimate.all_reduce_bytes = estimate.gradient_bytes;
        estimate.step_seconds += all_reduce.exposed_seconds;
      }
      if (request.json) {
        out << experiment::tpu_step_estimate_json(estimate) << "\n";
      } else {
        print_table(estimate, out);
      }
      return 0;
    }
#endif
    const experiment::TpuStepEstimate estimate =
        experiment::estimate_tpu_step(*chosen, {.batch = request.batch, .training = !request.inference});
    if (request.json) {
      out << experiment::tpu_step_estimate_json(estimate) << "\n";
    } else {
      print_table(estimate, out);
    }
    return 0;
  } catch (const experiment::ExperimentError& error) {
    err << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << "accel tpu estimate: " << error.what() << "\n";
    return 2;
  }
}

void add_model_estimate_options(CLI::App& estimate, const std::shared_ptr<TpuEstimateRequest>& op_request) {
  auto request = std::make_shared<TpuModelEstimateRequest>();
  estimate.add_option("--model", request->file,
                      "An experiment file, or one with only name: and model: (then SGD on a mean squared error)");
  estimate.add_option("--batch", request->batch, "--model: the global batch (default the file's data.batch, or 32)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  CLI::Option* inference =
      estimate.add_flag("--inference", request->inference, "--model: a predict step instead of a training step");
  estimate.add_flag("--training", [request](std::int64_t) { request->inference = false; },
                    "--model: a training step (the default)")
      ->excludes(inference);
  estimate.add_option("--run", request->run, "--model: which run of the file (default the first)");
  CLI::Option* slice = estimate.add_option(
      "--slice", request->slice, "--model: data-parallel under TPUStrategy on an emulated slice, e.g. v4-8 (4 chips, 8 cores)");
  estimate.add_flag("--time-one-replica", request->one_replica,
                    "--model --slice: time one replica and add the slice's all-reduce instead of emulating every "
                    "replica (the default above " + std::to_string(kLargestSliceRunWhole) + " devices)")
      ->needs(slice);
  estimate.add_option("--mesh", request->mesh,
                      "--model: shard the model over the slice's chips (a pod estimate), e.g. fsdp=256: the batch and "
                      "every weight split over it; data=N: the batch only; with tensor=N too (fsdp=64,tensor=4): "
                      "heads, MLP units and vocabulary split over it");
  estimate.add_option("--remat", request->remat, "--model --mesh: none, full or minimal (default the run's training.remat)")
      ->check(CLI::IsMember({"none", "full", "minimal"}));
  estimate.add_option("--slices", request->slices,
                      "--model --mesh: N slices joined by the data-center network, data parallel across them "
                      "(multislice; --batch is over all of them)")
      ->check(CLI::Range(1, 65536));
  estimate.add_option("--async-collectives", request->async_collectives,
                      "--model --mesh: the collectives that overlap the ops that do not read them, as XLA's flags "
                      "make them: all_gather (the default, or the run's distribution.async_collectives: MaxText's "
                      "published runs), all, none, or kinds separated by commas "
                      "(all_gather,reduce_scatter,all_reduce,all_to_all); the others block the chip");
  estimate.add_option("--scan-layers", request->scan_layers,
                      "--model --mesh: on (the blocks of training.remat_blocks run as a loop, as MaxText's scan_layers; "
                      "the default, or the run's distribution.scan_layers) or off (one straight program)")
      ->check(CLI::IsMember({"on", "off"}));
  estimate.add_flag("--megacore", request->megacore,
                    "--model: a chip's two TensorCores as one device, on presets that have megacore (v4, v5p)");
  estimate.add_option("--model-set", request->file_overrides,
                      "--model: override a key of the file, as accel run --set, e.g. 'data.shape=[224, 224, 3]'");
  estimate.add_option("--values", request->values,
                      "--model: none (timing only, the default) or compute (also compute every tensor)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "compute"}));
  estimate.add_option("--sweep", request->sweep,
                      "--model: one estimate per value of a preset field, e.g. --sweep core.mxu.rows=64,128,256, "
                      "or of the slice (the chips): --sweep slice=v4-8,v4-16,v4-32");
  estimate.callback([&estimate, request, op_request] {
    if (!estimate.get_subcommands().empty()) {
      if (!request->file.empty()) throw CLI::ValidationError("--model", "takes no op (gemm, conv2d, ...)");
      return;
    }
    if (request->file.empty()) throw CLI::RequiredError("an op (gemm, conv2d, vector, allreduce) or --model FILE");
    request->preset = op_request->preset;
    request->preset_given = estimate.count("--preset") > 0;
    request->overrides = op_request->overrides;
    request->json = op_request->json;
    const int code = run_tpu_model_estimate(*request, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace accel::cli
#endif
