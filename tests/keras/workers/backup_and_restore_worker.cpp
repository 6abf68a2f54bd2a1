// A training process for the kill-and-resume test (callbacks_backup_and_restore_test.cpp):
// trains a small CNN classifier on fixed data on /CPU:0 with BackupAndRestore
// saving every few batches, then writes the final weights.
//
//   backup_and_restore_worker <backup_dir> <final_weights.safetensors> [step_delay_ms] [eager|compiled] [device]
//
// compiled trains with compiled steps (CompileOptions::jit_compile), whose
// first step after every (re)start traces; device is /CPU:0 unless given.
//
// It also writes <final_weights>.start: "<epoch> <batch>" of the first batch
// it trained, so the test can tell a resumed run from a fresh one. The delay
// after each batch gives the test time to kill it mid-epoch.
#include <accel/keras/backend.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/placement.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <thread>

namespace keras = accel::keras;
using accel::Shape;
using accel::Tensor;

namespace {

constexpr int64_t kSamples = 96, kSide = 6, kFeatures = kSide * kSide, kClasses = 3;

// Records where the run started and slows every batch down.
class StartRecorder final : public keras::Callback {
 public:
  StartRecorder(std::string path, int delay_ms) : path_(std::move(path)), delay_ms_(delay_ms) {}
  void on_epoch_begin(int epoch, const keras::Logs&) override { epoch_ = epoch; }
  void on_train_batch_begin(int64_t batch, const keras::Logs&) override {
    if (recorded_) return;
    std::ofstream(path_) << epoch_ << " " << batch << "\n";
    recorded_ = true;
  }
  void on_train_batch_end(int64_t, const keras::Logs&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
  }

 private:
  std::string path_;
  int delay_ms_;
  int epoch_ = 0;
  bool recorded_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " <backup_dir> <final_weights.safetensors> [step_delay_ms] [eager|compiled] [device]\n";
    return 2;
  }
  const std::string backup_dir = argv[1];
  const std::string final_weights = argv[2];
  const int delay_ms = argc > 3 ? std::stoi(argv[3]) : 0;
  const bool compiled = argc > 4 && std::string(argv[4]) == "compiled";
  const std::string device = argc > 5 ? argv[5] : "/CPU:0";
  try {
    accel::DeviceScope on_device(device);
    keras::set_random_seed(42);
    std::vector<float> x(kSamples * kFeatures);
    std::vector<int32_t> y(kSamples);
    for (int64_t i = 0; i < kSamples; ++i) {
      for (int64_t f = 0; f < kFeatures; ++f) x[i * kFeatures + f] = static_cast<float>(std::sin(1.3 * i + 0.7 * f));
      y[i] = static_cast<int32_t>((i * 7) % kClasses);
    }
    // A small CNN (the tutorial's layers): its compiled step fuses the
    // convolution's epilogue and rounds unlike the eager ops.
    keras::Sequential model({std::make_shared<keras::Conv2D>(4, 3, keras::Conv2DOptions{.activation = "relu"}),
                             std::make_shared<keras::MaxPooling2D>(), std::make_shared<keras::Flatten>(),
                             std::make_shared<keras::Dense>(12, keras::DenseOptions{.activation = "relu"}),
                             std::make_shared<keras::Dense>(kClasses, keras::DenseOptions{.activation = "softmax"})});
    model.build({keras::kUnknownDim, kSide, kSide, 1});
    model.compile("adam", "sparse_categorical_crossentropy", {"accuracy"}, {.jit_compile = compiled});
    model.fit(Tensor::from_vector<float>(x, Shape{kSamples, kSide, kSide, 1}), Tensor::from_vector<int32_t>(y, Shape{kSamples}),
              {.epochs = 3,
               .batch_size = 8,
               .verbose = 0,
               .callbacks = {std::make_shared<keras::BackupAndRestore>(backup_dir,
                                                                       keras::BackupAndRestoreOptions{.save_freq = 5}),
                             std::make_shared<StartRecorder>(final_weights + ".start", delay_ms)},
               .shuffle = true,
               .seed = 1234});
    model.save_weights(final_weights);
  } catch (const std::exception& error) {
    std::cerr << "backup_and_restore_worker: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
