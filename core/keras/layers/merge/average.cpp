// Average: Keras's sum in list order divided by the number of inputs (a
// division, not a multiplication by the reciprocal, so it rounds as Keras's).
#include <accel/keras/layers/average.hpp>

#include <accel/ops.hpp>

#include "../../utils/constant_like.hpp"

namespace accel::keras {

Tensor Average::merge(const std::vector<Tensor>& inputs) const {
  Tensor output = inputs.front();
  for (size_t index = 1; index < inputs.size(); ++index) output = ops::add(output, inputs[index]);
  return ops::div(output, detail::constant_like(static_cast<double>(inputs.size()), output));
}

}  // namespace accel::keras
