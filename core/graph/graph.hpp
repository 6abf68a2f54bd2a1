// Graph: the IR of a compiled step (accel::function, compile(jit_compile)).
//
// A graph is a straight-line program of op-set ops, in execution order. Each
// node reads values and defines new ones; a value has a shape, a dtype and a
// device. Values come from the function's parameters, from tensors captured
// at trace time (variables and constants, by reference), or from nodes.
//
// There is no control flow: a traced step is what ran, op by op. Side effects
// are explicit: ops that update inputs in place (the optimizer updates, see
// OpInfo::updated_inputs) and host nodes (work on host state that must run in
// its place every step, such as counting the optimizer's iterations) are
// never removed or reordered past each other.
//
// Passes (core/graph/passes/) rewrite a graph in place; the executor
// (graph_executor.hpp) runs it. Internal to libaccel's graph layer.
#pragma once

#include "runtime/op_observer.hpp"
#include "runtime/step_region.hpp"

#include <accel/plugin/accel_plugin.h>
#include <accel/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace accel::detail {
class LogicalDevice;
}

namespace accel::graph {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// A node that is not a device op: a reshape (its output aliases its input's
// storage) or a host node.
inline constexpr int32_t kReshapeNode = detail::kReshapeOp;  // what op observers see
inline constexpr int32_t kHostNode = ACCEL_OP_COUNT + 2;
// Tensor::assign (a variable's assign, a moving average): inputs are the
// destination, then the source; it has no outputs and writes the destination.
inline constexpr int32_t kAssignNode = ACCEL_OP_COUNT + 3;
// A collective between the devices of a mesh, inserted by the SPMD
// partitioning pass; its attributes are a CollectiveAttributes (sharding.hpp).
inline constexpr int32_t kCollectiveNode = ACCEL_OP_COUNT + 4;

enum class ValueKind {
  kParameter,  // the function's argument `parameter_index`
  kCapture,    // a tensor from outside the function, read by reference
  kConstant,   // a tensor the graph owns and never writes (constant folding)
  kNodeOutput, // output `output_index` of node `producer`
};

struct Value {
  ValueKind kind = ValueKind::kNodeOutput;
  Shape shape;
  DType dtype = DType::kFloat32;
  detail::LogicalDevice* device = nullptr;
  int32_t producer = -1;      // kNodeOutput
  int32_t output_index = 0;   // kNodeOutput
  int32_t parameter_index = -1;  // kParameter
  Tensor tensor;              // kCapture / kConstant

  uint64_t byte_size() const noexcept;
};

// Re-computes a node's attributes before each run (an optimizer's learning
// rate and step, a dropout layer's random stream). Receives the node's
// attribute bytes, already holding the values of the previous run.
using AttributeRefresh = std::function<void(int32_t op, void* attributes)>;

// The program of a FUSED_ELEMENTWISE node, owned by the node.
struct FusedProgram {
  Shape shape;  // the iteration shape
  std::vector<AccelFusedInstruction> instructions;
  std::vector<AccelFusedOutput> outputs;
};

struct Node {
  int32_t op = 0;  // an AccelOp, kReshapeNode, kHostNode or kAssignNode
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  // The op's Accel*Attributes struct as bytes (empty for none). For a fusion,
  // an AccelFusedElementwiseAttributes whose pointers the executor sets to
  // `program` before each call.
  std::vector<std::byte> attributes;
  std::shared_ptr<FusedProgram> program;
  detail::LogicalDevice* device = nullptr;  // where it runs (set at trace)
  AttributeRefresh refresh;                 // may be empty
  std::function<void()> host_work;          // kHostNode only
  // The ops this node stands for, for dumps and reports ("Conv2D+BiasAdd+Relu").
  std::string label;
  // The layer call that traced it, forward or backward (step_region.hpp):
  // what rematerialization reads, and a pod estimate's loop over blocks.
  // A collective the SPMD pass adds has its reader's, a recomputed copy its
  // layer's backward one, a fusion that of the node it replaces.
  detail::StepRegion region;

  template <typename Attributes>
  Attributes& attributes_as() { return *reinterpret_cast<Attributes*>(attributes.data()); }
  template <typename Attributes>
  const Attributes& attributes_as() const { return *reinterpret_cast<const Attributes*>(attributes.data()); }
  bool has_attributes() const noexcept { return !attributes.empty(); }
};

class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;         // in execution order
  std::vector<ValueId> parameters; // parameter i is values[parameters[i]]
  std::vector<ValueId> results;    // what the function returns, in order

  ValueId add_value(Value value);
  // Appends a node and defines its outputs (shape, dtype) on `device`.
  int32_t add_node(Node node, const std::vector<std::pair<Shape, DType>>& output_types);

  // True when the node must run even if nothing reads its outputs: an op that
  // updates an input in place, an assignment, a host node, or a random op
  // whose attributes advance a stream.
  bool has_side_effects(const Node& node) const;
  // The nodes reading each value (indices into `nodes`), recomputed on demand.
  std::vector<std::vector<int32_t>> consumers() const;
  // Removes nodes marked in `removed` and values nothing defines or reads any
  // longer, renumbering both.
  void erase_nodes(const std::vector<bool>& removed);
  // Puts the nodes in `order` (a permutation of their indices), keeping
  // values as they are; the caller keeps every read after its definition.
  void reorder_nodes(const std::vector<int32_t>& order);
  // Replaces every read of `from` (inputs and results) by `to`.
  void replace_uses(ValueId from, ValueId to);

  // Throws InternalError when a node reads a value defined later or nowhere,
  // or a value's producer does not list it: what every pass must preserve.
  void verify() const;
};

// The op's name as traces show it ("Conv2D", "Reshape", "Fusion", "Host").
const char* node_name(int32_t op);
// Whether `op` is a unary or binary elementwise op that a fusion program may contain.
bool is_fusible_elementwise(int32_t op);

}  // namespace accel::graph
