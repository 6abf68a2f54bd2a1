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
// Every buffer's lifetime is known before any is placed: from the node that
// makes it to its last reader (a node's outputs overlap its inputs). Offsets
// are chosen greedy by size, largest first, each in the smallest gap left by
// the placed buffers whose lifetimes overlap its own (TensorFlow Lite's
// arena planner does the same). Sizes are rounded up to kArenaAlignment, so
// every offset is aligned. An unreduced output of FUSED_ELEMENTWISE may take
// over the buffer of an input of the same shape and dtype whose storage is
// planned, on the same device, read last by this node, and read through no
// other input of it (the program format allows that write in place); no
// other node writes over a live buffer.
//
// eager_peak_bytes simulates eager dispatch: each node output allocated at
// its node (its bytes rounded up to kArenaAlignment, as an allocator aligns
// them), freed after the last reader of its storage; results never freed. planned_peak_bytes is the arenas plus the results' bytes.
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"

#include <algorithm>
#include <map>

namespace accel::graph {
namespace {

uint64_t aligned(uint64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// One buffer of the arena: a storage, or several when fusions wrote in place
// over their inputs, live from its first node to its last reader.
struct Buffer {
  detail::LogicalDevice* device = nullptr;
  uint64_t bytes = 0;  // aligned
  int32_t first = 0;
  int32_t last = 0;
  int64_t offset = 0;
};

bool lifetimes_overlap(const Buffer& a, const Buffer& b) { return a.first <= b.last && b.first <= a.last; }

// Offsets for every buffer, greedy by size (the largest first, each in the
// smallest gap between the buffers already placed whose lifetimes overlap
// its own, else after them): what knowing every lifetime ahead allows, and
// what keeps large activations from fragmenting the arena. Returns the arena
// size per device.
std::map<detail::LogicalDevice*, uint64_t> place_buffers(std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::map<detail::LogicalDevice*, uint64_t> arena_bytes;
  // The placed buffers of each device in offset order, so that the gaps
  // between those overlapping a new buffer's lifetime are found in one pass,
  // without collecting and sorting them for every buffer, and the pass stops
  // at a gap of exactly the buffer's size (no smaller gap can hold it).
  std::map<detail::LogicalDevice*, std::vector<size_t>> placed_by_offset;
  for (size_t index : order) {
    Buffer& buffer = buffers[index];
    arena_bytes.try_emplace(buffer.device, 0);
    if (buffer.bytes == 0) continue;
    std::vector<size_t>& placed = placed_by_offset[buffer.device];
    uint64_t previous_end = 0;
    int64_t best_offset = -1;
    uint64_t best_gap = 0;
    for (size_t other : placed) {
      const Buffer& neighbour = buffers[other];
      if (!lifetimes_overlap(neighbour, buffer)) continue;
      if (static_cast<uint64_t>(neighbour.offset) > previous_end) {
        const uint64_t gap = static_cast<uint64_t>(neighbour.offset) - previous_end;
        if (gap >= buffer.bytes && (best_offset < 0 || gap < best_gap)) {
          best_offset = static_cast<int64_t>(previous_end);
          best_gap = gap;
          if (gap == buffer.bytes) break;
        }
      }
      previous_end = std::max(previous_end, static_cast<uint64_t>(neighbour.offset) + neighbour.bytes);
    }
    buffer.offset = best_offset >= 0 ? best_offset : static_cast<int64_t>(previous_end);
    uint64_t& size = arena_bytes[buffer.device];
    size = std::max(size, static_cast<uint64_t>(buffer.offset) + buffer.bytes);
    const auto position = std::upper_bound(placed.begin(), placed.end(), buffer.offset,
                                           [&](int64_t offset, size_t other) { return offset < buffers[other].offset; });
    placed.insert(position, index);
  }
  return arena_bytes;
}

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
  std::vector<Buffer> buffers;
  std::vector<int32_t> buffer_of(value_count, -1);    // per planned storage
  std::vector<bool> handed_over(value_count, false);  // its buffer went to a fusion's output
  uint64_t eager_bytes = 0;
  uint64_t results_bytes = 0;

  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const Node& node = graph.nodes[index];
    for (size_t position = 0; position < node.outputs.size(); ++position) {
      const ValueId output = node.outputs[position];
      const Value& value = graph.values[static_cast<size_t>(output)];
      if (!made_here[static_cast<size_t>(output)]) continue;  // a reshape: its root's buffer, set below
      eager_bytes += aligned(value.byte_size());
      if (!planned(output)) {
        results_bytes += value.byte_size();
        continue;
      }
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
          const int32_t buffer = buffer_of[static_cast<size_t>(storage)];
          buffer_of[static_cast<size_t>(output)] = buffer;
          Buffer& shared = buffers[static_cast<size_t>(buffer)];
          shared.last = std::max(shared.last, last_use[static_cast<size_t>(output)]);
          handed_over[static_cast<size_t>(storage)] = true;
          ++plan.in_place_writes;
          break;
        }
      }
      if (buffer_of[static_cast<size_t>(output)] < 0) {
        buffer_of[static_cast<size_t>(output)] = static_cast<int32_t>(buffers.size());
        buffers.push_back({value.device, aligned(value.byte_size()), static_cast<int32_t>(index),
                           last_use[static_cast<size_t>(output)], 0});
      }
    }
    plan.eager_peak_bytes = std::max(plan.eager_peak_bytes, eager_bytes);
    for (ValueId storage : freed_after[index]) {
      eager_bytes -= aligned(graph.values[static_cast<size_t>(storage)].byte_size());
    }
  }
  // Every device with a planned value has an entry, even when all its values
  // are empty: the executor looks its arena up.
  plan.arena_bytes = place_buffers(buffers);
  for (size_t id = 0; id < value_count; ++id) {
    const int32_t buffer = buffer_of[static_cast<size_t>(root[id])];
    if (buffer >= 0 && planned(static_cast<ValueId>(id))) plan.offsets[id] = buffers[static_cast<size_t>(buffer)].offset;
  }
  uint64_t arena_total = 0;
  for (const auto& [device, bytes] : plan.arena_bytes) arena_total += bytes;
  plan.planned_peak_bytes = arena_total + results_bytes;
  return plan;
}

}  // namespace accel::graph
