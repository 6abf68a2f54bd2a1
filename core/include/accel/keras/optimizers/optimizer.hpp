// Optimizer: the base of Keras 2's optimizers (tf.keras.optimizers.legacy,
// i.e. OptimizerV2, the class behind "adam"/"sgd"/"rmsprop" through TF 2.10).
// apply_gradients clips the gradients (clipvalue, then per-variable clipnorm,
// then global_clipnorm), creates slot variables on first sight of a variable,
// runs one fused update per variable with the learning rate at the current
// iteration, and then increments `iterations`.
#pragma once

#include <accel/autodiff/variable.hpp>
#include <accel/tensor.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accel::keras {

// keras.optimizers.schedules.LearningRateSchedule: the rate at an iteration
// (0-based count of updates already applied).
using LearningRateSchedule = std::function<double(int64_t iteration)>;

// A constant rate or a schedule; converts implicitly from both, so options
// read `.learning_rate = 0.1` or `.learning_rate = [](int64_t step) {...}`.
class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}  // NOLINT(google-explicit-constructor)
  template <typename Schedule>
    requires std::invocable<Schedule, int64_t> && (!std::convertible_to<Schedule, double>)
  LearningRate(Schedule schedule)  // NOLINT(google-explicit-constructor)
      : schedule_(std::move(schedule)) {}

  double at(int64_t iteration) const { return schedule_ ? schedule_(iteration) : value_; }
  bool is_schedule() const noexcept { return static_cast<bool>(schedule_); }

 private:
  double value_ = 0.0;
  LearningRateSchedule schedule_;
};

// Gradient clipping as Keras 2's optimizer arguments. clipnorm clips each
// gradient to that L2 norm by itself (tf.clip_by_norm); global_clipnorm clips
// all of them together (tf.clip_by_global_norm); both at once is an error.
struct GradientClipping {
  std::optional<double> clipvalue;
  std::optional<double> clipnorm;
  std::optional<double> global_clipnorm;
};

using GradientsAndVariables = std::vector<std::pair<Tensor, Variable>>;
class Optimizer;

// The tf.distribute hook. Inside a strategy's replica function (core/distribute/),
// apply_gradients does not update at once: it hands this replica's pairs to the
// aggregator the strategy installed on the replica's thread, which sums each
// gradient over the replicas and calls apply_gradients_per_replica once.
class CrossReplicaGradientAggregator {
 public:
  virtual ~CrossReplicaGradientAggregator() = default;
  // Called on every replica's thread; returns once the update has run.
  virtual void apply_across_replicas(Optimizer& optimizer, const GradientsAndVariables& replica_gradients) = 0;
};

// Installs `aggregator` on this thread while it lives (null: none).
class CrossReplicaGradientAggregatorScope {
 public:
  explicit CrossReplicaGradientAggregatorScope(CrossReplicaGradientAggregator* aggregator);
  ~CrossReplicaGradientAggregatorScope();
  CrossReplicaGradientAggregatorScope(const CrossReplicaGradientAggregatorScope&) = delete;
  CrossReplicaGradientAggregatorScope& operator=(const CrossReplicaGradientAggregatorScope&) = delete;

 private:
  CrossReplicaGradientAggregator* previous_;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update step: each (gradient, variable) pair; undefined gradients are
  // skipped, as Keras does (all undefined is InvalidArgumentError).
  void apply_gradients(const std::vector<std::pair<Tensor, Variable>>& gradients_and_variables);

  // One update step from every replica's gradients, already aggregated across
  // replicas: one list per replica, the same variables in the same order,
  // list r on replica r's device. Slots are created once, the iteration
  // counts once, and replica r's copy of each (mirrored) variable is updated
  // with list r. What CrossReplicaGradientAggregator implementations call.
  virtual void apply_gradients_per_replica(const std::vector<GradientsAndVariables>& per_replica);

  // The loss the training step differentiates (Keras 3's optimizer.scale_loss):
  // the loss itself, or scaled up by a LossScaleOptimizer.
  virtual Tensor scale_loss(const Tensor& loss) const { return loss; }

  // "Adam", "SGD", "RMSprop": the prefix of the slot and iteration variables.
  const std::string& name() const noexcept { return name_; }
  // Updates applied so far (the "<name>/iter:0" variable).
  virtual int64_t iterations() const;
  // Sets the count (Keras's optimizer.iterations.assign), e.g. to take back
  // an update that a loss scale skipped.
  virtual void set_iterations(int64_t count);
  // The rate the next update uses (a schedule evaluated at iterations()).
  virtual double learning_rate() const;
  // Replaces the rate (or schedule), as assigning optimizer.learning_rate in
  // Keras does; what LearningRateScheduler-like callbacks call.
  virtual void set_learning_rate(LearningRate learning_rate) { learning_rate_ = std::move(learning_rate); }
  const GradientClipping& clipping() const noexcept { return clipping_; }
  // Whether the rate is a schedule (a function of the iteration) rather than a number.
  bool has_learning_rate_schedule() const noexcept { return learning_rate_.is_schedule(); }

  // The optimizer's state for checkpoints, in Keras's order: the iteration
  // counter, then the slots in creation order ("Adam/dense/kernel/m:0", ...).
  virtual std::vector<Variable> variables() const;
  // Creates the slots of `variables` now instead of on the first update (as
  // Keras's optimizer.build), so that a checkpoint can be restored into them.
  void build(const std::vector<Variable>& variables) { create_slots(variables); }
  // The slot `slot_name` of `variable`; NotFoundError when there is none.
  virtual const Variable& slot(const Variable& variable, const std::string& slot_name) const;

 protected:
  Optimizer(std::string name, LearningRate learning_rate, GradientClipping clipping);

  // Creates (with add_slot) the slots the variables lack, in Keras's order.
  virtual void create_slots(const std::vector<Variable>& variables) = 0;
  // The fused update of one variable; `iteration` is 0-based (Adam's step is iteration + 1).
  virtual void update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                               int64_t iteration) = 0;
  // A zero, non-trainable slot "<optimizer>/<variable>/<slot>:0" on the
  // variable's device; does nothing if the slot exists.
  void add_slot(const Variable& variable, const std::string& slot_name);

 private:
  std::vector<Tensor> clip(std::vector<Tensor> gradients) const;
  // The pairs with a gradient, checked; InvalidArgumentError as apply_gradients documents.
  std::pair<std::vector<Tensor>, std::vector<Variable>> pairs_with_gradients(
      const GradientsAndVariables& gradients_and_variables) const;

  std::string name_;
  LearningRate learning_rate_;
  GradientClipping clipping_;
  Variable iterations_;
  std::vector<Variable> slots_in_creation_order_;
  // (variable id, slot name) -> slot.
  std::map<std::pair<uint64_t, std::string>, Variable> slots_;
};

}  // namespace accel::keras
