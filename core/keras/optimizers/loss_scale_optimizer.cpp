// LossScaleOptimizer: Keras 3's dynamic loss scaling, as ops (see the header).
#include <accel/keras/optimizers/loss_scale_optimizer.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <cmath>
#include <utility>

#include "../utils/constant_like.hpp"
#include "graph/trace_scopes.hpp"
#include "../utils/cast_to.hpp"

namespace accel::keras {
namespace {

using detail::constant_like;

// Every copy of these variables (one per replica for mirrored ones).
std::vector<Tensor> copies_of(const std::vector<Variable>& variables) {
  std::vector<Tensor> copies;
  for (const Variable& variable : variables) {
    for (size_t replica = 0; replica < variable.replica_count(); ++replica) {
      copies.push_back(variable.replica_value(replica));
    }
  }
  return copies;
}

// 0 when every element of every gradient is finite, NaN otherwise (x * 0 is
// NaN for inf and NaN), summed on the host: Keras's check_finite as ops.
Tensor non_finite_marker(const std::vector<std::vector<Tensor>>& per_replica_gradients, const Device& host) {
  Tensor marker;
  for (const std::vector<Tensor>& gradients : per_replica_gradients) {
    for (const Tensor& gradient : gradients) {
      const Tensor zero = constant_like(0.0, gradient);
      const Tensor part = ops::cast(ops::reduce_sum(ops::mul(gradient, zero)), DType::kFloat32).to(host);
      marker = marker.defined() ? ops::add(marker, part) : part;
    }
  }
  return marker;
}

}  // namespace

LossScaleOptimizer::LossScaleOptimizer(std::shared_ptr<Optimizer> inner_optimizer, LossScaleOptimizerOptions options)
    : Optimizer(options.name, 0.0, GradientClipping{}),
      inner_(std::move(inner_optimizer)),
      initial_scale_(options.initial_scale),
      dynamic_growth_steps_(options.dynamic_growth_steps) {
  if (!inner_) throw InvalidArgumentError("LossScaleOptimizer '" + name() + "': the inner optimizer is null");
  if (dynamic_cast<const LossScaleOptimizer*>(inner_.get()) != nullptr) {
    throw InvalidArgumentError("LossScaleOptimizer '" + name() + "': the inner optimizer '" + inner_->name() +
                               "' already scales the loss; wrap the optimizer once");
  }
  if (!(initial_scale_ > 0) || !std::isfinite(initial_scale_)) {
    throw InvalidArgumentError("LossScaleOptimizer '" + name() + "': initial_scale must be a positive finite number, got " +
                               std::to_string(initial_scale_));
  }
  if (dynamic_growth_steps_ < 1) {
    throw InvalidArgumentError("LossScaleOptimizer '" + name() + "': dynamic_growth_steps must be >= 1, got " +
                               std::to_string(dynamic_growth_steps_));
  }
  // On the host with the iteration count: read and written every step, small.
  DeviceScope on_host(find_device("/CPU:0"));
  step_counter_ = Variable(Tensor::scalar<int64_t>(0), name() + "/step_counter", /*trainable=*/false);
  dynamic_scale_ =
      Variable(Tensor::scalar<float>(static_cast<float>(initial_scale_)), name() + "/dynamic_scale", /*trainable=*/false);
  last_update_finite_ = Variable(Tensor::scalar<int64_t>(1), name() + "/last_update_finite", /*trainable=*/false);
}

double LossScaleOptimizer::dynamic_scale() const { return dynamic_scale_.value().item<float>(); }

int64_t LossScaleOptimizer::step_counter() const { return step_counter_.value().item<int64_t>(); }

std::vector<Variable> LossScaleOptimizer::variables() const {
  std::vector<Variable> all{step_counter_, dynamic_scale_};
  const std::vector<Variable> inner = inner_->variables();
  all.insert(all.end(), inner.begin(), inner.end());
  return all;
}

Tensor LossScaleOptimizer::scale_loss(const Tensor& loss) const {
  return ops::mul(loss, detail::cast_to(dynamic_scale_.value().to(loss.device()), loss.dtype()));
}

void LossScaleOptimizer::update_variable(const Variable& variable, const Tensor&, double, int64_t) {
  throw InternalError("LossScaleOptimizer '" + name() + "' updates no variable itself ('" + variable.name() +
                      "' goes to its inner optimizer)");
}

void LossScaleOptimizer::apply_gradients_per_replica(const std::vector<GradientsAndVariables>& per_replica) {
  if (per_replica.empty()) return;
  // The variables with a gradient (as the inner optimizer will see them).
  std::vector<Variable> variables;
  for (const auto& [gradient, variable] : per_replica.front()) {
    if (gradient.defined() && variable.defined()) variables.push_back(variable);
  }
  inner_->build(variables);  // the slots exist before they are saved below

  const Device host = find_device("/CPU:0");
  std::vector<std::vector<Tensor>> gradients(per_replica.size());
  for (size_t replica = 0; replica < per_replica.size(); ++replica) {
    for (const auto& [gradient, variable] : per_replica[replica]) {
      if (gradient.defined()) gradients[replica].push_back(gradient);
    }
  }
  const Tensor marker = non_finite_marker(gradients, host);
  const Tensor finite = marker.defined() ? ops::equal(marker, marker) : ops::fill({}, 1.0, DType::kBool);

  // What a skipped update leaves as it was: the weights and the inner slots
  // (the iteration count, on the host, is taken back below).
  std::vector<Variable> kept = variables;
  const std::vector<Variable> inner_variables = inner_->variables();
  kept.insert(kept.end(), inner_variables.begin() + 1, inner_variables.end());
  const std::vector<Tensor> current = copies_of(kept);
  std::vector<Tensor> previous;
  previous.reserve(current.size());
  for (const Tensor& tensor : current) {
    DeviceScope on_its_device(tensor.device());
    previous.push_back(ops::copy(tensor));
  }

  // Gradients divided by the scale the loss was multiplied by.
  const Tensor scale = dynamic_scale_.value();
  std::vector<GradientsAndVariables> unscaled = per_replica;
  for (GradientsAndVariables& pairs : unscaled) {
    for (auto& [gradient, variable] : pairs) {
      if (!gradient.defined()) continue;
      DeviceScope on_its_device(gradient.device());
      gradient = ops::div(gradient, detail::cast_to(scale.to(gradient.device()), gradient.dtype()));
    }
  }
  inner_->apply_gradients_per_replica(unscaled);

  for (size_t index = 0; index < current.size(); ++index) {
    DeviceScope on_its_device(current[index].device());
    Tensor target = current[index];
    target.assign(ops::select(finite.to(target.device()), current[index], previous[index]));
  }

  // Keras 3's schedule: after dynamic_growth_steps finite steps in a row the
  // scale doubles (and the count restarts); a non-finite step halves it.
  {
    DeviceScope on_host(host);
    const Tensor counter = step_counter_.value();
    const Tensor grow = ops::equal(counter, ops::fill({}, static_cast<double>(dynamic_growth_steps_ - 1), DType::kInt64));
    const Tensor zero = ops::zeros({}, DType::kInt64);
    const Tensor finite_counter = ops::select(grow, zero, ops::add(counter, ops::ones({}, DType::kInt64)));
    const Tensor finite_scale = ops::select(grow, ops::mul(scale, constant_like(2.0, scale)), scale);
    const Tensor next_counter = ops::select(finite, finite_counter, zero);
    const Tensor next_scale = ops::select(finite, finite_scale, ops::mul(scale, constant_like(0.5, scale)));
    step_counter_.assign(next_counter);
    dynamic_scale_.assign(next_scale);
    last_update_finite_.assign(ops::cast(finite, DType::kInt64));
  }
  // The inner optimizer counted the update it ran; a skipped one does not count.
  graph::run_host_work([this] {
    if (last_update_finite_.value().item<int64_t>() == 0) inner_->set_iterations(inner_->iterations() - 1);
  });
}

}  // namespace accel::keras
