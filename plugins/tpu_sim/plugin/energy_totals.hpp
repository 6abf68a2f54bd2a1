// A TensorCore's running energy totals (the energy fields of
// AccelTpuSimDeviceTotals): what an op adds (op_execution.cpp) and what a
// core's share of an all-reduce adds (tpu_sim_extension.cpp). The caller
// holds the core's timeline lock.
#pragma once

#include <accel/plugin/tpu_sim_extension.h>

#include "timing/energy_model.hpp"

namespace accel::tpu_sim {

inline void add_energy(AccelTpuSimDeviceTotals& totals, const tpu::Energy& energy) {
  totals.mac_energy_j += energy.mac_j;
  totals.sram_energy_j += energy.sram_j;
  totals.hbm_energy_j += energy.hbm_j;
  totals.link_energy_j += energy.link_j;
  totals.vector_energy_j += energy.vector_j;
  totals.energy_j += energy.total_j();
  if (energy.link_missing) totals.energy_missing |= ACCEL_TPU_SIM_ENERGY_LINK_MISSING;
  if (energy.vector_missing) totals.energy_missing |= ACCEL_TPU_SIM_ENERGY_VECTOR_MISSING;
}

}  // namespace accel::tpu_sim
