// Training throughput of MirroredStrategy over 2 logical CPU devices against
// OneDeviceStrategy on /CPU:0, both through Keras fit on the tutorial CNN
// (Conv2D 32 3x3 relu, MaxPooling2D 2, Flatten, Dense 10) at the same global
// batch (default 256): the cost of replication. The two take turns, one
// timed epoch of `steps` batches each per round, after one warm-up epoch
// each; the medians give samples/s and the ratio mirrored / one device
// (target >= 0.9).
//
//   bench_mirrored_throughput [--batch 256] [--steps 20] [--rounds 7]
//
// Data: uniform random 28x28x1 images (throughput does not depend on them).
// Threads: the CPU plugin's default (every core) unless ACCEL_CPU_THREADS.
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/one_device_strategy.hpp>

#include "median.hpp"
#include "tutorial_cnn.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;

using bench::median;

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 256;
  int64_t steps = 20;
  int rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--batch") batch = std::stoll(argv[i + 1]);
    else if (flag == "--steps") steps = std::stoll(argv[i + 1]);
    else if (flag == "--rounds") rounds = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--batch 256] [--steps 20] [--rounds 7]\n", argv[0]);
      return 2;
    }
  }
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0),
                                           std::vector<config::LogicalDeviceConfiguration>(2));
  const int64_t samples = batch * steps;
  const bench::RandomImages data = bench::random_images(samples);
  distribute::OneDeviceStrategy one_device("/CPU:0");
  distribute::MirroredStrategy mirrored({"/CPU:0", "/CPU:1"});
  struct Contender {
    const char* name;
    std::shared_ptr<keras::Sequential> model;
    std::vector<double> samples_per_second;
  };
  std::array<Contender, 2> contenders{Contender{"OneDeviceStrategy(/CPU:0)", bench::tutorial_cnn(one_device, "adam"), {}},
                                      Contender{"MirroredStrategy(/CPU:0, /CPU:1)", bench::tutorial_cnn(mirrored, "adam"), {}}};
  const keras::FitOptions epoch{.epochs = 1, .batch_size = batch, .verbose = 0, .shuffle = false};
  for (Contender& contender : contenders) contender.model->fit(data.images, data.labels, epoch);  // warm-up
  for (int round = 0; round < rounds; ++round) {
    for (Contender& contender : contenders) {
      const auto start = Clock::now();
      contender.model->fit(data.images, data.labels, epoch);
      contender.samples_per_second.push_back(static_cast<double>(samples) /
                                             std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  const char* threads = std::getenv("ACCEL_CPU_THREADS");
  std::printf("tutorial CNN, Keras fit, global batch %lld, %lld steps per timed epoch, %d rounds, threads %s\n",
              static_cast<long long>(batch), static_cast<long long>(steps), rounds, threads ? threads : "default");
  for (const Contender& contender : contenders) {
    std::printf("%-34s %9.0f samples/s (median; rounds:", contender.name, median(contender.samples_per_second));
    for (double rate : contender.samples_per_second) std::printf(" %.0f", rate);
    std::printf(")\n");
  }
  const double ratio = median(contenders[1].samples_per_second) / median(contenders[0].samples_per_second);
  std::printf("RESULT mirrored_over_one_device=%.3f (target >= 0.9)\n", ratio);
  return 0;
}
