#include <accel/keras/layers/global_average_pooling1d.hpp>

#include <accel/ops.hpp>

namespace accel::keras {

Tensor GlobalAveragePooling1D::call(const Tensor& inputs, bool) {
  compute_output_shape(inputs.shape().dims());  // the (batch, steps, features) check, with the layer's message
  return ops::reduce_mean(inputs, {1}, keepdims());
}

}  // namespace accel::keras
