// fold_constants on hand-built graphs, evaluated on the CPU device: what it
// folds (FILL, elementwise, CAST, BROADCAST_TO, reshapes of constants) and
// what it must leave (captures, large outputs, values written in place,
// results, ops that fail).
#include "pass_test_graphs.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

const Value& value_of(const Graph& graph, ValueId id) { return graph.values[static_cast<size_t>(id)]; }

TEST(ConstantFolding, FoldsFillsAndTheElementwiseOpsOnThem) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 2});
  const ValueId three = builder.fill({2, 2}, 3.0);
  const ValueId half = builder.fill({}, 0.5);
  const ValueId scaled = builder.binary(ACCEL_OP_MUL, three, half);  // 1.5
  const ValueId exponent = builder.unary(ACCEL_OP_NEG, scaled);       // -1.5
  builder.result(builder.binary(ACCEL_OP_ADD, x, exponent));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 4);
  graph.verify();
  ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_ADD});
  const Value& folded = value_of(graph, graph.nodes[0].inputs[1]);
  EXPECT_EQ(folded.kind, ValueKind::kConstant);
  EXPECT_EQ(folded.shape, (Shape{2, 2}));
  EXPECT_EQ(folded.tensor.to_vector<float>(), std::vector<float>(4, -1.5f));
  EXPECT_EQ(folded.tensor.device().internal(), testing::cpu_device());
}

TEST(ConstantFolding, FoldsCastBroadcastAndReshapesOfConstants) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({3, 2}, DType::kInt32);
  const ValueId row = builder.constant(Tensor::from_vector<float>({1.9f, -2.5f}, {2}));
  const ValueId integers = builder.cast(row, DType::kInt32);                       // 1, -2
  const ValueId tiled = builder.op(ACCEL_OP_BROADCAST_TO, {integers}, {3, 2}, DType::kInt32);
  const ValueId flat = builder.reshape(tiled, {6});
  builder.result(builder.binary(ACCEL_OP_MUL, x, builder.reshape(flat, {3, 2})));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 4);
  graph.verify();
  ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_MUL});
  const Value& folded = value_of(graph, graph.nodes[0].inputs[1]);
  EXPECT_EQ(folded.kind, ValueKind::kConstant);
  EXPECT_EQ(folded.shape, (Shape{3, 2}));
  EXPECT_EQ(folded.tensor.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 1, -2, 1, -2}));
}

TEST(ConstantFolding, LeavesCapturesAndParameters) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId variable = builder.capture({2}, DType::kFloat32, Tensor::from_vector<float>({1, 2}, {2}));
  const ValueId x = builder.parameter({2});
  builder.result(builder.binary(ACCEL_OP_ADD, builder.unary(ACCEL_OP_EXP, variable), builder.unary(ACCEL_OP_EXP, x)));
  EXPECT_EQ(fold_constants(builder.graph), 0);
  EXPECT_EQ(builder.graph.nodes.size(), 3u);
}

TEST(ConstantFolding, LeavesOutputsOverAMebibyte) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({512, 1024});
  const ValueId large = builder.fill({512, 1024}, 1.0);  // 2 MiB
  const ValueId small = builder.fill({1024}, 2.0);
  builder.result(builder.binary(ACCEL_OP_MUL, builder.binary(ACCEL_OP_ADD, x, large), small));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 1);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_FILL, ACCEL_OP_ADD, ACCEL_OP_MUL}));
  EXPECT_EQ(graph.nodes[0].outputs.size(), 1u);
  EXPECT_EQ(value_of(graph, graph.nodes[2].inputs[1]).kind, ValueKind::kConstant);
}

TEST(ConstantFolding, LeavesAValueWrittenInPlaceAndWhatReadsIt) {
  // An accumulator started by FILL and updated by the optimizer changes every
  // step: it is no constant, nor is anything computed from it, nor an alias.
  GraphBuilder builder(testing::cpu_device());
  const ValueId accumulator = builder.fill({4}, 0.0);
  const ValueId alias = builder.reshape(accumulator, {2, 2});
  builder.result(builder.unary(ACCEL_OP_EXP, accumulator));
  builder.result(builder.unary(ACCEL_OP_NEG, alias));
  builder.sgd_update(builder.reshape(alias, {4}), builder.parameter({4}));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 0);
  EXPECT_EQ(testing::count_op(graph, ACCEL_OP_FILL), 1);
}

TEST(ConstantFolding, LeavesResults) {
  // Each call returns a tensor of its own; a folded result would be shared.
  GraphBuilder builder(testing::cpu_device());
  const ValueId ones = builder.fill({2}, 1.0);
  builder.result(builder.unary(ACCEL_OP_EXP, ones));
  builder.result(builder.reshape(builder.fill({2}, 2.0), {1, 2}));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 1);  // only the first FILL
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_EXP, ACCEL_OP_FILL, kReshapeNode}));
}

TEST(ConstantFolding, LeavesAnOpThatFailsToFailAtEachRun) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId one = builder.fill({2}, 1.0, DType::kInt32);
  const ValueId zero = builder.fill({2}, 0.0, DType::kInt32);
  const ValueId quotient = builder.binary(ACCEL_OP_DIV, one, zero);
  builder.result(builder.binary(ACCEL_OP_ADD, quotient, builder.parameter({2}, DType::kInt32)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 2);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_DIV, ACCEL_OP_ADD}));
}

TEST(ConstantFolding, LeavesOpsOutsideItsList) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId matrix = builder.fill({2, 2}, 1.0);
  const ValueId product = builder.matmul(matrix, matrix);
  const ValueId sum = builder.reduce(ACCEL_OP_REDUCE_SUM, product, {0});
  builder.result(builder.binary(ACCEL_OP_ADD, sum, builder.parameter({2})));
  Graph& graph = builder.graph;

  EXPECT_EQ(fold_constants(graph), 1);
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_MATMUL, ACCEL_OP_REDUCE_SUM, ACCEL_OP_ADD}));
}

}  // namespace
}  // namespace accel::graph
