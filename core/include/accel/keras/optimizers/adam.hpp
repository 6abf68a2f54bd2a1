// Adam (keras.optimizers.Adam) on the fused ops::adam_update, with Keras 2's
// "epsilon hat": lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) and
// var -= lr_t m / (sqrt(v) + epsilon), epsilon added to the uncorrected sqrt(v).
// Slots "m" and "v" per variable.
#pragma once

#include <accel/keras/optimizers/optimizer.hpp>

namespace accel::keras {

struct AdamOptions {
  LearningRate learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  GradientClipping clipping;
  std::string name = "Adam";
};

class Adam final : public Optimizer {
 public:
  explicit Adam(AdamOptions options = {});
  double beta_1() const noexcept { return beta_1_; }
  double beta_2() const noexcept { return beta_2_; }
  double epsilon() const noexcept { return epsilon_; }

 protected:
  void create_slots(const std::vector<Variable>& variables) override;
  void update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                       int64_t iteration) override;

 private:
  double beta_1_;
  double beta_2_;
  double epsilon_;
};

}  // namespace accel::keras
