// All-reduce (SUM, float32) of 1, 16 and 128 MiB between 2 and 4 local
// processes over loopback TCP: accel's CollectiveGroup::all_reduce beside
// Gloo's own all-reduce algorithms, called directly in the same processes on
// the same Gloo context:
//   accel              CollectiveGroup::all_reduce on the caller's buffer (copied
//                      through the group's bound buffer)
//   accel reusable     CollectiveGroup::all_reduce on reusable_buffer(): no copy
//                      (what MultiWorkerMirroredStrategy's gradients use)
//   gloo ring          gloo::allreduce, the ring algorithm (segmented, pipelined)
//   gloo bcube         gloo::allreduce, the bcube algorithm
//   AllreduceRing      Gloo's classic ring algorithm object
//   RingChunked        Gloo's classic chunked ring (AllreduceRingChunked)
//   HalvingDoubling    Gloo's classic recursive halving-doubling
// Bandwidth is algorithm bandwidth: buffer bytes / time of one all-reduce
// (the slowest rank's time, median of 5 rounds; the contenders take turns
// within each round, so drift on a shared machine hits all alike). The ratio compares accel
// with the fastest of Gloo's three ring algorithms (target >= 0.9); both
// accel columns are printed against it.
//
//   bench_distribute_allreduce [--processes 2,4] [--sizes-mib 1,16,128] [--skip NAME,...]
// --skip leaves out contenders by name ("gloo ring", "AllreduceRing", ...;
// spaces as '_'), e.g. to time the others where one of them stalls.
// The parent launches itself as the workers (accel::distribute's local
// launcher); rank 0 prints the table.
#include <accel/distribute/collective_group.hpp>
#include <accel/distribute/launch.hpp>
#include <accel/distribute/tf_config_cluster_resolver.hpp>

#include <fmt/format.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/math.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace accel::distribute;
using Clock = std::chrono::steady_clock;

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    values.push_back(std::stoi(text.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

int iterations_for(int mib) { return mib <= 1 ? 40 : mib <= 16 ? 6 : 2; }

// Seconds per call of `all_reduce` over `iterations` calls, on the slowest rank.
double seconds_per_call(CollectiveGroup& group, int iterations, const std::function<void()>& all_reduce) {
  group.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) all_reduce();
  float elapsed = std::chrono::duration<float>(Clock::now() - start).count();
  group.all_reduce(std::span<float>(&elapsed, 1), ReduceOp::kMax);
  return static_cast<double>(elapsed) / iterations;
}

constexpr int kRounds = 5;

struct Contender {
  const char* name;
  bool gloo_ring;  // one of Gloo's ring algorithms: the target's peer
};

constexpr Contender kContenders[] = {
    {"accel", false},        {"accel reusable", false}, {"gloo ring", true},       {"gloo bcube", false},
    {"AllreduceRing", true}, {"RingChunked", true},     {"HalvingDoubling", false},
};

std::string key_of(const char* name) {
  std::string key = name;
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

int run_worker(const std::vector<int>& sizes_mib, const std::string& skip) {
  auto skipped = [&](size_t contender) {
    return ("," + skip + ",").find("," + key_of(kContenders[contender].name) + ",") != std::string::npos;
  };
  const TFConfigClusterResolver resolver;
  CollectiveOptions options;
  options.timeout = std::chrono::seconds(120);
  CollectiveGroup group(resolver, options);
  const std::shared_ptr<gloo::Context>& context = group.gloo_context();
  // Classic algorithm objects bind their buffers to slots; a peer's last
  // notification can arrive after run() returns, and Gloo's TCP loop waits
  // until that slot exists. So the buffers and objects live until exit.
  std::vector<std::vector<float>> buffers;
  std::vector<std::unique_ptr<gloo::Algorithm>> classics;
  uint32_t tag = 1u << 30;
  for (int mib : sizes_mib) {
    const size_t count = static_cast<size_t>(mib) * (1 << 20) / sizeof(float);
    std::vector<float>& data = buffers.emplace_back(count, 0.0f);  // zeros: sums stay finite
    const int iterations = iterations_for(mib);
    auto unbound = [&](gloo::AllreduceOptions::Algorithm algorithm) {
      gloo::AllreduceOptions direct(context);
      direct.setOutput(data.data(), data.size());
      direct.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      direct.setAlgorithm(algorithm);
      direct.setTag(tag++);
      gloo::allreduce(direct);
    };
    auto classic = [&](std::unique_ptr<gloo::Algorithm> algorithm) {
      gloo::Algorithm* raw = classics.emplace_back(std::move(algorithm)).get();
      return [raw] { raw->run(); };
    };
    const std::vector<float*> pointers{data.data()};
    const int elements = static_cast<int>(count);
    // One timing per contender, in kContenders order; skipped ones stay 0.
    const std::vector<std::function<std::function<void()>()>> makers = {
        [&] { return std::function<void()>([&] { group.all_reduce(std::span<float>(data), ReduceOp::kSum); }); },
        [&] {
          const std::span<float> reusable = group.reusable_buffer(count);
          return std::function<void()>([&group, reusable] { group.all_reduce(reusable, ReduceOp::kSum); });
        },
        [&] { return std::function<void()>([&] { unbound(gloo::AllreduceOptions::Algorithm::RING); }); },
        [&] { return std::function<void()>([&] { unbound(gloo::AllreduceOptions::Algorithm::BCUBE); }); },
        [&] { return std::function<void()>(classic(std::make_unique<gloo::AllreduceRing<float>>(context, pointers, elements))); },
        [&] {
          return std::function<void()>(
              classic(std::make_unique<gloo::AllreduceRingChunked<float>>(context, pointers, elements)));
        },
        [&] {
          return std::function<void()>(
              classic(std::make_unique<gloo::AllreduceHalvingDoubling<float>>(context, pointers, elements)));
        },
    };
    std::vector<std::function<void()>> calls(makers.size());
    for (size_t contender = 0; contender < makers.size(); ++contender) {
      if (skipped(contender)) continue;
      calls[contender] = makers[contender]();
      calls[contender]();  // warm-up: connections, page faults
    }
    std::vector<std::vector<double>> rounds(makers.size());
    for (int round = 0; round < kRounds; ++round) {
      for (size_t contender = 0; contender < makers.size(); ++contender) {
        if (calls[contender]) rounds[contender].push_back(seconds_per_call(group, iterations, calls[contender]));
      }
    }
    std::vector<double> seconds(makers.size(), 0.0);
    for (size_t contender = 0; contender < makers.size(); ++contender) {
      std::vector<double>& times = rounds[contender];
      if (times.empty()) continue;
      std::nth_element(times.begin(), times.begin() + kRounds / 2, times.end());
      seconds[contender] = times[kRounds / 2];
    }
    if (group.rank() == 0) {
      const double bytes = static_cast<double>(count * sizeof(float));
      double best_ring = 1e30;
      std::string row = fmt::format("{:9d} {:6d} MiB", group.size(), mib);
      for (size_t i = 0; i < seconds.size(); ++i) {
        row += seconds[i] > 0 ? fmt::format(" {:>15.2f}", bytes / seconds[i] / 1e9) : fmt::format(" {:>15}", "-");
        if (kContenders[i].gloo_ring && seconds[i] > 0) best_ring = std::min(best_ring, seconds[i]);
      }
      for (size_t accel_column : {0, 1}) {
        row += seconds[accel_column] > 0 && best_ring < 1e30
                   ? fmt::format(" {:>13.2f}x", best_ring / seconds[accel_column])
                   : fmt::format(" {:>14}", "-");
      }
      std::printf("%s\n", row.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> processes{2, 4};
  std::vector<int> sizes_mib{1, 16, 128};
  std::string skip;
  bool worker = false;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--worker") worker = true;
    else if (argument == "--processes" && i + 1 < argc) processes = parse_list(argv[++i]);
    else if (argument == "--sizes-mib" && i + 1 < argc) sizes_mib = parse_list(argv[++i]);
    else if (argument == "--skip" && i + 1 < argc) skip = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--processes 2,4] [--sizes-mib 1,16,128] [--skip NAME,...]\n", argv[0]);
      return 2;
    }
  }
  std::string sizes_text;
  for (int mib : sizes_mib) sizes_text += (sizes_text.empty() ? "" : ",") + std::to_string(mib);
  if (worker) return run_worker(sizes_mib, skip);

  std::printf("all-reduce SUM float32 on loopback TCP; algorithm bandwidth GB/s (bytes / time), median of 5 rounds\n");
  std::string header = fmt::format("{:>9} {:>10}", "processes", "size");
  for (const Contender& contender : kContenders) header += fmt::format(" {:>15}", contender.name);
  header += fmt::format(" {:>14} {:>14}", "accel/ring", "reusable/ring");
  std::printf("%s\n", header.c_str());
  std::fflush(stdout);
  for (int count : processes) {
    LaunchOptions launch;
    launch.workers = count;
    launch.command = {"/proc/self/exe", "--worker", "--sizes-mib", sizes_text, "--skip", skip.empty() ? "none" : skip};
    char self[4096] = {};
    if (::readlink("/proc/self/exe", self, sizeof(self) - 1) > 0) launch.command[0] = self;
    if (const int code = launch_local_workers(launch); code != 0) return code;
  }
  return 0;
}
