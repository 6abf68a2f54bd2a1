// EarlyStopping: tf.keras 2.13-2.15's on_epoch_end, step by step.
#include <accel/keras/callbacks/early_stopping.hpp>
#include <accel/keras/model.hpp>

#include <iostream>

#include "monitor_direction.hpp"

namespace accel::keras {

EarlyStopping::EarlyStopping(EarlyStoppingOptions options) : options_(std::move(options)) {
  higher_is_better_ = detail::resolve_early_stopping_direction("EarlyStopping", options_.monitor, options_.mode) ==
                      detail::MonitorDirection::kHigherIsBetter;
  // Keras: min_delta = abs(min_delta), negated when lower is better.
  signed_min_delta_ = higher_is_better_ ? std::abs(options_.min_delta) : -std::abs(options_.min_delta);
}

void EarlyStopping::on_train_begin(const Logs&) {
  // Reset, so one instance can serve several fits.
  wait_ = 0;
  stopped_epoch_ = 0;
  best_ = higher_is_better_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  best_weights_.reset();
  best_epoch_ = 0;
}

bool EarlyStopping::is_improvement(double value, double reference) const {
  return higher_is_better_ ? value - signed_min_delta_ > reference : value - signed_min_delta_ < reference;
}

void EarlyStopping::on_epoch_end(int epoch, Logs& logs) {
  const auto found = logs.find(options_.monitor);
  if (found == logs.end()) {
    std::cerr << "WARNING: Early stopping conditioned on metric `" << options_.monitor
              << "` which is not available. Available metrics are: " << detail::available_log_names(logs) << "\n";
    return;
  }
  if (epoch < options_.start_from_epoch) return;
  const double current = found->second;
  // With no improvement ever, the weights after the first watched epoch are the ones restored.
  if (options_.restore_best_weights && !best_weights_) snapshot_weights();

  ++wait_;
  if (is_improvement(current, best_)) {
    best_ = current;
    best_epoch_ = epoch;
    if (options_.restore_best_weights) snapshot_weights();
    // Only restart waiting when beating both the baseline and the previous best.
    if (!options_.baseline || is_improvement(current, *options_.baseline)) wait_ = 0;
    return;
  }
  // Only after the first epoch.
  if (wait_ >= options_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model().set_stop_training(true);
    if (options_.restore_best_weights && best_weights_) {
      if (options_.verbose > 0) {
        std::cout << "Restoring model weights from the end of the best epoch: " << best_epoch_ + 1 << ".\n";
      }
      restore_snapshot();
    }
  }
}

void EarlyStopping::on_train_end(const Logs&) {
  if (stopped_epoch_ > 0 && options_.verbose > 0) std::cout << "Epoch " << stopped_epoch_ + 1 << ": early stopping\n";
}

void EarlyStopping::snapshot_weights() {
  std::vector<std::vector<uint8_t>> snapshot;
  for (const Variable& weight : model().weights()) {
    const Tensor& value = weight.value();
    std::vector<uint8_t>& bytes = snapshot.emplace_back(static_cast<size_t>(value.element_count()) * dtype_size(value.dtype()));
    if (!bytes.empty()) value.copy_to_host(bytes.data());
  }
  best_weights_ = std::move(snapshot);
}

void EarlyStopping::restore_snapshot() {
  const std::vector<Variable> weights = model().weights();
  for (size_t index = 0; index < weights.size() && index < best_weights_->size(); ++index) {
    Variable weight = weights[index];
    weight.assign(Tensor::from_host((*best_weights_)[index].data(), weight.shape(), weight.dtype(), weight.device()));
  }
}

}  // namespace accel::keras
