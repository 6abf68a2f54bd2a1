// AdamW: the decoupled weight decay as an SGD_UPDATE whose gradient is
// var * weight_decay, then Adam's fused update.
#include <accel/keras/optimizers/adamw.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <cmath>
#include <regex>

#include "../utils/constant_like.hpp"

namespace accel::keras {

AdamW::AdamW(AdamWOptions options)
    : Optimizer(options.name, std::move(options.learning_rate), options.clipping),
      weight_decay_(options.weight_decay),
      beta_1_(options.beta_1),
      beta_2_(options.beta_2),
      epsilon_(options.epsilon) {
  if (!std::isfinite(weight_decay_) || weight_decay_ < 0) {
    throw InvalidArgumentError("optimizer '" + name() + "': weight_decay must be a finite number >= 0, got " +
                               std::to_string(weight_decay_));
  }
}

void AdamW::exclude_from_weight_decay(const std::vector<Variable>& var_list,
                                      const std::vector<std::string>& var_names) {
  if (built_) {
    throw FailedPreconditionError("optimizer '" + name() +
                                  "': exclude_from_weight_decay() can only be called before the optimizer is built "
                                  "(its first update or build())");
  }
  for (const std::string& pattern : var_names) {
    try {
      (void)std::regex(pattern);
    } catch (const std::regex_error& error) {
      throw InvalidArgumentError("optimizer '" + name() + "': exclude_from_weight_decay var_names entry '" + pattern +
                                 "' is not a regular expression (" + error.what() + ")");
    }
  }
  excluded_variable_ids_.clear();
  for (const Variable& variable : var_list) excluded_variable_ids_.insert(variable.id());
  excluded_name_patterns_ = var_names;
}

bool AdamW::uses_weight_decay(const Variable& variable) const {
  if (excluded_variable_ids_.contains(variable.id())) return false;
  for (const std::string& pattern : excluded_name_patterns_) {
    if (std::regex_search(variable.name(), std::regex(pattern))) return false;
  }
  return true;
}

void AdamW::create_slots(const std::vector<Variable>& variables) {
  built_ = true;
  for (const Variable& variable : variables) {
    if (!decays_.contains(variable.id())) decays_.emplace(variable.id(), uses_weight_decay(variable));
  }
  // Keras creates every "m" before any "v"; variables() keeps that order.
  for (const Variable& variable : variables) add_slot(variable, "m");
  for (const Variable& variable : variables) add_slot(variable, "v");
}

void AdamW::update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                            int64_t iteration) {
  const Tensor value = variable.value();
  if (weight_decay_ != 0.0 && decays_.at(variable.id())) {
    // var -= lr * (var * wd): Keras's `variable.assign_sub(variable * wd * lr)`
    // with the product in the same order. An SGD_UPDATE so that the rate is
    // the one the optimizer refreshes before every compiled replay.
    const Tensor decay = ops::mul(value, detail::constant_like(weight_decay_, value));
    ops::sgd_update(value, decay, Tensor(), learning_rate);
  }
  ops::adam_update(value, slot(variable, "m").value(), slot(variable, "v").value(), gradient, learning_rate, beta_1_,
                   beta_2_, epsilon_, /*step=*/iteration + 1);
}

}  // namespace accel::keras
