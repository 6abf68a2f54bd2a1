// The tutorial MLP built against an installed accel with accel::accel alone:
// Flatten -> Dense(128, relu) -> Dense(10), Adam, sparse categorical
// cross-entropy from logits, trained a few epochs on synthetic 28x28 images
// whose labels a fixed random linear map decides. It reaches every library
// accel::accel stands for: the runtime (ops), data (a Dataset pipeline),
// distribute (a OneDeviceStrategy scope), keras, autodiff (its gradients) and
// graph (jit_compile). Exit 0 when the loss fell by a third, else 1.
#include <accel/accel.hpp>
#include <accel/data/dataset.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers/adam.hpp>
#include <accel/keras/sequential.hpp>

#include <cstdio>
#include <exception>
#include <memory>

namespace keras = accel::keras;

namespace {

constexpr int64_t kSamples = 1024;
constexpr int64_t kClasses = 10;

int train() {
  accel::DeviceScope cpu("/CPU:0");  // the installed TPU emulator would otherwise be the default device
  keras::set_random_seed(7);
  // Images in [0, 1); the label of an image is the largest of 10 fixed linear scores.
  const accel::Tensor flat = accel::ops::random_uniform(accel::Shape{kSamples, 28 * 28}, /*seed=*/1);
  const accel::Tensor teacher = accel::ops::random_uniform(accel::Shape{28 * 28, kClasses}, /*seed=*/2, -1.0, 1.0);
  const accel::Tensor labels =
      accel::ops::cast(accel::ops::argmax(accel::ops::matmul(flat, teacher), -1), accel::DType::kInt32);
  const accel::Tensor images = flat.reshape(accel::Shape{kSamples, 28, 28});
  const auto dataset = accel::data::Dataset::from_tensor_slices({images, labels}).batch(64);

  accel::distribute::OneDeviceStrategy strategy("/CPU:0");
  std::unique_ptr<keras::Sequential> model;
  {
    auto scope = strategy.scope();
    model = std::make_unique<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
        std::make_shared<keras::Flatten>(),
        std::make_shared<keras::Dense>(128, keras::DenseOptions{.activation = "relu"}),
        std::make_shared<keras::Dense>(kClasses)});
    model->build({keras::kUnknownDim, 28, 28});
    model->compile(std::make_shared<keras::Adam>(keras::AdamOptions{.learning_rate = 0.001}),
                   std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                   {"accuracy"}, {.jit_compile = true});
  }
  const double before = model->evaluate(dataset, {.verbose = 0}).at("loss");
  const keras::History history = model->fit(dataset, {.epochs = 4, .verbose = 0});
  const double after = model->evaluate(dataset, {.verbose = 0}).at("loss");
  std::printf("loss before training %.4f, after %zu epochs %.4f (epoch losses:", before,
              history.history.at("loss").size(), after);
  for (double loss : history.history.at("loss")) std::printf(" %.4f", loss);
  std::printf(")\n");
  if (!(after < before * 2.0 / 3.0)) {
    std::printf("FAILED: the loss did not fall by a third\n");
    return 1;
  }
  std::printf("the loss fell\n");
  return 0;
}

}  // namespace

int main() {
  try {
    return train();
  } catch (const std::exception& error) {
    std::printf("FAILED: %s\n", error.what());
    return 1;
  }
}
