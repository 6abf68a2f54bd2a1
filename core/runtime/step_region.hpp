// Which part of a training step the running ops belong to: the model layer
// whose call made them, and whether they compute that layer's gradient.
// Keras models open a region for each layer they call, a GradientTape keeps
// the region of every op it records and reopens it (as backward) while that
// op's gradient runs, and the tracer copies the current region onto each
// node: how rematerialization (graph/passes) tells a layer's activations and
// the backward ops that read them. Per thread. Internal to libaccel.
#pragma once

#include <cstdint>

namespace accel::detail {

struct StepRegion {
  int32_t layer = -1;     // -1: outside any layer call (losses, metrics, optimizers)
  bool backward = false;  // computes the gradient of the layer's ops
  // The call is a block of layers (CompileOptions::remat_blocks: a decoder
  // layer), one of a repeated series a TPU program runs as a loop.
  bool block = false;
};

// The innermost open region of this thread, or {-1, false}.
StepRegion current_step_region() noexcept;

// Opens `region` for its lifetime.
class StepRegionScope {
 public:
  explicit StepRegionScope(StepRegion region) noexcept;
  ~StepRegionScope();
  StepRegionScope(const StepRegionScope&) = delete;
  StepRegionScope& operator=(const StepRegionScope&) = delete;

  // A forward region for a new layer call, unique on this thread.
  static StepRegion next_layer_call() noexcept;

 private:
  StepRegion saved_;
};

}  // namespace accel::detail
