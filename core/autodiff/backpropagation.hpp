// Reverse-mode differentiation over a tape's records: from the gradients of
// the targets back to the sources. Internal to accel_autodiff.
#pragma once

#include <accel/autodiff/gradient_tape.hpp>
#include <accel/autodiff/recorded_op.hpp>
#include <accel/device.hpp>

#include "runtime/step_region.hpp"

#include <span>
#include <vector>

namespace accel::autodiff::detail {

// One recorded op, the device it ran on (its gradient runs there too, as
// TensorFlow colocates gradients with their ops) and the step region it ran
// in (its gradient runs in that region, as backward).
struct TapeEntry {
  RecordedOp op;
  Device device;
  accel::detail::StepRegion region;
};

// `entries` in execution order; `output_gradients` one per target, of its
// shape. Returns one gradient per source.
std::vector<Tensor> backpropagate(std::span<const TapeEntry> entries,
                                  const std::vector<Tensor>& targets,
                                  const std::vector<Tensor>& output_gradients,
                                  const std::vector<Tensor>& sources,
                                  UnconnectedGradients unconnected_gradients);

}  // namespace accel::autodiff::detail
