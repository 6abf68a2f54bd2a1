// The zoo's small models under Keras's mixed_bfloat16 policy (docs/keras.md,
// "Mixed precision"): built, compiled and trained for a few steps on the CPU,
// every weight stays float32, the outputs are bfloat16, and the first step's
// loss is the float32 model's to bfloat16 precision (the same initial
// weights: initializers draw in float32 whatever the policy).
#include "model_zoo.hpp"

#include <accel/keras/backend.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/keras/optimizers/sgd.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace accel::model_zoo {
namespace {

constexpr int64_t kBatch = 8;

struct Batch {
  Tensor inputs;
  Tensor labels;
};

Batch batch_for(const std::string& name) {
  DeviceScope on_host("/CPU:0");
  const Tensor labels = ops::cast(ops::random_uniform(Shape{kBatch}, 32, 0.0, 9.99), DType::kInt32);
  if (name == "transformer_encoder_classifier") {
    return {ops::cast(ops::random_uniform(Shape{kBatch, 49}, 31, 0.0, 15.99), DType::kInt32), labels};
  }
  return {ops::random_uniform(Shape{kBatch, 28, 28, 1}, 31), labels};
}

struct Trained {
  std::vector<double> losses;
  DType output_dtype = DType::kFloat32;
  bool float32_weights = true;
};

Trained train(const std::string& name, const std::string& policy) {
  keras::clear_session();
  keras::set_random_seed(17);
  const keras::mixed_precision::GlobalPolicyScope scope{keras::DTypePolicy(policy)};
  DeviceScope on_cpu("/CPU:0");
  std::shared_ptr<keras::Model> model = build_model(name);
  model->compile(std::make_shared<keras::SGD>(keras::SGDOptions{.learning_rate = 0.01}),
                 "sparse_categorical_crossentropy", {}, keras::CompileOptions{.jit_compile = true});
  const Batch batch = batch_for(name);
  Trained trained;
  for (int step = 0; step < 3; ++step) trained.losses.push_back(model->train_step(batch.inputs, batch.labels).at("loss"));
  trained.output_dtype = (*model)(batch.inputs, false).dtype();
  for (const Variable& weight : model->weights()) trained.float32_weights &= weight.dtype() == DType::kFloat32;
  return trained;
}

class ZooMixedPrecisionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooMixedPrecisionTest, TrainsInBfloat16OnFloat32Weights) {
  const Trained mixed = train(GetParam(), "mixed_bfloat16");
  const Trained float32 = train(GetParam(), "float32");
  EXPECT_TRUE(mixed.float32_weights);
  EXPECT_EQ(mixed.output_dtype, DType::kBFloat16);
  EXPECT_EQ(float32.output_dtype, DType::kFloat32);
  for (const double loss : mixed.losses) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(mixed.losses[0], float32.losses[0], 2e-2 * std::abs(float32.losses[0]));
  EXPECT_NE(mixed.losses[0], float32.losses[0]);
}

INSTANTIATE_TEST_SUITE_P(Models, ZooMixedPrecisionTest,
                         ::testing::Values("resnet_small_28x28", "vit_fashion_mnist", "transformer_encoder_classifier"));

}  // namespace
}  // namespace accel::model_zoo
