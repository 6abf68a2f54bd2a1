// A traced training step (a two-layer MLP, squared error, SGD) partitioned by
// partition_spmd and run for real as an SPMD program on 4 logical CPU
// devices: data parallel, FSDP, and FSDP x tensor parallel on a 2 x 2 mesh
// train to the losses and weights of the same step on one device, with and
// without the compiler's passes. Each test runs in a fresh process: the CPU
// is split into logical devices before the runtime starts.
#include "graph/graph_executor.hpp"
#include "graph/mesh_collectives.hpp"
#include "graph/passes/passes.hpp"
#include "graph/spmd_program.hpp"
#include "graph/tracer.hpp"

#include <accel/autodiff/gradient_tape.hpp>
#include <accel/device.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "../common/split_cpu_environment.hpp"


namespace accel::graph {
namespace {

constexpr int kSteps = 5;
constexpr int32_t kNone = kReplicated;

Tensor values(const Shape& shape, float scale, float phase) {
  std::vector<float> data(static_cast<size_t>(shape.element_count()));
  for (size_t i = 0; i < data.size(); ++i) data[i] = scale * std::sin(0.7f * static_cast<float>(i) + phase);
  return Tensor::from_vector(data, shape);
}

struct Mlp {
  Tensor x = values({8, 4}, 1.0f, 0.1f);
  Tensor y = values({8, 4}, 0.5f, 0.9f);
  Tensor w1 = values({4, 16}, 0.4f, 0.3f);
  Tensor w2 = values({16, 4}, 0.3f, 1.7f);
  std::vector<float> w1_initial = w1.to_vector<float>();
  std::vector<float> w2_initial = w2.to_vector<float>();

  // One step traced; the trace's own updates are put back.
  Graph trace() {
    Graph graph;
    std::function<void()> rollback;
    {
      const std::vector<Tensor> arguments = {x, y};
      Tracer tracer(arguments);
      Tensor loss;
      {
        GradientTape tape;
        tape.watch(w1);
        tape.watch(w2);
        const Tensor out = ops::matmul(ops::relu(ops::matmul(x, w1)), w2);
        loss = ops::reduce_mean(ops::square(ops::sub(out, y)));
        const std::vector<Tensor> gradients = tape.gradient(loss, std::vector<Tensor>{w1, w2});
        ops::sgd_update(w1, gradients[0], Tensor(), 0.1);
        ops::sgd_update(w2, gradients[1], Tensor(), 0.1);
      }
      EXPECT_FALSE(tracer.failed()) << tracer.failure();
      const std::vector<Tensor> results = {loss};
      graph = tracer.finish(results);
      rollback = tracer.take_rollback();
    }
    rollback();
    return graph;
  }

  void reset_weights() {
    w1.assign(Tensor::from_vector(w1_initial, w1.shape()));
    w2.assign(Tensor::from_vector(w2_initial, w2.shape()));
  }
};

[[maybe_unused]] ::testing::Environment* const four_logical_cpus =
    ::testing::AddGlobalTestEnvironment(new testing::SplitCpuEnvironment(4));

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * std::max(1.0f, std::fabs(expected[i]))) << what << " [" << i << "]";
  }
}

// Trains kSteps on one device, then the same steps partitioned over `mesh`
// with the given layouts of x, y (the batch), w1 and w2, on /CPU:0..3.
// `passes`: the compiler's passes run on the program first (SpmdProgram).
void expect_same_training(const MeshShape& mesh, const ValueSharding& batch, const ValueSharding& w1_layout,
                          const ValueSharding& w2_layout, size_t expected_collectives_at_least,
                          const std::optional<FunctionOptions>& passes = std::nullopt) {
  DeviceScope on_cpu("/CPU:0");
  Mlp mlp;
  Graph graph = mlp.trace();

  std::vector<float> reference_losses;
  {
    Graph copy = graph;
    BufferPlan plan = plan_buffers(copy);
    GraphExecutor reference(std::move(copy), std::move(plan));
    for (int step = 0; step < kSteps; ++step) {
      const std::vector<Tensor> arguments = {mlp.x, mlp.y};
      reference_losses.push_back(reference.run(arguments)[0].item<float>());
    }
  }
  const std::vector<float> w1_reference = mlp.w1.to_vector<float>();
  const std::vector<float> w2_reference = mlp.w2.to_vector<float>();
  ASSERT_LT(reference_losses.back(), reference_losses.front()) << "the step learns";
  mlp.reset_weights();

  const ValueId w1_id = [&] {
    for (size_t id = 0; id < graph.values.size(); ++id) {
      if (graph.values[id].kind == ValueKind::kCapture && graph.values[id].tensor.id() == mlp.w1.id()) {
        return static_cast<ValueId>(id);
      }
    }
    return kNoValue;
  }();
  ASSERT_NE(w1_id, kNoValue);
  SpmdInputs inputs;
  inputs.mesh = mesh;
  inputs.parameters = {batch, batch};
  inputs.capture = [&](ValueId id, const Value& value) -> ValueSharding {
    if (value.tensor.id() == mlp.w1.id()) return w1_layout;
    if (value.tensor.id() == mlp.w2.id()) return w2_layout;
    return {};
  };
  const SpmdPartition partition = partition_spmd(graph, inputs);
  EXPECT_GE(partition.collectives.size(), expected_collectives_at_least);
  std::vector<Device> devices;
  for (int index = 0; index < 4; ++index) devices.push_back(find_device("/CPU:" + std::to_string(index)));
  SpmdProgram program(graph, partition, devices, nullptr, passes);
  if (passes) {
    EXPECT_GT(program.statistics().fusions, 0) << "the passes ran";
    EXPECT_LT(program.statistics().compiled_ops, program.statistics().traced_ops);
  }
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::vector<Tensor>> arguments(4);
    for (size_t device = 0; device < 4; ++device) {
      arguments[device] = {program.shard_of(mlp.x, graph.parameters[0], device),
                           program.shard_of(mlp.y, graph.parameters[1], device)};
    }
    const std::vector<std::vector<Tensor>> results = program.run(arguments);
    for (size_t device = 0; device < 4; ++device) {
      EXPECT_NEAR(results[device][0].item<float>(), reference_losses[static_cast<size_t>(step)],
                  1e-5 * reference_losses[static_cast<size_t>(step)])
          << "step " << step << " on device " << device;
    }
  }
  program.gather_captures();
  expect_close(mlp.w1.to_vector<float>(), w1_reference, "w1");
  expect_close(mlp.w2.to_vector<float>(), w2_reference, "w2");
}

ValueSharding split(std::vector<int32_t> axes) { return ValueSharding{std::move(axes), 0, PartialReduction::kNone}; }

TEST(SpmdProgram, DataParallelTrainsAsOneDevice) {
  expect_same_training(MeshShape{{"data"}, {4}}, split({0, kNone}), split({kNone, kNone}), split({kNone, kNone}), 3);
}

TEST(SpmdProgram, FsdpTrainsAsOneDevice) {
  expect_same_training(MeshShape{{"data"}, {4}}, split({0, kNone}), split({0, kNone}), split({0, kNone}), 5);
}

TEST(SpmdProgram, FsdpTimesTensorParallelTrainsAsOneDevice) {
  // w1 column-parallel over model, w2 row-parallel over model, both FSDP over data.
  expect_same_training(MeshShape{{"data", "model"}, {2, 2}}, split({0, kNone}), split({0, 1}), split({1, 0}), 5);
}

// The same with the compiler's passes (fusion renumbers the values; the
// variables' shards are found again by their tensors).
TEST(SpmdProgram, FsdpTimesTensorParallelCompiledTrainsAsOneDevice) {
  expect_same_training(MeshShape{{"data", "model"}, {2, 2}}, split({0, kNone}), split({0, 1}), split({1, 0}), 5,
                       FunctionOptions{.name = "mlp_step", .jit_compile = true});
}

TEST(MeshCollectives, ShardsCutAndPlacedBackAreTheWhole) {
  const MeshShape mesh{{"data", "model"}, {2, 3}};
  const Shape whole_shape{4, 6};
  std::vector<std::byte> whole(24 * 4);
  for (size_t i = 0; i < whole.size(); ++i) whole[i] = static_cast<std::byte>(i);
  const ValueSharding sharding = split({0, 1});  // rows over data, columns over model: 2 x 2 per device
  std::vector<std::byte> rebuilt(whole.size());
  for (size_t device = 0; device < 6; ++device) {
    const std::vector<std::byte> shard = cut_shard(whole, whole_shape, sharding, mesh, device, 4);
    ASSERT_EQ(shard.size(), 2u * 2u * 4u);
    // Device 4 is (data 1, model 1): rows 2-3, columns 2-3; its first element is whole[2][2].
    if (device == 4) EXPECT_EQ(shard[0], whole[(2 * 6 + 2) * 4]);
    place_shard(rebuilt, whole_shape, shard, sharding, mesh, device, 4);
  }
  EXPECT_EQ(rebuilt, whole);
}

}  // namespace
}  // namespace accel::graph
