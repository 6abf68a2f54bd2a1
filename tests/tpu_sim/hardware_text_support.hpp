// Shared by the hardware-description tests: a valid description to break one
// field at a time (tests name its lines and columns), the edit that breaks
// it, and the ConfigError a broken one gives.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "timing/config_error.hpp"
#include "timing/config_loader.hpp"

namespace accel::tpu::testing {

// Line numbers in the tests refer to this text.
inline const char* kValid = R"(name: test
clock_hz: 1e9
clock_source: published
published_peak_ops_per_s: 32768e9
chips: 4
tensor_cores_per_chip: 1
core:
  mxus: 1
  mxu:
    rows: 128
    columns: 128
    dataflow: ws
    input_type: bf16
    accumulator_type: fp32
  vector_unit: {sublanes: 8, lanes: 128, alus_per_lane: 1}
  vmem_bytes: 16 MiB
hbm:
  capacity_bytes: 16 GiB
  bandwidth_bytes_per_s: 1e12
interconnect:
  topology: torus_2d
  links: 4
  link_bandwidth_bytes_per_s: 50e9
  link_latency_s: 1e-6
  dims: [2, 2]
)";

// `text` with the first `from` replaced by `to` (a test failure when absent).
inline std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

inline ConfigError load_error(const std::string& yaml, const std::vector<FieldOverride>& overrides = {}) {
  try {
    load_hardware_text(yaml, "test.yaml", overrides);
  } catch (const ConfigError& error) {
    return error;
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return ConfigError("", 0, 0, "", "", "");
}

}  // namespace accel::tpu::testing
