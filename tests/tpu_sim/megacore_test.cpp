// Megacore: on a chip whose preset says its TensorCores act as one (TPU v4,
// v5p), TimingOptions::megacore spreads an op's folds over both cores'
// MXUs; on a one-core chip (v5e) it changes nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "timing/config_loader.hpp"
#include "timing/config_error.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"

namespace accel::tpu {
namespace {

Hardware preset(const std::string& name, std::vector<FieldOverride> overrides = {}) {
  return load_system(SystemSelection{.preset_or_file = name, .overrides = std::move(overrides)});
}

TEST(Megacore, PresetsSayWhichChipsHaveIt) {
  EXPECT_TRUE(preset("tpu_v4").megacore);
  EXPECT_TRUE(preset("tpu_v5p").megacore);
  for (const char* name : {"tpu_v1", "tpu_v2", "tpu_v3", "tpu_v5e", "tpu_v6e"}) EXPECT_FALSE(preset(name).megacore) << name;
  EXPECT_FALSE(preset("tpu_v4", {{"megacore", "false"}}).megacore);
  EXPECT_THROW(preset("tpu_v4", {{"megacore", "maybe"}}), ConfigError);
}

// A large matmul: the folds split evenly over 2 x 4 MXUs instead of 4, so
// the busiest MXU runs half the folds and the compute takes half the cycles
// (less one fill and drain, which both still pay once).
TEST(Megacore, HalvesALargeMatmulsComputeOnV4) {
  const Hardware hw = preset("tpu_v4");
  const OpTiming one = TimingModel(hw).estimate_matmul(8192, 8192, 8192, NumberType::kBf16);
  const OpTiming mega = TimingModel(hw, {.megacore = true}).estimate_matmul(8192, 8192, 8192, NumberType::kBf16);
  ASSERT_EQ(one.folds_per_mxu % 2, 0);
  EXPECT_EQ(mega.folds_per_mxu * 2, one.folds_per_mxu);
  const std::int64_t t = one.mapping.time_dim, r = hw.core.mxu.rows, c = hw.core.mxu.columns;
  EXPECT_EQ(2 * mega.compute_cycles - one.compute_cycles, t + 2 * r + c - 2 - std::max(t, r));
  EXPECT_NEAR(static_cast<double>(mega.compute_cycles) / static_cast<double>(one.compute_cycles), 0.5, 1e-3);
  EXPECT_EQ(mega.useful_macs, one.useful_macs);
  // Same work on twice the MXUs: utilization is counted against both cores.
  EXPECT_NEAR(mega.mxu_utilization, one.mxu_utilization * one.cycles / (2.0 * mega.cycles), 1e-12);
}

// A chip's TensorCores share its HBM: one core alone has half a v4's
// bandwidth, an op spread over the chip in megacore (or the megacore view's
// one device) all of it; a memory-bound op takes twice the memory cycles
// on one core.
TEST(Megacore, TheCoresShareTheChipsHbmBandwidth) {
  const Hardware v4 = preset("tpu_v4");
  const double chip = v4.hbm.bandwidth_bytes_per_s / v4.clock_hz;
  EXPECT_DOUBLE_EQ(TimingModel(v4).hbm_bytes_per_cycle(), chip / 2);
  EXPECT_DOUBLE_EQ(TimingModel(v4, {.megacore = true}).hbm_bytes_per_cycle(), chip);
  EXPECT_DOUBLE_EQ(TimingModel(megacore_view(v4)).hbm_bytes_per_cycle(), chip);
  const Hardware v5e = preset("tpu_v5e");  // one core: the whole chip's
  EXPECT_DOUBLE_EQ(TimingModel(v5e).hbm_bytes_per_cycle(), v5e.hbm.bandwidth_bytes_per_s / v5e.clock_hz);
  const OpTiming one_core = TimingModel(v4).estimate_vector_op(VectorOpKind::kElementwise, 1 << 24, NumberType::kBf16);
  const OpTiming megacore =
      TimingModel(v4, {.megacore = true}).estimate_vector_op(VectorOpKind::kElementwise, 1 << 24, NumberType::kBf16);
  EXPECT_EQ(one_core.hbm_bytes, megacore.hbm_bytes);
  EXPECT_NEAR(static_cast<double>(one_core.memory_cycles) / static_cast<double>(megacore.memory_cycles), 2.0, 1e-4);  // each rounded up
}

TEST(Megacore, ChangesNothingOnAOneCoreChipOrWhenOff) {
  const Hardware v5e = preset("tpu_v5e");
  const OpTiming one = TimingModel(v5e).estimate_matmul(8192, 8192, 8192, NumberType::kBf16);
  const OpTiming mega = TimingModel(v5e, {.megacore = true}).estimate_matmul(8192, 8192, 8192, NumberType::kBf16);
  EXPECT_EQ(mega.compute_cycles, one.compute_cycles);
  EXPECT_EQ(mega.cycles, one.cycles);
  // A v4 whose preset turns megacore off: the option has nothing to use.
  const Hardware v4_off = preset("tpu_v4", {{"megacore", "false"}});
  EXPECT_EQ(TimingModel(v4_off, {.megacore = true}).estimate_matmul(4096, 4096, 4096, NumberType::kBf16).cycles,
            TimingModel(v4_off).estimate_matmul(4096, 4096, 4096, NumberType::kBf16).cycles);
}

// The plugin's tpu_sim.megacore=on presents the chip as one TensorCore
// (megacore_view): the same cycles as the option, one device per chip.
TEST(Megacore, TheOneCoreViewTimesAsTheOption) {
  const Hardware v4 = preset("tpu_v4");
  const Hardware view = megacore_view(v4);
  EXPECT_EQ(view.cores_per_chip, 1);
  EXPECT_EQ(view.core.mxus, 8);
  EXPECT_EQ(view.core.vmem_bytes, 2 * v4.core.vmem_bytes);
  EXPECT_EQ(device_count(view), v4.chips);
  EXPECT_DOUBLE_EQ(peak_ops_per_s_per_chip(view), peak_ops_per_s_per_chip(v4));
  const TimingModel option(v4, {.megacore = true}), as_view(view);
  for (const GemmShape& g : {GemmShape{8192, 8192, 8192}, GemmShape{100, 37, 300}, GemmShape{65536, 512, 512}}) {
    const OpTiming a = option.estimate_matmul(g.m, g.n, g.k, NumberType::kBf16);
    const OpTiming b = as_view.estimate_matmul(g.m, g.n, g.k, NumberType::kBf16);
    EXPECT_EQ(a.cycles, b.cycles);
    EXPECT_EQ(a.hbm_bytes, b.hbm_bytes);
    EXPECT_DOUBLE_EQ(a.mxu_utilization, b.mxu_utilization);
  }
  EXPECT_EQ(option.estimate_vector_op(VectorOpKind::kElementwise, 1 << 20, NumberType::kFp32).cycles,
            as_view.estimate_vector_op(VectorOpKind::kElementwise, 1 << 20, NumberType::kFp32).cycles);
  const Hardware v5e = preset("tpu_v5e");
  EXPECT_EQ(megacore_view(v5e).core.mxus, v5e.core.mxus);
  EXPECT_EQ(device_count(megacore_view(v5e)), device_count(v5e));
}

}  // namespace
}  // namespace accel::tpu
