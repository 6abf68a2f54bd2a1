// eliminate_dead_code on hand-built graphs: unread chains go, side effects
// and what they read stay.
#include "pass_test_graphs.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

TEST(DeadCodeElimination, RemovesUnreadChainsTransitively) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4});
  const ValueId unused = builder.unary(ACCEL_OP_NEG, builder.unary(ACCEL_OP_EXP, x));
  (void)unused;
  builder.result(builder.unary(ACCEL_OP_RELU, x));
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_dead_code(graph), 2);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_RELU});
  ASSERT_EQ(graph.parameters.size(), 1u);  // the signature stays
  EXPECT_EQ(graph.results.size(), 1u);
  EXPECT_EQ(graph.values.size(), 2u);      // x and the result
}

TEST(DeadCodeElimination, KeepsSideEffectsAndWhatTheyRead) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4});
  const ValueId variable = builder.capture({4});
  const ValueId gradient = builder.binary(ACCEL_OP_MUL, builder.unary(ACCEL_OP_EXP, x), x);
  builder.sgd_update(variable, gradient);
  const ValueId source = builder.unary(ACCEL_OP_NEG, x);
  builder.assign(builder.capture({4}), source);
  builder.host();
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_dead_code(graph), 0);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_EXP, ACCEL_OP_MUL, ACCEL_OP_SGD_UPDATE,
                                                          ACCEL_OP_NEG, kAssignNode, kHostNode}));
}

TEST(DeadCodeElimination, RandomOpsGoUnlessTheyAdvanceAStream) {
  GraphBuilder builder(testing::cpu_device());
  AccelRandomAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.b = 1.0;
  builder.op(ACCEL_OP_RANDOM_UNIFORM, {}, {4}, DType::kFloat32, testing::bytes_of(attributes));
  builder.op(ACCEL_OP_RANDOM_NORMAL, {}, {4}, DType::kFloat32, testing::bytes_of(attributes));
  builder.graph.nodes.back().refresh = [](int32_t, void*) {};
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_dead_code(graph), 1);
  EXPECT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_RANDOM_NORMAL});
}

TEST(DeadCodeElimination, KeepsAReshapeChainThatFeedsAResult) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 3});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  builder.result(builder.reshape(builder.reshape(exp, {6}), {3, 2}));
  builder.unary(ACCEL_OP_SQRT, exp);  // read by nothing
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_dead_code(graph), 1);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_EXP, kReshapeNode, kReshapeNode}));
  EXPECT_EQ(graph.values[static_cast<size_t>(graph.results[0])].shape, (Shape{3, 2}));
}

TEST(DeadCodeElimination, EmptyGraphAndParameterResultsAreFine) {
  GraphBuilder builder(testing::cpu_device());
  builder.result(builder.parameter({1}));
  EXPECT_EQ(eliminate_dead_code(builder.graph), 0);
  builder.graph.verify();
  EXPECT_TRUE(builder.graph.nodes.empty());
}

}  // namespace
}  // namespace accel::graph
