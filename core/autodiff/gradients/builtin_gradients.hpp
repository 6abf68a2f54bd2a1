// The gradients of op set v1, one registration function per op family (one
// source file each). Internal to accel_autodiff; called by GradientRegistry.
#pragma once

#include <accel/autodiff/gradient_registry.hpp>

namespace accel::autodiff {

void register_linear_algebra_gradients(GradientRegistry& registry);  // matmul, conv, pooling
void register_unary_gradients(GradientRegistry& registry);
void register_binary_gradients(GradientRegistry& registry);          // incl. select, *_backward
void register_reduction_gradients(GradientRegistry& registry);       // incl. softmax family
void register_normalization_gradients(GradientRegistry& registry);   // batch norm
void register_data_movement_gradients(GradientRegistry& registry);   // cast, layout, gather
void register_not_differentiable_ops(GradientRegistry& registry);

}  // namespace accel::autodiff
