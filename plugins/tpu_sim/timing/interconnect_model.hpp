// Simulated time of an all-reduce of B bytes across the chips of a system
// over its inter-chip links (ICI). Torus and mesh slices use a
// dimension-ordered algorithm: a reduce-scatter along each dimension in turn
// (the data shrinks by that dimension's size each time), then all-gathers
// back. Each step is a bucket (ring) algorithm on that dimension's ring; with
// wrap-around links the ring runs both ways at once. Cores of one chip first
// combine their partials through HBM.
#pragma once

#include <string>
#include <vector>

#include "timing/hardware_config.hpp"

namespace accel::tpu {

enum class AllReduceAlgorithm {
  kDimensionOrdered,  // per torus/mesh dimension (default)
  kSingleRing,        // one ring through all chips
};

struct AllReduceEstimate {
  double seconds = 0;
  double link_seconds = 0;     // bandwidth term over the links
  double latency_seconds = 0;  // per-step link latency term
  double on_chip_seconds = 0;  // combining the cores of a chip through HBM
  int chips = 1;
  int steps = 0;               // communication steps
  // What each chip moves (energy_model.hpp): bytes it sends over its links,
  // and bytes its cores read and write in HBM to combine their partials.
  double link_bytes_per_chip = 0;
  double hbm_bytes_per_chip = 0;
  std::string algorithm;
};

AllReduceEstimate estimate_all_reduce(const Hardware& hw, double bytes,
                                      AllReduceAlgorithm algorithm = AllReduceAlgorithm::kDimensionOrdered);

}  // namespace accel::tpu
