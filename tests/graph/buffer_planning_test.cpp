// plan_buffers on hand-built graphs: reuse of dead buffers, reshape aliases,
// what is never planned, in-place fusion outputs and when they are refused,
// arenas per device, the peak figures; and on random graphs, an exhaustive
// check that no two values live at once share a byte.
#include "pass_test_graphs.hpp"

#include "graph/passes/storage.hpp"

#include <gtest/gtest.h>

#include <random>

namespace accel::graph {
namespace {

using testing::GraphBuilder;

detail::LogicalDevice* device() { return testing::stand_in_device(0); }

// A FUSED_ELEMENTWISE node whose program stores `outputs` (reduce op per
// output; 0 for the iteration shape). The planner reads no instructions.
std::vector<ValueId> add_fusion(GraphBuilder& builder, std::vector<ValueId> inputs,
                                const std::vector<std::pair<Shape, AccelOp>>& outputs, DType dtype = DType::kFloat32) {
  std::vector<std::pair<Shape, DType>> types;
  auto program = std::make_shared<FusedProgram>();
  program->shape = builder.shape(inputs[0]);
  for (const auto& [shape, reduce] : outputs) {
    types.emplace_back(shape, dtype);
    AccelFusedOutput output{};
    output.reduce_op = reduce;
    program->outputs.push_back(output);
  }
  AccelFusedElementwiseAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  const int32_t index =
      builder.node(ACCEL_OP_FUSED_ELEMENTWISE, std::move(inputs), types, testing::bytes_of(attributes));
  builder.graph.nodes[static_cast<size_t>(index)].program = program;
  return builder.graph.nodes[static_cast<size_t>(index)].outputs;
}

int64_t offset_of(const BufferPlan& plan, ValueId id) { return plan.offsets[static_cast<size_t>(id)]; }

TEST(BufferPlanning, ReusesTheBufferOfAValueWhoseLastReaderRan) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({256});  // 1 KiB
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId negated = builder.unary(ACCEL_OP_NEG, exp);
  const ValueId root = builder.unary(ACCEL_OP_SQRT, negated);
  const ValueId result = builder.unary(ACCEL_OP_RELU, root);
  builder.result(result);

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(offset_of(plan, exp), 0);
  EXPECT_EQ(offset_of(plan, negated), 1024);  // exp is still read while negated is written
  EXPECT_EQ(offset_of(plan, root), 0);        // exp is dead by then
  EXPECT_EQ(offset_of(plan, x), BufferPlan::kNotPlanned);
  EXPECT_EQ(offset_of(plan, result), BufferPlan::kNotPlanned);
  EXPECT_EQ(plan.arena_bytes.at(device()), 2048u);
  EXPECT_EQ(plan.in_place_writes, 0);
  // Eager: two 1 KiB tensors at most at once, then the result on top of root.
  EXPECT_EQ(plan.eager_peak_bytes, 2048u);
  EXPECT_EQ(plan.planned_peak_bytes, 2048u + 1024u);
}

// Placed in node order, a (256 bytes) and b (256) would take [0, 512) and c
// (512), made once a is dead, would find only a's 256-byte gap and go to the
// end: 1 KiB. Largest first, c takes 0, a (whose lifetime c does not share)
// takes 0 too, and b goes above c: 768 bytes, the most ever live at once.
TEST(BufferPlanning, PlacesTheLargestBuffersFirstSoSmallOnesDoNotFragmentTheArena) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({64});     // 256 bytes
  const ValueId big = builder.parameter({128});  // 512 bytes
  const ValueId a = builder.unary(ACCEL_OP_EXP, x);    // node 0, read last by node 1
  const ValueId b = builder.unary(ACCEL_OP_NEG, a);    // node 1, read last by node 3
  const ValueId c = builder.unary(ACCEL_OP_EXP, big);  // node 2, read last by node 4
  builder.result(builder.binary(ACCEL_OP_ADD, b, b));
  builder.result(builder.binary(ACCEL_OP_ADD, c, c));

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(offset_of(plan, c), 0);
  EXPECT_EQ(offset_of(plan, a), 0);
  EXPECT_EQ(offset_of(plan, b), 512);
  EXPECT_EQ(plan.arena_bytes.at(device()), 768u);
}

TEST(BufferPlanning, SmallBuffersFillTheGapsOfDeadLargeOnes) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({64});     // 256 bytes
  const ValueId big = builder.parameter({128});  // 512 bytes
  const ValueId a = builder.unary(ACCEL_OP_EXP, big);        // 512 bytes, nodes 0-2
  const ValueId b = builder.unary(ACCEL_OP_EXP, big);        // 512 bytes, nodes 1-2
  const ValueId keep = builder.unary(ACCEL_OP_EXP, x);       // 256 bytes, nodes 2-5
  const ValueId sum = builder.binary(ACCEL_OP_ADD, a, b);    // 512 bytes, nodes 3-6
  const ValueId small = builder.unary(ACCEL_OP_NEG, x);      // 256 bytes, nodes 4-5
  builder.result(builder.binary(ACCEL_OP_ADD, builder.binary(ACCEL_OP_ADD, keep, small), sum));

  const BufferPlan plan = plan_buffers(builder.graph);
  // Largest first: a at 0, b above it, sum above both (node 3 reads a and b
  // while it writes sum).
  EXPECT_EQ(offset_of(plan, a), 0);
  EXPECT_EQ(offset_of(plan, b), 512);
  EXPECT_EQ(offset_of(plan, sum), 1024);
  // keep shares its lifetime with all three: above them. small lives beside
  // only sum and keep: the 1 KiB gap a and b left. The last addition's
  // output (keep + small) finds a 768-byte gap above small, not the end.
  EXPECT_EQ(offset_of(plan, keep), 1536);
  EXPECT_EQ(offset_of(plan, small), 0);
  EXPECT_EQ(plan.arena_bytes.at(device()), 1792u);
}

TEST(BufferPlanning, AReshapeSharesItsRootsBufferAndKeepsItAlive) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({4, 4});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId flat = builder.reshape(exp, {16});
  const ValueId negated = builder.unary(ACCEL_OP_NEG, x);  // exp is still live through flat
  const ValueId sum = builder.binary(ACCEL_OP_ADD, flat, builder.reshape(negated, {16}));
  builder.result(sum);

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(offset_of(plan, flat), offset_of(plan, exp));
  EXPECT_NE(offset_of(plan, negated), offset_of(plan, exp));
  EXPECT_EQ(plan.arena_bytes.at(device()), 128u);
}

TEST(BufferPlanning, NeverPlansParametersCapturesConstantsResultsOrTheirAliases) {
  GraphBuilder builder(testing::cpu_device());
  const ValueId x = builder.parameter({4});
  const ValueId variable = builder.capture({4});
  const ValueId constant = builder.constant(Tensor::from_vector<float>({1, 2, 3, 4}, {4}));
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId returned_alias = builder.reshape(exp, {2, 2});
  const ValueId variable_alias = builder.reshape(variable, {2, 2});
  const ValueId sum = builder.binary(ACCEL_OP_ADD, builder.reshape(variable_alias, {4}), constant);
  builder.result(returned_alias);
  builder.result(builder.binary(ACCEL_OP_ADD, sum, exp));

  const BufferPlan plan = plan_buffers(builder.graph);
  for (ValueId id : {x, variable, constant, exp, returned_alias, variable_alias}) {
    EXPECT_EQ(offset_of(plan, id), BufferPlan::kNotPlanned) << "value " << id;
  }
  EXPECT_EQ(offset_of(plan, sum), 0);
}

TEST(BufferPlanning, AFusionWritesOverADeadInputOfItsShape) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({8, 4});
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId bias = builder.parameter({4});
  const std::vector<ValueId> outputs =
      add_fusion(builder, {bias, exp}, {{{8, 4}, AccelOp{}}, {{4}, ACCEL_OP_REDUCE_SUM}});
  builder.result(builder.binary(ACCEL_OP_ADD, builder.unary(ACCEL_OP_NEG, outputs[0]), outputs[1]));

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(plan.in_place_writes, 1);
  EXPECT_EQ(offset_of(plan, outputs[0]), offset_of(plan, exp));
  EXPECT_NE(offset_of(plan, outputs[1]), offset_of(plan, exp));
}

TEST(BufferPlanning, NeverWritesInPlaceOverABufferStillLive) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({8, 4});
  // exp is read again after the fusion.
  const ValueId exp = builder.unary(ACCEL_OP_EXP, x);
  const ValueId first = add_fusion(builder, {exp, x}, {{{8, 4}, AccelOp{}}})[0];
  const ValueId later = builder.binary(ACCEL_OP_ADD, first, exp);
  // read again through an alias after the fusion.
  const ValueId sqrt = builder.unary(ACCEL_OP_SQRT, x);
  const ValueId alias = builder.reshape(sqrt, {32});
  const ValueId second = add_fusion(builder, {sqrt}, {{{8, 4}, AccelOp{}}})[0];
  const ValueId through_alias = builder.binary(ACCEL_OP_ADD, builder.reshape(second, {32}), alias);
  builder.result(later);
  builder.result(through_alias);

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(plan.in_place_writes, 0);
  EXPECT_NE(offset_of(plan, first), offset_of(plan, exp));
  EXPECT_NE(offset_of(plan, second), offset_of(plan, sqrt));
}

TEST(BufferPlanning, NeverWritesInPlaceOverAnotherShapeDtypeOrAnUnplannedInput) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({8, 4});
  // A parameter is the caller's: never written.
  const ValueId over_parameter = add_fusion(builder, {x}, {{{8, 4}, AccelOp{}}})[0];
  // A broadcast input, smaller than the output.
  const ValueId row = builder.unary(ACCEL_OP_EXP, builder.parameter({4}));
  const ValueId over_row = add_fusion(builder, {x, row}, {{{8, 4}, AccelOp{}}})[0];
  // Another dtype.
  const ValueId integers = builder.cast(x, DType::kInt32);
  const ValueId over_integers = add_fusion(builder, {x, integers}, {{{8, 4}, AccelOp{}}})[0];
  // A reduced output.
  const ValueId column = builder.unary(ACCEL_OP_EXP, x);
  const ValueId reduced = add_fusion(builder, {column}, {{{8}, ACCEL_OP_REDUCE_SUM}})[0];
  // The same storage read through two inputs.
  const ValueId twice = builder.unary(ACCEL_OP_EXP, x);
  const ValueId over_twice = add_fusion(builder, {twice, builder.reshape(twice, {8, 4})}, {{{8, 4}, AccelOp{}}})[0];
  for (ValueId id : {over_parameter, over_row, over_integers, reduced, over_twice}) builder.result(id);

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(plan.in_place_writes, 0);
}

TEST(BufferPlanning, OneArenaPerDevice) {
  GraphBuilder builder(testing::stand_in_device(0));
  const ValueId x = builder.parameter({16});
  const ValueId on_first = builder.unary(ACCEL_OP_EXP, x);
  builder.on(testing::stand_in_device(1));
  const ValueId on_second = builder.unary(ACCEL_OP_EXP, builder.parameter({32}));
  builder.result(builder.unary(ACCEL_OP_NEG, on_second));
  builder.on(testing::stand_in_device(0));
  builder.result(builder.unary(ACCEL_OP_NEG, on_first));

  const BufferPlan plan = plan_buffers(builder.graph);
  ASSERT_EQ(plan.arena_bytes.size(), 2u);
  EXPECT_EQ(plan.arena_bytes.at(testing::stand_in_device(0)), 64u);
  EXPECT_EQ(plan.arena_bytes.at(testing::stand_in_device(1)), 128u);
  EXPECT_EQ(offset_of(plan, on_first), 0);
  EXPECT_EQ(offset_of(plan, on_second), 0);
}

TEST(BufferPlanning, OffsetsAreAlignedAndEmptyValuesCostNothing) {
  GraphBuilder builder(device());
  const ValueId x = builder.parameter({3});  // 12 bytes
  const ValueId first = builder.unary(ACCEL_OP_EXP, x);
  const ValueId empty = builder.unary(ACCEL_OP_EXP, builder.parameter({0}));
  const ValueId second = builder.unary(ACCEL_OP_NEG, x);
  builder.result(builder.binary(ACCEL_OP_ADD, first, second));
  builder.result(builder.unary(ACCEL_OP_NEG, empty));

  const BufferPlan plan = plan_buffers(builder.graph);
  EXPECT_EQ(offset_of(plan, first), 0);
  EXPECT_EQ(offset_of(plan, second), static_cast<int64_t>(kArenaAlignment));
  EXPECT_NE(offset_of(plan, empty), BufferPlan::kNotPlanned);
  EXPECT_EQ(plan.arena_bytes.at(device()), 2 * kArenaAlignment);
}

// ------------------------------------------------------------ random graphs

// A random graph of elementwise ops, reshapes, fusions (some able to write in
// place), multi-output ops, in-place updates and host nodes, on two devices.
Graph random_graph(std::mt19937& generator) {
  auto pick = [&](size_t count) { return std::uniform_int_distribution<size_t>(0, count - 1)(generator); };
  auto chance = [&](double probability) { return std::bernoulli_distribution(probability)(generator); };
  const std::vector<Shape> shapes{{16}, {4, 4}, {2, 8}, {8}, {2, 4}, {3}, {1}, {0}};
  GraphBuilder builder(testing::stand_in_device(0));
  std::vector<ValueId> pool;
  for (int count = 0; count < 3; ++count) {
    builder.on(testing::stand_in_device(static_cast<int>(pick(2))));
    pool.push_back(chance(0.5) ? builder.parameter(shapes[pick(shapes.size())])
                               : builder.capture(shapes[pick(shapes.size())]));
  }
  auto same_count = [&](const Shape& shape) {
    std::vector<Shape> matching{shape};
    for (const Shape& other : shapes) {
      if (other.element_count() == shape.element_count()) matching.push_back(other);
    }
    return matching[pick(matching.size())];
  };
  auto same_shape_as = [&](ValueId id) {
    std::vector<ValueId> matching;
    for (ValueId other : pool) {
      if (builder.shape(other) == builder.shape(id) && builder.dtype(other) == builder.dtype(id)) matching.push_back(other);
    }
    return matching[pick(matching.size())];
  };
  const int node_count = 5 + static_cast<int>(pick(40));
  for (int step = 0; step < node_count; ++step) {
    builder.on(testing::stand_in_device(static_cast<int>(pick(2))));
    const ValueId a = pool[pick(pool.size())];
    switch (pick(8)) {
      case 0:
      case 1:
        pool.push_back(builder.unary(ACCEL_OP_EXP, a));
        break;
      case 2:
        pool.push_back(builder.binary(ACCEL_OP_ADD, a, same_shape_as(a)));
        break;
      case 3:
        pool.push_back(builder.reshape(a, same_count(builder.shape(a))));
        break;
      case 4: {
        std::vector<ValueId> inputs{a};
        for (size_t more = pick(3); more > 0; --more) inputs.push_back(same_shape_as(a));
        if (chance(0.3)) inputs.push_back(builder.parameter({1}));
        std::vector<std::pair<Shape, AccelOp>> outputs{{builder.shape(a), AccelOp{}}};
        if (chance(0.5)) outputs.push_back({builder.shape(a), AccelOp{}});
        if (chance(0.4)) outputs.push_back({{}, ACCEL_OP_REDUCE_SUM});
        for (ValueId output : add_fusion(builder, inputs, outputs)) pool.push_back(output);
        break;
      }
      case 5: {
        const int32_t index = builder.node(ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, {a},
                                           {{builder.shape(a), DType::kFloat32}, {{4}, DType::kFloat32}});
        for (ValueId output : builder.graph.nodes[static_cast<size_t>(index)].outputs) pool.push_back(output);
        break;
      }
      case 6:
        builder.sgd_update(a, same_shape_as(a));
        break;
      default:
        if (chance(0.3)) builder.host();
        else pool.push_back(builder.unary(ACCEL_OP_NEG, a));
        break;
    }
  }
  for (ValueId id : pool) {
    if (chance(0.15)) builder.result(id);
  }
  return std::move(builder.graph);
}

TEST(BufferPlanning, RandomGraphsNeverShareABufferBetweenLiveValues) {
  std::mt19937 generator(20240611);
  int32_t in_place_writes = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Graph graph = random_graph(generator);
    graph.verify();
    const BufferPlan plan = plan_buffers(graph);
    SCOPED_TRACE("trial " + std::to_string(trial));
    const size_t count = graph.values.size();
    ASSERT_EQ(plan.offsets.size(), count);

    // What must be planned, and each storage's life, computed here on their own.
    std::vector<ValueId> root(count);
    std::vector<bool> returned(count, false);
    for (size_t id = 0; id < count; ++id) root[id] = storage_root(graph, static_cast<ValueId>(id));
    for (ValueId result : graph.results) returned[static_cast<size_t>(root[static_cast<size_t>(result)])] = true;
    std::vector<int32_t> first(count, -1);
    std::vector<int32_t> last(count, -1);
    for (size_t id = 0; id < count; ++id) {
      const Value& value = graph.values[id];
      if (root[id] == static_cast<ValueId>(id) && value.kind == ValueKind::kNodeOutput) {
        first[id] = last[id] = value.producer;
      }
    }
    for (size_t index = 0; index < graph.nodes.size(); ++index) {
      for (ValueId input : graph.nodes[index].inputs) {
        const auto storage = static_cast<size_t>(root[static_cast<size_t>(input)]);
        last[storage] = std::max(last[storage], static_cast<int32_t>(index));
      }
    }
    uint64_t results_bytes = 0;
    std::vector<ValueId> planned_roots;
    for (size_t id = 0; id < count; ++id) {
      const auto storage = static_cast<size_t>(root[id]);
      const bool should_plan = first[storage] >= 0 && !returned[storage];
      ASSERT_EQ(plan.offsets[id] != BufferPlan::kNotPlanned, should_plan) << "value " << id;
      if (!should_plan) {
        if (first[id] >= 0 && returned[id]) results_bytes += graph.values[id].byte_size();
        continue;
      }
      ASSERT_EQ(plan.offsets[id], plan.offsets[storage]) << "an alias has its root's offset";
      if (storage != id) continue;
      planned_roots.push_back(static_cast<ValueId>(id));
      const Value& value = graph.values[id];
      ASSERT_EQ(plan.offsets[id] % static_cast<int64_t>(kArenaAlignment), 0);
      ASSERT_LE(static_cast<uint64_t>(plan.offsets[id]) + value.byte_size(), plan.arena_bytes.at(value.device));
    }
    uint64_t arenas = 0;
    for (const auto& [device, bytes] : plan.arena_bytes) arenas += bytes;
    EXPECT_EQ(plan.planned_peak_bytes, arenas + results_bytes);

    // Every pair of storages alive at a common node on one device: disjoint
    // bytes, unless a fusion writes one over the other that it reads last.
    int32_t exempt = 0;
    for (size_t left = 0; left < planned_roots.size(); ++left) {
      for (size_t right = left + 1; right < planned_roots.size(); ++right) {
        ValueId a = planned_roots[left];
        ValueId b = planned_roots[right];
        const Value& va = graph.values[static_cast<size_t>(a)];
        const Value& vb = graph.values[static_cast<size_t>(b)];
        if (va.device != vb.device || va.byte_size() == 0 || vb.byte_size() == 0) continue;
        if (last[static_cast<size_t>(a)] < first[static_cast<size_t>(b)] ||
            last[static_cast<size_t>(b)] < first[static_cast<size_t>(a)]) {
          continue;
        }
        const int64_t a_begin = plan.offsets[static_cast<size_t>(a)];
        const int64_t b_begin = plan.offsets[static_cast<size_t>(b)];
        const bool disjoint = a_begin + static_cast<int64_t>(va.byte_size()) <= b_begin ||
                              b_begin + static_cast<int64_t>(vb.byte_size()) <= a_begin;
        if (disjoint) continue;
        // The one allowed sharing: b written in place over a by the fusion that reads a last.
        if (first[static_cast<size_t>(a)] > first[static_cast<size_t>(b)]) std::swap(a, b);
        const int32_t writer = first[static_cast<size_t>(b)];
        const Node& node = graph.nodes[static_cast<size_t>(writer)];
        const Value& donor = graph.values[static_cast<size_t>(a)];
        const Value& written = graph.values[static_cast<size_t>(b)];
        bool reads_a = false;
        for (ValueId input : node.inputs) {
          if (root[static_cast<size_t>(input)] == a && graph.values[static_cast<size_t>(input)].shape == written.shape) {
            reads_a = true;
          }
        }
        const bool in_place = node.op == ACCEL_OP_FUSED_ELEMENTWISE && last[static_cast<size_t>(a)] == writer &&
                              reads_a && donor.dtype == written.dtype &&
                              donor.byte_size() == written.byte_size() && a_begin == b_begin &&
                              node.program->outputs[static_cast<size_t>(written.output_index)].reduce_op == 0;
        ASSERT_TRUE(in_place) << "values " << a << " and " << b << " overlap while both live";
        ++exempt;
      }
    }
    EXPECT_EQ(exempt, plan.in_place_writes);
    in_place_writes += plan.in_place_writes;
  }
  EXPECT_GT(in_place_writes, 0) << "the random graphs should exercise writing in place";
}

}  // namespace
}  // namespace accel::graph
