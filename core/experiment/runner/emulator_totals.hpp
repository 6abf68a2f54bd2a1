// The TPU emulator's own figures through its plugin extension
// (accel.tpu_sim.v1): per-core totals of the simulated timeline, resetting
// them, the whole system's energy, and the emulated system's description.
// Absent (nullopt / "") when the tpu_sim plugin is not loaded (or, for the
// energy, when its preset has no energy figures).
#pragma once

#include <accel/experiment/run_results.hpp>

#include <optional>
#include <string>

namespace accel::experiment {

std::optional<EmulatorTotals> read_emulator_totals(int physical_index);
std::optional<TpuEnergy> read_emulator_energy();
void reset_emulator_totals();
std::string emulator_system_json();

}  // namespace accel::experiment
