// Huge shapes on in-range hardware: counts that fit int64 are exact and
// positive; counts that do not are a CountOverflowError naming what
// overflowed -- never negative cycles or INT64_MIN.
#include <gtest/gtest.h>

#include <limits>

#include "timing/checked_count.hpp"
#include "timing/device_timeline.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"
#include "timing/scalesim_model.hpp"

namespace accel::tpu {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

void expect_sane(const OpTiming& timing) {
  EXPECT_GT(timing.cycles, 0);
  EXPECT_GE(timing.compute_cycles, 0);
  EXPECT_GE(timing.memory_cycles, 0);
  EXPECT_GE(timing.stall_cycles, 0);
  EXPECT_GE(timing.hbm_bytes, 0);
  EXPECT_GT(timing.seconds, 0);
  EXPECT_LE(timing.mxu_utilization, 1.0 + 1e-9);
}

TEST(TimingOverflow, LargestGemmThatFitsIsTimedExactly) {
  // 2^20 x 2^20 x 2^20 = 2^60 MACs: near the top of int64 but representable.
  const TimingModel model(load_system({.preset_or_file = "tpu_v4"}));
  const std::int64_t side = 1 << 20;
  const OpTiming timing = model.estimate_matmul(side, side, side, NumberType::kBf16);
  expect_sane(timing);
  EXPECT_EQ(timing.useful_macs, side * side * side);
  // 4 MXUs of 128x128: at least 2^60 / 2^16 cycles.
  EXPECT_GE(timing.compute_cycles, (side * side * side) / (4 * 128 * 128));
}

TEST(TimingOverflow, GemmBeyondInt64IsAClearError) {
  const TimingModel model(load_system({.preset_or_file = "tpu_v4"}));
  const std::int64_t side = 10'000'000;  // 10^21 MACs
  try {
    (void)model.estimate_matmul(side, side, side, NumberType::kBf16);
    FAIL() << "no error";
  } catch (const CountOverflowError& error) {
    EXPECT_NE(std::string(error.what()).find("does not fit a 64-bit count"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)model.estimate_matmul(kMax, 1, 1, NumberType::kBf16), CountOverflowError);
  EXPECT_THROW((void)model.estimate_matmul(kMax - 3, 2, 1, NumberType::kFp32), CountOverflowError);
  EXPECT_THROW(check_gemm({kMax, kMax, 1}), std::invalid_argument);
}

TEST(TimingOverflow, EveryDataflowAndConventionStaysPositiveOrThrows) {
  for (const Dataflow dataflow : {Dataflow::kWeightStationary, Dataflow::kOutputStationary, Dataflow::kInputStationary}) {
    for (const TimingConvention convention : {TimingConvention::kTpu, TimingConvention::kScaleSim}) {
      SystemSelection selection{.preset_or_file = "tpu_v1"};
      selection.dataflow = dataflow;
      const TimingModel model(load_system(selection), {.convention = convention});
      // Thin shapes: one dimension carries the size, padding and folds multiply it.
      for (const GemmShape shape : {GemmShape{1, 1, kMax / 2}, GemmShape{kMax / 2, 1, 1}, GemmShape{1, kMax / 2, 1},
                                    GemmShape{1 << 30, 1 << 30, 1 << 2}}) {
        try {
          expect_sane(model.estimate_gemm("matmul", shape, {shape.m, shape.k, shape.m}));
        } catch (const CountOverflowError&) {
          // A clear error is an allowed outcome; a wrapped count is not.
        }
      }
    }
  }
}

TEST(TimingOverflow, HugeConvolutionAndVectorOps) {
  const TimingModel model(load_system({.preset_or_file = "tpu_v4"}));
  const Conv2dShape conv{.batch = 1 << 20, .height = 1 << 20, .width = 1 << 20, .channels = 1 << 20,
                         .filters = 1 << 20, .kernel_h = 3, .kernel_w = 3};
  EXPECT_THROW((void)model.estimate_conv2d(conv, NumberType::kBf16), CountOverflowError);
  EXPECT_THROW((void)scalesim_conv2d(conv, 128, 128, Dataflow::kOutputStationary), CountOverflowError);
  EXPECT_THROW((void)model.estimate_vector_op(VectorOpKind::kAdamUpdate, kMax / 2, NumberType::kFp32),
               CountOverflowError);
  expect_sane(model.estimate_vector_op(VectorOpKind::kElementwise, std::int64_t{1} << 40, NumberType::kFp32));
}

TEST(TimingOverflow, SlowestInRangeMemoryDoesNotWrapCycles) {
  // 1 MB/s of HBM at 10 GHz: 1e-4 bytes per cycle multiplies the cycle count by 10^4.
  SystemSelection selection{.preset_or_file = "tpu_v4"};
  selection.overrides = {parse_field_override("hbm.bandwidth_bytes_per_s=1e6"), parse_field_override("clock_hz=1e10")};
  const TimingModel model(load_system(selection));
  expect_sane(model.estimate_matmul(1 << 16, 1 << 16, 1 << 16, NumberType::kBf16));
  EXPECT_THROW((void)model.estimate_matmul(1 << 30, 1 << 30, 1, NumberType::kBf16), CountOverflowError);
}

TEST(TimingOverflow, CycleAccurateLimitIsNotFooledByOverflow) {
  const TimingModel model(load_system({.preset_or_file = "tpu_v4"}), {.cycle_accurate = true});
  // rows x columns x cycles of this op is far beyond int64: still refused as too large to step.
  EXPECT_THROW((void)model.estimate_matmul(std::int64_t{1} << 40, std::int64_t{1} << 20, 1, NumberType::kBf16),
               CycleAccurateLimitError);
}

TEST(TimingOverflow, TimelineTotalsSaturate) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});
  DeviceTimeline timeline("TPU:0", 0, hw.clock_hz, peak_macs_per_cycle_per_core(hw));
  OpTiming huge;
  huge.cycles = kMax / 2 + 1;
  huge.useful_macs = kMax;
  for (int i = 0; i < 3; ++i) timeline.record(huge);
  const DeviceTotals totals = timeline.totals();
  EXPECT_EQ(totals.cycles, kMax);
  EXPECT_EQ(totals.useful_macs, kMax);
  EXPECT_GT(totals.seconds, 0);
  EXPECT_EQ(saturating_add(kMax, 1), kMax);
  EXPECT_EQ(checked_round_up(7, 8, "x"), 8);
  EXPECT_THROW(checked_round_up(kMax, 8, "x"), CountOverflowError);
  EXPECT_THROW(checked_ceil_count(1e300, "x"), CountOverflowError);
}

}  // namespace
}  // namespace accel::tpu
