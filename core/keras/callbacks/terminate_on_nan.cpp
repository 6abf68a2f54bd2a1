#include <accel/keras/callbacks/terminate_on_nan.hpp>
#include <accel/keras/model.hpp>

#include <cmath>
#include <iostream>

namespace accel::keras {

void TerminateOnNaN::on_train_batch_end(int64_t batch, const Logs& logs) {
  const auto loss = logs.find("loss");
  if (loss == logs.end() || std::isfinite(loss->second)) return;
  std::cout << "Batch " << batch << ": Invalid loss, terminating training\n";
  model().set_stop_training(true);
}

}  // namespace accel::keras
