// AdamW and the learning-rate schedules against Keras 2's rules: AdamW steps
// against a double-precision reference of keras.optimizers.AdamW (decay
// var -= lr * wd * var, then Adam with epsilon on the uncorrected sqrt(v)),
// with a constant rate and a schedule; exclude_from_weight_decay by variable
// and by name; CosineDecay / ExponentialDecay / PiecewiseConstantDecay at
// chosen steps against their closed forms; and fit with jit_compile giving
// the weights of eager fit when the rate (and so the decay) follows a
// warmup + cosine schedule.
#include <accel/accel.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>

#include <gtest/gtest.h>

#include "../common/batch_losses.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

namespace accel::keras {
namespace {

constexpr int kSize = 6;
constexpr int kSteps = 8;

std::vector<float> initial_values() {
  std::vector<float> values(kSize);
  for (int i = 0; i < kSize; ++i) values[i] = static_cast<float>(std::cos(0.9 * i + 0.2) * 1.5);
  return values;
}

// A different gradient at every step, some elements negative.
std::vector<float> gradient_at(int step) {
  std::vector<float> gradient(kSize);
  for (int i = 0; i < kSize; ++i) gradient[i] = static_cast<float>(std::sin(0.37 * i + 1.1 * step) * 0.8);
  return gradient;
}

// keras.optimizers.AdamW's update of one variable, in double.
struct AdamWReference {
  double weight_decay, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7;
  std::vector<double> var, m, v;

  AdamWReference(double decay, const std::vector<float>& initial)
      : weight_decay(decay), var(initial.begin(), initial.end()), m(initial.size()), v(initial.size()) {}

  void step(const std::vector<float>& gradient, double lr, int64_t t) {
    const double lr_t = lr * std::sqrt(1 - std::pow(beta_2, t)) / (1 - std::pow(beta_1, t));
    for (size_t i = 0; i < var.size(); ++i) {
      var[i] -= lr * weight_decay * var[i];  // _apply_weight_decay, before the step
      m[i] = beta_1 * m[i] + (1 - beta_1) * gradient[i];
      v[i] = beta_2 * v[i] + (1 - beta_2) * gradient[i] * gradient[i];
      var[i] -= lr_t * m[i] / (std::sqrt(v[i]) + epsilon);
    }
  }
};

Tensor host_vector(const std::vector<float>& values) {
  return Tensor::from_vector<float>(values, Shape{static_cast<int64_t>(values.size())});
}

void expect_steps_match_reference(AdamWOptions options, const LearningRate& rate) {
  DeviceScope on_host("/CPU:0");
  const double weight_decay = options.weight_decay;
  AdamW optimizer(std::move(options));
  Variable variable(host_vector(initial_values()), "dense/kernel");
  AdamWReference reference(weight_decay, initial_values());
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_DOUBLE_EQ(optimizer.learning_rate(), rate.at(step));
    optimizer.apply_gradients({{host_vector(gradient_at(step)), variable}});
    reference.step(gradient_at(step), rate.at(step), step + 1);
    const std::vector<float> actual = variable.value().to_vector<float>();
    for (int i = 0; i < kSize; ++i) {
      ASSERT_NEAR(actual[i], reference.var[i], 2e-6 * std::max(1.0, std::abs(reference.var[i])))
          << "step " << step << " element " << i;
    }
  }
  EXPECT_EQ(optimizer.iterations(), kSteps);
}

TEST(AdamW, KerasDefaults) {
  const AdamWOptions defaults;
  EXPECT_EQ(defaults.learning_rate.at(0), 0.001);
  EXPECT_EQ(defaults.weight_decay, 0.004);
  EXPECT_EQ(defaults.beta_1, 0.9);
  EXPECT_EQ(defaults.beta_2, 0.999);
  EXPECT_EQ(defaults.epsilon, 1e-7);
  const std::shared_ptr<Optimizer> by_name = get_optimizer("AdamW");
  EXPECT_EQ(by_name->name(), "AdamW");
  EXPECT_EQ(by_name->learning_rate(), 0.001);
}

TEST(AdamW, StepsMatchADoubleReferenceOfKerasRules) {
  // A large decay so that a decay applied after the step, or with another
  // rate, would be far outside the tolerance.
  expect_steps_match_reference({.learning_rate = 0.01, .weight_decay = 0.5}, 0.01);
}

TEST(AdamW, TheDecayUsesTheScheduledRateOfEachStep) {
  const CosineDecay schedule(0.002, 5, {.alpha = 0.1, .warmup_target = 0.02, .warmup_steps = 3});
  expect_steps_match_reference({.learning_rate = schedule, .weight_decay = 0.5}, schedule);
}

TEST(AdamW, WithoutWeightDecayItIsAdamBitForBit) {
  DeviceScope on_host("/CPU:0");
  AdamW adamw({.learning_rate = 0.01, .weight_decay = 0.0});
  Adam adam({.learning_rate = 0.01});
  Variable a(host_vector(initial_values()), "a");
  Variable b(host_vector(initial_values()), "b");
  for (int step = 0; step < kSteps; ++step) {
    adamw.apply_gradients({{host_vector(gradient_at(step)), a}});
    adam.apply_gradients({{host_vector(gradient_at(step)), b}});
  }
  EXPECT_EQ(a.value().to_vector<float>(), b.value().to_vector<float>());
  EXPECT_EQ(adamw.variables().size(), 3u);  // iter, m, v
  EXPECT_EQ(adamw.slot(a, "m").name(), "AdamW/a/m:0");
}

// With zero gradients Adam's step is 0 / (0 + epsilon) = 0, so only the
// decay moves a variable: each step multiplies it by (1 - lr * wd).
TEST(AdamW, ExcludedVariablesAreNotDecayed) {
  DeviceScope on_host("/CPU:0");
  const double lr = 0.1, wd = 0.2;
  AdamW optimizer({.learning_rate = lr, .weight_decay = wd});
  Variable kernel(host_vector(initial_values()), "dense/kernel");
  Variable bias(host_vector(initial_values()), "dense/bias");
  Variable gamma(host_vector(initial_values()), "layer_normalization/gamma");
  Variable listed(host_vector(initial_values()), "other/kernel");
  optimizer.exclude_from_weight_decay({listed}, {"bias", "layer_normalization"});
  EXPECT_TRUE(optimizer.uses_weight_decay(kernel));
  EXPECT_FALSE(optimizer.uses_weight_decay(bias));
  EXPECT_FALSE(optimizer.uses_weight_decay(gamma));
  EXPECT_FALSE(optimizer.uses_weight_decay(listed));
  const Tensor zeros = ops::zeros(Shape{kSize}, DType::kFloat32);
  for (int step = 0; step < 3; ++step) {
    optimizer.apply_gradients({{zeros, kernel}, {zeros, bias}, {zeros, gamma}, {zeros, listed}});
  }
  const std::vector<float> initial = initial_values();
  const std::vector<float> decayed = kernel.value().to_vector<float>();
  for (int i = 0; i < kSize; ++i) {
    EXPECT_NEAR(decayed[i], initial[i] * std::pow(1 - lr * wd, 3), 1e-6) << i;
  }
  EXPECT_EQ(bias.value().to_vector<float>(), initial);
  EXPECT_EQ(gamma.value().to_vector<float>(), initial);
  EXPECT_EQ(listed.value().to_vector<float>(), initial);
}

TEST(AdamW, ExclusionsAreSetBeforeTheOptimizerIsBuiltAndArgumentsAreChecked) {
  DeviceScope on_host("/CPU:0");
  AdamW optimizer;
  Variable variable(host_vector(initial_values()), "dense/kernel");
  optimizer.build({variable});
  EXPECT_THROW(optimizer.exclude_from_weight_decay({}, {"bias"}), FailedPreconditionError);
  EXPECT_THROW(AdamW().exclude_from_weight_decay({}, {"bias("}), InvalidArgumentError);
  EXPECT_THROW(AdamW({.weight_decay = -0.1}), InvalidArgumentError);
  EXPECT_THROW(AdamW({.weight_decay = std::nan("")}), InvalidArgumentError);
}

// ---- schedules ---------------------------------------------------------------

double cosine_closed_form(double from, double alpha, double step, double decay_steps) {
  const double fraction = std::min(step, decay_steps) / decay_steps;
  return from * ((1 - alpha) * 0.5 * (1 + std::cos(std::numbers::pi * fraction)) + alpha);
}

TEST(Schedules, CosineDecayWithoutWarmup) {
  const CosineDecay schedule(0.1, 100, {.alpha = 0.2});
  for (const int64_t step : {0, 1, 25, 50, 99, 100, 150}) {
    EXPECT_NEAR(schedule(step), cosine_closed_form(0.1, 0.2, static_cast<double>(step), 100), 1e-15) << step;
  }
  EXPECT_DOUBLE_EQ(schedule(0), 0.1);
  EXPECT_NEAR(schedule(50), 0.1 * (0.8 * 0.5 + 0.2), 1e-15);
  EXPECT_NEAR(schedule(1000), 0.1 * 0.2, 1e-15);  // stays at the floor
  // Keras ignores warmup_steps without a warmup_target.
  const CosineDecay no_target(0.1, 100, {.warmup_steps = 10});
  EXPECT_DOUBLE_EQ(no_target(5), cosine_closed_form(0.1, 0.0, 5, 100));
}

TEST(Schedules, CosineDecayWarmsUpLinearlyThenDecaysFromTheTarget) {
  const CosineDecay schedule(0.0, 100, {.warmup_target = 0.01, .warmup_steps = 20});
  EXPECT_DOUBLE_EQ(schedule(0), 0.0);
  EXPECT_NEAR(schedule(5), 0.01 * 5 / 20, 1e-15);
  EXPECT_NEAR(schedule(19), 0.01 * 19 / 20, 1e-15);
  EXPECT_NEAR(schedule(20), 0.01, 1e-15);  // the warmup's end is the decay's start
  for (const int64_t step : {21, 45, 70, 119, 120, 500}) {
    EXPECT_NEAR(schedule(step), cosine_closed_form(0.01, 0.0, static_cast<double>(step - 20), 100), 1e-15) << step;
  }
  // Warming from a nonzero start.
  const CosineDecay from_start(0.001, 10, {.alpha = 0.5, .warmup_target = 0.003, .warmup_steps = 4});
  EXPECT_NEAR(from_start(2), 0.001 + (0.003 - 0.001) * 2 / 4, 1e-15);
  EXPECT_NEAR(from_start(9), cosine_closed_form(0.003, 0.5, 5, 10), 1e-15);
  EXPECT_NEAR(from_start(100), 0.003 * 0.5, 1e-15);
}

TEST(Schedules, ExponentialDecayContinuousAndStaircase) {
  const ExponentialDecay continuous(0.1, 10, 0.5);
  const ExponentialDecay staircase(0.1, 10, 0.5, {.staircase = true});
  for (const int64_t step : {0, 1, 9, 10, 15, 37}) {
    EXPECT_NEAR(continuous(step), 0.1 * std::pow(0.5, step / 10.0), 1e-15) << step;
    EXPECT_NEAR(staircase(step), 0.1 * std::pow(0.5, std::floor(step / 10.0)), 1e-15) << step;
  }
  EXPECT_DOUBLE_EQ(staircase(19), 0.05);
}

TEST(Schedules, PiecewiseConstantDecayIncludesEachBoundaryInTheIntervalBefore) {
  const PiecewiseConstantDecay schedule({100, 200}, {1.0, 0.5, 0.1});
  EXPECT_EQ(schedule(0), 1.0);
  EXPECT_EQ(schedule(100), 1.0);
  EXPECT_EQ(schedule(101), 0.5);
  EXPECT_EQ(schedule(200), 0.5);
  EXPECT_EQ(schedule(201), 0.1);
  EXPECT_EQ(schedule(100000), 0.1);
}

TEST(Schedules, ArgumentsAreChecked) {
  EXPECT_THROW(CosineDecay(0.1, 0), InvalidArgumentError);
  EXPECT_THROW(CosineDecay(-0.1, 10), InvalidArgumentError);
  EXPECT_THROW(CosineDecay(0.1, 10, {.alpha = 1.5}), InvalidArgumentError);
  EXPECT_THROW(CosineDecay(0.1, 10, {.warmup_target = 0.2, .warmup_steps = -1}), InvalidArgumentError);
  EXPECT_THROW(ExponentialDecay(0.1, 0, 0.5), InvalidArgumentError);
  EXPECT_THROW(ExponentialDecay(0.1, 10, 0.0), InvalidArgumentError);
  EXPECT_THROW(PiecewiseConstantDecay({10}, {1.0}), InvalidArgumentError);
  EXPECT_THROW(PiecewiseConstantDecay({}, {1.0}), InvalidArgumentError);
  EXPECT_THROW(PiecewiseConstantDecay({20, 10}, {1.0, 0.5, 0.1}), InvalidArgumentError);
}

TEST(Schedules, AScheduleIsALearningRateOfTheOptimizer) {
  DeviceScope on_host("/CPU:0");
  SGD optimizer({.learning_rate = PiecewiseConstantDecay({1}, {0.5, 0.25})});
  Variable variable(Tensor::from_vector<float>({1.0f}, Shape{1}), "w");
  const Tensor one = Tensor::from_vector<float>({1.0f}, Shape{1});
  EXPECT_EQ(optimizer.learning_rate(), 0.5);
  for (int step = 0; step < 3; ++step) optimizer.apply_gradients({{one, variable}});
  EXPECT_EQ(optimizer.learning_rate(), 0.25);
  // Steps 0 and 1 at 0.5, step 2 at 0.25.
  EXPECT_FLOAT_EQ(variable.value().to_vector<float>()[0], 1.0f - 0.5f - 0.5f - 0.25f);
}

// ---- compiled steps ------------------------------------------------------------

constexpr int64_t kFitSteps = 30;
constexpr int64_t kBatch = 16;

struct Trained {
  std::vector<double> losses;
  std::vector<Tensor> weights;
  FunctionStatistics statistics;
};

Trained fit_mlp(bool compiled, const Tensor& x, const Tensor& y) {
  DeviceScope on_host("/CPU:0");
  set_random_seed(5);
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Flatten>(), std::make_shared<Dense>(32, DenseOptions{.activation = "relu"}),
      std::make_shared<Dense>(10)});
  model->build({kUnknownDim, 8, 8});
  // The rate warms up from 1e-4 to 3e-3 and decays: a decay whose rate were
  // frozen at the traced step would leave the weights far from eager's.
  auto optimizer = std::make_shared<AdamW>(AdamWOptions{
      .learning_rate = CosineDecay(1e-4, kFitSteps, {.warmup_target = 3e-3, .warmup_steps = 10}),
      .weight_decay = 0.5});
  optimizer->exclude_from_weight_decay({}, {"bias"});
  model->compile(optimizer, std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}),
                 {}, {.jit_compile = compiled});
  auto losses = std::make_shared<accel::testing::BatchLosses>();
  model->fit(x, y, {.batch_size = kBatch, .verbose = 0, .callbacks = {losses}, .shuffle = false});
  Trained trained;
  trained.losses = losses->losses;
  for (const Variable& weight : model->weights()) trained.weights.push_back(weight.value());
  if (compiled && model->train_function() != nullptr) trained.statistics = model->train_function()->statistics();
  EXPECT_EQ(optimizer->iterations(), kFitSteps);
  return trained;
}

double max_abs(const Tensor& tensor) { return ops::reduce_max(ops::abs(tensor)).item<float>(); }

TEST(AdamW, CompiledFitMatchesEagerWithAScheduledDecay) {
  DeviceScope on_host("/CPU:0");
  const Tensor x = ops::random_uniform(Shape{kFitSteps * kBatch, 8, 8}, /*seed=*/11);
  const Tensor y = ops::cast(
      ops::mul(ops::random_uniform(Shape{kFitSteps * kBatch}, /*seed=*/12), ops::fill(Shape{}, 9.99)), DType::kInt32);
  const Trained eager = fit_mlp(false, x, y);
  const Trained compiled = fit_mlp(true, x, y);

  EXPECT_EQ(compiled.statistics.eager_reason, "");
  EXPECT_EQ(compiled.statistics.traces, 1);
  EXPECT_EQ(compiled.statistics.replays, kFitSteps);  // the tracing call ran the program too
  ASSERT_EQ(compiled.losses.size(), eager.losses.size());
  for (size_t step = 0; step < eager.losses.size(); ++step) {
    EXPECT_NEAR(compiled.losses[step], eager.losses[step], 1e-5 * std::max(1.0, std::abs(eager.losses[step])))
        << "step " << step;
  }
  ASSERT_EQ(compiled.weights.size(), eager.weights.size());
  for (size_t index = 0; index < eager.weights.size(); ++index) {
    const double scale = std::max(1.0, max_abs(eager.weights[index]));
    EXPECT_LE(max_abs(ops::sub(eager.weights[index], compiled.weights[index])), 1e-4 * scale) << "weight " << index;
  }
}

}  // namespace
}  // namespace accel::keras
