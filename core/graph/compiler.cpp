// compile_graph: the pass pipeline, the dumps and the statistics.
#include "graph/compiler.hpp"

#include "graph/graph_dump.hpp"
#include "graph/passes/passes.hpp"
#include "runtime/logging.hpp"
#include "runtime/settings.hpp"

#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace accel::graph {
namespace {

std::atomic<int64_t> next_dump_index{0};

void dump_if_asked(const Graph& graph, const std::string& name, int64_t index, const char* stage) {
  const std::optional<std::string> folder = detail::get_setting("dump_graphs");
  if (!folder || folder->empty()) return;
  std::error_code error;
  std::filesystem::create_directories(*folder, error);
  const std::filesystem::path path =
      std::filesystem::path(*folder) / fmt::format("{:04d}.{}.{}.txt", index, name, stage);
  std::ofstream out(path);
  out << graph_to_text(graph, name);
  if (!out) detail::runtime_log().warn("could not write the graph dump {}", path.string());
}

}  // namespace

int64_t count_device_ops(const Graph& graph) {
  int64_t count = 0;
  for (const Node& node : graph.nodes) count += node.op < ACCEL_OP_COUNT ? 1 : 0;
  return count;
}

uint64_t count_bytes_accessed(const Graph& graph) {
  uint64_t bytes = 0;
  for (const Node& node : graph.nodes) {
    if (node.op >= ACCEL_OP_COUNT) continue;
    for (ValueId input : node.inputs) bytes += graph.values[static_cast<size_t>(input)].byte_size();
    for (ValueId output : node.outputs) bytes += graph.values[static_cast<size_t>(output)].byte_size();
  }
  return bytes;
}

FunctionStatistics optimize_graph(Graph& graph, const FunctionOptions& options) {
  const std::string& name = options.name;
  const int64_t dump_index = next_dump_index.fetch_add(1);
  dump_if_asked(graph, name, dump_index, "before");
  FunctionStatistics statistics;
  statistics.traced_ops = count_device_ops(graph);
  statistics.traced_bytes_accessed = count_bytes_accessed(graph);
  statistics.dead_ops_removed = eliminate_dead_code(graph);
  statistics.common_subexpressions_removed = eliminate_common_subexpressions(graph);
  statistics.constants_folded = fold_constants(graph);
  statistics.pooling_gradients_simplified = simplify_pooling_gradients(graph);
  // After common subexpressions, which would merge the recomputed ops back.
  statistics.ops_recomputed = rematerialize(graph, options.remat);
  if (options.jit_compile) {
    const FusionSupport support = FusionSupport::of_devices();
    statistics.broadcasts_forwarded = forward_broadcasts(graph);
    sink_reshapes(graph);
    const FusionStatistics epilogues = fuse_epilogues(graph, support);
    const FusionStatistics elementwise = fuse_elementwise(graph, support);
    const FusionStatistics pooling = fuse_pooling_into_filter_gradients(graph, support);
    statistics.fusions = epilogues.fusions + elementwise.fusions + pooling.fusions;
    statistics.ops_fused = epilogues.ops_fused + elementwise.ops_fused + pooling.ops_fused;
    statistics.fusion_bytes_saved = epilogues.bytes_saved + elementwise.bytes_saved + pooling.bytes_saved;
  }
  statistics.dead_ops_removed += eliminate_dead_code(graph);
  graph.verify();
  statistics.compiled_ops = count_device_ops(graph);
  statistics.compiled_bytes_accessed = count_bytes_accessed(graph);
  dump_if_asked(graph, name, dump_index, "after");
  return statistics;
}

void record_plan(const BufferPlan& plan, FunctionStatistics& statistics) {
  statistics.in_place_writes = plan.in_place_writes;
  statistics.eager_peak_bytes = plan.eager_peak_bytes;
  statistics.planned_peak_bytes = plan.planned_peak_bytes;
}

CompiledGraph compile_graph(Graph graph, const FunctionOptions& options) {
  CompiledGraph compiled;
  compiled.statistics = optimize_graph(graph, options);
  BufferPlan plan = plan_buffers(graph);
  record_plan(plan, compiled.statistics);
  compiled.text = graph_to_text(graph, options.name, &plan);
  compiled.executor = std::make_unique<GraphExecutor>(std::move(graph), std::move(plan));
  return compiled;
}

}  // namespace accel::graph
