// ModelCheckpoint: file names formatted as Python's str.format, save_best_only
// with Keras's mode resolution, weights-only vs training checkpoints.
#include <accel/error.hpp>
#include <accel/keras/callbacks/model_checkpoint.hpp>
#include <accel/keras/saving/keras_file.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <gtest/gtest.h>

#include "saving_test_support.hpp"

namespace accel::keras {
namespace {

using testing::TemporaryFolder;

// The formatted pattern (a checkpoint's extension added and taken off again).
std::string name_for(const std::string& pattern, int epoch, const Logs& logs) {
  const std::string extension = ".weights.h5";
  const std::string path = ModelCheckpoint(pattern + extension, {.save_weights_only = true}).file_path(epoch, logs);
  return path.substr(0, path.size() - extension.size());
}

TEST(ModelCheckpoint, FormatsFilePathsAsPythonStrFormat) {
  const Logs logs{{"loss", 0.1}, {"val_loss", 0.4567}, {"val_accuracy", 0.98765}};
  EXPECT_EQ(name_for("w.{epoch:02d}-{val_loss:.2f}", 0, logs), "w.01-0.46");
  EXPECT_EQ(name_for("{epoch}", 11, logs), "12");
  EXPECT_EQ(name_for("{loss}", 0, logs), "0.1");                       // str(float)
  EXPECT_EQ(name_for("{val_accuracy:.3f}", 0, logs), "0.988");
  EXPECT_EQ(name_for("{loss:.3e}|{loss:g}|{loss:.1%}", 0, logs), "1.000e-01|0.1|10.0%");
  EXPECT_EQ(name_for("{epoch:>4}|{epoch:<3}|{epoch:^5}|{epoch:+}", 0, logs), "   1|1  |  1  |+1");
  EXPECT_EQ(name_for("{epoch:.2f}|{epoch:03}", 4, logs), "5.00|005");  // an int formats as a float with f
  EXPECT_EQ(name_for("{val_loss:.2}|{val_loss:08.3f}", 0, logs), "0.46|0000.457");
  EXPECT_EQ(name_for("{{epoch}}-{epoch}", 0, logs), "{epoch}-1");
}

TEST(ModelCheckpoint, FormatErrorsNameTheField) {
  const Logs logs{{"loss", 0.1}};
  try {
    name_for("w.{val_loss:.2f}", 0, logs);
    FAIL();
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("no value for field 'val_loss' (available: epoch, loss)"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(name_for("{loss:d}", 0, logs), InvalidArgumentError);  // Unknown format code 'd' for float
  EXPECT_THROW(name_for("{epoch:.2d}", 0, logs), InvalidArgumentError);
  EXPECT_THROW(name_for("{}", 0, logs), InvalidArgumentError);
  EXPECT_THROW(name_for("w{", 0, logs), InvalidArgumentError);
}

// Ends epochs with `monitor` = values[epoch], stamping weights with epoch + 1.
void run_epochs(Model& model, ModelCheckpoint& checkpoint, const std::string& monitor, const std::vector<double>& values) {
  checkpoint.set_model(&model);
  checkpoint.on_train_begin({});
  for (int epoch = 0; epoch < static_cast<int>(values.size()); ++epoch) {
    testing::fill_weights(model, static_cast<float>(epoch + 1));
    Logs logs{{monitor, values[epoch]}};
    checkpoint.on_epoch_end(epoch, logs);
  }
}

std::vector<std::string> files_in(const TemporaryFolder& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder.path())) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ModelCheckpoint, SaveBestOnlySavesOnStrictImprovement) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  ModelCheckpoint checkpoint(folder.file("w.{epoch:02d}-{val_loss:.1f}.safetensors"),
                             {.save_best_only = true, .save_weights_only = true});
  run_epochs(*model, checkpoint, "val_loss", {1.0, 0.5, 0.7, 0.5, 0.4});
  EXPECT_EQ(files_in(folder), (std::vector<std::string>{"w.01-1.0.safetensors", "w.02-0.5.safetensors",
                                                        "w.05-0.4.safetensors"}));
  EXPECT_EQ(checkpoint.best(), 0.4);
}

TEST(ModelCheckpoint, OneFileNameHoldsTheBestEpochsWeights) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  ModelCheckpoint checkpoint(folder.file("best.safetensors"), {.save_best_only = true, .save_weights_only = true});
  run_epochs(*model, checkpoint, "val_loss", {1.0, 0.5, 0.7, 0.9});
  model->load_weights(folder.file("best.safetensors"));
  EXPECT_EQ(testing::weight_values(*model)[0][0], 2.0f);  // epoch 2's stamp
}

TEST(ModelCheckpoint, AutoModeMaximizesNamesContainingAcc) {
  for (const std::string monitor : {"val_accuracy", "val_acc", "acc_top5", "fmeasure"}) {
    TemporaryFolder folder;
    auto model = testing::toy_classifier();
    ModelCheckpoint checkpoint(folder.file("w{epoch}.safetensors"), {.monitor = monitor, .save_best_only = true});
    run_epochs(*model, checkpoint, monitor, {0.5, 0.4, 0.6});
    EXPECT_EQ(files_in(folder), (std::vector<std::string>{"w1.safetensors", "w3.safetensors"})) << monitor;
  }
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  ModelCheckpoint minimizing(folder.file("w{epoch}.safetensors"), {.monitor = "val_mae", .save_best_only = true});
  run_epochs(*model, minimizing, "val_mae", {0.5, 0.4, 0.6});
  EXPECT_EQ(files_in(folder), (std::vector<std::string>{"w1.safetensors", "w2.safetensors"}));
}

TEST(ModelCheckpoint, ExplicitModeAndInitialValueThreshold) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  ModelCheckpoint checkpoint(folder.file("w{epoch}.safetensors"),
                             {.monitor = "val_loss", .save_best_only = true, .mode = "max", .initial_value_threshold = 0.6});
  run_epochs(*model, checkpoint, "val_loss", {0.5, 0.7, 0.6});
  EXPECT_EQ(files_in(folder), (std::vector<std::string>{"w2.safetensors"}));
}

TEST(ModelCheckpoint, MissingMonitorSkipsTheSave) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  ModelCheckpoint checkpoint(folder.file("w.safetensors"), {.monitor = "val_loss", .save_best_only = true});
  run_epochs(*model, checkpoint, "loss", {0.5});
  EXPECT_TRUE(files_in(folder).empty());
}

TEST(ModelCheckpoint, DuringFitSavesEveryEpochIntoNewFolders) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  model->fit(data.x, data.y,
             {.epochs = 3,
              .verbose = 0,
              .callbacks = {std::make_shared<ModelCheckpoint>(folder.file("ckpt/{epoch}.safetensors"))},
              .validation_split = 0.25});
  for (const char* name : {"ckpt/1.safetensors", "ckpt/2.safetensors", "ckpt/3.safetensors"}) {
    EXPECT_TRUE(std::filesystem::exists(folder.file(name))) << name;
  }
  // save_weights_only = false: a training checkpoint with the optimizer.
  const auto contents = saving::read_safetensors_file(folder.file("ckpt/3.safetensors"));
  EXPECT_NE(contents.find("optimizer/Adam/iter:0"), nullptr);
  auto restored = testing::toy_classifier();
  saving::load_checkpoint(*restored, folder.file("ckpt/3.safetensors"), {.include_optimizer = true});
  EXPECT_EQ(testing::weight_values(*restored), testing::weight_values(*model));
  EXPECT_EQ(restored->optimizer().iterations(), model->optimizer().iterations());
}

// As Keras 3's ModelCheckpoint: the extension says what is written. A
// ".keras" checkpoint is a model archive that loads as the model it was; a
// ".weights.h5" one holds Keras 3 weights.
TEST(ModelCheckpoint, TheExtensionChoosesTheFormat) {
  TemporaryFolder folder;
  auto model = testing::toy_classifier();
  const auto data = testing::toy_data();
  model->fit(data.x, data.y,
             {.epochs = 1,
              .verbose = 0,
              .callbacks = {std::make_shared<ModelCheckpoint>(folder.file("model.keras")),
                            std::make_shared<ModelCheckpoint>(folder.file("model.weights.h5"),
                                                              ModelCheckpointOptions{.save_weights_only = true})}});
  std::unique_ptr<Model> loaded = saving::load_model(folder.file("model.keras"));
  EXPECT_EQ(testing::weight_values(*loaded), testing::weight_values(*model));
  auto weights = testing::toy_classifier();
  weights->load_weights(folder.file("model.weights.h5"));
  EXPECT_EQ(testing::weight_values(*weights), testing::weight_values(*model));
}

TEST(ModelCheckpoint, AnExtensionThatDoesNotFitSaveWeightsOnlyIsRefused) {
  auto message_of = [](const std::string& path, bool weights_only) {
    try {
      ModelCheckpoint checkpoint(path, {.save_weights_only = weights_only});
    } catch (const InvalidArgumentError& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message_of("model.keras", true).find("set save_weights_only to false"), std::string::npos);
  EXPECT_NE(message_of("w.weights.h5", false).find("set save_weights_only to true"), std::string::npos);
  EXPECT_NE(message_of("ckpt/{epoch}.ckpt", false).find("\"ckpt/{epoch}.ckpt\""), std::string::npos);
  EXPECT_NE(message_of("w.h5", true).find(".weights.h5"), std::string::npos);
  EXPECT_EQ(checkpoint_format("a.safetensors", true), CheckpointFormat::kSafetensors);
  EXPECT_EQ(checkpoint_format("a.safetensors", false), CheckpointFormat::kSafetensors);
  EXPECT_EQ(checkpoint_format("a.weights.h5", true), CheckpointFormat::kWeightsH5);
  EXPECT_EQ(checkpoint_format("a.keras", false), CheckpointFormat::kKerasArchive);
}

TEST(ModelCheckpoint, OnlyEpochSaveFreqIsSupported) {
  EXPECT_THROW(ModelCheckpoint("w.safetensors", {.save_freq = "batch"}), InvalidArgumentError);
}

}  // namespace
}  // namespace accel::keras
