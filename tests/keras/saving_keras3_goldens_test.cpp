// Keras 3 files written by TensorFlow 2.21 (golden/keras3/, made by
// tools/keras_goldens/make_keras3_goldens.py) loaded into accel: the
// architecture and weights of a .keras (Sequential MLP and CNN, a Functional
// model with a skip connection, BatchNormalization and Dropout), forward
// outputs against TensorFlow's, 20 Adam steps against TensorFlow's losses,
// .keras round trips, and the malformed files' typed errors.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/saving/keras_file.hpp>
#include <accel/keras/saving/safetensors.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <filesystem>
#include <fstream>

#include "../common/tensorflow_keras_check.hpp"
#include "saving_test_support.hpp"
#include "zip_archive.hpp"

namespace accel::keras {
namespace {

using testing::TemporaryFolder;
using testing::weight_values;
using testing::tensor_named;

std::string golden(const std::string& name) { return std::string(ACCEL_KERAS_GOLDEN_DIR) + "/keras3/" + name; }

// Batch `step` of a file's batches stacked as [steps, batch, ...].
Tensor batch_of(const Tensor& all, int64_t step) {
  std::vector<int64_t> begin(all.shape().rank(), 0), size = all.shape().dims();
  begin[0] = step;
  size[0] = 1;
  return ops::slice(all, begin, size).reshape(Shape(std::vector<int64_t>(size.begin() + 1, size.end())));
}

float max_abs_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<float> x = a.to_vector<float>();
  const std::vector<float> y = b.to_vector<float>();
  float worst = 0.0f;
  for (size_t index = 0; index < x.size() && index < y.size(); ++index) worst = std::max(worst, std::abs(x[index] - y[index]));
  return worst;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InvalidArgumentError& error) {
    return error.what();
  }
  return "(no InvalidArgumentError)";
}

class Keras3GoldensTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { clear_session(); }
};

TEST_P(Keras3GoldensTest, LoadedModelComputesWhatTensorFlowComputed) {
  const std::string name = GetParam();
  std::unique_ptr<Model> model = saving::load_model(golden(name + ".keras"));
  const auto forward = saving::read_safetensors_file(golden(name + "_forward.safetensors"));
  const Tensor x = tensor_named(forward, "x");
  const Tensor y = tensor_named(forward, "y");
  // float32 round-off relative to the outputs (the decoder's logits reach ~5).
  float largest = 1.0f;
  for (float value : y.to_vector<float>()) largest = std::max(largest, std::abs(value));
  EXPECT_LE(max_abs_difference((*model)(x, /*training=*/false), y), 1e-6f * largest) << name;
}

TEST_P(Keras3GoldensTest, SavedAndReloadedModelIsTheSameModel) {
  const std::string name = GetParam();
  TemporaryFolder folder;
  std::unique_ptr<Model> model = saving::load_model(golden(name + ".keras"));
  saving::save_model(*model, folder.file("copy.keras"));
  clear_session();
  std::unique_ptr<Model> copy = saving::load_model(folder.file("copy.keras"));
  EXPECT_EQ(copy->class_name(), model->class_name());
  EXPECT_EQ(copy->layers().size(), model->layers().size());
  for (size_t index = 0; index < model->layers().size(); ++index) {
    EXPECT_EQ(copy->layers()[index]->name(), model->layers()[index]->name());
    EXPECT_EQ(copy->layers()[index]->class_name(), model->layers()[index]->class_name());
  }
  EXPECT_EQ(weight_values(*copy), weight_values(*model));  // bitwise
  const Tensor x = tensor_named(saving::read_safetensors_file(golden(name + "_forward.safetensors")), "x");
  EXPECT_EQ((*copy)(x, false).to_vector<float>(), (*model)(x, false).to_vector<float>());
  // The copy is a .keras as Keras 3 writes it: these three members, stored.
  const auto members = saving::read_zip_archive(folder.file("copy.keras"));
  EXPECT_EQ(members.size(), 3u);
  EXPECT_TRUE(members.contains("config.json") && members.contains("metadata.json") && members.contains("model.weights.h5"));
}

// What accel writes, TensorFlow reads: every layer's config as Keras 3.15
// spells it (MultiHeadAttention's calls with their key and use_causal_mask
// keywords too), and the same outputs. Skipped without the TensorFlow
// environment (bench/.venv-tensorflow), as the tests never need TensorFlow.
TEST_P(Keras3GoldensTest, TensorFlowLoadsTheModelAccelWrites) {
  const std::string name = GetParam();
  TemporaryFolder folder;
  std::unique_ptr<Model> model = saving::load_model(golden(name + ".keras"));
  saving::save_model(*model, folder.file(name + ".keras"));
  const Tensor x = tensor_named(saving::read_safetensors_file(golden(name + "_forward.safetensors")), "x");
  const auto verdict = accel::testing::check_keras_file_with_tensorflow(folder.file(name + ".keras"), x,
                                                                       (*model)(x, false));
  if (!verdict) GTEST_SKIP() << "no TensorFlow environment (bench/.venv-tensorflow)";
  EXPECT_EQ(verdict->status, 0) << verdict->output;
}

// merges: every argument-free merge layer (Add, Subtract, Multiply, Average,
// Maximum, Minimum) over two Dense branches; activations: Rescaling and the
// activation layer classes (ReLU shaped four ways, LeakyReLU, ELU, Softmax on
// two axes); shaping: Permute, RepeatVector and the global poolings;
// convolutions: DepthwiseConv2D, PReLU, Conv2DTranspose, Cropping2D,
// UpSampling2D, Conv1D (causal, strided); transformer: Embedding,
// MultiHeadAttention (self, causal, cross with a key), LayerNormalization;
// decoder: a decoder-only LM with RMSNormalization and a causal attention
// (tools/keras_goldens/make_merge_goldens.py).
INSTANTIATE_TEST_SUITE_P(Models, Keras3GoldensTest,
                         ::testing::Values("mlp", "cnn", "functional", "merges", "activations", "shaping",
                                           "convolutions", "transformer", "decoder"));

// TensorFlow's CPU convolutions are oneDNN's direct kernels; accel's CPU
// plugin runs 3x3 ones with 16+ channels as Winograd by default, which
// rounds differently (~5e-7 relative), and Adam's first updates (about
// lr * sign(gradient)) turn that into visible loss differences on weights
// whose gradients are near zero. The parity check runs the same algorithm
// as TensorFlow.
class Keras3TrainingTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    clear_session();
    if (const char* setting = std::getenv("ACCEL_CPU_WINOGRAD")) saved_winograd_ = setting;
    setenv("ACCEL_CPU_WINOGRAD", "0", 1);
  }
  void TearDown() override {
    if (saved_winograd_) {
      setenv("ACCEL_CPU_WINOGRAD", saved_winograd_->c_str(), 1);
    } else {
      unsetenv("ACCEL_CPU_WINOGRAD");
    }
  }

 private:
  std::optional<std::string> saved_winograd_;
};

// 20 Adam steps from TensorFlow's initial weights on TensorFlow's batches:
// each step's loss (before its update, as train_on_batch returns it) within
// 1e-4 relative of TensorFlow's.
TEST_P(Keras3TrainingTest, TwentyAdamStepsFollowTensorFlowsLosses) {
  const std::string name = GetParam();
  std::unique_ptr<Model> model = saving::load_model(golden(name + ".keras"));
  model->compile("adam", std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}),
                 {"accuracy"});
  const auto batches = saving::read_safetensors_file(golden("train_batches.safetensors"));
  const Tensor pixels = tensor_named(batches, "train_pixels");  // uint8 [20, 16, 28, 28]
  const Tensor labels = tensor_named(batches, "train_labels");   // int32 [20, 16]
  const std::vector<float> expected = tensor_named(saving::read_safetensors_file(golden(name + "_train.safetensors")),
                                                    "losses")
                                          .to_vector<float>();
  ASSERT_EQ(expected.size(), 20u);
  const std::vector<uint8_t> all_pixels = pixels.to_vector<uint8_t>();
  const std::vector<int32_t> all_labels = labels.to_vector<int32_t>();
  const Shape input_shape = name == "cnn" ? Shape{16, 28, 28, 1} : Shape{16, 28, 28};
  constexpr size_t kBatchPixels = 16 * 28 * 28;
  for (size_t step = 0; step < 20; ++step) {
    std::vector<float> images(kBatchPixels);
    for (size_t index = 0; index < kBatchPixels; ++index) {
      images[index] = static_cast<float>(all_pixels[step * kBatchPixels + index]) / 255.0f;
    }
    const std::vector<int32_t> batch_labels(all_labels.begin() + static_cast<std::ptrdiff_t>(step * 16),
                                            all_labels.begin() + static_cast<std::ptrdiff_t>(step * 16 + 16));
    model->reset_metrics();
    const Logs logs = model->train_step(Tensor::from_vector<float>(images, input_shape),
                                        Tensor::from_vector<int32_t>(batch_labels, Shape{16}));
    EXPECT_NEAR(logs.at("loss"), expected[step], 1e-4 * std::abs(expected[step])) << name << " step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Keras3TrainingTest, ::testing::Values("mlp", "cnn"));

// The layers' gradients against TensorFlow's: 10 Adam steps from the file's
// weights on its batches (x, labels), each step's loss within 1e-4 relative
// of what train_on_batch returned (make_merge_goldens.py).
class Keras3LayerTrainingTest : public Keras3TrainingTest {};

TEST_P(Keras3LayerTrainingTest, TenAdamStepsFollowTensorFlowsLosses) {
  const std::string name = GetParam();
  std::unique_ptr<Model> model = saving::load_model(golden(name + ".keras"));
  // The decoder trains with SGD(0.1) (an Embedding under Adam differs on TensorFlow: docs/keras.md).
  const OptimizerArgument optimizer =
      name == "decoder" ? OptimizerArgument(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.1}))
                        : OptimizerArgument("adam");
  model->compile(optimizer, std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}));
  const auto training = saving::read_safetensors_file(golden(name + "_train.safetensors"));
  const Tensor batches = tensor_named(training, "x");
  const Tensor labels = tensor_named(training, "labels");
  const std::vector<float> expected = tensor_named(training, "losses").to_vector<float>();
  ASSERT_EQ(expected.size(), 10u);
  for (int64_t step = 0; step < 10; ++step) {
    model->reset_metrics();
    const Logs logs = model->train_step(batch_of(batches, step), batch_of(labels, step));
    EXPECT_NEAR(logs.at("loss"), expected[step], 1e-4 * std::abs(expected[step])) << name << " step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(LayerModels, Keras3LayerTrainingTest,
                         ::testing::Values("convolutions", "transformer", "decoder"));

// Training resumed across TensorFlow and accel with the optimizer's state:
// TensorFlow trained the merges model 5 steps and saved it (compile_config,
// optimizer/vars); accel loads it compiled with that state and its next 3
// steps follow TensorFlow's losses and end at TensorFlow's weights.
class Keras3ResumeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { clear_session(); }
};

// train_step on batches first .. first + count - 1 of `next` (x [steps, batch, ...], y [steps, batch]).
std::vector<float> resumed_losses(Model& model, const saving::SafetensorsContents& next, int64_t first, int64_t count) {
  const Tensor x = tensor_named(next, "x");
  const Tensor y = tensor_named(next, "y");
  std::vector<float> losses;
  for (int64_t step = first; step < first + count; ++step) {
    model.reset_metrics();
    losses.push_back(static_cast<float>(model.train_step(batch_of(x, step), batch_of(y, step)).at("loss")));
  }
  return losses;
}

TEST_P(Keras3ResumeTest, ResumesTensorFlowsTrainingWithItsOptimizerState) {
  const std::string name = GetParam();
  std::unique_ptr<Model> model = saving::load_model(golden("resume_" + name + ".keras"));
  ASSERT_TRUE(model->compiled()) << "compile_config was not read";
  EXPECT_EQ(model->optimizer().iterations(), 5);
  const auto next = saving::read_safetensors_file(golden("resume_" + name + "_next.safetensors"));
  const std::vector<float> expected = tensor_named(next, "losses").to_vector<float>();
  const std::vector<float> losses = resumed_losses(*model, next, 0, 3);
  for (size_t step = 0; step < 3; ++step) {
    EXPECT_NEAR(losses[step], expected[step], 1e-4 * std::abs(expected[step])) << name << " step " << step;
  }
  EXPECT_EQ(model->optimizer().iterations(), tensor_named(next, "iterations").item<int64_t>());
  const std::vector<Variable> weights = model->weights();
  for (size_t index = 0; index < weights.size(); ++index) {
    const Tensor tensorflows = tensor_named(next, "weight_" + std::to_string(index));
    EXPECT_LE(max_abs_difference(weights[index].value(), tensorflows), 1e-5f) << weights[index].name();
  }

  // Without the state (the same weights, a fresh optimizer) the steps go elsewhere.
  clear_session();
  std::unique_ptr<Model> fresh = saving::load_model(golden("resume_" + name + ".keras"));
  fresh->compile(name, std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}));
  const std::vector<float> fresh_losses = resumed_losses(*fresh, next, 0, 3);
  EXPECT_GT(std::abs(fresh_losses[2] - expected[2]), 1e-4 * std::abs(expected[2])) << name;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, Keras3ResumeTest, ::testing::Values("adam", "sgd", "rmsprop"));

// And back: accel trains the resumed model 2 more steps and saves it;
// TensorFlow loads that file compiled with accel's optimizer state, and its
// next step computes accel's next loss and weights. Runs where the
// TensorFlow environment exists (bench/.venv-tensorflow).
TEST(Keras3Files, TensorFlowResumesWhereAccelStopped) {
  const std::string python = std::string(ACCEL_SOURCE_DIR) + "/bench/.venv-tensorflow/bin/python";
  if (!std::filesystem::exists(python)) GTEST_SKIP() << "no TensorFlow environment (bench/.venv-tensorflow)";
  clear_session();
  TemporaryFolder folder;
  std::unique_ptr<Model> model = saving::load_model(golden("resume_adam.keras"));
  const auto next = saving::read_safetensors_file(golden("resume_adam_next.safetensors"));
  (void)resumed_losses(*model, next, 0, 2);
  saving::save_model(*model, folder.file("accel_trained.keras"));
  // The third batch, for both (TensorFlow's file holds it as a batch of one step).
  saving::SafetensorsContents third;
  third.tensors = {saving::stored_tensor("x", ops::slice(tensor_named(next, "x"), {2, 0, 0}, {1, 16, 8})),
                   saving::stored_tensor("y", ops::slice(tensor_named(next, "y"), {2, 0}, {1, 16}))};
  saving::write_safetensors_file(folder.file("third.safetensors"), third);
  const std::string command = "TF_CPP_MIN_LOG_LEVEL=3 CUDA_VISIBLE_DEVICES= " + python + " " + ACCEL_SOURCE_DIR +
                              "/tools/keras_goldens/resume_in_tensorflow.py " + folder.file("accel_trained.keras") +
                              " " + folder.file("third.safetensors") + " " + folder.file("tensorflow.safetensors") +
                              " > " + folder.file("resume.log") + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(folder.file("resume.log")).rdbuf();
  const auto tensorflow = saving::read_safetensors_file(folder.file("tensorflow.safetensors"));
  EXPECT_EQ(tensor_named(tensorflow, "iterations_before").item<int64_t>(), 7);

  EXPECT_EQ(tensor_named(tensorflow, "iterations_after").item<int64_t>(), 8);
  const float accel_loss = resumed_losses(*model, next, 2, 1).front();
  const float tensorflow_loss = tensor_named(tensorflow, "losses").to_vector<float>().front();
  EXPECT_NEAR(tensorflow_loss, accel_loss, 1e-4 * std::abs(accel_loss));
  const std::vector<Variable> weights = model->weights();
  for (size_t index = 0; index < weights.size(); ++index) {
    const Tensor tensorflows = tensor_named(tensorflow, "weight_" + std::to_string(index));
    EXPECT_LE(max_abs_difference(weights[index].value(), tensorflows), 1e-5f) << weights[index].name();
  }
}

// An accel-trained model written as .keras, loaded by TensorFlow 2.21 with
// keras.models.load_model, computes what accel computes. Runs where the
// golden script's virtual environment exists (bench/.venv-tensorflow, made by
// bench/ scripts); skipped elsewhere, as the tests never need TensorFlow.
TEST(Keras3Files, TensorFlowLoadsAnAccelTrainedModel) {
  clear_session();
  TemporaryFolder folder;
  std::unique_ptr<Model> model = saving::load_model(golden("functional.keras"));
  model->compile("adam", std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}));
  const Tensor x = tensor_named(saving::read_safetensors_file(golden("functional_forward.safetensors")), "x");
  model->fit(x, Tensor::from_vector<int32_t>(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5}, Shape{16}),
             {.epochs = 3, .verbose = 0});
  const std::string keras_path = folder.file("trained.keras");
  saving::save_model(*model, keras_path);
  const auto verdict = accel::testing::check_keras_file_with_tensorflow(keras_path, x, (*model)(x, false));
  if (!verdict) GTEST_SKIP() << "no TensorFlow environment (bench/.venv-tensorflow)";
  EXPECT_EQ(verdict->status, 0) << verdict->output;
  EXPECT_NE(verdict->output.find("forward OK"), std::string::npos) << verdict->output;
}

// A Sequential's InputLayer keeps the name the file gave it (Keras 3's
// "input_layer"), so that a TensorFlow file saves back as it was.
TEST(Keras3Files, ASequentialKeepsItsInputLayersName) {
  clear_session();
  TemporaryFolder folder;
  std::unique_ptr<Model> model = saving::load_model(golden("mlp.keras"));
  saving::save_model(*model, folder.file("copy.keras"));
  const nlohmann::json config =
      nlohmann::json::parse(saving::read_zip_archive(folder.file("copy.keras")).at("config.json"));
  const nlohmann::json& first = config["config"]["layers"][0];
  EXPECT_EQ(first["class_name"], "InputLayer");
  EXPECT_EQ(first["config"]["name"], "input_layer");
}

// Layers without weights of their own that reshape and join: Reshape (with
// an inferred -1) and Concatenate survive a .keras round trip.
TEST(Keras3Files, ReshapeAndConcatenateRoundTrip) {
  clear_session();
  TemporaryFolder folder;
  KerasTensor input = Input({4, 6});
  KerasTensor flat = std::make_shared<Reshape>(std::vector<int64_t>{-1})->operator()(input);
  KerasTensor dense = std::make_shared<Dense>(8)->operator()(flat);
  KerasTensor joined = std::make_shared<Concatenate>(-1)->operator()({flat, dense});
  Model model(input, std::make_shared<Dense>(3)->operator()(joined), "joined");
  saving::save_model(model, folder.file("joined.keras"));
  clear_session();
  std::unique_ptr<Model> copy = saving::load_model(folder.file("joined.keras"));
  const Tensor x = Tensor::from_vector<float>(std::vector<float>(2 * 24, 0.25f), Shape{2, 4, 6});
  EXPECT_EQ((*copy)(x, false).to_vector<float>(), model(x, false).to_vector<float>());
  EXPECT_EQ(copy->layers()[1]->class_name(), "Reshape");
  EXPECT_EQ(copy->layers()[3]->class_name(), "Concatenate");
}

TEST(Keras3Files, WeightsFileLoadsIntoAModelBuiltInCpp) {
  clear_session();
  Sequential model({std::make_shared<Flatten>(), std::make_shared<Dense>(128, DenseOptions{.activation = "relu"}),
                    std::make_shared<Dense>(10)});
  model.build({kUnknownDim, 28, 28});
  model.load_weights(golden("mlp.weights.h5"));
  const auto forward = saving::read_safetensors_file(golden("mlp_forward.safetensors"));
  EXPECT_LE(max_abs_difference(model(tensor_named(forward, "x"), false), tensor_named(forward, "y")), 1e-6f);
}

TEST(Keras3Files, MalformedFilesAreTypedErrorsNamingFileAndFault) {
  clear_session();
  EXPECT_THROW(saving::load_model(golden("absent.keras")), NotFoundError);
  const std::string truncated = error_of([] { saving::load_model(golden("bad_truncated.keras")); });
  EXPECT_NE(truncated.find("bad_truncated.keras: not a readable zip archive"), std::string::npos) << truncated;
  const std::string no_weights = error_of([] { saving::load_model(golden("bad_missing_weights.keras")); });
  EXPECT_NE(no_weights.find("bad_missing_weights.keras: the archive has no model.weights.h5"), std::string::npos)
      << no_weights;
  const std::string unknown = error_of([] { saving::load_model(golden("bad_unknown_layer.keras")); });
  EXPECT_NE(unknown.find("bad_unknown_layer.keras"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("custom>Scale"), std::string::npos) << unknown;

  Sequential mlp({std::make_shared<Flatten>(), std::make_shared<Dense>(128, DenseOptions{.activation = "relu"}),
                  std::make_shared<Dense>(10)});
  mlp.build({kUnknownDim, 28, 28});
  const std::string foreign = error_of([&] { mlp.load_weights(golden("bad_not_keras.h5")); });
  EXPECT_NE(foreign.find("bad_not_keras.h5: not a Keras weights file"), std::string::npos) << foreign;
  const std::string shape = error_of([&] { mlp.load_weights(golden("bad_wrong_shape.weights.h5")); });
  EXPECT_NE(shape.find("'layers/dense_1/vars/0' (file float32 (10, 128), model float32 (128, 10))"), std::string::npos)
      << shape;
}

TEST(Keras3Files, UnknownArgumentsNameTheLayerAndTheFile) {
  clear_session();
  TemporaryFolder folder;
  // mlp.keras with an argument accel's Dense does not have.
  auto members = saving::read_zip_archive(golden("mlp.keras"));
  std::string config = members.at("config.json");
  const std::string units = "\"units\": 128";
  ASSERT_NE(config.find(units), std::string::npos);
  config.replace(config.find(units), units.size(), units + ", \"sparsity\": 0.5");
  const std::string path = folder.file("extra.keras");
  std::ofstream(path, std::ios::binary) << saving::make_zip_archive(
      {{"metadata.json", members.at("metadata.json")}, {"config.json", config}, {"model.weights.h5", members.at("model.weights.h5")}},
      path);
  const std::string message = error_of([&] { saving::load_model(path); });
  EXPECT_NE(message.find(path + ":config.json: layer 'dense' (Dense): unknown argument 'sparsity'"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace accel::keras
