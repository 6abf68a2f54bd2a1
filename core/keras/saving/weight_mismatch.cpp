// WeightMismatchReport: one message for all the faults of a load.
#include "weight_mismatch.hpp"

#include <accel/error.hpp>

#include <iostream>

namespace accel::keras::saving {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

std::string describe(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + " " + shape.to_string();
}

}  // namespace

void WeightMismatchReport::mismatched(const std::string& name, DType file_dtype, const Shape& file_shape,
                                      DType model_dtype, const Shape& model_shape) {
  mismatched_.push_back("'" + name + "' (file " + describe(file_dtype, file_shape) + ", model " +
                        describe(model_dtype, model_shape) + ")");
}

void WeightMismatchReport::raise_or_warn(const std::string& path, const std::string& model_name,
                                         bool skip_mismatch) const {
  if (empty()) return;
  std::string problems;
  if (!missing_.empty()) problems += "\n  missing from the file: " + join(missing_);
  if (!unexpected_.empty()) problems += "\n  not in the model: " + join(unexpected_);
  if (!mismatched_.empty()) problems += "\n  shape or dtype mismatch: " + join(mismatched_);
  const std::string message = "loading '" + path + "' into model '" + model_name + "':" + problems;
  if (!skip_mismatch) throw InvalidArgumentError(message + "\n(pass skip_mismatch to load the rest)");
  std::cerr << "WARNING: skipping mismatched weights when " << message << "\n";
}

}  // namespace accel::keras::saving
