// Epilogue fusion: the elementwise steps that follow a MATMUL or convolution
// move into its epilogue (accel_plugin.h, API 1.2), so that its result makes
// one trip to memory instead of three (passes.hpp).
//
// A chain is taken from the producing op onwards, each step only when the
// value it consumes has that step as its one reader and is no result:
//   bias       ADD(y, bias) or ADD(bias, y), bias of rank 1 over y's last
//              axis, y's shape kept (MATMUL, CONV2D)
//   activation RELU, SIGMOID or TANH of y (MATMUL, CONV2D)
//   mask       RELU_BACKWARD(y, x), x of y's shape (MATMUL,
//              CONV2D_BACKWARD_INPUT): the ReLU gradient of the layer below
// The device is asked for the whole chain, then for ever shorter prefixes;
// the longest it supports is fused. The fused op stays where the producer
// was, so the extra inputs (bias, mask) are read earlier than they were: they
// must be defined before the producer, and nothing in between may write them
// in place (an optimizer updating the bias) or be a host node.
//
// bytes_saved counts each intermediate once: the bytes of a value that is no
// longer written out (and read back by the next step).
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace accel::graph {
namespace {

struct EpilogueStep {
  int32_t node = -1;             // the absorbed node
  int32_t flag = 0;              // its AccelEpilogueFlag
  AccelOp activation = ACCEL_OP_MATMUL;  // with ACCEL_EPILOGUE_ACTIVATION
  ValueId extra_input = kNoValue;        // bias or mask
  const char* label = "";
};

bool takes_bias_and_activation(int32_t op) { return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D; }
bool takes_relu_mask(int32_t op) { return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D_BACKWARD_INPUT; }

class EpilogueFuser {
 public:
  EpilogueFuser(Graph& graph, const FusionSupport& support)
      : graph_(graph), support_(support), uses_(graph) {}

  FusionStatistics run() {
    std::vector<bool> removed(graph_.nodes.size(), false);
    for (size_t index = 0; index < graph_.nodes.size(); ++index) {
      if (removed[index]) continue;
      const Node& producer = graph_.nodes[index];
      if (!has_plain_attributes(producer) || producer.outputs.size() != 1 || producer.refresh ||
          producer.inputs.empty()) {
        continue;
      }
      std::vector<EpilogueStep> chain = candidate_chain(static_cast<int32_t>(index));
      while (!chain.empty() && !supported(producer, chain)) chain.pop_back();
      if (chain.empty()) continue;
      apply(static_cast<int32_t>(index), chain, removed);
    }
    if (statistics_.fusions > 0) graph_.erase_nodes(removed);
    return statistics_;
  }

 private:
  // MATMUL (attributes may be absent: no transposes), CONV2D and
  // CONV2D_BACKWARD_INPUT without an epilogue yet.
  static bool has_plain_attributes(const Node& node) {
    if (node.op == ACCEL_OP_MATMUL) {
      if (!node.has_attributes()) return true;
      return node.attributes.size() >= sizeof(AccelMatmulAttributes) &&
             node.attributes_as<AccelMatmulAttributes>().epilogue_flags == 0;
    }
    if (node.op == ACCEL_OP_CONV2D || node.op == ACCEL_OP_CONV2D_BACKWARD_INPUT) {
      return node.attributes.size() >= sizeof(AccelConv2dAttributes) &&
             node.attributes_as<AccelConv2dAttributes>().epilogue_flags == 0;
    }
    return false;
  }

  const Value& value(ValueId id) const { return graph_.values[static_cast<size_t>(id)]; }

  // The one node reading `id`, when it is no result and reads it on `device`.
  int32_t sole_reader(ValueId id, detail::LogicalDevice* device) const {
    const auto& readers = uses_.readers[static_cast<size_t>(id)];
    if (readers.size() != 1 || uses_.is_result[static_cast<size_t>(id)]) return -1;
    const Node& reader = graph_.nodes[static_cast<size_t>(readers[0])];
    if (reader.device != device || reader.refresh || reader.outputs.size() != 1) return -1;
    return readers[0];
  }

  // Whether `extra`, read by the step at `reader`, may be read instead by the
  // producer at `producer`.
  bool readable_at_producer(ValueId extra, int32_t producer, int32_t reader) const {
    const Value& extra_value = value(extra);
    if (extra_value.kind == ValueKind::kNodeOutput && extra_value.producer >= producer) return false;
    return !written_between(uses_.writers, storage_root(graph_, extra), producer, reader) &&
           !host_node_between(uses_.host_nodes, producer, reader);
  }

  std::vector<EpilogueStep> candidate_chain(int32_t producer_index) const {
    const Node& producer = graph_.nodes[static_cast<size_t>(producer_index)];
    std::vector<EpilogueStep> chain;
    ValueId current = producer.outputs[0];
    const Shape shape = value(current).shape;
    const DType dtype = value(current).dtype;
    if (shape.rank() == 0) return chain;
    auto same_type = [&](ValueId id) { return value(id).shape == shape && value(id).dtype == dtype; };

    int32_t reader = sole_reader(current, producer.device);
    if (reader >= 0 && takes_bias_and_activation(producer.op)) {
      const Node& add = graph_.nodes[static_cast<size_t>(reader)];
      if (add.op == ACCEL_OP_ADD && add.inputs.size() == 2 && same_type(add.outputs[0])) {
        const ValueId bias = add.inputs[0] == current ? add.inputs[1] : add.inputs[0];
        const Value& bias_value = value(bias);
        if (bias != current && bias_value.shape.rank() == 1 && bias_value.shape[0] == shape[shape.rank() - 1] &&
            bias_value.dtype == dtype && readable_at_producer(bias, producer_index, reader)) {
          chain.push_back({reader, ACCEL_EPILOGUE_BIAS, ACCEL_OP_MATMUL, bias, "BiasAdd"});
          current = add.outputs[0];
          reader = sole_reader(current, producer.device);
        }
      }
    }
    if (reader >= 0 && takes_bias_and_activation(producer.op)) {
      const Node& activation = graph_.nodes[static_cast<size_t>(reader)];
      if ((activation.op == ACCEL_OP_RELU || activation.op == ACCEL_OP_SIGMOID || activation.op == ACCEL_OP_TANH) &&
          same_type(activation.outputs[0])) {
        chain.push_back({reader, ACCEL_EPILOGUE_ACTIVATION, static_cast<AccelOp>(activation.op), kNoValue,
                         node_name(activation.op)});
        current = activation.outputs[0];
        reader = sole_reader(current, producer.device);
      }
    }
    if (reader >= 0 && takes_relu_mask(producer.op)) {
      const Node& relu_backward = graph_.nodes[static_cast<size_t>(reader)];
      if (relu_backward.op == ACCEL_OP_RELU_BACKWARD && relu_backward.inputs.size() == 2 &&
          relu_backward.inputs[0] == current && relu_backward.inputs[1] != current &&
          same_type(relu_backward.inputs[1]) && same_type(relu_backward.outputs[0]) &&
          readable_at_producer(relu_backward.inputs[1], producer_index, reader)) {
        chain.push_back({reader, ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_MATMUL, relu_backward.inputs[1], "ReluGrad"});
      }
    }
    return chain;
  }

  static void flags_of(const std::vector<EpilogueStep>& chain, int32_t& flags, AccelOp& activation) {
    flags = 0;
    activation = ACCEL_OP_MATMUL;  // 0: none
    for (const EpilogueStep& step : chain) {
      flags |= step.flag;
      if (step.flag == ACCEL_EPILOGUE_ACTIVATION) activation = step.activation;
    }
  }

  bool supported(const Node& producer, const std::vector<EpilogueStep>& chain) const {
    if (!support_.epilogue) return false;
    int32_t flags = 0;
    AccelOp activation = ACCEL_OP_MATMUL;
    flags_of(chain, flags, activation);
    const auto dtype = static_cast<AccelDType>(value(producer.inputs[0]).dtype);
    return support_.epilogue(producer.device, static_cast<AccelOp>(producer.op), dtype, flags, activation);
  }

  void apply(int32_t producer_index, const std::vector<EpilogueStep>& chain, std::vector<bool>& removed) {
    Node& producer = graph_.nodes[static_cast<size_t>(producer_index)];
    int32_t flags = 0;
    AccelOp activation = ACCEL_OP_MATMUL;
    flags_of(chain, flags, activation);
    // The 1.2 struct, whatever size the trace recorded.
    if (producer.op == ACCEL_OP_MATMUL) {
      AccelMatmulAttributes attributes{};
      if (producer.has_attributes()) {
        std::memcpy(&attributes, producer.attributes.data(),
                    std::min(producer.attributes.size(), sizeof(AccelMatmulAttributes)));
      }
      attributes.struct_size = sizeof(AccelMatmulAttributes);
      attributes.epilogue_flags = flags;
      attributes.activation = activation;
      producer.attributes.resize(sizeof(attributes));
      std::memcpy(producer.attributes.data(), &attributes, sizeof(attributes));
    } else {
      AccelConv2dAttributes attributes{};
      std::memcpy(&attributes, producer.attributes.data(), sizeof(AccelConv2dAttributes));
      attributes.struct_size = sizeof(AccelConv2dAttributes);
      attributes.epilogue_flags = flags;
      attributes.activation = activation;
      producer.attributes.resize(sizeof(attributes));
      std::memcpy(producer.attributes.data(), &attributes, sizeof(attributes));
    }
    if (producer.label.empty()) producer.label = node_name(producer.op);
    ValueId intermediate = producer.outputs[0];
    for (const EpilogueStep& step : chain) {
      statistics_.bytes_saved += value(intermediate).byte_size();
      if (step.extra_input != kNoValue) producer.inputs.push_back(step.extra_input);
      producer.label += std::string("+") + step.label;
      removed[static_cast<size_t>(step.node)] = true;
      intermediate = graph_.nodes[static_cast<size_t>(step.node)].outputs[0];
    }
    // The producer now defines the last step's value; the values before it
    // are read by nothing any more and go with the removed nodes.
    producer.outputs[0] = intermediate;
    Value& fused_output = graph_.values[static_cast<size_t>(intermediate)];
    fused_output.producer = producer_index;
    fused_output.output_index = 0;
    statistics_.fusions += 1;
    statistics_.ops_fused += 1 + static_cast<int32_t>(chain.size());
  }

  Graph& graph_;
  const FusionSupport& support_;
  const ValueUses uses_;
  FusionStatistics statistics_;
};

}  // namespace

FusionStatistics fuse_epilogues(Graph& graph, const FusionSupport& support) {
  return EpilogueFuser(graph, support).run();
}

}  // namespace accel::graph
