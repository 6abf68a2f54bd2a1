// fuse_elementwise on hand-built graphs: the regions it fuses and the
// programs it writes, and what it must not fuse (other devices and shapes,
// readers before the fusion's place, reads moved past in-place writes, a
// lone op, programs over the limits). Fused programs run on the CPU against
// the ops one by one once the CPU plugin claims FUSED_ELEMENTWISE.
#include "pass_test_graphs.hpp"

#include "runtime/logical_device.hpp"

#include <gtest/gtest.h>

#include <set>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

detail::LogicalDevice* device() { return testing::stand_in_device(0); }

const Value& value_of(const Graph& graph, ValueId id) { return graph.values[static_cast<size_t>(id)]; }

std::vector<const Node*> fusions_of(const Graph& graph) {
  std::vector<const Node*> fusions;
  for (const Node& node : graph.nodes) {
    if (node.op == ACCEL_OP_FUSED_ELEMENTWISE) fusions.push_back(&node);
  }
  return fusions;
}

// What every fused node must be, whatever it fuses: a program the format
// accepts, typed as its values, within the limits.
void expect_well_formed(const Graph& graph, const Node& fused) {
  ASSERT_TRUE(fused.program);
  const FusedProgram& program = *fused.program;
  ASSERT_EQ(fused.attributes.size(), sizeof(AccelFusedElementwiseAttributes));
  const auto& attributes = fused.attributes_as<AccelFusedElementwiseAttributes>();
  EXPECT_EQ(attributes.struct_size, sizeof(AccelFusedElementwiseAttributes));
  ASSERT_EQ(attributes.rank, program.shape.rank());
  for (int32_t axis = 0; axis < attributes.rank; ++axis) EXPECT_EQ(attributes.shape[axis], program.shape[axis]);
  EXPECT_LE(program.instructions.size(), static_cast<size_t>(ACCEL_FUSED_MAX_INSTRUCTIONS));
  EXPECT_LE(fused.inputs.size(), static_cast<size_t>(ACCEL_FUSED_MAX_INPUTS));
  EXPECT_LE(program.outputs.size(), static_cast<size_t>(ACCEL_FUSED_MAX_OUTPUTS));
  ASSERT_EQ(program.outputs.size(), fused.outputs.size());
  EXPECT_FALSE(fused.outputs.empty());
  std::set<int32_t> loaded;
  for (size_t index = 0; index < program.instructions.size(); ++index) {
    const AccelFusedInstruction& instruction = program.instructions[index];
    if (instruction.kind == ACCEL_FUSED_LOAD) {
      ASSERT_GE(instruction.operands[0], 0);
      ASSERT_LT(static_cast<size_t>(instruction.operands[0]), fused.inputs.size());
      EXPECT_TRUE(loaded.insert(instruction.operands[0]).second) << "input loaded twice";
      EXPECT_EQ(static_cast<DType>(instruction.dtype),
                value_of(graph, fused.inputs[static_cast<size_t>(instruction.operands[0])]).dtype);
    } else if (instruction.kind == ACCEL_FUSED_OP) {
      EXPECT_TRUE(is_fusible_elementwise(instruction.op));
      const int32_t arity = instruction.op == ACCEL_OP_SELECT ? 3
                            : (instruction.op >= ACCEL_OP_ADD && instruction.op <= ACCEL_OP_TANH_BACKWARD) ? 2
                                                                                                        : 1;
      for (int32_t operand = 0; operand < arity; ++operand) {
        EXPECT_GE(instruction.operands[operand], 0);
        EXPECT_LT(instruction.operands[operand], static_cast<int32_t>(index));
      }
    }
  }
  EXPECT_EQ(loaded.size(), fused.inputs.size());
  for (size_t output = 0; output < program.outputs.size(); ++output) {
    const AccelFusedOutput& stored = program.outputs[output];
    ASSERT_GE(stored.value, 0);
    ASSERT_LT(static_cast<size_t>(stored.value), program.instructions.size());
    const Value& defined = value_of(graph, fused.outputs[output]);
    EXPECT_EQ(static_cast<DType>(program.instructions[static_cast<size_t>(stored.value)].dtype), defined.dtype);
    if (stored.reduce_op == 0) {
      EXPECT_EQ(defined.shape, program.shape);
    }
  }
  for (ValueId input : fused.inputs) EXPECT_LE(value_of(graph, input).shape.rank(), program.shape.rank());
}

void expect_all_well_formed(const Graph& graph) {
  graph.verify();
  for (const Node* fused : fusions_of(graph)) expect_well_formed(graph, *fused);
}

TEST(ElementwiseFusion, FusesAChainIntoOneNode) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId scale = builder.parameter({8});
  const ValueId negated = builder.unary(ACCEL_OP_NEG, builder.unary(ACCEL_OP_EXP, x));
  builder.result(builder.binary(ACCEL_OP_MUL, negated, scale));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 3);
  EXPECT_EQ(statistics.bytes_saved, 2u * 4 * 8 * sizeof(float));
  ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE});
  const Node& fused = graph.nodes[0];
  EXPECT_EQ(fused.label, "Fusion(Exp+Neg+Mul)");
  EXPECT_EQ(fused.device, device());
  EXPECT_EQ(fused.inputs, (std::vector<ValueId>{x, scale}));
  EXPECT_EQ(fused.outputs, graph.results);
  const FusedProgram& program = *fused.program;
  EXPECT_EQ(program.shape, (Shape{4, 8}));
  ASSERT_EQ(program.instructions.size(), 5u);
  EXPECT_EQ(program.instructions[0].kind, ACCEL_FUSED_LOAD);
  EXPECT_EQ(program.instructions[1].op, ACCEL_OP_EXP);
  EXPECT_EQ(program.instructions[2].op, ACCEL_OP_NEG);
  EXPECT_EQ(program.instructions[3].kind, ACCEL_FUSED_LOAD);
  EXPECT_EQ(program.instructions[3].operands[0], 1);
  EXPECT_EQ(program.instructions[4].op, ACCEL_OP_MUL);
  EXPECT_EQ(program.instructions[4].operands[0], 2);
  EXPECT_EQ(program.instructions[4].operands[1], 3);
  ASSERT_EQ(program.outputs.size(), 1u);
  EXPECT_EQ(program.outputs[0].value, 4);
  EXPECT_EQ(program.outputs[0].reduce_op, 0);
}

TEST(ElementwiseFusion, AReductionOfAGroupValueBecomesAReducedOutput) {
  GraphBuilder builder(device());
  const ValueId dy = builder.parameter({16, 8});
  const ValueId x = builder.parameter({16, 8});
  const ValueId gradient = builder.binary(ACCEL_OP_RELU_BACKWARD, dy, x);
  const ValueId bias_gradient = builder.reduce(ACCEL_OP_REDUCE_SUM, gradient, {0});
  builder.result(builder.matmul(builder.parameter({8, 16}), gradient));  // the kernel gradient reads it too
  builder.result(bias_gradient);
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 2);
  EXPECT_EQ(statistics.bytes_saved, 0u);  // the gradient is still written, for the matmul
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_OP_MATMUL}));
  const Node& fused = graph.nodes[0];
  EXPECT_EQ(fused.label, "Fusion(ReluGrad+Sum)");
  const FusedProgram& program = *fused.program;
  ASSERT_EQ(program.outputs.size(), 2u);
  EXPECT_EQ(program.outputs[0].reduce_op, 0);
  EXPECT_EQ(program.outputs[1].reduce_op, ACCEL_OP_REDUCE_SUM);
  EXPECT_EQ(program.outputs[1].value, program.outputs[0].value);
  EXPECT_EQ(program.outputs[1].num_axes, 1);
  EXPECT_EQ(program.outputs[1].axes[0], 0);
  EXPECT_EQ(program.outputs[1].keep_dims, 0);
  EXPECT_EQ(graph.nodes[1].inputs[1], fused.outputs[0]);
  EXPECT_EQ(graph.results[1], fused.outputs[1]);
  EXPECT_EQ(value_of(graph, fused.outputs[1]).shape, (Shape{8}));
}

TEST(ElementwiseFusion, AReductionAfterAnotherReaderMovesUpToTheFusion) {
  // The bias gradient's sum comes after the kernel gradient's matmul, which
  // reads the same value: the sum moves up into the fusion, before the matmul.
  GraphBuilder builder(device());
  const ValueId gradient = builder.binary(ACCEL_OP_RELU_BACKWARD, builder.parameter({16, 8}),
                                          builder.parameter({16, 8}));
  const ValueId kernel_gradient = builder.matmul(builder.parameter({8, 16}), gradient);
  const ValueId bias_gradient = builder.reduce(ACCEL_OP_REDUCE_SUM, gradient, {0});
  builder.result(kernel_gradient);
  builder.result(bias_gradient);
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
  expect_all_well_formed(graph);
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_OP_MATMUL}));
  EXPECT_EQ(graph.nodes[0].label, "Fusion(ReluGrad+Sum)");
  EXPECT_EQ(graph.results[1], graph.nodes[0].outputs[1]);
}

TEST(ElementwiseFusion, ASiblingReductionJoinsTheGroupThatLoadsItsValue) {
  // A batch norm's gradient: sum(dy) and sum(dy * x) over the same dy, which
  // no group computes (a convolution gradient in a real step). The plain sum
  // moves down into the fusion that loads dy: one pass over dy, not two.
  GraphBuilder builder(testing::cpu_device());
  const ValueId dy = builder.parameter({4, 3, 8});
  const ValueId x = builder.parameter({4, 3, 8});
  const ValueId dy_sum = builder.reduce(ACCEL_OP_REDUCE_SUM, dy, {0, 1});
  const ValueId dy_x_sum = builder.reduce(ACCEL_OP_REDUCE_SUM, builder.binary(ACCEL_OP_MUL, dy, x), {0, 1});
  builder.result(builder.binary(ACCEL_OP_ADD, dy_sum, dy_x_sum));
  Graph& graph = builder.graph;
  const Graph reference = graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
  expect_all_well_formed(graph);
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_OP_ADD}));
  const Node& fused = graph.nodes[0];
  EXPECT_EQ(fused.label, "Fusion(Sum+Mul+Sum)");
  EXPECT_EQ(fused.inputs, (std::vector<ValueId>{dy, x}));
  ASSERT_EQ(fused.outputs.size(), 2u);  // the two sums (values are renumbered)
  EXPECT_EQ(graph.nodes[1].inputs, fused.outputs);
  const FusedProgram& program = *fused.program;
  EXPECT_EQ(program.instructions[static_cast<size_t>(program.outputs[0].value)].kind, ACCEL_FUSED_LOAD);
  const std::vector<Tensor> arguments{testing::random_tensor({4, 3, 8}, 7), testing::random_tensor({4, 3, 8}, 8)};
  testing::expect_same_results(testing::run_graph(graph, arguments), testing::run_graph(reference, arguments));
}

TEST(ElementwiseFusion, ASiblingReductionReadBeforeTheGroupStaysAlone) {
  GraphBuilder builder(device());
  const ValueId dy = builder.parameter({4, 8});
  const ValueId dy_sum = builder.reduce(ACCEL_OP_REDUCE_SUM, dy, {0});
  const ValueId scaled = builder.unary(ACCEL_OP_NEG, dy_sum);  // read before the group below
  const ValueId gradient = builder.binary(ACCEL_OP_MUL, builder.binary(ACCEL_OP_MUL, dy, dy), scaled);
  builder.result(builder.reduce(ACCEL_OP_REDUCE_SUM, gradient, {0}));
  Graph& graph = builder.graph;

  fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(graph.nodes[0].op, ACCEL_OP_REDUCE_SUM);
}

TEST(ElementwiseFusion, ABroadcastIntoTheIterationShapeIsLoadedFromItsSource) {
  // A mean's gradient: BroadcastTo(c) scaled by a constant, then times x. The
  // fusion loads c, broadcast by its layout; the full-size broadcast goes.
  GraphBuilder builder(testing::cpu_device());
  const ValueId c = builder.parameter({1, 1, 4});
  const ValueId x = builder.parameter({2, 3, 4});
  const ValueId wide = builder.op(ACCEL_OP_BROADCAST_TO, {c}, {2, 3, 4});
  const ValueId scaled = builder.binary(ACCEL_OP_MUL, wide, builder.constant(Tensor::scalar(0.25f)));
  builder.result(builder.binary(ACCEL_OP_MUL, scaled, x));
  Graph& graph = builder.graph;
  const Graph reference = graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
  eliminate_dead_code(graph);
  expect_all_well_formed(graph);
  ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE});
  EXPECT_EQ(graph.nodes[0].inputs, (std::vector<ValueId>{c, x}));
  const std::vector<Tensor> arguments{testing::random_tensor({1, 1, 4}, 9), testing::random_tensor({2, 3, 4}, 10)};
  testing::expect_same_results(testing::run_graph(graph, arguments), testing::run_graph(reference, arguments));
}

TEST(ElementwiseFusion, ABroadcastWhoseSourceIsWrittenBeforeTheFusionIsNotLoadedFromIt) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({3, 4});
  const ValueId variable = builder.capture({4});
  const ValueId wide = builder.op(ACCEL_OP_BROADCAST_TO, {variable}, {3, 4});
  builder.sgd_update(variable, builder.parameter({4}));
  builder.result(builder.unary(ACCEL_OP_NEG, builder.binary(ACCEL_OP_MUL, wide, x)));
  Graph& graph = builder.graph;

  fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  for (const Node* fused : fusions_of(graph)) {
    EXPECT_EQ(std::count(fused->inputs.begin(), fused->inputs.end(), variable), 0) << "reads the updated variable";
  }
}

TEST(ElementwiseFusion, AValueOnlyReducedIsNotWritten) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId squared = builder.unary(ACCEL_OP_SQUARE, builder.binary(ACCEL_OP_SUB, x, builder.parameter({8})));
  builder.result(builder.reduce(ACCEL_OP_REDUCE_MEAN, squared, {0, 1}, true));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.ops_fused, 3);
  EXPECT_EQ(statistics.bytes_saved, 2u * 4 * 8 * sizeof(float));
  ASSERT_EQ(graph.nodes.size(), 1u);
  ASSERT_EQ(graph.nodes[0].program->outputs.size(), 1u);
  EXPECT_EQ(graph.nodes[0].program->outputs[0].reduce_op, ACCEL_OP_REDUCE_MEAN);
  EXPECT_EQ(graph.nodes[0].program->outputs[0].keep_dims, 1);
  EXPECT_EQ(value_of(graph, graph.results[0]).shape, (Shape{1, 1}));
}

TEST(ElementwiseFusion, LeavesALoneOp) {
  // One op alone writes what it wrote before: no gain.
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  builder.result(builder.matmul(builder.unary(ACCEL_OP_RELU, x), builder.parameter({8, 2})));
  EXPECT_EQ(fuse_elementwise(builder.graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(testing::ops_of(builder.graph), (std::vector<int32_t>{ACCEL_OP_RELU, ACCEL_OP_MATMUL}));
}

TEST(ElementwiseFusion, AValueReadAfterTheFusionOrReturnedStaysAnOutput) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId negated = builder.unary(ACCEL_OP_NEG, exp);
  const ValueId root = builder.unary(ACCEL_OP_SQRT, negated);
  builder.result(root);
  builder.result(negated);
  const ValueId product = builder.matmul(exp, builder.parameter({8, 2}));
  builder.result(product);
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.bytes_saved, 0u);
  ASSERT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_OP_MATMUL}));
  const Node& fused = graph.nodes[0];
  ASSERT_EQ(fused.outputs.size(), 3u);  // exp (for the matmul), negated and root (returned)
  EXPECT_EQ(graph.nodes[1].inputs[0], fused.outputs[0]);
  EXPECT_EQ(graph.results[0], fused.outputs[2]);
  EXPECT_EQ(graph.results[1], fused.outputs[1]);
}

TEST(ElementwiseFusion, AReaderBeforeTheFusionsPlaceSplitsTheGroup) {
  // exp is read by a matmul that runs before neg: a fusion of exp, neg and
  // sqrt would stand after the matmul, which then would read exp too early.
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  builder.result(builder.matmul(exp, builder.parameter({8, 2})));
  builder.result(builder.unary(ACCEL_OP_SQRT, builder.unary(ACCEL_OP_NEG, exp)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
  expect_all_well_formed(graph);
  ASSERT_EQ(testing::ops_of(graph),
            (std::vector<int32_t>{ACCEL_OP_EXP, ACCEL_OP_MATMUL, ACCEL_OP_FUSED_ELEMENTWISE}));
  EXPECT_EQ(graph.nodes[2].label, "Fusion(Neg+Sqrt)");
  EXPECT_EQ(graph.nodes[2].inputs, graph.nodes[0].outputs);
}

TEST(ElementwiseFusion, NeverAcrossDevices) {
  GraphBuilder builder(testing::stand_in_device(0));
  const ValueId x = builder.parameter({4, 8});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  builder.on(testing::stand_in_device(1));
  const ValueId negated = builder.unary(ACCEL_OP_NEG, exp);
  builder.on(testing::stand_in_device(0));
  builder.result(builder.unary(ACCEL_OP_SQRT, negated));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(graph.nodes.size(), 3u);
}

TEST(ElementwiseFusion, OnlyOneIterationShapePerFusion) {
  // A [8] computation feeding a [4,8] one: two fusions, not one.
  GraphBuilder builder(device());
  const ValueId variance = builder.parameter({8});
  const ValueId epsilon = builder.parameter({});
  const ValueId inverse = builder.unary(ACCEL_OP_RSQRT, builder.binary(ACCEL_OP_ADD, variance, epsilon));
  const ValueId x = builder.parameter({4, 8});  // parameter 2
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_MUL, x, inverse)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 2);
  expect_all_well_formed(graph);
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].program->shape, (Shape{8}));
  EXPECT_EQ(graph.nodes[1].program->shape, (Shape{4, 8}));
  ASSERT_EQ(graph.nodes[1].inputs.size(), 2u);
  EXPECT_EQ(value_of(graph, graph.nodes[1].inputs[0]).parameter_index, 2);  // x (ids are renumbered)
  EXPECT_EQ(graph.nodes[1].inputs[1], graph.nodes[0].outputs[0]);
}

TEST(ElementwiseFusion, NeverMovesAReadPastAnInPlaceWrite) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4});
  const ValueId variable = builder.capture({4});
  // product reads the variable before the update; a fusion with negated
  // would read it after.
  const ValueId product = builder.binary(ACCEL_OP_MUL, x, variable);
  builder.sgd_update(variable, x);
  builder.result(builder.unary(ACCEL_OP_NEG, product));
  // The same through an alias and an assignment.
  const ValueId alias = builder.reshape(variable, {4});
  const ValueId sum = builder.binary(ACCEL_OP_ADD, x, alias);
  builder.assign(variable, x);
  builder.result(builder.unary(ACCEL_OP_EXP, sum));
  // And a host node, whose work may write the variable.
  const ValueId difference = builder.binary(ACCEL_OP_SUB, x, variable);
  builder.host();
  builder.result(builder.unary(ACCEL_OP_ABS, difference));
  Graph& graph = builder.graph;
  const size_t nodes = graph.nodes.size();

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 0);
  EXPECT_EQ(graph.nodes.size(), nodes);
}

TEST(ElementwiseFusion, FusesAcrossAWriteThatItsReadsDoNotCross) {
  // The variable is read after its update, so the chain may fuse.
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4});
  const ValueId variable = builder.capture({4});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  builder.sgd_update(variable, x);
  builder.result(builder.binary(ACCEL_OP_MUL, exp, variable));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
  expect_all_well_formed(graph);
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_SGD_UPDATE, ACCEL_OP_FUSED_ELEMENTWISE}));
}

TEST(ElementwiseFusion, ClosesADiamond) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId negated = builder.unary(ACCEL_OP_NEG, exp);
  const ValueId root = builder.unary(ACCEL_OP_SQRT, exp);
  builder.result(builder.binary(ACCEL_OP_ADD, negated, root));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 4);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].inputs.size(), 1u);
  EXPECT_EQ(graph.nodes[0].outputs.size(), 1u);
}

TEST(ElementwiseFusion, MergesTwoChainsWhereTheyMeet) {
  GraphBuilder builder(device());
  const ValueId left = builder.unary(ACCEL_OP_NEG, builder.unary(ACCEL_OP_EXP, builder.parameter({4, 8})));
  const ValueId right = builder.unary(ACCEL_OP_ABS, builder.unary(ACCEL_OP_SQRT, builder.parameter({4, 8})));
  builder.result(builder.binary(ACCEL_OP_ADD, left, right));
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.fusions, 1);
  EXPECT_EQ(statistics.ops_fused, 5);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(graph.nodes[0].label, "Fusion(Exp+Neg+Sqrt+Abs+AddV2)");
}

TEST(ElementwiseFusion, NeverReadsAReductionInsideItsOwnFusion) {
  // Softmax by hand: the division reads the sum, so it cannot be in the
  // fusion that makes the sum.
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, builder.unary(ACCEL_OP_NEG, x));
  const ValueId sum = builder.reduce(ACCEL_OP_REDUCE_SUM, exp, {1}, true);
  builder.result(builder.unary(ACCEL_OP_RELU, builder.binary(ACCEL_OP_DIV, exp, sum)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 2);
  expect_all_well_formed(graph);
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].label, "Fusion(Neg+Exp+Sum)");
  EXPECT_EQ(graph.nodes[1].label, "Fusion(RealDiv+Relu)");
  EXPECT_EQ(graph.nodes[1].inputs, graph.nodes[0].outputs);
}

TEST(ElementwiseFusion, SplitsProgramsAtTheLimits) {
  GraphBuilder builder(device());
  // 100 ops in a chain: more instructions than one program holds.
  ValueId chain = builder.parameter({4, 8});
  for (int step = 0; step < 100; ++step) chain = builder.unary(step % 2 ? ACCEL_OP_NEG : ACCEL_OP_ABS, chain);
  builder.result(chain);
  // 20 different inputs summed: more inputs than one program takes.
  ValueId sum = builder.parameter({4, 8});
  for (int step = 0; step < 20; ++step) sum = builder.binary(ACCEL_OP_ADD, sum, builder.parameter({4, 8}));
  builder.result(sum);
  // 12 values each returned: more outputs than one program stores.
  ValueId returned = builder.parameter({4, 8});
  for (int step = 0; step < 12; ++step) {
    returned = builder.unary(ACCEL_OP_SQUARE, returned);
    builder.result(returned);
  }
  Graph& graph = builder.graph;

  const FusionStatistics statistics = fuse_elementwise(graph, testing::support_everything());
  expect_all_well_formed(graph);
  EXPECT_EQ(statistics.ops_fused, 132);
  EXPECT_EQ(testing::count_op(graph, ACCEL_OP_FUSED_ELEMENTWISE), static_cast<int32_t>(graph.nodes.size()));
  EXPECT_GE(statistics.fusions, 2 + 2 + 2);
}

TEST(ElementwiseFusion, AsksForThePrincipalDtypeAndRespectsADecline) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4}, DType::kInt32);
  builder.result(builder.unary(ACCEL_OP_EXP, builder.cast(x, DType::kFloat32)));
  FusionSupport support = testing::support_everything();
  std::vector<AccelDType> asked;
  support.fused_elementwise = [&](detail::LogicalDevice* on, AccelDType dtype) {
    EXPECT_EQ(on, device());
    asked.push_back(dtype);
    return false;
  };
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, support).fusions, 0);
  EXPECT_EQ(asked, std::vector<AccelDType>{ACCEL_DTYPE_I32});
  EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_CAST, ACCEL_OP_EXP}));
}

// ERF (API 1.3) is elementwise like the ops before it, but a plugin built for
// 1.2 claims FUSED_ELEMENTWISE without knowing it: it joins a fusion only
// where the device claims it as a plain op.
TEST(ElementwiseFusion, ErfFusesOnlyWhereTheDeviceRunsIt) {
  auto build = [](GraphBuilder& builder) {
    const ValueId x = builder.parameter({4, 8});
    const ValueId scale = builder.parameter({8});
    const ValueId erf = builder.unary(ACCEL_OP_ERF, builder.binary(ACCEL_OP_MUL, x, scale));
    builder.result(builder.binary(ACCEL_OP_MUL, x, erf));
  };
  {
    GraphBuilder builder(device());
    build(builder);
    Graph& graph = builder.graph;
    EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
    expect_all_well_formed(graph);
    ASSERT_EQ(testing::ops_of(graph), std::vector<int32_t>{ACCEL_OP_FUSED_ELEMENTWISE});
    EXPECT_EQ(graph.nodes[0].label, "Fusion(Mul+Erf+Mul)");
    EXPECT_EQ(graph.nodes[0].program->instructions[3].op, ACCEL_OP_ERF);
  }
  {
    GraphBuilder builder(device());
    build(builder);
    Graph& graph = builder.graph;
    FusionSupport support = testing::support_everything();
    std::vector<AccelOp> asked;
    support.plain_op = [&](detail::LogicalDevice* on, AccelOp op, AccelDType dtype) {
      EXPECT_EQ(on, device());
      EXPECT_EQ(dtype, ACCEL_DTYPE_F32);
      asked.push_back(op);
      return false;
    };
    EXPECT_EQ(fuse_elementwise(graph, support).fusions, 0);
    ASSERT_FALSE(asked.empty());  // about ERF only: the ops of 1.2 need no asking
    for (AccelOp op : asked) EXPECT_EQ(op, ACCEL_OP_ERF);
    EXPECT_EQ(testing::ops_of(graph), (std::vector<int32_t>{ACCEL_OP_MUL, ACCEL_OP_ERF, ACCEL_OP_MUL}));
  }
}

TEST(ElementwiseFusion, OneElementConstantsBecomeConstantInstructions) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4, 8});
  const ValueId half = builder.constant(Tensor::scalar(0.5f));
  const ValueId table = builder.constant(Tensor::from_vector<float>(std::vector<float>(8, 2.0f), {8}));
  builder.result(builder.unary(ACCEL_OP_NEG, builder.binary(ACCEL_OP_ADD, builder.binary(ACCEL_OP_MUL, x, half), table)));
  Graph& graph = builder.graph;

  EXPECT_EQ(fuse_elementwise(graph, testing::support_everything()).fusions, 1);
  expect_all_well_formed(graph);
  ASSERT_EQ(graph.nodes.size(), 1u);
  // The inlined constant is read by nothing any more, so ids after it shift.
  ASSERT_EQ(graph.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(graph.nodes[0].inputs[0], x);
  EXPECT_EQ(value_of(graph, graph.nodes[0].inputs[1]).shape, (Shape{8}));
  EXPECT_EQ(value_of(graph, graph.nodes[0].inputs[1]).kind, ValueKind::kConstant);
  (void)table;
  const auto& instructions = graph.nodes[0].program->instructions;
  ASSERT_EQ(instructions.size(), 6u);
  EXPECT_EQ(instructions[1].kind, ACCEL_FUSED_CONSTANT);
  EXPECT_EQ(instructions[1].value, 0.5);
  EXPECT_EQ(instructions[1].dtype, ACCEL_DTYPE_F32);
}

TEST(ElementwiseFusion, LeavesOpsWithRefreshedAttributes) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  builder.graph.nodes.back().refresh = [](int32_t, void*) {};
  builder.result(builder.unary(ACCEL_OP_NEG, exp));
  EXPECT_EQ(fuse_elementwise(builder.graph, testing::support_everything()).fusions, 0);
}

// ---------------------------------------------------------------- execution

TEST(ElementwiseFusion, FusedProgramsComputeWhatTheOpsComputed) {
  detail::LogicalDevice* cpu = testing::cpu_device();
  if (!cpu->supports(ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_DTYPE_F32)) {
    GTEST_SKIP() << "the CPU plugin does not claim FUSED_ELEMENTWISE yet";
  }
  GraphBuilder builder(cpu);
  const ValueId x = builder.parameter({6, 5});
  const ValueId dy = builder.parameter({6, 5});
  const ValueId bias = builder.parameter({5});
  // Forward: bias, ReLU, a softmax by hand; backward: ReLU gradient and its column sums.
  const ValueId pre_activation = builder.binary(ACCEL_OP_ADD, x, bias);
  const ValueId activation = builder.unary(ACCEL_OP_RELU, pre_activation);
  const ValueId exp = builder.unary(ACCEL_OP_EXP, builder.binary(ACCEL_OP_MUL, activation, builder.constant(Tensor::scalar(0.5f))));
  const ValueId sum = builder.reduce(ACCEL_OP_REDUCE_SUM, exp, {1}, true);
  builder.result(builder.binary(ACCEL_OP_DIV, exp, sum));
  const ValueId gradient = builder.binary(ACCEL_OP_RELU_BACKWARD, dy, pre_activation);
  builder.result(builder.reduce(ACCEL_OP_REDUCE_SUM, gradient, {0}));
  builder.result(builder.reduce(ACCEL_OP_REDUCE_MAX, builder.unary(ACCEL_OP_ABS, gradient), {0, 1}));
  const ValueId positive = builder.binary(ACCEL_OP_GREATER, x, builder.constant(Tensor::scalar(0.0f)));
  builder.result(builder.op(ACCEL_OP_SELECT, {positive, x, dy}, {6, 5}));
  builder.result(builder.cast(builder.unary(ACCEL_OP_SQUARE, dy), DType::kInt32));
  const Graph reference = builder.graph;
  Graph fused = builder.graph;
  const FusionStatistics statistics = fuse_elementwise(fused, FusionSupport::of_devices());
  expect_all_well_formed(fused);
  EXPECT_GE(statistics.fusions, 3);

  const std::vector<Tensor> arguments{testing::random_tensor({6, 5}, 1), testing::random_tensor({6, 5}, 2),
                                      testing::random_tensor({5}, 3)};
  testing::expect_same_results(testing::run_graph(fused, arguments), testing::run_graph(reference, arguments));
}

TEST(ElementwiseFusion, TheWholePipelineKeepsATrainingStepsNumbers) {
  detail::LogicalDevice* cpu = testing::cpu_device();
  if (!cpu->supports(ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_DTYPE_F32)) {
    GTEST_SKIP() << "the CPU plugin does not claim FUSED_ELEMENTWISE yet";
  }
  // One SGD step of a dense ReLU layer on a mean squared error, as a trace
  // records it; the weights are parameters here so that each run updates
  // its own copy.
  GraphBuilder builder(cpu);
  const ValueId x = builder.parameter({8, 3});
  const ValueId x_transposed = builder.parameter({3, 8});
  const ValueId y = builder.parameter({8, 4});
  const ValueId kernel = builder.parameter({3, 4});
  const ValueId bias = builder.parameter({4});
  const ValueId pre_activation = builder.binary(ACCEL_OP_ADD, builder.matmul(x, kernel), bias);
  const ValueId difference = builder.binary(ACCEL_OP_SUB, builder.unary(ACCEL_OP_RELU, pre_activation), y);
  builder.result(builder.reduce(ACCEL_OP_REDUCE_MEAN, builder.unary(ACCEL_OP_SQUARE, difference), {0, 1}));
  const ValueId scale = builder.binary(ACCEL_OP_DIV, builder.fill({}, 2.0), builder.fill({}, 32.0));
  const ValueId gradient = builder.binary(ACCEL_OP_RELU_BACKWARD, builder.binary(ACCEL_OP_MUL, difference, scale),
                                          pre_activation);
  builder.sgd_update(kernel, builder.matmul(x_transposed, gradient));
  builder.sgd_update(bias, builder.reduce(ACCEL_OP_REDUCE_SUM, gradient, {0}));
  builder.unary(ACCEL_OP_EXP, builder.unary(ACCEL_OP_EXP, x));  // dead
  const Graph reference = builder.graph;

  Graph compiled = builder.graph;
  EXPECT_EQ(eliminate_dead_code(compiled), 2);
  eliminate_common_subexpressions(compiled);
  EXPECT_EQ(fold_constants(compiled), 3);
  const FusionSupport support = FusionSupport::of_devices();
  EXPECT_EQ(fuse_epilogues(compiled, support).fusions, 1);
  // ReLU .. ReluGrad with the loss's mean and the bias gradient's sum.
  const FusionStatistics elementwise = fuse_elementwise(compiled, support);
  EXPECT_EQ(elementwise.fusions, 1);
  EXPECT_EQ(elementwise.ops_fused, 7);
  expect_all_well_formed(compiled);
  const BufferPlan plan = plan_buffers(compiled);
  EXPECT_GT(plan.arena_bytes.at(cpu), 0u);

  auto arguments = [&] {
    std::vector<Tensor> values;
    for (ValueId parameter : builder.graph.parameters) {
      values.push_back(testing::random_tensor(builder.shape(parameter), static_cast<uint32_t>(parameter) + 11));
    }
    return values;
  };
  const std::vector<Tensor> reference_arguments = arguments();
  const std::vector<Tensor> compiled_arguments = arguments();
  std::vector<Tensor> expected = testing::run_graph(reference, reference_arguments);
  std::vector<Tensor> actual = testing::run_graph(compiled, compiled_arguments);
  for (size_t updated : {size_t{3}, size_t{4}}) {  // the kernel and the bias after the step
    expected.push_back(reference_arguments[updated]);
    actual.push_back(compiled_arguments[updated]);
  }
  testing::expect_same_results(actual, expected);
}

}  // namespace
}  // namespace accel::graph
