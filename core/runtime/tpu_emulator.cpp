#include <accel/tpu_emulator.hpp>

#include <accel/error.hpp>
#include <accel/plugin/tpu_sim_extension.h>
#include <accel/runtime.hpp>

#include <cstddef>

#include "runtime/status.hpp"

namespace accel {

std::optional<TpuEmulator> TpuEmulator::find() {
  const auto found = runtime::plugin_extension("tpu_sim", ACCEL_TPU_SIM_EXTENSION_NAME);
  if (!found || found->table == nullptr) return std::nullopt;
  return TpuEmulator(static_cast<const AccelTpuSimExtension*>(found->table), found->context);
}

TpuCoreTotals TpuEmulator::totals(int core) const {
  AccelTpuSimDeviceTotals totals{};
  totals.struct_size = sizeof(totals);
  detail::check_status(table_->device_totals(context_, core, &totals), "TPU emulator totals of core " + std::to_string(core));
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
  return result;
}

void TpuEmulator::reset_totals() const {
  detail::check_status(table_->reset_totals(context_, -1), "TPU emulator reset_totals");
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

}  // namespace accel
