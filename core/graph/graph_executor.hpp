// GraphExecutor: runs a compiled Graph. Owns the graph, its buffer plan and
// one arena per device (allocated on the first run and kept, as XLA keeps a
// compiled program's temporary buffers), and binds values to tensors for the
// length of one run. On a device that records (plugin API 1.5: a CUDA graph
// on the GPU), each run of consecutive nodes that touch only buffers kept
// from run to run (the arena, staged arguments, kept results, captures) is
// recorded once and then replayed with one call instead of being dispatched
// node by node. Not reentrant: Function serializes calls.
#pragma once

#include "graph/graph.hpp"
#include "graph/passes/passes.hpp"

#include <accel/function.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace accel::detail {
struct TensorStorage;
class DeviceRecording;
}  // namespace accel::detail

namespace accel::graph {

class GraphExecutor {
 public:
  GraphExecutor(Graph graph, BufferPlan plan);
  ~GraphExecutor();

  // Binds `arguments` to the parameters (same shapes, dtypes and devices as
  // traced: the caller checks the signature) and returns the results.
  std::vector<Tensor> run(std::span<const Tensor> arguments);

  // Runs a kCollectiveNode (an SPMD program's, spmd_program.hpp): given the
  // node's index and its operand, writes its output, which the executor
  // allocated. Without one, a collective node is an error.
  using CollectiveHandler =
      std::function<void(size_t node_index, const Node& node, const Tensor& operand, const Tensor& output)>;
  void set_collective_handler(CollectiveHandler handler) { collective_handler_ = std::move(handler); }

  // Called after each node that runs on its own (not inside a recorded run),
  // with its index: how a cost model reads a device's clock op by op.
  using NodeObserver = std::function<void(size_t node_index)>;
  void set_node_observer(NodeObserver observer) { node_observer_ = std::move(observer); }

  const Graph& graph() const noexcept { return graph_; }
  // Node `index`'s attribute bytes, for an SPMD program that refreshes them
  // itself (spmd_program.hpp).
  std::vector<std::byte>& node_attributes(size_t index) { return graph_.nodes.at(index).attributes; }
  const BufferPlan& plan() const noexcept { return plan_; }
  // Fills the recording fields of `statistics` (recorded_runs ... recording_reason).
  void add_recording_statistics(FunctionStatistics& statistics) const;

 private:
  // Nodes [first, end) on one recording device: device ops whose outputs
  // are planned into the arena or kept results, and reshapes.
  struct RecordedRun {
    size_t first = 0;
    size_t end = 0;
    detail::LogicalDevice* device = nullptr;
    std::unique_ptr<detail::DeviceRecording> recording;
    // The (storage, byte offset) of every operand when it was recorded: a
    // replay is valid only while they are the same. Held, so that no new
    // tensor can get a recorded buffer while the recording names it.
    std::vector<std::pair<std::shared_ptr<detail::TensorStorage>, uint64_t>> operands;
    int32_t recordings_in_a_row = 0;
    bool given_up = false;
  };
  // One node's tensors for the length of a recorded run.
  struct BoundNode {
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
  };

  Tensor allocate_output(const Node& node, ValueId value);
  // Parameters read only by ops of one recording device (a batch cut on the
  // host, or one a strategy copied to the device in a new buffer) are copied
  // into a buffer kept on that device at each call, so that the runs reading
  // them can be recorded too.
  void find_staged_parameters();
  void find_recorded_runs();
  void run_node(size_t index);
  // Binds the run's outputs, then replays its recording, records it, or
  // runs it node by node. Returns the node after the run.
  size_t run_recorded(RecordedRun& run);
  void record(RecordedRun& run, std::span<const BoundNode> bound);
  void give_up(RecordedRun& run, const std::string& reason);
  void release_after(size_t index);

  Graph graph_;
  BufferPlan plan_;
  std::map<detail::LogicalDevice*, std::shared_ptr<detail::TensorStorage>> arenas_;
  // Per node: the values whose last reader it is (released after it runs).
  std::vector<std::vector<ValueId>> released_after_;
  std::vector<Tensor> slots_;
  std::vector<Tensor> node_inputs_;  // run_node's operands, kept to reuse their storage
  std::vector<Tensor> node_outputs_;
  // Where each value is while the graph runs: its traced device, or the
  // recording device a staged parameter (and reshapes of it) is copied to.
  std::vector<detail::LogicalDevice*> device_of_;
  struct StagedParameter {
    size_t index = 0;  // among graph_.parameters
    detail::LogicalDevice* device = nullptr;
    Tensor buffer;     // allocated on the first call, kept
  };
  std::vector<StagedParameter> staged_parameters_;
  std::vector<RecordedRun> recorded_runs_;
  // Results made inside a recorded run (the step's loss) are written to a
  // buffer kept from call to call and handed out as a copy.
  std::vector<bool> is_result_;
  std::map<ValueId, Tensor> kept_results_;
  std::vector<int32_t> run_starting_at_;  // per node: index into recorded_runs_, or -1
  int64_t recordings_ = 0;
  int64_t recorded_replays_ = 0;
  std::string recording_reason_;
  CollectiveHandler collective_handler_;
  NodeObserver node_observer_;
};

}  // namespace accel::graph
