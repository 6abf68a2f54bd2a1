// Energy of one op or one all-reduce, in joules, from counts the timing
// model already has (MACs, on-chip SRAM bytes, HBM bytes, link bytes,
// vector element-instructions) times the preset's energy figures
// (EnergyConfig, each from a published source; docs/tpu-emulator.md,
// "Energy"). Dynamic energy of those operations only: no static or idle
// power, no clock tree, no control. A preset without figures gets no
// energy (nullopt), never an estimate.
#pragma once

#include <optional>

#include "timing/hardware_config.hpp"
#include "timing/interconnect_model.hpp"

namespace accel::tpu {

// What one op (or collective) does, as energy_of charges it. Doubles: an
// op's timing already refuses counts past int64; these only multiply them.
struct EnergyCounts {
  double macs = 0;                // MXU multiply-accumulates
  double sram_bytes = 0;          // bytes read from or written to VMEM
  double hbm_bytes = 0;           // bytes read from or written to HBM
  double link_bytes = 0;          // bytes sent over inter-chip links
  double vector_element_ops = 0;  // vector instructions x the elements each works on
};

// Joules per kind of work. A kind the preset has no figure for (link,
// vector) counts 0 and is flagged missing when such work happened.
struct Energy {
  double mac_j = 0;
  double sram_j = 0;
  double hbm_j = 0;
  double link_j = 0;
  double vector_j = 0;
  bool link_missing = false;    // link bytes moved without a link figure
  bool vector_missing = false;  // vector work ran without a vector figure
  // The parts with figures; a missing part is left out, not guessed.
  double total_j() const { return mac_j + sram_j + hbm_j + link_j + vector_j; }
  Energy& operator+=(const Energy& other);
  Energy scaled(double factor) const;  // `factor` copies of the same work
};

// nullopt when `hw` has no energy figures.
std::optional<Energy> energy_of(const Hardware& hw, const EnergyCounts& counts);

// The whole all-reduce over every chip of the estimate: each chip's link
// bytes, and its on-chip combine's HBM bytes (each also a VMEM access).
std::optional<Energy> all_reduce_energy(const Hardware& hw, const AllReduceEstimate& estimate);

}  // namespace accel::tpu
