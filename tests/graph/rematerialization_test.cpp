// rematerialize on a hand-built two-layer step: which forward ops each
// policy copies, where the copies go (just before the layer's first backward
// op), that the layer's backward ops read them, and what stays kept (the
// dots under kMinimal, a value another layer's backward pass also reads,
// results).
#include "pass_test_graphs.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

// x -> [layer 0: m0 = x w0, a0 = tanh m0] -> [layer 1: m1 = a0 w1, a1 = tanh m1] -> loss = sum a1,
// then layer 1's backward (reads a1 and a0), then layer 0's (reads a0 and m0).
struct TwoLayerStep {
  Graph graph;
  ValueId m0, a0, m1, a1, loss, gradient;
};

TwoLayerStep two_layer_step() {
  GraphBuilder builder(testing::cpu_device());
  TwoLayerStep step;
  auto in = [&](ValueId value, int32_t layer, bool backward) {
    builder.graph.nodes[static_cast<size_t>(builder.graph.values[static_cast<size_t>(value)].producer)].region = {
        .layer = layer, .backward = backward};
    return value;
  };
  const ValueId x = builder.parameter({4, 8});
  const ValueId w0 = builder.capture({8, 8});
  const ValueId w1 = builder.capture({8, 8});
  step.m0 = in(builder.matmul(x, w0), 0, false);
  step.a0 = in(builder.unary(ACCEL_OP_TANH, step.m0), 0, false);
  step.m1 = in(builder.matmul(step.a0, w1), 1, false);
  step.a1 = in(builder.unary(ACCEL_OP_TANH, step.m1), 1, false);
  step.loss = builder.reduce(ACCEL_OP_REDUCE_SUM, step.a1, {0, 1});
  const ValueId seed = in(builder.fill({4, 8}, 1.0), -1, true);
  const ValueId g1 = in(builder.binary(ACCEL_OP_MUL, seed, step.a1), 1, true);
  const ValueId g_a0 = in(builder.binary(ACCEL_OP_MUL, g1, step.a0), 1, true);
  const ValueId g0 = in(builder.binary(ACCEL_OP_MUL, g_a0, step.a0), 0, true);
  step.gradient = in(builder.binary(ACCEL_OP_MUL, g0, step.m0), 0, true);
  builder.result(step.loss);
  builder.result(step.gradient);
  step.graph = std::move(builder.graph);
  return step;
}

const Node& producer_of(const Graph& graph, ValueId value) {
  return graph.nodes[static_cast<size_t>(graph.values[static_cast<size_t>(value)].producer)];
}

// The index of the nth backward node of `layer` (remat's copies included:
// they are part of the layer's backward pass), or -1.
int32_t index_of_backward(const Graph& graph, int32_t layer, int32_t nth) {
  int32_t seen = 0;
  for (int32_t index = 0; index < static_cast<int32_t>(graph.nodes.size()); ++index) {
    const detail::StepRegion& region = graph.nodes[static_cast<size_t>(index)].region;
    if (region.layer == layer && region.backward && seen++ == nth) return index;
  }
  return -1;
}

TEST(Rematerialization, NoneChangesNothing) {
  TwoLayerStep step = two_layer_step();
  const size_t nodes = step.graph.nodes.size();
  EXPECT_EQ(rematerialize(step.graph, RematPolicy::kNone), 0);
  EXPECT_EQ(step.graph.nodes.size(), nodes);
}

TEST(Rematerialization, FullRecomputesEachLayerFromItsInputsBeforeItsBackwardPass) {
  TwoLayerStep step = two_layer_step();
  // Layer 1: a1 and the m1 it needs (from a0, kept: layer 1's backward reads
  // it, so does layer 0's). Layer 0: m0 (a0 stays: another layer reads it).
  EXPECT_EQ(rematerialize(step.graph, RematPolicy::kFull), 3);
  Graph& graph = step.graph;
  graph.verify();
  // Each layer's backward pass opens with its copies: layer 1's two, layer 0's one.
  const int32_t layer1 = index_of_backward(graph, 1, 2);
  const int32_t layer0 = index_of_backward(graph, 0, 1);
  EXPECT_EQ(index_of_backward(graph, 1, 0), layer1 - 2);
  EXPECT_EQ(index_of_backward(graph, 0, 0), layer0 - 1);
  // Just before layer 1's first backward op: the copies of m1's matmul and a1's tanh.
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 - 2)].op, ACCEL_OP_MATMUL);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 - 1)].op, ACCEL_OP_TANH);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 - 2)].inputs[0], step.a0);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 - 1)].inputs[0], graph.nodes[static_cast<size_t>(layer1 - 2)].outputs[0]);
  // Layer 1's backward reads the copy of a1, and the original a0.
  const Node& g1 = graph.nodes[static_cast<size_t>(layer1)];
  EXPECT_EQ(g1.inputs[1], graph.nodes[static_cast<size_t>(layer1 - 1)].outputs[0]);
  EXPECT_NE(g1.inputs[1], step.a1);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 + 1)].inputs[1], step.a0);
  // Before layer 0's: the copy of m0's matmul, which its last backward op reads.
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer0 - 1)].op, ACCEL_OP_MATMUL);
  const Node& last = producer_of(graph, step.gradient);
  EXPECT_EQ(last.inputs[1], graph.nodes[static_cast<size_t>(layer0 - 1)].outputs[0]);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer0)].inputs[1], step.a0);  // kept
  // The originals are read by the forward pass only now.
  const std::vector<std::vector<int32_t>> consumers = graph.consumers();
  for (ValueId forward : {step.m0, step.m1, step.a1}) {
    for (int32_t reader : consumers[static_cast<size_t>(forward)]) {
      EXPECT_FALSE(graph.nodes[static_cast<size_t>(reader)].region.backward) << "value " << forward;
    }
  }
}

TEST(Rematerialization, MinimalKeepsTheDots) {
  TwoLayerStep step = two_layer_step();
  // Only a1's tanh, from the kept m1; m0 is a dot: kept for layer 0.
  EXPECT_EQ(rematerialize(step.graph, RematPolicy::kMinimal), 1);
  Graph& graph = step.graph;
  graph.verify();
  const int32_t layer1 = index_of_backward(graph, 1, 1);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 - 1)].op, ACCEL_OP_TANH);
  EXPECT_EQ(graph.nodes[static_cast<size_t>(layer1 - 1)].inputs[0], step.m1);
  EXPECT_EQ(producer_of(graph, step.gradient).inputs[1], step.m0);
}

TEST(Rematerialization, ResultsAndOpsWithoutRegionsAreKept) {
  TwoLayerStep step = two_layer_step();
  step.graph.results.push_back(step.a1);  // a1 returned: it lives to the end anyway
  // Layer 1 keeps a1; m1 is then not needed. Layer 0 recomputes m0.
  EXPECT_EQ(rematerialize(step.graph, RematPolicy::kFull), 1);
  step.graph.verify();
  for (Node& node : step.graph.nodes) node.region = {};
  const size_t nodes = step.graph.nodes.size();
  EXPECT_EQ(rematerialize(step.graph, RematPolicy::kFull), 0);
  EXPECT_EQ(step.graph.nodes.size(), nodes);
}

}  // namespace
}  // namespace accel::graph
