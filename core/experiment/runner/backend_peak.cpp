#include "backend_peak.hpp"

#include "device_setup.hpp"

#include <accel/config.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

namespace accel::experiment {
namespace {

std::optional<double> number_property(const config::PhysicalDevice& device, const std::string& key) {
  auto found = device.properties.find(key);
  if (found == device.properties.end()) return std::nullopt;
  try {
    return std::stod(found->second);
  } catch (...) {
    return std::nullopt;
  }
}

double best_seconds_of_three(const std::function<void()>& work) {
  work();  // warm-up: allocations, first-touch, kernel selection
  runtime::synchronize();
  double best = std::numeric_limits<double>::infinity();
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    work();
    runtime::synchronize();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

const config::PhysicalDevice* physical_device_of(const std::string& device_name) {
  static std::vector<config::PhysicalDevice> devices;
  devices = config::list_physical_devices();
  const Device device = find_device(device_name);
  for (const config::LogicalDevice& logical : config::list_logical_devices()) {
    if (logical.name != device.name()) continue;
    for (const config::PhysicalDevice& physical : devices) {
      if (physical.name == logical.physical_device) return &physical;
    }
  }
  return nullptr;
}

}  // namespace

BackendPeak backend_peak(const std::string& device_name) {
  BackendPeak peak;
  peak.device = device_name;
  const config::PhysicalDevice* physical = physical_device_of(device_name);
  std::vector<std::string> sources;
  if (physical != nullptr) {
    peak.peak_flops_per_second = number_property(*physical, "peak_flops");
    peak.bandwidth_bytes_per_second = number_property(*physical, "hbm_bandwidth");
    if (peak.peak_flops_per_second) sources.push_back("peak compute: device property peak_flops");
    if (peak.bandwidth_bytes_per_second) sources.push_back("bandwidth: device property hbm_bandwidth");
    const auto memory_clock_khz = number_property(*physical, "memory_clock_rate_khz");
    const auto bus_bits = number_property(*physical, "memory_bus_width_bits");
    if (!peak.bandwidth_bytes_per_second && memory_clock_khz && bus_bits) {
      peak.bandwidth_bytes_per_second = 2.0 * *memory_clock_khz * 1e3 * *bus_bits / 8.0;
      sources.push_back("bandwidth: device properties, 2 x memory clock x bus width");
    }
  }
  DeviceScope scope(device_name);
  if (!peak.peak_flops_per_second) {
    const int64_t n = 1024;
    Tensor a = ops::random_uniform(Shape{n, n}, 1);
    Tensor b = ops::random_uniform(Shape{n, n}, 2);
    const double seconds = best_seconds_of_three([&] { (void)ops::matmul(a, b); });
    peak.peak_flops_per_second = 2.0 * n * n * n / seconds;
    sources.push_back("peak compute: measured, best of 3 float32 matmuls 1024x1024x1024");
  }
  if (!peak.bandwidth_bytes_per_second) {
    const int64_t elements = int64_t{4} << 20;
    Tensor a = ops::random_uniform(Shape{elements}, 3);
    Tensor b = ops::random_uniform(Shape{elements}, 4);
    const double seconds = best_seconds_of_three([&] { (void)ops::add(a, b); });
    peak.bandwidth_bytes_per_second = 3.0 * 4.0 * static_cast<double>(elements) / seconds;
    sources.push_back("bandwidth: measured, best of 3 float32 adds of 4M elements (48 MiB moved)");
  }
  for (const std::string& source : sources) peak.source += (peak.source.empty() ? "" : "; ") + source;
  return peak;
}

void raise_to_the_runs_best(BackendPeak& peak, const RunResult& run) {
  const std::string device = short_device_name(peak.device);  // as op summaries name it
  struct Best {
    double rate = 0;
    std::string op;
  };
  Best compute, traffic;
  auto consider = [](Best& best, double rate, const std::string& op) {
    if (std::isfinite(rate) && rate > best.rate) best = {rate, op};
  };
  for (const BenchmarkPoint& point : run.benchmark) {
    if (point.seconds <= 0) continue;
    consider(compute, point.flops / point.seconds, point.op);
  }
  constexpr double kShortestTimedSeconds = 1e-3;  // shorter totals are timer noise
  for (const OpSummary& op : run.ops) {
    if (op.seconds < kShortestTimedSeconds || op.device != device) continue;
    consider(compute, op.flops / op.seconds, op.op);
    consider(traffic, op.bytes / op.seconds, op.op);
  }
  auto raise = [&](std::optional<double>& roof, const Best& best, const char* what, const char* unit) {
    if (best.rate <= 0 || (roof && *roof >= best.rate)) return;
    peak.source += fmt::format("{}{} raised to the run's fastest op, {} at {:.4g} {} (above the {})",
                               peak.source.empty() ? "" : "; ", what, best.op, best.rate, unit,
                               roof ? fmt::format("{:.4g} {} first found", *roof, unit) : std::string("unknown roof"));
    roof = best.rate;
  };
  raise(peak.peak_flops_per_second, compute, "peak compute", "FLOP/s");
  raise(peak.bandwidth_bytes_per_second, traffic, "bandwidth", "bytes/s");
}

}  // namespace accel::experiment
