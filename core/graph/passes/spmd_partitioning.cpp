// The SPMD partitioning pass: layouts propagated forward through the traced
// step, collectives inserted where an op needs its operands split otherwise,
// shapes made per device. One forward sweep in execution order, as a traced
// step is straight-line code; the rule of each op says which shardings it
// runs on, given its operands', and what its outputs then are.
#include "graph/passes/passes.hpp"
#include "graph/passes/storage.hpp"

#include <accel/error.hpp>
#include <accel/plugin/op_classes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

namespace accel::graph {
namespace {

constexpr int32_t kNone = kReplicated;

uint32_t bit(int32_t axis) { return 1u << static_cast<uint32_t>(axis); }

bool completes_by_summing(PartialReduction reduction) {
  return reduction == PartialReduction::kSum || reduction == PartialReduction::kMean;
}

PartialReduction reduction_of(int32_t op) {
  switch (op) {
    case ACCEL_OP_REDUCE_SUM: return PartialReduction::kSum;
    case ACCEL_OP_REDUCE_MEAN: return PartialReduction::kMean;
    case ACCEL_OP_REDUCE_MAX: return PartialReduction::kMax;
    case ACCEL_OP_REDUCE_MIN: return PartialReduction::kMin;
    default: return PartialReduction::kNone;
  }
}

ValueSharding without_partial(ValueSharding sharding) {
  sharding.partial_axes = 0;
  sharding.reduction = PartialReduction::kNone;
  return sharding;
}

// What one op runs on and gives.
struct Rule {
  std::vector<ValueSharding> inputs;
  std::vector<ValueSharding> outputs;
};

class Partitioner {
 public:
  Partitioner(Graph& graph, const SpmdInputs& inputs) : graph_(graph), mesh_(inputs.mesh) {
    for (size_t axis = 0; axis < mesh_.axis_sizes.size(); ++axis) {
      if (mesh_.axis_sizes[axis] < 1) {
        throw InvalidArgumentError(fmt::format("SPMD partitioning: mesh axis '{}' has size {}; expected at least 1",
                                               mesh_.axis_names[axis], mesh_.axis_sizes[axis]));
      }
    }
    if (mesh_.rank() > 31) throw InvalidArgumentError("SPMD partitioning: a mesh has at most 31 axes");
    shardings_.resize(graph_.values.size());
    for (size_t id = 0; id < graph_.values.size(); ++id) {
      shardings_[id] = ValueSharding::replicated(graph_.values[id].shape.rank());
    }
    if (inputs.parameters.size() > graph_.parameters.size()) {
      throw InvalidArgumentError(fmt::format("SPMD partitioning: {} parameter layouts for a step of {} parameters",
                                             inputs.parameters.size(), graph_.parameters.size()));
    }
    for (size_t index = 0; index < inputs.parameters.size(); ++index) {
      set_given(graph_.parameters[index], inputs.parameters[index], fmt::format("parameter {}", index));
    }
    if (inputs.capture) {
      for (size_t id = 0; id < graph_.values.size(); ++id) {
        const Value& value = graph_.values[id];
        if (value.kind != ValueKind::kCapture) continue;
        ValueSharding layout = inputs.capture(static_cast<ValueId>(id), value);
        if (!layout.dimension_axes.empty()) set_given(static_cast<ValueId>(id), layout, fmt::format("captured value {}", id));
      }
    }
    find_wanted_layouts();
  }

  SpmdPartition run() {
    std::vector<Node> nodes = std::move(graph_.nodes);
    graph_.nodes.clear();
    for (Node& node : nodes) {
      consumer_ = node.label.empty() ? node_name(node.op) : node.label;
      consumer_region_ = node.region;
      const Rule rule = rule_for(node);
      const std::vector<ValueId> written = values_written_in_place(node);
      for (size_t input = 0; input < node.inputs.size(); ++input) {
        const ValueId before = node.inputs[input];
        node.inputs[input] = reshard(before, rule.inputs[input]);
        if (node.inputs[input] != before && std::find(written.begin(), written.end(), before) != written.end()) {
          throw InvalidArgumentError(fmt::format(
              "SPMD partitioning: {} updates its input {} in place, whose layout {} is not the one the op runs on, {}; "
              "give an optimizer's slots and gradients the layout of their variable",
              consumer_, input, describe(shardings_[static_cast<size_t>(before)], mesh_),
              describe(rule.inputs[input], mesh_)));
        }
      }
      const int32_t index = static_cast<int32_t>(graph_.nodes.size());
      for (size_t output = 0; output < node.outputs.size(); ++output) {
        graph_.values[static_cast<size_t>(node.outputs[output])].producer = index;
        shardings_[static_cast<size_t>(node.outputs[output])] = normalized(rule.outputs[output]);
      }
      graph_.nodes.push_back(std::move(node));
    }
    consumer_ = "result";
    consumer_region_ = {};
    for (ValueId& result : graph_.results) {
      result = reshard(result, ValueSharding::replicated(graph_.values[static_cast<size_t>(result)].shape.rank()));
    }
    make_shapes_local();
    return SpmdPartition{mesh_, std::move(shardings_), std::move(collectives_)};
  }

 private:
  const ValueSharding& sharding(ValueId id) const { return shardings_[static_cast<size_t>(id)]; }
  const Shape& shape(ValueId id) const { return graph_.values[static_cast<size_t>(id)].shape; }
  int32_t rank(ValueId id) const { return shape(id).rank(); }
  int64_t axis_size(int32_t axis) const { return mesh_.axis_sizes[static_cast<size_t>(axis)]; }

  // Splits over an axis of one device are no splits: no collective for them.
  ValueSharding normalized(ValueSharding sharding) const {
    for (int32_t& axis : sharding.dimension_axes) {
      if (axis != kNone && axis_size(axis) == 1) axis = kNone;
    }
    for (int32_t axis = 0; axis < mesh_.rank(); ++axis) {
      if (axis_size(axis) == 1) sharding.partial_axes &= ~bit(axis);
    }
    if (sharding.partial_axes == 0) sharding.reduction = PartialReduction::kNone;
    return sharding;
  }

  void set_given(ValueId id, const ValueSharding& layout, const std::string& what) {
    const int32_t value_rank = rank(id);
    if (static_cast<int32_t>(layout.dimension_axes.size()) != value_rank) {
      throw InvalidArgumentError(fmt::format("SPMD partitioning: the layout of {} (shape {}) names {} dimensions; "
                                             "expected {}", what, shape(id).to_string(), layout.dimension_axes.size(),
                                             value_rank));
    }
    uint32_t used = 0;
    for (int32_t axis : layout.dimension_axes) {
      if (axis == kNone) continue;
      if (axis < 0 || axis >= mesh_.rank()) {
        throw InvalidArgumentError(fmt::format("SPMD partitioning: the layout of {} names mesh axis {}; the mesh has {}",
                                               what, axis, mesh_.rank()));
      }
      if ((used & bit(axis)) != 0) {
        throw InvalidArgumentError(fmt::format("SPMD partitioning: the layout of {} splits two dimensions over mesh "
                                               "axis '{}'", what, mesh_.axis_names[static_cast<size_t>(axis)]));
      }
      used |= bit(axis);
    }
    shardings_[static_cast<size_t>(id)] = normalized(without_partial(layout));
  }

  // Where a value's only reader will want it split: a gradient its
  // variable's update reads, and what an elementwise chain (a cast back to
  // float32, a loss scale's division) makes it from. A partial sum that must
  // be reduced on the way is then reduce-scattered into that split at once,
  // as XLA's reduce-scatter creator makes an all-reduce and the update's
  // slice one collective, instead of reduced whole and held whole until the
  // update: half the bytes over the links, a 1/N share in memory.
  void find_wanted_layouts() {
    wanted_.assign(graph_.values.size(), std::nullopt);
    const std::vector<std::vector<int32_t>> consumers = graph_.consumers();
    auto only_reader = [&](ValueId id) { return consumers[static_cast<size_t>(id)].size() == 1; };
    for (auto node = graph_.nodes.rbegin(); node != graph_.nodes.rend(); ++node) {
      const int32_t op = node->op;
      if (op == ACCEL_OP_SGD_UPDATE || op == ACCEL_OP_ADAM_UPDATE || op == ACCEL_OP_RMSPROP_UPDATE) {
        const ValueSharding variable = without_partial(sharding(node->inputs[0]));
        if (variable.sharded_axes() == 0) continue;
        for (size_t input = 1; input < node->inputs.size(); ++input) {
          const ValueId id = node->inputs[input];
          if (shape(id) == shape(node->inputs[0]) && only_reader(id)) wanted_[static_cast<size_t>(id)] = variable;
        }
      } else if ((sdk::is_unary_elementwise(op) || sdk::is_binary_elementwise(op) || op == ACCEL_OP_CAST ||
                  op == ACCEL_OP_COPY) &&
                 node->outputs.size() == 1 && wanted_[static_cast<size_t>(node->outputs[0])]) {
        for (ValueId input : node->inputs) {
          if (shape(input) == shape(node->outputs[0]) && only_reader(input)) {
            wanted_[static_cast<size_t>(input)] = wanted_[static_cast<size_t>(node->outputs[0])];
          }
        }
      }
    }
  }

  // --- Collectives ---------------------------------------------------------

  ValueId append_collective(ValueId input, const CollectiveAttributes& attributes, const ValueSharding& result) {
    const Value& source = graph_.values[static_cast<size_t>(input)];
    Node node;
    node.op = kCollectiveNode;
    node.inputs = {input};
    node.attributes.resize(sizeof(CollectiveAttributes));
    std::memcpy(node.attributes.data(), &attributes, sizeof(CollectiveAttributes));
    node.device = source.device;
    node.label = collective_name(attributes.kind);
    // The layer call that needed it: rematerialization may gather a layer's
    // weights again in its backward pass instead of keeping them gathered.
    node.region = consumer_region_;
    Value output;
    output.kind = ValueKind::kNodeOutput;
    output.shape = source.shape;  // global until make_shapes_local
    output.dtype = source.dtype;
    output.device = source.device;
    const auto index = static_cast<int32_t>(graph_.nodes.size());
    output.producer = index;
    const ValueId id = graph_.add_value(std::move(output));
    node.outputs = {id};
    shardings_.push_back(result);
    collectives_.push_back(InsertedCollective{index, input, id, attributes, consumer_, 0, 0});
    graph_.nodes.push_back(std::move(node));
    return id;
  }

  // The collectives that turn `value` into `target`, in XLA's order: partial
  // results reduced first (scattered where the target splits a whole
  // dimension over that axis), then splits that must go gathered (or moved to
  // another dimension by an all-to-all), then new splits cut locally.
  ValueId reshard(ValueId value, ValueSharding target) {
    target = normalized(std::move(target));
    if (sharding(value) == target) return value;
    const auto key = std::make_tuple(value, target.dimension_axes, target.partial_axes,
                                     static_cast<int32_t>(target.reduction));
    if (const auto found = resharded_.find(key); found != resharded_.end()) return found->second;

    ValueId current = value;
    ValueSharding state = sharding(value);
    if (state.is_partial()) {
      uint32_t all_reduce_axes = 0;
      std::vector<std::pair<int32_t, int32_t>> scatters;  // (axis, dimension)
      for (int32_t axis = 0; axis < mesh_.rank(); ++axis) {
        if ((state.partial_axes & bit(axis)) == 0) continue;
        if ((target.partial_axes & bit(axis)) != 0 && target.reduction == state.reduction) continue;
        int32_t dimension = kNone;
        for (size_t d = 0; d < target.dimension_axes.size(); ++d) {
          if (target.dimension_axes[d] == axis && state.dimension_axes[d] == kNone) dimension = static_cast<int32_t>(d);
        }
        if (dimension != kNone && completes_by_summing(state.reduction)) {
          scatters.emplace_back(axis, dimension);
        } else {
          all_reduce_axes |= bit(axis);
        }
      }
      const PartialReduction reduction = state.reduction;
      if (all_reduce_axes != 0) {
        state.partial_axes &= ~all_reduce_axes;
        if (state.partial_axes == 0) state.reduction = PartialReduction::kNone;
        current = append_collective(current, {CollectiveKind::kAllReduce, all_reduce_axes, kNone, kNone, reduction}, state);
      }
      for (const auto& [axis, dimension] : scatters) {
        state.partial_axes &= ~bit(axis);
        if (state.partial_axes == 0) state.reduction = PartialReduction::kNone;
        state.dimension_axes[static_cast<size_t>(dimension)] = axis;
        current = append_collective(current, {CollectiveKind::kReduceScatter, bit(axis), dimension, kNone, reduction}, state);
      }
    }
    const size_t dimensions = state.dimension_axes.size();
    for (size_t d = 0; d < dimensions; ++d) {
      const int32_t axis = state.dimension_axes[d];
      if (axis == kNone || target.dimension_axes[d] == axis) continue;
      int32_t moved_to = kNone;
      for (size_t e = 0; e < dimensions; ++e) {
        if (e != d && target.dimension_axes[e] == axis && state.dimension_axes[e] == kNone) moved_to = static_cast<int32_t>(e);
      }
      state.dimension_axes[d] = kNone;
      if (moved_to != kNone) {
        state.dimension_axes[static_cast<size_t>(moved_to)] = axis;
        current = append_collective(current, {CollectiveKind::kAllToAll, bit(axis), moved_to, static_cast<int32_t>(d),
                                              PartialReduction::kNone}, state);
      } else {
        current = append_collective(current, {CollectiveKind::kAllGather, bit(axis), static_cast<int32_t>(d), kNone,
                                              PartialReduction::kNone}, state);
      }
    }
    for (size_t d = 0; d < dimensions; ++d) {
      const int32_t axis = target.dimension_axes[d];
      if (axis == kNone || state.dimension_axes[d] == axis) continue;
      state.dimension_axes[d] = axis;
      current = append_collective(current, {CollectiveKind::kLocalSlice, bit(axis), static_cast<int32_t>(d), kNone,
                                            PartialReduction::kNone}, state);
    }
    if (!(state == target)) {
      throw InternalError(fmt::format("SPMD partitioning: cannot make {} into {} for {}", describe(sharding(value), mesh_),
                                      describe(target, mesh_), consumer_));
    }
    resharded_.emplace(key, current);
    return current;
  }

  // --- Rules ----------------------------------------------------------------

  Rule rule_for(const Node& node) const {
    const int32_t op = node.op;
    if (op == kReshapeNode) return reshape_rule(node);
    if (op == kAssignNode) {
      return Rule{{without_partial(sharding(node.inputs[0])), without_partial(sharding(node.inputs[0]))}, {}};
    }
    if (op == kCollectiveNode || op == kHostNode) return replicated_rule(node);
    if (sdk::is_unary_elementwise(op) || sdk::is_binary_elementwise(op) || op == ACCEL_OP_SELECT ||
        op == ACCEL_OP_CAST || op == ACCEL_OP_COPY || op == ACCEL_OP_FUSED_ELEMENTWISE) {
      return elementwise_rule(node);
    }
    switch (op) {
      case ACCEL_OP_MATMUL: return matmul_rule(node);
      case ACCEL_OP_REDUCE_SUM:
      case ACCEL_OP_REDUCE_MEAN:
      case ACCEL_OP_REDUCE_MAX:
      case ACCEL_OP_REDUCE_MIN: return reduce_rule(node);
      case ACCEL_OP_TRANSPOSE: return transpose_rule(node);
      case ACCEL_OP_BROADCAST_TO: return broadcast_rule(node);
      case ACCEL_OP_SOFTMAX:
      case ACCEL_OP_LOG_SOFTMAX: return last_axis_whole_rule(node);
      case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY: return cross_entropy_rule(node);
      case ACCEL_OP_ARGMAX: return argmax_rule(node);
      case ACCEL_OP_GATHER: return gather_rule(node);
      case ACCEL_OP_ONE_HOT: return one_hot_rule(node);
      case ACCEL_OP_SLICE:
      case ACCEL_OP_PAD: return resized_dimensions_whole_rule(node);
      case ACCEL_OP_CONCAT: return concat_rule(node);
      case ACCEL_OP_CONV2D:
      case ACCEL_OP_CONV2D_BACKWARD_INPUT:
      case ACCEL_OP_MAX_POOL:
      case ACCEL_OP_MAX_POOL_BACKWARD:
      case ACCEL_OP_AVG_POOL:
      case ACCEL_OP_AVG_POOL_BACKWARD: return batch_split_rule(node, false);
      case ACCEL_OP_CONV2D_BACKWARD_FILTER: return batch_split_rule(node, true);
      case ACCEL_OP_SGD_UPDATE:
      case ACCEL_OP_ADAM_UPDATE:
      case ACCEL_OP_RMSPROP_UPDATE: {
        const ValueSharding variable = without_partial(sharding(node.inputs[0]));
        return Rule{std::vector<ValueSharding>(node.inputs.size(), variable), {}};
      }
      default: return replicated_rule(node);
    }
  }

  // Everything whole on every device: ops with no rule of their own (random
  // and fill ops, batch normalization, host and unknown nodes).
  Rule replicated_rule(const Node& node) const {
    Rule rule;
    for (ValueId input : node.inputs) rule.inputs.push_back(ValueSharding::replicated(rank(input)));
    for (ValueId output : node.outputs) rule.outputs.push_back(ValueSharding::replicated(rank(output)));
    return rule;
  }

  // Which operand's partial result the op may carry through unreduced: all of
  // an ADD / SUB when they agree, the one partial factor of a MUL, the
  // numerator of a DIV, the operand of a NEG or COPY. -1: none may (all
  // operands reduced first); -2: all of them.
  int32_t partial_operand(const Node& node) const {
    auto partial = [&](size_t input) { return sharding(node.inputs[input]).is_partial(); };
    const int32_t op = node.op;
    if (op == ACCEL_OP_NEG || op == ACCEL_OP_COPY) return partial(0) ? 0 : -1;
    if (op == ACCEL_OP_ADD || op == ACCEL_OP_SUB) {
      const ValueSharding& a = sharding(node.inputs[0]);
      const ValueSharding& b = sharding(node.inputs[1]);
      const bool agree = a.is_partial() && a.partial_axes == b.partial_axes && a.reduction == b.reduction &&
                         completes_by_summing(a.reduction);
      return agree ? -2 : -1;
    }
    if (op == ACCEL_OP_MUL && node.inputs.size() == 2 && partial(0) != partial(1)) {
      const int32_t which = partial(0) ? 0 : 1;
      return completes_by_summing(sharding(node.inputs[static_cast<size_t>(which)]).reduction) ? which : -1;
    }
    if (op == ACCEL_OP_DIV && partial(0) && !partial(1) && completes_by_summing(sharding(node.inputs[0]).reduction)) {
      return 0;
    }
    return -1;
  }

  // Elementwise ops (with numpy broadcasting): each output dimension split as
  // the first operand that has it whole-sized and split gives it; operands
  // follow the output; broadcast (size-1) dimensions stay whole.
  Rule elementwise_rule(const Node& node) const {
    const Shape& out = shape(node.outputs[0]);
    const int32_t out_rank = out.rank();
    const int32_t carried = partial_operand(node);
    uint32_t partial_axes = 0;
    PartialReduction reduction = PartialReduction::kNone;
    if (carried != -1) {
      const ValueSharding& source = sharding(node.inputs[static_cast<size_t>(carried == -2 ? 0 : carried)]);
      partial_axes = source.partial_axes;
      reduction = source.reduction;
    }
    std::vector<int32_t> axes(static_cast<size_t>(out_rank), kNone);
    uint32_t used = partial_axes;  // an axis is a split or a partial, never both
    // A partial operand reduced here goes straight into the split its result
    // is wanted in (find_wanted_layouts): a reduce-scatter, not an all-reduce.
    const bool reduces_partial = carried == -1 && std::any_of(node.inputs.begin(), node.inputs.end(), [&](ValueId id) {
      return sharding(id).is_partial();
    });
    if (const std::optional<ValueSharding>& wanted = wanted_[static_cast<size_t>(node.outputs[0])];
        reduces_partial && wanted && static_cast<int32_t>(wanted->dimension_axes.size()) == out_rank) {
      for (int32_t d = 0; d < out_rank; ++d) {
        const int32_t axis = wanted->dimension_axes[static_cast<size_t>(d)];
        if (axis == kNone || out[d] == 1 || (used & bit(axis)) != 0) continue;
        axes[static_cast<size_t>(d)] = axis;
        used |= bit(axis);
      }
    }
    for (int32_t d = 0; d < out_rank; ++d) {
      if (axes[static_cast<size_t>(d)] != kNone) continue;
      if (out[d] == 1) continue;
      for (ValueId input : node.inputs) {
        const int32_t j = d - (out_rank - rank(input));
        if (j < 0 || shape(input)[j] != out[d]) continue;
        const int32_t axis = sharding(input).dimension_axes[static_cast<size_t>(j)];
        if (axis != kNone && (used & bit(axis)) == 0) {
          axes[static_cast<size_t>(d)] = axis;
          used |= bit(axis);
          break;
        }
      }
    }
    Rule rule;
    for (size_t input = 0; input < node.inputs.size(); ++input) {
      const ValueId id = node.inputs[input];
      ValueSharding required = ValueSharding::replicated(rank(id));
      for (int32_t j = 0; j < rank(id); ++j) {
        const int32_t d = j + (out_rank - rank(id));
        if (shape(id)[j] == out[d] && out[d] != 1) required.dimension_axes[static_cast<size_t>(j)] = axes[static_cast<size_t>(d)];
      }
      if (carried == -2 || carried == static_cast<int32_t>(input)) {
        required.partial_axes = partial_axes;
        required.reduction = reduction;
      }
      rule.inputs.push_back(std::move(required));
    }
    rule.outputs.push_back(ValueSharding{axes, partial_axes, reduction});
    return rule;
  }

  // MATMUL a[..., M, K] . b[..., K, N]: batch dimensions as a has them, M as
  // a splits it, N as b does; a contraction dimension split the same way in
  // both gives a partial sum over that axis (the row-parallel matmul, and a
  // weight's gradient over a split batch). A contraction split on one side
  // only is cut on the other side where its axis is free (no communication),
  // else gathered (the FSDP all-gather of a weight).
  Rule matmul_rule(const Node& node) const {
    bool transpose_a = false, transpose_b = false;
    if (node.has_attributes()) {
      const auto& attributes = node.attributes_as<AccelMatmulAttributes>();
      transpose_a = attributes.transpose_a != 0;
      transpose_b = attributes.transpose_b != 0;
    }
    const ValueId a = node.inputs[0], b = node.inputs[1];
    const int32_t rank_a = rank(a), rank_b = rank(b), rank_out = rank(node.outputs[0]);
    const int32_t a_m = transpose_a ? rank_a - 1 : rank_a - 2, a_k = transpose_a ? rank_a - 2 : rank_a - 1;
    const int32_t b_k = transpose_b ? rank_b - 1 : rank_b - 2, b_n = transpose_b ? rank_b - 2 : rank_b - 1;
    const ValueSharding& sa = sharding(a);
    const ValueSharding& sb = sharding(b);
    // One operand's partial sum may pass through (the product is linear in each).
    uint32_t carried_partial = 0;
    int32_t carried_from = -1;
    if (sa.is_partial() != sb.is_partial()) {
      const ValueSharding& partial = sa.is_partial() ? sa : sb;
      if (partial.reduction == PartialReduction::kSum) {
        carried_partial = partial.partial_axes;
        carried_from = sa.is_partial() ? 0 : 1;
      }
    }
    std::vector<int32_t> out(static_cast<size_t>(rank_out), kNone);
    uint32_t used = carried_partial;
    auto take = [&](int32_t axis) {
      if (axis == kNone || (used & bit(axis)) != 0) return kNone;
      used |= bit(axis);
      return axis;
    };
    const int32_t batch = rank_out - 2;
    const Shape& out_shape = shape(node.outputs[0]);
    for (int32_t d = 0; d < batch; ++d) {
      const int32_t ja = d - (batch - (rank_a - 2)), jb = d - (batch - (rank_b - 2));
      int32_t axis = kNone;
      if (ja >= 0 && shape(a)[ja] == out_shape[d]) axis = sa.dimension_axes[static_cast<size_t>(ja)];
      if (axis == kNone && jb >= 0 && shape(b)[jb] == out_shape[d]) axis = sb.dimension_axes[static_cast<size_t>(jb)];
      out[static_cast<size_t>(d)] = take(axis);
    }
    out[static_cast<size_t>(batch)] = take(sa.dimension_axes[static_cast<size_t>(a_m)]);
    out[static_cast<size_t>(batch + 1)] = take(sb.dimension_axes[static_cast<size_t>(b_n)]);
    // The contraction.
    const int32_t ka = sa.dimension_axes[static_cast<size_t>(a_k)], kb = sb.dimension_axes[static_cast<size_t>(b_k)];
    int32_t k = kNone;
    for (int32_t candidate : {ka, kb}) {
      if (k == kNone && candidate != kNone && (used & bit(candidate)) == 0) k = candidate;
    }
    if (k != kNone) used |= bit(k);

    Rule rule;
    auto operand = [&](ValueId id, int32_t m_or_n, int32_t contraction, int32_t out_dimension) {
      ValueSharding required = ValueSharding::replicated(rank(id));
      const int32_t id_batch = rank(id) - 2;
      for (int32_t j = 0; j < id_batch; ++j) {
        const int32_t d = j + (batch - id_batch);
        if (shape(id)[j] == out_shape[d]) required.dimension_axes[static_cast<size_t>(j)] = out[static_cast<size_t>(d)];
      }
      required.dimension_axes[static_cast<size_t>(m_or_n)] = out[static_cast<size_t>(out_dimension)];
      required.dimension_axes[static_cast<size_t>(contraction)] = k;
      return required;
    };
    rule.inputs.push_back(operand(a, a_m, a_k, batch));
    rule.inputs.push_back(operand(b, b_n, b_k, batch + 1));
    if (carried_from >= 0) {
      rule.inputs[static_cast<size_t>(carried_from)].partial_axes = carried_partial;
      rule.inputs[static_cast<size_t>(carried_from)].reduction = PartialReduction::kSum;
    }
    const uint32_t partial = carried_partial | (k != kNone ? bit(k) : 0u);
    rule.outputs.push_back(ValueSharding{out, partial, partial != 0 ? PartialReduction::kSum : PartialReduction::kNone});
    return rule;
  }

  // A reduction over a split dimension leaves a partial result over its axis
  // (sum, mean, max or min, as the op); other dimensions keep their splits.
  Rule reduce_rule(const Node& node) const {
    const ValueId x = node.inputs[0];
    const auto& attributes = node.attributes_as<AccelReduceAttributes>();
    const int32_t x_rank = rank(x);
    std::vector<bool> reduced(static_cast<size_t>(x_rank), false);
    for (int32_t i = 0; i < attributes.num_axes; ++i) {
      const int32_t axis = attributes.axes[i] < 0 ? attributes.axes[i] + x_rank : attributes.axes[i];
      if (axis >= 0 && axis < x_rank) reduced[static_cast<size_t>(axis)] = true;
    }
    const PartialReduction reduction = reduction_of(node.op);
    ValueSharding input = sharding(x);
    uint32_t new_partial = 0;
    for (int32_t d = 0; d < x_rank; ++d) {
      if (reduced[static_cast<size_t>(d)] && input.dimension_axes[static_cast<size_t>(d)] != kNone) {
        new_partial |= bit(input.dimension_axes[static_cast<size_t>(d)]);
      }
    }
    // A partial input passes through a sum (linear) when the kinds agree.
    const bool keep_input_partial = input.is_partial() && input.reduction == reduction && completes_by_summing(reduction);
    if (!keep_input_partial) input = without_partial(input);
    ValueSharding output;
    for (int32_t d = 0; d < x_rank; ++d) {
      if (!reduced[static_cast<size_t>(d)]) {
        output.dimension_axes.push_back(input.dimension_axes[static_cast<size_t>(d)]);
      } else if (attributes.keep_dims != 0) {
        output.dimension_axes.push_back(kNone);
      }
    }
    output.partial_axes = input.partial_axes | new_partial;
    output.reduction = output.partial_axes != 0 ? reduction : PartialReduction::kNone;
    return Rule{{input}, {output}};
  }

  Rule transpose_rule(const Node& node) const {
    const auto& attributes = node.attributes_as<AccelTransposeAttributes>();
    const ValueSharding input = sharding(node.inputs[0]);
    ValueSharding output = input;
    for (int32_t d = 0; d < rank(node.outputs[0]); ++d) {
      output.dimension_axes[static_cast<size_t>(d)] = input.dimension_axes[static_cast<size_t>(attributes.permutation[d])];
    }
    return Rule{{input}, {output}};
  }

  // A reshape keeps a split when the split dimension is the major (first)
  // one of its group of merged or divided dimensions and the group's first
  // output dimension divides by the axis ([B, S, H*D] split on the last
  // dimension becomes [B, S, H, D] split on H); other splits are gathered.
  Rule reshape_rule(const Node& node) const {
    const ValueId x = node.inputs[0];
    const Shape& in = shape(x);
    const Shape& out = shape(node.outputs[0]);
    ValueSharding input = sharding(x);
    ValueSharding output{std::vector<int32_t>(static_cast<size_t>(out.rank()), kNone), input.partial_axes, input.reduction};
    int32_t i = 0, o = 0;
    while (i < in.rank() && o < out.rank()) {
      const int32_t group_in = i, group_out = o;
      int64_t in_product = in[i++], out_product = out[o++];
      while (in_product != out_product) {
        if (in_product < out_product && i < in.rank()) {
          in_product *= in[i++];
        } else if (o < out.rank()) {
          out_product *= out[o++];
        } else {
          break;
        }
      }
      int32_t first_in = -1, first_out = -1;
      for (int32_t d = group_in; d < i && first_in < 0; ++d) first_in = in[d] != 1 ? d : -1;
      for (int32_t d = group_out; d < o && first_out < 0; ++d) first_out = out[d] != 1 ? d : -1;
      for (int32_t d = group_in; d < i; ++d) {
        const int32_t axis = input.dimension_axes[static_cast<size_t>(d)];
        if (axis == kNone) continue;
        if (d == first_in && first_out >= 0 && out[first_out] % axis_size(axis) == 0) {
          output.dimension_axes[static_cast<size_t>(first_out)] = axis;
        } else {
          input.dimension_axes[static_cast<size_t>(d)] = kNone;
        }
      }
    }
    for (; i < in.rank(); ++i) input.dimension_axes[static_cast<size_t>(i)] = kNone;
    return Rule{{input}, {output}};
  }

  Rule broadcast_rule(const Node& node) const {
    const ValueId x = node.inputs[0];
    const Shape& out = shape(node.outputs[0]);
    ValueSharding input = sharding(x);
    ValueSharding output{std::vector<int32_t>(static_cast<size_t>(out.rank()), kNone), input.partial_axes, input.reduction};
    for (int32_t j = 0; j < rank(x); ++j) {
      const int32_t d = j + (out.rank() - rank(x));
      if (shape(x)[j] == out[d] && out[d] != 1) {
        output.dimension_axes[static_cast<size_t>(d)] = input.dimension_axes[static_cast<size_t>(j)];
      } else {
        input.dimension_axes[static_cast<size_t>(j)] = kNone;
      }
    }
    return Rule{{input}, {output}};
  }

  // SOFTMAX and LOG_SOFTMAX normalize over the last axis: it must be whole.
  Rule last_axis_whole_rule(const Node& node) const {
    ValueSharding input = without_partial(sharding(node.inputs[0]));
    if (!input.dimension_axes.empty()) input.dimension_axes.back() = kNone;
    return Rule{{input}, {input}};
  }

  // logits[B, C], labels[B] -> loss[B], backprop[B, C]: the batch split, the classes whole.
  Rule cross_entropy_rule(const Node& node) const {
    const int32_t logits_axis = sharding(node.inputs[0]).dimension_axes[0];
    const int32_t batch_axis = logits_axis != kNone ? logits_axis : sharding(node.inputs[1]).dimension_axes[0];
    const ValueSharding logits{{batch_axis, kNone}, 0, PartialReduction::kNone};
    const ValueSharding labels{{batch_axis}, 0, PartialReduction::kNone};
    return Rule{{logits, labels}, {labels, logits}};
  }

  Rule argmax_rule(const Node& node) const {
    const int32_t axis = node.attributes_as<AccelAxisAttributes>().axis;
    ValueSharding input = without_partial(sharding(node.inputs[0]));
    const int32_t reduced = axis < 0 ? axis + rank(node.inputs[0]) : axis;
    input.dimension_axes[static_cast<size_t>(reduced)] = kNone;
    ValueSharding output = input;
    output.dimension_axes.erase(output.dimension_axes.begin() + reduced);
    return Rule{{input}, {output}};
  }

  // GATHER(params, indices) along `axis`: out = params[:axis] + indices + params[axis+1:];
  // the gathered dimension of params whole, the others and the indices' splits carried.
  Rule gather_rule(const Node& node) const {
    const ValueId params = node.inputs[0], indices = node.inputs[1];
    const int32_t raw_axis = node.attributes_as<AccelAxisAttributes>().axis;
    const int32_t axis = raw_axis < 0 ? raw_axis + rank(params) : raw_axis;
    ValueSharding index_sharding = without_partial(sharding(indices));
    ValueSharding param_sharding = without_partial(sharding(params));
    param_sharding.dimension_axes[static_cast<size_t>(axis)] = kNone;
    uint32_t used = index_sharding.sharded_axes();
    for (int32_t& split : param_sharding.dimension_axes) {
      if (split == kNone) continue;
      if ((used & bit(split)) != 0) {
        split = kNone;
      } else {
        used |= bit(split);
      }
    }
    ValueSharding output;
    for (int32_t d = 0; d < axis; ++d) output.dimension_axes.push_back(param_sharding.dimension_axes[static_cast<size_t>(d)]);
    for (int32_t split : index_sharding.dimension_axes) output.dimension_axes.push_back(split);
    for (int32_t d = axis + 1; d < rank(params); ++d) {
      output.dimension_axes.push_back(param_sharding.dimension_axes[static_cast<size_t>(d)]);
    }
    return Rule{{param_sharding, index_sharding}, {output}};
  }

  Rule one_hot_rule(const Node& node) const {
    const ValueSharding indices = without_partial(sharding(node.inputs[0]));
    ValueSharding output = indices;
    output.dimension_axes.push_back(kNone);
    return Rule{{indices}, {output}};
  }

  // SLICE and PAD: a dimension whose size changes must be whole.
  Rule resized_dimensions_whole_rule(const Node& node) const {
    ValueSharding input = without_partial(sharding(node.inputs[0]));
    const Shape& in = shape(node.inputs[0]);
    const Shape& out = shape(node.outputs[0]);
    for (int32_t d = 0; d < in.rank(); ++d) {
      if (in[d] != out[d]) input.dimension_axes[static_cast<size_t>(d)] = kNone;
    }
    return Rule{{input}, {input}};
  }

  Rule concat_rule(const Node& node) const {
    const int32_t raw_axis = node.attributes_as<AccelAxisAttributes>().axis;
    const int32_t axis = raw_axis < 0 ? raw_axis + rank(node.outputs[0]) : raw_axis;
    ValueSharding common = without_partial(sharding(node.inputs[0]));
    common.dimension_axes[static_cast<size_t>(axis)] = kNone;
    return Rule{std::vector<ValueSharding>(node.inputs.size(), common), {common}};
  }

  // Convolutions and pooling (NHWC): the batch split carried, the rest whole.
  // A filter gradient sums over the batch: partial over the batch's axis.
  Rule batch_split_rule(const Node& node, bool sums_over_batch) const {
    int32_t batch_axis = kNone;
    for (ValueId input : node.inputs) {
      if (rank(input) == 4 && batch_axis == kNone) batch_axis = sharding(input).dimension_axes[0];
    }
    Rule rule;
    for (size_t input = 0; input < node.inputs.size(); ++input) {
      ValueSharding required = ValueSharding::replicated(rank(node.inputs[input]));
      // The filter (input 1 of CONV2D and CONV2D_BACKWARD_INPUT) stays whole.
      const bool filter = input == 1 && (node.op == ACCEL_OP_CONV2D || node.op == ACCEL_OP_CONV2D_BACKWARD_INPUT);
      if (!filter && rank(node.inputs[input]) == 4) required.dimension_axes[0] = batch_axis;
      rule.inputs.push_back(std::move(required));
    }
    for (ValueId output : node.outputs) {
      ValueSharding produced = ValueSharding::replicated(rank(output));
      if (sums_over_batch) {
        if (batch_axis != kNone) {
          produced.partial_axes = bit(batch_axis);
          produced.reduction = PartialReduction::kSum;
        }
      } else if (rank(output) == 4) {
        produced.dimension_axes[0] = batch_axis;
      }
      rule.outputs.push_back(std::move(produced));
    }
    return rule;
  }

  // --- Per-device shapes ------------------------------------------------------

  void make_shapes_local() {
    for (size_t id = 0; id < graph_.values.size(); ++id) {
      Value& value = graph_.values[id];
      const std::string what =
          value.kind == ValueKind::kNodeOutput && value.producer >= 0
              ? fmt::format("the output of {} (value {})", node_name(graph_.nodes[static_cast<size_t>(value.producer)].op), id)
              : fmt::format("value {}", id);
      value.shape = local_shape(value.shape, shardings_[id], mesh_, what);
    }
    for (InsertedCollective& collective : collectives_) {
      collective.input_bytes = graph_.values[static_cast<size_t>(collective.input)].byte_size();
      collective.output_bytes = graph_.values[static_cast<size_t>(collective.output)].byte_size();
    }
  }

  Graph& graph_;
  MeshShape mesh_;
  std::vector<ValueSharding> shardings_;
  std::vector<std::optional<ValueSharding>> wanted_;  // per value: find_wanted_layouts
  std::vector<InsertedCollective> collectives_;
  std::map<std::tuple<ValueId, std::vector<int32_t>, uint32_t, int32_t>, ValueId> resharded_;
  std::string consumer_;
  detail::StepRegion consumer_region_;
};

}  // namespace

SpmdPartition partition_spmd(Graph& graph, const SpmdInputs& inputs) {
  SpmdPartition partition = Partitioner(graph, inputs).run();
  graph.verify();
  return partition;
}

}  // namespace accel::graph
