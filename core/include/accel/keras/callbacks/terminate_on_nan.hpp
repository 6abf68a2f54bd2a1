// TerminateOnNaN (keras.callbacks.TerminateOnNaN): after any training batch
// whose logged loss is NaN or infinite, prints "Batch B: Invalid loss,
// terminating training" and stops training.
#pragma once

#include <accel/keras/callbacks/callback.hpp>

namespace accel::keras {

class TerminateOnNaN final : public Callback {
 public:
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
};

}  // namespace accel::keras
