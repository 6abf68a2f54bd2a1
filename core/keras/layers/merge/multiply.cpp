// Multiply: the inputs multiplied in list order, as Keras's output *= inputs[i].
#include <accel/keras/layers/multiply.hpp>

#include <accel/ops.hpp>

namespace accel::keras {

Tensor Multiply::merge(const std::vector<Tensor>& inputs) const {
  Tensor output = inputs.front();
  for (size_t index = 1; index < inputs.size(); ++index) output = ops::mul(output, inputs[index]);
  return output;
}

}  // namespace accel::keras
