#include <accel/keras/layers/permute.hpp>

#include "format_tuple.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <algorithm>
#include <numeric>

namespace accel::keras {

Permute::Permute(std::vector<int32_t> dims, std::string name)
    : Layer("Permute", std::move(name)), dims_(std::move(dims)) {
  std::vector<int32_t> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> expected(dims_.size());
  std::iota(expected.begin(), expected.end(), 1);
  if (sorted != expected) {
    throw InvalidArgumentError("Permute '" + this->name() + "': dims must be a permutation of 1.." +
                               std::to_string(dims_.size()) +
                               " (axes counted from 1, the batch axis left out), got " + format_tuple(dims_));
  }
}

LayerShape Permute::compute_output_shape(const LayerShape& input_shape) const {
  if (input_shape.size() != dims_.size() + 1) {
    throw InvalidArgumentError("Permute '" + name() + "' with dims " + format_tuple(dims_) +
                               " expects inputs of rank " + std::to_string(dims_.size() + 1) + " (the batch axis and " +
                               std::to_string(dims_.size()) + " more), got " + format_layer_shape(input_shape));
  }
  LayerShape output = input_shape;
  for (size_t i = 0; i < dims_.size(); ++i) output[i + 1] = input_shape[static_cast<size_t>(dims_[i])];
  return output;
}

Tensor Permute::call(const Tensor& inputs, bool) {
  compute_output_shape(inputs.shape().dims());  // the rank check, with the layer's own message
  std::vector<int32_t> permutation{0};
  permutation.insert(permutation.end(), dims_.begin(), dims_.end());
  return ops::transpose(inputs, std::move(permutation));
}

}  // namespace accel::keras
