// The zoo under MirroredStrategy on two logical CPUs. The ViT and the
// Transformer encoder hold no batch statistics, so data parallelism must not
// change them: 20 steps of SGD (lr 0.002) on a global batch of 16 split over
// two replicas end within 1e-5 relative of one replica on the whole batch, as
// in TensorFlow.
//  - Not Adam: attention's key bias has an identically zero gradient (softmax
//    is blind to a shift shared by all keys), so its "gradient" is rounding
//    noise that differs with the summation order, and Adam's m / sqrt(v)
//    scales that noise up to full-size steps.
//  - A small rate: the worst weight is a bias whose gradient is a sum over
//    the batch's rows with much cancellation, so its rounding differs most
//    with the order; at lr 0.01 the Transformer's last LayerNormalization
//    beta ends 1.7e-5 relative (1e-7 absolute) apart.
// The ResNets train too, but their BatchNormalization normalizes each
// replica's half of the batch (as tf.keras's does), so they are only checked
// to train with the copies of every trainable weight kept equal.
#include "model_zoo.hpp"

#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/optimizers/sgd.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "../distribute/strategy_test_support.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

namespace accel::model_zoo {
namespace {

using accel::testing::in_fresh_process;
using namespace accel::distribute::testing;

constexpr int64_t kSteps = 20;
constexpr int64_t kGlobalBatch = 16;
// Below this a weight holds only rounding noise (see expect_two_replicas_match_one).
constexpr double kNoiseLevel = 1e-6;

using Builder = std::function<std::shared_ptr<keras::Model>()>;

struct Data {
  Tensor inputs;
  Tensor labels;
};

Data images(int64_t side) {
  DeviceScope on_host("/CPU:0");
  return {ops::random_uniform(Shape{kSteps * kGlobalBatch, side, side, side == 28 ? 1 : 3}, 21),
          ops::cast(ops::random_uniform(Shape{kSteps * kGlobalBatch}, 22, 0.0, 9.99), DType::kInt32)};
}

Data tokens() {
  DeviceScope on_host("/CPU:0");
  return {ops::cast(ops::random_uniform(Shape{kSteps * kGlobalBatch, 49}, 23, 0.0, 15.99), DType::kInt32),
          ops::cast(ops::random_uniform(Shape{kSteps * kGlobalBatch}, 24, 0.0, 9.99), DType::kInt32)};
}

struct Trained {
  WeightValues weights;
  std::vector<double> losses;
  std::shared_ptr<keras::Model> model;
};

// With `strategy` null: one replica on /CPU:0.
Trained train(const Builder& build, const Data& data, distribute::Strategy* strategy) {
  keras::clear_session();
  keras::set_random_seed(99);
  std::shared_ptr<keras::Model> model;
  const auto build_and_compile = [&] {
    model = build();
    model->compile(std::make_shared<keras::SGD>(keras::SGDOptions{.learning_rate = 0.002}),
                   "sparse_categorical_crossentropy");
  };
  if (strategy != nullptr) {
    auto scope = strategy->scope();
    build_and_compile();
  } else {
    build_and_compile();
  }
  Trained trained;
  const keras::History history =
      model->fit(data.inputs, data.labels, {.batch_size = kGlobalBatch, .verbose = 0, .shuffle = false});
  trained.losses = history.history.at("loss");
  trained.weights = weight_values(*model);
  trained.model = model;
  return trained;
}

void expect_two_replicas_match_one(const Builder& build, const Data& data) {
  DeviceScope device("/CPU:0");
  const Trained single = train(build, data, nullptr);
  distribute::MirroredStrategy mirrored(cpu_devices(2));
  const Trained replicated = train(build, data, &mirrored);
  ASSERT_EQ(replicated.weights.size(), single.weights.size());
  const std::vector<Variable> weights = single.model->weights();
  double worst = 0;
  std::string worst_weight;
  for (size_t index = 0; index < single.weights.size(); ++index) {
    double scale = 0, difference = 0;
    for (size_t i = 0; i < single.weights[index].size(); ++i) {
      scale = std::max(scale, std::abs(static_cast<double>(single.weights[index][i])));
      difference = std::max(difference, std::abs(static_cast<double>(replicated.weights[index][i]) -
                                                 single.weights[index][i]));
    }
    // Attention's key bias starts at zero and has an exactly zero gradient:
    // both runs leave it at rounding-noise size, compared absolutely.
    if (scale < kNoiseLevel) {
      EXPECT_LT(difference, kNoiseLevel) << weights[index].name();
      continue;
    }
    if (difference / scale > worst) worst = difference / scale, worst_weight = weights[index].name();
  }
  std::fprintf(stderr, "worst relative weight difference after %ld steps: %.3g in %s (loss %.6f vs %.6f)\n",
               static_cast<long>(kSteps), worst, worst_weight.c_str(), replicated.losses.back(), single.losses.back());
  EXPECT_LE(worst, 1e-5) << worst_weight;
  EXPECT_NEAR(replicated.losses.back(), single.losses.back(), 1e-5 * std::abs(single.losses.back()));
}

TEST(ZooMirroredTest, VisionTransformerOnTwoReplicasMatchesOneReplica) {
  in_fresh_process([] {
    split_cpu(2);
    expect_two_replicas_match_one([] { return vit_fashion_mnist(); }, images(28));
  });
}

TEST(ZooMirroredTest, TransformerEncoderOnTwoReplicasMatchesOneReplica) {
  in_fresh_process([] {
    split_cpu(2);
    expect_two_replicas_match_one([] { return transformer_encoder_classifier(); }, tokens());
  });
}

TEST(ZooMirroredTest, ResNetsTrainOnTwoReplicasWithEqualCopies) {
  in_fresh_process([] {
    split_cpu(2);
    const std::vector<std::pair<Builder, int64_t>> models = {
        {[] { return resnet_small_28x28(); }, 28}, {[] { return resnet18({{32, 32, 3}, 10}); }, 32}};
    for (const auto& [build, side] : models) {
      distribute::MirroredStrategy mirrored(cpu_devices(2));
      const Trained trained = train(build, images(side), &mirrored);
      SCOPED_TRACE(trained.model->name());
      std::fprintf(stderr, "%s: loss %.5f after %zu steps\n", trained.model->name().c_str(), trained.losses.back(),
                   static_cast<size_t>(kSteps));
      for (const double loss : trained.losses) EXPECT_TRUE(std::isfinite(loss));
      // Trainable weights only: the moving statistics are sync-on-read, one per replica.
      for (const Variable& weight : trained.model->trainable_weights()) {
        const std::vector<Tensor> copies = distribute::mirrored_copies(weight);
        ASSERT_EQ(copies.size(), 2u) << weight.name();
        EXPECT_EQ(copies[0].to_vector<float>(), copies[1].to_vector<float>()) << weight.name();
      }
    }
  });
}

}  // namespace
}  // namespace accel::model_zoo
