// The program each process of the sharded multi-process tests runs: the
// zoo's small decoder fitted for 20 steps (5 epochs of 4 batches of 4) under
// keras.distribution, each process holding 2 logical CPU devices.
//
//   sharded_training_worker MODE [key=value ...]
//     MODE single          one device, no distribution (the reference)
//          data_parallel   DataParallel over every process's devices (4 across 2 processes)
//          model_parallel  ModelParallel, FSDP over "data" (across processes) x tensor
//                          parallelism over "model" (within each), a 2 x 2 mesh
//          bad_meshes      meshes the processes cannot split: prints "refused: <message>" for each
//     output=PATH          writes the losses (one line), then each weight (a line each), as hex floats
//     timeout_ms=30000     the collectives' bound
//     exit_at_step=N       dies (exit code 9, no clean-up) after step N, as a crashed process would
//
// Every mode but single joins the cluster in TF_CONFIG. Prints "done" at the
// end; on failure "error: <message>" on stderr and exit code 3.
#include "worker_options.hpp"

#include <accel/accel.hpp>
#include <accel/config.hpp>
#include <accel/distribute/initialize_distribution.hpp>
#include <accel/distribute/tf_config_cluster_resolver.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/distribution/processes.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "../common/batch_losses.hpp"
#include "../models/small_decoder.hpp"

namespace {

using namespace accel;
namespace kd = accel::keras::distribution;

class ExitAtStep final : public keras::Callback {
 public:
  explicit ExitAtStep(int64_t step) : step_(step) {}
  void on_train_batch_end(int64_t, const keras::Logs&) override {
    if (++steps_ == step_) {
      std::fflush(stdout);
      std::_Exit(9);
    }
  }

 private:
  int64_t step_;
  int64_t steps_ = 0;
};

// The decoder fitted under `distribution` (null: on one device) from the same seed.
std::pair<std::shared_ptr<keras::Model>, std::vector<double>> fit_decoder(
    std::shared_ptr<const kd::Distribution> distribution, int32_t rows, int64_t batch_size,
    std::vector<std::shared_ptr<keras::Callback>> callbacks = {}) {
  DeviceScope on_cpu("/CPU:0");
  std::shared_ptr<keras::Model> model = model_zoo::compiled_decoder(model_zoo::small_decoder(), std::move(distribution));
  const auto [x, y] = model_zoo::pattern_batch(rows);
  auto losses = std::make_shared<testing::BatchLosses>();
  callbacks.insert(callbacks.begin(), losses);
  model->fit(x, y, {.epochs = 5, .batch_size = batch_size, .verbose = 0, .callbacks = callbacks, .shuffle = false});
  return {model, losses->losses};
}

void write_result(const keras::Model& model, const std::vector<double>& losses, const std::string& path) {
  std::ofstream out(path);
  for (double loss : losses) out << std::hexfloat << loss << ' ';
  out << '\n';
  for (const Variable& weight : model.weights()) {
    for (float value : weight.value().to_vector<float>()) out << std::hexfloat << value << ' ';
    out << '\n';
  }
}

std::shared_ptr<const kd::Distribution> model_parallel(const std::vector<std::string>& devices) {
  kd::LayoutMap layout_map(kd::DeviceMesh({2, 2}, {"data", "model"}, devices));
  layout_map.set("(query|key|value)/kernel$", kd::TensorLayout{{"data", "model", std::nullopt}});
  layout_map.set("attention_output/kernel$", kd::TensorLayout{{"model", std::nullopt, "data"}});
  layout_map.set("mlp_in/kernel$", kd::TensorLayout{{"data", "model"}});
  layout_map.set("mlp_out/kernel$", kd::TensorLayout{{"model", "data"}});
  return std::make_shared<kd::ModelParallel>(layout_map, "data");
}

// Each mesh fitted in turn; what refuses it is printed.
void try_bad_meshes() {
  const std::vector<std::string> devices = kd::list_devices("CPU");
  const std::vector<std::vector<std::string>> meshes = {
      {devices[0], devices[1], devices[2]},  // 3 devices over 2 processes
      {devices[0], devices[1], "/job:worker/replica:0/task:2/device:CPU:0", "/job:worker/replica:0/task:2/device:CPU:1"},
  };
  for (const std::vector<std::string>& mesh : meshes) {
    try {
      fit_decoder(std::make_shared<kd::DataParallel>(mesh), 12, static_cast<int64_t>(mesh.size()) * 2);
      std::printf("accepted\n");
    } catch (const InvalidArgumentError& error) {
      std::printf("refused: %s\n", error.what());
    }
  }
}

int run(const std::string& mode, std::map<std::string, std::string> options) {
  auto option = [&](const char* key, const char* fallback) {
    return options.contains(key) ? options[key] : std::string(fallback);
  };
  if (mode != "single") {
    const distribute::TFConfigClusterResolver resolver;
    const std::chrono::milliseconds timeout(std::stoll(option("timeout_ms", "30000")));
    distribute::initialize_distribution(resolver, {.timeout = timeout});
  }
  std::shared_ptr<const kd::Distribution> distribution;
  if (mode == "data_parallel") {
    distribution = std::make_shared<kd::DataParallel>();  // every process's devices, as Keras's default
  } else if (mode == "model_parallel") {
    distribution = model_parallel(kd::list_devices("CPU"));
  } else if (mode == "bad_meshes") {
    try_bad_meshes();
    std::printf("done\n");
    return 0;
  } else if (mode != "single") {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::vector<std::shared_ptr<keras::Callback>> callbacks;
  if (options.contains("exit_at_step")) {
    callbacks.push_back(std::make_shared<ExitAtStep>(std::stoll(options["exit_at_step"])));
  }
  const auto [model, losses] = fit_decoder(distribution, 16, 4, callbacks);
  if (options.contains("output")) write_result(*model, losses, options["output"]);
  distribute::shutdown_distribution();
  std::printf("done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s single|data_parallel|model_parallel|bad_meshes [key=value ...]\n", argv[0]);
    return 2;
  }
  const std::optional<std::map<std::string, std::string>> parsed = accel::testing::worker_options(argc, argv);
  if (!parsed) return 2;
  std::map<std::string, std::string> options = *parsed;
  try {
    // Two devices in each process, split before the runtime starts.
    config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0),
                                             std::vector<config::LogicalDeviceConfiguration>(2));
    return run(argv[1], options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    std::fflush(stderr);
    return 3;
  }
}
