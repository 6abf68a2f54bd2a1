// The compiled loss of a model of several outputs, as Keras's loss
// container: the one loss applied to every output, and their sum (tf.add_n),
// the total that is differentiated. Shared by the steps on one device
// (multiple_io_steps.cpp) and on each replica (distributed_steps.cpp).
#pragma once

#include <accel/keras/losses.hpp>
#include <accel/ops.hpp>

#include <vector>

namespace accel::keras::detail {

struct OutputLosses {
  std::vector<Tensor> each;  // one per output
  Tensor total;
};

inline OutputLosses output_losses(const Loss& loss, const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred) {
  OutputLosses losses;
  for (size_t output = 0; output < y_pred.size(); ++output) losses.each.push_back(loss(y_true[output], y_pred[output]));
  losses.total = losses.each.front();
  for (size_t output = 1; output < losses.each.size(); ++output) losses.total = ops::add(losses.total, losses.each[output]);
  return losses;
}

}  // namespace accel::keras::detail
