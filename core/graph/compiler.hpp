// The compiler: a traced Graph in, a GraphExecutor out. Runs the passes in
// order (dead code, common subexpressions, constant folding, pooling
// gradients, rematerialization, then with jit_compile epilogue and
// elementwise fusion and dead code again, then buffer planning), dumps the
// graph before and after when ACCEL_DUMP_GRAPHS names a folder, and counts
// what each pass did. The passes alone (optimize_graph) serve a program that
// runs one optimized graph on several devices (SpmdProgram).
#pragma once

#include "graph/graph_executor.hpp"

#include <accel/function.hpp>

#include <memory>
#include <string>

namespace accel::graph {

struct CompiledGraph {
  std::unique_ptr<GraphExecutor> executor;
  FunctionStatistics statistics;  // the compile figures (traces/replays left to the caller)
  std::string text;               // the compiled graph, dumped
};

CompiledGraph compile_graph(Graph graph, const FunctionOptions& options);

// compile_graph's passes, in place, up to buffer planning: the statistics
// but for the plan's figures (record_plan adds them). Fusion asks the
// devices the nodes are placed on what they can run, so place them first.
FunctionStatistics optimize_graph(Graph& graph, const FunctionOptions& options);
// `plan`'s figures (in-place writes, eager and planned peaks) into `statistics`.
void record_plan(const BufferPlan& plan, FunctionStatistics& statistics);

// Device ops in the graph (no reshapes, assignments or host nodes).
int64_t count_device_ops(const Graph& graph);
// Bytes of the inputs and outputs of its device ops (each op counted once).
uint64_t count_bytes_accessed(const Graph& graph);

}  // namespace accel::graph
