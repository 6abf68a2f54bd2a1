#include "timing/energy_model.hpp"

namespace accel::tpu {
namespace {

constexpr double kJoulesPerPicojoule = 1e-12;

}  // namespace

Energy& Energy::operator+=(const Energy& other) {
  mac_j += other.mac_j;
  sram_j += other.sram_j;
  hbm_j += other.hbm_j;
  link_j += other.link_j;
  vector_j += other.vector_j;
  link_missing = link_missing || other.link_missing;
  vector_missing = vector_missing || other.vector_missing;
  return *this;
}

Energy Energy::scaled(double factor) const {
  Energy out = *this;
  out.mac_j *= factor;
  out.sram_j *= factor;
  out.hbm_j *= factor;
  out.link_j *= factor;
  out.vector_j *= factor;
  return out;
}

std::optional<Energy> energy_of(const Hardware& hw, const EnergyCounts& counts) {
  if (!hw.energy) return std::nullopt;
  const EnergyConfig& figures = *hw.energy;
  Energy energy;
  energy.mac_j = counts.macs * figures.mac_pj * kJoulesPerPicojoule;
  energy.sram_j = counts.sram_bytes * figures.sram_pj_per_byte * kJoulesPerPicojoule;
  energy.hbm_j = counts.hbm_bytes * figures.hbm_pj_per_byte * kJoulesPerPicojoule;
  if (figures.link_pj_per_byte) {
    energy.link_j = counts.link_bytes * *figures.link_pj_per_byte * kJoulesPerPicojoule;
  } else {
    energy.link_missing = counts.link_bytes > 0;
  }
  if (figures.vector_pj_per_element_op) {
    energy.vector_j = counts.vector_element_ops * *figures.vector_pj_per_element_op * kJoulesPerPicojoule;
  } else {
    energy.vector_missing = counts.vector_element_ops > 0;
  }
  return energy;
}

std::optional<Energy> all_reduce_energy(const Hardware& hw, const AllReduceEstimate& estimate) {
  const double chips = static_cast<double>(estimate.chips);
  EnergyCounts counts;
  counts.link_bytes = chips * estimate.link_bytes_per_chip;
  counts.hbm_bytes = chips * estimate.hbm_bytes_per_chip;
  counts.sram_bytes = counts.hbm_bytes;  // HBM traffic passes through VMEM
  return energy_of(hw, counts);
}

}  // namespace accel::tpu
