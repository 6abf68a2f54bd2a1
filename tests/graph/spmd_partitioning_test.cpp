// partition_spmd on hand-built training steps: which collectives it inserts,
// where, over which mesh axes, and the shapes each device then holds, for
// data parallelism, FSDP, tensor (Megatron) parallelism and their mix on one
// mesh; and the refusals (a size that does not split, an optimizer slot
// whose layout is not its variable's).
#include "pass_test_graphs.hpp"

#include <accel/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace accel::graph {
namespace {

using testing::bytes_of;
using testing::GraphBuilder;

constexpr int32_t kNone = kReplicated;

MeshShape mesh_of(std::vector<std::string> names, std::vector<int64_t> sizes) {
  return MeshShape{std::move(names), std::move(sizes)};
}

ValueSharding split(std::vector<int32_t> axes) { return ValueSharding{std::move(axes), 0, PartialReduction::kNone}; }

ValueId matmul(GraphBuilder& builder, ValueId a, ValueId b, bool transpose_a, bool transpose_b) {
  AccelMatmulAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.transpose_a = transpose_a ? 1 : 0;
  attributes.transpose_b = transpose_b ? 1 : 0;
  const Shape& sa = builder.shape(a);
  const Shape& sb = builder.shape(b);
  const int64_t m = transpose_a ? sa[1] : sa[0];
  const int64_t n = transpose_b ? sb[0] : sb[1];
  return builder.op(ACCEL_OP_MATMUL, {a, b}, Shape{m, n}, DType::kFloat32, bytes_of(attributes));
}

// "AllGather over data on dimension 0 for MatMul", one line per collective, in order.
std::vector<std::string> collectives_of(const SpmdPartition& partition) {
  std::vector<std::string> lines;
  for (const InsertedCollective& collective : partition.collectives) {
    std::string axes;
    for (int32_t axis = 0; axis < partition.mesh.rank(); ++axis) {
      if ((collective.attributes.mesh_axes >> axis) & 1u) axes += (axes.empty() ? "" : "+") + partition.mesh.axis_names[axis];
    }
    std::string line = std::string(collective_name(collective.attributes.kind)) + " over " + axes;
    if (collective.attributes.dimension >= 0) line += " on dimension " + std::to_string(collective.attributes.dimension);
    if (collective.attributes.kind == CollectiveKind::kAllToAll) {
      line += " from dimension " + std::to_string(collective.attributes.source_dimension);
    }
    if (collective.attributes.reduction == PartialReduction::kSum) line += " (sum)";
    if (collective.attributes.reduction == PartialReduction::kMean) line += " (mean)";
    lines.push_back(line + " for " + collective.consumer);
  }
  return lines;
}

// One dense layer's training step: y = x . W, loss = mean(y), dW = x^T . dy,
// W -= lr dW. The step's parameter x is the batch.
struct DenseStep {
  GraphBuilder builder{testing::cpu_device()};
  ValueId x, weight, y, loss, dy, weight_gradient;

  DenseStep() {
    x = builder.parameter({8, 4});
    weight = builder.capture({4, 16});
    y = matmul(builder, x, weight, false, false);
    loss = builder.reduce(ACCEL_OP_REDUCE_MEAN, y, {0, 1});
    builder.result(loss);
    dy = builder.fill({8, 16}, 1.0 / 128);
    weight_gradient = matmul(builder, x, dy, true, false);
    builder.sgd_update(weight, weight_gradient);
  }

  SpmdPartition partition(const MeshShape& mesh, ValueSharding batch, ValueSharding weight_layout) {
    SpmdInputs inputs;
    inputs.mesh = mesh;
    inputs.parameters = {std::move(batch)};
    const ValueId captured = weight;
    inputs.capture = [captured, weight_layout](ValueId id, const Value&) {
      return id == captured ? weight_layout : ValueSharding{};
    };
    return partition_spmd(builder.graph, inputs);
  }
  const Shape& shape(ValueId id) const { return builder.graph.values[static_cast<size_t>(id)].shape; }
};

TEST(SpmdPartitioning, DataParallelAllReducesTheGradientAndTheLoss) {
  DenseStep step;
  const SpmdPartition partition = step.partition(mesh_of({"data"}, {4}), split({0, kNone}), split({kNone, kNone}));
  EXPECT_EQ(collectives_of(partition), (std::vector<std::string>{
                                           "LocalSlice over data on dimension 0 for MatMul",
                                           "AllReduce over data (sum) for ResourceApplyKerasMomentum",
                                           "AllReduce over data (mean) for result",
                                       }));
  EXPECT_EQ(step.shape(step.x), (Shape{2, 4}));
  EXPECT_EQ(step.shape(step.y), (Shape{2, 16}));
  EXPECT_EQ(step.shape(step.weight), (Shape{4, 16}));  // whole on every device
  EXPECT_EQ(step.shape(step.weight_gradient), (Shape{4, 16}));
  EXPECT_EQ(describe(partition.shardings[static_cast<size_t>(step.weight_gradient)], partition.mesh),
            "[-, -] partial sum over {data}");
  EXPECT_EQ(partition.collectives[1].input_bytes, 4u * 16 * 4);
}

TEST(SpmdPartitioning, FsdpGathersTheWeightForUseAndReduceScattersItsGradient) {
  DenseStep step;
  const SpmdPartition partition = step.partition(mesh_of({"data"}, {4}), split({0, kNone}), split({0, kNone}));
  EXPECT_EQ(collectives_of(partition), (std::vector<std::string>{
                                           "AllGather over data on dimension 0 for MatMul",
                                           "LocalSlice over data on dimension 0 for MatMul",
                                           "ReduceScatter over data on dimension 0 (sum) for ResourceApplyKerasMomentum",
                                           "AllReduce over data (mean) for result",
                                       }));
  EXPECT_EQ(step.shape(step.weight), (Shape{1, 16}));  // a quarter of the weight per device
  const InsertedCollective& gather = partition.collectives[0];
  EXPECT_EQ(gather.input_bytes, 1u * 16 * 4);
  EXPECT_EQ(gather.output_bytes, 4u * 16 * 4);
  const InsertedCollective& scatter = partition.collectives[2];
  EXPECT_EQ(scatter.input_bytes, 4u * 16 * 4);
  EXPECT_EQ(scatter.output_bytes, 1u * 16 * 4);
}

// Mixed precision: the weight's gradient is a bfloat16 partial sum, cast to
// float32 before its update. It is reduce-scattered where the cast needs it
// reduced, in bfloat16, as XLA does: not all-reduced whole there and held
// whole until the update slices it.
TEST(SpmdPartitioning, AGradientCastBeforeItsUpdateIsReduceScatteredBeforeTheCast) {
  GraphBuilder builder{testing::cpu_device()};
  const ValueId x = builder.parameter({8, 4}, DType::kBFloat16);
  const ValueId weight = builder.capture({4, 16});
  const ValueId dy = builder.fill({8, 16}, 1.0 / 128, DType::kBFloat16);
  const ValueId gradient = builder.op(ACCEL_OP_MATMUL, {x, dy}, Shape{4, 16}, DType::kBFloat16, [] {
    AccelMatmulAttributes attributes{};
    attributes.struct_size = sizeof(attributes);
    attributes.transpose_a = 1;
    return bytes_of(attributes);
  }());
  const ValueId gradient32 = builder.cast(gradient, DType::kFloat32);
  builder.sgd_update(weight, gradient32);
  SpmdInputs inputs;
  inputs.mesh = mesh_of({"data"}, {4});
  inputs.parameters = {split({0, kNone})};
  inputs.capture = [weight](ValueId id, const Value&) { return id == weight ? split({0, kNone}) : ValueSharding{}; };
  const SpmdPartition partition = partition_spmd(builder.graph, inputs);
  EXPECT_EQ(collectives_of(partition), (std::vector<std::string>{
                                           "LocalSlice over data on dimension 0 for MatMul",
                                           "ReduceScatter over data on dimension 0 (sum) for Cast",
                                       }));
  EXPECT_EQ(partition.collectives[1].input_bytes, 4u * 16 * 2);  // bfloat16
  EXPECT_EQ(builder.graph.values[static_cast<size_t>(gradient32)].shape, (Shape{1, 16}));
}

TEST(SpmdPartitioning, FsdpAndTensorParallelComposeOnOneMesh) {
  DenseStep step;
  // The weight split over data (FSDP) on its rows and over model on its columns.
  const SpmdPartition partition =
      step.partition(mesh_of({"data", "model"}, {2, 2}), split({0, kNone}), split({0, 1}));
  EXPECT_EQ(collectives_of(partition), (std::vector<std::string>{
                                           "AllGather over data on dimension 0 for MatMul",
                                           "LocalSlice over data on dimension 0 for MatMul",
                                           "ReduceScatter over data on dimension 0 (sum) for ResourceApplyKerasMomentum",
                                           "LocalSlice over model on dimension 1 for ResourceApplyKerasMomentum",
                                           "AllReduce over data+model (mean) for result",
                                       }));
  EXPECT_EQ(step.shape(step.weight), (Shape{2, 8}));
  EXPECT_EQ(step.shape(step.y), (Shape{4, 8}));  // batch over data, columns over model
}

// Megatron's MLP: column-parallel W1, row-parallel W2. Nothing moves but the
// partial sums of the second matmul, reduced once before the next nonlinearity.
TEST(SpmdPartitioning, TensorParallelMlpAllReducesOnlyTheRowParallelOutput) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({8, 4});
  const ValueId w1 = builder.capture({4, 16});
  const ValueId w2 = builder.capture({16, 4});
  const ValueId hidden = builder.unary(ACCEL_OP_RELU, matmul(builder, x, w1, false, false));
  const ValueId out = matmul(builder, hidden, w2, false, false);
  builder.result(builder.unary(ACCEL_OP_TANH, out));
  SpmdInputs inputs;
  inputs.mesh = mesh_of({"model"}, {2});
  inputs.parameters = {split({kNone, kNone})};
  inputs.capture = [&](ValueId id, const Value&) {
    if (id == w1) return split({kNone, 0});
    if (id == w2) return split({0, kNone});
    return ValueSharding{};
  };
  const SpmdPartition partition = partition_spmd(builder.graph, inputs);
  EXPECT_EQ(collectives_of(partition), std::vector<std::string>{"AllReduce over model (sum) for Tanh"});
  EXPECT_EQ(builder.shape(hidden), (Shape{8, 8}));
  EXPECT_EQ(builder.shape(w1), (Shape{4, 8}));
  EXPECT_EQ(builder.shape(w2), (Shape{8, 4}));
}

// A vocabulary-parallel classifier: the logits' classes must be whole for the
// softmax cross entropy.
TEST(SpmdPartitioning, SoftmaxCrossEntropyGathersSplitClasses) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId hidden = builder.parameter({8, 4});
  const ValueId labels = builder.parameter({8}, DType::kInt32);
  const ValueId head = builder.capture({4, 32});
  const ValueId logits = matmul(builder, hidden, head, false, false);
  const int32_t node = builder.node(ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, {logits, labels},
                                    {{Shape{8}, DType::kFloat32}, {Shape{8, 32}, DType::kFloat32}});
  builder.result(builder.graph.nodes[static_cast<size_t>(node)].outputs[0]);
  SpmdInputs inputs;
  inputs.mesh = mesh_of({"data", "model"}, {2, 4});
  inputs.parameters = {split({0, kNone}), split({0})};
  inputs.capture = [&](ValueId id, const Value&) { return id == head ? split({kNone, 1}) : ValueSharding{}; };
  const SpmdPartition partition = partition_spmd(builder.graph, inputs);
  EXPECT_EQ(collectives_of(partition), (std::vector<std::string>{
                                           "AllGather over model on dimension 1 for SparseSoftmaxCrossEntropyWithLogits",
                                           "AllGather over data on dimension 0 for result",
                                       }));
  EXPECT_EQ(builder.shape(logits), (Shape{4, 8}));
}

// Attention's heads: [B, S, H*D] split on its last dimension reshapes to
// [B, S, H, D] split on H, with no collective; merged into a dimension it is
// not the major part of, it must be gathered first.
TEST(SpmdPartitioning, ReshapesCarryASplitThatLeadsItsGroup) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({2, 3, 8});
  const ValueId heads = builder.reshape(x, {2, 3, 4, 2});
  builder.result(builder.unary(ACCEL_OP_EXP, heads));
  const ValueId merged = builder.reshape(x, {2, 24});
  builder.result(builder.unary(ACCEL_OP_EXP, merged));
  SpmdInputs inputs;
  inputs.mesh = mesh_of({"model"}, {2});
  inputs.parameters = {split({kNone, kNone, 0})};
  const SpmdPartition partition = partition_spmd(builder.graph, inputs);
  EXPECT_EQ(describe(partition.shardings[static_cast<size_t>(heads)], partition.mesh), "[-, -, model, -]");
  EXPECT_EQ(builder.shape(heads), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(collectives_of(partition), (std::vector<std::string>{
                                           "AllGather over model on dimension 2 for Reshape",
                                           "AllGather over model on dimension 2 for result",
                                       }));
}

TEST(SpmdPartitioning, AMovedSplitIsOneAllToAll) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId gradient = builder.parameter({8, 6});
  const ValueId variable = builder.capture({8, 6});
  builder.sgd_update(variable, gradient);
  SpmdInputs inputs;
  inputs.mesh = mesh_of({"data"}, {2});
  inputs.parameters = {split({0, kNone})};
  inputs.capture = [&](ValueId, const Value&) { return split({kNone, 0}); };
  const SpmdPartition partition = partition_spmd(builder.graph, inputs);
  EXPECT_EQ(collectives_of(partition),
            std::vector<std::string>{"AllToAll over data on dimension 1 from dimension 0 for ResourceApplyKerasMomentum"});
  EXPECT_EQ(builder.shape(variable), (Shape{8, 3}));
}

TEST(SpmdPartitioning, AxesOfOneDeviceNeedNoCollective) {
  DenseStep step;
  const SpmdPartition partition = step.partition(mesh_of({"data", "model"}, {1, 1}), split({0, kNone}), split({0, 1}));
  EXPECT_TRUE(partition.collectives.empty());
  EXPECT_EQ(step.shape(step.weight), (Shape{4, 16}));
}

TEST(SpmdPartitioning, ASizeThatDoesNotSplitIsRefusedNamingItsAxis) {
  DenseStep step;
  try {
    step.partition(mesh_of({"data"}, {3}), split({0, kNone}), split({kNone, kNone}));
    FAIL() << "8 rows over 3 devices";
  } catch (const InvalidArgumentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("does not split over mesh axis 'data' of 3 devices"), std::string::npos) << message;
    EXPECT_NE(message.find("size 8"), std::string::npos) << message;
  }
}

TEST(SpmdPartitioning, LayoutsThatDoNotFitTheValueAreRefused) {
  DenseStep step;
  EXPECT_THROW(step.partition(mesh_of({"data"}, {2}), split({0}), split({kNone, kNone})), InvalidArgumentError);
  DenseStep twice;
  EXPECT_THROW(twice.partition(mesh_of({"data"}, {2}), split({0, kNone}), split({0, 0})), InvalidArgumentError);
  DenseStep unknown;
  EXPECT_THROW(unknown.partition(mesh_of({"data"}, {2}), split({0, kNone}), split({3, kNone})), InvalidArgumentError);
}

TEST(SpmdPartitioning, AnOptimizerSlotLaidOutUnlikeItsVariableIsRefused) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId gradient = builder.parameter({8, 6});
  const ValueId variable = builder.capture({8, 6});
  const ValueId first_moment = builder.capture({8, 6});
  const ValueId second_moment = builder.capture({8, 6});
  AccelAdamAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  builder.node(ACCEL_OP_ADAM_UPDATE, {variable, first_moment, second_moment, gradient}, {}, bytes_of(attributes));
  SpmdInputs inputs;
  inputs.mesh = mesh_of({"data"}, {2});
  inputs.parameters = {split({kNone, kNone})};
  inputs.capture = [&](ValueId id, const Value&) { return id == first_moment ? split({kNone, kNone}) : split({0, kNone}); };
  try {
    partition_spmd(builder.graph, inputs);
    FAIL() << "the first moment is whole, its variable split";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("updates its input 1 in place"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace accel::graph
