#include "timing/interconnect_model.hpp"

#include <algorithm>
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

// A reduction among `members` chips sums (members - 1) / members of `bytes`
// on each: TPUs reduce on the TensorCore, not in the network, reading its
// own partial and the one that arrived and writing the sum through HBM.
void add_summing(AllReduceEstimate& out, const Hardware& hw, long long members, double bytes) {
  if (members <= 1 || hw.hbm.bandwidth_bytes_per_s <= 0) return;
  const double moved = 3.0 * static_cast<double>(members - 1) / static_cast<double>(members) * bytes;
  out.hbm_bytes_per_chip += moved;
  out.on_chip_seconds += moved / hw.hbm.bandwidth_bytes_per_s;
}

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

namespace {

// A collective's part along one torus axis: `members` chips `hop` links apart.
struct TorusSegment {
  int axis = 0;
  long long members = 1;
  long long hop = 1;
};

AllReduceEstimate collective_over(const Hardware& hw, Collective collective, double bytes,
                                  const std::vector<TorusSegment>& segments) {
  if (bytes < 0) throw std::invalid_argument("a collective's size must be >= 0 bytes");
  const auto& net = hw.interconnect;
  AllReduceEstimate out;
  long long members = 1;
  double bandwidth = 0;
  bool every_axis_wraps = true;
  for (const TorusSegment& segment : segments) {
    const bool whole_axis = segment.members * segment.hop == net.dims[static_cast<size_t>(segment.axis)];
    const bool wraps = whole_axis && axis_wraps_around(hw, segment.axis);
    every_axis_wraps = every_axis_wraps && wraps;
    members *= segment.members;
    bandwidth += net.link_bandwidth_bytes_per_s * (wraps ? 2.0 : 1.0) / static_cast<double>(segment.hop);
    const long long axis_steps = (segment.members - 1) * segment.hop;
    out.steps += static_cast<int>(collective == Collective::kAllReduce ? 2 * axis_steps : axis_steps);
  }
  out.chips = static_cast<int>(members);
  out.algorithm = std::string(to_string(collective)) + (segments.size() > 1 ? " over " + std::to_string(segments.size()) + " torus axes" : "") +
                  (every_axis_wraps ? " on bidirectional rings" : " on lines");
  if (members <= 1) {
    out.steps = 0;
    return out;
  }
  double passes = 1.0;  // of (members - 1) / members of the bytes
  switch (collective) {
    case Collective::kAllGather: case Collective::kReduceScatter: break;
    case Collective::kAllReduce: passes = 2.0; break;
    case Collective::kAllToAll: passes = every_axis_wraps ? 0.25 : 0.5; break;
  }
  out.link_bytes_per_chip = passes * static_cast<double>(members - 1) / static_cast<double>(members) * bytes;
  out.link_seconds = out.link_bytes_per_chip / bandwidth;
  out.latency_seconds = out.steps * net.link_latency_s;
  out.seconds = out.link_seconds + out.latency_seconds;
  if (collective == Collective::kReduceScatter || collective == Collective::kAllReduce) add_summing(out, hw, members, bytes);
  return out;
}

}  // namespace

AllReduceEstimate estimate_collective(const Hardware& hw, Collective collective, double bytes, int axis) {
  const auto& net = hw.interconnect;
  if (net.topology == Topology::kNone || axis < 0 || axis >= static_cast<int>(net.dims.size())) {
    throw std::invalid_argument("axis " + std::to_string(axis) + " is not an axis of the slice (it has " +
                                std::to_string(net.dims.size()) + ")");
  }
  AllReduceEstimate out = collective_over(hw, collective, bytes, {{axis, net.dims[static_cast<size_t>(axis)], 1}});
  out.algorithm = std::string(to_string(collective)) + (axis_wraps_around(hw, axis) ? " on a bidirectional ring" : " on a line");
  return out;
}

AllReduceEstimate estimate_dcn_all_reduce(const Hardware& hw, double bytes, int slices) {
  if (bytes < 0) throw std::invalid_argument("a collective's size must be >= 0 bytes");
  if (slices < 1) throw std::invalid_argument("a multislice all-reduce needs at least 1 slice");
  AllReduceEstimate out;
  out.chips = slices;
  out.algorithm = "all_reduce over the data-center network (a ring through the slices)";
  if (slices == 1) return out;
  const double bandwidth = hw.interconnect.dcn_bandwidth_bytes_per_s;
  if (bandwidth <= 0) {
    throw std::invalid_argument(hw.name + " has no interconnect.dcn_bandwidth_bytes_per_s: its network between slices is not described");
  }
  out.steps = 2 * (slices - 1);
  out.link_bytes_per_chip = 2.0 * (slices - 1) / slices * bytes;
  out.link_seconds = out.link_bytes_per_chip / bandwidth;
  out.latency_seconds = out.steps * hw.interconnect.dcn_latency_s;
  out.seconds = out.link_seconds + out.latency_seconds;
  add_summing(out, hw, slices, bytes);
  return out;
}

AllReduceEstimate estimate_span_collective(const Hardware& hw, Collective collective, double bytes,
                                           const std::vector<ChipSpan>& spans) {
  const auto& net = hw.interconnect;
  std::vector<TorusSegment> segments;
  for (const ChipSpan& span : spans) {
    if (span.size < 1 || span.stride < 1) throw std::invalid_argument("a collective's span needs size and stride >= 1");
    long long remaining = span.size;
    long long stride = span.stride;
    for (int axis = static_cast<int>(net.dims.size()) - 1; axis >= 0 && remaining > 1; --axis) {
      const long long size = net.dims[static_cast<size_t>(axis)];
      if (stride >= size) {
        if (stride % size != 0) throw std::invalid_argument("a span of stride " + std::to_string(span.stride) + " does not fall evenly on the slice's chips");
        stride /= size;
        continue;
      }
      if (size % stride != 0) throw std::invalid_argument("a span of stride " + std::to_string(span.stride) + " does not fall evenly on the slice's chips");
      const long long members = std::min(remaining, size / stride);
      if (remaining % members != 0) throw std::invalid_argument("a span of " + std::to_string(span.size) + " chips does not fall evenly on the slice's axes");
      auto same_axis = std::find_if(segments.begin(), segments.end(), [&](const TorusSegment& s) { return s.axis == axis; });
      if (same_axis != segments.end()) {
        same_axis->members *= members;
        same_axis->hop = std::min(same_axis->hop, stride);
      } else {
        segments.push_back({axis, members, stride});
      }
      remaining /= members;
      stride = 1;
    }
    if (remaining > 1) {
      throw std::invalid_argument("a span of " + std::to_string(span.size) + " chips (stride " + std::to_string(span.stride) +
                                  ") is larger than the slice of " + std::to_string(hw.chips) + " chips");
    }
  }
  return collective_over(hw, collective, bytes, segments);
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
