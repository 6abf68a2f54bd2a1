// The compiler: a traced Graph in, a GraphExecutor out. Runs the passes in
// order (dead code, common subexpressions, constant folding, pooling
// gradients, rematerialization, then with jit_compile epilogue and
// elementwise fusion and dead code again, then buffer planning), dumps the
// graph before and after when ACCEL_DUMP_GRAPHS names a folder, and counts
// what each pass did.
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

// Device ops in the graph (no reshapes, assignments or host nodes).
int64_t count_device_ops(const Graph& graph);
// Bytes of the inputs and outputs of its device ops (each op counted once).
uint64_t count_bytes_accessed(const Graph& graph);

}  // namespace accel::graph
