// The tutorial CNN the distribution benchmarks train (Conv2D 32 3x3 relu,
// MaxPooling2D 2, Flatten, Dense 10 softmax on 28x28x1), built and compiled
// inside a strategy's scope, and uniform random images for it.
#pragma once

#include <accel/accel.hpp>
#include <accel/distribute/strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/sequential.hpp>

#include <array>
#include <memory>
#include <string>

namespace accel::bench {

inline std::shared_ptr<keras::Sequential> tutorial_cnn(distribute::Strategy& strategy, const std::string& optimizer) {
  keras::set_random_seed(1);
  auto scope = strategy.scope();
  auto model = std::make_shared<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
      std::make_shared<keras::Conv2D>(32, std::array<int32_t, 2>{3, 3}, keras::Conv2DOptions{.activation = "relu"}),
      std::make_shared<keras::MaxPooling2D>(keras::Pooling2DOptions{.pool_size = {2, 2}}),
      std::make_shared<keras::Flatten>(),
      std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
  model->build({keras::kUnknownDim, 28, 28, 1});
  model->compile(optimizer, "sparse_categorical_crossentropy", {"accuracy"});
  return model;
}

struct RandomImages {
  Tensor images;  // [samples, 28, 28, 1] in [0, 1)
  Tensor labels;  // [samples] int32 in 0..9
};

inline RandomImages random_images(int64_t samples) {
  DeviceScope on_host("/CPU:0");
  return {ops::random_uniform(Shape{samples, 28, 28, 1}, /*seed=*/7),
          ops::cast(ops::mul(ops::random_uniform(Shape{samples}, /*seed=*/8), ops::fill(Shape{}, 9.99)), DType::kInt32)};
}

}  // namespace accel::bench
