// The program each process of the multi-worker training tests runs: the
// tutorial CNN trained with Keras fit on synthetic images, either on one
// replica (the reference) or under MultiWorkerMirroredStrategy with the
// cluster from TF_CONFIG.
//
//   multi_worker_training_worker single|multi_worker [key=value ...]
//     weights=PATH      the chief writes the trained weights there (one line of floats per weight)
//     steps=50          steps per epoch (global batch 8)
//     epochs=1
//     pause_ms=0        sleep after each step (so a test can kill a worker mid-training)
//     timeout_ms=30000  the collectives' bound
//     backup=DIR        train with BackupAndRestore(DIR, save_freq) ...
//     save_freq=N       ... saving every N steps as well as at each epoch end
//     profile=1         record the run with the profiler and print
//                       "collective records N": the host-timed all-reduces
//
// Prints "ready <rank>" once the cluster joined, "epoch E step S" after every
// step and "first step E S" for the first step it trains (after a restore it
// is not 0 0); on failure "error: <message>" on stderr and exit code 3.
#include "worker_options.hpp"

#include <accel/accel.hpp>
#include <accel/distribute/multi_worker_mirrored_strategy.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/distribute/tf_config_cluster_resolver.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/losses.hpp>
#include <accel/profiler.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "strategy_test_support.hpp"

namespace {

using namespace accel;
using namespace accel::distribute;
using namespace accel::distribute::testing;

constexpr int64_t kGlobalBatch = 8;

class ProgressPrinter final : public keras::Callback {
 public:
  explicit ProgressPrinter(int pause_ms) : pause_ms_(pause_ms) {}
  void on_epoch_begin(int epoch, const keras::Logs&) override { epoch_ = epoch; }
  void on_train_batch_end(int64_t batch, const keras::Logs&) override {
    if (!printed_first_) {
      std::printf("first step %d %lld\n", epoch_, static_cast<long long>(batch));
      printed_first_ = true;
    }
    std::printf("epoch %d step %lld\n", epoch_, static_cast<long long>(batch));
    std::fflush(stdout);
    if (pause_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms_));
  }

 private:
  int pause_ms_;
  int epoch_ = 0;
  bool printed_first_ = false;
};

void write_weights(const keras::Model& model, const std::string& path) {
  std::ofstream out(path);
  for (const std::vector<float>& weight : weight_values(model)) {
    for (float value : weight) out << std::hexfloat << value << ' ';
    out << '\n';
  }
}

int train(const std::string& mode, std::map<std::string, std::string> options) {
  auto option = [&](const char* key, const char* fallback) {
    return options.contains(key) ? options[key] : std::string(fallback);
  };
  const int64_t steps = std::stoll(option("steps", "50"));
  const int epochs = std::stoi(option("epochs", "1"));
  keras::set_random_seed(1234);

  std::unique_ptr<Strategy> strategy;
  if (mode == "single") {
    strategy = std::make_unique<OneDeviceStrategy>("/CPU:0");
  } else {
    const TFConfigClusterResolver resolver;
    CommunicationOptions communication;
    communication.timeout = std::chrono::milliseconds(std::stoll(option("timeout_ms", "30000")));
    strategy = std::make_unique<MultiWorkerMirroredStrategy>(resolver, communication);
  }
  std::printf("ready %d\n", strategy->worker_index());
  std::fflush(stdout);

  std::shared_ptr<keras::Sequential> model;
  {
    auto scope = strategy->scope();
    model = make_tutorial_cnn();
    model->compile(make_optimizer(OptimizerKind::kSgd),
                   std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                   {"accuracy"});
  }
  const SyntheticImages data = synthetic_images(steps * kGlobalBatch);
  keras::FitOptions fit{.epochs = epochs, .batch_size = kGlobalBatch, .verbose = 0, .seed = 5};
  fit.callbacks.push_back(std::make_shared<ProgressPrinter>(std::stoi(option("pause_ms", "0"))));
  if (options.contains("backup")) {
    keras::BackupAndRestoreOptions backup;
    if (options.contains("save_freq")) backup.save_freq = std::stoll(options["save_freq"]);
    fit.callbacks.push_back(std::make_shared<keras::BackupAndRestore>(options["backup"], backup));
  }
  const bool profile = option("profile", "0") == "1";
  if (profile) profiler::start();
  model->fit(data.images, data.labels, fit);
  if (profile) {
    profiler::stop();
    const std::string replica_device = find_device("/CPU:0").name();  // the worker's one replica
    int collectives = 0;
    for (const profiler::OpRecord& record : profiler::records()) {
      collectives += record.op == "AllReduce" && record.category == "collective" &&
                     record.time_source == profiler::TimeSource::kWall && record.bytes_accessed > 0 &&
                     record.duration_seconds >= 0 && record.device == replica_device;
    }
    std::printf("collective records %d\n", collectives);
  }
  if (options.contains("weights") && strategy->is_chief()) write_weights(*model, options["weights"]);
  std::printf("done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s single|multi_worker [key=value ...]\n", argv[0]);
    return 2;
  }
  const std::optional<std::map<std::string, std::string>> parsed = accel::testing::worker_options(argc, argv);
  if (!parsed) return 2;
  std::map<std::string, std::string> options = *parsed;
  try {
    return train(argv[1], options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    std::fflush(stderr);
    return 3;
  }
}
