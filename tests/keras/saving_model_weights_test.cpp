// Model::save_weights / load_weights and training checkpoints with the
// optimizer's state: Keras names, round trips, and mismatch reports.
#include <accel/error.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <gtest/gtest.h>

#include "saving_test_support.hpp"

namespace accel::keras {
namespace {

using testing::TemporaryFolder;
using testing::toy_classifier;
using testing::toy_data;
using testing::weight_values;

std::vector<std::string> stored_names(const std::string& path) {
  std::vector<std::string> names;
  for (const auto& tensor : saving::read_safetensors_file(path).tensors) names.push_back(tensor.name);
  return names;
}

TEST(SaveWeights, StoresEachWeightUnderItsKerasName) {
  TemporaryFolder folder;
  auto model = toy_classifier();
  model->save_weights(folder.file("w.safetensors"));
  EXPECT_EQ(stored_names(folder.file("w.safetensors")),
            (std::vector<std::string>{"dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"}));
  const auto contents = saving::read_safetensors_file(folder.file("w.safetensors"));
  EXPECT_EQ(contents.find("dense/kernel:0")->shape, (Shape{4, 8}));
  EXPECT_EQ(contents.find("dense/kernel:0")->dtype, DType::kFloat32);
}

TEST(SaveWeights, LoadRestoresTheValuesIntoAnotherModel) {
  TemporaryFolder folder;
  auto trained = toy_classifier();
  const auto data = toy_data();
  trained->fit(data.x, data.y, {.epochs = 2, .verbose = 0});
  trained->save_weights(folder.file("w.safetensors"));
  auto fresh = toy_classifier();
  ASSERT_NE(weight_values(*fresh), weight_values(*trained));
  fresh->load_weights(folder.file("w.safetensors"));
  EXPECT_EQ(weight_values(*fresh), weight_values(*trained));
}

TEST(SaveWeights, UnbuiltModelIsAnError) {
  TemporaryFolder folder;
  Sequential model({std::make_shared<Dense>(2)});
  EXPECT_THROW(model.save_weights(folder.file("w.safetensors")), FailedPreconditionError);
}

TEST(LoadWeights, NamesEveryMissingExtraAndMisShapedTensorInOneError) {
  TemporaryFolder folder;
  const std::string path = folder.file("w.safetensors");
  saving::SafetensorsContents contents;
  contents.tensors = {
      {"dense/kernel:0", DType::kFloat32, Shape{4, 9}, std::vector<uint8_t>(4 * 9 * 4)},  // mis-shaped
      {"dense/bias:0", DType::kFloat32, Shape{8}, std::vector<uint8_t>(8 * 4)},           // fine
      {"dense_7/kernel:0", DType::kFloat32, Shape{1}, std::vector<uint8_t>(4)},           // extra
  };  // dense_1/kernel:0 and dense_1/bias:0 missing
  saving::write_safetensors_file(path, contents);
  auto model = toy_classifier();
  const auto before = weight_values(*model);
  try {
    model->load_weights(path);
    FAIL() << "loaded a mismatched file";
  } catch (const InvalidArgumentError& error) {
    const std::string message = error.what();
    for (const char* expected : {"missing from the file: 'dense_1/kernel:0', 'dense_1/bias:0'",
                                 "not in the model: 'dense_7/kernel:0'",
                                 "'dense/kernel:0' (file float32 (4, 9), model float32 (4, 8))", path.c_str()}) {
      EXPECT_NE(message.find(expected), std::string::npos) << "no \"" << expected << "\" in: " << message;
    }
  }
  EXPECT_EQ(weight_values(*model), before) << "a failed load must assign nothing";

  model->load_weights(path, /*skip_mismatch=*/true);
  const auto after = weight_values(*model);
  EXPECT_EQ(after[1], std::vector<float>(8, 0.0f)) << "the matching bias is loaded";
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[2], before[2]);
}

TEST(Checkpoint, SavesAndRestoresTheOptimizerStateUnderKerasNames) {
  TemporaryFolder folder;
  const std::string path = folder.file("ckpt.safetensors");
  const auto data = toy_data();
  auto trained = toy_classifier();
  trained->fit(data.x, data.y, {.epochs = 1, .batch_size = 16, .verbose = 0});
  saving::save_checkpoint(*trained, path, {.include_optimizer = true, .metadata = {{"note", "x"}}});
  const auto names = stored_names(path);
  for (const char* name : {"optimizer/Adam/iter:0", "optimizer/Adam/dense/kernel/m:0", "optimizer/Adam/dense/kernel/v:0",
                           "optimizer/Adam/dense_1/bias/v:0"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  auto restored = toy_classifier();
  const auto metadata = saving::load_checkpoint(*restored, path, {.include_optimizer = true});
  EXPECT_EQ(metadata.at("note"), "x");
  EXPECT_EQ(restored->optimizer().iterations(), 3);
  // Same state, so the next epoch gives bitwise the same weights.
  trained->fit(data.x, data.y, {.epochs = 1, .batch_size = 16, .verbose = 0, .shuffle = false});
  restored->fit(data.x, data.y, {.epochs = 1, .batch_size = 16, .verbose = 0, .shuffle = false});
  EXPECT_EQ(weight_values(*restored), weight_values(*trained));
  // load_weights reads a checkpoint too, ignoring the optimizer's entries.
  auto weights_only = toy_classifier();
  EXPECT_NO_THROW(weights_only->load_weights(path));
}

}  // namespace
}  // namespace accel::keras
