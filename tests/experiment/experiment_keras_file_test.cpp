// model.keras_file and model.initial_weights: a Keras 3 .keras file as the
// model of an experiment, weights loaded before training, and their errors at
// file:line:column (a missing file, a damaged archive, a weights file of the
// wrong kind, keras_file beside layers), and, as `accel validate` loads them,
// every variable of the files against the model. The files are TensorFlow
// 2.21's goldens (tests/keras/golden/keras3/).
#include <accel/experiment/experiment_error.hpp>
#include <accel/experiment/run_executor.hpp>
#include <accel/keras/saving/keras_file.hpp>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "zip_archive.hpp"

#include <string>

namespace accel::experiment {
namespace {

using testing::error_of;
using testing::offline_options;
using testing::source_path;

// The loader with model.keras_file inspected, as `accel validate` and `accel run` load files.
LoadOptions keras_options() {
  LoadOptions options = offline_options();
  options.inspect_keras_file = [](const std::string& path) {
    const keras::LayerShape input = keras::saving::inspect_keras_file(path).input_shapes.at(0);
    return std::vector<std::int64_t>(input.begin() + 1, input.end());
  };
  return options;
}

std::string golden(const std::string& name) { return source_path("tests/keras/golden/keras3/" + name); }

std::map<std::string, std::string> saving_archive(const std::string& path) { return keras::saving::read_zip_archive(path); }

std::string experiment_with(const std::string& model_lines, const std::string& data_shape = "[28, 28]") {
  return "name: keras_file\n"
         "model:\n" +
         model_lines +
         "data: {source: synthetic, shape: " + data_shape + ", classes: 10, samples: 64, batch: 16}\n"
         "training: {optimizer: adam, loss: {sparse_categorical_crossentropy: {from_logits: true}}}\n";
}

TEST(KerasFileModels, AKerasFileIsTheModelWithItsInputShape) {
  const Experiment experiment =
      load_experiment_text(experiment_with("  keras_file: " + golden("cnn.keras") + "\n", "[28, 28, 1]"),
                           "inline.yaml", keras_options());
  const ModelConfig& model = *experiment.runs.front().model;
  EXPECT_EQ(model.keras_file, golden("cnn.keras"));
  EXPECT_EQ(model.keras_file_input_shape, (std::vector<std::int64_t>{28, 28, 1}));
  EXPECT_EQ(model.name, "cnn");  // the file's stem, unless model.name says otherwise
  EXPECT_TRUE(model.layers.empty());
}

TEST(KerasFileModels, InitialWeightsAreResolvedAndChecked) {
  const Experiment experiment = load_experiment_text(
      experiment_with("  layers: [flatten, dense: {units: 128, activation: relu}, dense: {units: 10}]\n"
                      "  initial_weights: " + golden("mlp.weights.h5") + "\n"),
      "inline.yaml", keras_options());
  EXPECT_EQ(experiment.runs.front().model->initial_weights, golden("mlp.weights.h5"));
}

TEST(KerasFileModels, AMissingFileIsReportedAtItsLine) {
  const ExperimentError error = error_of(experiment_with("  keras_file: no_such_model.keras\n"), keras_options());
  EXPECT_EQ(error.where().line, 3) << error.what();
  EXPECT_EQ(error.where().column, 15) << error.what();
  EXPECT_NE(std::string(error.what()).find("no_such_model.keras' not found"), std::string::npos)
      << error.what();
}

TEST(KerasFileModels, WithoutAnInspectorOnlyTheFileIsChecked) {
  const Experiment experiment = load_experiment_text(
      experiment_with("  keras_file: " + golden("bad_truncated.keras") + "\n"), "inline.yaml", offline_options());
  EXPECT_TRUE(experiment.runs.front().model->keras_file_input_shape.empty());
}

TEST(KerasFileModels, ADamagedArchiveIsReportedWithTheLoadersReason) {
  const ExperimentError error = error_of(experiment_with("  keras_file: " + golden("bad_truncated.keras") + "\n"), keras_options());
  EXPECT_EQ(error.where().line, 3) << error.what();
  EXPECT_NE(std::string(error.what()).find("model.keras_file cannot be loaded"), std::string::npos) << error.what();
  EXPECT_NE(std::string(error.what()).find("not a readable zip archive"), std::string::npos) << error.what();
}

TEST(KerasFileModels, TheDataMustFitTheFilesInput) {
  const ExperimentError error =
      error_of(experiment_with("  keras_file: " + golden("mlp.keras") + "\n", "[32, 32, 3]"), keras_options());
  EXPECT_EQ(error.where().line, 3) << error.what();
  EXPECT_NE(std::string(error.what()).find("model.keras_file's input of shape [28, 28] does not fit the data"),
            std::string::npos)
      << error.what();
}

TEST(KerasFileModels, KerasFileAndLayersTogetherAreAnError) {
  const ExperimentError error =
      error_of(experiment_with("  keras_file: " + golden("mlp.keras") + "\n  layers: [flatten, dense: {units: 10}]\n"), keras_options());
  EXPECT_NE(std::string(error.what()).find("keras_file"), std::string::npos) << error.what();
  EXPECT_NE(std::string(error.what()).find("layers"), std::string::npos) << error.what();
}

TEST(KerasFileModels, InitialWeightsOfAnotherKindAreAnError) {
  const ExperimentError error = error_of(experiment_with(
      "  layers: [flatten, dense: {units: 10}]\n  initial_weights: " + golden("mlp.keras") + "\n"), keras_options());
  EXPECT_EQ(error.where().line, 4) << error.what();
  EXPECT_NE(std::string(error.what()).find("is neither .h5 nor .safetensors"), std::string::npos) << error.what();
}

// As `accel validate` loads files: the model built and its files loaded in full.
LoadOptions validate_options() {
  LoadOptions options = keras_options();
  options.check_model_files = check_model_files;
  return options;
}

class ScratchFolder {
 public:
  ScratchFolder() : path_(std::filesystem::temp_directory_path() / ("accel_keras_file_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);  // left by a crashed earlier process of this pid
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& contents) const {
    const std::string path = (path_ / name).string();
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

 private:
  std::filesystem::path path_;
};

std::string contents_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const char* kMlpLayers = "  layers: [flatten, dense: {units: 128, activation: relu}, dense: {units: 10}]\n";

TEST(KerasFileModels, ValidateLoadsInitialWeightsAndRefusesWhatDoesNotFit) {
  ScratchFolder folder;
  const std::string mlp = contents_of(golden("mlp.weights.h5"));
  const std::vector<std::pair<std::string, std::string>> cases{
      {folder.file("empty.weights.h5", ""), "not an HDF5 file"},
      {folder.file("text.weights.h5", "just some text\n"), "not an HDF5 file"},
      {folder.file("truncated.weights.h5", mlp.substr(0, mlp.size() / 2)), "truncated.weights.h5"},
      {golden("bad_wrong_shape.weights.h5"), "shape or dtype mismatch"},
      {golden("functional.weights.h5"), "missing from the file"},  // another model's
      {folder.file("empty.safetensors", ""), "empty.safetensors"},
  };
  for (const auto& [path, fault] : cases) {
    SCOPED_TRACE(path);
    const ExperimentError error =
        error_of(experiment_with(std::string(kMlpLayers) + "  initial_weights: " + path + "\n"), validate_options());
    EXPECT_EQ(error.where().line, 4) << error.what();
    EXPECT_NE(std::string(error.what()).find("model.initial_weights cannot be loaded into the model"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find(fault), std::string::npos) << error.what();
  }
  // The model's own weights pass.
  EXPECT_NO_THROW(load_experiment_text(
      experiment_with(std::string(kMlpLayers) + "  initial_weights: " + golden("mlp.weights.h5") + "\n"), "inline.yaml",
      validate_options()));
}

TEST(KerasFileModels, ValidateRefusesAKerasFileWhoseWeightsDoNotFitItsConfig) {
  ScratchFolder folder;
  // mlp.keras's config with cnn.keras's weights: every Dense kernel is of another shape.
  std::map<std::string, std::string> members = saving_archive(golden("mlp.keras"));
  members["model.weights.h5"] = saving_archive(golden("cnn.keras")).at("model.weights.h5");
  const std::string path = folder.file("mismatched.keras", keras::saving::make_zip_archive(
                                                               {{"metadata.json", members.at("metadata.json")},
                                                                {"config.json", members.at("config.json")},
                                                                {"model.weights.h5", members.at("model.weights.h5")}},
                                                               "mismatched.keras"));
  // Inspection alone (accel run's first look) reads the config and sees an HDF5 file...
  EXPECT_NO_THROW(load_experiment_text(experiment_with("  keras_file: " + path + "\n"), "inline.yaml", keras_options()));
  // ...validate loads the weights into the model and names the variables.
  const ExperimentError error = error_of(experiment_with("  keras_file: " + path + "\n"), validate_options());
  EXPECT_EQ(error.where().line, 3) << error.what();
  EXPECT_NE(std::string(error.what()).find("model.keras_file cannot be loaded into the model"), std::string::npos)
      << error.what();
  EXPECT_NE(std::string(error.what()).find("layers/dense"), std::string::npos) << error.what();
}

}  // namespace
}  // namespace accel::experiment
