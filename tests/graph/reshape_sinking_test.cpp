// sink_reshapes on hand-built graphs: reshapes move to just before their
// first reader (chains together), the numbers stay, and a batch norm
// gradient's reshaped sum no longer keeps that sum out of the later fusion
// that loads the same gradient.
#include "pass_test_graphs.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

TEST(ReshapeSinking, AReshapeChainMovesToItsFirstReader) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4, 3});
  const ValueId sum = builder.reduce(ACCEL_OP_REDUCE_SUM, x, {0});
  const ValueId column = builder.reshape(builder.reshape(sum, {3, 1}), {1, 3});
  const ValueId doubled = builder.binary(ACCEL_OP_ADD, x, x);
  builder.result(builder.binary(ACCEL_OP_MUL, doubled, column));
  Graph& graph = builder.graph;
  const std::vector<Tensor> arguments{testing::random_tensor({4, 3}, 11)};
  const std::vector<Tensor> expected = testing::run_graph(graph, arguments);

  EXPECT_EQ(sink_reshapes(graph), 2);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_REDUCE_SUM, ACCEL_OP_ADD, kReshapeNode,
                                                          kReshapeNode, ACCEL_OP_MUL}));
  EXPECT_EQ(graph.values[static_cast<size_t>(column)].producer, 3);
  testing::expect_same_results(testing::run_graph(graph, arguments), expected);
  EXPECT_EQ(sink_reshapes(graph), 0);  // already in place
}

TEST(ReshapeSinking, AReshapedSumJoinsTheFusionThatLoadsItsInput) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId dy = builder.parameter({4, 2, 8});
  const ValueId x = builder.parameter({4, 2, 8});
  const ValueId dy_sum = builder.reshape(builder.reduce(ACCEL_OP_REDUCE_SUM, dy, {0, 1}), {1, 1, 8});
  const ValueId dy_x_sum = builder.reduce(ACCEL_OP_REDUCE_SUM, builder.binary(ACCEL_OP_MUL, dy, x), {0, 1}, true);
  builder.result(builder.binary(ACCEL_OP_SUB, builder.binary(ACCEL_OP_MUL, x, dy_sum), dy_x_sum));
  Graph& graph = builder.graph;
  const Graph reference = graph;

  Graph unsunk = graph;
  fuse_elementwise(unsunk, testing::support_everything());
  EXPECT_EQ(testing::ops_of(unsunk)[0], ACCEL_OP_REDUCE_SUM);  // the reshape holds the sum back

  EXPECT_EQ(sink_reshapes(graph), 1);
  fuse_elementwise(graph, testing::support_everything());
  graph.verify();
  ASSERT_EQ(graph.nodes[0].op, ACCEL_OP_FUSED_ELEMENTWISE);
  EXPECT_EQ(graph.nodes[0].label, "Fusion(Sum+Mul+Sum)");
  const std::vector<Tensor> arguments{testing::random_tensor({4, 2, 8}, 12), testing::random_tensor({4, 2, 8}, 13)};
  const std::vector<Tensor> fused = testing::run_graph(graph, arguments);
  const std::vector<Tensor> plain = testing::run_graph(reference, arguments);
  ASSERT_EQ(fused.size(), plain.size());
  const std::vector<float> actual = fused[0].to_vector<float>(), wanted = plain[0].to_vector<float>();
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], wanted[i], 1e-5 * (1 + std::abs(wanted[i])));
}

TEST(ReshapeSinking, AReshapeOnlyReturnedStaysAfterEverything) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({6});
  const ValueId matrix = builder.reshape(x, {2, 3});
  builder.result(builder.unary(ACCEL_OP_NEG, x));
  builder.result(matrix);
  Graph& graph = builder.graph;
  EXPECT_EQ(sink_reshapes(graph), 1);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_NEG, kReshapeNode}));
  EXPECT_EQ(graph.results[1], matrix);
}

}  // namespace
}  // namespace accel::graph
