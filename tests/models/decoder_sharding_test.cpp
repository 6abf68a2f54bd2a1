// The zoo's decoder-only language model, its training step traced once and
// partitioned by partition_spmd under a ModelParallel layout map (FSDP over
// "data" x tensor parallelism over "model": attention heads, the MLP's hidden
// axis, the vocabulary), run as an SPMD program on 4 logical CPU devices:
// 20 SGD steps reach the losses and weights of the same step on one device.
// Its own process: the CPU is split into 4 logical devices before the runtime
// starts.
#include "graph/graph_executor.hpp"
#include "graph/passes/passes.hpp"
#include "graph/spmd_program.hpp"
#include "graph/tracer.hpp"

#include <accel/autodiff/gradient_tape.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../core/keras/distribution/layout_sharding.hpp"
#include "../common/batch_losses.hpp"
#include "../common/split_cpu_environment.hpp"
#include "decoder_model_parallel.hpp"
#include "model_zoo.hpp"
#include "small_decoder.hpp"
#include "trained_alike.hpp"

namespace accel::model_zoo {
namespace {

using keras::distribution::DeviceMesh;
using keras::distribution::LayoutMap;
using keras::distribution::ModelParallel;
using keras::distribution::TensorLayout;

constexpr int kSteps = 20;

[[maybe_unused]] ::testing::Environment* const four_logical_cpus =
    ::testing::AddGlobalTestEnvironment(new testing::SplitCpuEnvironment(4));

TensorLayout layout(std::vector<std::optional<std::string>> axes) { return TensorLayout{std::move(axes)}; }

TEST(DecoderSharding, FsdpTimesTensorParallelTrainsAsOneDevice) {
  DeviceScope on_cpu("/CPU:0");
  keras::clear_session();
  keras::set_random_seed(11);
  const DecoderLanguageModelOptions options = small_decoder();
  std::shared_ptr<keras::Model> model = decoder_language_model(options);
  const auto optimizer = std::make_shared<keras::SGD>(keras::SGDOptions{.learning_rate = 0.5});
  const keras::SparseCategoricalCrossentropy loss_function(keras::CrossentropyOptions{.from_logits = true});

  const std::pair<Tensor, Tensor> examples = pattern_batch(4);
  const Tensor& x = examples.first;
  const Tensor& y = examples.second;
  (void)(*model)(x, /*training=*/false);
  const std::vector<Variable> weights = model->trainable_weights();
  optimizer->build(weights);

  // One training step traced; the trace's own update put back.
  graph::Graph graph;
  {
    std::function<void()> rollback;
    {
      const std::vector<Tensor> arguments = {x, y};
      graph::Tracer tracer(arguments);
      Tensor loss;
      {
        std::vector<Tensor> gradients;
        {
          GradientTape tape;
          loss = loss_function(y, (*model)(x, /*training=*/true));
          gradients = tape.gradient(loss, weights);
        }
        std::vector<std::pair<Tensor, Variable>> pairs;
        for (size_t index = 0; index < weights.size(); ++index) pairs.emplace_back(gradients[index], weights[index]);
        optimizer->apply_gradients(pairs);
      }
      ASSERT_FALSE(tracer.failed()) << tracer.failure();
      const std::vector<Tensor> results = {loss};
      graph = tracer.finish(results);
      rollback = tracer.take_rollback();
    }
    rollback();
  }
  std::vector<std::vector<float>> initial;
  for (const Variable& weight : weights) initial.push_back(weight.value().to_vector<float>());

  std::vector<float> reference_losses;
  {
    graph::Graph copy = graph;
    graph::BufferPlan plan = graph::plan_buffers(copy);
    graph::GraphExecutor reference(std::move(copy), std::move(plan));
    for (int step = 0; step < kSteps; ++step) {
      const std::vector<Tensor> arguments = {x, y};
      reference_losses.push_back(reference.run(arguments)[0].item<float>());
    }
  }
  ASSERT_LT(reference_losses.back(), 0.5f * reference_losses.front()) << "the decoder learns the pattern";
  std::vector<std::vector<float>> reference_weights;
  for (const Variable& weight : weights) reference_weights.push_back(weight.value().to_vector<float>());
  for (size_t index = 0; index < weights.size(); ++index) {
    Tensor value = weights[index].value();
    value.assign(Tensor::from_vector(initial[index], value.shape()));
  }

  LayoutMap layout_map(DeviceMesh({2, 2}, {"data", "model"}, {"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"}));
  layout_map.set("(query|key|value)/kernel$", layout({"data", "model", std::nullopt}));
  layout_map.set("(query|key|value)/bias$", layout({"model", std::nullopt}));
  layout_map.set("attention_output/kernel$", layout({"model", std::nullopt, "data"}));
  layout_map.set("mlp_in/kernel$", layout({"data", "model"}));
  layout_map.set("mlp_in/bias$", layout({"model"}));
  layout_map.set("mlp_out/kernel$", layout({"model", "data"}));
  layout_map.set("logits/kernel$", layout({"data", "model"}));
  const ModelParallel distribution(layout_map, "data");
  const DeviceMesh& mesh = distribution.mesh();

  const keras::distribution::ShardingsByStorage variable_shardings =
      keras::distribution::variable_shardings(distribution, weights);
  int32_t sharded_variables = 0;
  for (const auto& [storage, sharding] : variable_shardings) sharded_variables += !sharding.is_replicated();
  // Per block: q, k, v kernels and biases, the attention output kernel, the MLP's kernels and
  // hidden bias (10); and the logits kernel.
  EXPECT_EQ(sharded_variables, 2 * 10 + 1);
  graph::SpmdInputs inputs;
  inputs.mesh = keras::distribution::mesh_shape(mesh);
  const graph::ValueSharding batch = keras::distribution::to_sharding(distribution.data_layout(2), mesh);
  inputs.parameters = {batch, batch};
  inputs.capture = [&](graph::ValueId, const graph::Value& value) -> graph::ValueSharding {
    const auto found = variable_shardings.find(value.tensor.storage().get());
    return found != variable_shardings.end() ? found->second : graph::ValueSharding{};
  };
  const graph::SpmdPartition partition = graph::partition_spmd(graph, inputs);
  int32_t gathers = 0, scatters = 0, reduces = 0;
  for (const graph::InsertedCollective& collective : partition.collectives) {
    gathers += collective.attributes.kind == graph::CollectiveKind::kAllGather;
    scatters += collective.attributes.kind == graph::CollectiveKind::kReduceScatter;
    reduces += collective.attributes.kind == graph::CollectiveKind::kAllReduce;
  }
  EXPECT_GT(gathers, 0) << "FSDP gathers its weights for use";
  EXPECT_GT(scatters, 0) << "and reduce-scatters their gradients";
  EXPECT_GT(reduces, 0) << "row-parallel matmuls' partial sums are all-reduced";

  std::vector<Device> devices;
  for (const std::string& name : mesh.devices()) devices.push_back(find_device(name));
  graph::SpmdProgram program(graph, partition, devices);
  // The sharded matmuls sum over other splits than the one device does
  // (row-parallel partial sums all-reduced, FSDP's gathered shapes), and on
  // AVX-512 CPUs oneDNN runs those shapes on other kernels, which order the
  // sums their own way: the losses and weights drift up to about 1.5e-5
  // (relative) apart over the steps. A sharding mistake moves them by far more.
  constexpr float kTolerance = 5e-5f;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::vector<Tensor>> arguments(devices.size());
    for (size_t device = 0; device < devices.size(); ++device) {
      arguments[device] = {program.shard_of(x, graph.parameters[0], device), program.shard_of(y, graph.parameters[1], device)};
    }
    const std::vector<std::vector<Tensor>> results = program.run(arguments);
    for (size_t device = 0; device < devices.size(); ++device) {
      const float expected = reference_losses[static_cast<size_t>(step)];
      EXPECT_NEAR(results[device][0].item<float>(), expected, kTolerance * expected)
          << "step " << step << " device " << device;
    }
  }
  program.gather_captures();
  for (size_t index = 0; index < weights.size(); ++index) {
    const std::vector<float> trained = weights[index].value().to_vector<float>();
    ASSERT_EQ(trained.size(), reference_weights[index].size());
    for (size_t element = 0; element < trained.size(); ++element) {
      const float expected = reference_weights[index][element];
      ASSERT_NEAR(trained[element], expected, kTolerance * std::max(1.0f, std::fabs(expected)))
          << weights[index].name() << " [" << element << "]";
    }
  }
}

// The same through Keras's API: set_distribution(ModelParallel) before
// compile, then fit. SGD with momentum (its slots take their variables'
// layouts; Adam's division by sqrt(v) would turn a gradient that is zero up
// to rounding into rounding-sized updates of either sign), 3 epochs of 4
// batches: the losses of every step and the final weights match fit on one
// device from the same weights.
class FitUnderModelParallel : public ::testing::TestWithParam<bool> {};

TEST_P(FitUnderModelParallel, TrainsAsOneDevice) {
  DeviceScope on_cpu("/CPU:0");
  DecoderLanguageModelOptions options = small_decoder();
  // Tied: the embedding's table, sharded over both axes, is gathered for
  // the lookup and for the logits, and its gradient sums both uses.
  options.tied_logits = GetParam();
  const std::pair<Tensor, Tensor> examples = pattern_batch(16);
  const Tensor& x = examples.first;
  const Tensor& y = examples.second;

  struct Trained {
    std::vector<double> losses;
    std::vector<std::vector<float>> weights;
    bool ran_unsharded = false;  // made the one-device compiled train function
  };
  auto train = [&](std::shared_ptr<const keras::distribution::Distribution> distribution) {
    std::shared_ptr<keras::Model> model = compiled_decoder(options, std::move(distribution));
    auto losses = std::make_shared<testing::BatchLosses>();
    model->fit(x, y, {.epochs = 3, .batch_size = 4, .verbose = 0, .callbacks = {losses}, .shuffle = false});
    Trained trained{losses->losses, {}, model->train_function() != nullptr};
    for (const Variable& weight : model->weights()) trained.weights.push_back(weight.value().to_vector<float>());
    return trained;
  };
  const Trained one_device = train(nullptr);
  const Trained sharded = train(decoder_model_parallel());

  EXPECT_TRUE(one_device.ran_unsharded);
  EXPECT_FALSE(sharded.ran_unsharded) << "fit ran the sharded program, not the one-device step";
  ASSERT_EQ(sharded.losses.size(), 12u);
  EXPECT_LT(one_device.losses.back(), one_device.losses.front());
  expect_trained_alike(sharded.losses, sharded.weights, one_device.losses, one_device.weights);
}

INSTANTIATE_TEST_SUITE_P(DecoderSharding, FitUnderModelParallel, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "TiedLogits" : "OwnLogits"; });

// Weights assigned between two fits (loaded, restored, reset) are what the
// next sharded fit trains on: its first step cuts the shards again instead
// of overwriting them with the last fit's.
TEST(DecoderSharding, WeightsAssignedBetweenFitsAreTrainedOn) {
  DeviceScope on_cpu("/CPU:0");
  const DecoderLanguageModelOptions options = small_decoder();
  const std::pair<Tensor, Tensor> examples = pattern_batch(16);
  const Tensor& x = examples.first;
  const Tensor& y = examples.second;
  struct Fits {
    std::vector<double> first, second;  // each fit's losses
    std::vector<std::vector<float>> weights;
  };
  auto train = [&](std::shared_ptr<const keras::distribution::Distribution> distribution) {
    std::shared_ptr<keras::Model> model = compiled_decoder(options, std::move(distribution));
    std::vector<std::vector<float>> initial;
    for (const Variable& weight : model->weights()) initial.push_back(weight.value().to_vector<float>());
    Fits fits;
    auto losses = std::make_shared<testing::BatchLosses>();
    model->fit(x, y, {.epochs = 1, .batch_size = 4, .verbose = 0, .callbacks = {losses}, .shuffle = false});
    fits.first = losses->losses;
    std::vector<Variable> weights = model->weights();
    for (size_t index = 0; index < weights.size(); ++index) {
      Tensor value = weights[index].value();
      value.assign(Tensor::from_vector(initial[index], value.shape()));
    }
    losses->losses.clear();
    model->fit(x, y, {.epochs = 1, .batch_size = 4, .verbose = 0, .callbacks = {losses}, .shuffle = false});
    fits.second = losses->losses;
    for (const Variable& weight : model->weights()) fits.weights.push_back(weight.value().to_vector<float>());
    return fits;
  };
  const Fits one_device = train(nullptr);
  const Fits sharded = train(decoder_model_parallel());
  ASSERT_EQ(sharded.second.size(), 4u);
  EXPECT_NEAR(sharded.second.front(), sharded.first.front(), 1e-5 * sharded.first.front())
      << "the second fit starts from the weights put back, not from the first fit's";
  expect_trained_alike(sharded.second, sharded.weights, one_device.second, one_device.weights);
}

TEST(DecoderSharding, FitUnderADistributionRefusesABatchTheMeshCannotSplit) {
  DeviceScope on_cpu("/CPU:0");
  keras::clear_session();
  keras::distribution::set_distribution(std::make_shared<keras::distribution::DataParallel>(
      std::vector<std::string>{"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"}));
  const DecoderLanguageModelOptions options = small_decoder();
  std::shared_ptr<keras::Model> model = decoder_language_model(options);
  EXPECT_THROW(model->compile("sgd", "mse"), FailedPreconditionError) << "a sharded step is a compiled one";
  EXPECT_FALSE(model->compiled()) << "a refused compile leaves the model as it was";
  model->compile("sgd", std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                 {}, {.jit_compile = true});
  keras::distribution::set_distribution(nullptr);
  const Tensor x = ops::zeros(Shape{6, 8}, DType::kInt32);
  try {
    model->fit(x, x, {.batch_size = 6, .verbose = 0});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("a batch of 6 examples does not split over the mesh's 'batch' axis of 4"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace accel::model_zoo
