// LossScaleOptimizer (keras.mixed_precision.LossScaleOptimizer, Keras 3):
// dynamic loss scaling around another optimizer, for float16 training, whose
// small gradients would otherwise underflow to zero. The training step
// differentiates the loss times the scale (scale_loss); an update divides the
// gradients by the scale and, when every one is finite, lets the inner
// optimizer apply them and counts the step (after dynamic_growth_steps finite
// steps in a row the scale doubles); when any is not, nothing changes but the
// scale, which halves. Model::compile wraps its optimizer in one under the
// mixed_float16 policy, as Keras does.
//
// The update-or-skip choice is made by ops (every variable and slot ends as a
// select between its updated and its previous value), not by reading the
// gradients on the host, so that a compiled step keeps it in its graph; the
// price is one copy of the weights and slots per step.
#pragma once

#include <accel/keras/optimizers/optimizer.hpp>

#include <memory>
#include <string>

namespace accel::keras {

struct LossScaleOptimizerOptions {
  double initial_scale = 32768.0;  // 2^15, Keras's default
  int64_t dynamic_growth_steps = 2000;
  std::string name = "loss_scale_optimizer";
};

class LossScaleOptimizer final : public Optimizer {
 public:
  explicit LossScaleOptimizer(std::shared_ptr<Optimizer> inner_optimizer, LossScaleOptimizerOptions options = {});

  const std::shared_ptr<Optimizer>& inner_optimizer() const noexcept { return inner_; }
  double initial_scale() const noexcept { return initial_scale_; }
  int64_t dynamic_growth_steps() const noexcept { return dynamic_growth_steps_; }
  // The scale now, and the finite steps counted since it last changed.
  double dynamic_scale() const;
  int64_t step_counter() const;

  Tensor scale_loss(const Tensor& loss) const override;
  void apply_gradients_per_replica(const std::vector<GradientsAndVariables>& per_replica) override;

  // The inner optimizer's count, rate and slots (Keras's LossScaleOptimizer forwards them).
  int64_t iterations() const override { return inner_->iterations(); }
  void set_iterations(int64_t count) override { inner_->set_iterations(count); }
  double learning_rate() const override { return inner_->learning_rate(); }
  void set_learning_rate(LearningRate learning_rate) override { inner_->set_learning_rate(std::move(learning_rate)); }
  const Variable& slot(const Variable& variable, const std::string& slot_name) const override {
    return inner_->slot(variable, slot_name);
  }
  // The step counter and the scale, then the inner optimizer's variables (Keras 3's order).
  std::vector<Variable> variables() const override;

 protected:
  void create_slots(const std::vector<Variable>& variables) override { inner_->build(variables); }
  // Never called: the inner optimizer updates the variables.
  void update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                       int64_t iteration) override;

 private:
  std::shared_ptr<Optimizer> inner_;
  double initial_scale_;
  int64_t dynamic_growth_steps_;
  Variable step_counter_;   // int64 scalar on the host
  Variable dynamic_scale_;  // float32 scalar on the host
  // Whether the last update's gradients were all finite (int64 0/1, host), for
  // the host work that takes back a skipped update's iteration.
  Variable last_update_finite_;
};

}  // namespace accel::keras
