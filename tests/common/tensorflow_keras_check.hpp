// Asks TensorFlow whether it reads a .keras file accel wrote and computes
// accel's outputs: tools/keras_goldens/check_keras3_file.py, run with the
// TensorFlow 2.21 environment that bench/ scripts make
// (bench/.venv-tensorflow). Tests never need TensorFlow: without that
// environment there is nothing to ask, and the caller skips the check.
// Needs ACCEL_SOURCE_DIR defined to the source tree.
#pragma once

#include <accel/keras/saving/safetensors.hpp>
#include <accel/tensor.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace accel::testing {

struct TensorflowVerdict {
  int status = -1;     // the script's: 0 loads and agrees, 1 disagrees, 2 does not load
  std::string output;  // what it printed (the summary and the difference)
};

// nullopt when there is no TensorFlow environment. `x` and `y` are accel's
// input and output; they agree when max |model(x) - y| <= tolerance.
inline std::optional<TensorflowVerdict> check_keras_file_with_tensorflow(const std::string& keras_path,
                                                                        const Tensor& x, const Tensor& y,
                                                                        double tolerance = 1e-5) {
  const std::string source = ACCEL_SOURCE_DIR;
  const std::string python = source + "/bench/.venv-tensorflow/bin/python";
  if (!std::filesystem::exists(python)) return std::nullopt;
  const std::string forward = keras_path + ".forward.safetensors";
  const std::string log = keras_path + ".check.log";
  keras::saving::SafetensorsContents contents;
  contents.tensors = {keras::saving::stored_tensor("x", x), keras::saving::stored_tensor("y", y)};
  keras::saving::write_safetensors_file(forward, contents);
  const std::string command = "TF_CPP_MIN_LOG_LEVEL=3 CUDA_VISIBLE_DEVICES= " + python + " " + source +
                              "/tools/keras_goldens/check_keras3_file.py " + keras_path + " --forward " + forward +
                              " --tolerance " + std::to_string(tolerance) + " > " + log + " 2>&1";
  TensorflowVerdict verdict;
  const int status = std::system(command.c_str());
  verdict.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  verdict.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return verdict;
}

}  // namespace accel::testing
