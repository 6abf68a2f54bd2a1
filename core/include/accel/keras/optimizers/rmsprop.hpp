// RMSprop (keras.optimizers.RMSprop) on the fused ops::rmsprop_update, with
// Keras 2's two places of epsilon: without momentum
// var -= lr g / (sqrt(ms) + epsilon); with momentum
// mom = momentum mom + lr g / sqrt(ms + epsilon) (ms less mg^2 when centered).
// Slots "rms", then "momentum" (momentum > 0), then "mg" (centered).
#pragma once

#include <accel/keras/optimizers/optimizer.hpp>

namespace accel::keras {

struct RMSpropOptions {
  LearningRate learning_rate = 0.001;
  double rho = 0.9;
  double momentum = 0.0;
  double epsilon = 1e-7;
  bool centered = false;
  GradientClipping clipping;
  std::string name = "RMSprop";
};

class RMSprop final : public Optimizer {
 public:
  explicit RMSprop(RMSpropOptions options = {});
  double rho() const noexcept { return rho_; }
  double momentum() const noexcept { return momentum_; }
  double epsilon() const noexcept { return epsilon_; }
  bool centered() const noexcept { return centered_; }

 protected:
  void create_slots(const std::vector<Variable>& variables) override;
  void update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                       int64_t iteration) override;

 private:
  double rho_;
  double momentum_;
  double epsilon_;
  bool centered_;
};

}  // namespace accel::keras
