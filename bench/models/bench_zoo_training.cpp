// Training throughput of the model zoo's Fashion-MNIST models
// (examples/model_zoo: resnet_small_28x28, vit_fashion_mnist with 4x4
// patches) on /CPU:0, through the user's path, Model::fit, eager and with
// jit_compile; compare_pytorch.sh runs it beside torch_zoo_training.py.
//
//   bench_zoo_training [--model resnet_small_28x28|vit_fashion_mnist] [--batch 128]
//                      [--steps 10] [--windows 5] [--warmup 1] [--samples 60000]
//                      [--modes eager,jit] [--profile] [--top 15]
//
// Throughput: one model per mode (same seed, same weights), compiled with
// Adam (lr 1e-3, epsilon 1e-7) and sparse_categorical_crossentropy on the
// softmax output, with the accuracy metric, as the zoo trains them. Each
// window is one fit() call of `steps` batches of `batch` (steps_per_epoch);
// a callback times the epoch from its begin to its end, so fit's own setup is
// outside the window. The modes' windows alternate (eager, jit, eager, jit,
// ...) so both see the same machine load; the first `warmup` windows of each
// (the compiled mode's first step traces and compiles) are dropped and the
// median window is printed per mode on a line that starts with "RESULT".
// Data: the Fashion-MNIST training images (x / 255), loaded before any
// timing; uniform random images when the dataset is not installed.
// Threads: ACCEL_CPU_THREADS (compare_pytorch.sh sets 2).
//
// --profile: after `warmup` windows, `steps` steps of each mode under
// accel::profiler; the device time of every op, summed by op name, per step.
// --breakdown MatMul,Fusion splits those ops' calls by their size (FLOPs and
// bytes per call, which tell the shapes apart).
#include "model_zoo.hpp"

#include <accel/data/fashion_mnist.hpp>
#include <accel/error.hpp>
#include <accel/function.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/optimizers/adam.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>
#include <accel/runtime.hpp>

#include "median.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <vector>

namespace keras = accel::keras;
namespace zoo = accel::model_zoo;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string model = "resnet_small_28x28";
  int64_t batch = 128;
  int64_t steps = 10;
  int windows = 5;
  int warmup = 1;
  int64_t samples = 60000;
  std::vector<std::string> modes{"eager", "jit"};
  bool profile = false;
  int top = 15;
  std::vector<std::string> breakdown;  // ops whose calls --profile splits by size
};

// CLI11 with the flags the comparison script passes; a bad value exits 2.
Args parse_args(int argc, char** argv) {
  Args args;
  CLI::App app{"Model zoo training throughput (samples/s), eager and compiled, beside PyTorch"};
  app.add_option("--model", args.model, "a 28x28x1 image model of the zoo")
      ->check(CLI::IsMember({"resnet_small_28x28", "vit_fashion_mnist"}));
  app.add_option("--batch", args.batch)->check(CLI::PositiveNumber);
  app.add_option("--steps", args.steps, "steps per window")->check(CLI::PositiveNumber);
  app.add_option("--windows", args.windows)->check(CLI::PositiveNumber);
  app.add_option("--warmup", args.warmup, "epochs of warm-up")->check(CLI::NonNegativeNumber);
  app.add_option("--samples", args.samples)->check(CLI::PositiveNumber);
  app.add_option("--modes", args.modes, "eager, jit or both")
      ->delimiter(',')
      ->check(CLI::IsMember({"eager", "jit"}));
  app.add_flag("--profile", args.profile, "per-op costs of one window");
  app.add_option("--top", args.top, "--profile: ops listed");
  app.add_option("--breakdown", args.breakdown, "--profile: ops whose calls are split by size")->delimiter(',');
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error) == 0 ? 0 : 2);
  }
  return args;
}

struct Data {
  accel::Tensor images;  // [N, 28, 28, 1] float32 in [0, 1]
  accel::Tensor labels;  // [N] int32
  bool real = false;
};

Data load_data(int64_t samples) {
  accel::DeviceScope on_host("/CPU:0");
  Data data;
  try {
    const accel::data::FashionMnist mnist = accel::data::load_fashion_mnist();
    samples = std::min(samples, mnist.train_images.shape().dim(0));
    data.images = accel::ops::slice(mnist.train_images, {0, 0, 0}, {samples, 28, 28});
    data.labels = accel::ops::slice(mnist.train_labels, {0}, {samples});
    data.real = true;
  } catch (const accel::NotFoundError&) {
    data.images = accel::ops::random_uniform(accel::Shape{samples, 28, 28}, 7);
    std::vector<int32_t> labels(static_cast<size_t>(samples));
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>((i * 7919) % 10);
    data.labels = accel::Tensor::from_vector(labels, accel::Shape{samples});
  }
  data.images = data.images.reshape(accel::Shape{-1, 28, 28, 1});
  return data;
}

std::shared_ptr<keras::Model> make_model(const std::string& name, bool jit) {
  keras::set_random_seed(1);
  std::shared_ptr<keras::Model> model = zoo::build_model(name);
  model->compile(std::make_shared<keras::Adam>(keras::AdamOptions{.learning_rate = 1e-3, .epsilon = 1e-7}),
                 "sparse_categorical_crossentropy", {"accuracy"}, {.jit_compile = jit});
  return model;
}

int64_t parameter_count(const std::vector<accel::Variable>& weights) {
  int64_t count = 0;
  for (const accel::Variable& weight : weights) count += weight.shape().element_count();
  return count;
}

// Times the (one) epoch of a fit call, after waiting for the device's queued work.
class EpochTimer : public keras::Callback {
 public:
  void on_epoch_begin(int, const keras::Logs&) override {
    accel::runtime::synchronize();
    begin_ = Clock::now();
  }
  void on_epoch_end(int, keras::Logs& logs) override {
    accel::runtime::synchronize();
    seconds = std::chrono::duration<double>(Clock::now() - begin_).count();
    loss = logs.count("loss") ? logs.at("loss") : 0.0;
  }
  double seconds = 0.0;
  double loss = 0.0;

 private:
  Clock::time_point begin_;
};

struct Run {
  std::string mode;
  std::shared_ptr<keras::Model> model;
  std::vector<double> rates;  // samples/s of the timed windows
  double loss = 0.0;
};

// One window: `steps` batches in one fit call; returns its seconds.
double train_window(Run& run, const Data& data, const Args& args) {
  auto timer = std::make_shared<EpochTimer>();
  run.model->fit(data.images, data.labels,
                 {.epochs = 1, .batch_size = args.batch, .verbose = 0, .callbacks = {timer},
                  .steps_per_epoch = args.steps});
  run.loss = timer->loss;
  return timer->seconds;
}

void print_profile(Run& run, const Data& data, const Args& args) {
  accel::profiler::start();
  const auto begin = Clock::now();
  run.model->fit(data.images, data.labels,
                 {.epochs = 1, .batch_size = args.batch, .verbose = 0, .steps_per_epoch = args.steps});
  accel::runtime::synchronize();
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  accel::profiler::stop();
  struct Cost {
    double seconds = 0;
    double calls = 0;
    double flops = 0;
  };
  std::map<std::string, Cost> by_op;
  double inside_ops = 0;
  const std::vector<accel::profiler::OpRecord> records = accel::profiler::records();
  for (const accel::profiler::OpRecord& record : records) {
    Cost& cost = by_op[record.op];
    cost.seconds += record.duration_seconds;
    cost.calls += 1;
    cost.flops += record.flops;
    inside_ops += record.duration_seconds;
  }
  std::vector<std::pair<std::string, Cost>> sorted(by_op.begin(), by_op.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  const auto steps = static_cast<double>(args.steps);
  std::printf("\nprofile %s %s batch %lld: %.2f ms/step wall, %.2f ms/step inside ops (%.0f%%), %.0f ops/step, "
              "%zu distinct ops\n",
              args.model.c_str(), run.mode.c_str(), static_cast<long long>(args.batch), 1e3 * wall / steps,
              1e3 * inside_ops / steps, 100.0 * inside_ops / wall, static_cast<double>(records.size()) / steps,
              by_op.size());
  std::printf("%-36s %10s %8s %7s %8s\n", "op", "ms/step", "calls", "share", "GFLOP/s");
  const size_t shown = std::min(sorted.size(), static_cast<size_t>(std::max(args.top, 0)));
  for (size_t i = 0; i < shown; ++i) {
    const auto& [op, cost] = sorted[i];
    std::printf("%-36s %10.3f %8.1f %6.1f%% %8.1f\n", op.c_str(), 1e3 * cost.seconds / steps, cost.calls / steps,
                100.0 * cost.seconds / wall, cost.seconds > 0 ? cost.flops / cost.seconds / 1e9 : 0.0);
  }
  double rest = 0;
  for (size_t i = shown; i < sorted.size(); ++i) rest += sorted[i].second.seconds;
  if (shown < sorted.size()) {
    char others[48];
    std::snprintf(others, sizeof others, "(%zu other ops)", sorted.size() - shown);
    std::printf("%-36s %10.3f %8s %6.1f%%\n", others, 1e3 * rest / steps, "", 100.0 * rest / wall);
  }
  std::printf("%-36s %10.3f %8s %6.1f%%\n", "(outside ops: dispatch, host work)", 1e3 * (wall - inside_ops) / steps, "",
              100.0 * (wall - inside_ops) / wall);

  for (const std::string& op : args.breakdown) {
    std::map<std::pair<double, double>, Cost> by_size;  // (FLOPs, bytes) per call
    for (const accel::profiler::OpRecord& record : records) {
      // "Fusion" also names "Fusion (FUSED_ELEMENTWISE)": the TensorFlow name alone will do.
      if (record.op != op && record.op.rfind(op + " (", 0) != 0) continue;
      Cost& cost = by_size[{record.flops, record.bytes_accessed}];
      cost.seconds += record.duration_seconds;
      cost.calls += 1;
      cost.flops += record.flops;
    }
    std::vector<std::pair<std::pair<double, double>, Cost>> sizes(by_size.begin(), by_size.end());
    std::sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::printf("%s by size:\n%14s %14s %10s %8s %8s %8s\n", op.c_str(), "MFLOP/call", "KB/call", "ms/step", "calls",
                "GFLOP/s", "GB/s");
    for (const auto& [size, cost] : sizes) {
      std::printf("%14.3f %14.1f %10.3f %8.1f %8.1f %8.1f\n", size.first / 1e6, size.second / 1e3,
                  1e3 * cost.seconds / steps, cost.calls / steps, cost.flops / cost.seconds / 1e9,
                  size.second * cost.calls / cost.seconds / 1e9);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    const Data data = load_data(args.samples);  // before any timing
    accel::DeviceScope device("/CPU:0");
    std::vector<Run> runs;
    for (const std::string& mode : args.modes) runs.push_back({mode, make_model(args.model, mode == "jit"), {}, 0.0});

    for (int window = 0; window < args.warmup; ++window) {
      for (Run& run : runs) train_window(run, data, args);
    }
    if (args.profile) {
      for (Run& run : runs) print_profile(run, data, args);
      return 0;
    }
    for (int window = 0; window < args.windows; ++window) {
      for (Run& run : runs) {
        run.rates.push_back(static_cast<double>(args.steps * args.batch) / train_window(run, data, args));
      }
    }

    const char* threads = std::getenv("ACCEL_CPU_THREADS");
    const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
    for (const Run& run : runs) {
      const double rate = accel::bench::median(run.rates);
      std::printf("%s windows (samples/s):", run.mode.c_str());
      for (double r : run.rates) std::printf(" %.0f", r);
      std::printf("\n");
      std::string compiled;
      if (run.mode == "jit") {
        const accel::Function* function = run.model->train_function();
        if (function == nullptr) {
          compiled = " compiled=none";
        } else {
          const accel::FunctionStatistics statistics = function->statistics();
          std::string reason = statistics.eager_reason;  // one field of the RESULT line
          std::replace(reason.begin(), reason.end(), ' ', '_');
          compiled = " traced_ops=" + std::to_string(statistics.traced_ops) +
                     " compiled_ops=" + std::to_string(statistics.compiled_ops) +
                     " fusions=" + std::to_string(statistics.fusions) +
                     " eager_calls=" + std::to_string(statistics.eager_calls) +
                     " eager_reason=" + (reason.empty() ? "none" : reason);
        }
      }
      std::printf("RESULT framework=accel mode=%s model=%s batch=%lld samples_per_s=%.1f step_ms=%.3f "
                  "trainable_params=%lld non_trainable_params=%lld threads=%s omp_wait_policy=%s data=%s "
                  "final_loss=%.4f%s\n",
                  run.mode.c_str(), args.model.c_str(), static_cast<long long>(args.batch), rate,
                  1e3 * static_cast<double>(args.batch) / rate,
                  static_cast<long long>(parameter_count(run.model->trainable_weights())),
                  static_cast<long long>(parameter_count(run.model->non_trainable_weights())),
                  threads ? threads : "default", wait_policy ? wait_policy : "default",
                  data.real ? "fashion_mnist" : "random", run.loss, compiled.c_str());
    }
    return 0;
  } catch (const accel::Error& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
}
