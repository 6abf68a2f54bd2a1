// Training throughput of Keras models through the user's path, Model::fit
// (batching, shuffling, train_step, metrics): the tutorial CNN and MLP, and a
// small ResNet, on /CPU:0 or another device (--device /GPU:0).
//
//   bench_training_throughput [--model cnn|mlp|resnet] [--batch 32] [--steps 50]
//                             [--windows 7] [--warmup 2] [--samples 60000]
//                             [--device /CPU:0] [--jit] [--policy mixed_bfloat16]
//   bench_training_throughput --memory [--epochs 3] [--steps 0] [--batch 256]
//   bench_training_throughput --profile [--model cnn] [--batch 32] [--steps 50]
//   bench_training_throughput --check-device --device /GPU:0
//
// Throughput: one fit() call of warmup + windows epochs of `steps` batches
// (steps_per_epoch, so the batches stream on across epochs); a callback times
// every epoch (after waiting for the device's queued work), the warm-up
// epochs are dropped and the median window is reported as samples/s. The
// machine-readable line starts with "RESULT".
// Data: the first `samples` Fashion-MNIST training images (x / 255, as the
// tutorials), or uniform random images of that shape when the dataset is not
// installed. The data stays on /CPU:0 (the host, as Keras keeps NumPy arrays);
// fit cuts each batch there and the model's first op moves it to --device.
// Threads: set ACCEL_CPU_THREADS (compare_training.sh sets 2).
// A --device that does not exist here prints "skipped: no GPU: <reason>" (or
// the like) and exits 0; --check-device prints just that, or the device.
//
// --memory (--steps 0: whole epochs, one pass of the data each): the CNN's per-epoch peak of accel's --device allocator
// (get_memory_info().peak after reset_memory_stats at each epoch begin) and
// the process's peak RSS (VmHWM, reset per epoch through /proc/self/clear_refs
// where the kernel allows it) and RSS at each epoch end.
//
// --profile: `steps` steps under accel::profiler, per-op wall time summed.
//
// --jit: compile(..., {.jit_compile = true}), compiled steps; the RESULT line
// then also gives the first (tracing) step's time, the compiled graph's op
// and fusion counts and its bytes moved per sample, against one eager step.
#include <accel/config.hpp>
#include <accel/data/fashion_mnist.hpp>
#include <accel/error.hpp>
#include <accel/function.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/runtime.hpp>

#include "device_availability.hpp"
#include "fma_peak.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <string>
#include <string_view>
#include <vector>

namespace keras = accel::keras;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string model = "cnn";
  int64_t batch = 32;
  int64_t steps = 50;
  int windows = 7;
  int warmup = 2;
  int64_t samples = 60000;
  int epochs = 3;
  std::string device = "/CPU:0";
  bool memory = false;
  bool profile = false;
  bool check_device = false;
  bool jit = false;
  std::string policy = "float32";  // keras.mixed_precision's global policy
};

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value after " << flag << "\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--model") args.model = value();
    else if (flag == "--batch") args.batch = std::stoll(value());
    else if (flag == "--steps") args.steps = std::stoll(value());
    else if (flag == "--windows") args.windows = std::stoi(value());
    else if (flag == "--warmup") args.warmup = std::stoi(value());
    else if (flag == "--samples") args.samples = std::stoll(value());
    else if (flag == "--epochs") args.epochs = std::stoi(value());
    else if (flag == "--device") args.device = value();
    else if (flag == "--memory") args.memory = true;
    else if (flag == "--profile") args.profile = true;
    else if (flag == "--check-device") args.check_device = true;
    else if (flag == "--jit") args.jit = true;
    else if (flag == "--policy") args.policy = value();
    else {
      std::cerr << "usage: " << argv[0]
                << " [--model cnn|mlp|resnet] [--batch B] [--steps S] [--windows W] [--warmup E] [--samples N]"
                   " [--device /CPU:0] [--jit] [--policy float32|mixed_bfloat16|mixed_float16] [--memory [--epochs E]]"
                   " [--profile] [--check-device]\n";
      std::exit(2);
    }
  }
  if (args.steps <= 0 && !args.memory) {
    std::cerr << "--steps must be positive (0, whole epochs, is for --memory)\n";
    std::exit(2);
  }
  if (args.model != "cnn" && args.model != "mlp" && args.model != "resnet") {
    std::cerr << "--model must be cnn, mlp or resnet\n";
    std::exit(2);
  }
  return args;
}

// A ResNet basic block (He et al. 2016; the CIFAR ResNets' block):
//   y = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))
// with 3x3 "same" convolutions without bias (the batch norm's beta is the
// bias), conv1 carrying the stride, and shortcut = x, or bn(1x1 conv(x)) with
// the stride when the block changes the size or the width. accel's Keras has
// Sequential but no functional API or Add layer, so the skip connection lives
// inside one layer, written as a tf.keras user writes a subclassed layer.
class ResidualBlock final : public keras::Layer {
 public:
  ResidualBlock(int64_t filters, int32_t stride)
      : Layer("ResidualBlock", ""), filters_(filters), stride_(stride),
        conv1_(conv(filters, 3, stride)), bn1_(std::make_shared<keras::BatchNormalization>()),
        conv2_(conv(filters, 3, 1)), bn2_(std::make_shared<keras::BatchNormalization>()) {}

  keras::LayerShape compute_output_shape(const keras::LayerShape& input_shape) const override {
    auto strided = [&](int64_t size) { return size < 0 ? size : (size + stride_ - 1) / stride_; };  // "same"
    return {input_shape[0], strided(input_shape[1]), strided(input_shape[2]), filters_};
  }
  // Every sublayer's weights, in call order (Layer's trainable / non-trainable
  // lists and the optimizer read them from here).
  std::vector<accel::Variable> weights() const override {
    std::vector<accel::Variable> all;
    for (const auto& layer : sublayers()) {
      for (const accel::Variable& weight : layer->weights()) all.push_back(weight);
    }
    return all;
  }

 protected:
  void build_weights(const keras::LayerShape& input_shape) override {
    if (stride_ != 1 || input_shape[3] != filters_) {
      projection_ = conv(filters_, 1, stride_);
      projection_bn_ = std::make_shared<keras::BatchNormalization>();
    }
    conv1_->build(input_shape);
    bn1_->build(conv1_->output_shape());
    conv2_->build(bn1_->output_shape());
    bn2_->build(conv2_->output_shape());
    if (projection_) {
      projection_->build(input_shape);
      projection_bn_->build(projection_->output_shape());
    }
  }
  accel::Tensor call(const accel::Tensor& x, bool training) override {
    const accel::Tensor residual = (*bn2_)((*conv2_)(accel::ops::relu((*bn1_)((*conv1_)(x, training), training)),
                                                     training),
                                           training);
    const accel::Tensor shortcut = projection_ ? (*projection_bn_)((*projection_)(x, training), training) : x;
    return accel::ops::relu(accel::ops::add(residual, shortcut));
  }

 private:
  static std::shared_ptr<keras::Conv2D> conv(int64_t filters, int32_t size, int32_t stride) {
    return std::make_shared<keras::Conv2D>(
        filters, size,
        keras::Conv2DOptions{.strides = {stride, stride}, .padding = size == 1 ? "valid" : "same", .use_bias = false});
  }
  std::vector<std::shared_ptr<keras::Layer>> sublayers() const {
    std::vector<std::shared_ptr<keras::Layer>> layers{conv1_, bn1_, conv2_, bn2_};
    if (projection_) layers.insert(layers.end(), {projection_, projection_bn_});
    return layers;
  }

  int64_t filters_;
  int32_t stride_;
  std::shared_ptr<keras::Conv2D> conv1_;
  std::shared_ptr<keras::BatchNormalization> bn1_;
  std::shared_ptr<keras::Conv2D> conv2_;
  std::shared_ptr<keras::BatchNormalization> bn2_;
  std::shared_ptr<keras::Conv2D> projection_;  // only when the shape changes
  std::shared_ptr<keras::BatchNormalization> projection_bn_;
};

// The tutorials' models (examples/tutorial_cnn, examples/tutorial_mlp) and a
// small ResNet for 28x28x1 images: conv stem (32 filters, batch norm, relu),
// residual blocks of 32 (stride 1), 64 (stride 2) and 128 (stride 2)
// filters, global average pooling, Dense(10, softmax). torch_training_throughput.py
// builds the same three.
std::unique_ptr<keras::Sequential> make_model(const std::string& kind, bool jit) {
  keras::set_random_seed(1);
  std::unique_ptr<keras::Sequential> model;
  if (kind == "resnet") {
    model = std::make_unique<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
        std::make_shared<keras::Conv2D>(32, 3, keras::Conv2DOptions{.padding = "same", .use_bias = false}),
        std::make_shared<keras::BatchNormalization>(), std::make_shared<keras::Activation>("relu"),
        std::make_shared<ResidualBlock>(32, 1), std::make_shared<ResidualBlock>(64, 2),
        std::make_shared<ResidualBlock>(128, 2), std::make_shared<keras::GlobalAveragePooling2D>(),
        std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
    model->build({keras::kUnknownDim, 28, 28, 1});
  } else if (kind == "cnn") {
    model = std::make_unique<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
        std::make_shared<keras::Conv2D>(32, std::array<int32_t, 2>{3, 3}, keras::Conv2DOptions{.activation = "relu"}),
        std::make_shared<keras::MaxPooling2D>(keras::Pooling2DOptions{.pool_size = {2, 2}}),
        std::make_shared<keras::Flatten>(),
        std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
    model->build({keras::kUnknownDim, 28, 28, 1});
  } else {
    model = std::make_unique<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
        std::make_shared<keras::Flatten>(),
        std::make_shared<keras::Dense>(128, keras::DenseOptions{.activation = "relu"}),
        std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
    model->build({keras::kUnknownDim, 28, 28});
  }
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"}, {.jit_compile = jit});
  return model;
}

// The matmul and convolution FLOPs of one training sample (forward, and the
// backward pass's input and weight gradients; elementwise work not counted),
// of the two tutorial models; 0 for others.
double training_flops_per_sample(const std::string& kind) {
  if (kind == "cnn") {
    const double convolution = 2.0 * 26 * 26 * 32 * 3 * 3 * 1;  // forward; the weight gradient is as much
    const double dense = 2.0 * 5408 * 10;                        // forward; each gradient is as much
    return 2 * convolution + 3 * dense;  // no input gradient for the first layer
  }
  if (kind == "mlp") return 2 * (2.0 * 784 * 128) + 3 * (2.0 * 128 * 10);
  return 0.0;
}

// Times every epoch; with `memory`, also the allocator peak and RSS per epoch.
class EpochTimer : public keras::Callback {
 public:
  EpochTimer(bool memory, std::string device) : memory_(memory), device_(std::move(device)) {}
  void on_epoch_begin(int, const keras::Logs&) override {
    if (memory_) {
      accel::config::reset_memory_stats(device_);
      reset_peak_rss();
    }
    begin_ = Clock::now();
  }
  void on_epoch_end(int, keras::Logs& logs) override {
    // The epoch's last optimizer updates may still be queued on an
    // asynchronous device (the GPU): they belong to this window.
    accel::runtime::synchronize();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - begin_).count());
    losses.push_back(logs.count("loss") ? logs.at("loss") : 0.0);
    if (memory_) {
      const accel::config::MemoryInfo info = accel::config::get_memory_info(device_);
      device_peak.push_back(info.peak);
      device_current.push_back(info.current);
      peak_rss_kb.push_back(status_kb("VmHWM:"));
      rss_kb.push_back(status_kb("VmRSS:"));
    }
  }

  static long status_kb(std::string_view key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + key.size());
    }
    return -1;
  }
  // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
  static bool reset_peak_rss() {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.flush();
    return static_cast<bool>(clear);
  }

  std::vector<double> seconds, losses;
  std::vector<uint64_t> device_peak, device_current;
  std::vector<long> peak_rss_kb, rss_kb;

 private:
  bool memory_;
  std::string device_;
  Clock::time_point begin_;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Data {
  accel::Tensor images;  // [N, 28, 28] float32 in [0, 1]
  accel::Tensor labels;  // [N] int32
  bool real = false;
};

Data load_data(int64_t samples) {
  Data data;
  try {
    accel::data::FashionMnist mnist = accel::data::load_fashion_mnist();
    if (samples < mnist.train_images.shape().dim(0)) {
      data.images = accel::ops::slice(mnist.train_images, {0, 0, 0}, {samples, 28, 28});
      data.labels = accel::ops::slice(mnist.train_labels, {0}, {samples});
    } else {
      data.images = mnist.train_images;
      data.labels = mnist.train_labels;
    }
    data.real = true;
  } catch (const accel::NotFoundError&) {
    data.images = accel::ops::random_uniform(accel::Shape{samples, 28, 28}, 7);
    std::vector<int32_t> labels(static_cast<size_t>(samples));
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>((i * 7919) % 10);
    data.labels = accel::Tensor::from_vector(labels, accel::Shape{samples});
  }
  return data;
}

int run_profile(keras::Sequential& model, const accel::Tensor& x, const accel::Tensor& y, const Args& args) {
  model.fit(x, y, {.epochs = 1, .batch_size = args.batch, .verbose = 0, .steps_per_epoch = 5});  // warm up
  accel::profiler::start();
  rusage usage_before{};
  getrusage(RUSAGE_SELF, &usage_before);
  const auto begin = Clock::now();
  model.fit(x, y, {.epochs = 1, .batch_size = args.batch, .verbose = 0, .steps_per_epoch = args.steps});
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  accel::profiler::stop();
  rusage usage_after{};
  getrusage(RUSAGE_SELF, &usage_after);
  std::map<std::string, std::pair<double, int>> per_op;
  double op_total = 0;
  for (const auto& record : accel::profiler::records()) {
    auto& entry = per_op[record.op];
    entry.first += record.duration_seconds;
    entry.second += 1;
    op_total += record.duration_seconds;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> sorted(per_op.begin(), per_op.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  const double steps = static_cast<double>(args.steps);
  std::printf("profile %s batch %lld: %.3f ms/step wall, %.3f ms/step inside ops, %.1f ops/step, "
              "%.0f minor page faults/step\n",
              args.model.c_str(), static_cast<long long>(args.batch), 1e3 * wall / steps, 1e3 * op_total / steps,
              static_cast<double>(accel::profiler::records().size()) / steps,
              static_cast<double>(usage_after.ru_minflt - usage_before.ru_minflt) / steps);
  std::printf("%-32s %10s %8s %6s\n", "op", "ms/step", "calls", "share");
  for (const auto& [op, entry] : sorted) {
    std::printf("%-32s %10.4f %8.1f %5.1f%%\n", op.c_str(), 1e3 * entry.first / steps, entry.second / steps,
                100.0 * entry.first / wall);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv);
  if (args.memory) args.model = "cnn";
  if (args.memory && args.batch == 32) args.batch = 256;

  if (const auto reason = accel::bench::missing_device_reason(args.device)) {
    std::printf("skipped: %s\n", reason->c_str());
    return 0;
  }
  if (args.check_device) {
    std::printf("device: %s %s\n", args.device.c_str(),
                accel::bench::physical_device(args.device).description.c_str());
    return 0;
  }

  const Data data = [&] {
    accel::DeviceScope on_host("/CPU:0");
    return load_data(args.samples);
  }();
  accel::DeviceScope device(args.device);
  const accel::Tensor x =
      args.model == "mlp" ? data.images : data.images.reshape(accel::Shape{-1, 28, 28, 1});
  keras::mixed_precision::set_global_policy(args.policy);
  std::unique_ptr<keras::Sequential> model = make_model(args.model, args.jit);

  if (args.profile) return run_profile(*model, x, data.labels, args);

  // Compiled: the first step traces and compiles; its cost against eager steps.
  double first_step_seconds = 0.0, eager_step_seconds = 0.0;
  if (args.jit && !args.memory) {
    const auto seconds_of = [&](keras::Sequential& trained, int64_t steps) {
      accel::runtime::synchronize();
      const auto begin = Clock::now();
      trained.fit(x, data.labels, {.epochs = 1, .batch_size = args.batch, .verbose = 0, .steps_per_epoch = steps});
      accel::runtime::synchronize();
      return std::chrono::duration<double>(Clock::now() - begin).count();
    };
    first_step_seconds = seconds_of(*model, 1);
    std::unique_ptr<keras::Sequential> eager = make_model(args.model, false);
    seconds_of(*eager, 3);
    eager_step_seconds = seconds_of(*eager, 10) / 10;
  }

  const int epochs = args.memory ? args.epochs : args.warmup + args.windows;
  auto timer = std::make_shared<EpochTimer>(args.memory, args.device);
  model->fit(x, data.labels,
             {.epochs = epochs, .batch_size = args.batch, .verbose = 0, .callbacks = {timer},
              .steps_per_epoch = args.steps > 0 ? std::optional<int64_t>(args.steps) : std::nullopt});

  const char* threads = std::getenv("ACCEL_CPU_THREADS");
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  if (args.memory) {
    std::printf("memory: CNN batch %lld, %d epochs of %s steps, data %s\n", static_cast<long long>(args.batch), epochs,
                args.steps > 0 ? std::to_string(args.steps).c_str() : "all (one pass of the data)",
                data.real ? "Fashion-MNIST" : "random");
    std::printf("%-6s %16s %18s %14s %12s %10s\n", "epoch", "device peak MiB", "device current MiB",
                "peak RSS MiB", "RSS MiB", "loss");
    for (int e = 0; e < epochs; ++e) {
      std::printf("%-6d %16.2f %18.2f %14.1f %12.1f %10.4f\n", e + 1, timer->device_peak[e] / 1048576.0,
                  timer->device_current[e] / 1048576.0, timer->peak_rss_kb[e] / 1024.0, timer->rss_kb[e] / 1024.0,
                  timer->losses[e]);
    }
    // Growth: any later epoch above the first (RSS: by more than 2 MiB of noise).
    bool growth = false;
    for (int e = 1; e < epochs; ++e) {
      growth |= timer->device_peak[e] > timer->device_peak[0] || timer->device_current[e] > timer->device_current[0] ||
                timer->peak_rss_kb[e] > timer->peak_rss_kb[0] + 2048;
    }
    std::printf("RESULT memory device_peak_bytes=%llu growth=%s peak_rss_kb=%ld\n",
                static_cast<unsigned long long>(*std::max_element(timer->device_peak.begin(), timer->device_peak.end())),
                growth ? "yes" : "no", *std::max_element(timer->peak_rss_kb.begin(), timer->peak_rss_kb.end()));
    return growth ? 1 : 0;
  }

  std::vector<double> rates;
  for (int e = args.warmup; e < epochs; ++e) rates.push_back(static_cast<double>(args.steps * args.batch) / timer->seconds[e]);
  const double rate = median(rates);
  std::printf("windows (samples/s):");
  for (double r : rates) std::printf(" %.0f", r);
  int64_t trainable_params = 0;  // the PyTorch peer prints its count too: the same model has the same count
  for (const accel::Variable& weight : model->trainable_weights()) trainable_params += weight.shape().element_count();
  // Ops the device lacks run on the CPU plugin, with copies both ways: on a
  // GPU any such op is a slowdown to look into, so the count is reported.
  const accel::runtime::FallbackStats fallback = accel::runtime::fallback_stats();
  std::printf("\nRESULT framework=accel model=%s batch=%lld samples_per_s=%.1f step_ms=%.3f device=%s "
              "trainable_params=%lld cpu_fallback_ops=%llu threads=%s omp_wait_policy=%s data=%s final_loss=%.4f jit=%d "
              "policy=%s\n",
              args.model.c_str(), static_cast<long long>(args.batch), rate, 1e3 * args.batch / rate, args.device.c_str(),
              static_cast<long long>(trainable_params), static_cast<unsigned long long>(fallback.ops),
              threads ? threads : "default", wait_policy ? wait_policy : "default",
              data.real ? "fashion_mnist" : "random", timer->losses.back(), args.jit ? 1 : 0, args.policy.c_str());
  if (args.jit) {
    const accel::FunctionStatistics compiled = model->train_function()->statistics();
    const int threads_used = threads ? std::atoi(threads) : static_cast<int>(std::thread::hardware_concurrency());
    const double peak = accel::bench::measure_fma_peak(threads_used);
    const double flops = training_flops_per_sample(args.model);
    std::printf("compiled step: %lld ops traced -> %lld compiled (%d fusions of %d ops), eager fallback: %s; "
                "bytes accessed per sample %.0f traced -> %.0f compiled; peak step memory %.2f MiB eager -> %.2f MiB "
                "planned\n",
                static_cast<long long>(compiled.traced_ops), static_cast<long long>(compiled.compiled_ops),
                compiled.fusions, compiled.ops_fused, compiled.eager_reason.empty() ? "none" : compiled.eager_reason.c_str(),
                static_cast<double>(compiled.traced_bytes_accessed) / static_cast<double>(args.batch),
                static_cast<double>(compiled.compiled_bytes_accessed) / static_cast<double>(args.batch),
                compiled.eager_peak_bytes / 1048576.0, compiled.planned_peak_bytes / 1048576.0);
    std::printf("first (tracing) step %.2f ms = %.1f eager steps of %.3f ms\n", 1e3 * first_step_seconds,
                first_step_seconds / eager_step_seconds, 1e3 * eager_step_seconds);
    std::printf("RESULT compiled model=%s batch=%lld jit=1 traced_ops=%lld compiled_ops=%lld fusions=%d "
                "bytes_per_sample=%.0f traced_bytes_per_sample=%.0f flops_per_sample=%.0f fma_peak_gflops=%.1f "
                "fma_isa=%s fraction_of_peak=%.4f first_step_in_eager_steps=%.2f\n",
                args.model.c_str(), static_cast<long long>(args.batch), static_cast<long long>(compiled.traced_ops),
                static_cast<long long>(compiled.compiled_ops), compiled.fusions,
                static_cast<double>(compiled.compiled_bytes_accessed) / static_cast<double>(args.batch),
                static_cast<double>(compiled.traced_bytes_accessed) / static_cast<double>(args.batch), flops, peak / 1e9,
                accel::bench::fma_peak_isa(), peak > 0 ? rate * flops / peak : 0.0,
                first_step_seconds / eager_step_seconds);
  }
  return 0;
}
