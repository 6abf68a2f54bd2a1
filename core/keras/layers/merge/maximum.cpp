// Maximum: the largest of the inputs, as Keras's output = ops.maximum(output, inputs[i]) in list order.
#include <accel/keras/layers/maximum.hpp>

#include <accel/ops.hpp>

namespace accel::keras {

Tensor Maximum::merge(const std::vector<Tensor>& inputs) const {
  Tensor output = inputs.front();
  for (size_t index = 1; index < inputs.size(); ++index) output = ops::maximum(output, inputs[index]);
  return output;
}

}  // namespace accel::keras
