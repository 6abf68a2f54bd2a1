// The model zoo as Keras 3 .keras files: the small ResNet and ResNet-18
// (ZeroPadding2D, BatchNormalization, residual Adds), the ViT and the
// Transformer encoder (Embedding, MultiHeadAttention, LayerNormalization,
// PositionEmbedding) saved by
// accel read back bitwise, and, where the TensorFlow environment exists
// (bench/.venv-tensorflow), keras.models.load_model reads them and computes
// accel's outputs.
#include <accel/keras/backend.hpp>
#include <accel/placement.hpp>
#include <accel/keras/saving/keras_file.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "../common/tensorflow_keras_check.hpp"
#include "model_zoo.hpp"

namespace accel::model_zoo {
namespace {

namespace fs = std::filesystem;

std::vector<std::vector<float>> weight_values(const keras::Model& model) {
  std::vector<std::vector<float>> values;
  for (const Variable& weight : model.weights()) values.push_back(weight.value().to_vector<float>());
  return values;
}

class ZooKerasFilesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooKerasFilesTest, SavedAndLoadedBackBitwise) {
  // float32 throughout, as TensorFlow on the CPU (the emulated TPU's MXU rounds to bfloat16).
  DeviceScope on_cpu("/CPU:0");
  keras::clear_session();
  keras::set_random_seed(5);
  const fs::path folder = fs::temp_directory_path() / ("accel_zoo_keras_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::shared_ptr<keras::Model> model =
      GetParam() == "resnet18" ? resnet18({{32, 32, 3}, 10}) : build_model(GetParam());
  const std::string path = (folder / (GetParam() + ".keras")).string();
  keras::saving::save_model(*model, path);
  keras::clear_session();
  const std::unique_ptr<keras::Model> copy = keras::saving::load_model(path);
  EXPECT_EQ(copy->layers().size(), model->layers().size());
  EXPECT_EQ(weight_values(*copy), weight_values(*model));
  const keras::LayerShape& input = model->inputs().front().shape();
  std::vector<int64_t> dims{2};
  dims.insert(dims.end(), input.begin() + 1, input.end());
  std::vector<float> values(static_cast<size_t>(Shape(dims).element_count()));
  for (size_t index = 0; index < values.size(); ++index) values[index] = static_cast<float>(index % 17) / 17.0f;
  Tensor x = Tensor::from_vector<float>(values, Shape(dims));
  if (model->inputs().front().dtype() == DType::kInt32) {  // token ids
    std::vector<int32_t> ids(values.size());
    for (size_t index = 0; index < ids.size(); ++index) ids[index] = static_cast<int32_t>(index % 13);  // below the smallest vocabulary
    x = Tensor::from_vector<int32_t>(ids, Shape(dims));
  }
  const Tensor y = (*model)(x, false);
  EXPECT_EQ((*copy)(x, false).to_vector<float>(), y.to_vector<float>());

  // Twenty-odd convolutions in TensorFlow's (oneDNN) order of summation
  // against accel's: agreement to float32 round-off relative to the outputs.
  float largest = 0;
  for (float value : y.to_vector<float>()) largest = std::max(largest, std::abs(value));
  if (const auto verdict = accel::testing::check_keras_file_with_tensorflow(path, x, y, 1e-5 * (1.0 + largest))) {
    EXPECT_EQ(verdict->status, 0) << "largest output " << largest << "\n" << verdict->output;
  }
  fs::remove_all(folder);
}

// The transformers hold accel's own PositionEmbedding, which TensorFlow reads
// as the custom layer tools/keras_goldens/zoo_models.py registers.
INSTANTIATE_TEST_SUITE_P(Models, ZooKerasFilesTest,
                         ::testing::Values("resnet_small_28x28", "resnet18", "vit_fashion_mnist",
                                           "transformer_encoder_classifier", "decoder_language_model"));

}  // namespace
}  // namespace accel::model_zoo
