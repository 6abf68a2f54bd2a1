// estimate_tpu_pod_step: one chip's program of a sharded train step on the
// emulated TPU (keras::distribution::analyze_device_step), its collectives
// timed on the slice's torus (TpuEmulator::estimate_collective), both
// scheduled together (schedule_device_step), with MaxText's model FLOPs,
// the HBM fit and the energy.
#include <accel/experiment/tpu_pod_estimate.hpp>

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/distribution/auto_layout.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>
#include <accel/tpu_emulator.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "backend_peak.hpp"
#include "estimate_inputs.hpp"
#include "mesh_distribution.hpp"
#include "model_factory.hpp"
#include "tpu_op_costs.hpp"

namespace accel::experiment {
namespace {

using keras::distribution::DeviceStepAnalysis;
using keras::distribution::StepEvent;

// Restores "no distribution" however the estimate ends.
struct DistributionScope {
  explicit DistributionScope(std::shared_ptr<const keras::distribution::Distribution> distribution) {
    keras::distribution::set_distribution(std::move(distribution));
  }
  ~DistributionScope() { keras::distribution::set_distribution(nullptr); }
  DistributionScope(const DistributionScope&) = delete;
  DistributionScope& operator=(const DistributionScope&) = delete;
};

std::optional<ModelFlopsFormula> formula_of(const keras::Model& model, const Tensor& x, int64_t batch) {
  if (x.rank() != 2 || (x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64)) return std::nullopt;
  ModelFlopsFormula formula;
  formula.sequence = x.shape()[1];
  formula.batch = batch;
  std::set<const void*> counted;
  for (const Variable& variable : model.trainable_weights()) {
    if (!counted.insert(variable.value().storage().get()).second) continue;
    formula.parameters += static_cast<double>(variable.shape().element_count());
  }
  for (const std::shared_ptr<keras::Layer>& layer : model.layers()) {
    if (const auto* attention = dynamic_cast<const keras::MultiHeadAttention*>(layer.get())) {
      if (formula.layers == 0) {
        formula.heads = attention->num_heads();
        formula.head_dim = attention->key_dim();
      }
      ++formula.layers;
    }
  }
  return formula;
}

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

// `analysis` with an event after some collectives: `after(index, joined)`
// gives it for collective `index` (or nothing) and may add collectives to
// `joined`; what read the collective reads the new event instead, which
// reads the collective.
template <typename After>
DeviceStepAnalysis with_events_after_collectives(const DeviceStepAnalysis& analysis, After after) {
  DeviceStepAnalysis joined = analysis;
  joined.events.clear();
  std::vector<int32_t> moved(analysis.events.size(), -1);  // old event -> the event its readers read now
  for (size_t index = 0; index < analysis.events.size(); ++index) {
    StepEvent event = analysis.events[index];
    for (int32_t& from : event.inputs_from) from = moved[static_cast<size_t>(from)];
    joined.events.push_back(event);
    moved[index] = static_cast<int32_t>(joined.events.size() - 1);
    if (event.kind != StepEvent::Kind::kCollective) continue;
    std::optional<StepEvent> next = after(static_cast<size_t>(event.collective), joined);
    if (!next) continue;
    next->inputs_from = {moved[index]};
    next->block = event.block;  // in the same loop iteration as what it follows
    next->backward = event.backward;
    joined.events.push_back(std::move(*next));
    moved[index] = static_cast<int32_t>(joined.events.size() - 1);
  }
  return joined;
}

// Multislice: after each collective that reduces over the batch axis (a
// gradient's reduce-scatter or all-reduce, the loss's mean), an all-reduce
// of what each chip then holds among its counterparts in the other slices,
// over the data-center network; what read the in-slice result reads it.
DeviceStepAnalysis with_reductions_between_slices(const DeviceStepAnalysis& analysis, const std::string& batch_axis,
                                                  std::vector<int>& network) {
  network.assign(analysis.collectives.size(), 0);
  return with_events_after_collectives(
      analysis, [&](size_t index, DeviceStepAnalysis& joined) -> std::optional<StepEvent> {
        const keras::distribution::StepCollective& collective = analysis.collectives[index];
        if (collective.kind != "reduce_scatter" && collective.kind != "all_reduce") return std::nullopt;
        double members = 1;
        bool over_batch = false;
        for (const keras::distribution::MeshSpan& span : collective.spans) {
          members *= static_cast<double>(span.size);
          over_batch = over_batch || span.axis == batch_axis;
        }
        if (!over_batch) return std::nullopt;
        keras::distribution::StepCollective between;
        between.kind = "all_reduce";
        between.bytes = collective.kind == "reduce_scatter" ? collective.bytes / members : collective.bytes;
        between.consumer = collective.consumer;
        joined.collectives.push_back(between);
        network.push_back(1);
        return StepEvent{.kind = StepEvent::Kind::kCollective,
                         .collective = static_cast<int32_t>(joined.collectives.size() - 1),
                         .label = "all_reduce (DCN)"};
      });
}

// A reduction's sums run on the chip (TPUs reduce on the TensorCore, not
// in the network): an op after each collective that has them, of
// `chip_seconds[collective]`.
DeviceStepAnalysis with_sums_on_the_chip(const DeviceStepAnalysis& analysis, const std::vector<double>& chip_seconds) {
  return with_events_after_collectives(
      analysis, [&](size_t index, DeviceStepAnalysis&) -> std::optional<StepEvent> {
        if (chip_seconds[index] <= 0) return std::nullopt;
        return StepEvent{.kind = StepEvent::Kind::kOp,
                         .seconds = chip_seconds[index],
                         .label = "sums of " + analysis.collectives[index].kind};
      });
}

}  // namespace

const std::set<std::string>& collective_kinds() {
  static const std::set<std::string> kinds = {"all_gather", "reduce_scatter", "all_reduce", "all_to_all"};
  return kinds;
}

double ModelFlopsFormula::flops() const {
  const double s = static_cast<double>(sequence);
  const double b = static_cast<double>(batch);
  return 6.0 * parameters * s * b + 12.0 * static_cast<double>(heads * layers * head_dim) * s * s * b;
}

PodMemoryFit memory_fit(const DeviceStepAnalysis& analysis, double capacity_bytes, int64_t batch_per_chip,
                        int64_t chips_sharding_state) {
  PodMemoryFit fit;
  fit.capacity_bytes = capacity_bytes;
  fit.state_bytes = static_cast<double>(analysis.state_bytes);
  fit.batch_bytes = static_cast<double>(analysis.batch_bytes);
  fit.activation_bytes = static_cast<double>(analysis.planned_peak_bytes);
  fit.total_bytes = fit.state_bytes + fit.batch_bytes + fit.activation_bytes;
  fit.fits = capacity_bytes <= 0 || fit.total_bytes <= capacity_bytes;
  if (fit.fits) return fit;
  std::vector<std::string> ways;
  const double per_example = batch_per_chip > 0 ? (fit.batch_bytes + fit.activation_bytes) / static_cast<double>(batch_per_chip) : 0;
  if (per_example > 0 && capacity_bytes > fit.state_bytes) {
    const auto largest = static_cast<int64_t>(std::floor((capacity_bytes - fit.state_bytes) / per_example));
    if (largest >= 1) ways.push_back(fmt::format("a per-chip batch of at most {} (the step's values grow with the batch)", largest));
  }
  const double room = capacity_bytes - (fit.batch_bytes + fit.activation_bytes);
  if (room > 0 && chips_sharding_state > 0) {
    const auto chips = static_cast<int64_t>(std::ceil(fit.state_bytes * static_cast<double>(chips_sharding_state) / room));
    ways.push_back(fmt::format("the weights and optimizer state sharded over at least {} chips", chips));
  }
  if (ways.empty()) ways.push_back("a smaller per-chip batch and more chips to shard the weights over");
  fit.advice = fmt::format("needs {} of HBM per chip, {} available; it would fit with ", gigabytes(fit.total_bytes),
                           gigabytes(capacity_bytes));
  for (size_t way = 0; way < ways.size(); ++way) fit.advice += (way == 0 ? "" : ", or ") + ways[way];
  return fit;
}

TpuPodEstimate estimate_tpu_pod_step(const RunConfig& run, const TpuPodOptions& options) {
  if (!run.model || !run.data || !run.training) {
    throw InvalidArgumentError("run '" + run.name + "': a TPU pod estimate needs a model, its data and training");
  }
  if (run.strategy) {
    throw InvalidArgumentError("run '" + run.name + "': a pod estimate shards the model over --mesh; the run's strategy (" +
                               run.strategy->name + ") replicates it: keep one");
  }
  const auto wall_start = std::chrono::steady_clock::now();
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) {
    throw FailedPreconditionError("no TPU emulator: the tpu_sim plugin did not load" + TpuEmulator::why_not_found());
  }
  if (!emulator->timing_only()) {
    throw FailedPreconditionError(
        "a pod estimate runs one chip's program on shard shapes alone: it needs the emulator in timing-only mode "
        "(tpu_sim.values=none, --values none)");
  }
  TpuPodEstimate estimate;
  estimate.system_json = emulator->system_json();
  const nlohmann::json system = nlohmann::json::parse(estimate.system_json);
  estimate.chips = system.value("chips", int64_t{1});  // the slice's, listed as devices or not (tpu_sim.devices)
  if (system.value("cores_per_chip", 1) > 1 && !system.value("megacore", false)) {
    throw InvalidArgumentError(fmt::format(
        "--mesh: a pod estimate lays the mesh on chips, and {}'s chips have {} TensorCores each: use --megacore "
        "(each chip one device)",
        system.value("preset", std::string("this preset")), system.value("cores_per_chip", 1)));
  }
  estimate.mesh = mesh_text(options.mesh);
  int64_t batch_devices = 1;  // the devices the batch axis splits it over
  if (options.mesh.empty()) throw InvalidArgumentError("--mesh: expected axes such as fsdp=256 (their product the slice's chips)");
  std::vector<std::string> axis_names;
  for (const auto& axis : options.mesh) axis_names.push_back(axis.first);
  std::string batch_axis;
  try {
    batch_axis = keras::distribution::auto_layout_batch_axis(axis_names);  // at most three distinct axes
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError(fmt::format("--mesh {}: {}", estimate.mesh, error.what()));
  }
  for (const auto& [name, size] : options.mesh) {
    if (size < 1 || size > estimate.chips) {
      throw InvalidArgumentError(fmt::format("--mesh {}: axis '{}' has size {}; expected 1 to the slice's {} chips",
                                             estimate.mesh, name, size, estimate.chips));
    }
    if (name == batch_axis) batch_devices = size;
  }
  const int64_t mesh_devices = mesh_device_count(options.mesh);  // at most three axes of at most the chips each
  if (mesh_devices != estimate.chips) {
    throw InvalidArgumentError(fmt::format("--mesh {}: {} devices, but the slice has {} chips", estimate.mesh, mesh_devices,
                                           estimate.chips));
  }
  if (options.slices < 1 || options.slices > 65536) {
    throw InvalidArgumentError(fmt::format("--slices {}: expected 1 to 65536 slices", options.slices));
  }
  estimate.slices = options.slices;
  estimate.batch = options.batch > 0 ? options.batch : run.data->options.at("batch").as_int();
  if (estimate.batch % (batch_devices * options.slices) != 0) {
    if (options.batch == 0 && estimate.batch % batch_devices == 0) {  // the run's batch, meant per slice
      throw InvalidArgumentError(fmt::format(
          "data.batch {}: {} slices of {} batch shards do not split it evenly; --batch is the global batch over "
          "every slice (--batch {} gives each slice {})",
          estimate.batch, options.slices, batch_devices, estimate.batch * options.slices, estimate.batch));
    }
    throw InvalidArgumentError(fmt::format("--batch {}: a global batch that {} slices of {} batch shards do not split evenly",
                                           estimate.batch, options.slices, batch_devices));
  }
  const int64_t slice_batch = estimate.batch / options.slices;
  // MaxText's per-device batch: the global batch over every chip (under a
  // tensor axis, the chips of one batch shard share its examples).
  estimate.batch_per_chip = std::max<int64_t>(1, slice_batch / estimate.chips);
  const RematPolicy remat = options.remat.value_or(run.training->remat);
  estimate.remat = remat_policy_name(remat);
  for (const std::string& kind : options.async_collectives) {
    if (!collective_kinds().contains(kind)) {
      throw InvalidArgumentError("asynchronous collectives: '" + kind +
                                 "' is not a collective; expected all_gather, reduce_scatter, all_reduce or all_to_all");
    }
  }
  estimate.async_collectives = options.async_collectives;
  estimate.scan_layers = options.scan_layers;

  const Device device = find_device("/TPU:0");
  const BackendPeak peak = backend_peak("/TPU:0");
  estimate.peak_flops_per_chip = peak.peak_flops_per_second.value_or(0);
  std::shared_ptr<keras::Model> model;
  {
    const DeviceScope on_tpu(device);
    keras::set_random_seed(static_cast<uint64_t>(run.training->seed.value_or(42)));
    const keras::mixed_precision::GlobalPolicyScope policy(keras::DTypePolicy(run.training->mixed_precision));
    model = make_model(*run.model, model_input_shape(*run.model, run.data->example_shape));
  }
  estimate.model = model->name();
  // The mesh laid on the slice's chips, row-major.
  std::vector<std::string> chip_names;
  for (int64_t chip = 0; chip < mesh_devices; ++chip) chip_names.push_back(fmt::format("/TPU:{}", chip));
  const DistributionScope sharded(mesh_distribution(options.mesh, std::move(chip_names), model->weights()));
  {
    const DeviceScope on_tpu(device);
    const keras::mixed_precision::GlobalPolicyScope policy(keras::DTypePolicy(run.training->mixed_precision));
    model->compile(make_optimizer(run.training->optimizer), make_loss(run.training->loss), {},
                   keras::CompileOptions{.jit_compile = true, .remat = remat, .remat_blocks = run.training->remat_blocks});
  }
  const keras::KerasTensor& input = model->inputs().front();
  std::vector<int64_t> input_dims{slice_batch};
  input_dims.insert(input_dims.end(), input.shape().begin() + 1, input.shape().end());
  const Tensor x = batch_of(Shape(input_dims), input.dtype(), device, true);
  const Tensor y = labels_for(run.training->loss.name, model->outputs().front().shape(), slice_batch, device, true);

  const int core = device.plugin_device_index();
  keras::distribution::DeviceClock clock;
  clock.start = [&] {
    emulator->reset_totals();
    profiler::start();
  };
  clock.seconds = [&] { return emulator->totals(core).seconds; };
  DeviceStepAnalysis analysis;
  {
    const DeviceScope on_tpu(device);
    analysis = keras::distribution::analyze_device_step(*model, x, y, device, clock);
  }
  std::vector<int> network;
  if (options.slices > 1) {
    analysis = with_reductions_between_slices(analysis, batch_axis, network);
  }
  profiler::stop();
  estimate.ops_recomputed = analysis.ops_recomputed;
  estimate.compiled_ops = analysis.compiled_ops;

  // Each collective on the torus: the mesh's devices are the slice's chips, row-major.
  std::vector<ScheduledCollective> scheduled;
  std::vector<double> chip_seconds;  // each one's sums on the chip
  std::map<std::pair<std::string, std::string>, TpuCollectiveCost> by_kind;
  double link_energy = 0;
  bool link_energy_known = true;
  for (size_t index = 0; index < analysis.collectives.size(); ++index) {
    const keras::distribution::StepCollective& collective = analysis.collectives[index];
    const bool between_slices = index < network.size() && network[index] == 1;
    std::vector<TpuChipSpan> spans;
    std::string axes = between_slices ? "slices (DCN)" : "";
    for (const keras::distribution::MeshSpan& span : collective.spans) {
      spans.push_back({span.size, span.stride});
      axes += (axes.empty() ? "" : ",") + span.axis;
    }
    const TpuCollectiveTiming timing = between_slices
                                           ? emulator->estimate_dcn_all_reduce(collective.bytes, options.slices)
                                           : emulator->estimate_collective(collective.kind, collective.bytes, spans);
    scheduled.push_back({.seconds = timing.seconds,
                         .network = between_slices ? 1 : 0,
                         .asynchronous = !between_slices && options.async_collectives.contains(collective.kind)});
    chip_seconds.push_back(timing.chip_seconds);
    estimate.summing_seconds += timing.chip_seconds;
    if (timing.link_energy_j) {
      link_energy += *timing.link_energy_j / std::max(1, timing.chips);  // per chip
    } else if (timing.link_bytes_per_chip > 0 && !between_slices) {
      link_energy_known = false;
    }
    TpuCollectiveCost& cost = by_kind[{collective.kind, axes}];
    cost.kind = collective.kind;
    cost.axes = axes;
    cost.count += 1;
    cost.bytes += collective.bytes;
    cost.seconds += timing.seconds;
    cost.chip_seconds += timing.chip_seconds;
  }
  for (auto& [key, cost] : by_kind) estimate.collectives.push_back(cost);
  std::stable_sort(estimate.collectives.begin(), estimate.collectives.end(),
                   [](const TpuCollectiveCost& a, const TpuCollectiveCost& b) { return a.seconds > b.seconds; });
  analysis = with_sums_on_the_chip(analysis, chip_seconds);
  estimate.schedule = schedule_device_step(analysis, scheduled, options.scan_layers);
  estimate.step_seconds = estimate.schedule.step_seconds;

  const TpuCoreTotals totals = emulator->totals(core);
  estimate.cycles = totals.cycles;
  estimate.stall_cycles = totals.stall_cycles;
  estimate.hbm_bytes_per_chip = static_cast<double>(totals.hbm_bytes);
  std::vector<profiler::OpRecord> records = profiler::records();
  std::erase_if(records, [&](const profiler::OpRecord& record) { return record.device != device.name(); });
  estimate.by_op = costs_by_op(records);
  for (const TpuOpCost& cost : estimate.by_op) {
    estimate.hardware_flops_per_chip += cost.flops;
    (cost.on_mxu ? estimate.mxu_cycles : estimate.vector_cycles) += cost.compute_cycles;
  }
  if (estimate.step_seconds > 0) {
    estimate.hardware_flops_per_chip_per_second = estimate.hardware_flops_per_chip / estimate.step_seconds;
    // The cycles' split of the ops' time (the reductions' sums apart), as a share of the step.
    const double per_cycle = (estimate.schedule.compute_seconds - estimate.summing_seconds) / estimate.step_seconds /
                             static_cast<double>(std::max<int64_t>(1, estimate.cycles));
    estimate.shares.reduction_sums = estimate.summing_seconds / estimate.step_seconds;
    estimate.shares.mxu = static_cast<double>(estimate.mxu_cycles) * per_cycle;
    estimate.shares.vector = static_cast<double>(estimate.vector_cycles) * per_cycle;
    estimate.shares.hbm_stalls = static_cast<double>(estimate.stall_cycles) * per_cycle;
    estimate.shares.exposed_collectives = estimate.schedule.exposed_collective_seconds / estimate.step_seconds;
  }
  estimate.formula = formula_of(*model, x, estimate.batch);
  if (estimate.formula && estimate.step_seconds > 0) {
    estimate.model_flops = estimate.formula->flops();
    estimate.model_flops_per_chip_per_second =
        estimate.model_flops / static_cast<double>(estimate.chips * estimate.slices) / estimate.step_seconds;
    if (estimate.peak_flops_per_chip > 0) estimate.mfu = estimate.model_flops_per_chip_per_second / estimate.peak_flops_per_chip;
  }
  int64_t state_sharded_over = 1;
  for (const auto& [name, size] : options.mesh) {
    if (name != "data") state_sharded_over *= size;
  }
  estimate.memory = memory_fit(analysis, system.value("hbm_capacity_bytes_per_chip", 0.0), estimate.batch_per_chip,
                               state_sharded_over);
  if (!estimate.memory.fits && remat != RematPolicy::kFull) {
    estimate.memory.advice += ", or full rematerialization (--remat full), which keeps fewer of the step's values";
  }

  // Energy: the ops' (one chip's, every chip alike), the links', idle power over the step.
  if (totals.energy) {
    const TpuEnergy& energy = *totals.energy;
    const double dynamic = energy.total_j - (energy.static_missing ? 0.0 : energy.static_j);
    double idle_w = 0;
    const nlohmann::json& figures = system["energy"];
    if (figures.is_object() && figures["idle_power_w"].is_number()) idle_w = figures["idle_power_w"].get<double>();
    const double per_chip = dynamic + link_energy + idle_w * estimate.step_seconds;
    estimate.energy_j = per_chip * static_cast<double>(estimate.chips * estimate.slices);
    estimate.average_power_w = estimate.step_seconds > 0 ? per_chip / estimate.step_seconds : 0;
    std::vector<std::string> left_out;
    if (!link_energy_known) left_out.push_back("links (no energy per link byte)");
    if (estimate.slices > 1) left_out.push_back("the network between slices");
    if (energy.vector_missing) left_out.push_back("vector unit");
    if (idle_w == 0) left_out.push_back("idle power (not published)");
    if (!left_out.empty()) {
      estimate.energy_note = "not counted: ";
      for (size_t part = 0; part < left_out.size(); ++part) estimate.energy_note += (part ? ", " : "") + left_out[part];
    }
  } else {
    estimate.energy_note = "n/a: the preset has no per-operation energies";
  }
  estimate.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return estimate;
}

std::string tpu_pod_estimate_json(const TpuPodEstimate& estimate) {
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const TpuCollectiveCost& cost : estimate.collectives) {
    collectives.push_back({{"kind", cost.kind}, {"axes", cost.axes}, {"count", cost.count}, {"bytes", cost.bytes},
                           {"seconds", cost.seconds}, {"chip_seconds", cost.chip_seconds}});
  }
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const TpuOpCost& cost : estimate.by_op) {
    ops.push_back({{"op", cost.op}, {"count", cost.count}, {"seconds", cost.seconds}, {"flops", cost.flops},
                   {"hbm_bytes", cost.hbm_bytes}, {"unit", cost.on_mxu ? "mxu" : "vector"}});
  }
  nlohmann::ordered_json formula = nullptr;
  if (estimate.formula) {
    const ModelFlopsFormula& f = *estimate.formula;
    formula = {{"text", "6 N S B + 12 H L hd S^2 B"}, {"N", f.parameters}, {"S", f.sequence}, {"B", f.batch},
               {"H", f.heads}, {"L", f.layers}, {"hd", f.head_dim}};
  }
  const nlohmann::ordered_json document{
      {"model", estimate.model},
      {"system", nlohmann::json::parse(estimate.system_json, nullptr, false)},
      {"mesh", estimate.mesh},
      {"chips", estimate.chips},
      {"slices", estimate.slices},
      {"batch", estimate.batch},
      {"batch_per_chip", estimate.batch_per_chip},
      {"remat", estimate.remat},
      {"async_collectives", estimate.async_collectives},
      {"scan_layers", estimate.scan_layers},
      {"step_seconds", estimate.step_seconds},
      {"compute_seconds", estimate.schedule.compute_seconds},
      {"summing_seconds", estimate.summing_seconds},
      {"exposed_collective_seconds", estimate.schedule.exposed_collective_seconds},
      {"link_busy_seconds", estimate.schedule.link_busy_seconds},
      {"shares", {{"mxu", estimate.shares.mxu},
                  {"vector", estimate.shares.vector},
                  {"hbm_stalls", estimate.shares.hbm_stalls},
                  {"reduction_sums", estimate.shares.reduction_sums},
                  {"exposed_collectives", estimate.shares.exposed_collectives}}},
      {"model_flops_formula", formula},
      {"model_flops", estimate.model_flops},
      {"model_tflops_per_chip", estimate.model_flops_per_chip_per_second / 1e12},
      {"mfu", estimate.mfu},
      {"hardware_flops_per_chip", estimate.hardware_flops_per_chip},
      {"hardware_tflops_per_chip", estimate.hardware_flops_per_chip_per_second / 1e12},
      {"peak_tflops_per_chip", estimate.peak_flops_per_chip / 1e12},
      {"hbm", {{"capacity_bytes", estimate.memory.capacity_bytes},
               {"state_bytes", estimate.memory.state_bytes},
               {"batch_bytes", estimate.memory.batch_bytes},
               {"activation_bytes", estimate.memory.activation_bytes},
               {"total_bytes", estimate.memory.total_bytes},
               {"fits", estimate.memory.fits},
               {"advice", estimate.memory.advice}}},
      {"hbm_traffic_bytes_per_chip", estimate.hbm_bytes_per_chip},
      {"ops_recomputed", estimate.ops_recomputed},
      {"compiled_ops", estimate.compiled_ops},
      {"energy_j", estimate.energy_j ? nlohmann::ordered_json(*estimate.energy_j) : nlohmann::ordered_json(nullptr)},
      {"energy_note", estimate.energy_note},
      {"average_power_w", estimate.average_power_w},
      {"collectives", collectives},
      {"by_op", ops},
      {"wall_seconds", estimate.wall_seconds}};
  return document.dump(2);
}

}  // namespace accel::experiment
