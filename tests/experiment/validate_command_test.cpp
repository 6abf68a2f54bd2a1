// `accel validate` as a user runs it: a subprocess, exit code 0 with
// "FILE: OK (...)" or 2 with one error line on stderr.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout then stderr
};

Result run_cli(const std::string& arguments) {
  const std::string command = std::string(ACCEL_CLI_PATH) + " " + arguments + " 2>&1";
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

using accel::experiment::testing::source_path;

TEST(ValidateCommand, ValidFilePrintsItsRuns) {
  const Result result = run_cli("validate " + source_path("configs/quickstart.yaml"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("OK (4 runs: cpu, tpu_v4, tpu_v4_eager, gpu)"), std::string::npos) << result.output;
}

TEST(ValidateCommand, MalformedFilesExitTwoWithOneLine) {
  for (const char* name : {"unknown_top_level_key", "yaml_syntax_error", "binary_garbage", "alias_bomb",
                           "conv_after_flatten", "unknown_device_type", "huge_integer"}) {
    const std::string path = source_path(std::string("tests/experiment/malformed/") + name + ".yaml");
    const Result result = run_cli("validate " + path);
    EXPECT_EQ(result.exit_code, 2) << name << ": " << result.output;
    EXPECT_EQ(result.output.rfind(path + ":", 0), 0u) << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

TEST(ValidateCommand, SetOverridesAndTheirErrors) {
  const std::string file = source_path("configs/tutorial_mlp.yaml");
  EXPECT_EQ(run_cli("validate " + file + " --set training.epochs=2 --set data.batch=128").exit_code, 0);
  const Result result = run_cli("validate " + file + " --set training.epochs=0");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output.rfind("override 'training.epochs=0':1:17: ", 0), 0u) << result.output;
}

TEST(ValidateCommand, TpuWhatIfsGetTheTimingLibrarysFullCheck) {
  // 8 KiB of VMEM cannot hold a 128x128 MXU tile: only the TPU timing
  // library knows that rule, and the command wires it in.
  const Result result = run_cli("validate " + source_path("configs/sweep_array_sizes.yaml") +
                                " --set 'tpu.hardware.core.vmem_bytes=8 KiB'");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("not valid"), std::string::npos) << result.output;
}

TEST(ValidateCommand, ATpuHardwareValueOutOfRangeIsReportedWhereItIsWritten) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("accel_validate_hardware_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "name: hw\n"
                         "model: {layers: [{flatten: {input_shape: [28, 28]}}, {dense: {units: 10}}]}\n"
                         "data: {source: fashion_mnist}\n"
                         "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n"
                         "device: /TPU:0\n"
                         "tpu:\n"
                         "  preset: tpu_v4\n"
                         "  hardware:\n"
                         "    hbm:\n"
                         "      bandwidth_bytes_per_s: .nan\n";
  const Result result = run_cli("validate " + file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find(file.string() + ":10:30: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("'hbm.bandwidth_bytes_per_s' is '.nan', not a finite number"), std::string::npos)
      << result.output;
}

}  // namespace
