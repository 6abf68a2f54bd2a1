#include <accel/tpu_emulator.hpp>

#include <accel/error.hpp>
#include <accel/plugin/tpu_sim_extension.h>
#include <accel/runtime.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "runtime/status.hpp"

namespace accel {

std::optional<TpuEmulator> TpuEmulator::find() {
  const auto found = runtime::plugin_extension("tpu_sim", ACCEL_TPU_SIM_EXTENSION_NAME);
  if (!found || found->table == nullptr) return std::nullopt;
  return TpuEmulator(static_cast<const AccelTpuSimExtension*>(found->table), found->context);
}

std::string TpuEmulator::why_not_found() {
  std::string reasons;
  for (const runtime::SkippedPlugin& skipped : runtime::skipped_plugins()) {
    if (skipped.name == "tpu_sim" || skipped.path.find("tpu_sim") != std::string::npos) {
      reasons += "; " + skipped.path + " was skipped: " + skipped.reason;
    }
  }
  return reasons.empty() ? "; no libaccel-plugin-tpu_sim.so was found (see `accel devices`)" : reasons;
}

namespace {

// What the system JSON says about power: how many cores there are and each
// one's share of its chip's idle power (none when the preset publishes none).
struct SystemPower {
  int cores = 0;
  std::optional<double> idle_watts_per_core;
};

SystemPower system_power(const std::string& system_json) {
  SystemPower power;
  const nlohmann::json system = nlohmann::json::parse(system_json, nullptr, false);
  if (!system.is_object()) return power;
  power.cores = system.value("devices", 0);
  const nlohmann::json& energy = system["energy"];
  if (energy.is_object() && energy.value("idle_power_w", nlohmann::json()).is_number()) {
    power.idle_watts_per_core = energy["idle_power_w"].get<double>() / std::max(1, system.value("cores_per_chip", 1));
  }
  return power;
}

// One core's totals as the extension reports them: dynamic energy only.
TpuCoreTotals read_totals(const AccelTpuSimExtension& table, AccelPluginContext* context, int core) {
  AccelTpuSimDeviceTotals totals{};
  totals.struct_size = sizeof(totals);
  detail::check_status(table.device_totals(context, core, &totals), "TPU emulator totals of core " + std::to_string(core));
  TpuCoreTotals result;
  result.ops = totals.ops;
  result.cycles = totals.cycles;
  result.seconds = totals.seconds;
  result.clock_hz = totals.clock_hz;
  result.hbm_bytes = totals.hbm_bytes;
  result.stall_cycles = totals.stall_cycles;
  result.mxu_utilization = totals.mxu_utilization;
  if (ACCEL_STRUCT_HOLDS(&totals, AccelTpuSimDeviceTotals, idle_cycles)) {
    result.collective_cycles = totals.collective_cycles;
    result.idle_cycles = totals.idle_cycles;
  }
  if (ACCEL_STRUCT_HOLDS(&totals, AccelTpuSimDeviceTotals, vector_energy_j) && totals.energy_known != 0) {
    TpuEnergy& energy = result.energy.emplace();
    energy.total_j = totals.energy_j;
    energy.mac_j = totals.mac_energy_j;
    energy.sram_j = totals.sram_energy_j;
    energy.hbm_j = totals.hbm_energy_j;
    energy.link_j = totals.link_energy_j;
    energy.vector_j = totals.vector_energy_j;
    energy.link_missing = (totals.energy_missing & ACCEL_TPU_SIM_ENERGY_LINK_MISSING) != 0;
    energy.vector_missing = (totals.energy_missing & ACCEL_TPU_SIM_ENERGY_VECTOR_MISSING) != 0;
  }
  return result;
}

// Static: the core's share of its chip's idle power, over its timeline.
void add_static_energy(TpuCoreTotals& totals, const SystemPower& power) {
  if (!totals.energy) return;
  TpuEnergy& energy = *totals.energy;
  if (power.idle_watts_per_core) {
    energy.static_j = *power.idle_watts_per_core * totals.seconds;
    energy.total_j += energy.static_j;
  } else {
    energy.static_missing = true;
  }
}

}  // namespace

TpuCoreTotals TpuEmulator::totals(int core) const {
  TpuCoreTotals result = read_totals(*table_, context_, core);
  add_static_energy(result, system_power(system_json()));
  return result;
}

TpuEnergy& TpuEnergy::operator+=(const TpuEnergy& other) {
  total_j += other.total_j;
  mac_j += other.mac_j;
  sram_j += other.sram_j;
  hbm_j += other.hbm_j;
  link_j += other.link_j;
  vector_j += other.vector_j;
  static_j += other.static_j;
  link_missing = link_missing || other.link_missing;
  vector_missing = vector_missing || other.vector_missing;
  static_missing = static_missing || other.static_missing;
  return *this;
}

std::optional<TpuEnergy> TpuEmulator::system_energy() const {
  // One look at the system JSON for every core: how many, and their idle power.
  const SystemPower power = system_power(system_json());
  std::optional<TpuEnergy> sum;
  for (int core = 0; core < power.cores; ++core) {
    TpuCoreTotals totals = read_totals(*table_, context_, core);
    if (!totals.energy) return std::nullopt;  // no figures: every core is the same
    add_static_energy(totals, power);
    if (!sum) sum.emplace();
    *sum += *totals.energy;
  }
  return sum;
}

void TpuEmulator::reset_totals() const {
  detail::check_status(table_->reset_totals(context_, -1), "TPU emulator reset_totals");
}

bool TpuEmulator::timing_only() const {
  const nlohmann::json system = nlohmann::json::parse(system_json(), nullptr, false);
  return system.is_object() && system.value("values", std::string("compute")) == "none";
}

std::string TpuEmulator::system_json() const {
  const char* text = table_->system_json(context_);
  return text == nullptr ? "" : text;
}

TpuAllReduceTiming TpuEmulator::run_all_reduce(double bytes, const std::vector<int32_t>& cores) const {
  if (!ACCEL_STRUCT_HOLDS(table_, AccelTpuSimExtension, run_all_reduce) || table_->run_all_reduce == nullptr) {
    throw UnimplementedError("the loaded TPU emulator plugin predates run_all_reduce (accel.tpu_sim.v1)");
  }
  AccelTpuSimAllReduce estimate{};
  estimate.struct_size = sizeof(estimate);
  double start_seconds = 0;
  detail::check_status(table_->run_all_reduce(context_, bytes, cores.data(), static_cast<int32_t>(cores.size()),
                                              &estimate, &start_seconds),
                       "TPU emulator all-reduce");
  return {start_seconds,          estimate.seconds,  estimate.link_seconds, estimate.latency_seconds,
          estimate.on_chip_seconds, estimate.chips, estimate.steps};
}

namespace {

TpuCollectiveTiming timing_of(const AccelTpuSimCollective& estimate) {
  TpuCollectiveTiming timing;
  timing.seconds = estimate.seconds;
  timing.link_seconds = estimate.link_seconds;
  timing.latency_seconds = estimate.latency_seconds;
  timing.link_bytes_per_chip = estimate.link_bytes_per_chip;
  if (estimate.link_energy_known != 0) timing.link_energy_j = estimate.link_energy_j;
  timing.chips = estimate.chips;
  timing.steps = estimate.steps;
  if (ACCEL_STRUCT_HOLDS(&estimate, AccelTpuSimCollective, chip_seconds)) timing.chip_seconds = estimate.chip_seconds;
  return timing;
}

}  // namespace

TpuCollectiveTiming TpuEmulator::estimate_collective(std::string_view kind, double bytes,
                                                     const std::vector<TpuChipSpan>& spans) const {
  if (!ACCEL_STRUCT_HOLDS(table_, AccelTpuSimExtension, estimate_collective) || table_->estimate_collective == nullptr) {
    throw UnimplementedError("the loaded TPU emulator plugin predates estimate_collective (accel.tpu_sim.v1)");
  }
  int32_t code = -1;
  if (kind == "all_reduce") code = ACCEL_TPU_SIM_ALL_REDUCE;
  if (kind == "all_gather") code = ACCEL_TPU_SIM_ALL_GATHER;
  if (kind == "reduce_scatter") code = ACCEL_TPU_SIM_REDUCE_SCATTER;
  if (kind == "all_to_all") code = ACCEL_TPU_SIM_ALL_TO_ALL;
  if (code < 0) {
    throw InvalidArgumentError("collective '" + std::string(kind) +
                               "': expected all_gather, reduce_scatter, all_reduce or all_to_all");
  }
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  for (const TpuChipSpan& span : spans) {
    sizes.push_back(span.size);
    strides.push_back(span.stride);
  }
  AccelTpuSimCollective estimate{};
  estimate.struct_size = sizeof(estimate);
  detail::check_status(table_->estimate_collective(context_, code, bytes, sizes.data(), strides.data(),
                                                   static_cast<int32_t>(spans.size()), &estimate),
                       "TPU emulator collective");
  return timing_of(estimate);
}

TpuCollectiveTiming TpuEmulator::estimate_dcn_all_reduce(double bytes, int slices) const {
  if (!ACCEL_STRUCT_HOLDS(table_, AccelTpuSimExtension, estimate_dcn_all_reduce) ||
      table_->estimate_dcn_all_reduce == nullptr) {
    throw UnimplementedError("the loaded TPU emulator plugin predates estimate_dcn_all_reduce (accel.tpu_sim.v1)");
  }
  AccelTpuSimCollective estimate{};
  estimate.struct_size = sizeof(estimate);
  detail::check_status(table_->estimate_dcn_all_reduce(context_, bytes, slices, &estimate), "TPU emulator DCN all-reduce");
  return timing_of(estimate);
}

}  // namespace accel
