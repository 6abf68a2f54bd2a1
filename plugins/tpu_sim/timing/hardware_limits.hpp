// The physical range of every numeric field of a hardware description, with
// its unit, and the one pass that checks a Hardware against them. Ranges sit
// well outside every published TPU (docs/tpu-emulator.md lists them) but keep
// the emulator's arithmetic in int64 and its loops and allocations small:
// a description that passes cannot give negative cycles, absurd times or a
// device list too long to print.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "timing/hardware_config.hpp"

namespace accel::tpu {

enum class FieldUnit { kCount, kHertz, kOpsPerSecond, kBytes, kBytesPerSecond, kSeconds, kPicojoules, kWatts };

struct FieldLimit {
  std::string_view key;  // dotted key, e.g. "core.mxu.rows"; "interconnect.dims" limits each entry
  FieldUnit unit;
  double min;
  double max;
};

// Every bounded field, in schema order.
std::span<const FieldLimit> field_limits();
// The limit of `key`; nullptr for fields without one (name, enums).
const FieldLimit* find_field_limit(std::string_view key);

// TensorCores of a whole system (chips x cores per chip): each is a device
// the runtime lists, allocates state for and loops over.
inline constexpr std::int64_t kMaxTensorCores = 16384;
// Longest preset name: it becomes part of every device's description.
inline constexpr std::size_t kMaxNameLength = 128;

// "an integer in [1, 4096]", "a frequency in Hz in [1e+06, 1e+10]",
// "a size in bytes in [1 MiB, 1 TiB]": the expectation in error messages.
std::string describe_range(const FieldLimit& limit);

// Called with the dotted key, what is wrong and what was expected; it throws.
using FieldFailure = std::function<void(const std::string& key, const std::string& problem, const std::string& expected)>;

// Checks every field of `hw` against field_limits() and the system's
// TensorCore count against kMaxTensorCores.
void check_field_ranges(const Hardware& hw, const FieldFailure& fail);

}  // namespace accel::tpu
