// Elementwise fusion: regions of elementwise ops become one FUSED_ELEMENTWISE
// node whose program (accel_plugin.h, API 1.2) the device runs in one pass
// over memory, with reductions of the region's values as reduced outputs
// (passes.hpp).
//
// Grouping is greedy, in node order. An elementwise op joins the groups that
// produce its inputs (all of them when it can, a DAG region; else one; else
// it starts its own), when they run on its device and iterate over its output
// shape: every op of a group has the group's shape, the iteration shape, and
// only inputs from outside may broadcast into it. A smaller computation (a
// [C] scale of a batch norm) is a group of its own. A REDUCE_SUM / MEAN / MAX
// / MIN of a group's value joins that group as a reduced output.
//
// The fused node takes the place of the group's last elementwise op; a
// reduction after it moves up to it, which is safe as it reads only a value
// of the group and its readers all come later. That place is only right
// when (checked for each candidate group):
//   - nothing outside the group reads a group value before that place (the
//     value would not exist yet); a value read outside, later, or returned
//     stays an output;
//   - no input is written in place (optimizer op, assignment) between its
//     read in the group and that place, and no host node, whose work may
//     write captured tensors, lies within the group's span: reads move later,
//     never across a write;
//   - no op reads a reduction made in the same group;
//   - the program fits ACCEL_FUSED_MAX_INSTRUCTIONS / _INPUTS / _OUTPUTS.
// One-element constants become CONSTANT instructions, not inputs. A
// BROADCAST_TO to the iteration shape is read as a load of its source (the
// load broadcasts), unless the source is written in place in between.
//
// A group of one elementwise op is left alone unless it gains a reduction:
// it would write the same bytes as the op does, so a fusion would buy
// nothing but a less specialized kernel. With a reduction it saves the
// reduction's pass over the value (and writing the value, when nothing else
// reads it).
//
// The device is asked (FusionSupport) with the principal dtype, the dtype of
// the fusion's first input; it may decline, and the ops then stay. An op
// newer than the fusion program's API (ERF) joins only where the device
// claims it as a plain op.
// bytes_saved counts each value that is no longer written out once.
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"
#include "runtime/trace_hooks.hpp"

#include <accel/plugin/op_classes.hpp>
#include <accel/tensor.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>

namespace accel::graph {
namespace {

bool is_reduction(int32_t op) { return op >= ACCEL_OP_REDUCE_SUM && op <= ACCEL_OP_REDUCE_MIN; }

struct Group {
  detail::LogicalDevice* device = nullptr;
  Shape shape;               // the iteration shape
  std::vector<int32_t> nodes;  // elementwise ops and reductions, ascending
  bool alive = true;           // false once merged into another group
};

// A group compiled into a program.
struct CompiledGroup {
  FusedProgram program;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;  // in program.outputs order
  int32_t elementwise_ops = 0;
  int32_t reductions = 0;
  uint64_t bytes_saved = 0;

  bool fits() const {
    return program.instructions.size() <= ACCEL_FUSED_MAX_INSTRUCTIONS && inputs.size() <= ACCEL_FUSED_MAX_INPUTS &&
           program.outputs.size() <= ACCEL_FUSED_MAX_OUTPUTS;
  }
};

class ElementwiseFuser {
 public:
  ElementwiseFuser(Graph& graph, const FusionSupport& support)
      : graph_(graph), support_(support), uses_(graph), group_of_node_(graph.nodes.size(), -1) {}

  FusionStatistics run() {
    std::vector<int32_t> reductions;
    for (size_t index = 0; index < graph_.nodes.size(); ++index) {
      const Node& node = graph_.nodes[index];
      if (fusible_elementwise(node)) {
        add_elementwise(static_cast<int32_t>(index));
      } else if (fusible_reduction(node)) {
        add_reduction(static_cast<int32_t>(index));
        reductions.push_back(static_cast<int32_t>(index));
      }
    }
    for (int32_t reduction : reductions) {
      if (group_of_node_[static_cast<size_t>(reduction)] < 0) add_sibling_reduction(reduction);
    }
    return emit();
  }

 private:
  const Value& value(ValueId id) const { return graph_.values[static_cast<size_t>(id)]; }
  const Node& node(int32_t index) const { return graph_.nodes[static_cast<size_t>(index)]; }

  bool fusible_elementwise(const Node& candidate) const {
    if (!is_fusible_elementwise(candidate.op) || candidate.outputs.size() != 1 || candidate.inputs.empty() ||
        candidate.inputs.size() > 3 || candidate.refresh || candidate.host_work || candidate.has_attributes() ||
        candidate.program) {
      return false;
    }
    const int32_t rank = value(candidate.outputs[0]).shape.rank();
    if (rank > ACCEL_MAX_RANK) return false;
    if (sdk::op_since_minor(candidate.op) > sdk::op_since_minor(ACCEL_OP_FUSED_ELEMENTWISE)) {
      const auto dtype = static_cast<AccelDType>(value(candidate.inputs[0]).dtype);
      if (!support_.plain_op || !support_.plain_op(candidate.device, static_cast<AccelOp>(candidate.op), dtype)) {
        return false;
      }
    }
    return std::all_of(candidate.inputs.begin(), candidate.inputs.end(),
                       [&](ValueId input) { return value(input).shape.rank() <= rank; });
  }

  bool fusible_reduction(const Node& candidate) const {
    if (!is_reduction(candidate.op) || candidate.inputs.size() != 1 || candidate.outputs.size() != 1 ||
        candidate.refresh || candidate.attributes.size() < sizeof(AccelReduceAttributes)) {
      return false;
    }
    const Value& input = value(candidate.inputs[0]);
    if (value(candidate.outputs[0]).dtype != input.dtype) return false;
    const auto& attributes = candidate.attributes_as<AccelReduceAttributes>();
    if (attributes.num_axes < 0 || attributes.num_axes > input.shape.rank()) return false;
    for (int32_t axis = 0; axis < attributes.num_axes; ++axis) {
      if (attributes.axes[axis] < 0 || attributes.axes[axis] >= input.shape.rank()) return false;
      if (axis > 0 && attributes.axes[axis] <= attributes.axes[axis - 1]) return false;
    }
    return true;
  }

  // The group whose elementwise op defines `id`, or -1.
  int32_t elementwise_group_of(ValueId id) const {
    const Value& defined = value(id);
    if (defined.kind != ValueKind::kNodeOutput || defined.producer < 0) return -1;
    if (is_reduction(node(defined.producer).op)) return -1;
    const int32_t group = group_of_node_[static_cast<size_t>(defined.producer)];
    return group >= 0 && groups_[static_cast<size_t>(group)].alive ? group : -1;
  }

  // What a fusion over `iteration` loads for `id`: the source of a
  // BROADCAST_TO to exactly that shape (a load broadcasts its input into the
  // iteration shape, so the elements are the same, and the full-size
  // broadcast is neither written nor read), else `id` itself.
  ValueId loaded_value(ValueId id, const Shape& iteration) const {
    const Value& read = value(id);
    if (read.kind != ValueKind::kNodeOutput || read.shape != iteration) return id;
    const Node& producer = node(read.producer);
    if (producer.op != ACCEL_OP_BROADCAST_TO || producer.inputs.size() != 1) return id;
    const Value& source = value(producer.inputs[0]);
    if (source.device != read.device || source.dtype != read.dtype || source.shape.rank() > iteration.rank()) return id;
    return producer.inputs[0];
  }

  // The iteration shape of a group's nodes: any elementwise member's output.
  Shape iteration_shape(const std::vector<int32_t>& nodes) const {
    for (int32_t member : nodes) {
      if (!is_reduction(node(member).op)) return value(node(member).outputs[0]).shape;
    }
    return value(node(nodes.front()).inputs[0]).shape;
  }

  std::vector<int32_t> with_node(std::vector<int32_t> nodes, int32_t added) const {
    nodes.insert(std::upper_bound(nodes.begin(), nodes.end(), added), added);
    return nodes;
  }

  void add_elementwise(int32_t index) {
    const Node& added = node(index);
    const Value& output = value(added.outputs[0]);
    std::vector<int32_t> candidates;
    for (ValueId input : added.inputs) {
      const int32_t group = elementwise_group_of(input);
      if (group < 0 || std::find(candidates.begin(), candidates.end(), group) != candidates.end()) continue;
      const Group& found = groups_[static_cast<size_t>(group)];
      if (found.device == added.device && found.shape == output.shape) candidates.push_back(group);
    }
    // Every candidate at once (a diamond closes), else the one that ended
    // latest (the chain this op most likely continues), else a group of its own.
    if (candidates.size() > 1) {
      std::vector<int32_t> merged{index};
      for (int32_t group : candidates) {
        const auto& nodes = groups_[static_cast<size_t>(group)].nodes;
        merged.insert(merged.end(), nodes.begin(), nodes.end());
      }
      std::sort(merged.begin(), merged.end());
      if (valid(merged)) {
        for (size_t other = 1; other < candidates.size(); ++other) {
          groups_[static_cast<size_t>(candidates[other])].alive = false;
        }
        assign(candidates[0], std::move(merged));
        return;
      }
    }
    std::sort(candidates.begin(), candidates.end(), [&](int32_t left, int32_t right) {
      return groups_[static_cast<size_t>(left)].nodes.back() > groups_[static_cast<size_t>(right)].nodes.back();
    });
    for (int32_t group : candidates) {
      std::vector<int32_t> grown = with_node(groups_[static_cast<size_t>(group)].nodes, index);
      if (valid(grown)) {
        assign(group, std::move(grown));
        return;
      }
    }
    Group group;
    group.device = added.device;
    group.shape = output.shape;
    groups_.push_back(std::move(group));
    assign(static_cast<int32_t>(groups_.size() - 1), {index});
  }

  void add_reduction(int32_t index) {
    const Node& reduction = node(index);
    const int32_t group = elementwise_group_of(reduction.inputs[0]);
    if (group < 0) return;
    const Group& found = groups_[static_cast<size_t>(group)];
    if (found.device != reduction.device || value(reduction.inputs[0]).shape != found.shape) return;
    std::vector<int32_t> grown = with_node(found.nodes, index);
    if (valid(grown)) assign(group, std::move(grown));
  }

  // A reduction of a value no group computes (a convolution's gradient) joins
  // a group that loads the value over the same iteration space, so one pass
  // over memory feeds both: XLA's sibling multi-output fusion. The reduction
  // moves to the group's place (valid() checks its readers come later).
  void add_sibling_reduction(int32_t index) {
    const Node& reduction = node(index);
    const ValueId reduced = reduction.inputs[0];
    for (size_t group = 0; group < groups_.size(); ++group) {
      const Group& candidate = groups_[group];
      if (!candidate.alive || candidate.device != reduction.device || candidate.shape != value(reduced).shape) continue;
      const bool loads = std::any_of(candidate.nodes.begin(), candidate.nodes.end(), [&](int32_t member) {
        const auto& inputs = node(member).inputs;
        return !is_reduction(node(member).op) && std::find(inputs.begin(), inputs.end(), reduced) != inputs.end();
      });
      if (!loads) continue;
      std::vector<int32_t> grown = with_node(candidate.nodes, index);
      if (valid(grown)) {
        assign(static_cast<int32_t>(group), std::move(grown));
        return;
      }
    }
  }

  void assign(int32_t group, std::vector<int32_t> nodes) {
    for (int32_t member : nodes) group_of_node_[static_cast<size_t>(member)] = group;
    groups_[static_cast<size_t>(group)].nodes = std::move(nodes);
  }

  static bool contains(const std::vector<int32_t>& ascending, int32_t index) {
    return std::binary_search(ascending.begin(), ascending.end(), index);
  }

  bool read_outside(ValueId id, const std::vector<int32_t>& nodes) const {
    if (uses_.is_result[static_cast<size_t>(id)]) return true;
    const auto& readers = uses_.readers[static_cast<size_t>(id)];
    return std::any_of(readers.begin(), readers.end(), [&](int32_t reader) { return !contains(nodes, reader); });
  }

  // Where the fused node of `nodes` (ascending) stands: at the last
  // elementwise op (every group has one).
  int32_t place_of(const std::vector<int32_t>& nodes) const {
    for (auto member = nodes.rbegin(); member != nodes.rend(); ++member) {
      if (!is_reduction(node(*member).op)) return *member;
    }
    return nodes.back();
  }

  // Whether the fused node of `nodes` (ascending) may stand at its place.
  bool valid(const std::vector<int32_t>& nodes) const {
    const int32_t place = place_of(nodes);
    const Shape iteration = iteration_shape(nodes);
    if (host_node_between(uses_.host_nodes, nodes.front(), place)) return false;
    for (int32_t member : nodes) {
      const Node& current = node(member);
      for (ValueId input : current.inputs) {
        const Value& read = value(input);
        if (read.kind == ValueKind::kNodeOutput && contains(nodes, read.producer)) {
          if (is_reduction(node(read.producer).op)) return false;  // a reduction is no instruction value
          continue;
        }
        if (written_between(uses_.writers, storage_root(graph_, input), member, place)) return false;
        const ValueId loaded = loaded_value(input, iteration);
        if (loaded != input &&
            written_between(uses_.writers, storage_root(graph_, loaded), value(input).producer, place)) {
          return false;  // the broadcast read its source before that write; the fusion would read it after
        }
      }
      for (ValueId output : current.outputs) {
        for (int32_t reader : uses_.readers[static_cast<size_t>(output)]) {
          if (!contains(nodes, reader) && reader < place) return false;
        }
      }
    }
    return compile(nodes).fits();
  }

  // The value of a one-element constant, when a double holds it exactly.
  std::optional<double> inline_constant(ValueId id) const {
    auto cached = inline_constants_.find(id);
    if (cached != inline_constants_.end()) return cached->second;
    std::optional<double> result;
    const Value& constant = value(id);
    if (constant.kind == ValueKind::kConstant && constant.tensor.defined() && constant.shape.element_count() == 1) {
      detail::TraceHooksSuspension compile_time_read;
      switch (constant.dtype) {
        case DType::kFloat32: result = static_cast<double>(constant.tensor.to_vector<float>()[0]); break;
        case DType::kInt32: result = static_cast<double>(constant.tensor.to_vector<int32_t>()[0]); break;
        case DType::kUInt8: result = static_cast<double>(constant.tensor.to_vector<uint8_t>()[0]); break;
        case DType::kBool: result = constant.tensor.to_vector<bool>()[0] ? 1.0 : 0.0; break;
        case DType::kInt64: {
          const int64_t number = constant.tensor.to_vector<int64_t>()[0];
          if (std::llabs(number) <= (int64_t{1} << 53)) result = static_cast<double>(number);
          break;
        }
        default: break;  // 16-bit floats: loaded
      }
    }
    inline_constants_.emplace(id, result);
    return result;
  }

  CompiledGroup compile(const std::vector<int32_t>& nodes) const {
    CompiledGroup compiled;
    std::map<ValueId, int32_t> instruction_of;
    auto emit = [&](const AccelFusedInstruction& instruction) {
      compiled.program.instructions.push_back(instruction);
      return static_cast<int32_t>(compiled.program.instructions.size() - 1);
    };
    const Shape iteration = iteration_shape(nodes);
    auto operand = [&](ValueId read) {
      const ValueId input = loaded_value(read, iteration);
      auto found = instruction_of.find(input);
      if (found != instruction_of.end()) return found->second;
      AccelFusedInstruction instruction{};
      instruction.dtype = static_cast<AccelDType>(value(input).dtype);
      instruction.operands[0] = instruction.operands[1] = instruction.operands[2] = -1;
      if (std::optional<double> constant = inline_constant(input)) {
        instruction.kind = ACCEL_FUSED_CONSTANT;
        instruction.value = *constant;
      } else {
        instruction.kind = ACCEL_FUSED_LOAD;
        instruction.operands[0] = static_cast<int32_t>(compiled.inputs.size());
        compiled.inputs.push_back(input);
      }
      const int32_t index = emit(instruction);
      instruction_of.emplace(input, index);
      return index;
    };
    for (int32_t member : nodes) {
      const Node& current = node(member);
      if (is_reduction(current.op)) {
        const auto& attributes = current.attributes_as<AccelReduceAttributes>();
        AccelFusedOutput output{};
        output.value = operand(current.inputs[0]);  // a sibling reduction's value is a load
        output.reduce_op = static_cast<AccelOp>(current.op);
        output.num_axes = attributes.num_axes;
        std::copy(attributes.axes, attributes.axes + attributes.num_axes, output.axes);
        output.keep_dims = attributes.keep_dims;
        compiled.program.outputs.push_back(output);
        compiled.outputs.push_back(current.outputs[0]);
        ++compiled.reductions;
        continue;
      }
      AccelFusedInstruction instruction{};
      instruction.kind = ACCEL_FUSED_OP;
      instruction.op = static_cast<AccelOp>(current.op);
      const ValueId result = current.outputs[0];
      instruction.dtype = static_cast<AccelDType>(value(result).dtype);
      instruction.operands[0] = instruction.operands[1] = instruction.operands[2] = -1;
      for (size_t position = 0; position < current.inputs.size(); ++position) {
        instruction.operands[position] = operand(current.inputs[position]);
      }
      const int32_t index = emit(instruction);
      instruction_of[result] = index;
      ++compiled.elementwise_ops;
      if (read_outside(result, nodes)) {
        AccelFusedOutput output{};
        output.value = index;
        compiled.program.outputs.push_back(output);
        compiled.outputs.push_back(result);
      } else {
        compiled.bytes_saved += value(result).byte_size();
      }
    }
    return compiled;
  }

  FusionStatistics emit() {
    struct Replacement {
      int32_t place;
      Node fused;
    };
    std::vector<Replacement> replacements;
    std::vector<bool> removed(graph_.nodes.size(), false);
    FusionStatistics statistics;
    for (const Group& group : groups_) {
      if (!group.alive) continue;
      CompiledGroup compiled = compile(group.nodes);
      if (compiled.elementwise_ops == 0 || (compiled.elementwise_ops == 1 && compiled.reductions == 0)) continue;
      if (compiled.outputs.empty() || !compiled.fits()) continue;
      const AccelDType principal = compiled.inputs.empty()
                                       ? compiled.program.instructions.front().dtype
                                       : static_cast<AccelDType>(value(compiled.inputs.front()).dtype);
      if (!support_.fused_elementwise || !support_.fused_elementwise(group.device, principal)) continue;

      compiled.program.shape = group.shape;
      Node fused;
      fused.op = ACCEL_OP_FUSED_ELEMENTWISE;
      fused.device = group.device;
      fused.inputs = compiled.inputs;
      fused.outputs = compiled.outputs;
      AccelFusedElementwiseAttributes attributes{};
      attributes.struct_size = sizeof(attributes);
      attributes.rank = group.shape.rank();
      for (int32_t axis = 0; axis < group.shape.rank(); ++axis) attributes.shape[axis] = group.shape[axis];
      attributes.num_instructions = static_cast<int32_t>(compiled.program.instructions.size());
      attributes.num_outputs = static_cast<int32_t>(compiled.program.outputs.size());
      fused.attributes.resize(sizeof(attributes));
      std::memcpy(fused.attributes.data(), &attributes, sizeof(attributes));
      fused.program = std::make_shared<FusedProgram>(std::move(compiled.program));
      std::string names;
      for (int32_t member : group.nodes) {
        if (!names.empty()) names += '+';
        names += node_name(node(member).op);
      }
      fused.label = "Fusion(" + names + ")";

      const int32_t place = place_of(group.nodes);
      fused.region = node(place).region;
      for (int32_t member : group.nodes) removed[static_cast<size_t>(member)] = member != place;
      statistics.fusions += 1;
      statistics.ops_fused += static_cast<int32_t>(group.nodes.size());
      statistics.bytes_saved += compiled.bytes_saved;
      replacements.push_back({place, std::move(fused)});
    }
    // Every group was compiled on the graph as traced; now rewrite it.
    for (Replacement& replacement : replacements) {
      for (size_t output = 0; output < replacement.fused.outputs.size(); ++output) {
        Value& defined = graph_.values[static_cast<size_t>(replacement.fused.outputs[output])];
        defined.producer = replacement.place;
        defined.output_index = static_cast<int32_t>(output);
      }
      graph_.nodes[static_cast<size_t>(replacement.place)] = std::move(replacement.fused);
    }
    if (!replacements.empty()) graph_.erase_nodes(removed);
    return statistics;
  }

  Graph& graph_;
  const FusionSupport& support_;
  const ValueUses uses_;
  std::vector<int32_t> group_of_node_;
  std::vector<Group> groups_;
  mutable std::map<ValueId, std::optional<double>> inline_constants_;
};

}  // namespace

FusionStatistics fuse_elementwise(Graph& graph, const FusionSupport& support) {
  return ElementwiseFuser(graph, support).run();
}

}  // namespace accel::graph
