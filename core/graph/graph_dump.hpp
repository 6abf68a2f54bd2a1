// The readable text form of a Graph (ACCEL_DUMP_GRAPHS, Function::graph_text):
// one line per value source and per node, in the spirit of XLA's HLO dumps.
//
//   %0 = parameter(0) f32[256,28,28,1] CPU:0
//   %7 = Conv2D(%0, %2) {stride 1x1, dilation 1x1, pad 0,0,0,0, epilogue bias+Relu} f32[256,26,26,32] CPU:0
#pragma once

#include "graph/graph.hpp"
#include "graph/passes/passes.hpp"

#include <string>

namespace accel::graph {

// With a plan, planned values show their arena offset ("@arena+4096").
std::string graph_to_text(const Graph& graph, const std::string& name, const BufferPlan* plan = nullptr);

}  // namespace accel::graph
