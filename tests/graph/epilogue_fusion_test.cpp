// fuse_epilogues on hand-built graphs with stand-in devices: the chains it
// moves into MATMUL / CONV2D / CONV2D_BACKWARD_INPUT, and the ones it must
// leave (other readers, results, other devices, unsupported epilogues, a
// bias written or defined in between).
#include "pass_test_graphs.hpp"

#include "runtime/logical_device.hpp"

#include <gtest/gtest.h>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

detail::LogicalDevice* device() { return testing::stand_in_device(0); }

struct Dense {
  GraphBuilder builder{device()};
  ValueId x = builder.parameter({4, 3});
  ValueId kernel = builder.capture({3, 5});
  ValueId bias = builder.capture({5});
};

TEST(EpilogueFusion, MatmulBiasReluBecomesOneMatmul) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  const ValueId product = builder.matmul(dense.x, dense.kernel);
  const ValueId biased = builder.binary(ACCEL_OP_ADD, product, dense.bias);
  builder.result(builder.unary(ACCEL_OP_RELU, biased));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_epilogues(graph, testing::support_everything());
  graph.verify();
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 3);
  EXPECT_EQ(statistics.bytes_saved, 2u * 4 * 5 * sizeof(float));
  ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_MATMUL});
  const Node& fused = graph.nodes[0];
  EXPECT_EQ(fused.inputs, (std::vector<ValueId>{dense.x, dense.kernel, dense.bias}));
  EXPECT_EQ(fused.outputs, graph.results);
  EXPECT_EQ(fused.label, "MatMul+BiasAdd+Relu");
  ASSERT_EQ(fused.attributes.size(), sizeof(AccelMatmulAttributes));
  const auto& attributes = fused.attributes_as<AccelMatmulAttributes>();
  EXPECT_EQ(attributes.struct_size, sizeof(AccelMatmulAttributes));
  EXPECT_EQ(attributes.epilogue_flags, ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION);
  EXPECT_EQ(attributes.activation, ACCEL_OP_RELU);
}

TEST(EpilogueFusion, BiasMayBeTheFirstOperandAndAMatmulMayHaveNoAttributes) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  const ValueId product = builder.op(ACCEL_OP_MATMUL, {dense.x, dense.kernel}, {4, 5});
  builder.result(builder.unary(ACCEL_OP_TANH, builder.binary(ACCEL_OP_ADD, dense.bias, product)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_epilogues(graph, testing::support_everything()).fusions, 1);
  graph.verify();
  ASSERT_EQ(graph.nodes.size(), 1u);
  const auto& attributes = graph.nodes[0].attributes_as<AccelMatmulAttributes>();
  EXPECT_EQ(attributes.struct_size, sizeof(AccelMatmulAttributes));
  EXPECT_EQ(attributes.transpose_a, 0);
  EXPECT_EQ(attributes.epilogue_flags, ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION);
  EXPECT_EQ(attributes.activation, ACCEL_OP_TANH);
}

TEST(EpilogueFusion, ConvolutionBiasSigmoid) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({2, 5, 5, 3});
  const ValueId filter = builder.capture({3, 3, 3, 4});
  const ValueId bias = builder.capture({4});
  const ValueId convolved = builder.conv2d(x, filter);
  builder.result(builder.unary(ACCEL_OP_SIGMOID, builder.binary(ACCEL_OP_ADD, convolved, bias)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_epilogues(graph, testing::support_everything()).fusions, 1);
  graph.verify();
  ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_CONV2D});
  const auto& attributes = graph.nodes[0].attributes_as<AccelConv2dAttributes>();
  EXPECT_EQ(attributes.stride_h, 1);
  EXPECT_EQ(attributes.epilogue_flags, ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION);
  EXPECT_EQ(attributes.activation, ACCEL_OP_SIGMOID);
  EXPECT_EQ(graph.nodes[0].label, "Conv2D+BiasAdd+Sigmoid");
}

TEST(EpilogueFusion, ReluGradientIntoTheGradientThatFeedsIt) {
  GraphBuilder builder(device());
  // Dense: dx = dy . W^T, then the ReLU gradient of the layer below.
  const ValueId dy = builder.parameter({4, 5});
  const ValueId kernel_transposed = builder.capture({5, 3});
  const ValueId pre_activation = builder.parameter({4, 3});
  const ValueId dx = builder.matmul(dy, kernel_transposed);
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, dx, pre_activation));
  // Convolution: the input gradient, then the ReLU gradient.
  const ValueId conv_dy = builder.parameter({2, 3, 3, 4});
  const ValueId filter = builder.capture({3, 3, 2, 4});
  const ValueId conv_pre_activation = builder.parameter({2, 5, 5, 2});  // parameter 3
  const ValueId conv_dx = builder.conv2d_backward_input(conv_dy, filter, {2, 5, 5, 2});
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, conv_dx, conv_pre_activation));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_epilogues(graph, testing::support_everything());
  graph.verify();
  EXPECT_EQ(statistics.fusions, 2);
  EXPECT_EQ(statistics.ops_fused, 4);
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_MATMUL, ACCEL_OP_CONV2D_BACKWARD_INPUT}));
  // Value ids are renumbered when nodes go: compare what the inputs are.
  EXPECT_EQ(graph.nodes[0].inputs.back(), pre_activation);  // made before any node output
  const Value& conv_mask = graph.values[static_cast<size_t>(graph.nodes[1].inputs.back())];
  EXPECT_EQ(conv_mask.kind, ValueKind::kParameter);
  EXPECT_EQ(conv_mask.parameter_index, 3);
  EXPECT_EQ(graph.nodes[0].attributes_as<AccelMatmulAttributes>().epilogue_flags, ACCEL_EPILOGUE_RELU_MASK);
  EXPECT_EQ(graph.nodes[0].label, "MatMul+ReluGrad");
  EXPECT_EQ(graph.nodes[1].attributes_as<AccelConv2dAttributes>().epilogue_flags, ACCEL_EPILOGUE_RELU_MASK);
  EXPECT_EQ(graph.results, (std::vector<ValueId>{graph.nodes[0].outputs[0], graph.nodes[1].outputs[0]}));
}

TEST(EpilogueFusion, LeavesPatternsTheEpilogueDoesNotExpress) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({2, 5, 5, 3});
  const ValueId filter = builder.capture({3, 3, 3, 4});
  // A forward convolution takes no ReLU mask.
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, builder.conv2d(x, filter), builder.parameter({2, 3, 3, 4})));
  // The product as the mask, not as the gradient.
  const ValueId product = builder.matmul(builder.parameter({4, 3}), builder.capture({3, 5}));
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, builder.parameter({4, 5}), product));
  // A bias that broadcasts the product up, one of rank 2, one of another size.
  const ValueId small = builder.matmul(builder.parameter({1, 3}), builder.capture({3, 5}));
  builder.result(builder.binary(ACCEL_OP_ADD, small, builder.parameter({4, 5})));
  const ValueId second = builder.matmul(builder.parameter({4, 3}), builder.capture({3, 5}));
  builder.result(builder.binary(ACCEL_OP_ADD, second, builder.capture({1, 5})));
  const ValueId third = builder.matmul(builder.parameter({4, 3}), builder.capture({3, 1}));
  builder.result(builder.binary(ACCEL_OP_ADD, third, builder.capture({4})));
  // An activation the epilogue lacks.
  builder.result(builder.unary(ACCEL_OP_EXP, builder.matmul(builder.parameter({4, 3}), builder.capture({3, 5}))));
  Graph& graph = builder.graph;
  const size_t nodes = graph.nodes.size();

  EXPECT_EQ(fuse_epilogues(graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(graph.nodes.size(), nodes);
}

TEST(EpilogueFusion, StopsAtAValueReadElsewhereOrReturned) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  // The product is read twice: nothing fuses.
  const ValueId shared = builder.matmul(dense.x, dense.kernel);
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_ADD, shared, dense.bias)));
  builder.result(builder.unary(ACCEL_OP_NEG, shared));
  // The biased value is returned: the bias fuses, the activation stays.
  const ValueId product = builder.matmul(dense.x, dense.kernel);
  const ValueId biased = builder.binary(ACCEL_OP_ADD, product, dense.bias);
  builder.result(biased);
  builder.result(builder.unary(ACCEL_OP_RELU, biased));
  // The product itself is returned: nothing fuses.
  const ValueId returned = builder.matmul(dense.x, dense.kernel);
  builder.result(returned);
  builder.result(builder.unary(ACCEL_OP_SIGMOID, returned));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_epilogues(graph, testing::support_everything());
  graph.verify();
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 2);
  EXPECT_EQ(testing::ops_of(graph),
            (std::vector<int32_t>{ACCEL_OP_MATMUL, ACCEL_OP_ADD, ACCEL_OP_RELU, ACCEL_OP_NEG, ACCEL_OP_MATMUL,
                                  ACCEL_OP_RELU, ACCEL_OP_MATMUL, ACCEL_OP_SIGMOID}));
  const Node& bias_fused = graph.nodes[4];
  EXPECT_EQ(bias_fused.attributes_as<AccelMatmulAttributes>().epilogue_flags, ACCEL_EPILOGUE_BIAS);
  EXPECT_EQ(bias_fused.outputs[0], graph.results[2]);
  EXPECT_EQ(graph.nodes[5].inputs[0], bias_fused.outputs[0]);
}

TEST(EpilogueFusion, NeverAcrossDevices) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  const ValueId product = builder.matmul(dense.x, dense.kernel);
  builder.on(testing::stand_in_device(1));
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_ADD, product, dense.bias)));
  EXPECT_EQ(fuse_epilogues(builder.graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(builder.graph.nodes.size(), 3u);
}

TEST(EpilogueFusion, FusesTheLongestChainTheDeviceSupports) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  const ValueId product = builder.matmul(dense.x, dense.kernel);
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_ADD, product, dense.bias)));
  FusionSupport bias_only = testing::support_everything();
  std::vector<int32_t> asked;
  bias_only.epilogue = [&](detail::LogicalDevice* device, AccelOp op, AccelDType dtype, int32_t flags, AccelOp) {
    EXPECT_EQ(device, testing::stand_in_device(0));
    EXPECT_EQ(op, ACCEL_OP_MATMUL);
    EXPECT_EQ(dtype, ACCEL_DTYPE_F32);
    asked.push_back(flags);
    return flags == ACCEL_EPILOGUE_BIAS;
  };
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_epilogues(graph, bias_only).fusions, 1);
  graph.verify();
  EXPECT_EQ(asked, (std::vector<int32_t>{ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION, ACCEL_EPILOGUE_BIAS}));
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_MATMUL, ACCEL_OP_RELU}));
  EXPECT_EQ(graph.nodes[1].inputs[0], graph.nodes[0].outputs[0]);
}

TEST(EpilogueFusion, NothingWhenTheDeviceDeclines) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_ADD, builder.matmul(dense.x, dense.kernel),
                                                              dense.bias)));
  FusionSupport none = testing::support_everything();
  none.epilogue = [](detail::LogicalDevice*, AccelOp, AccelDType, int32_t, AccelOp) { return false; };
  EXPECT_EQ(fuse_epilogues(builder.graph, none).fusions, 0);
  EXPECT_EQ(builder.graph.nodes.size(), 3u);
}

TEST(EpilogueFusion, NeverReadsABiasBeforeAnUpdateOfItOrBeforeItExists) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  // The optimizer updates the bias between the product and its add.
  const ValueId product = builder.matmul(dense.x, dense.kernel);
  builder.sgd_update(dense.bias, builder.parameter({5}));
  builder.result(builder.binary(ACCEL_OP_ADD, product, dense.bias));
  // The bias is computed after the product.
  const ValueId second = builder.matmul(dense.x, dense.kernel);
  const ValueId computed_bias = builder.unary(ACCEL_OP_NEG, dense.bias);
  builder.result(builder.binary(ACCEL_OP_ADD, second, computed_bias));
  // A host node lies between.
  const ValueId third = builder.matmul(dense.x, dense.kernel);
  builder.host();
  builder.result(builder.binary(ACCEL_OP_ADD, third, dense.bias));
  Graph& graph = builder.graph;
  const size_t nodes = graph.nodes.size();

  EXPECT_EQ(fuse_epilogues(graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(graph.nodes.size(), nodes);
}

TEST(EpilogueFusion, LeavesAnOpThatAlreadyHasAnEpilogue) {
  Dense dense;
  GraphBuilder& builder = dense.builder;
  const ValueId product = builder.matmul(dense.x, dense.kernel);
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_ADD, product, dense.bias)));
  Graph& graph = builder.graph;
  ASSERT_EQ(fuse_epilogues(graph, testing::support_everything()).fusions, 1);
  EXPECT_EQ(fuse_epilogues(graph, testing::support_everything()).fusions, 0);
}

TEST(EpilogueFusion, FusedOpsComputeWhatTheOpsComputed) {
  detail::LogicalDevice* cpu = testing::cpu_device();
  if (!cpu->supports_epilogue(ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION,
                              ACCEL_OP_RELU)) {
    GTEST_SKIP() << "the CPU plugin runs no epilogues yet";
  }
  GraphBuilder builder(cpu);
  const ValueId x = builder.parameter({6, 3});
  const ValueId kernel = builder.parameter({3, 5});
  const ValueId bias = builder.parameter({5});
  const ValueId dy = builder.parameter({6, 5});
  const ValueId images = builder.parameter({2, 5, 5, 3});
  const ValueId filter = builder.parameter({3, 3, 3, 4});
  const ValueId conv_bias = builder.parameter({4});
  const ValueId conv_dy = builder.parameter({2, 3, 3, 4});
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_ADD, builder.matmul(x, kernel), bias)));
  builder.result(builder.unary(ACCEL_OP_TANH, builder.binary(ACCEL_OP_ADD, conv_bias, builder.conv2d(images, filter))));
  // dx of the dense layer, then the ReLU gradient of x's layer (x as its pre-activation).
  const ValueId kernel_transposed = builder.parameter({5, 3});
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, builder.matmul(dy, kernel_transposed), x));
  builder.result(builder.binary(ACCEL_OP_RELU_BACKWARD, builder.conv2d_backward_input(conv_dy, filter, {2, 5, 5, 3}),
                                images));
  const Graph reference = builder.graph;
  Graph fused = builder.graph;
  EXPECT_EQ(fuse_epilogues(fused, FusionSupport::of_devices()).fusions, 4);
  fused.verify();

  std::vector<Tensor> arguments;
  for (ValueId parameter : builder.graph.parameters) {
    arguments.push_back(testing::random_tensor(builder.shape(parameter), static_cast<uint32_t>(parameter) + 7));
  }
  testing::expect_same_results(testing::run_graph(fused, arguments), testing::run_graph(reference, arguments));
}

}  // namespace
}  // namespace accel::graph
