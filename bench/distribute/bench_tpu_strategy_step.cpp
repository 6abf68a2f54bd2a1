// The simulated training step of the tutorial CNN (Conv2D 32 3x3 relu,
// MaxPooling2D 2, Flatten, Dense 10 on 28x28x1) under TPUStrategy on the
// emulated TPU v4-8 (4 chips, 8 TensorCores), with its breakdown: compute
// (the slowest core's ops) and the gradient all-reduce over the 3D torus
// interconnect. Beside it, one TensorCore (OneDeviceStrategy on /TPU:0) at the
// per-core batch and at the global batch, for the scaling. Times are
// simulated (cycles at the preset's clock); the host's wall time per step is
// printed for reference only.
//
//   bench_tpu_strategy_step [--tpu sim://v4-8] [--batch 1024] [--steps 10]
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/distribute/tpu_strategy.hpp>
#include <accel/tpu_emulator.hpp>

#include "median.hpp"
#include "tutorial_cnn.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;

using bench::median;

// Simulated seconds per step of one TensorCore: the growth of TPU:0's timeline.
double one_core_step_seconds(int64_t batch, int64_t steps) {
  distribute::OneDeviceStrategy core("/TPU:0");
  auto model = bench::tutorial_cnn(core, "sgd");
  const bench::RandomImages data = bench::random_images(batch * steps);
  const TpuEmulator emulator = *TpuEmulator::find();
  model->fit(data.images, data.labels, {.batch_size = batch, .verbose = 0, .shuffle = false, .steps_per_epoch = 1});
  const double before = emulator.totals(0).seconds;
  model->fit(data.images, data.labels, {.batch_size = batch, .verbose = 0, .shuffle = false});
  return (emulator.totals(0).seconds - before) / static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  std::string tpu = "sim://v4-8";
  int64_t batch = 1024;
  int64_t steps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tpu") tpu = argv[i + 1];
    else if (flag == "--batch") batch = std::stoll(argv[i + 1]);
    else if (flag == "--steps") steps = std::stoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--tpu sim://v4-8] [--batch 1024] [--steps 10]\n", argv[0]);
      return 2;
    }
  }
  const distribute::TPUClusterResolver resolver(tpu);
  const distribute::TpuTopology topology = distribute::initialize_tpu_system(resolver);
  distribute::TPUStrategy strategy(resolver);
  const int replicas = strategy.num_replicas_in_sync();
  auto model = bench::tutorial_cnn(strategy, "sgd");
  const bench::RandomImages data = bench::random_images(batch * steps);
  model->fit(data.images, data.labels, {.batch_size = batch, .verbose = 0, .shuffle = false, .steps_per_epoch = 1});
  strategy.reset_step_times();  // the warm-up step is not counted
  const auto start = Clock::now();
  model->fit(data.images, data.labels, {.batch_size = batch, .verbose = 0, .shuffle = false});
  const double wall_per_step = std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(steps);

  std::vector<double> compute, all_reduce, total;
  for (const distribute::TpuStepTime& step : strategy.step_times()) {
    compute.push_back(step.compute_seconds);
    all_reduce.push_back(step.all_reduce_seconds);
    total.push_back(step.total_seconds);
  }
  const double bytes = strategy.step_times().front().all_reduce_bytes;
  std::printf("TPUStrategy on %s: %s, %d chips x %d TensorCores, mesh %dx%dx%d, %s; tutorial CNN (%lld parameters)\n",
              tpu.c_str(), topology.preset.c_str(), topology.chips, topology.cores_per_chip, topology.mesh_shape[0],
              topology.mesh_shape[1], topology.mesh_shape[2], topology.topology_name.c_str(),
              static_cast<long long>(model->count_params()));
  std::printf("global batch %lld = %lld per replica x %d replicas, %lld steps (simulated time, median per step)\n",
              static_cast<long long>(batch), static_cast<long long>(batch / replicas), replicas,
              static_cast<long long>(steps));
  std::printf("  compute     %10.2f us\n", 1e6 * median(compute));
  std::printf("  all-reduce  %10.2f us  (%.0f bytes of gradients, one collective per step)\n", 1e6 * median(all_reduce),
              bytes);
  std::printf("  step        %10.2f us  -> %.0f samples/s simulated\n", 1e6 * median(total),
              static_cast<double>(batch) / median(total));
  const double one_core_same_share = one_core_step_seconds(batch / replicas, steps);
  const double one_core_global = one_core_step_seconds(batch, steps);
  std::printf("one TensorCore, batch %lld: %10.2f us/step; batch %lld: %10.2f us/step -> %d cores are %.2fx one core\n",
              static_cast<long long>(batch / replicas), 1e6 * one_core_same_share, static_cast<long long>(batch),
              1e6 * one_core_global, replicas, one_core_global / median(total));
  std::printf("host wall time per TPUStrategy step (emulation cost, not TPU time): %.1f ms\n", 1e3 * wall_per_step);
  std::printf("RESULT step_us=%.3f compute_us=%.3f all_reduce_us=%.3f all_reduce_bytes=%.0f speedup_over_one_core=%.3f\n",
              1e6 * median(total), 1e6 * median(compute), 1e6 * median(all_reduce), bytes,
              one_core_global / median(total));
  return 0;
}
