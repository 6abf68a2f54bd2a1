#include "emulator_totals.hpp"

#include <accel/tpu_emulator.hpp>

namespace accel::experiment {

std::optional<EmulatorTotals> read_emulator_totals(int physical_index) {
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) return std::nullopt;
  return emulator->totals(physical_index);
}

std::optional<TpuEnergy> read_emulator_energy() {
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  return emulator ? emulator->system_energy() : std::nullopt;
}

void reset_emulator_totals() {
  if (const std::optional<TpuEmulator> emulator = TpuEmulator::find()) emulator->reset_totals();
}

std::string emulator_system_json() {
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  return emulator ? emulator->system_json() : "";
}

}  // namespace accel::experiment
