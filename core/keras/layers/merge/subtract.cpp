// Subtract: inputs[0] - inputs[1]; Keras requires exactly two inputs.
#include <accel/keras/layers/subtract.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

void Subtract::check_input_count(size_t count) const {
  if (count != 2) {
    throw InvalidArgumentError("A `Subtract` layer should be called on exactly 2 inputs ('" + name() + "' got " +
                               std::to_string(count) + ")");
  }
}

Tensor Subtract::merge(const std::vector<Tensor>& inputs) const { return ops::sub(inputs[0], inputs[1]); }

}  // namespace accel::keras
