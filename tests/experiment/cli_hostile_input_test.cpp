// The accel commands against hostile input, as an operator would feed it:
// inputs by kind (a FIFO must not block, /dev/zero must not be read, a folder
// is no file), standard output that cannot be written, option values out of
// range, contradicting options, layer names Keras refuses. Each is refused
// with a message naming what was wrong, and a failing exit status.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_test_support.hpp"

namespace accel::experiment {
namespace {

using testing::run_shell;
using testing::scratch_dir;

const std::string kAccel = ACCEL_CLI_PATH;

std::string source_path(const std::string& relative) { return std::string(EXPERIMENT_SOURCE_DIR) + "/" + relative; }

// The command under a time limit: a blocked open is a failure, not a hung suite.
testing::CommandResult accel(const std::string& arguments) { return run_shell("timeout 20 " + kAccel + " " + arguments); }

void expect_refused(const testing::CommandResult& result, const std::string& message) {
  EXPECT_NE(result.code, 0) << result.output;
  EXPECT_NE(result.code, 124) << "timed out (blocked?): " << result.output;
  EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
}

TEST(HostileInput, InputFilesAreCheckedByKindBeforeTheyAreOpened) {
  const std::filesystem::path folder = scratch_dir("kinds");
  std::filesystem::create_directories(folder / "folder.yaml");
  const std::string fifo = (folder / "fifo.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(accel("validate " + fifo), "is a FIFO");
  expect_refused(accel("run " + fifo), "is a FIFO");
  expect_refused(accel("validate /dev/zero"), "is a character device");
  expect_refused(accel("validate " + (folder / "folder.yaml").string()), "is a folder");
  expect_refused(accel("tpu estimate --model " + fifo), "is a FIFO");
  expect_refused(accel("tpu estimate --model /dev/zero"), "is a character device");
  const std::string weights_fifo = (folder / "fifo.safetensors").string();
  ASSERT_EQ(::mkfifo(weights_fifo.c_str(), 0600), 0);
  expect_refused(accel("convert " + weights_fifo + " " + (folder / "out.keras").string() + " --model " +
                       source_path("tests/keras/golden/keras3/mlp.keras")),
                 "is a FIFO");
}

TEST(HostileInput, AStandardOutputThatCannotBeWrittenFailsTheCommand) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const std::string command : {"validate --print-schema", "tpu estimate gemm 128 128 128", "devices --json"}) {
    const testing::CommandResult result = run_shell("(" + kAccel + " " + command + " > /dev/full)");
    EXPECT_NE(result.code, 0) << command << ": " << result.output;
    EXPECT_NE(result.output.find("writing standard output failed"), std::string::npos) << command << ": " << result.output;
  }
}

TEST(HostileInput, OptionValuesOutOfRangeNameTheOption) {
  const std::string model = source_path("configs/models/resnet_small_28x28.yaml");
  expect_refused(accel("tpu estimate --model " + model + " --batch 0"), "--batch");
  expect_refused(accel("tpu estimate --model " + model + " --batch -3"), "--batch");
  expect_refused(accel("tpu estimate --model " + model + " --values sometimes"), "--values");
  expect_refused(accel("tpu estimate gemm 0 128 128"), "M N K");
  expect_refused(accel("tpu estimate conv2d 1 8 8 3 4 3 3 --stride 0"), "--stride");
  expect_refused(accel("tpu estimate conv2d 1 8 8 3 4 3 3 --padding full"), "--padding");
  expect_refused(accel("tpu estimate vector adam -5"), "ELEMENTS");
  expect_refused(accel("tpu estimate --dataflow xy gemm 8 8 8"), "--dataflow");
  expect_refused(accel("tpu estimate collective all_gather 4096 --axis -1"), "--axis");
  // A swept value out of range names the sweep and the field, once.
  const testing::CommandResult sweep = accel("tpu estimate --model " + model + " --sweep core.mxu.rows=0,64");
  expect_refused(sweep, "--sweep core.mxu.rows=0: override 'core.mxu.rows=0'");
  EXPECT_EQ(sweep.output.find("accel tpu estimate:"), sweep.output.rfind("accel tpu estimate:")) << sweep.output;
}

TEST(HostileInput, ContradictingOptionsAreRefusedNamingBoth) {
  const std::string model = source_path("configs/models/resnet_small_28x28.yaml");
  const testing::CommandResult both = accel("tpu estimate --model " + model + " --inference --training");
  expect_refused(both, "--training");
  EXPECT_NE(both.output.find("--inference"), std::string::npos) << both.output;
  const testing::CommandResult alone = accel("tpu estimate --model " + model + " --time-one-replica");
  expect_refused(alone, "--time-one-replica");
  EXPECT_NE(alone.output.find("--slice"), std::string::npos) << alone.output;
}

TEST(HostileInput, LayerNamesKerasRefusesAreRefusedAtTheirLine) {
  const std::filesystem::path folder = scratch_dir("names");
  std::filesystem::create_directories(folder);
  const std::filesystem::path file = folder / "slash.yaml";
  std::ofstream(file) << "name: slash\n"
                         "model:\n"
                         "  layers:\n"
                         "    - flatten\n"
                         "    - dense: {units: 10, name: head/logits}\n"
                         "data: {source: synthetic, shape: [4, 4], classes: 10, samples: 32, batch: 8}\n"
                         "training: {optimizer: sgd, loss: sparse_categorical_crossentropy}\n";
  const testing::CommandResult result = accel("validate " + file.string());
  expect_refused(result, "slash.yaml:5:");
  EXPECT_NE(result.output.find("contains '/'"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace accel::experiment
