// The learning-rate schedules of schedules.hpp, following
// keras/optimizers/schedules/learning_rate_schedule.py (tf.keras 2.15).
#include <accel/keras/optimizers/schedules.hpp>

#include <accel/error.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

namespace accel::keras {
namespace {

void check_rate(const char* schedule, const char* what, double rate) {
  if (!std::isfinite(rate) || rate < 0) {
    throw InvalidArgumentError(std::string(schedule) + ": " + what + " must be a finite rate >= 0, got " +
                               std::to_string(rate));
  }
}

void check_decay_steps(const char* schedule, int64_t decay_steps) {
  if (decay_steps < 1) {
    throw InvalidArgumentError(std::string(schedule) + ": decay_steps must be at least 1, got " +
                               std::to_string(decay_steps));
  }
}

}  // namespace

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, CosineDecayOptions options)
    : initial_learning_rate_(initial_learning_rate), decay_steps_(decay_steps), options_(options) {
  check_rate("CosineDecay", "initial_learning_rate", initial_learning_rate_);
  check_decay_steps("CosineDecay", decay_steps_);
  if (!(options_.alpha >= 0 && options_.alpha <= 1)) {
    throw InvalidArgumentError("CosineDecay: alpha (the floor as a fraction of the rate) must be in [0, 1], got " +
                               std::to_string(options_.alpha));
  }
  if (options_.warmup_target) check_rate("CosineDecay", "warmup_target", *options_.warmup_target);
  if (options_.warmup_steps < 0) {
    throw InvalidArgumentError("CosineDecay: warmup_steps must be >= 0, got " + std::to_string(options_.warmup_steps));
  }
}

double CosineDecay::operator()(int64_t step) const {
  const double decay_steps = static_cast<double>(decay_steps_);
  auto decayed_from = [&](double rate, double decay_step) {
    const double cosine_decayed = 0.5 * (1.0 + std::cos(std::numbers::pi * decay_step / decay_steps));
    return rate * ((1.0 - options_.alpha) * cosine_decayed + options_.alpha);
  };
  if (!options_.warmup_target) {
    return decayed_from(initial_learning_rate_, std::min(static_cast<double>(step), decay_steps));
  }
  const double warmup_steps = static_cast<double>(options_.warmup_steps);
  const double clamped = std::min(static_cast<double>(step), decay_steps + warmup_steps);
  if (clamped < warmup_steps) {
    const double target = *options_.warmup_target;
    return (target - initial_learning_rate_) * (clamped / warmup_steps) + initial_learning_rate_;
  }
  return decayed_from(*options_.warmup_target, clamped - warmup_steps);
}

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                                   ExponentialDecayOptions options)
    : initial_learning_rate_(initial_learning_rate),
      decay_steps_(decay_steps),
      decay_rate_(decay_rate),
      options_(options) {
  check_rate("ExponentialDecay", "initial_learning_rate", initial_learning_rate_);
  check_decay_steps("ExponentialDecay", decay_steps_);
  if (!std::isfinite(decay_rate_) || decay_rate_ <= 0) {
    throw InvalidArgumentError("ExponentialDecay: decay_rate must be a finite number > 0, got " +
                               std::to_string(decay_rate_));
  }
}

double ExponentialDecay::operator()(int64_t step) const {
  double exponent = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (options_.staircase) exponent = std::floor(exponent);
  return initial_learning_rate_ * std::pow(decay_rate_, exponent);
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  if (boundaries_.empty() || values_.size() != boundaries_.size() + 1) {
    throw InvalidArgumentError("PiecewiseConstantDecay: expected at least one boundary and one value more than "
                               "boundaries, got " + std::to_string(boundaries_.size()) + " boundaries and " +
                               std::to_string(values_.size()) + " values");
  }
  for (size_t i = 1; i < boundaries_.size(); ++i) {
    if (boundaries_[i] <= boundaries_[i - 1]) {
      throw InvalidArgumentError("PiecewiseConstantDecay: boundaries must increase strictly, got " +
                                 std::to_string(boundaries_[i - 1]) + " then " + std::to_string(boundaries_[i]));
    }
  }
  for (const double value : values_) check_rate("PiecewiseConstantDecay", "every value", value);
}

double PiecewiseConstantDecay::operator()(int64_t step) const {
  // The first boundary not below the step: a step equal to a boundary still
  // takes the value before it (Keras's `x <= boundary`).
  const auto interval = std::lower_bound(boundaries_.begin(), boundaries_.end(), step);
  return values_[static_cast<size_t>(interval - boundaries_.begin())];
}

}  // namespace accel::keras
