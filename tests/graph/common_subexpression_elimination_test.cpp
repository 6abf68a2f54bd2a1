// eliminate_common_subexpressions on hand-built graphs: what it merges, and
// what it must keep apart (attributes, output types, devices, in-place
// writes, random streams, host work).
#include "pass_test_graphs.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

TEST(CommonSubexpressionElimination, MergesRepeatedChains) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4});
  const ValueId first = builder.unary(ACCEL_OP_NEG, builder.unary(ACCEL_OP_EXP, x));
  const ValueId second = builder.unary(ACCEL_OP_NEG, builder.unary(ACCEL_OP_EXP, x));
  builder.result(builder.binary(ACCEL_OP_ADD, first, second));
  builder.result(second);
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_common_subexpressions(graph), 2);
  graph.verify();
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_EXP, ACCEL_OP_NEG, ACCEL_OP_ADD}));
  const Node& add = graph.nodes[2];
  EXPECT_EQ(add.inputs[0], add.inputs[1]);
  EXPECT_EQ(graph.results[1], add.inputs[0]);  // a result renamed to the kept value
}

TEST(CommonSubexpressionElimination, MergesFillsAndReshapesOfTheSameKind) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 3});
  builder.result(builder.fill({2}, 1.5));
  builder.result(builder.fill({2}, 1.5));
  builder.result(builder.reshape(x, {6}));
  builder.result(builder.reshape(x, {6}));
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_common_subexpressions(graph), 2);
  graph.verify();
  EXPECT_EQ(graph.results[0], graph.results[1]);
  EXPECT_EQ(graph.results[2], graph.results[3]);
}

TEST(CommonSubexpressionElimination, KeepsApartDifferentAttributesAndOutputTypes) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 3});
  builder.result(builder.reduce(ACCEL_OP_REDUCE_SUM, x, {0}));
  builder.result(builder.reduce(ACCEL_OP_REDUCE_SUM, x, {1}));
  builder.result(builder.cast(x, DType::kInt32));
  builder.result(builder.cast(x, DType::kUInt8));
  builder.result(builder.reshape(x, {6}));
  builder.result(builder.reshape(x, {3, 2}));
  builder.result(builder.fill({2}, 1.0));
  builder.result(builder.fill({2}, 2.0));
  builder.result(builder.fill({3}, 1.0));
  builder.result(builder.op(ACCEL_OP_BROADCAST_TO, {x}, {2, 2, 3}));
  builder.result(builder.op(ACCEL_OP_BROADCAST_TO, {x}, {4, 2, 3}));
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_common_subexpressions(graph), 0);
  EXPECT_EQ(graph.nodes.size(), 11u);
}

TEST(CommonSubexpressionElimination, KeepsApartOpsOnDifferentDevices) {
  GraphBuilder builder(testing::stand_in_device(0));
  const ValueId x = builder.parameter({4});
  builder.result(builder.unary(ACCEL_OP_EXP, x));
  builder.on(testing::stand_in_device(1));
  builder.result(builder.unary(ACCEL_OP_EXP, x));
  EXPECT_EQ(eliminate_common_subexpressions(builder.graph), 0);
}

TEST(CommonSubexpressionElimination, NeverMergesAcrossAnInPlaceWriteOfAnInput) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId variable = builder.capture({4});
  const ValueId gradient = builder.parameter({4});
  const ValueId before = builder.unary(ACCEL_OP_EXP, variable);
  const ValueId alias_before = builder.unary(ACCEL_OP_EXP, builder.reshape(variable, {2, 2}));
  builder.sgd_update(variable, gradient);
  const ValueId after = builder.unary(ACCEL_OP_EXP, variable);
  const ValueId alias_after = builder.unary(ACCEL_OP_EXP, builder.reshape(variable, {2, 2}));
  // The same read again after the write does merge with the read after it.
  const ValueId after_again = builder.unary(ACCEL_OP_EXP, variable);
  for (ValueId id : {before, alias_before, after, alias_after, after_again}) builder.result(id);
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_common_subexpressions(graph), 1);
  graph.verify();
  EXPECT_NE(graph.results[0], graph.results[2]);
  EXPECT_NE(graph.results[1], graph.results[3]);
  EXPECT_EQ(graph.results[2], graph.results[4]);
}

TEST(CommonSubexpressionElimination, NeverMergesAcrossAnAssignment) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId variable = builder.capture({4});
  const ValueId before = builder.unary(ACCEL_OP_SQUARE, variable);
  builder.assign(variable, builder.parameter({4}));
  const ValueId after = builder.unary(ACCEL_OP_SQUARE, variable);
  builder.result(before);
  builder.result(after);
  EXPECT_EQ(eliminate_common_subexpressions(builder.graph), 0);
}

TEST(CommonSubexpressionElimination, NeverMergesAValueThatIsWrittenInPlaceLater) {
  // Two copies of x; the second is updated in place. Merged, the update
  // would reach the first copy's readers too.
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4});
  const ValueId first = builder.unary(ACCEL_OP_COPY, x);
  const ValueId second = builder.unary(ACCEL_OP_COPY, x);
  builder.sgd_update(second, builder.parameter({4}));
  builder.result(builder.unary(ACCEL_OP_NEG, first));
  builder.result(builder.unary(ACCEL_OP_NEG, second));
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_common_subexpressions(graph), 0);
  EXPECT_EQ(testing::count_op(graph, ACCEL_OP_COPY), 2);
}

TEST(CommonSubexpressionElimination, KeepsRandomOpsRefreshedOpsAndSideEffects) {
  GraphBuilder builder(testing::cpu_device());
  AccelRandomAttributes random{};
  random.struct_size = sizeof(random);
  random.b = 1.0;
  builder.result(builder.op(ACCEL_OP_RANDOM_UNIFORM, {}, {4}, DType::kFloat32, testing::bytes_of(random)));
  builder.result(builder.op(ACCEL_OP_RANDOM_UNIFORM, {}, {4}, DType::kFloat32, testing::bytes_of(random)));
  const ValueId x = builder.parameter({4});
  builder.result(builder.unary(ACCEL_OP_EXP, x));
  builder.graph.nodes.back().refresh = [](int32_t, void*) {};
  builder.result(builder.unary(ACCEL_OP_EXP, x));
  builder.graph.nodes.back().refresh = [](int32_t, void*) {};
  const ValueId variable = builder.capture({4});
  builder.sgd_update(variable, x);
  builder.sgd_update(variable, x);
  Graph& graph = builder.graph;

  EXPECT_EQ(eliminate_common_subexpressions(graph), 0);
  EXPECT_EQ(graph.nodes.size(), 6u);
}

TEST(CommonSubexpressionElimination, AHostNodeEndsEveryMatch) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId variable = builder.capture({4});
  builder.result(builder.unary(ACCEL_OP_EXP, variable));
  builder.host();  // its work may assign the variable
  builder.result(builder.unary(ACCEL_OP_EXP, variable));
  EXPECT_EQ(eliminate_common_subexpressions(builder.graph), 0);
}

}  // namespace
}  // namespace accel::graph
