// Internal: what loading weights found wrong (missing, unexpected and
// mis-shaped tensors), collected across the whole file so that one error
// names every fault, or, with skip_mismatch, one warning names what was skipped.
// Shared by the safetensors checkpoints and Keras 3's .weights.h5.
#pragma once

#include <accel/dtype.hpp>
#include <accel/shape.hpp>

#include <string>
#include <vector>

namespace accel::keras::saving {

class WeightMismatchReport {
 public:
  void missing(const std::string& name) { missing_.push_back("'" + name + "'"); }
  void unexpected(const std::string& name) { unexpected_.push_back("'" + name + "'"); }
  void mismatched(const std::string& name, DType file_dtype, const Shape& file_shape, DType model_dtype,
                  const Shape& model_shape);
  bool empty() const { return missing_.empty() && unexpected_.empty() && mismatched_.empty(); }

  // Nothing when empty; else InvalidArgumentError naming the file, the model
  // and every fault, or (skip_mismatch) the same as a warning on stderr.
  void raise_or_warn(const std::string& path, const std::string& model_name, bool skip_mismatch) const;

 private:
  std::vector<std::string> missing_;
  std::vector<std::string> unexpected_;
  std::vector<std::string> mismatched_;
};

}  // namespace accel::keras::saving
