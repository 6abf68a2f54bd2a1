// Shardings of a compiled step's values over a device mesh, for the SPMD
// partitioning pass (passes/spmd_partitioning.cpp): which mesh axis splits
// each dimension of a value, which mesh axes hold partial results that are
// still to be reduced, and the collectives the pass inserts between them.
//
// This is the graph layer's own view of keras.distribution's layouts
// (DeviceMesh, TensorLayout): mesh axes by index, one axis per dimension at
// most, as XLA's HloSharding tile assignment without replication groups.
#pragma once

#include <accel/shape.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accel::graph {

// The mesh's axes, by name and size: {"data": 2, "model": 4} is 8 devices.
struct MeshShape {
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;

  int32_t rank() const noexcept { return static_cast<int32_t>(axis_sizes.size()); }
  int64_t device_count() const noexcept;
  // The axis called `name`, or -1.
  int32_t axis_index(std::string_view name) const noexcept;
};

inline constexpr int32_t kReplicated = -1;

// How a partial result is completed: the reduction its all-reduce runs.
enum class PartialReduction : int32_t { kNone, kSum, kMean, kMax, kMin };

struct ValueSharding {
  // Per dimension: the mesh axis that splits it, or kReplicated.
  std::vector<int32_t> dimension_axes;
  // Bit a set: each device along mesh axis a holds a partial result, to be
  // combined by `reduction` (a row-parallel matmul's output, a gradient
  // summed over a sharded batch).
  uint32_t partial_axes = 0;
  PartialReduction reduction = PartialReduction::kNone;

  static ValueSharding replicated(int32_t rank) {
    return ValueSharding{std::vector<int32_t>(static_cast<size_t>(rank), kReplicated), 0, PartialReduction::kNone};
  }
  bool is_partial() const noexcept { return partial_axes != 0; }
  // No dimension split and nothing partial: every device holds the whole value.
  bool is_replicated() const noexcept;
  // The mesh axes that split some dimension, as bits.
  uint32_t sharded_axes() const noexcept;
  bool operator==(const ValueSharding& other) const = default;
};

// "[data, -, model]", with " partial sum over {model}" when partial.
std::string describe(const ValueSharding& sharding, const MeshShape& mesh);

// The shape one device holds: each split dimension divided by its axis's
// size. Throws InvalidArgumentError naming `what` when a size does not divide.
Shape local_shape(const Shape& global, const ValueSharding& sharding, const MeshShape& mesh, std::string_view what);

enum class CollectiveKind : int32_t {
  kAllGather,      // a split dimension made whole
  kReduceScatter,  // a partial result reduced, each device keeping its slice of a dimension
  kAllReduce,      // a partial result reduced, every device keeping the whole
  kAllToAll,       // the split moved from one dimension to another
  kLocalSlice,     // a whole dimension cut to this device's slice: no communication (XLA's dynamic-slice)
};
const char* collective_name(CollectiveKind kind);

// The attributes of a kCollectiveNode (graph.hpp).
struct CollectiveAttributes {
  CollectiveKind kind = CollectiveKind::kAllGather;
  uint32_t mesh_axes = 0;    // the axes along which devices take part, as bits
  int32_t dimension = -1;    // gathered, scattered or sliced; all-to-all: the dimension split afterwards
  int32_t source_dimension = -1;  // all-to-all: the dimension split before
  PartialReduction reduction = PartialReduction::kNone;  // reduce-scatter, all-reduce
};

}  // namespace accel::graph
