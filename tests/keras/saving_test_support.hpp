// Shared helpers of the callbacks_* and saving_* tests: a fresh temporary
// folder per test, a small built classifier, weight access, and the tensors
// of golden safetensors files.
#pragma once

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/saving/safetensors.hpp>
#include <accel/keras/sequential.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace accel::keras::testing {

// A folder under the system temp dir, removed when the test ends.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("accel_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TemporaryFolder() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The tensor `name` of a golden file's contents; NotFoundError when it has none.
inline Tensor tensor_named(const saving::SafetensorsContents& contents, const std::string& name) {
  const saving::StoredTensor* stored = contents.find(name);
  if (stored == nullptr) throw NotFoundError("golden tensor '" + name + "' missing");
  return Tensor::from_host(stored->bytes.data(), stored->shape, stored->dtype);
}

inline std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

constexpr int64_t kToySamples = 48, kToyFeatures = 4, kToyClasses = 3;

// Fixed features and labels (no randomness).
struct ToyData {
  Tensor x, y;
};
inline ToyData toy_data() {
  std::vector<float> x(kToySamples * kToyFeatures);
  std::vector<int32_t> y(kToySamples);
  for (int64_t i = 0; i < kToySamples; ++i) {
    for (int64_t f = 0; f < kToyFeatures; ++f) x[i * kToyFeatures + f] = static_cast<float>(std::sin(1.7 * i + 2.3 * f));
    y[i] = static_cast<int32_t>(i % kToyClasses);
  }
  return {Tensor::from_vector<float>(x, Shape{kToySamples, kToyFeatures}),
          Tensor::from_vector<int32_t>(y, Shape{kToySamples})};
}

// Dense(8, relu) -> Dense(3, softmax), built, with the layer names "dense" and
// "dense_1" (the name counters are reset first) and fixed initial weights.
inline std::unique_ptr<Sequential> toy_classifier(const std::string& optimizer = "adam") {
  clear_session();
  set_random_seed(7);
  auto model = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(8, DenseOptions{.activation = "relu"}),
      std::make_shared<Dense>(kToyClasses, DenseOptions{.activation = "softmax"})});
  model->build({kUnknownDim, kToyFeatures});
  model->compile(optimizer, "sparse_categorical_crossentropy", {"accuracy"});
  return model;
}

// Every weight's float values, in order.
inline std::vector<std::vector<float>> weight_values(const Model& model) {
  std::vector<std::vector<float>> values;
  for (const Variable& weight : model.weights()) values.push_back(weight.value().to_vector<float>());
  return values;
}

// Sets every element of every weight to `value` (to tell epochs apart).
inline void fill_weights(Model& model, float value) {
  for (Variable weight : model.weights()) {
    weight.assign(Tensor::from_vector<float>(std::vector<float>(weight.shape().element_count(), value), weight.shape(),
                                             weight.device()));
  }
}

}  // namespace accel::keras::testing
