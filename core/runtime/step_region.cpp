#include "runtime/step_region.hpp"

namespace accel::detail {
namespace {

thread_local StepRegion current_region;
thread_local int32_t layer_calls = 0;

}  // namespace

StepRegion current_step_region() noexcept { return current_region; }

StepRegionScope::StepRegionScope(StepRegion region) noexcept : saved_(current_region) { current_region = region; }

StepRegionScope::~StepRegionScope() { current_region = saved_; }

StepRegion StepRegionScope::next_layer_call() noexcept { return {.layer = layer_calls++, .backward = false}; }

}  // namespace accel::detail
