#include "strategy_test_support.hpp"

#include <accel/accel.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/optimizers.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace accel::distribute::testing {

void split_cpu(int logical_devices) {
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0),
                                           std::vector<config::LogicalDeviceConfiguration>(logical_devices));
}

std::vector<std::string> cpu_devices(int count) {
  std::vector<std::string> names;
  for (int index = 0; index < count; ++index) names.push_back("/CPU:" + std::to_string(index));
  return names;
}

std::shared_ptr<keras::Sequential> make_tutorial_cnn() {
  auto model = std::make_shared<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
      std::make_shared<keras::Conv2D>(32, std::array<int32_t, 2>{3, 3}, keras::Conv2DOptions{.activation = "relu"}),
      std::make_shared<keras::MaxPooling2D>(keras::Pooling2DOptions{.pool_size = {2, 2}}),
      std::make_shared<keras::Flatten>(),
      std::make_shared<keras::Dense>(10)});
  model->build({keras::kUnknownDim, kImageSize, kImageSize, 1});
  return model;
}

std::shared_ptr<keras::Optimizer> make_optimizer(OptimizerKind kind) {
  if (kind == OptimizerKind::kSgd) {
    return std::make_shared<keras::SGD>(keras::SGDOptions{.learning_rate = 0.05, .momentum = 0.9});
  }
  return std::make_shared<keras::Adam>(keras::AdamOptions{.learning_rate = 0.001});
}

SyntheticImages synthetic_images(int64_t samples) {
  DeviceScope on_host("/CPU:0");
  Tensor images = ops::random_uniform(Shape{samples, kImageSize, kImageSize, 1}, /*seed=*/11);
  std::vector<float> pixels = images.to_vector<float>();
  std::vector<int32_t> labels;
  for (int64_t sample = 0; sample < samples; ++sample) labels.push_back(static_cast<int32_t>(sample % 10));
  for (int64_t sample = 0; sample < samples; ++sample) {
    pixels[static_cast<size_t>(sample * kImageSize * kImageSize + labels[static_cast<size_t>(sample)] % kImageSize)] += 2.0f;
  }
  return {Tensor::from_vector<float>(pixels, images.shape()), Tensor::from_vector<int32_t>(labels, Shape{samples})};
}

data::Dataset synthetic_image_dataset(int64_t samples) {
  SyntheticImages data = synthetic_images(samples);
  return data::Dataset::from_tensor_slices(data::Element{data.images, data.labels});
}

WeightValues weight_values(const keras::Model& model) {
  WeightValues values;
  for (const Variable& weight : model.weights()) values.push_back(weight.replica_value(0).to_vector<float>());
  return values;
}

double worst_relative_difference(const WeightValues& replicated, const WeightValues& single) {
  double worst = 0;
  for (size_t weight = 0; weight < single.size(); ++weight) {
    double scale = 0;
    double difference = 0;
    for (size_t i = 0; i < single[weight].size(); ++i) {
      scale = std::max(scale, std::abs(static_cast<double>(single[weight][i])));
      difference = std::max(difference, std::abs(static_cast<double>(replicated[weight][i]) - single[weight][i]));
    }
    worst = std::max(worst, scale == 0 ? difference : difference / scale);
  }
  return worst;
}

}  // namespace accel::distribute::testing
