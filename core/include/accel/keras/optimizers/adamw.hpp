// AdamW (keras.optimizers.AdamW, tf.keras 2.15): Adam with decoupled weight
// decay. Before Adam's step each variable not excluded decays as Keras's
// `_apply_weight_decay` does, var -= lr * weight_decay * var, with the rate of
// this update (a schedule's too); then ADAM_UPDATE runs as for Adam (epsilon on
// the uncorrected sqrt(v)). Both are ops, so a compiled step keeps them in its
// graph and refreshes the rate of each before every replay. Slots "m" and "v"
// per variable, as Adam's.
#pragma once

#include <accel/keras/optimizers/optimizer.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace accel::keras {

struct AdamWOptions {
  LearningRate learning_rate = 0.001;
  double weight_decay = 0.004;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  GradientClipping clipping;
  std::string name = "AdamW";
};

class AdamW final : public Optimizer {
 public:
  // InvalidArgumentError for a negative or non-finite weight_decay.
  explicit AdamW(AdamWOptions options = {});

  // Keras's exclude_from_weight_decay(var_list, var_names): these variables,
  // and every variable whose name contains a match of one of the patterns
  // (Python's re.search, here ECMAScript regular expressions: a plain name
  // such as "bias" or "layer_normalization" matches as a substring), are not
  // decayed. Each call replaces the previous lists. Only before the optimizer
  // is built (its first update or build()): FailedPreconditionError after,
  // InvalidArgumentError for a pattern that is not a regular expression.
  void exclude_from_weight_decay(const std::vector<Variable>& var_list = {},
                                 const std::vector<std::string>& var_names = {});

  double weight_decay() const noexcept { return weight_decay_; }
  double beta_1() const noexcept { return beta_1_; }
  double beta_2() const noexcept { return beta_2_; }
  double epsilon() const noexcept { return epsilon_; }
  // Whether updates decay `variable` (Keras's _use_weight_decay).
  bool uses_weight_decay(const Variable& variable) const;

 protected:
  void create_slots(const std::vector<Variable>& variables) override;
  void update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                       int64_t iteration) override;

 private:
  double weight_decay_;
  double beta_1_;
  double beta_2_;
  double epsilon_;
  bool built_ = false;
  std::set<uint64_t> excluded_variable_ids_;
  std::vector<std::string> excluded_name_patterns_;
  // Variable id -> decayed, decided once when its slots are made (the
  // exclusions cannot change after that), so updates do not match names.
  std::map<uint64_t, bool> decays_;
};

}  // namespace accel::keras
