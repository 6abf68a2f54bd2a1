// The synthetic batch a TPU step estimate feeds its model (tpu_step_estimate,
// tpu_pod_estimate): what the step's timing depends on is its shapes.
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <string>

namespace accel::experiment {

// A batch of `shape`: uninitialized when the emulator keeps no values, zeros otherwise.
Tensor batch_of(const Shape& shape, DType dtype, const Device& device, bool timing_only);

// Labels for `loss` against a model output of `output_shape` (its batch
// dimension replaced by `batch`).
Tensor labels_for(const std::string& loss, const keras::LayerShape& output_shape, int64_t batch, const Device& device,
                  bool timing_only);

}  // namespace accel::experiment
