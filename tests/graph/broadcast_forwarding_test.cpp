// forward_broadcasts on hand-built graphs: binary ops read a broadcast's
// source where their own broadcasting gives the same output (and compute the
// same numbers), and what must stay: a rewrite that would shrink the output,
// a unary op, a broadcast on another device.
#include "pass_test_graphs.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

ValueId broadcast(GraphBuilder& builder, ValueId x, const Shape& to) {
  return builder.op(ACCEL_OP_BROADCAST_TO, {x}, to, builder.dtype(x));
}

TEST(BroadcastForwarding, ABinaryOpReadsTheSourceAndTheBroadcastDies) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 3, 4});
  const ValueId per_channel = builder.parameter({1, 1, 4});
  const ValueId lower_rank = builder.parameter({4});
  const ValueId scaled = builder.binary(ACCEL_OP_MUL, x, broadcast(builder, per_channel, {2, 3, 4}));
  builder.result(builder.binary(ACCEL_OP_SUB, broadcast(builder, lower_rank, {2, 3, 4}), scaled));
  Graph& graph = builder.graph;
  const std::vector<Tensor> arguments{testing::random_tensor({2, 3, 4}, 1), testing::random_tensor({1, 1, 4}, 2),
                                      testing::random_tensor({4}, 3)};
  const std::vector<Tensor> expected = testing::run_graph(graph, arguments);

  EXPECT_EQ(forward_broadcasts(graph), 2);
  EXPECT_EQ(eliminate_dead_code(graph), 2);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_MUL, ACCEL_OP_SUB}));
  EXPECT_EQ(graph.nodes[0].inputs, (std::vector<ValueId>{x, per_channel}));
  EXPECT_EQ(graph.nodes[1].inputs[0], lower_rank);
  testing::expect_same_results(testing::run_graph(graph, arguments), expected);
}

TEST(BroadcastForwarding, OnlyOneOfTwoBroadcastsWhenBothWouldShrinkTheOutput) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId rows = builder.parameter({1, 3, 1});
  const ValueId columns = builder.parameter({1, 1, 4});
  const ValueId other = broadcast(builder, columns, {2, 3, 4});
  builder.result(builder.binary(ACCEL_OP_ADD, broadcast(builder, rows, {2, 3, 4}), other));
  Graph& graph = builder.graph;
  const std::vector<Tensor> arguments{testing::random_tensor({1, 3, 1}, 4), testing::random_tensor({1, 1, 4}, 5)};
  const std::vector<Tensor> expected = testing::run_graph(graph, arguments);

  // Reading both sources would give [1, 3, 4], not [2, 3, 4].
  EXPECT_EQ(forward_broadcasts(graph), 1);
  EXPECT_EQ(graph.nodes.back().inputs, (std::vector<ValueId>{rows, other}));
  graph.verify();
  testing::expect_same_results(testing::run_graph(graph, arguments), expected);
}

TEST(BroadcastForwarding, UnaryOpsAndOtherDevicesKeepTheirBroadcast) {
  GraphBuilder builder(testing::stand_in_device(0));
  const ValueId small = builder.parameter({1, 4});
  const ValueId x = builder.parameter({3, 4});
  builder.result(builder.unary(ACCEL_OP_EXP, broadcast(builder, small, {3, 4})));
  const ValueId elsewhere = broadcast(builder, small, {3, 4});
  builder.on(testing::stand_in_device(1));
  builder.result(builder.binary(ACCEL_OP_MUL, x, elsewhere));
  EXPECT_EQ(forward_broadcasts(builder.graph), 0);
}

TEST(BroadcastForwarding, ABroadcastReadElsewhereStaysForItsOtherReaders) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 4});
  const ValueId bias = builder.parameter({4});
  const ValueId wide = broadcast(builder, bias, {2, 4});
  builder.result(builder.binary(ACCEL_OP_ADD, x, wide));
  builder.result(wide);
  Graph& graph = builder.graph;
  EXPECT_EQ(forward_broadcasts(graph), 1);
  EXPECT_EQ(eliminate_dead_code(graph), 0);
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_BROADCAST_TO, ACCEL_OP_ADD}));
}

}  // namespace
}  // namespace accel::graph
