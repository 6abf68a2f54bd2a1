// Hostile hardware descriptions: every value out of its physical range,
// non-finite numbers, duplicate keys, wrong types, YAML tricks and huge
// systems are refused with one ConfigError that says file:line:column --
// never a crash, a hang, a bare yaml-cpp message or a system too big to list.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hardware_text_support.hpp"
#include "timing/config_error.hpp"
#include "timing/config_loader.hpp"
#include "timing/hardware_limits.hpp"
#include "timing/presets.hpp"

namespace accel::tpu {
namespace {

using testing::kValid;
using testing::load_error;
using testing::replace;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct OutOfRange {
  std::string from, to;  // edit of kValid
  std::string key;
  std::string where;     // "line:column" of the value
  std::string expected;  // part of the expectation
};

TEST(PresetRanges, EachKindOfFieldOutOfRangeNamesFileLineColumn) {
  const std::vector<OutOfRange> cases{
      {"clock_hz: 1e9", "clock_hz: 1e307", "clock_hz", "2:11", "a frequency in Hz in [1e+06, 1e+10]"},
      {"clock_hz: 1e9", "clock_hz: -1e9", "clock_hz", "2:11", "[1e+06, 1e+10]"},
      {"published_peak_ops_per_s: 32768e9", "published_peak_ops_per_s: 0", "published_peak_ops_per_s", "4:27",
       "operations per second"},
      {"chips: 4", "chips: 0", "chips", "5:8", "an integer in [1, 65536]"},
      {"tensor_cores_per_chip: 1", "tensor_cores_per_chip: 65", "tensor_cores_per_chip", "6:24", "[1, 64]"},
      {"mxus: 1", "mxus: 100", "core.mxus", "8:9", "[1, 64]"},
      {"rows: 128", "rows: 8192", "core.mxu.rows", "10:11", "an integer in [1, 4096]"},
      {"columns: 128", "columns: -128", "core.mxu.columns", "11:14", "[1, 4096]"},
      {"lanes: 128", "lanes: 100000", "core.vector_unit.lanes", "15:37", "[1, 4096]"},
      {"vmem_bytes: 16 MiB", "vmem_bytes: 100 GiB", "core.vmem_bytes", "16:15", "[1 KiB, 64 GiB]"},
      {"vmem_bytes: 16 MiB", "vmem_bytes: 4194304 TiB", "core.vmem_bytes", "16:15", "[1 KiB, 64 GiB]"},
      {"capacity_bytes: 16 GiB", "capacity_bytes: 2 TiB", "hbm.capacity_bytes", "18:19", "[1 MiB, 1 TiB]"},
      {"capacity_bytes: 16 GiB", "capacity_bytes: -16 GiB", "hbm.capacity_bytes", "18:19", "[1 MiB, 1 TiB]"},
      {"bandwidth_bytes_per_s: 1e12", "bandwidth_bytes_per_s: 1e15", "hbm.bandwidth_bytes_per_s", "19:26",
       "bytes per second in [1e+06, 1e+14]"},
      {"links: 4", "links: 1000", "interconnect.links", "22:10", "[1, 64]"},
      {"link_latency_s: 1e-6", "link_latency_s: -1", "interconnect.link_latency_s", "24:19", "seconds in [0, 1]"},
      {"link_bandwidth_bytes_per_s: 50e9", "link_bandwidth_bytes_per_s: 0", "interconnect.link_bandwidth_bytes_per_s",
       "23:31", "bytes per second"},
      {"dims: [2, 2]", "dims: [2, 100000]", "interconnect.dims", "25:9", "[1, 65536]"},
  };
  for (const auto& c : cases) {
    const ConfigError error = load_error(replace(kValid, c.from, c.to));
    const std::string what = error.what();
    EXPECT_EQ(error.key(), c.key) << what;
    EXPECT_EQ(what.rfind("test.yaml:" + c.where + ": ", 0), 0u) << c.to << " -> " << what;
    EXPECT_TRUE(contains(what, "out of range")) << what;
    EXPECT_TRUE(contains(error.expected(), c.expected)) << c.to << " -> " << error.expected();
  }
}

TEST(PresetRanges, SizesTooLargeForAnIntegerAreRefusedNotRounded) {
  // llround of 1e300 bytes is undefined behaviour; it must never be printed as a size.
  const ConfigError error = load_error(replace(kValid, "capacity_bytes: 16 GiB", "capacity_bytes: 1e300 TB"));
  EXPECT_EQ(std::string(error.what()).rfind("test.yaml:18:19: 'hbm.capacity_bytes' is '1e300 TB', out of range", 0), 0u)
      << error.what();
  EXPECT_EQ(error.expected(), "a size in bytes in [1 MiB, 1 TiB], e.g. 4096 or '16 MiB'");
  const ConfigError count = load_error(replace(kValid, "chips: 4", "chips: 1e12"));
  EXPECT_EQ(std::string(count.what()).rfind("test.yaml:5:8: 'chips' is '1e12', out of range", 0), 0u) << count.what();
}

TEST(PresetRanges, NanAndInfinityAreNotNumbers) {
  for (const std::string value : {".nan", "nan", "NaN", ".inf", "-.inf", "inf", "infinity", "1e400", "0x10"}) {
    const ConfigError error = load_error(replace(kValid, "clock_hz: 1e9", "clock_hz: " + value));
    EXPECT_EQ(std::string(error.what()).rfind("test.yaml:2:11: 'clock_hz' is '" + value + "', not a finite number", 0),
              0u)
        << error.what();
  }
  const ConfigError size = load_error(replace(kValid, "vmem_bytes: 16 MiB", "vmem_bytes: nan MiB"));
  EXPECT_EQ(size.key(), "core.vmem_bytes");
  EXPECT_EQ(size.line(), 16);
  const ConfigError list = load_error(replace(kValid, "dims: [2, 2]", "dims: [2, .inf]"));
  EXPECT_EQ(list.key(), "interconnect.dims");
  EXPECT_EQ(list.line(), 25);
  EXPECT_EQ(list.column(), 13);
}

TEST(PresetDuplicateKeys, ADuplicateKeyIsAnErrorAtItsSecondOccurrence) {
  ConfigError error = load_error(replace(kValid, "chips: 4\n", "chips: 4\nchips: 8\n"));
  EXPECT_EQ(std::string(error.what()).rfind("test.yaml:6:1: duplicate key 'chips' (first at line 5)", 0), 0u)
      << error.what();
  error = load_error(replace(kValid, "    rows: 128\n", "    rows: 128\n    rows: 64\n"));
  EXPECT_EQ(error.key(), "core.mxu.rows");
  EXPECT_EQ(error.line(), 11);
  EXPECT_EQ(error.column(), 5);
  error = load_error(replace(kValid, "{sublanes: 8,", "{sublanes: 8, sublanes: 4,"));
  EXPECT_EQ(error.key(), "core.vector_unit.sublanes");
  EXPECT_EQ(error.line(), 15);
}

TEST(PresetWrongTypes, WrongTypesNameFileAndPositionNotABareConversionError) {
  struct Case {
    std::string from, to, where;
  };
  const std::vector<Case> cases{
      {"chips: 4", "chips: [4]", "test.yaml:5:8: 'chips' is a list, not an integer"},
      {"chips: 4", "chips: four", "test.yaml:5:8: 'chips' is 'four', not an integer"},
      {"chips: 4", "chips: 4.5", "test.yaml:5:8: 'chips' is '4.5', not an integer"},
      {"clock_hz: 1e9", "clock_hz: {ghz: 1}", "test.yaml:2:11: 'clock_hz' is a mapping, not a finite number"},
      {"clock_hz: 1e9", "clock_hz:", "test.yaml:2:1: 'clock_hz' is empty, not a finite number"},
      {"name: test", "name: [a, b]", "test.yaml:1:7: 'name' is not a scalar"},
      {"name: test", "? [a, b]\n: 1\nname: test", "test.yaml:1:3: a key of 'the document' is a mapping or a list"},
      {"vmem_bytes: 16 MiB", "vmem_bytes: {a: 1}", "test.yaml:16:15: 'core.vmem_bytes' is a mapping, not a size"},
      {"dims: [2, 2]", "dims: {x: 2}", "test.yaml:25:9: 'interconnect.dims' is not a list"},
      {"dims: [2, 2]", "dims: [[2], 2]", "test.yaml:25:10: 'interconnect.dims' is a list, not an integer"},
      {"hbm:\n  capacity_bytes: 16 GiB\n  bandwidth_bytes_per_s: 1e12\n", "hbm: 5\n", "test.yaml:17:6: 'hbm' is not a mapping"},
  };
  for (const auto& c : cases) {
    const ConfigError error = load_error(replace(kValid, c.from, c.to));
    const std::string what = error.what();
    EXPECT_EQ(what.rfind(c.where, 0), 0u) << c.to << " -> " << what;
    EXPECT_FALSE(contains(what, "bad conversion")) << what;
  }
}

TEST(PresetWrongTypes, NonMappingDocumentsAndSyntaxErrors) {
  for (const std::string text : {"", "42", "[1, 2]", "name: [unclosed\n", "a: b: c", "{", "\t- x", "&a [*a]",
                                 "!!binary AAAA"}) {
    const ConfigError error = load_error(text);
    EXPECT_EQ(error.file(), "test.yaml") << text;
    EXPECT_EQ(std::string(error.what()).rfind("test.yaml", 0), 0u) << error.what();
  }
}

TEST(PresetYamlTricks, AliasLoopsAndBombsAreRefused) {
  const ConfigError loop = load_error(replace(kValid, "dims: [2, 2]", "dims: &d [2, *d]"));
  EXPECT_TRUE(contains(loop.what(), "anchor loop")) << loop.what();
  EXPECT_EQ(loop.line(), 25);
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 9; ++level) {
    bomb += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) bomb += (i > 0 ? ", *a" : "*a") + std::to_string(level - 1);
    bomb += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const ConfigError error = load_error(bomb + kValid);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(contains(error.what(), "alias bomb")) << error.what();
}

TEST(PresetYamlTricks, DeepNestingIsRefused) {
  const std::string deep = "name: " + std::string(200, '[') + std::string(200, ']') + "\n";
  const ConfigError error = load_error(deep);
  EXPECT_TRUE(contains(error.what(), "nesting deeper than")) << error.what();
  EXPECT_EQ(error.line(), 1);
}

TEST(PresetSystemSize, AMillionCorePresetIsRefusedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  ConfigError error =
      load_error(replace(replace(kValid, "chips: 4", "chips: 1000000"), "dims: [2, 2]", "dims: [1000, 1000]"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(std::string(error.what()).rfind("test.yaml:5:8: 'chips' is 1000000, out of range", 0), 0u) << error.what();
  // In range one by one, too many TensorCores together.
  error = load_error(replace(replace(replace(kValid, "chips: 4", "chips: 65536"), "tensor_cores_per_chip: 1",
                                     "tensor_cores_per_chip: 64"),
                             "dims: [2, 2]", "dims: [256, 256]"));
  EXPECT_EQ(error.key(), "chips");
  EXPECT_TRUE(contains(error.what(), "4194304 devices")) << error.what();
  EXPECT_TRUE(contains(error.expected(), "at most 16384 TensorCores")) << error.expected();
}

TEST(PresetSystemSize, EditedHardwareIsCheckedAgain) {
  // The runtime's tpu_sim.chips and the command line's what-ifs edit a loaded Hardware.
  Hardware hw = load_hardware_text(kValid, "test.yaml");
  hw.chips = 1 << 20;
  hw.interconnect.dims = {1 << 10, 1 << 10};
  EXPECT_THROW(validate_hardware(hw), ConfigError);
  SystemSelection selection{.preset_or_file = "tpu_v4"};
  selection.hbm_bandwidth_bytes_per_s = 1e300;
  try {
    load_system(selection);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.key(), "hbm.bandwidth_bytes_per_s");
    EXPECT_TRUE(contains(error.what(), "out of range")) << error.what();
  }
}

TEST(PresetOverrides, OverridesAreValidatedLikeTheFile) {
  ConfigError error = load_error(kValid, {parse_field_override("clock_hz=.nan")});
  EXPECT_EQ(std::string(error.what()).rfind("override 'clock_hz=.nan': 'clock_hz' is '.nan', not a finite number", 0),
            0u)
      << error.what();
  error = load_error(kValid, {parse_field_override("core.mxu.rows=[")});
  EXPECT_EQ(std::string(error.what()).rfind("override 'core.mxu.rows=[':1:", 0), 0u) << error.what();
  error = load_error(kValid, {parse_field_override("core={mxus: 1, mxus: 2}")});
  EXPECT_TRUE(contains(error.what(), "duplicate key 'mxus'")) << error.what();
  error = load_error(kValid, {parse_field_override("chips.x=1")});
  EXPECT_TRUE(contains(error.what(), "'chips' does not name a section")) << error.what();
  // An empty part anywhere, the last included, is the override's own error.
  for (const std::string key : {"core.mxu.", ".core", "core..mxu"}) {
    error = load_error(kValid, {parse_field_override(key + "=5")});
    EXPECT_EQ(error.file(), "override '" + key + "=5'") << error.what();
    EXPECT_TRUE(contains(error.what(), "empty key part")) << error.what();
  }
  error = load_error("42", {parse_field_override("chips=1")});
  EXPECT_EQ(error.file(), "override 'chips=1'");
  error = load_error(kValid, {parse_field_override("hbm={capacity_bytes: 2 TiB, bandwidth_bytes_per_s: 1e12}")});
  EXPECT_EQ(error.file(), "override 'hbm={capacity_bytes: 2 TiB, bandwidth_bytes_per_s: 1e12}'") << error.what();
  EXPECT_EQ(error.key(), "hbm.capacity_bytes");
  error = load_error(kValid, {parse_field_override("hbm.capacity_bytes=1e30")});
  EXPECT_TRUE(contains(error.what(), "override 'hbm.capacity_bytes=1e30'")) << error.what();
}

TEST(PresetFiles, NotARegularFileIsAnErrorNotAHang) {
  const std::string fifo = ::testing::TempDir() + "/tpu_fifo.yaml";
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(load_hardware_file(fifo), ConfigError);
  std::filesystem::remove(fifo);
  EXPECT_THROW(load_hardware_file(::testing::TempDir()), ConfigError);
  const std::string big = ::testing::TempDir() + "/tpu_big.yaml";
  std::ofstream(big) << kValid << "# " << std::string(kMaxHardwareFileBytes, 'x') << "\n";
  try {
    load_hardware_file(big);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.file(), big);
    EXPECT_TRUE(contains(error.what(), "too large")) << error.what();
  }
}

TEST(PresetRanges, EveryShippedPresetSitsInsideTheRanges) {
  for (const auto& name : list_presets()) {
    EXPECT_NO_THROW(load_system({.preset_or_file = name})) << name;
  }
  EXPECT_GE(list_presets().size(), 7u);
}

TEST(PresetRanges, ThePresetReferenceDocumentsEveryRange) {
  std::ifstream in(std::string(TPU_TEST_CONFIG_DIR) + "/../../docs/tpu-emulator.md");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& limit : field_limits()) {
    EXPECT_TRUE(contains(text.str(), "| `" + std::string(limit.key) + "` |")) << limit.key << " has no table row";
  }
  EXPECT_TRUE(contains(text.str(), std::to_string(kMaxTensorCores))) << "the TensorCore bound is not documented";
}

}  // namespace
}  // namespace accel::tpu
