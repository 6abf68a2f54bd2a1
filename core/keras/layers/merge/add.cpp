// Add: the inputs summed in list order, as Keras's output += inputs[i].
#include <accel/keras/layers/add.hpp>

#include <accel/ops.hpp>

namespace accel::keras {

Tensor Add::merge(const std::vector<Tensor>& inputs) const {
  Tensor output = inputs.front();
  for (size_t index = 1; index < inputs.size(); ++index) output = ops::add(output, inputs[index]);
  return output;
}

}  // namespace accel::keras
