// Pooling-gradient fusion: a MAX_POOL_BACKWARD whose one reader is the
// CONV2D_BACKWARD_FILTER of the layer below becomes part of it, as
// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER (accel_plugin.h, API 1.4), so that
// the pooling gradient, the size of the convolution's output, is never
// written out and read back (passes.hpp).
//
//   dx = MAX_POOL_BACKWARD(pool_x, pool_dy)        dfilter = MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER(
//   dfilter = CONV2D_BACKWARD_FILTER(x, dx)   ->              x, pool_x, pool_dy)
//
// The fused node takes the filter gradient's place, so pool_x and pool_dy are
// read later than before: nothing between the two nodes may write them in
// place, and no host node may lie between. Both nodes run on one device, and
// that device must claim the fused op (FusionSupport::plain_op: a plugin
// built before 1.4 never does, and gets the two ops).
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"

#include <cstring>
#include <string>

namespace accel::graph {
namespace {

bool is_plain_filter_gradient(const Node& node) {
  return node.op == ACCEL_OP_CONV2D_BACKWARD_FILTER && node.inputs.size() == 2 && node.outputs.size() == 1 &&
         !node.refresh && node.attributes.size() >= sizeof(AccelConv2dAttributes) &&
         node.attributes_as<AccelConv2dAttributes>().epilogue_flags == 0;
}

bool is_pooling_gradient(const Node& node) {
  return node.op == ACCEL_OP_MAX_POOL_BACKWARD && node.inputs.size() == 2 && node.outputs.size() == 1 &&
         !node.refresh && node.attributes.size() >= sizeof(AccelPoolAttributes);
}

}  // namespace

FusionStatistics fuse_pooling_into_filter_gradients(Graph& graph, const FusionSupport& support) {
  FusionStatistics statistics;
  if (!support.plain_op) return statistics;
  const ValueUses uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const Node& pooling = graph.nodes[index];
    if (!is_pooling_gradient(pooling)) continue;
    const ValueId dx = pooling.outputs[0];
    const auto& readers = uses.readers[static_cast<size_t>(dx)];
    if (readers.size() != 1 || uses.is_result[static_cast<size_t>(dx)]) continue;
    const int32_t filter_index = readers[0];
    Node& filter = graph.nodes[static_cast<size_t>(filter_index)];
    if (!is_plain_filter_gradient(filter) || filter.inputs[1] != dx || filter.inputs[0] == dx ||
        filter.device != pooling.device) {
      continue;
    }
    const auto dtype = static_cast<AccelDType>(graph.values[static_cast<size_t>(filter.inputs[0])].dtype);
    if (!support.plain_op(filter.device, ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, dtype)) continue;
    const auto pooling_index = static_cast<int32_t>(index);
    bool inputs_unchanged = !host_node_between(uses.host_nodes, pooling_index, filter_index);
    for (ValueId input : pooling.inputs) {
      inputs_unchanged = inputs_unchanged &&
                         !written_between(uses.writers, storage_root(graph, input), pooling_index, filter_index);
    }
    if (!inputs_unchanged) continue;

    AccelPoolFilterGradientAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    std::memcpy(&attributes.convolution, filter.attributes.data(), sizeof(AccelConv2dAttributes));
    attributes.convolution.struct_size = sizeof(AccelConv2dAttributes);
    std::memcpy(&attributes.pool, pooling.attributes.data(), sizeof(AccelPoolAttributes));
    attributes.pool.struct_size = sizeof(AccelPoolAttributes);
    filter.attributes.resize(sizeof(attributes));
    std::memcpy(filter.attributes.data(), &attributes, sizeof(attributes));
    filter.op = ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER;
    filter.inputs = {filter.inputs[0], pooling.inputs[0], pooling.inputs[1]};
    filter.label = std::string(node_name(ACCEL_OP_MAX_POOL_BACKWARD)) + "+" + node_name(ACCEL_OP_CONV2D_BACKWARD_FILTER);
    removed[index] = true;
    statistics.fusions += 1;
    statistics.ops_fused += 2;
    statistics.bytes_saved += graph.values[static_cast<size_t>(dx)].byte_size();
  }
  if (statistics.fusions > 0) graph.erase_nodes(removed);
  return statistics;
}

}  // namespace accel::graph
