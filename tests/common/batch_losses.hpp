// A Keras callback that keeps fit's running loss after every batch, for the
// tests that compare two trainings step by step (compiled against eager).
#pragma once

#include <accel/keras/callbacks/callback.hpp>

#include <cstdint>
#include <vector>

namespace accel::testing {

class BatchLosses final : public keras::Callback {
 public:
  void on_train_batch_end(int64_t, const keras::Logs& logs) override { losses.push_back(logs.at("loss")); }
  std::vector<double> losses;
};

}  // namespace accel::testing
