// ReduceLROnPlateau: tf.keras 2's on_epoch_end, step by step.
#include <accel/error.hpp>
#include <accel/keras/callbacks/reduce_lr_on_plateau.hpp>
#include <accel/keras/model.hpp>

#include <algorithm>
#include <iostream>
#include <limits>

#include "monitor_direction.hpp"

namespace accel::keras {

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options) : options_(std::move(options)) {
  if (options_.factor >= 1.0) {
    throw InvalidArgumentError("ReduceLROnPlateau does not support a factor >= 1.0. Got " +
                               std::to_string(options_.factor));
  }
  reset();
}

void ReduceLROnPlateau::reset() {
  if (options_.mode != "auto" && options_.mode != "min" && options_.mode != "max") {
    std::cerr << "WARNING: Learning rate reduction mode " << options_.mode << " is unknown, fallback to auto mode.\n";
    options_.mode = "auto";
  }
  higher_is_better_ = options_.mode == "max" ||
                      (options_.mode == "auto" && options_.monitor.find("acc") != std::string::npos);
  best_ = higher_is_better_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  cooldown_counter_ = 0;
  wait_ = 0;
}

bool ReduceLROnPlateau::improves(double current) const {
  return higher_is_better_ ? current > best_ + options_.min_delta : current < best_ - options_.min_delta;
}

void ReduceLROnPlateau::on_train_begin(const Logs&) { reset(); }

void ReduceLROnPlateau::on_epoch_end(int epoch, Logs& logs) {
  Optimizer& optimizer = model().optimizer();
  logs["lr"] = optimizer.learning_rate();
  const auto found = logs.find(options_.monitor);
  if (found == logs.end()) {
    std::cerr << "WARNING: Learning rate reduction is conditioned on metric `" << options_.monitor
              << "` which is not available. Available metrics are: " << detail::available_log_names(logs) << "\n";
    return;
  }
  const double current = found->second;
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (improves(current)) {
    best_ = current;
    wait_ = 0;
    return;
  }
  if (cooldown_counter_ > 0 || ++wait_ < options_.patience) return;
  // Keras compares the rate as float32 against min_lr.
  const double old_lr = optimizer.learning_rate();
  if (static_cast<float>(old_lr) > static_cast<float>(options_.min_lr)) {
    const double new_lr = std::max(old_lr * options_.factor, options_.min_lr);
    optimizer.set_learning_rate(new_lr);
    if (options_.verbose > 0) {
      std::cout << "\nEpoch " << epoch + 1 << ": ReduceLROnPlateau reducing learning rate to " << new_lr << ".\n";
    }
    cooldown_counter_ = options_.cooldown;
    wait_ = 0;
  }
}

}  // namespace accel::keras
