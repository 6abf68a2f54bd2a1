// simplify_pooling_gradients on hand-built backward passes of ReLU ->
// MaxPool: the ReLU mask and the bias gradient's sum move before the pooling
// gradient (and compute the same numbers), and what it must leave alone: a
// pooling gradient read by something else, a mask on another tensor, a
// padding that leaves windows empty.
#include "pass_test_graphs.hpp"

#include <accel/ops.hpp>

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

std::vector<std::byte> pool_2x2(int32_t pad = 0) {
  AccelPoolAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.window_h = attributes.window_w = 2;
  attributes.stride_h = attributes.stride_w = 2;
  attributes.pad_top = attributes.pad_bottom = attributes.pad_left = attributes.pad_right = pad;
  return testing::bytes_of(attributes);
}

// x -> y = relu(x) -> MaxPool 2x2; the backward pass of a gradient dy of the
// pooled output: dx = MaxPoolGrad(y, dy), g = ReluGrad(dx, y), bias = Sum(g).
struct PoolingBackward {
  GraphBuilder builder{testing::cpu_device()};
  ValueId x = builder.parameter({2, 6, 6, 3});
  ValueId dy = builder.parameter({2, 3, 3, 3});
  ValueId y = builder.unary(ACCEL_OP_RELU, x);
  ValueId pooled = builder.op(ACCEL_OP_MAX_POOL, {y}, {2, 3, 3, 3}, DType::kFloat32, pool_2x2());
  ValueId dx = builder.op(ACCEL_OP_MAX_POOL_BACKWARD, {y, dy}, {2, 6, 6, 3}, DType::kFloat32, pool_2x2());
  ValueId g = builder.binary(ACCEL_OP_RELU_BACKWARD, dx, y);
  ValueId bias = builder.reduce(ACCEL_OP_REDUCE_SUM, g, {0, 1, 2});

  PoolingBackward() {
    builder.result(pooled);
    builder.result(g);
    builder.result(bias);
  }
  std::vector<Tensor> arguments() const {
    // Clamped at 1: ties inside windows (at 1, and at 0 after the ReLU).
    return {ops::minimum(testing::random_tensor({2, 6, 6, 3}, 5), ops::fill({}, 1.0)),
            testing::random_tensor({2, 3, 3, 3}, 6)};
  }
};

TEST(PoolingGradientMasks, TheMaskAndTheBiasSumMoveBeforeThePoolingGradient) {
  PoolingBackward backward;
  Graph& graph = backward.builder.graph;
  const std::vector<Tensor> expected = testing::run_graph(graph, backward.arguments());

  EXPECT_EQ(simplify_pooling_gradients(graph), 2);
  graph.verify();
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_RELU, ACCEL_OP_MAX_POOL, ACCEL_OP_RELU_BACKWARD,
                                                          ACCEL_OP_MAX_POOL_BACKWARD, ACCEL_OP_REDUCE_SUM}));
  const Node& mask = graph.nodes[2];
  EXPECT_EQ(mask.inputs, (std::vector<ValueId>{backward.dy, backward.pooled}));
  EXPECT_EQ(graph.values[static_cast<size_t>(mask.outputs[0])].shape, Shape({2, 3, 3, 3}));
  EXPECT_EQ(graph.nodes[3].inputs, (std::vector<ValueId>{backward.y, mask.outputs[0]}));
  EXPECT_EQ(graph.nodes[3].outputs[0], backward.g);
  EXPECT_EQ(graph.nodes[4].inputs[0], mask.outputs[0]);  // the sum runs over the pooled gradient
  testing::expect_same_results(testing::run_graph(graph, backward.arguments()), expected);
}

TEST(PoolingGradientMasks, APoolingGradientReadElsewhereKeepsItsMask) {
  PoolingBackward backward;
  backward.builder.result(backward.dx);
  Graph& graph = backward.builder.graph;
  // (The sum reads the mask's output, not the pooling gradient: it stays too.)
  EXPECT_EQ(simplify_pooling_gradients(graph), 0);
  EXPECT_EQ(testing::ops_of(graph)[3], ACCEL_OP_RELU_BACKWARD);
}

TEST(PoolingGradientMasks, AMaskOnAnotherTensorIsNotMoved) {
  GraphBuilder builder{testing::cpu_device()};
  const ValueId y = builder.parameter({1, 4, 4, 2});
  const ValueId other = builder.parameter({1, 4, 4, 2});
  const ValueId dy = builder.parameter({1, 2, 2, 2});
  builder.result(builder.op(ACCEL_OP_MAX_POOL, {y}, {1, 2, 2, 2}, DType::kFloat32, pool_2x2()));
  const ValueId dx = builder.op(ACCEL_OP_MAX_POOL_BACKWARD, {y, dy}, {1, 4, 4, 2}, DType::kFloat32, pool_2x2());
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, dx, other));
  EXPECT_EQ(simplify_pooling_gradients(builder.graph), 0);
}

TEST(PoolingGradientMasks, PaddingThatCanLeaveAWindowEmptyIsNotRewritten) {
  GraphBuilder builder{testing::cpu_device()};
  const ValueId y = builder.parameter({1, 4, 4, 2});
  const ValueId dy = builder.parameter({1, 4, 4, 2});
  builder.result(builder.op(ACCEL_OP_MAX_POOL, {y}, {1, 4, 4, 2}, DType::kFloat32, pool_2x2(2)));
  const ValueId dx = builder.op(ACCEL_OP_MAX_POOL_BACKWARD, {y, dy}, {1, 4, 4, 2}, DType::kFloat32, pool_2x2(2));
  const ValueId g = builder.binary(ACCEL_OP_RELU_BACKWARD, dx, y);
  builder.result(g);
  builder.result(builder.reduce(ACCEL_OP_REDUCE_SUM, dx, {0, 1, 2}));
  EXPECT_EQ(simplify_pooling_gradients(builder.graph), 0);
}

}  // namespace
}  // namespace accel::graph
