// Learning-rate schedules (keras.optimizers.schedules, Keras 2 / tf.keras 2.15):
// CosineDecay (with Keras's optional linear warmup), ExponentialDecay and
// PiecewiseConstantDecay. Each is a value type callable with the iteration
// (the 0-based count of updates already applied), so it converts to a
// LearningRate: `AdamWOptions{.learning_rate = CosineDecay(1e-3, 1000)}`.
// The optimizer evaluates it on the host before every update, eagerly and
// before every replay of a compiled step. Rates are computed in double; Keras
// computes them in float32, which differs in the last bits only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace accel::keras {

struct CosineDecayOptions {
  // The floor of the decay as a fraction of the rate it decays from.
  double alpha = 0.0;
  // Without a target there is no warmup (Keras ignores warmup_steps then).
  std::optional<double> warmup_target;
  int64_t warmup_steps = 0;
};

// Linear warmup from initial_learning_rate to warmup_target over warmup_steps,
// then cosine decay over decay_steps from warmup_target (or, without a target,
// from initial_learning_rate):
//   rate = from * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step', decay_steps) / decay_steps)) + alpha)
// with step' = step - warmup_steps; after the decay the rate stays at from * alpha.
// InvalidArgumentError for decay_steps < 1, warmup_steps < 0, alpha outside
// [0, 1] or a negative or non-finite rate.
class CosineDecay {
 public:
  CosineDecay(double initial_learning_rate, int64_t decay_steps, CosineDecayOptions options = {});
  double operator()(int64_t step) const;

  double initial_learning_rate() const noexcept { return initial_learning_rate_; }
  int64_t decay_steps() const noexcept { return decay_steps_; }
  const CosineDecayOptions& options() const noexcept { return options_; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  CosineDecayOptions options_;
};

struct ExponentialDecayOptions {
  // Decays in whole intervals of decay_steps instead of continuously.
  bool staircase = false;
};

// rate = initial_learning_rate * decay_rate ^ (step / decay_steps), the
// exponent floored with staircase. InvalidArgumentError for decay_steps < 1,
// a decay_rate <= 0 or a negative or non-finite rate.
class ExponentialDecay {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                   ExponentialDecayOptions options = {});
  double operator()(int64_t step) const;

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double decay_rate_;
  ExponentialDecayOptions options_;
};

// values[0] while step <= boundaries[0], values[i] while
// boundaries[i - 1] < step <= boundaries[i], values.back() after the last
// boundary. InvalidArgumentError unless there is one value more than
// boundaries, at least one boundary, and the boundaries increase strictly.
class PiecewiseConstantDecay {
 public:
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values);
  double operator()(int64_t step) const;

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

}  // namespace accel::keras
