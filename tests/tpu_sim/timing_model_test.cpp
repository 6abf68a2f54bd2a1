// Op timing on presets: lowering, spreading folds over MXUs, memory stalls
// and bounds, vector-unit ops, the interconnect all-reduce and the device
// timeline.
#include <gtest/gtest.h>

#include <cmath>

#include "timing/device_timeline.hpp"
#include "timing/interconnect_model.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"
#include "timing/scalesim_model.hpp"

namespace accel::tpu {
namespace {

Hardware one_array(const std::string& preset, int rows, int columns, Dataflow dataflow) {
  SystemSelection selection{.preset_or_file = preset};
  selection.array_rows = rows;
  selection.array_columns = columns;
  selection.dataflow = dataflow;
  return load_system(selection);
}

TEST(TimingModel, ScaleSimModeReproducesTheWorkedExample) {
  const TimingModel model(one_array("tpu_v4", 8, 8, Dataflow::kWeightStationary),
                          {.convention = TimingConvention::kScaleSim});
  const Conv2dShape conv{.height = 28, .width = 28, .channels = 1, .filters = 32, .kernel_h = 3, .kernel_w = 3};
  const OpTiming timing = model.estimate_conv2d(conv, NumberType::kBf16);
  EXPECT_EQ(timing.cycles, 5583);
  EXPECT_EQ(timing.stall_cycles, 0);
  EXPECT_DOUBLE_EQ(timing.mxu_utilization, 676.0 * 32 * 9 / (5583.0 * 64));
  EXPECT_EQ(timing.folds, 8);
}

TEST(TimingModel, ScaleSimModeMatchesScaleSimOnAnyGemm) {
  for (auto dataflow : {Dataflow::kWeightStationary, Dataflow::kOutputStationary, Dataflow::kInputStationary}) {
    const TimingModel model(one_array("tpu_v4", 32, 16, dataflow), {.convention = TimingConvention::kScaleSim});
    for (const GemmShape& g : {GemmShape{1, 1, 1}, GemmShape{100, 37, 300}, GemmShape{513, 129, 64}}) {
      EXPECT_EQ(model.estimate_matmul(g.m, g.n, g.k, NumberType::kBf16).cycles,
                scalesim_gemm(g, 32, 16, dataflow).cycles);
    }
  }
}

TEST(TimingModel, FoldsSpreadOverTheMxusOfACore) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});  // 4 MXUs of 128x128
  const TimingModel model(hw, {.ideal_memory = true});
  // ws: Sr = K = 512 (4 row folds), Sc = N = 512 (4 column folds): 16 folds, 4 per MXU.
  const OpTiming timing = model.estimate_matmul(1024, 512, 512, NumberType::kBf16);
  EXPECT_EQ(timing.folds, 16);
  EXPECT_EQ(timing.folds_per_mxu, 4);
  EXPECT_EQ(timing.compute_cycles, 3 * 1024 + 1024 + 2 * 128 + 128 - 2);
  EXPECT_EQ(timing.cycles, timing.compute_cycles);
  EXPECT_NEAR(timing.mxu_utilization, 1024.0 * 512 * 512 / (4.0 * 128 * 128 * timing.cycles), 1e-12);
  EXPECT_GT(timing.mxu_utilization, 0.9);
  EXPECT_DOUBLE_EQ(timing.seconds, timing.cycles / 1050e6);
}

TEST(TimingModel, LargeGemmIsComputeBound) {
  const TimingModel model(load_system({.preset_or_file = "tpu_v4"}));
  const OpTiming timing = model.estimate_matmul(4096, 4096, 4096, NumberType::kBf16);
  EXPECT_EQ(timing.bound, Bound::kCompute);
  EXPECT_GT(timing.mxu_utilization, 0.95);
  EXPECT_GT(timing.arithmetic_intensity, 100);
}

TEST(TimingModel, SmallBatchGemmIsMemoryBound) {
  // At batch 8 the MXUs spend 128 cycles loading each 128x128 weight tile, so
  // v4's own HBM just keeps up; a quarter of its bandwidth does not.
  SystemSelection slow{.preset_or_file = "tpu_v4"};
  slow.hbm_bandwidth_bytes_per_s = 300e9;
  const TimingModel model(load_system(slow));
  const OpTiming timing = model.estimate_matmul(8, 8192, 8192, NumberType::kBf16);
  EXPECT_EQ(timing.bound, Bound::kMemory);
  EXPECT_GT(timing.stall_cycles, 0);
  EXPECT_EQ(timing.cycles, timing.compute_cycles + timing.stall_cycles);
  EXPECT_EQ(timing.cycles, timing.memory_cycles);  // memory time dominates
  EXPECT_GE(timing.hbm.weights, 8192ll * 8192 * 2);
  // Ideal memory removes the stalls.
  const TimingModel ideal(load_system(slow), {.ideal_memory = true});
  const OpTiming fast = ideal.estimate_matmul(8, 8192, 8192, NumberType::kBf16);
  EXPECT_EQ(fast.stall_cycles, 0);
  EXPECT_EQ(fast.cycles, timing.compute_cycles);
}

TEST(TimingModel, HbmTrafficGrowsWhenOperandsDoNotFit) {
  // Fits: each operand once.
  HbmTraffic fits = hbm_traffic({1000, 2000, 500}, 1 << 20);
  EXPECT_EQ(fits.total(), 3500);
  // Weights of 10 chunks, input of 3, output of 1: keeping the output's
  // partial sums on chip streams each operand once (a filter gradient).
  const std::int64_t buffer = 4000;  // chunk = 1000
  HbmTraffic reduced = hbm_traffic({2500, 10000, 100}, buffer);
  EXPECT_EQ(reduced.input_passes, 1);
  EXPECT_EQ(reduced.weight_passes, 1);
  EXPECT_EQ(reduced.total(), 2500 + 10000 + 100);
  // An output of 5 chunks: weights resident streams the input 10 times
  // (35000), input resident the weights 3 times (32500), output chunks by
  // rows the weights 5 times (52500), by columns the input 5 times (22500).
  HbmTraffic spill = hbm_traffic({2500, 10000, 5000}, buffer);
  EXPECT_EQ(spill.input_passes, 5);
  EXPECT_EQ(spill.weight_passes, 1);
  EXPECT_EQ(spill.input, 12500);
  EXPECT_EQ(spill.total(), 12500 + 10000 + 5000);
  // A large output and a small input: the input stays, the weights stream 3 times.
  HbmTraffic input_resident = hbm_traffic({2500, 10000, 20000}, buffer);
  EXPECT_EQ(input_resident.weight_passes, 3);
  EXPECT_EQ(input_resident.total(), 2500 + 30000 + 20000);
}

// A GEMM of fewer folds than MXUs shares its rows among them: on a v4 core
// (4 MXUs of 128x128), 64 channels to 64 is one fold, so each MXU streams a
// quarter of the 4096 rows: 1024 + 2 x 128 + 128 - 2 cycles. SCALE-Sim's
// convention keeps the whole stream on one array.
TEST(TimingModel, FewerFoldsThanMxusShareTheRows) {
  const Hardware v4 = load_system({.preset_or_file = "tpu_v4"});
  ASSERT_EQ(v4.core.mxus, 4);
  const OpTiming one_fold = TimingModel(v4, {.ideal_memory = true}).estimate_matmul(4096, 64, 64, NumberType::kBf16);
  EXPECT_EQ(one_fold.folds, 1);
  EXPECT_EQ(one_fold.compute_cycles, 1024 + 2 * 128 + 128 - 2);
  const OpTiming two_folds = TimingModel(v4, {.ideal_memory = true}).estimate_matmul(4096, 256, 64, NumberType::kBf16);
  EXPECT_EQ(two_folds.folds, 2);
  EXPECT_EQ(two_folds.compute_cycles, 2048 + 2 * 128 + 128 - 2);
  const OpTiming scalesim = TimingModel(v4, {.convention = TimingConvention::kScaleSim})
                                .estimate_matmul(4096, 64, 64, NumberType::kBf16);
  EXPECT_GT(scalesim.compute_cycles, 4096);
}

TEST(TimingModel, StallsCountTheExposedFirstLoad) {
  // 1000 compute cycles, 4000 bytes at 2 bytes/cycle = 2000 memory cycles,
  // first tile 200 bytes = 100 cycles: total = memory time.
  MemoryTiming t = overlap_with_compute(1000, 4000, 200, 2.0, false);
  EXPECT_EQ(t.memory_cycles, 2000);
  EXPECT_TRUE(t.memory_bound);
  EXPECT_EQ(t.total_cycles, 2000);
  EXPECT_EQ(t.stall_cycles, 1000);
  // Compute-bound: only the first tile's load is exposed.
  t = overlap_with_compute(5000, 4000, 200, 2.0, false);
  EXPECT_FALSE(t.memory_bound);
  EXPECT_EQ(t.stall_cycles, 100);
  EXPECT_EQ(t.total_cycles, 5100);
  EXPECT_EQ(overlap_with_compute(5000, 4000, 200, 2.0, true).total_cycles, 5000);
}

TEST(TimingModel, VectorOpsUseTheLanes) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});  // 8 x 128 lanes
  EXPECT_EQ(vector_unit_cycles(hw.core.vector_unit, VectorOpKind::kElementwise, 1 << 20).cycles, 1024);
  EXPECT_EQ(vector_unit_cycles(hw.core.vector_unit, VectorOpKind::kElementwise, 1025).cycles, 2);
  EXPECT_EQ(vector_unit_cycles(hw.core.vector_unit, VectorOpKind::kAdamUpdate, 1 << 20).cycles, 12 * 1024);
  EXPECT_EQ(vector_unit_cycles(hw.core.vector_unit, VectorOpKind::kReduction, 1 << 20).cycles, 1024 + 10);
  EXPECT_EQ(vector_unit_cycles(hw.core.vector_unit, VectorOpKind::kSoftmax, 1024).cycles, 8 + 10);
  const TimingModel model(hw);
  const OpTiming relu = model.estimate_vector_op(VectorOpKind::kElementwise, 1 << 20, NumberType::kFp32);
  EXPECT_EQ(relu.compute_cycles, 1024);
  EXPECT_EQ(relu.hbm_bytes, 3ll * 4 * (1 << 20));
  EXPECT_EQ(relu.bound, Bound::kMemory);
  EXPECT_EQ(relu.mxu_utilization, 0.0);
}

TEST(Interconnect, AllReduceOnTheV4Torus) {
  // 2x2x1, 45 GB/s links one way, 1 us per hop, 2 cores/chip; axes of 2
  // have no wraparound (v4's rings close at multiples of 4).
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});
  const double bytes = 1e9;
  const AllReduceEstimate estimate = estimate_all_reduce(hw, bytes);
  // Dim 1 (2 chips): 2 * 1/2 * 1e9 / 45e9; dim 2 on the remaining 0.5e9.
  const double links = 2 * 0.5 * 1e9 / 45e9 + 2 * 0.5 * 0.5e9 / 45e9;
  EXPECT_NEAR(estimate.link_seconds, links, 1e-12);
  EXPECT_NEAR(estimate.latency_seconds, 4e-6, 1e-12);
  EXPECT_NEAR(estimate.on_chip_seconds, 2e9 / 1200e9, 1e-12);
  EXPECT_NEAR(estimate.seconds, links + 4e-6 + 2e9 / 1200e9, 1e-12);
  EXPECT_EQ(estimate.steps, 4);
  // One ring through all 4 chips (the torus topology's wraparound).
  const AllReduceEstimate ring = estimate_all_reduce(hw, bytes, AllReduceAlgorithm::kSingleRing);
  EXPECT_NEAR(ring.link_seconds, 2 * 0.75 * 1e9 / 90e9, 1e-12);
  // A single chip has no link traffic.
  const Hardware v1 = load_system({.preset_or_file = "tpu_v1"});
  EXPECT_EQ(estimate_all_reduce(v1, bytes).seconds, 0.0);
}

TEST(Interconnect, BiggerSliceTakesLonger) {
  SystemSelection selection{.preset_or_file = "tpu_v4"};
  selection.overrides = {parse_field_override("chips=64"), parse_field_override("interconnect.dims=[4,4,4]")};
  const Hardware pod = load_system(selection);
  EXPECT_EQ(device_count(pod), 128);
  const double t = estimate_all_reduce(pod, 1e9).link_seconds;
  // 3 dims of 4, each a bidirectional ring: 2*(3/4)/90e9 * (1e9 + 0.25e9 + 0.0625e9).
  EXPECT_NEAR(t, 1.5 / 90e9 * 1.3125e9, 1e-12);
}

TEST(DeviceTimeline, TotalsAndChromeTrace) {
  const Hardware hw = load_system({.preset_or_file = "tpu_v4"});
  const TimingModel model(hw);
  DeviceTimeline device("TPU:0", 0, hw.clock_hz, peak_macs_per_cycle_per_core(hw));
  const OpTiming a = model.estimate_matmul(256, 256, 256, NumberType::kBf16);
  const OpTiming b = model.estimate_vector_op(VectorOpKind::kElementwise, 65536, NumberType::kFp32);
  device.record(a, "dense/matmul");
  device.record(b);
  const DeviceTotals totals = device.totals();
  EXPECT_EQ(totals.ops, 2);
  EXPECT_EQ(totals.cycles, a.cycles + b.cycles);
  EXPECT_EQ(totals.hbm_bytes, a.hbm_bytes + b.hbm_bytes);
  EXPECT_DOUBLE_EQ(totals.seconds, (a.cycles + b.cycles) / hw.clock_hz);
  const auto trace = DeviceTimeline::chrome_trace({device});
  const auto& events = trace["traceEvents"];
  ASSERT_EQ(events.size(), 3u);  // thread name + 2 ops
  EXPECT_EQ(events[1]["name"], "dense/matmul");
  EXPECT_EQ(events[1]["ph"], "X");
  EXPECT_DOUBLE_EQ(events[2]["ts"].get<double>(), a.cycles * 1e6 / hw.clock_hz);
  EXPECT_EQ(events[2]["name"], "elementwise");
}

}  // namespace
}  // namespace accel::tpu
