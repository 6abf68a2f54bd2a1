#include "timing/interconnect_model.hpp"

#include <stdexcept>

namespace accel::tpu {
namespace {

bool has_wraparound(Topology topology) {
  return topology == Topology::kRing || topology == Topology::kTorus2D || topology == Topology::kTorus3D;
}

}  // namespace

AllReduceEstimate estimate_all_reduce(const Hardware& hw, double bytes, AllReduceAlgorithm algorithm) {
  if (bytes < 0) throw std::invalid_argument("all-reduce size must be >= 0 bytes");
  AllReduceEstimate out;
  out.chips = hw.chips;
  if (hw.cores_per_chip > 1) {
    // Each core reads its peers' partials and writes the sum: 2 B through HBM.
    out.on_chip_seconds = 2.0 * bytes / hw.hbm.bandwidth_bytes_per_s;
    out.hbm_bytes_per_chip = 2.0 * bytes;
  }
  const auto& net = hw.interconnect;
  if (hw.chips <= 1 || net.topology == Topology::kNone) {
    out.algorithm = "on-chip";
    out.seconds = out.on_chip_seconds;
    return out;
  }
  // A bidirectional ring (wrap-around links) moves half the data each way.
  const double ring_bandwidth = net.link_bandwidth_bytes_per_s * (has_wraparound(net.topology) ? 2.0 : 1.0);
  auto ring_all_reduce = [&](int members, double data) {
    const double fraction = static_cast<double>(members - 1) / members;
    out.link_seconds += 2.0 * fraction * data / ring_bandwidth;
    // Reduce-scatter then all-gather: each member sends (d - 1) / d of the data twice.
    out.link_bytes_per_chip += 2.0 * fraction * data;
    out.latency_seconds += 2.0 * (members - 1) * net.link_latency_s;
    out.steps += 2 * (members - 1);
  };
  if (algorithm == AllReduceAlgorithm::kSingleRing) {
    out.algorithm = "single ring";
    ring_all_reduce(hw.chips, bytes);
  } else {
    out.algorithm = "dimension-ordered " + std::string(to_string(net.topology));
    double data = bytes;
    for (int size : net.dims) {
      if (size <= 1) continue;
      ring_all_reduce(size, data);
      data /= size;
    }
  }
  out.seconds = out.link_seconds + out.latency_seconds + out.on_chip_seconds;
  return out;
}

}  // namespace accel::tpu
