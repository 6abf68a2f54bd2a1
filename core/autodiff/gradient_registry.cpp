#include <accel/autodiff/gradient_registry.hpp>

#include <accel/error.hpp>

#include "gradients/builtin_gradients.hpp"

namespace accel::autodiff {

GradientRegistry& GradientRegistry::global() {
  static GradientRegistry registry;
  return registry;
}

// Registered by explicit calls rather than static initializers: objects of a
// static library that nothing references are dropped by the linker.
GradientRegistry::GradientRegistry() : entries_(static_cast<size_t>(kReshapeOp) + 1) {
  register_linear_algebra_gradients(*this);
  register_unary_gradients(*this);
  register_binary_gradients(*this);
  register_reduction_gradients(*this);
  register_normalization_gradients(*this);
  register_data_movement_gradients(*this);
  register_not_differentiable_ops(*this);
}

GradientRegistry::Entry& GradientRegistry::entry(int32_t op) {
  if (op < 0) throw InvalidArgumentError("GradientRegistry: negative op code " + std::to_string(op));
  if (static_cast<size_t>(op) >= entries_.size()) entries_.resize(static_cast<size_t>(op) + 1);
  return entries_[static_cast<size_t>(op)];
}

void GradientRegistry::register_gradient(int32_t op, std::string_view op_name,
                                         GradientFunction function) {
  Entry& registered = entry(op);
  registered = Entry{Kind::kDifferentiable, std::string(op_name), std::move(function)};
}

void GradientRegistry::register_not_differentiable(int32_t op, std::string_view op_name) {
  Entry& registered = entry(op);
  registered = Entry{Kind::kNotDifferentiable, std::string(op_name), {}};
}

GradientRegistry::Kind GradientRegistry::kind(int32_t op) const {
  if (op < 0 || static_cast<size_t>(op) >= entries_.size()) return Kind::kUnregistered;
  return entries_[static_cast<size_t>(op)].kind;
}

const GradientFunction& GradientRegistry::gradient_function(int32_t op) const {
  if (kind(op) != Kind::kDifferentiable) {
    throw UnimplementedError("no gradient is registered for op " + op_name(op) +
                             (kind(op) == Kind::kNotDifferentiable ? " (it is not differentiable)"
                                                                   : ""));
  }
  return entries_[static_cast<size_t>(op)].function;
}

std::string GradientRegistry::op_name(int32_t op) const {
  if (kind(op) == Kind::kUnregistered) return "op #" + std::to_string(op);
  return entries_[static_cast<size_t>(op)].name;
}

}  // namespace accel::autodiff
