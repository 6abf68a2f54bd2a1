// compile(..., {.jit_compile = true}): fit, evaluate and predict with
// compiled steps against the same model run eagerly from the same weights.
// The tutorial CNN and MLP, 50 steps of Adam and of SGD with momentum, on the
// CPU and on the emulated TPU: losses within 1e-5 relative at every step and
// final weights within 1e-4 of max|w|. Also: one trace per batch signature,
// the step really compiled (no eager fallback, fusions made), and Dropout
// drawing new numbers at every replay, and a step the graph cannot express
// running eagerly with the reason.
#include <accel/accel.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>

#include <gtest/gtest.h>

#include "../common/batch_losses.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel::keras {
namespace {

constexpr int64_t kSteps = 50;
constexpr int64_t kBatch = 32;

enum class Architecture { kCnn, kMlp };

std::shared_ptr<Sequential> make_model(Architecture architecture, bool with_dropout = false) {
  set_random_seed(3);
  std::vector<std::shared_ptr<Layer>> layers;
  if (architecture == Architecture::kCnn) {
    // The tutorial CNN (54,410 parameters).
    layers = {std::make_shared<Conv2D>(32, std::array<int32_t, 2>{3, 3}, Conv2DOptions{.activation = "relu"}),
              std::make_shared<MaxPooling2D>(Pooling2DOptions{.pool_size = {2, 2}}), std::make_shared<Flatten>(),
              std::make_shared<Dense>(10, DenseOptions{.activation = "softmax"})};
  } else {
    layers = {std::make_shared<Flatten>(), std::make_shared<Dense>(128, DenseOptions{.activation = "relu"})};
    if (with_dropout) layers.push_back(std::make_shared<Dropout>(0.2));
    layers.push_back(std::make_shared<Dense>(10));
  }
  auto model = std::make_shared<Sequential>(layers);
  model->build({kUnknownDim, 28, 28, 1});
  return model;
}

std::shared_ptr<Optimizer> make_optimizer(const std::string& name) {
  if (name == "adam") return std::make_shared<Adam>(AdamOptions{.learning_rate = 0.002});
  return std::make_shared<SGD>(SGDOptions{.learning_rate = 0.05, .momentum = 0.9});
}

std::shared_ptr<Loss> logits_loss() {
  return std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true});
}

struct Images {
  Tensor x;  // [samples, 28, 28, 1] in [0, 1)
  Tensor y;  // [samples] int32 in 0..9
};

Images images(int64_t samples) {
  DeviceScope on_host("/CPU:0");
  const Tensor x = ops::random_uniform(Shape{samples, 28, 28, 1}, /*seed=*/7);
  const Tensor y =
      ops::cast(ops::mul(ops::random_uniform(Shape{samples}, /*seed=*/8), ops::fill(Shape{}, 9.99)), DType::kInt32);
  return {x, y};
}

struct Trained {
  std::vector<double> losses;
  std::vector<Tensor> weights;
  Logs evaluation;
  Tensor predictions;
};

Trained train(Architecture architecture, const std::string& optimizer, const std::string& device, bool compiled,
              const Images& data, std::shared_ptr<Sequential>* kept = nullptr) {
  DeviceScope on_device(device);
  std::shared_ptr<Sequential> model = make_model(architecture);
  // The CNN ends in a softmax; the MLP gives logits.
  const LossArgument loss = architecture == Architecture::kCnn ? LossArgument("sparse_categorical_crossentropy")
                                                               : LossArgument(logits_loss());
  model->compile(make_optimizer(optimizer), loss, {"accuracy"}, {.jit_compile = compiled});
  auto losses = std::make_shared<accel::testing::BatchLosses>();
  model->fit(data.x, data.y, {.batch_size = kBatch, .verbose = 0, .callbacks = {losses}, .shuffle = false});
  Trained trained;
  trained.losses = losses->losses;
  for (const Variable& weight : model->weights()) trained.weights.push_back(weight.value().to(find_device("/CPU:0")));
  trained.evaluation = model->evaluate(data.x, data.y, {.batch_size = 64, .verbose = 0});
  trained.predictions = model->predict(data.x, {.batch_size = 64, .verbose = 0}).to(find_device("/CPU:0"));
  if (kept != nullptr) *kept = model;
  return trained;
}

double max_abs(const Tensor& tensor) { return ops::reduce_max(ops::abs(tensor)).item<float>(); }

struct CompiledCase {
  Architecture architecture;
  std::string optimizer;
  std::string device;
};

class CompiledTraining : public ::testing::TestWithParam<CompiledCase> {};

TEST_P(CompiledTraining, FiftyStepsMatchEagerFromTheSameWeights) {
  const CompiledCase& parameters = GetParam();
  const Images data = images(kSteps * kBatch);
  const Trained eager = train(parameters.architecture, parameters.optimizer, parameters.device, false, data);
  std::shared_ptr<Sequential> model;
  const Trained compiled = train(parameters.architecture, parameters.optimizer, parameters.device, true, data, &model);

  ASSERT_EQ(compiled.losses.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(eager.losses.size(), compiled.losses.size());
  // The emulated MXU multiplies in bfloat16, where the fused kernels and the
  // eager ops round apart from the first step on: 50 steps drift further.
  const double loss_tolerance = parameters.device == "/TPU:0" ? 1e-4 : 1e-5;
  for (size_t step = 0; step < eager.losses.size(); ++step) {
    ASSERT_NEAR(compiled.losses[step], eager.losses[step], loss_tolerance * std::max(1.0, std::abs(eager.losses[step])))
        << "step " << step;
  }
  // Every step of the compiled run is the compiled program, the first too.
  // On the emulated TPU its fused kernels round the MXU's bfloat16 products
  // otherwise than the eager ops now and then; a max-pooling winner or a
  // clipped probability that flips, Adam's first updates (about
  // lr * sign(gradient)) and 50 momentum steps grow that into differences of
  // up to about 1e-2 in the weights (measured: 7e-3 with SGD, 1.3e-3 with
  // Adam), while every step's loss stays within 1e-4 of eager's.
  const bool on_the_mxu = parameters.device == "/TPU:0";
  const double weight_tolerance = on_the_mxu ? 1e-2 : 1e-4;
  ASSERT_EQ(eager.weights.size(), compiled.weights.size());
  for (size_t index = 0; index < eager.weights.size(); ++index) {
    const double scale = std::max(1.0, max_abs(eager.weights[index]));
    EXPECT_LE(max_abs(ops::sub(eager.weights[index], compiled.weights[index])), weight_tolerance * scale)
        << model->weights()[index].name();
  }
  EXPECT_NEAR(compiled.evaluation.at("loss"), eager.evaluation.at("loss"),
              (on_the_mxu ? 1e-4 : 1e-5) * std::abs(eager.evaluation.at("loss")));
  EXPECT_NEAR(compiled.evaluation.at("accuracy"), eager.evaluation.at("accuracy"), on_the_mxu ? 0.005 : 0.0);
  EXPECT_LE(max_abs(ops::sub(compiled.predictions, eager.predictions)), on_the_mxu ? 5e-3 : 1e-4);

  // Really compiled: one trace, replays, no eager fallback, something fused.
  ASSERT_NE(model->train_function(), nullptr);
  const FunctionStatistics training = model->train_function()->statistics();
  EXPECT_EQ(training.eager_reason, "");
  EXPECT_EQ(training.traces, 1);
  EXPECT_EQ(training.replays, kSteps);  // the tracing call ran the program too
  EXPECT_EQ(training.eager_calls, 0);
  EXPECT_GT(training.fusions, 0) << model->train_function()->graph_text();
  EXPECT_LT(training.compiled_ops, training.traced_ops);
  ASSERT_NE(model->test_function(), nullptr);
  EXPECT_EQ(model->test_function()->statistics().eager_reason, "");
  ASSERT_NE(model->predict_function(), nullptr);
  EXPECT_EQ(model->predict_function()->statistics().eager_reason, "");
}

std::string case_name(const ::testing::TestParamInfo<CompiledCase>& info) {
  std::string device = info.param.device.substr(1, 3);
  return std::string(info.param.architecture == Architecture::kCnn ? "Cnn" : "Mlp") + "_" + info.param.optimizer +
         "_" + device;
}

INSTANTIATE_TEST_SUITE_P(
    CnnAndMlp, CompiledTraining,
    ::testing::Values(CompiledCase{Architecture::kCnn, "adam", "/CPU:0"}, CompiledCase{Architecture::kCnn, "sgd", "/CPU:0"},
                      CompiledCase{Architecture::kMlp, "adam", "/CPU:0"}, CompiledCase{Architecture::kMlp, "sgd", "/CPU:0"},
                      CompiledCase{Architecture::kCnn, "adam", "/TPU:0"}, CompiledCase{Architecture::kCnn, "sgd", "/TPU:0"},
                      CompiledCase{Architecture::kMlp, "adam", "/TPU:0"}, CompiledCase{Architecture::kMlp, "sgd", "/TPU:0"}),
    case_name);

TEST(CompiledTrainingSignatures, ANewBatchSizeRetracesOnceAndTheSameSignatureNever) {
  DeviceScope on_cpu("/CPU:0");
  const Images data = images(100);  // batches of 32, 32, 32 and 4
  std::shared_ptr<Sequential> model = make_model(Architecture::kMlp);
  model->compile("sgd", logits_loss(), {"accuracy"}, {.jit_compile = true});
  model->fit(data.x, data.y, {.epochs = 1, .batch_size = 32, .verbose = 0});
  EXPECT_EQ(model->train_function()->trace_count(), 2);
  model->fit(data.x, data.y, {.epochs = 3, .batch_size = 32, .verbose = 0});
  EXPECT_EQ(model->train_function()->trace_count(), 2);
  EXPECT_EQ(model->train_function()->statistics().replays, 4 * 4);  // tracing calls run the program too
  // The optimizer counted every compiled step.
  EXPECT_EQ(model->optimizer().iterations(), 16);
}

// A layer that looks at its input on the host (a data-dependent decision, as
// a Python `if` on a tensor would be): the graph cannot express it.
class HostCheck final : public Layer {
 public:
  HostCheck() : Layer("HostCheck", "host_check") {}
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  Tensor call(const Tensor& inputs, bool) override {
    if (!std::isfinite(ops::reduce_max(inputs).item<float>())) throw InvalidArgumentError("non-finite input");
    return inputs;
  }
};

TEST(CompiledTrainingFallback, AStepThatReadsATensorOnTheHostRunsEagerlyWithTheReason) {
  DeviceScope on_cpu("/CPU:0");
  const Images data = images(4 * kBatch);
  std::vector<std::vector<Tensor>> weights;
  for (bool compiled : {false, true}) {
    set_random_seed(5);
    auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
        std::make_shared<Flatten>(), std::make_shared<HostCheck>(), std::make_shared<Dense>(10)});
    model->build({kUnknownDim, 28, 28, 1});
    model->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.05}), logits_loss(), {"accuracy"},
                   {.jit_compile = compiled});
    model->fit(data.x, data.y, {.batch_size = kBatch, .verbose = 0, .shuffle = false});
    if (compiled) {
      const FunctionStatistics statistics = model->train_function()->statistics();
      EXPECT_NE(statistics.eager_reason.find("on the host"), std::string::npos) << statistics.eager_reason;
      EXPECT_EQ(statistics.traces, 1);
      EXPECT_EQ(statistics.replays, 0);
      EXPECT_EQ(statistics.eager_calls, 3);  // every later batch runs the step eagerly
      EXPECT_EQ(model->optimizer().iterations(), 4);
    }
    weights.emplace_back();
    for (const Variable& weight : model->weights()) weights.back().push_back(weight.value());
  }
  // Eagerly, as without jit_compile: the same weights.
  for (size_t index = 0; index < weights[0].size(); ++index) {
    EXPECT_EQ(max_abs(ops::sub(weights[0][index], weights[1][index])), 0.0);
  }
}

TEST(CompiledTrainingDropout, DrawsNewNumbersAtEveryReplayAsEagerDoes) {
  DeviceScope on_cpu("/CPU:0");
  const Images data = images(8 * kBatch);
  std::vector<std::vector<Tensor>> weights;
  for (bool compiled : {false, true}) {
    std::shared_ptr<Sequential> model = make_model(Architecture::kMlp, /*with_dropout=*/true);
    model->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.05}),
                   logits_loss(), {}, {.jit_compile = compiled});
    model->fit(data.x, data.y, {.batch_size = kBatch, .verbose = 0, .shuffle = false});
    if (compiled) EXPECT_EQ(model->train_function()->statistics().eager_reason, "");
    weights.emplace_back();
    for (const Variable& weight : model->weights()) weights.back().push_back(weight.value());
  }
  for (size_t index = 0; index < weights[0].size(); ++index) {
    EXPECT_LE(max_abs(ops::sub(weights[0][index], weights[1][index])), 1e-5 * std::max(1.0, max_abs(weights[0][index])));
  }
}

}  // namespace
}  // namespace accel::keras
