// Shared by the end-to-end tests of `accel run`: running a command, reading
// files, a scratch folder per test under the system's temporary folder,
// finding a run in results.json, and whether Fashion-MNIST is installed.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace accel::experiment::testing {

struct CommandResult {
  int code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buffer{};
  while (size_t read = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.output.append(buffer.data(), read);
  const int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether the Fashion-MNIST files are where accel looks for them
// ($ACCEL_FASHION_MNIST_DIR, else Debian's folder), for tests that skip without them.
inline bool have_fashion_mnist() {
  const char* dir = std::getenv("ACCEL_FASHION_MNIST_DIR");
  return std::filesystem::exists(std::filesystem::path(dir ? dir : "/usr/share/datasets/fashion-mnist") /
                                 "train-images-idx3-ubyte.gz");
}

// An empty (not yet created) folder `name` in this process's scratch folder.
inline std::filesystem::path scratch_dir(const std::string& name) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("accel_experiment_run_test_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir.parent_path());
  return dir;
}

// The run of that name in a results.json document.
inline const nlohmann::json& run_named(const nlohmann::json& document, const std::string& name) {
  for (const nlohmann::json& run : document["runs"]) {
    if (run["name"] == name) return run;
  }
  throw std::runtime_error("no run " + name);
}

}  // namespace accel::experiment::testing
