// SGD (keras.optimizers.SGD): plain, momentum or Nesterov momentum, on the
// fused ops::sgd_update. With momentum it keeps one "momentum" slot per variable.
#pragma once

#include <accel/keras/optimizers/optimizer.hpp>

namespace accel::keras {

struct SGDOptions {
  LearningRate learning_rate = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  GradientClipping clipping;
  std::string name = "SGD";
};

class SGD final : public Optimizer {
 public:
  explicit SGD(SGDOptions options = {});
  double momentum() const noexcept { return momentum_; }
  bool nesterov() const noexcept { return nesterov_; }

 protected:
  void create_slots(const std::vector<Variable>& variables) override;
  void update_variable(const Variable& variable, const Tensor& gradient, double learning_rate,
                       int64_t iteration) override;

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace accel::keras
