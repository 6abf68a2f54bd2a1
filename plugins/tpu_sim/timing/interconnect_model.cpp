#include "timing/interconnect_model.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace accel::tpu {
namespace {

bool has_wraparound(Topology topology) {
  return topology == Topology::kRing || topology == Topology::kTorus2D || topology == Topology::kTorus3D;
}

// A bucket (ring) collective among `members` chips: each sends `passes` times
// (members - 1) / members of `bytes` over its link, both ways at once where
// the ring wraps around, in `steps` hops of latency.
void add_ring(AllReduceEstimate& out, const InterconnectConfig& net, int members, bool wraps, double passes,
              int steps, double bytes) {
  const double ring_bandwidth = net.link_bandwidth_bytes_per_s * (wraps ? 2.0 : 1.0);
  const double fraction = static_cast<double>(members - 1) / members;
  const double sent = passes * fraction * bytes;
  out.link_bytes_per_chip += sent;
  out.link_seconds += sent / ring_bandwidth;
  out.latency_seconds += steps * net.link_latency_s;
  out.steps += steps;
}

}  // namespace

bool axis_wraps_around(const Hardware& hw, int axis) {
  const auto& net = hw.interconnect;
  if (!has_wraparound(net.topology) || axis < 0 || axis >= static_cast<int>(net.dims.size())) return false;
  const int size = net.dims[static_cast<size_t>(axis)];
  return size > 1 && (net.wraparound_axis <= 0 || size % net.wraparound_axis == 0);
}

std::string_view to_string(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
  }
  return "?";
}

bool parse_collective(std::string_view text, Collective& collective) {
  for (Collective candidate :
       {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll}) {
    if (text == to_string(candidate)) {
      collective = candidate;
      return true;
    }
  }
  return false;
}

AllReduceEstimate estimate_collective(const Hardware& hw, Collective collective, double bytes, int axis) {
  if (bytes < 0) throw std::invalid_argument("a collective's size must be >= 0 bytes");
  const auto& net = hw.interconnect;
  if (net.topology == Topology::kNone || axis < 0 || axis >= static_cast<int>(net.dims.size())) {
    throw std::invalid_argument("axis " + std::to_string(axis) + " is not an axis of the slice (it has " +
                                std::to_string(net.dims.size()) + ")");
  }
  AllReduceEstimate out;
  const int members = net.dims[static_cast<size_t>(axis)];
  out.chips = members;
  const bool wraps = axis_wraps_around(hw, axis);
  out.algorithm = std::string(to_string(collective)) + (wraps ? " on a bidirectional ring" : " on a line");
  if (members <= 1) return out;
  double passes = 1.0;  // of (members - 1) / members of the bytes over the ring
  int steps = members - 1;
  switch (collective) {
    case Collective::kAllGather: case Collective::kReduceScatter: break;
    case Collective::kAllReduce: passes = 2.0, steps = 2 * (members - 1); break;
    case Collective::kAllToAll: passes = wraps ? 0.25 : 0.5; break;
  }
  add_ring(out, net, members, wraps, passes, steps, bytes);
  out.seconds = out.link_seconds + out.latency_seconds;
  return out;
}

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
  // Reduce-scatter then all-gather: each member sends (d - 1) / d of the data twice.
  auto ring_all_reduce = [&](int members, double data, bool wraps) {
    add_ring(out, net, members, wraps, 2.0, 2 * (members - 1), data);
  };
  if (algorithm == AllReduceAlgorithm::kSingleRing) {
    out.algorithm = "single ring";
    ring_all_reduce(hw.chips, bytes, has_wraparound(net.topology));
  } else {
    out.algorithm = "dimension-ordered " + std::string(to_string(net.topology));
    double data = bytes;
    for (size_t axis = 0; axis < net.dims.size(); ++axis) {
      const int size = net.dims[axis];
      if (size <= 1) continue;
      ring_all_reduce(size, data, axis_wraps_around(hw, static_cast<int>(axis)));
      data /= size;
    }
  }
  out.seconds = out.link_seconds + out.latency_seconds + out.on_chip_seconds;
  return out;
}

}  // namespace accel::tpu
