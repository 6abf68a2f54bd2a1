// Presets load, match their published peaks, and bad descriptions fail with
// file, line, column, key and what was expected.
#include <gtest/gtest.h>

#include <fstream>

#include "hardware_text_support.hpp"
#include "timing/config_error.hpp"
#include "timing/config_loader.hpp"
#include "timing/presets.hpp"

namespace accel::tpu {
namespace {

const std::vector<std::string> kPresets{"tpu_v1", "tpu_v2", "tpu_v3", "tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e"};

TEST(Presets, AllPresetsAreFound) {
  const auto names = list_presets();
  for (const auto& preset : kPresets) EXPECT_NE(std::find(names.begin(), names.end(), preset), names.end()) << preset;
}

TEST(Presets, ComputedPeakEqualsPublishedPeak) {
  for (const auto& preset : kPresets) {
    const Hardware hw = load_system({.preset_or_file = preset});
    const double peak = peak_ops_per_s_per_chip(hw);
    // Published peaks are rounded to 3 significant figures.
    EXPECT_NEAR(peak / hw.published_peak_ops_per_s, 1.0, 0.01) << preset << ": computed " << peak;
  }
}

TEST(Presets, TpuV1MatchesThePaper) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v1"});
  EXPECT_EQ(hw.core.mxu.rows, 256);
  EXPECT_EQ(hw.core.mxu.input_type, NumberType::kInt8);
  EXPECT_EQ(hw.core.vmem_bytes, 24ll << 20);
  EXPECT_EQ(hw.core.accumulator_bytes, 4ll << 20);
  EXPECT_EQ(hw.hbm.capacity_bytes, 8ll << 30);
  EXPECT_NEAR(peak_ops_per_s_per_chip(hw), 92e12, 0.5e12);
  // J17 Fig. 5: the roofline ridge is about 1350 MACs per weight byte.
  EXPECT_NEAR(ridge_point_macs_per_byte(hw), 1350, 10);
}

TEST(Presets, TpuV4MatchesThePaper) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});
  EXPECT_EQ(hw.cores_per_chip, 2);
  EXPECT_EQ(hw.core.mxus, 4);
  EXPECT_EQ(hw.clock_hz, 1050e6);
  EXPECT_EQ(hw.interconnect.topology, Topology::kTorus3D);
  EXPECT_EQ(hw.interconnect.links, 6);
  EXPECT_EQ(hw.interconnect.link_bandwidth_bytes_per_s, 45e9);  // one way, the scaling book's figure
  EXPECT_EQ(hw.interconnect.link_latency_s, 1e-6);
  EXPECT_EQ(hw.interconnect.wraparound_axis, 4);
  EXPECT_FALSE(hw.clock_derived_from_peak);
  EXPECT_TRUE(load_system({.preset_or_file = "tpu_v6e"}).clock_derived_from_peak);
}

TEST(Presets, DevicesAreOnePerTensorCore) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});  // 4 chips x 2 cores
  EXPECT_EQ(device_count(hw), 8);
  const auto names = device_names(hw);
  EXPECT_EQ(names.front(), "TPU:0");
  EXPECT_EQ(names.back(), "TPU:7");
}

TEST(Presets, WhatIfOverrides) {
  SystemSelection selection{.preset_or_file = "tpu_v4"};
  selection.array_rows = 32;
  selection.array_columns = 16;
  selection.dataflow = Dataflow::kOutputStationary;
  selection.overrides.push_back(parse_field_override("hbm.bandwidth_bytes_per_s=2e12"));
  const Hardware hw = load_system(selection);
  EXPECT_EQ(hw.core.mxus, 1);
  EXPECT_EQ(hw.core.mxu.rows, 32);
  EXPECT_EQ(hw.core.mxu.columns, 16);
  EXPECT_EQ(hw.core.mxu.dataflow, Dataflow::kOutputStationary);
  EXPECT_EQ(hw.hbm.bandwidth_bytes_per_s, 2e12);
}

TEST(Presets, UnknownPresetListsTheKnownOnes) {
  try {
    load_system({.preset_or_file = "tpu_v9"});
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("tpu_v4"), std::string::npos) << error.what();
  }
}

using testing::kValid;
using testing::load_error;
using testing::replace;

TEST(ConfigErrors, ValidDescriptionLoads) {
  const Hardware hw = load_hardware_text(kValid, "test.yaml");
  EXPECT_EQ(hw.core.vmem_bytes, 16 << 20);
  EXPECT_EQ(hw.chips, 4);
}

TEST(ConfigErrors, UnknownKeySuggestsTheClosest) {
  const ConfigError error = load_error(replace(kValid, "clock_hz: 1e9", "clock_hx: 1e9"));
  EXPECT_EQ(error.file(), "test.yaml");
  EXPECT_EQ(error.line(), 2);
  EXPECT_EQ(error.column(), 1);
  EXPECT_EQ(error.key(), "clock_hx");
  EXPECT_NE(std::string(error.what()).find("did you mean 'clock_hz'?"), std::string::npos) << error.what();
  EXPECT_EQ(std::string(error.what()).rfind("test.yaml:2:1: unknown key", 0), 0u) << error.what();
}

TEST(ConfigErrors, UnknownNestedKey) {
  const ConfigError error = load_error(replace(kValid, "    columns: 128", "    colums: 128"));
  EXPECT_EQ(error.key(), "core.mxu.colums");
  EXPECT_EQ(error.line(), 11);
  EXPECT_EQ(error.column(), 5);
  EXPECT_NE(std::string(error.what()).find("did you mean 'columns'?"), std::string::npos) << error.what();
}

TEST(ConfigErrors, MissingField) {
  const ConfigError error = load_error(replace(kValid, "    dataflow: ws\n", ""));
  EXPECT_EQ(error.key(), "core.mxu.dataflow");
  EXPECT_NE(std::string(error.what()).find("missing key 'core.mxu.dataflow'"), std::string::npos) << error.what();
}

TEST(ConfigErrors, ZeroAndNegativeSizes) {
  ConfigError error = load_error(replace(kValid, "rows: 128", "rows: 0"));
  EXPECT_EQ(error.key(), "core.mxu.rows");
  EXPECT_EQ(error.line(), 10);
  EXPECT_EQ(error.expected(), "an integer in [1, 4096]");
  error = load_error(replace(kValid, "bandwidth_bytes_per_s: 1e12", "bandwidth_bytes_per_s: -1e12"));
  EXPECT_EQ(error.key(), "hbm.bandwidth_bytes_per_s");
  error = load_error(replace(kValid, "vmem_bytes: 16 MiB", "vmem_bytes: 0"));
  EXPECT_EQ(error.key(), "core.vmem_bytes");
  error = load_error(replace(kValid, "vmem_bytes: 16 MiB", "vmem_bytes: 16 parsecs"));
  EXPECT_NE(std::string(error.what()).find("'16 MiB'"), std::string::npos) << error.what();
}

TEST(ConfigErrors, BadEnumValues) {
  const ConfigError error = load_error(replace(kValid, "dataflow: ws", "dataflow: rs"));
  EXPECT_EQ(error.key(), "core.mxu.dataflow");
  EXPECT_EQ(error.expected(), "ws, os or is");
}

TEST(ConfigErrors, TileThatDoesNotFitTheBuffer) {
  const ConfigError error = load_error(replace(kValid, "vmem_bytes: 16 MiB", "vmem_bytes: 64 KiB"));
  EXPECT_EQ(error.key(), "core.vmem_bytes");
  EXPECT_EQ(error.line(), 16);
  EXPECT_NE(std::string(error.what()).find("does not fit the on-chip buffer"), std::string::npos) << error.what();
}

TEST(ConfigErrors, TopologyThatDoesNotHoldTheChips) {
  ConfigError error = load_error(replace(kValid, "dims: [2, 2]", "dims: [2, 3]"));
  EXPECT_EQ(error.key(), "interconnect.dims");
  error = load_error(replace(kValid, "dims: [2, 2]", "dims: [4]"));
  EXPECT_EQ(error.key(), "interconnect.dims");
  error = load_error(replace(kValid, "links: 4", "links: 2"));
  EXPECT_EQ(error.key(), "interconnect.links");
}

TEST(ConfigErrors, OverridesAreNamedInErrors) {
  const ConfigError error = load_error(kValid, {parse_field_override("core.mxu.rows=-3")});
  EXPECT_EQ(error.key(), "core.mxu.rows");
  EXPECT_NE(error.file().find("core.mxu.rows=-3"), std::string::npos) << error.what();
  EXPECT_THROW(parse_field_override("no_equals_sign"), ConfigError);
}

TEST(ConfigErrors, WhatIfArrayThatDoesNotFit) {
  SystemSelection selection{.preset_or_file = "tpu_v4"};
  selection.array_rows = 4096;
  selection.array_columns = 4096;
  EXPECT_THROW(load_system(selection), ConfigError);
}

TEST(ConfigErrors, YamlSyntaxError) {
  const ConfigError error = load_error("name: [unclosed\n");
  EXPECT_EQ(error.file(), "test.yaml");
  EXPECT_GT(error.line(), 0);
}

TEST(ConfigErrors, LoadsAFileByPath) {
  const std::string path = ::testing::TempDir() + "/custom_tpu.yaml";
  std::ofstream(path) << kValid;
  const Hardware hw = load_system({.preset_or_file = path});
  EXPECT_EQ(hw.name, "test");
  std::ofstream(path) << replace(kValid, "chips: 4", "chips: 4\nchipz: 5");
  try {
    load_system({.preset_or_file = path});
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.file(), path);
    EXPECT_EQ(error.line(), 6);
  }
}

}  // namespace
}  // namespace accel::tpu
