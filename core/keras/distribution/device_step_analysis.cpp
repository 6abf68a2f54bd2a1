// analyze_device_step: the partitioned train step compiled as the first
// device's program (rematerialization and fusions as the model's compile
// asked) and run once on one device, each node's time read off the
// device's clock, each collective recorded with the mesh axes it spans.
#include <accel/error.hpp>
#include <accel/keras/distribution/device_step_analysis.hpp>
#include <accel/keras/model.hpp>

#include "../training/partitioned_step.hpp"
#include "graph/compiler.hpp"

#include <map>

namespace accel::keras::distribution {
namespace {

std::string collective_kind(graph::CollectiveKind kind) {
  switch (kind) {
    case graph::CollectiveKind::kAllGather: return "all_gather";
    case graph::CollectiveKind::kReduceScatter: return "reduce_scatter";
    case graph::CollectiveKind::kAllReduce: return "all_reduce";
    case graph::CollectiveKind::kAllToAll: return "all_to_all";
    case graph::CollectiveKind::kLocalSlice: return "local_slice";
  }
  return "?";
}

std::vector<MeshSpan> spans_of(uint32_t mesh_axes, const graph::MeshShape& mesh) {
  std::vector<MeshSpan> spans;
  for (int32_t axis = 0; axis < mesh.rank(); ++axis) {
    if ((mesh_axes & (1u << static_cast<uint32_t>(axis))) == 0) continue;
    int64_t stride = 1;
    for (int32_t later = axis + 1; later < mesh.rank(); ++later) stride *= mesh.axis_sizes[static_cast<size_t>(later)];
    spans.push_back({mesh.axis_names[static_cast<size_t>(axis)], mesh.axis_sizes[static_cast<size_t>(axis)], stride});
  }
  return spans;
}

}  // namespace

DeviceStepAnalysis analyze_device_step(Model& model, const Tensor& x, const Tensor& y, const Device& device,
                                       const DeviceClock& clock) {
  if (!model.sharding_ || !model.jit_compile_) {
    throw FailedPreconditionError(
        "analyze_device_step: compile the model with jit_compile after set_distribution (keras.distribution)");
  }
  Model::PartitionedStep step = model.partition_train_step(x, y, /*undo_traced_update=*/false);
  graph::Graph& graph = step.graph;
  const graph::MeshShape& mesh = step.partition.mesh;
  DeviceStepAnalysis analysis;
  analysis.mesh_devices = mesh.device_count();

  // Every node and value on `device`; every variable and slot an empty shard.
  accel::detail::LogicalDevice* target = device.internal();
  for (graph::Node& node : graph.nodes) node.device = target;
  for (graph::Value& value : graph.values) {
    value.device = target;
    if (value.kind == graph::ValueKind::kCapture) {
      value.tensor = Tensor::empty(value.shape, value.dtype, device);
      analysis.state_bytes += value.byte_size();
    } else if (value.kind == graph::ValueKind::kConstant) {
      value.tensor = value.tensor.to(device);
    }
  }
  std::vector<Tensor> arguments;
  for (graph::ValueId parameter : graph.parameters) {
    const graph::Value& value = graph.values[static_cast<size_t>(parameter)];
    arguments.push_back(Tensor::empty(value.shape, value.dtype, device));
    analysis.batch_bytes += value.byte_size();
  }

  graph::CompiledGraph compiled = graph::compile_graph(std::move(graph), partitioned_step_options(model));
  analysis.planned_peak_bytes = compiled.statistics.planned_peak_bytes;
  analysis.ops_recomputed = compiled.statistics.ops_recomputed;
  analysis.compiled_ops = compiled.statistics.compiled_ops;

  graph::GraphExecutor& executor = *compiled.executor;
  const graph::Graph& program = executor.graph();
  std::vector<double> clock_after(program.nodes.size(), -1.0);
  executor.set_collective_handler([](size_t, const graph::Node&, const Tensor&, const Tensor&) {});
  executor.set_node_observer([&](size_t index) { clock_after[index] = clock.seconds(); });
  if (clock.start) clock.start();
  double previous = clock.seconds();
  (void)executor.run(arguments);

  std::map<graph::ValueId, int32_t> producer;
  for (size_t index = 0; index < program.nodes.size(); ++index) {
    const graph::Node& node = program.nodes[index];
    StepEvent event;
    event.label = node.label.empty() ? graph::node_name(node.op) : node.label;
    for (graph::ValueId input : node.inputs) {
      if (const auto found = producer.find(input); found != producer.end()) event.inputs_from.push_back(found->second);
      if (program.values[static_cast<size_t>(input)].kind == graph::ValueKind::kParameter) event.reads_batch = true;
    }
    if (node.op == graph::kCollectiveNode) {
      const auto& attributes = node.attributes_as<graph::CollectiveAttributes>();
      const graph::ValueId read = node.inputs.front();
      const graph::ValueId written = node.outputs.front();
      StepCollective collective;
      collective.kind = collective_kind(attributes.kind);
      collective.spans = spans_of(attributes.mesh_axes, mesh);
      collective.bytes = static_cast<double>(
          program.values[static_cast<size_t>(attributes.kind == graph::CollectiveKind::kAllGather ? written : read)]
              .byte_size());
      if (attributes.kind == graph::CollectiveKind::kLocalSlice) {
        event.kind = StepEvent::Kind::kFree;  // a slice of what the device holds: no communication
      } else {
        event.kind = StepEvent::Kind::kCollective;
        event.collective = static_cast<int32_t>(analysis.collectives.size());
        analysis.collectives.push_back(std::move(collective));
      }
    } else if (node.op >= ACCEL_OP_COUNT) {
      event.kind = StepEvent::Kind::kFree;
    } else {
      event.kind = StepEvent::Kind::kOp;
      if (clock_after[index] >= 0) {
        event.seconds = std::max(0.0, clock_after[index] - previous);
        previous = clock_after[index];
      }
    }
    const graph::Node* region_source = &node;
    if (node.op == graph::kCollectiveNode && !node.region.block && !event.inputs_from.empty()) {
      region_source = &program.nodes[static_cast<size_t>(event.inputs_from.front())];
    }
    if (region_source->region.block) {
      event.block = region_source->region.layer;
      event.backward = region_source->region.backward;
    }
    for (graph::ValueId output : node.outputs) producer[output] = static_cast<int32_t>(index);
    analysis.events.push_back(std::move(event));
  }
  // The op that needed each collective: its first reader.
  for (size_t index = 0; index < analysis.events.size(); ++index) {
    for (int32_t from : analysis.events[index].inputs_from) {
      const StepEvent& source = analysis.events[static_cast<size_t>(from)];
      if (source.kind == StepEvent::Kind::kCollective) {
        std::string& consumer = analysis.collectives[static_cast<size_t>(source.collective)].consumer;
        if (consumer.empty()) consumer = analysis.events[index].label;
      }
    }
  }
  return analysis;
}

}  // namespace accel::keras::distribution
