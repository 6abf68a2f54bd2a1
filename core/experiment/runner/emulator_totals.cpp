#include "emulator_totals.hpp"

#include <accel/tpu_emulator.hpp>

namespace accel::experiment {

std::optional<EmulatorTotals> read_emulator_totals(int physical_index) {
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) return std::nullopt;
  const TpuCoreTotals totals = emulator->totals(physical_index);
  EmulatorTotals result;
  result.ops = totals.ops;
  result.cycles = totals.cycles;
  result.seconds = totals.seconds;
  result.clock_hz = totals.clock_hz;
  result.hbm_bytes = totals.hbm_bytes;
  result.stall_cycles = totals.stall_cycles;
  result.mxu_utilization = totals.mxu_utilization;
  return result;
}

void reset_emulator_totals() {
  if (const std::optional<TpuEmulator> emulator = TpuEmulator::find()) emulator->reset_totals();
}

std::string emulator_system_json() {
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  return emulator ? emulator->system_json() : "";
}

}  // namespace accel::experiment
