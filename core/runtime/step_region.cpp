#include "runtime/step_region.hpp"

#include <cstdint>

namespace accel::detail {
namespace {

thread_local StepRegion current_region;
thread_local int32_t layer_calls = 0;

}  // namespace

StepRegion current_step_region() noexcept { return current_region; }

StepRegionScope::StepRegionScope(StepRegion region) noexcept : saved_(current_region) { current_region = region; }

StepRegionScope::~StepRegionScope() { current_region = saved_; }

StepRegion StepRegionScope::next_layer_call() noexcept {
  const int32_t layer = layer_calls;
  layer_calls = layer_calls == INT32_MAX ? 0 : layer_calls + 1;  // eager training calls layers forever
  return {.layer = layer, .backward = false};
}

}  // namespace accel::detail
