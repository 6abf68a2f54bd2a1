// libFuzzer target: any bytes given to the TPU preset loader -- as a file,
// and their first line as a key=value override of a valid preset -- either
// load or give one ConfigError that names where ("fuzz.yaml..." or
// "override '..."). What loads must be in range: a device count the
// runtime can list, and GEMM timings that are positive or a clear
// CountOverflowError. Never a crash, a hang or a sanitizer report.
// Built and run by run_preset_fuzzer.sh (ctest label "fuzz").
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "timing/checked_count.hpp"
#include "timing/config_error.hpp"
#include "timing/config_loader.hpp"
#include "timing/hardware_limits.hpp"
#include "timing/interconnect_model.hpp"
#include "timing/op_timing.hpp"

namespace {

using namespace accel::tpu;

constexpr const char* kValidPreset = R"(name: fuzz
clock_hz: 1e9
clock_source: published
published_peak_ops_per_s: 32768e9
chips: 4
tensor_cores_per_chip: 2
core:
  mxus: 1
  mxu: {rows: 128, columns: 128, dataflow: ws, input_type: bf16, accumulator_type: fp32}
  vector_unit: {sublanes: 8, lanes: 128, alus_per_lane: 1}
  vmem_bytes: 16 MiB
hbm: {capacity_bytes: 16 GiB, bandwidth_bytes_per_s: 1e12}
interconnect: {topology: torus_2d, links: 4, link_bandwidth_bytes_per_s: 50e9, dims: [2, 2]}
)";

void require(bool condition) {
  if (!condition) std::abort();
}

// A loaded system must be usable: bounded devices, positive or refused timings.
void exercise(const Hardware& hw, std::string_view text) {
  require(device_count(hw) >= 1 && device_count(hw) <= kMaxTensorCores);
  require(std::isfinite(hw.clock_hz) && hw.clock_hz > 0);
  std::uint64_t seed = 1469598103934665603ull;
  for (char c : text) seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  const std::int64_t m = static_cast<std::int64_t>(seed >> 1) % (std::int64_t{1} << (seed % 62)) + 1;
  const std::int64_t n = static_cast<std::int64_t>(seed % 4096) + 1;
  const std::int64_t k = static_cast<std::int64_t>((seed >> 20) % 100000) + 1;
  const TimingModel model(hw);
  try {
    const OpTiming timing = model.estimate_matmul(m, n, k, hw.core.mxu.input_type);
    require(timing.cycles > 0 && timing.stall_cycles >= 0 && timing.seconds > 0 && std::isfinite(timing.seconds));
  } catch (const CountOverflowError&) {
  }
  const AllReduceEstimate all_reduce = estimate_all_reduce(hw, static_cast<double>(m));
  require(std::isfinite(all_reduce.seconds) && all_reduce.seconds >= 0);
}

bool names_where(const ConfigError& error, std::string_view file) {
  const std::string_view what = error.what();
  return what.substr(0, file.size()) == file || what.substr(0, 10) == "override '";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    exercise(load_hardware_text(text, "fuzz.yaml"), text);
  } catch (const ConfigError& error) {
    require(names_where(error, "fuzz.yaml"));
  }
  const std::string_view first_line = text.substr(0, text.find('\n'));
  if (first_line.find('=') != std::string_view::npos) {
    try {
      exercise(load_hardware_text(kValidPreset, "preset.yaml", {parse_field_override(first_line)}), text);
    } catch (const ConfigError& error) {
      require(names_where(error, "preset.yaml"));
    }
  }
  return 0;
}
