// fuse_pooling_into_filter_gradients on hand-built backward passes of
// Conv2D -> MaxPool: the pooling gradient joins the filter gradient that
// reads it (and the graph computes the same bits on the CPU device), and
// what it must leave alone: a pooling gradient read by something else, ops
// on two devices, a device that does not claim the fused op, and an input
// written in place or a host node between the two.
#include "pass_test_graphs.hpp"

#include <accel/ops.hpp>

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

std::vector<std::byte> pool_2x2() {
  AccelPoolAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.window_h = attributes.window_w = 2;
  attributes.stride_h = attributes.stride_w = 2;
  return testing::bytes_of(attributes);
}

// The filter gradient of a 3x3 convolution of one-channel images x whose
// output y went through 2x2 max pooling, from the pooled gradient dy.
struct FilterGradientThroughPooling {
  explicit FilterGradientThroughPooling(detail::LogicalDevice* device = testing::cpu_device()) : builder(device) {}
  GraphBuilder builder;
  ValueId x = builder.parameter({5, 8, 8, 1});
  ValueId y = builder.parameter({5, 6, 6, 8});
  ValueId dy = builder.parameter({5, 3, 3, 8});
  ValueId dx = builder.op(ACCEL_OP_MAX_POOL_BACKWARD, {y, dy}, {5, 6, 6, 8}, DType::kFloat32, pool_2x2());

  ValueId filter_gradient() {
    const ValueId dfilter = builder.op(ACCEL_OP_CONV2D_BACKWARD_FILTER, {x, dx}, {3, 3, 1, 8}, DType::kFloat32,
                                       testing::bytes_of(GraphBuilder::plain_convolution()));
    builder.result(dfilter);
    return dfilter;
  }
  std::vector<Tensor> arguments() const {
    // y as a ReLU's output: ties at zero inside the windows.
    return {testing::random_tensor({5, 8, 8, 1}, 1), ops::relu(testing::random_tensor({5, 6, 6, 8}, 2)),
            testing::random_tensor({5, 3, 3, 8}, 3)};
  }
};

TEST(PoolFilterGradientFusion, ThePoolingGradientJoinsTheFilterGradient) {
  FilterGradientThroughPooling backward;
  backward.filter_gradient();
  Graph& graph = backward.builder.graph;
  const std::vector<Tensor> expected = testing::run_graph(graph, backward.arguments());

  // The CPU plugin (API 1.4) claims the fused op.
  const FusionStatistics statistics = fuse_pooling_into_filter_gradients(graph, FusionSupport::of_devices());
  graph.verify();
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 2);
  EXPECT_EQ(statistics.bytes_saved, 5u * 6 * 6 * 8 * sizeof(float));
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER}));
  const Node& fused = graph.nodes[0];
  EXPECT_EQ(fused.inputs, (std::vector<ValueId>{backward.x, backward.y, backward.dy}));
  EXPECT_EQ(graph.results, (std::vector<ValueId>{fused.outputs[0]}));  // (values renumbered: dx is gone)
  EXPECT_EQ(graph.values[static_cast<size_t>(fused.outputs[0])].shape, Shape({3, 3, 1, 8}));
  EXPECT_EQ(fused.label, "MaxPoolGrad+Conv2DBackpropFilter");
  const auto& attributes = fused.attributes_as<AccelPoolFilterGradientAttributes>();
  EXPECT_EQ(attributes.struct_size, sizeof(AccelPoolFilterGradientAttributes));
  EXPECT_EQ(attributes.pool.window_h, 2);
  EXPECT_EQ(attributes.pool.stride_w, 2);
  EXPECT_EQ(attributes.convolution.stride_h, 1);
  EXPECT_EQ(attributes.convolution.dilation_w, 1);

  const std::vector<Tensor> actual = testing::run_graph(graph, backward.arguments());
  ASSERT_EQ(actual.size(), 1u);
  EXPECT_EQ(actual[0].to_vector<float>(), expected[0].to_vector<float>());  // the same bits
}

TEST(PoolFilterGradientFusion, APoolingGradientReadElsewhereStays) {
  FilterGradientThroughPooling backward;
  backward.filter_gradient();
  backward.builder.result(backward.dx);
  EXPECT_EQ(fuse_pooling_into_filter_gradients(backward.builder.graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(testing::count_op(backward.builder.graph, ACCEL_OP_MAX_POOL_BACKWARD), 1);
}

TEST(PoolFilterGradientFusion, OpsOnTwoDevicesStayApart) {
  FilterGradientThroughPooling backward(testing::stand_in_device(0));
  backward.builder.on(testing::stand_in_device(1));
  backward.filter_gradient();
  EXPECT_EQ(fuse_pooling_into_filter_gradients(backward.builder.graph, testing::support_everything()).fusions, 0);
}

TEST(PoolFilterGradientFusion, ADeviceThatDoesNotClaimTheOpGetsTheTwoOps) {
  FilterGradientThroughPooling backward(testing::stand_in_device(0));
  backward.filter_gradient();
  FusionSupport support = testing::support_everything();
  support.plain_op = [](detail::LogicalDevice*, AccelOp op, AccelDType) {
    return op != ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER;
  };
  EXPECT_EQ(fuse_pooling_into_filter_gradients(backward.builder.graph, support).fusions, 0);
  support.plain_op = nullptr;  // unset: nothing appended after 1.2 is fused
  EXPECT_EQ(fuse_pooling_into_filter_gradients(backward.builder.graph, support).fusions, 0);
  EXPECT_EQ(fuse_pooling_into_filter_gradients(backward.builder.graph, testing::support_everything()).fusions, 1);
}

TEST(PoolFilterGradientFusion, AnInputWrittenInPlaceInBetweenIsNotReadLater) {
  // An optimizer update of the pooling input between the two nodes: the
  // fused node, in the filter gradient's place, would read the new values.
  GraphBuilder builder(testing::stand_in_device(0));
  const ValueId x = builder.parameter({5, 8, 8, 1});
  const ValueId y = builder.capture({5, 6, 6, 8});
  const ValueId dy = builder.parameter({5, 3, 3, 8});
  const ValueId step = builder.parameter({5, 6, 6, 8});
  const ValueId dx = builder.op(ACCEL_OP_MAX_POOL_BACKWARD, {y, dy}, {5, 6, 6, 8}, DType::kFloat32, pool_2x2());
  builder.sgd_update(y, step);
  builder.result(builder.op(ACCEL_OP_CONV2D_BACKWARD_FILTER, {x, dx}, {3, 3, 1, 8}, DType::kFloat32,
                            testing::bytes_of(GraphBuilder::plain_convolution())));
  EXPECT_EQ(fuse_pooling_into_filter_gradients(builder.graph, testing::support_everything()).fusions, 0);
}

TEST(PoolFilterGradientFusion, AHostNodeInBetweenIsABarrier) {
  FilterGradientThroughPooling backward(testing::stand_in_device(0));
  backward.builder.host();
  backward.filter_gradient();
  EXPECT_EQ(fuse_pooling_into_filter_gradients(backward.builder.graph, testing::support_everything()).fusions, 0);
}

}  // namespace
}  // namespace accel::graph
