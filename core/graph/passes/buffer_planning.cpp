// Buffer planning: where each value a run of the graph makes and drops lives,
// as offsets in one arena per device, and what that saves against eager
// dispatch (passes.hpp).
//
// Planning works on storages, not values: a reshape's output aliases its
// input, so a value and its reshapes (a storage root and its aliases) share
// one buffer, live from the root's node to the last node reading any of them,
// and every alias gets the root's offset. A storage is planned when its root
// is the output of a node that is no reshape and no value of it is a result
// (results outlive the run; the executor allocates them on their own).
//
// Offsets are chosen in node order, best fit: a node's outputs are placed
// while its inputs are still live, then the storages whose last reader it
// was are freed; the smallest gap that holds a buffer takes it, else the end
// of the arena, which grows. Sizes are rounded up to kArenaAlignment, so
// every offset is aligned. An unreduced output of FUSED_ELEMENTWISE may take
// over the buffer of an input of the same shape and dtype whose storage is
// planned, on the same device, read last by this node, and read through no
// other input of it (the program format allows that write in place); no
// other node writes over a live buffer.
//
// eager_peak_bytes simulates eager dispatch: each node output allocated at
// its node (exact bytes), freed after the last reader of its storage; results
// never freed. planned_peak_bytes is the arenas plus the results' bytes.
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"

#include <algorithm>
#include <map>

namespace accel::graph {
namespace {

uint64_t aligned(uint64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// Best-fit placement in one arena, blocks by offset.
class ArenaAllocator {
 public:
  int64_t allocate(uint64_t bytes) {
    if (bytes == 0) return 0;
    uint64_t previous_end = 0;
    int64_t best_offset = -1;
    uint64_t best_gap = 0;
    for (const auto& [offset, size] : blocks_) {
      const uint64_t gap = static_cast<uint64_t>(offset) - previous_end;
      if (gap >= bytes && (best_offset < 0 || gap < best_gap)) {
        best_offset = static_cast<int64_t>(previous_end);
        best_gap = gap;
      }
      previous_end = static_cast<uint64_t>(offset) + size;
    }
    // The room after the last block counts as a gap only up to the arena's
    // current size; beyond it the arena grows.
    const uint64_t tail = size_ > previous_end ? size_ - previous_end : 0;
    if (tail >= bytes && (best_offset < 0 || tail < best_gap)) best_offset = static_cast<int64_t>(previous_end);
    if (best_offset < 0) best_offset = static_cast<int64_t>(previous_end);
    blocks_.emplace(best_offset, bytes);
    size_ = std::max(size_, static_cast<uint64_t>(best_offset) + bytes);
    return best_offset;
  }
  void release(int64_t offset, uint64_t bytes) {
    if (bytes != 0) blocks_.erase(offset);
  }
  uint64_t size() const { return size_; }

 private:
  std::map<int64_t, uint64_t> blocks_;
  uint64_t size_ = 0;
};

}  // namespace

BufferPlan plan_buffers(const Graph& graph) {
  const size_t value_count = graph.values.size();
  BufferPlan plan;
  plan.offsets.assign(value_count, BufferPlan::kNotPlanned);

  std::vector<ValueId> root(value_count);
  for (size_t id = 0; id < value_count; ++id) root[id] = storage_root(graph, static_cast<ValueId>(id));
  // Storages made by a node of the graph (what eager dispatch allocates).
  std::vector<bool> made_here(value_count, false);
  for (size_t id = 0; id < value_count; ++id) {
    const Value& value = graph.values[id];
    made_here[id] = root[id] == static_cast<ValueId>(id) && value.kind == ValueKind::kNodeOutput;
  }
  std::vector<bool> returned(value_count, false);
  for (ValueId result : graph.results) returned[static_cast<size_t>(root[static_cast<size_t>(result)])] = true;
  // The last node reading each storage through any of its values (the
  // defining node when nothing reads it).
  std::vector<int32_t> last_use(value_count, -1);
  for (size_t id = 0; id < value_count; ++id) {
    if (made_here[id]) last_use[id] = graph.values[id].producer;
  }
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    for (ValueId input : graph.nodes[index].inputs) {
      int32_t& last = last_use[static_cast<size_t>(root[static_cast<size_t>(input)])];
      last = std::max(last, static_cast<int32_t>(index));
    }
  }
  auto planned = [&](ValueId id) {
    const auto storage = static_cast<size_t>(root[static_cast<size_t>(id)]);
    return made_here[storage] && !returned[storage];
  };

  std::vector<std::vector<ValueId>> freed_after(graph.nodes.size());
  for (size_t id = 0; id < value_count; ++id) {
    if (made_here[id] && !returned[id]) freed_after[static_cast<size_t>(last_use[id])].push_back(static_cast<ValueId>(id));
  }
  std::map<detail::LogicalDevice*, ArenaAllocator> arenas;
  std::vector<bool> handed_over(value_count, false);  // its buffer went to a fusion's output
  uint64_t eager_bytes = 0;
  uint64_t results_bytes = 0;

  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const Node& node = graph.nodes[index];
    for (size_t position = 0; position < node.outputs.size(); ++position) {
      const ValueId output = node.outputs[position];
      const Value& value = graph.values[static_cast<size_t>(output)];
      if (!made_here[static_cast<size_t>(output)]) {
        // A reshape: the root's buffer, when it has one.
        if (planned(output)) plan.offsets[static_cast<size_t>(output)] = plan.offsets[static_cast<size_t>(root[static_cast<size_t>(output)])];
        continue;
      }
      eager_bytes += value.byte_size();
      if (!planned(output)) {
        results_bytes += value.byte_size();
        continue;
      }
      int64_t offset = BufferPlan::kNotPlanned;
      const bool unreduced_fusion_output = node.op == ACCEL_OP_FUSED_ELEMENTWISE && node.program &&
                                           position < node.program->outputs.size() &&
                                           node.program->outputs[position].reduce_op == 0;
      if (unreduced_fusion_output && value.byte_size() != 0) {
        for (ValueId input : node.inputs) {
          const ValueId storage = root[static_cast<size_t>(input)];
          const Value& read = graph.values[static_cast<size_t>(input)];
          if (!planned(input) || handed_over[static_cast<size_t>(storage)] ||
              last_use[static_cast<size_t>(storage)] != static_cast<int32_t>(index) || read.shape != value.shape ||
              read.dtype != value.dtype || graph.values[static_cast<size_t>(storage)].device != value.device) {
            continue;
          }
          const auto reads_of_storage = std::count_if(node.inputs.begin(), node.inputs.end(), [&](ValueId other) {
            return root[static_cast<size_t>(other)] == storage;
          });
          if (reads_of_storage != 1) continue;
          offset = plan.offsets[static_cast<size_t>(storage)];
          handed_over[static_cast<size_t>(storage)] = true;
          ++plan.in_place_writes;
          break;
        }
      }
      if (offset == BufferPlan::kNotPlanned) offset = arenas[value.device].allocate(aligned(value.byte_size()));
      plan.offsets[static_cast<size_t>(output)] = offset;
    }
    plan.eager_peak_bytes = std::max(plan.eager_peak_bytes, eager_bytes);
    for (ValueId storage : freed_after[index]) {
      const Value& value = graph.values[static_cast<size_t>(storage)];
      eager_bytes -= value.byte_size();
      if (!handed_over[static_cast<size_t>(storage)]) {
        arenas[value.device].release(plan.offsets[static_cast<size_t>(storage)], aligned(value.byte_size()));
      }
    }
  }
  uint64_t arena_total = 0;
  // Every device with a planned value has an entry, even when all its values
  // are empty: the executor looks its arena up.
  for (const auto& [device, arena] : arenas) {
    plan.arena_bytes[device] = arena.size();
    arena_total += arena.size();
  }
  plan.planned_peak_bytes = arena_total + results_bytes;
  return plan;
}

}  // namespace accel::graph
