// GraphExecutor: runs a compiled Graph. Owns the graph, its buffer plan and
// one arena per device (allocated on the first run and kept, as XLA keeps a
// compiled program's temporary buffers), and binds values to tensors for the
// length of one run. Not reentrant: Function serializes calls.
#pragma once

#include "graph/graph.hpp"
#include "graph/passes/passes.hpp"

#include <map>
#include <memory>
#include <span>
#include <vector>

namespace accel::detail {
struct TensorStorage;
}

namespace accel::graph {

class GraphExecutor {
 public:
  GraphExecutor(Graph graph, BufferPlan plan);

  // Binds `arguments` to the parameters (same shapes, dtypes and devices as
  // traced: the caller checks the signature) and returns the results.
  std::vector<Tensor> run(std::span<const Tensor> arguments);

  const Graph& graph() const noexcept { return graph_; }
  const BufferPlan& plan() const noexcept { return plan_; }

 private:
  Tensor allocate_output(const Node& node, ValueId value);

  Graph graph_;
  BufferPlan plan_;
  std::map<detail::LogicalDevice*, std::shared_ptr<detail::TensorStorage>> arenas_;
  // Per node: the values whose last reader it is (released after it runs).
  std::vector<std::vector<ValueId>> released_after_;
  std::vector<Tensor> slots_;
};

}  // namespace accel::graph
