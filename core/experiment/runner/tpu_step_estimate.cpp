// estimate_tpu_step: one compiled step of a run's model on /TPU:0, measured
// on the emulator's timeline (the core's totals, reset between the tracing
// step and the measured one) and by the ops the plugin reported (profiler).
#include <accel/experiment/tpu_step_estimate.hpp>

#include <accel/distribute/tpu_strategy.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>
#include <accel/runtime.hpp>
#include <accel/tpu_emulator.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>

#include "backend_peak.hpp"
#include "estimate_inputs.hpp"
#include "tpu_op_costs.hpp"
#include "model_factory.hpp"
#include "strategy_factory.hpp"

namespace accel::experiment {
namespace {

// The filter gradients' kernels (a convolution's weight gradient, alone or
// fused with a pooling gradient) with their bytes at the variables' width,
// the rest of the gradients at the end of the backward pass: the first
// optimizer update. Records are in issue order on one core's timeline.
void gradients_from(const std::vector<profiler::OpRecord>& records, TpuStepEstimate& estimate) {
  double identified = 0;
  for (const profiler::OpRecord& record : records) {
    if (record.op.find("UPDATE") != std::string::npos) {  // SGD_UPDATE, ADAM_UPDATE, RMSPROP_UPDATE
      if (estimate.backward_end_seconds == 0) estimate.backward_end_seconds = record.start_seconds;
    }
  }
  if (estimate.backward_end_seconds == 0) estimate.backward_end_seconds = estimate.step_seconds;
  for (const profiler::OpRecord& record : records) {
    if (record.op.find("CONV2D_BACKWARD_FILTER") == std::string::npos) continue;
    const nlohmann::json details = nlohmann::json::parse(record.detail_json, nullptr, false);
    if (!details.is_object() || !details.contains("gemm")) continue;
    const double elements = details["gemm"].value("m", 0.0) * details["gemm"].value("n", 0.0);
    estimate.gradients_ready.push_back({record.start_seconds + record.duration_seconds, elements});
  }
  // Elements to bytes at the variables' width (gradient_bytes per trainable element).
  const double total_elements = estimate.gradient_elements;
  const double width = total_elements > 0 ? estimate.gradient_bytes / total_elements : 4.0;
  for (TpuGradientReady& gradient : estimate.gradients_ready) {
    gradient.bytes *= width;
    identified += gradient.bytes;
  }
  if (estimate.gradient_bytes > identified) {
    estimate.gradients_ready.push_back({estimate.backward_end_seconds, estimate.gradient_bytes - identified});
  }
}

}  // namespace

TpuStepEstimate estimate_tpu_step(const RunConfig& run, const TpuStepEstimateOptions& options) {
  if (!run.model || !run.data || !run.training) {
    throw InvalidArgumentError("run '" + run.name + "': a TPU step estimate needs a model, its data and training");
  }
  const auto wall_start = std::chrono::steady_clock::now();
  const bool tpu_strategy = run.strategy && run.strategy->name == "tpu";
  if (run.strategy && !tpu_strategy) {
    throw InvalidArgumentError("run '" + run.name + "': strategy " + run.strategy->name +
                               " does not run on the emulated TPU; a TPU step estimate takes none or tpu");
  }
  // The slice's chips are read when the emulator loads: before any device use.
  if (tpu_strategy) distribute::initialize_tpu_system(make_tpu_resolver(*run.strategy));
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) {
    throw FailedPreconditionError("no TPU emulator: the tpu_sim plugin did not load" + TpuEmulator::why_not_found());
  }
  TpuStepEstimate estimate;
  estimate.batch = options.batch > 0 ? options.batch : run.data->options.at("batch").as_int();
  estimate.training = options.training;
  estimate.system_json = emulator->system_json();
  const Device device = find_device("/TPU:0");
  const BackendPeak peak = backend_peak("/TPU:0");  // the emulator's device properties
  estimate.peak_flops = peak.peak_flops_per_second.value_or(0);
  estimate.hbm_bandwidth = peak.bandwidth_bytes_per_second.value_or(0);

  std::vector<std::string> notes;
  const std::unique_ptr<distribute::Strategy> strategy = tpu_strategy ? make_strategy(run, notes) : nullptr;
  auto* tpu = dynamic_cast<distribute::TPUStrategy*>(strategy.get());
  estimate.replicas = strategy ? strategy->num_replicas_in_sync() : 1;
  std::shared_ptr<keras::Model> model;
  {
    std::optional<DeviceScope> on_tpu;
    std::optional<distribute::StrategyScope> in_scope;
    if (strategy) {
      in_scope.emplace(*strategy);
    } else {
      on_tpu.emplace(device);
    }
    keras::set_random_seed(static_cast<uint64_t>(run.training->seed.value_or(42)));
    const keras::mixed_precision::GlobalPolicyScope policy(keras::DTypePolicy(run.training->mixed_precision));
    model = make_model(*run.model, model_input_shape(*run.model, run.data->example_shape));
    model->compile(make_optimizer(run.training->optimizer), make_loss(run.training->loss), {},
                   keras::CompileOptions{.jit_compile = true});
  }
  estimate.model = model->name();
  for (const Variable& variable : model->trainable_weights()) {
    estimate.gradient_elements += static_cast<double>(variable.shape().element_count());
    estimate.gradient_bytes += static_cast<double>(variable.shape().element_count()) *
                               static_cast<double>(dtype_size(variable.dtype()));
  }
  // The batch: on the TPU without a strategy (fed whole, so the step is only
  // its own ops); on the host under one, which splits it to the replicas
  // (host-to-HBM copies are not timed).
  const Device data_device = strategy ? find_device("/CPU:0") : device;
  const keras::KerasTensor& input = model->inputs().front();
  std::vector<int64_t> input_dims{estimate.batch};
  input_dims.insert(input_dims.end(), input.shape().begin() + 1, input.shape().end());
  const bool timing_only = emulator->timing_only();
  const Tensor x = batch_of(Shape(input_dims), input.dtype(), data_device, timing_only);
  const Tensor y =
      labels_for(run.training->loss.name, model->outputs().front().shape(), estimate.batch, data_device, timing_only);
  std::optional<DeviceScope> on_tpu;
  if (!strategy) on_tpu.emplace(device);
  auto step = [&] {
    if (options.training) {
      model->fit(x, y, {.batch_size = estimate.batch, .verbose = 0, .shuffle = false});
    } else {
      (void)model->predict(x, {.batch_size = estimate.batch, .verbose = 0});
    }
    runtime::synchronize();
  };
  step();  // traces and compiles; runs eagerly once
  emulator->reset_totals();
  if (tpu != nullptr) tpu->reset_step_times();
  profiler::start();
  step();  // the compiled step
  profiler::stop();

  const TpuCoreTotals totals = emulator->totals(device.plugin_device_index());
  std::vector<profiler::OpRecord> records = profiler::records();
  std::erase_if(records, [&](const profiler::OpRecord& record) { return record.device != device.name(); });
  estimate.step_seconds = totals.seconds;
  if (tpu != nullptr && options.training && !tpu->step_times().empty()) {
    const distribute::TpuStepTime& time = tpu->step_times().back();
    estimate.step_seconds = time.total_seconds;
    estimate.all_reduce_seconds = time.all_reduce_seconds;
    estimate.all_reduce_bytes = time.all_reduce_bytes;
  }
  estimate.cycles = totals.cycles;
  estimate.ops = totals.ops;
  estimate.hbm_bytes = static_cast<double>(totals.hbm_bytes);
  estimate.stall_cycles = totals.stall_cycles;
  estimate.mxu_utilization = totals.mxu_utilization;
  estimate.energy = emulator->system_energy();
  if (estimate.energy && estimate.step_seconds > 0) {
    const nlohmann::json system = nlohmann::json::parse(estimate.system_json, nullptr, false);
    const int chips = system.is_object() ? std::max(1, system.value("chips", 1)) : 1;
    estimate.average_power_w = estimate.energy->total_j / estimate.step_seconds / chips;
  }
  estimate.by_op = costs_by_op(records);
  gradients_from(records, estimate);
  for (const TpuOpCost& cost : estimate.by_op) {
    estimate.flops += cost.flops;
    (cost.on_mxu ? estimate.mxu_cycles : estimate.vector_cycles) += cost.compute_cycles;
  }
  // Per core: the first replica's work against one core's roof.
  const double core_seconds = totals.seconds;
  estimate.achieved_flops = core_seconds > 0 ? estimate.flops / core_seconds : 0;
  estimate.arithmetic_intensity = estimate.hbm_bytes > 0 ? estimate.flops / estimate.hbm_bytes : 0;
  estimate.roofline_flops = std::min(estimate.peak_flops, estimate.arithmetic_intensity * estimate.hbm_bandwidth);
  estimate.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return estimate;
}

std::string tpu_step_estimate_json(const TpuStepEstimate& estimate) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const TpuOpCost& cost : estimate.by_op) {
    ops.push_back({{"op", cost.op},
                   {"count", cost.count},
                   {"seconds", cost.seconds},
                   {"share", estimate.step_seconds > 0 ? cost.seconds / estimate.step_seconds : 0.0},
                   {"cycles", cost.cycles},
                   {"compute_cycles", cost.compute_cycles},
                   {"stall_cycles", cost.stall_cycles},
                   {"unit", cost.on_mxu ? "mxu" : "vector"},
                   {"flops", cost.flops},
                   {"hbm_bytes", cost.hbm_bytes},
                   {"compute_bound_share", cost.compute_bound_share}});
  }
  const nlohmann::ordered_json document{
      {"model", estimate.model},
      {"system", nlohmann::json::parse(estimate.system_json, nullptr, false)},
      {"batch", estimate.batch},
      {"step", estimate.training ? "training" : "inference"},
      {"replicas", estimate.replicas},
      {"step_seconds", estimate.step_seconds},
      {"all_reduce_seconds", estimate.all_reduce_seconds},
      {"all_reduce_bytes", estimate.all_reduce_bytes},
      {"gradient_bytes", estimate.gradient_bytes},
      {"one_replica_timed", estimate.one_replica_timed},
      {"all_reduce_exposed_seconds", estimate.all_reduce_exposed_seconds},
      {"cycles", estimate.cycles},
      {"ops", estimate.ops},
      {"flops", estimate.flops},
      {"hbm_bytes", estimate.hbm_bytes},
      {"stall_cycles", estimate.stall_cycles},
      {"mxu_cycles", estimate.mxu_cycles},
      {"vector_cycles", estimate.vector_cycles},
      {"mxu_utilization", estimate.mxu_utilization},
      {"peak_flops", estimate.peak_flops},
      {"hbm_bandwidth", estimate.hbm_bandwidth},
      {"achieved_flops", estimate.achieved_flops},
      {"arithmetic_intensity", estimate.arithmetic_intensity},
      {"roofline_flops", estimate.roofline_flops},
      {"energy", estimate.energy ? nlohmann::ordered_json{{"total_j", estimate.energy->total_j},
                                                          {"mac_j", estimate.energy->mac_j},
                                                          {"sram_j", estimate.energy->sram_j},
                                                          {"hbm_j", estimate.energy->hbm_j},
                                                          {"link_j", estimate.energy->link_missing
                                                                         ? nlohmann::ordered_json(nullptr)
                                                                         : nlohmann::ordered_json(estimate.energy->link_j)},
                                                          {"vector_j", estimate.energy->vector_j},
                                                          {"static_j", estimate.energy->static_missing
                                                                           ? nlohmann::ordered_json(nullptr)
                                                                           : nlohmann::ordered_json(estimate.energy->static_j)},
                                                          {"average_power_w", estimate.average_power_w}}
                                 : nlohmann::ordered_json(nullptr)},
      {"by_op", ops},
      {"wall_seconds", estimate.wall_seconds}};
  return document.dump(2);
}

}  // namespace accel::experiment
