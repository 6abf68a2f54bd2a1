#include "timing/hardware_limits.hpp"

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "timing/quantity_text.hpp"

namespace accel::tpu {
namespace {

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kTiB = 1024.0 * kGiB;

// Published TPUs (docs/tpu-emulator.md, "Field ranges"): clocks 0.7-1.75 GHz
// (3.5 GHz calibrated), peaks up to 1.8e15 ops/s, arrays of 128 or 256, at
// most 4 MXUs and 2 cores, 16-128 MiB of VMEM, 8-95 GB of HBM at 34 GB/s to
// 2.8 TB/s, links of 50-200 GB/s, pods of up to 8960 chips. Energy figures
// (optional section): published ones run from 0.007 pJ (an int8 add at 7 nm)
// to 4.6 pJ (a 45 nm fp32 multiply and add) per operation, 1-25 pJ per byte
// of SRAM and 30-325 pJ per byte of HBM or DDR3; zero is refused (leave the
// figure out instead), and each range leaves a factor of 10 or more around them.
constexpr std::array<FieldLimit, 28> kLimits{{
    {"clock_hz", FieldUnit::kHertz, 1e6, 1e10},
    {"published_peak_ops_per_s", FieldUnit::kOpsPerSecond, 1e6, 1e18},
    {"chips", FieldUnit::kCount, 1, 65536},
    {"tensor_cores_per_chip", FieldUnit::kCount, 1, 64},
    {"core.mxus", FieldUnit::kCount, 1, 64},
    {"core.mxu.rows", FieldUnit::kCount, 1, 4096},
    {"core.mxu.columns", FieldUnit::kCount, 1, 4096},
    {"core.vector_unit.sublanes", FieldUnit::kCount, 1, 1024},
    {"core.vector_unit.lanes", FieldUnit::kCount, 1, 4096},
    {"core.vector_unit.alus_per_lane", FieldUnit::kCount, 1, 64},
    {"core.vmem_bytes", FieldUnit::kBytes, kKiB, 64 * kGiB},
    {"core.accumulator_bytes", FieldUnit::kBytes, 0, 64 * kGiB},
    {"cmem_bytes", FieldUnit::kBytes, 0, 64 * kGiB},
    {"hbm.capacity_bytes", FieldUnit::kBytes, kMiB, kTiB},
    {"hbm.bandwidth_bytes_per_s", FieldUnit::kBytesPerSecond, 1e6, 1e14},
    {"interconnect.links", FieldUnit::kCount, 1, 64},
    {"interconnect.link_bandwidth_bytes_per_s", FieldUnit::kBytesPerSecond, 1e6, 1e14},
    {"interconnect.link_latency_s", FieldUnit::kSeconds, 0, 1},
    {"interconnect.wraparound_axis", FieldUnit::kCount, 0, 65536},
    {"interconnect.dims", FieldUnit::kCount, 1, 65536},
    {"interconnect.dcn_bandwidth_bytes_per_s", FieldUnit::kBytesPerSecond, 0, 1e13},
    {"interconnect.dcn_latency_s", FieldUnit::kSeconds, 0, 1},
    {"energy.mac_pj", FieldUnit::kPicojoules, 1e-4, 1e3},
    {"energy.sram_pj_per_byte", FieldUnit::kPicojoules, 1e-3, 1e3},
    {"energy.hbm_pj_per_byte", FieldUnit::kPicojoules, 1e-2, 1e4},
    {"energy.link_pj_per_byte", FieldUnit::kPicojoules, 1e-3, 1e4},
    {"energy.vector_pj_per_element_op", FieldUnit::kPicojoules, 1e-4, 1e3},
    {"energy.idle_power_w", FieldUnit::kWatts, 1e-3, 1e4},
}};

std::string format_value(FieldUnit unit, double value) {
  if (unit == FieldUnit::kBytes) return format_byte_size(value);
  if (unit == FieldUnit::kCount && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{:g}", value);
}

}  // namespace

std::span<const FieldLimit> field_limits() { return kLimits; }

const FieldLimit* find_field_limit(std::string_view key) {
  for (const auto& limit : kLimits) {
    if (limit.key == key) return &limit;
  }
  return nullptr;
}

std::string describe_range(const FieldLimit& limit) {
  const std::string range =
      fmt::format("[{}, {}]", format_value(limit.unit, limit.min), format_value(limit.unit, limit.max));
  switch (limit.unit) {
    case FieldUnit::kCount: return "an integer in " + range;
    case FieldUnit::kHertz: return "a frequency in Hz in " + range;
    case FieldUnit::kOpsPerSecond: return "operations per second in " + range;
    case FieldUnit::kBytes: return "a size in bytes in " + range + ", e.g. 4096 or '16 MiB'";
    case FieldUnit::kBytesPerSecond: return "bytes per second in " + range;
    case FieldUnit::kSeconds: return "seconds in " + range;
    case FieldUnit::kPicojoules: return "picojoules in " + range;
    case FieldUnit::kWatts: return "watts in " + range;
  }
  return range;
}

void check_field_ranges(const Hardware& hw, const FieldFailure& fail) {
  std::vector<std::pair<std::string_view, double>> values{
      {"clock_hz", hw.clock_hz},
      {"published_peak_ops_per_s", hw.published_peak_ops_per_s},
      {"chips", hw.chips},
      {"tensor_cores_per_chip", hw.cores_per_chip},
      {"core.mxus", hw.core.mxus},
      {"core.mxu.rows", hw.core.mxu.rows},
      {"core.mxu.columns", hw.core.mxu.columns},
      {"core.vector_unit.sublanes", hw.core.vector_unit.sublanes},
      {"core.vector_unit.lanes", hw.core.vector_unit.lanes},
      {"core.vector_unit.alus_per_lane", hw.core.vector_unit.alus_per_lane},
      {"core.vmem_bytes", static_cast<double>(hw.core.vmem_bytes)},
      {"core.accumulator_bytes", static_cast<double>(hw.core.accumulator_bytes)},
      {"cmem_bytes", static_cast<double>(hw.cmem_bytes)},
      {"hbm.capacity_bytes", static_cast<double>(hw.hbm.capacity_bytes)},
      {"hbm.bandwidth_bytes_per_s", hw.hbm.bandwidth_bytes_per_s},
  };
  if (hw.interconnect.topology != Topology::kNone) {
    values.insert(values.end(), {{"interconnect.links", hw.interconnect.links},
                                 {"interconnect.link_bandwidth_bytes_per_s", hw.interconnect.link_bandwidth_bytes_per_s},
                                 {"interconnect.link_latency_s", hw.interconnect.link_latency_s},
                                 {"interconnect.wraparound_axis", hw.interconnect.wraparound_axis},
                                 {"interconnect.dcn_bandwidth_bytes_per_s", hw.interconnect.dcn_bandwidth_bytes_per_s},
                                 {"interconnect.dcn_latency_s", hw.interconnect.dcn_latency_s}});
    for (int size : hw.interconnect.dims) values.emplace_back("interconnect.dims", size);
  }
  if (hw.energy) {
    const EnergyConfig& energy = *hw.energy;
    values.insert(values.end(), {{"energy.mac_pj", energy.mac_pj},
                                 {"energy.sram_pj_per_byte", energy.sram_pj_per_byte},
                                 {"energy.hbm_pj_per_byte", energy.hbm_pj_per_byte}});
    if (energy.link_pj_per_byte) values.emplace_back("energy.link_pj_per_byte", *energy.link_pj_per_byte);
    if (energy.vector_pj_per_element_op) {
      values.emplace_back("energy.vector_pj_per_element_op", *energy.vector_pj_per_element_op);
    }
    if (energy.idle_power_w) values.emplace_back("energy.idle_power_w", *energy.idle_power_w);
  }
  for (const auto& [key, value] : values) {
    const FieldLimit& limit = *find_field_limit(key);
    // Written as !(in range) so that NaN fails too.
    if (!(value >= limit.min && value <= limit.max)) {
      fail(std::string(key), fmt::format("'{}' is {}, out of range", key, format_value(limit.unit, value)),
           describe_range(limit));
    }
  }
  const std::int64_t cores = static_cast<std::int64_t>(hw.chips) * hw.cores_per_chip;
  if (cores > kMaxTensorCores) {
    fail("chips",
         fmt::format("{} chips x {} TensorCores = {} devices, more than the emulator lists", hw.chips,
                     hw.cores_per_chip, cores),
         fmt::format("at most {} TensorCores in all (chips x tensor_cores_per_chip)", kMaxTensorCores));
  }
  if (hw.name.size() > kMaxNameLength) {
    fail("name", fmt::format("'name' is {} characters long", hw.name.size()),
         fmt::format("a name of at most {} characters", kMaxNameLength));
  }
}

}  // namespace accel::tpu
