// The graph passes, in the order the compiler runs them (compiler.cpp).
// Each rewrites a Graph in place, keeps Graph::verify() true, never changes
// what the graph computes (to rounding, for the fusions) and never moves a
// side effect. Each lives in its own file with its own tests
// (tests/graph/).
#pragma once

#include "graph/graph.hpp"
#include "graph/sharding.hpp"

#include <accel/function.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace accel::graph {

// What the SPMD partitioning pass starts from: the mesh, and the layouts the
// user gave (keras.distribution's data and variable layouts).
struct SpmdInputs {
  MeshShape mesh;
  // Per entry of Graph::parameters (the batch: split along the data axis).
  std::vector<ValueSharding> parameters;
  // The layout of a captured value (a variable, an optimizer slot, a
  // constant); unset or an empty sharding: replicated.
  std::function<ValueSharding(ValueId id, const Value& value)> capture;
};

struct InsertedCollective {
  int32_t node = -1;         // the kCollectiveNode, in the rewritten graph
  ValueId input = kNoValue;  // what it reads
  ValueId output = kNoValue;
  CollectiveAttributes attributes;
  std::string consumer;      // the op that needed it ("MatMul", "SGDUpdate", "result")
  uint64_t input_bytes = 0;  // per device
  uint64_t output_bytes = 0; // per device
};

struct SpmdPartition {
  MeshShape mesh;
  std::vector<ValueSharding> shardings;  // per value of the rewritten graph
  std::vector<InsertedCollective> collectives;
};

// The SPMD partitioning pass (after XLA's SPMD partitioner): propagates the
// layouts of the parameters and captures forward through the graph, op by op,
// inserts the collectives each op needs where its operands' shardings differ
// from the ones it can run on (the all-gather of an FSDP weight before its
// matmul, the all-reduce of a row-parallel matmul's partial sums, the
// reduce-scatter of a gradient into its sharded variable, all-to-alls), and
// rewrites every value's shape to the shape one device holds. Results come
// out replicated. The rules per op are in docs/sharding.md. Runs first, on the
// traced graph, before the other passes. Throws InvalidArgumentError when a
// split dimension does not divide by its mesh axis.
SpmdPartition partition_spmd(Graph& graph, const SpmdInputs& inputs);

// Removes nodes whose outputs nothing reads (transitively) and that have no
// side effect. Returns the number of nodes removed.
int32_t eliminate_dead_code(Graph& graph);

// Merges nodes that run the same op with the same attributes on the same
// device over the same inputs (random and side-effecting ops excepted).
// Returns the number of nodes removed.
int32_t eliminate_common_subexpressions(Graph& graph);

// Evaluates, once, nodes whose inputs are all constants (FILL outputs and
// earlier folded values) and that are elementwise, CAST, BROADCAST_TO or
// FILL itself, replacing their outputs with kConstant values. Returns the
// number of nodes folded.
int32_t fold_constants(Graph& graph);

// Two exact rewrites of the backward pass of ReLU -> MaxPool: RELU_BACKWARD of
// a MAX_POOL_BACKWARD (masked by the pooling input) becomes a RELU_BACKWARD
// of the pooled gradient (masked by the MAX_POOL output) before the
// MAX_POOL_BACKWARD, and a SUM over the spatial axes of a MAX_POOL_BACKWARD
// sums its pooled gradient instead: both then run over the pooled tensor.
// Returns the number of rewrites.
int32_t simplify_pooling_gradients(Graph& graph);

// Rematerialization (accel::RematPolicy): a forward value of a layer region
// (Node::region) that only that layer's backward ops read later is recomputed
// instead of kept, unless the policy keeps it (kMinimal: MATMUL and CONV2D
// outputs) or its op must not run twice (side effects, random streams, host
// work). The recomputing ops, copies of the forward ones reading what was
// kept, run just before the region's first backward op; its backward ops read
// them, so the forward values die in the forward pass. Values that are
// results, or that another region's backward ops also read, stay kept.
// Returns the number of ops added.
int32_t rematerialize(Graph& graph, RematPolicy policy);

// Moves every reshape to just before its first reader (a reshape is a view:
// where it stands changes nothing it computes). Returns the number of
// reshapes that moved. Runs before the fusions.
int32_t sink_reshapes(Graph& graph);

// A binary elementwise op reading a BROADCAST_TO of a smaller value reads
// that value instead where its own broadcasting gives the same output shape
// (an exact rewrite; the broadcast is left for dead-code elimination).
// Returns the number of operands rewritten. Runs before the fusions.
int32_t forward_broadcasts(Graph& graph);

// What the devices can run, asked by the fusion passes. of_devices() asks the
// plugins (LogicalDevice::supports / supports_epilogue); tests pass their own.
struct FusionSupport {
  std::function<bool(detail::LogicalDevice* device, AccelDType dtype)> fused_elementwise;
  std::function<bool(detail::LogicalDevice* device, AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                     AccelOp activation)>
      epilogue;
  // Whether the device runs `op` on `dtype` as a plain op; asked only about
  // ops appended after FUSED_ELEMENTWISE: ERF (API 1.3), which a plugin built
  // for 1.2 claims the fusion without knowing, and
  // MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER (1.4). Unset: those stay unfused.
  std::function<bool(detail::LogicalDevice* device, AccelOp op, AccelDType dtype)> plain_op;
  static FusionSupport of_devices();
};

struct FusionStatistics {
  int32_t fusions = 0;       // fused nodes made
  int32_t ops_fused = 0;     // op nodes they replaced
  uint64_t bytes_saved = 0;  // intermediate bytes no longer written and read back
};

// Epilogue fusion: a bias add (ADD of a rank-1 value over the last axis) and
// then RELU / SIGMOID / TANH into the MATMUL or CONV2D that produces their
// input, and RELU_BACKWARD(dy, x) into the MATMUL / CONV2D_BACKWARD_INPUT
// that produces dy, when the device supports that epilogue and no one else
// reads the intermediate. Runs before elementwise fusion.
FusionStatistics fuse_epilogues(Graph& graph, const FusionSupport& support);

// Pooling-gradient fusion: MAX_POOL_BACKWARD whose one reader is a
// CONV2D_BACKWARD_FILTER (as its output gradient) joins it as one
// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER node where the device claims that
// op, so the pooling gradient never goes to memory. Runs after elementwise
// fusion.
FusionStatistics fuse_pooling_into_filter_gradients(Graph& graph, const FusionSupport& support);

// Elementwise fusion: maximal groups of unary / binary / broadcasting
// elementwise ops (and CAST, SELECT) on one device become one
// FUSED_ELEMENTWISE node, with reductions that consume a group's value as
// its last step (AccelFusedOutput.reduce_op). A group never spans devices,
// never reads a value it writes after a side effect, and keeps every value
// read outside it as an output.
FusionStatistics fuse_elementwise(Graph& graph, const FusionSupport& support);

// Buffer planning: the values that live only within one run of the graph get
// an offset in one arena per device, reusing the memory of values whose last
// reader has run, and fusions write in place over a dead input of the same
// shape and dtype. Parameters, captures, constants, results (and the reshapes
// that alias them) are not planned.
struct BufferPlan {
  static constexpr int64_t kNotPlanned = -1;
  std::vector<int64_t> offsets;  // per value: byte offset in its device's arena
  std::map<detail::LogicalDevice*, uint64_t> arena_bytes;
  int32_t in_place_writes = 0;
  // Peak bytes of the step's own values: as eager dispatch holds them (each
  // from its producer to its last reader), and as planned (arenas + results).
  uint64_t eager_peak_bytes = 0;
  uint64_t planned_peak_bytes = 0;
};
inline constexpr uint64_t kArenaAlignment = 64;
BufferPlan plan_buffers(const Graph& graph);

}  // namespace accel::graph
