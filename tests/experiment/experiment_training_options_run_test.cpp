// End to end: `accel run` trains with adamw, a cosine_decay learning rate
// with warmup and label smoothing, compiled and eager, on small synthetic
// data. Both runs complete, record a finite loss at every step, and train
// alike (the compiled step refreshes the scheduled rate of the update and of
// the weight decay before every replay).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace accel::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_text;
using testing::run_named;
using testing::run_shell;
using testing::scratch_dir;

const std::string kAccel = ACCEL_CLI_PATH;

TEST(ExperimentTrainingOptions, AdamwWithCosineDecayAndLabelSmoothingTrainsCompiledAndEager) {
  const fs::path out = scratch_dir("adamw_cosine");
  const fs::path folder = out.string() + "_files";
  fs::create_directories(folder);
  const fs::path file = folder / "zoo.yaml";
  std::ofstream(file) << R"(name: zoo
device: /CPU:0
model:
  layers:
    - conv2d: {filters: 8, kernel_size: 3, activation: relu, input_shape: [8, 8, 1]}
    - flatten
    - dense: {units: 10}
data: {source: synthetic, shape: [8, 8, 1], classes: 10, samples: 256, batch: 16, one_hot: true, shuffle: false}
training:
  optimizer:
    adamw:
      learning_rate: {cosine_decay: {initial_learning_rate: 0.0001, decay_steps: 6, warmup_target: 0.01, warmup_steps: 2}}
      weight_decay: 0.5
      exclude_from_weight_decay: [bias]
  loss: {categorical_crossentropy: {from_logits: true, label_smoothing: 0.1}}
  metrics: [accuracy]
  epochs: 2
  steps_per_epoch: 4
  seed: 3
output: {trace: false}
compare:
  - name: compiled
    training: {jit_compile: true}
  - name: eager
    training: {jit_compile: false}
)";
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  const json& compiled = run_named(document, "compiled");
  const json& eager = run_named(document, "eager");
  ASSERT_EQ(compiled["status"], "completed") << compiled["reason"];
  ASSERT_EQ(eager["status"], "completed") << eager["reason"];
  EXPECT_EQ(compiled["compiled_step"]["eager_reason"], "");
  EXPECT_EQ(compiled["compiled_step"]["traces"], 1);
  ASSERT_EQ(compiled["steps"].size(), 8u);
  ASSERT_EQ(eager["steps"].size(), 8u);
  for (size_t step = 0; step < 8; ++step) {
    const double compiled_loss = compiled["steps"][step]["logs"]["loss"].get<double>();
    const double eager_loss = eager["steps"][step]["logs"]["loss"].get<double>();
    EXPECT_TRUE(std::isfinite(compiled_loss)) << step;
    EXPECT_NEAR(compiled_loss, eager_loss, 1e-4 * std::max(1.0, std::abs(eager_loss))) << "step " << step;
  }
}

// distribution: {mesh: ...}: the zoo's decoder sharded over 4 logical CPUs
// (FSDP x tensor parallel) trains step for step as on one device, and the
// run says it was sharded.
TEST(ExperimentTrainingOptions, ADistributionMeshTrainsAsOneDevice) {
  const fs::path out = scratch_dir("distribution_mesh");
  const std::string decoder = std::string(EXPERIMENT_SOURCE_DIR) + "/configs/models/decoder_lm.yaml";
  const std::string short_run = " --set training.epochs=1 --set training.steps_per_epoch=4 --set output.trace=false";
  const testing::CommandResult one = run_shell(kAccel + " run " + decoder + short_run + " --out " + out.string() + "/one");
  ASSERT_EQ(one.code, 0) << one.output;
  const testing::CommandResult mesh = run_shell(
      kAccel + " run " + decoder + short_run + " --out " + out.string() + "/mesh" +
      " --set 'distribution={mesh: {fsdp: 2, tensor: 2}}'" +
      " --set 'devices=[{device: CPU, logical_devices: [{}, {}, {}, {}]}]'");
  ASSERT_EQ(mesh.code, 0) << mesh.output;
  const json one_document = json::parse(read_text(fs::path(out.string() + "/one") / "results.json"));
  const json mesh_document = json::parse(read_text(fs::path(out.string() + "/mesh") / "results.json"));
  const json& alone = one_document["runs"][0];
  const json& sharded = mesh_document["runs"][0];
  ASSERT_EQ(sharded["status"], "completed") << sharded["reason"];
  ASSERT_EQ(alone["steps"].size(), sharded["steps"].size());
  for (size_t step = 0; step < alone["steps"].size(); ++step) {
    const double expected = alone["steps"][step]["logs"]["loss"].get<double>();
    EXPECT_NEAR(sharded["steps"][step]["logs"]["loss"].get<double>(), expected, 1e-5 * std::abs(expected)) << step;
  }
  bool noted = false;
  for (const json& note : sharded["notes"]) noted = noted || note.get<std::string>().find("sharded over a mesh of 4 CPU") == 0;
  EXPECT_TRUE(noted) << sharded["notes"].dump();
  // Fewer devices than the mesh: the run fails naming both counts.
  const testing::CommandResult short_of_devices =
      run_shell(kAccel + " run " + decoder + short_run + " --out " + out.string() + "/short" +
                " --set 'distribution={mesh: {fsdp: 4}}'");
  EXPECT_NE(short_of_devices.output.find("needs 4 CPU devices, the run has 1"), std::string::npos) << short_of_devices.output;
}

}  // namespace
}  // namespace accel::experiment
