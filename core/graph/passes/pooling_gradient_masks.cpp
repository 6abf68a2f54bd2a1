// Pooling-gradient simplification: two exact rewrites of the backward pass of
// ReLU -> MaxPool (every CNN block), so that the mask and the bias gradient
// run over the pooled tensor instead of the one before pooling, which is
// window_h x window_w times larger (4x for 2x2 pooling):
//
//   RELU_BACKWARD(MAX_POOL_BACKWARD(y, dy), y)  ->  MAX_POOL_BACKWARD(y, RELU_BACKWARD(dy, MAX_POOL(y)))
//   SUM over H and W of MAX_POOL_BACKWARD(y, d)  ->  SUM over H and W of d
//
// Why they hold: MAX_POOL_BACKWARD adds each window's gradient at the
// window's first maximum p and leaves zeros elsewhere. RELU_BACKWARD's mask
// y > 0 at p is pooled > 0, since the pooled value is y[p] (ties have equal
// values; NaNs are skipped by both MAX_POOL and its gradient alike), and
// positions that are no window's maximum stay zero either way. Every window
// puts its gradient at one position of the same image and channel, so a sum
// over the spatial axes is the same set of terms (in another order: the
// rewritten sum may round differently). Windows must each hold at least one
// input position (pads smaller than the window), which "valid" and "same"
// pooling always do.
#include "graph/passes/passes.hpp"

#include <cstring>

namespace accel::graph {
namespace {

const AccelPoolAttributes* pool_attributes(const Node& node) {
  if (node.attributes.size() < sizeof(AccelPoolAttributes)) return nullptr;
  return &node.attributes_as<AccelPoolAttributes>();
}

// Every window holds at least one input position.
bool windows_never_empty(const AccelPoolAttributes& pool) {
  return pool.pad_top < pool.window_h && pool.pad_bottom < pool.window_h && pool.pad_left < pool.window_w &&
         pool.pad_right < pool.window_w;
}

bool same_attributes(const Node& a, const Node& b) {
  return a.attributes.size() == b.attributes.size() &&
         std::memcmp(a.attributes.data(), b.attributes.data(), a.attributes.size()) == 0;
}

// The MAX_POOL of `y` with the attributes of `gradient`, defined before it.
int32_t matching_max_pool(const Graph& graph, const std::vector<std::vector<int32_t>>& consumers, ValueId y,
                          const Node& gradient, int32_t before) {
  for (int32_t reader : consumers[static_cast<size_t>(y)]) {
    const Node& node = graph.nodes[static_cast<size_t>(reader)];
    if (reader < before && node.op == ACCEL_OP_MAX_POOL && node.device == gradient.device &&
        node.inputs.size() == 1 && same_attributes(node, gradient)) {
      return reader;
    }
  }
  return -1;
}

bool is_result(const Graph& graph, ValueId value) {
  for (ValueId result : graph.results) {
    if (result == value) return true;
  }
  return false;
}

// No side effect runs between two nodes (nothing could write what both read).
bool nothing_written_between(const Graph& graph, int32_t first, int32_t last) {
  for (int32_t index = first + 1; index < last; ++index) {
    if (graph.has_side_effects(graph.nodes[static_cast<size_t>(index)])) return false;
  }
  return true;
}

// RELU_BACKWARD(MAX_POOL_BACKWARD(y, dy), y): the gradient node's slot runs
// the mask on dy instead (its output value now has dy's shape), and the
// mask's slot runs the pooling gradient.
bool move_mask_before(Graph& graph, const std::vector<std::vector<int32_t>>& consumers, int32_t gradient_index) {
  const Node& gradient = graph.nodes[static_cast<size_t>(gradient_index)];
  const ValueId y = gradient.inputs[0], dy = gradient.inputs[1], dx = gradient.outputs[0];
  if (consumers[static_cast<size_t>(dx)].size() != 1 || is_result(graph, dx)) return false;
  const int32_t mask_index = consumers[static_cast<size_t>(dx)].front();
  const Node& mask = graph.nodes[static_cast<size_t>(mask_index)];
  if (mask.op != ACCEL_OP_RELU_BACKWARD || mask.inputs.size() != 2 || mask.inputs[0] != dx || mask.inputs[1] != y ||
      mask.device != gradient.device || mask.refresh || !nothing_written_between(graph, gradient_index, mask_index)) {
    return false;
  }
  const int32_t pool_index = matching_max_pool(graph, consumers, y, gradient, gradient_index);
  if (pool_index < 0) return false;
  const ValueId pooled = graph.nodes[static_cast<size_t>(pool_index)].outputs[0];
  if (graph.values[static_cast<size_t>(pooled)].shape != graph.values[static_cast<size_t>(dy)].shape) return false;

  Node pooling_gradient = gradient;
  const ValueId masked_gradient = mask.outputs[0];
  Node& new_mask = graph.nodes[static_cast<size_t>(gradient_index)];
  new_mask.op = ACCEL_OP_RELU_BACKWARD;
  new_mask.inputs = {dy, pooled};
  new_mask.outputs = {dx};
  new_mask.attributes.clear();
  new_mask.label = node_name(ACCEL_OP_RELU_BACKWARD);
  graph.values[static_cast<size_t>(dx)].shape = graph.values[static_cast<size_t>(dy)].shape;
  pooling_gradient.inputs = {y, dx};
  pooling_gradient.outputs = {masked_gradient};
  graph.nodes[static_cast<size_t>(mask_index)] = std::move(pooling_gradient);
  return true;
}

// SUM over (at least) H and W of MAX_POOL_BACKWARD(y, d): sum d instead.
bool sum_before_scatter(Graph& graph, int32_t sum_index) {
  Node& sum = graph.nodes[static_cast<size_t>(sum_index)];
  if (sum.op != ACCEL_OP_REDUCE_SUM || sum.inputs.size() != 1 || sum.attributes.size() < sizeof(AccelReduceAttributes)) {
    return false;
  }
  const Value& input = graph.values[static_cast<size_t>(sum.inputs[0])];
  if (input.kind != ValueKind::kNodeOutput || input.shape.rank() != 4) return false;
  const Node& gradient = graph.nodes[static_cast<size_t>(input.producer)];
  if (gradient.op != ACCEL_OP_MAX_POOL_BACKWARD || gradient.device != sum.device) return false;
  const AccelPoolAttributes* pool = pool_attributes(gradient);
  if (pool == nullptr || !windows_never_empty(*pool)) return false;
  const auto& reduce = sum.attributes_as<AccelReduceAttributes>();
  bool height = false, width = false;
  for (int32_t i = 0; i < reduce.num_axes; ++i) {
    height = height || reduce.axes[i] == 1;
    width = width || reduce.axes[i] == 2;
  }
  if (!height || !width || !nothing_written_between(graph, input.producer, sum_index)) return false;
  sum.inputs[0] = gradient.inputs[1];
  return true;
}

}  // namespace

int32_t simplify_pooling_gradients(Graph& graph) {
  int32_t rewritten = 0;
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const Node& node = graph.nodes[index];
    if (node.op != ACCEL_OP_MAX_POOL_BACKWARD || node.inputs.size() != 2 || node.outputs.size() != 1 ||
        node.refresh) {
      continue;
    }
    const AccelPoolAttributes* pool = pool_attributes(node);
    if (pool == nullptr || !windows_never_empty(*pool)) continue;
    // Recomputed per rewrite: each one changes who reads what.
    if (move_mask_before(graph, graph.consumers(), static_cast<int32_t>(index))) ++rewritten;
  }
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    if (sum_before_scatter(graph, static_cast<int32_t>(index))) ++rewritten;
  }
  return rewritten;
}

}  // namespace accel::graph
