// Broadcast forwarding: a binary elementwise op that reads a BROADCAST_TO
// reads the broadcast's source instead, when the op's own broadcasting gives
// the same output shape (passes.hpp). The values are the same element for
// element, so the rewrite is exact; what it saves is the broadcast's full
// write and the op's full read of it. A fusion then loads the small source
// with a broadcast layout, as XLA fuses broadcasts into their consumers.
//
// The gradient of a mean is such a broadcast (every reduced element gets
// grad / n), and so are the per-channel terms of a batch norm's gradient:
// in the small ResNet's compiled step, 19 BroadcastTo nodes wrote a full
// activation each.
#include "graph/passes/passes.hpp"

#include <accel/ops.hpp>

namespace accel::graph {

int32_t forward_broadcasts(Graph& graph) {
  int32_t forwarded = 0;
  for (Node& node : graph.nodes) {
    if (!is_fusible_elementwise(node.op) || node.inputs.size() != 2 || node.outputs.size() != 1) continue;
    const Shape& output = graph.values[static_cast<size_t>(node.outputs[0])].shape;
    for (size_t operand = 0; operand < 2; ++operand) {
      const Value& read = graph.values[static_cast<size_t>(node.inputs[operand])];
      if (read.kind != ValueKind::kNodeOutput) continue;
      const Node& producer = graph.nodes[static_cast<size_t>(read.producer)];
      if (producer.op != ACCEL_OP_BROADCAST_TO || producer.device != node.device || producer.inputs.size() != 1) {
        continue;
      }
      const ValueId source = producer.inputs[0];
      const Value& small = graph.values[static_cast<size_t>(source)];
      if (small.dtype != read.dtype || small.device != node.device) continue;
      const Shape& other = graph.values[static_cast<size_t>(node.inputs[1 - operand])].shape;
      if (ops::broadcast_shapes(small.shape, other) != output) continue;
      node.inputs[operand] = source;
      ++forwarded;
    }
  }
  return forwarded;
}

}  // namespace accel::graph
