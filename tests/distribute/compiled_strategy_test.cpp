// Compiled steps under MirroredStrategy (compile's jit_compile inside the
// strategy's scope): on two logical CPUs, the tutorial CNN and an MLP trained
// for 50 steps of SGD with momentum and of Adam, compiled vs eager from the
// same weights: losses within 1e-5 relative at every step, final weights
// within 1e-4 of max|w|; each replica traces once and replays after. A
// weight the loss does not reach is skipped by the optimizer in both modes,
// as Keras skips a variable without a gradient.
#include <accel/accel.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>

#include <gtest/gtest.h>

#include "../common/batch_losses.hpp"
#include "../common/fresh_process.hpp"
#include "strategy_test_support.hpp"

#include <algorithm>
#include <cmath>

namespace accel::distribute {
namespace {

using accel::testing::BatchLosses;
using accel::testing::in_fresh_process;
using namespace accel::distribute::testing;

constexpr int64_t kSteps = 50;
constexpr int64_t kGlobalBatch = 16;

struct Trained {
  std::vector<double> losses;
  WeightValues weights;
};

Trained train(bool cnn, OptimizerKind optimizer, bool compiled) {
  MirroredStrategy strategy(cpu_devices(2));
  std::shared_ptr<keras::Sequential> model;
  {
    keras::set_random_seed(77);
    auto scope = strategy.scope();
    if (cnn) {
      model = make_tutorial_cnn();
    } else {
      model = std::make_shared<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
          std::make_shared<keras::Flatten>(), std::make_shared<keras::Dense>(32, keras::DenseOptions{.activation = "relu"}),
          std::make_shared<keras::Dense>(10)});
      model->build({keras::kUnknownDim, kImageSize, kImageSize, 1});
    }
    model->compile(make_optimizer(optimizer),
                   std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                   {"accuracy"}, {.jit_compile = compiled});
  }
  const SyntheticImages data = synthetic_images(kSteps * kGlobalBatch);
  auto losses = std::make_shared<BatchLosses>();
  model->fit(data.images, data.labels,
             {.batch_size = kGlobalBatch, .verbose = 0, .callbacks = {losses}, .seed = 5});
  if (compiled) {
    for (int replica = 0; replica < 2; ++replica) {
      const Function* function = model->replica_train_function(replica);
      EXPECT_NE(function, nullptr);
      if (function == nullptr) continue;
      const FunctionStatistics statistics = function->statistics();
      EXPECT_EQ(statistics.eager_reason, "") << "replica " << replica;
      EXPECT_EQ(statistics.traces, 1) << "replica " << replica;
      EXPECT_EQ(statistics.replays, kSteps) << "replica " << replica;  // the tracing call ran the program too
      EXPECT_GT(statistics.fusions, 0) << function->graph_text();
    }
  }
  return {losses->losses, weight_values(*model)};
}

// Scales its input by a trainable vector and owns a second one it never
// uses: the loss does not reach that one, so it has no gradient.
class ScaleWithSpareWeight final : public keras::Layer {
 public:
  ScaleWithSpareWeight() : Layer("ScaleWithSpareWeight", "") {}
  keras::LayerShape compute_output_shape(const keras::LayerShape& input_shape) const override { return input_shape; }

 protected:
  void build_weights(const keras::LayerShape& input_shape) override {
    scale_ = add_weight("scale", Shape{input_shape.back()}, keras::Ones());
    spare_ = add_weight("spare", Shape{input_shape.back()}, keras::Ones());
  }
  Tensor call(const Tensor& inputs, bool) override { return ops::mul(inputs, scale_.value()); }

 private:
  Variable scale_;
  Variable spare_;
};

Trained train_with_spare_weight(bool compiled) {
  MirroredStrategy strategy(cpu_devices(2));
  std::shared_ptr<keras::Sequential> model;
  {
    keras::set_random_seed(77);
    auto scope = strategy.scope();
    model = std::make_shared<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
        std::make_shared<keras::Flatten>(), std::make_shared<keras::Dense>(16), std::make_shared<ScaleWithSpareWeight>(),
        std::make_shared<keras::Dense>(10)});
    model->build({keras::kUnknownDim, kImageSize, kImageSize, 1});
    // AdamW decays every weight it updates, even with a zero gradient: a
    // weight given zeros instead of no gradient would move.
    model->compile(std::make_shared<keras::AdamW>(keras::AdamWOptions{.weight_decay = 0.1}),
                   std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                   {}, {.jit_compile = compiled});
  }
  const SyntheticImages data = synthetic_images(10 * kGlobalBatch);
  auto losses = std::make_shared<BatchLosses>();
  model->fit(data.images, data.labels, {.batch_size = kGlobalBatch, .verbose = 0, .callbacks = {losses}, .seed = 5});
  return {losses->losses, weight_values(*model)};
}

TEST(CompiledStrategyTest, AWeightTheLossDoesNotReachIsSkippedAsInEager) {
  in_fresh_process([] {
    split_cpu(2);
    const Trained eager = train_with_spare_weight(false);
    const Trained compiled = train_with_spare_weight(true);
    ASSERT_EQ(eager.weights.size(), compiled.weights.size());
    // The weights in order: Dense kernel and bias, scale, spare, Dense kernel and bias.
    const std::vector<float>& spare = compiled.weights[3];
    for (float value : spare) ASSERT_EQ(value, 1.0f) << "the optimizer updated a weight without a gradient";
    EXPECT_EQ(eager.weights[3], spare);
    EXPECT_NE(compiled.weights[2], spare);  // the scale next to it did train
    for (size_t step = 0; step < eager.losses.size(); ++step) {
      EXPECT_NEAR(compiled.losses[step], eager.losses[step], 1e-5 * std::max(1.0, std::abs(eager.losses[step])));
    }
  });
}

void expect_compiled_matches_eager(bool cnn, OptimizerKind optimizer) {
  const Trained eager = train(cnn, optimizer, false);
  const Trained compiled = train(cnn, optimizer, true);
  ASSERT_EQ(eager.losses.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(compiled.losses.size(), eager.losses.size());
  for (size_t step = 0; step < eager.losses.size(); ++step) {
    ASSERT_NEAR(compiled.losses[step], eager.losses[step], 1e-5 * std::max(1.0, std::abs(eager.losses[step])))
        << "step " << step;
  }
  ASSERT_EQ(compiled.weights.size(), eager.weights.size());
  for (size_t index = 0; index < eager.weights.size(); ++index) {
    double largest = 1.0, difference = 0.0;
    for (size_t i = 0; i < eager.weights[index].size(); ++i) {
      largest = std::max(largest, static_cast<double>(std::abs(eager.weights[index][i])));
      difference = std::max(difference, static_cast<double>(std::abs(eager.weights[index][i] - compiled.weights[index][i])));
    }
    EXPECT_LE(difference, 1e-4 * largest) << "weight " << index;
  }
}

TEST(CompiledStrategyTest, CnnWithSgdMomentumOnTwoReplicasMatchesEager) {
  in_fresh_process([] {
    split_cpu(2);
    expect_compiled_matches_eager(true, OptimizerKind::kSgd);
  });
}

TEST(CompiledStrategyTest, CnnWithAdamOnTwoReplicasMatchesEager) {
  in_fresh_process([] {
    split_cpu(2);
    expect_compiled_matches_eager(true, OptimizerKind::kAdam);
  });
}

TEST(CompiledStrategyTest, MlpWithSgdMomentumAndAdamOnTwoReplicasMatchEager) {
  in_fresh_process([] {
    split_cpu(2);
    expect_compiled_matches_eager(false, OptimizerKind::kSgd);
    expect_compiled_matches_eager(false, OptimizerKind::kAdam);
  });
}

}  // namespace
}  // namespace accel::distribute
