// Minimum: the smallest of the inputs, as Keras's output = ops.minimum(output, inputs[i]) in list order.
#include <accel/keras/layers/minimum.hpp>

#include <accel/ops.hpp>

namespace accel::keras {

Tensor Minimum::merge(const std::vector<Tensor>& inputs) const {
  Tensor output = inputs.front();
  for (size_t index = 1; index < inputs.size(); ++index) output = ops::minimum(output, inputs[index]);
  return output;
}

}  // namespace accel::keras
