// ReduceLROnPlateau (keras.callbacks.ReduceLROnPlateau) with Keras 2's rules:
// at each epoch end it logs "lr"; then, with `current` the monitored value
// (missing: a warning), in cooldown it counts the cooldown down and resets
// the wait; an improvement (by more than min_delta) becomes the best and
// resets the wait; otherwise, outside cooldown, the wait grows, and at
// `patience` the learning rate becomes max(lr * factor, min_lr) (when lr is
// above min_lr), the cooldown starts and the wait resets.
// mode "auto": higher is better when the monitor's name contains "acc".
#pragma once

#include <accel/keras/callbacks/callback.hpp>

#include <string>

namespace accel::keras {

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  double factor = 0.1;  // must be below 1
  int patience = 10;
  int verbose = 0;
  std::string mode = "auto";  // "auto", "min" or "max"
  double min_delta = 1e-4;
  int cooldown = 0;
  double min_lr = 0.0;
};

class ReduceLROnPlateau final : public Callback {
 public:
  // InvalidArgumentError for factor >= 1 (Keras's ValueError).
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});

  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;

  int wait() const noexcept { return wait_; }
  double best() const noexcept { return best_; }

 private:
  void reset();
  bool improves(double current) const;

  ReduceLROnPlateauOptions options_;
  bool higher_is_better_ = false;
  double best_ = 0;
  int wait_ = 0;
  int cooldown_counter_ = 0;
};

}  // namespace accel::keras
