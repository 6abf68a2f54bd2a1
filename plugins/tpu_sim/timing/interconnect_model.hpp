// Simulated time of collectives across the chips of a system over its
// inter-chip links (ICI). Torus and mesh slices use a dimension-ordered
// algorithm: a reduce-scatter along each dimension in turn (the data shrinks
// by that dimension's size each time), then all-gathers back. Each step is a
// bucket (ring) algorithm on that dimension's ring; where the axis wraps
// around (a torus axis of a multiple of interconnect.wraparound_axis chips)
// the ring runs both ways at once, on a line one way. Every hop costs the
// link latency, so a small collective is latency-bound and a large one
// bandwidth-bound. Cores of one chip first combine their partials through HBM.
#pragma once

#include <string>
#include <string_view>
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
  // The chips' own work through HBM: combining a chip's cores
  // (estimate_all_reduce, in `seconds`); for a collective among chips
  // (estimate_span_collective, estimate_dcn_all_reduce), summing what
  // arrives in a reduction, not in `seconds` (the links' time): the chip
  // does it beside its ops, so a caller schedules it on the chip.
  double on_chip_seconds = 0;
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

// Whether axis `axis` of the slice (interconnect.dims) has a wraparound link.
bool axis_wraps_around(const Hardware& hw, int axis);

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
std::string_view to_string(Collective collective);
// "all_reduce", "all_gather", "reduce_scatter", "all_to_all"; false for anything else.
bool parse_collective(std::string_view text, Collective& collective);

// One collective among the chips along one axis of the slice, each holding
// `bytes`: the whole array an all-gather gathers (each chip starts with
// bytes / members), the array a reduce-scatter scatters or an all-reduce
// reduces, the buffer each chip of an all-to-all exchanges (a 1 / members
// share to each peer). Link time on a ring of the axis's chips: an
// all-gather or a reduce-scatter moves (members - 1) / members of the bytes
// over each chip's link, an all-reduce twice that, an all-to-all a quarter
// of an all-gather's on a bidirectional ring and half on a line (its shares
// travel members / 4 or members / 2 hops on average); members - 1 latency
// steps each way (twice for an all-reduce). No on-chip term: the chip's
// cores act as one device.
AllReduceEstimate estimate_collective(const Hardware& hw, Collective collective, double bytes, int axis);

// Devices of the slice taking part in a collective along one axis of a
// device mesh laid over it: `size` chips `stride` apart in the slice's
// row-major chip order (interconnect.dims, the last fastest), as a
// mesh's row-major device order is laid on the slice's chips.
struct ChipSpan {
  long long size = 1;
  long long stride = 1;
};

// One collective among the chips the spans name, each holding `bytes` (as
// estimate_collective). Each span is cut into the torus axes it runs along
// (a span of 256 chips on a 16x16 torus runs along both axes; one of 4
// chips along part of one axis, a line without wraparound); spans on one
// torus axis combine. The data moves over every axis taken at once (split
// among them, as XLA's collectives over several torus axes do), so the
// links' bandwidths add; every axis adds its hops of latency. Members `h`
// chips apart along an axis are `h` hops apart: their ring has 1/h of the
// bandwidth. Throws std::invalid_argument when a span leaves the slice or
// does not fall on its chips evenly.
// An all-reduce of `bytes` (each chip's part) among the counterpart chips of
// `slices` slices over the data-center network (multislice data
// parallelism): a ring through the slices, each chip sending 2 (S - 1) / S
// of its bytes through its share of its host's NICs, with 2 (S - 1) steps
// of interconnect.dcn_latency_s. Throws std::invalid_argument when the
// preset has no DCN bandwidth.
AllReduceEstimate estimate_dcn_all_reduce(const Hardware& hw, double bytes, int slices);

AllReduceEstimate estimate_span_collective(const Hardware& hw, Collective collective, double bytes,
                                           const std::vector<ChipSpan>& spans);

}  // namespace accel::tpu
