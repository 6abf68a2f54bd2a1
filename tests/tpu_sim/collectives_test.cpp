// Collectives on the emulated slices' real topology: which axes wrap around
// (a torus axis of a multiple of interconnect.wraparound_axis chips), the
// hand counts of a ring collective in its latency- and bandwidth-bound
// regimes, and the all-gathers the scaling book measured on TPU v5e.
#include <gtest/gtest.h>

#include "timing/interconnect_model.hpp"
#include "timing/presets.hpp"

namespace accel::tpu {
namespace {

Hardware slice(const char* preset, std::vector<int> dims) {
  Hardware hw = load_system({.preset_or_file = preset});
  hw.chips = 1;
  for (int size : dims) hw.chips *= size;
  hw.interconnect.dims = std::move(dims);
  return hw;
}

TEST(Collectives, AxesWrapAroundOnlyWherePublished) {
  // v5e: 2D torus, wraparound only on a full axis of the 16x16 pod.
  const Hardware v5e = slice("tpu_v5e", {4, 16});
  EXPECT_FALSE(axis_wraps_around(v5e, 0));
  EXPECT_TRUE(axis_wraps_around(v5e, 1));
  // v4: 4x4x4 cubes closed by optical switches.
  const Hardware v4 = slice("tpu_v4", {4, 4, 8});
  EXPECT_TRUE(axis_wraps_around(v4, 0));
  EXPECT_TRUE(axis_wraps_around(v4, 2));
  EXPECT_FALSE(axis_wraps_around(slice("tpu_v4", {2, 2, 1}), 0));  // a v4-8 is no torus
  EXPECT_FALSE(axis_wraps_around(v4, 3));                           // no such axis
}

// All-gather of B bytes among M chips on a line: (M - 1) / M x B over one
// link each way, M - 1 hops; on a ring both ways at once.
TEST(Collectives, RingCollectivesByHand) {
  const Hardware v5e = slice("tpu_v5e", {4, 16});
  const double link = v5e.interconnect.link_bandwidth_bytes_per_s, hop = v5e.interconnect.link_latency_s;
  ASSERT_EQ(link, 45e9);
  ASSERT_EQ(hop, 1e-6);
  const double bytes = 64e6;
  const AllReduceEstimate line = estimate_collective(v5e, Collective::kAllGather, bytes, 0);
  EXPECT_EQ(line.chips, 4);
  EXPECT_EQ(line.steps, 3);
  EXPECT_DOUBLE_EQ(line.link_seconds, 0.75 * bytes / link);
  EXPECT_DOUBLE_EQ(line.latency_seconds, 3 * hop);
  const AllReduceEstimate ring = estimate_collective(v5e, Collective::kAllGather, bytes, 1);
  EXPECT_EQ(ring.steps, 15);
  EXPECT_DOUBLE_EQ(ring.link_seconds, 15.0 / 16.0 * bytes / (2 * link));
  // A reduce-scatter costs an all-gather; an all-reduce both; an all-to-all a
  // quarter of an all-gather on a ring, half on a line.
  EXPECT_DOUBLE_EQ(estimate_collective(v5e, Collective::kReduceScatter, bytes, 0).seconds, line.seconds);
  const AllReduceEstimate all_reduce = estimate_collective(v5e, Collective::kAllReduce, bytes, 0);
  EXPECT_DOUBLE_EQ(all_reduce.link_seconds, 2 * line.link_seconds);
  EXPECT_EQ(all_reduce.steps, 6);
  EXPECT_DOUBLE_EQ(estimate_collective(v5e, Collective::kAllToAll, bytes, 1).link_seconds, ring.link_seconds / 4);
  EXPECT_DOUBLE_EQ(estimate_collective(v5e, Collective::kAllToAll, bytes, 0).link_seconds, line.link_seconds / 2);
  // Small: latency-bound; large: bandwidth-bound.
  const AllReduceEstimate small = estimate_collective(v5e, Collective::kAllGather, 4096, 0);
  EXPECT_GT(small.latency_seconds, 10 * small.link_seconds);
  EXPECT_GT(line.link_seconds, 100 * line.latency_seconds);
  EXPECT_THROW(estimate_collective(v5e, Collective::kAllGather, bytes, 2), std::invalid_argument);
}

// jax-ml/scaling-book, sharding.md: an all-gather over an axis of 4 v5e
// chips without wraparound of bf16[2048, 8192] (33.5 MB gathered) measured
// 680 us; of a 32 kB shard about 8 us.
TEST(Collectives, TheMeasuredV5eAllGathers) {
  const Hardware v5e = slice("tpu_v5e", {4, 64});
  const double large = estimate_collective(v5e, Collective::kAllGather, 2048.0 * 8192 * 2, 0).seconds;
  EXPECT_NEAR(large / 680e-6, 1.0, 0.25) << large * 1e6 << " us";
  const double small = estimate_collective(v5e, Collective::kAllGather, 4 * 32768.0, 0).seconds;
  EXPECT_GT(small, 8e-6 / 2) << small * 1e6 << " us";
  EXPECT_LT(small, 8e-6 * 2) << small * 1e6 << " us";
}

// A slice of another chip count than the preset's takes Cloud TPU's shape:
// the most nearly cubic (square) factorization, smallest axis first.
TEST(Collectives, SlicesTakeTheirPublishedShapes) {
  const Hardware v4 = load_system({.preset_or_file = "tpu_v4"});
  EXPECT_EQ(slice_dims(v4, 4), (std::vector<int>{2, 2, 1}));  // the preset's own
  EXPECT_EQ(slice_dims(v4, 64), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(slice_dims(v4, 2048), (std::vector<int>{8, 16, 16}));
  EXPECT_EQ(slice_dims(v4, 16), (std::vector<int>{2, 2, 4}));
  const Hardware v5e = load_system({.preset_or_file = "tpu_v5e"});
  EXPECT_EQ(slice_dims(v5e, 256), (std::vector<int>{16, 16}));
  EXPECT_EQ(slice_dims(v5e, 32), (std::vector<int>{4, 8}));
  EXPECT_EQ(slice_dims(v5e, 7), (std::vector<int>{1, 7}));
}

// The all-reduce of the whole slice, dimension by dimension, takes each
// axis's wraparound as it is: a v4 4x4x4 cube is a torus, a v4-8 is not.
TEST(Collectives, AllReduceFollowsEachAxisWraparound) {
  const double bytes = 1e8;
  const AllReduceEstimate cube = estimate_all_reduce(slice("tpu_v4", {4, 4, 4}), bytes);
  const AllReduceEstimate v4_8 = estimate_all_reduce(slice("tpu_v4", {2, 2, 1}), bytes);
  const double link = 45e9;
  // The cube: each axis a bidirectional ring of 4, the data a quarter smaller each time.
  EXPECT_DOUBLE_EQ(cube.link_seconds, 2 * 0.75 * (bytes + bytes / 4 + bytes / 16) / (2 * link));
  EXPECT_EQ(cube.steps, 18);
  // The v4-8: two lines of 2.
  EXPECT_DOUBLE_EQ(v4_8.link_seconds, 2 * 0.5 * (bytes + bytes / 2) / link);
}

// A mesh axis laid on the slice: one whole torus axis is that axis's ring;
// all 256 chips of a 16x16 pod run along both axes at once (the links'
// bandwidths add); part of an axis is a line; members h chips apart are h hops apart.
TEST(Collectives, SpansOfAMeshOnTheTorus) {
  const Hardware pod = slice("tpu_v5e", {16, 16});
  const double bytes = 2e9;
  const AllReduceEstimate one_axis = estimate_span_collective(pod, Collective::kAllGather, bytes, {{16, 1}});
  const AllReduceEstimate same = estimate_collective(pod, Collective::kAllGather, bytes, 1);
  EXPECT_DOUBLE_EQ(one_axis.seconds, same.seconds);
  EXPECT_EQ(one_axis.chips, 16);
  // The other axis: stride 16.
  EXPECT_DOUBLE_EQ(estimate_span_collective(pod, Collective::kAllGather, bytes, {{16, 16}}).seconds,
                   estimate_collective(pod, Collective::kAllGather, bytes, 0).seconds);
  // Every chip: 255/256 of the bytes over 2 rings of 2 x 45 GB/s, 15 + 15 hops.
  const AllReduceEstimate whole = estimate_span_collective(pod, Collective::kAllGather, bytes, {{256, 1}});
  EXPECT_EQ(whole.chips, 256);
  EXPECT_EQ(whole.steps, 30);
  EXPECT_NEAR(whole.link_seconds, 255.0 / 256.0 * bytes / (4 * 45e9), 1e-12);
  EXPECT_NEAR(whole.latency_seconds, 30e-6, 1e-12);
  // The same 256 chips as two mesh axes of 16 (data x model) cost the same.
  EXPECT_DOUBLE_EQ(estimate_span_collective(pod, Collective::kAllGather, bytes, {{16, 16}, {16, 1}}).seconds,
                   whole.seconds);
  // 4 chips of a 16-chip axis: a line, one way at 45 GB/s.
  const AllReduceEstimate line = estimate_span_collective(pod, Collective::kAllGather, bytes, {{4, 1}});
  EXPECT_NEAR(line.link_seconds, 0.75 * bytes / 45e9, 1e-12);
  // Every 4th chip along a wrapping axis: 4 hops apart, a quarter of the
  // ring's bandwidth (both ways round the axis).
  const AllReduceEstimate strided = estimate_span_collective(pod, Collective::kAllGather, bytes, {{4, 4}});
  EXPECT_NEAR(strided.link_seconds, 0.75 * bytes / (2 * 45e9 / 4), 1e-12);
  EXPECT_EQ(strided.steps, 12);
  // An all-reduce moves twice an all-gather's bytes.
  EXPECT_NEAR(estimate_span_collective(pod, Collective::kAllReduce, bytes, {{256, 1}}).link_seconds,
              2 * whole.link_seconds, 1e-12);
  EXPECT_THROW(estimate_span_collective(pod, Collective::kAllGather, bytes, {{512, 1}}), std::invalid_argument);
  EXPECT_THROW(estimate_span_collective(pod, Collective::kAllGather, bytes, {{4, 3}}), std::invalid_argument);
}

// A reduction's sums are the chip's: each chip reads its own partial and the
// one that arrived and writes the sum, (M - 1) / M of the bytes each,
// through HBM (819 GB/s on v5e), apart from the links' time. A gather sums
// nothing.
TEST(Collectives, AReductionsSumsRunOnTheChip) {
  const Hardware pod = slice("tpu_v5e", {16, 16});
  const double bytes = 2e9, hbm = pod.hbm.bandwidth_bytes_per_s;
  ASSERT_EQ(hbm, 819e9);
  const AllReduceEstimate scatter = estimate_span_collective(pod, Collective::kReduceScatter, bytes, {{256, 1}});
  EXPECT_NEAR(scatter.on_chip_seconds, 3.0 * 255 / 256 * bytes / hbm, 1e-12);
  EXPECT_NEAR(scatter.hbm_bytes_per_chip, 3.0 * 255 / 256 * bytes, 1e-3);
  EXPECT_DOUBLE_EQ(scatter.seconds, scatter.link_seconds + scatter.latency_seconds) << "the sums are not the links'";
  EXPECT_DOUBLE_EQ(estimate_span_collective(pod, Collective::kAllReduce, bytes, {{256, 1}}).on_chip_seconds,
                   scatter.on_chip_seconds);
  EXPECT_EQ(estimate_span_collective(pod, Collective::kAllGather, bytes, {{256, 1}}).on_chip_seconds, 0.0);
  EXPECT_EQ(estimate_span_collective(pod, Collective::kAllToAll, bytes, {{256, 1}}).on_chip_seconds, 0.0);
  EXPECT_NEAR(estimate_dcn_all_reduce(pod, bytes, 16).on_chip_seconds, 3.0 * 15 / 16 * bytes / hbm, 1e-12);
}

// Between slices: a ring through them over each chip's share of its host's
// NICs (v5e: 2 x 100 Gb/s per 8 chips, 3.125 GB/s each).
TEST(Collectives, AllReduceBetweenSlicesOverTheDataCenterNetwork) {
  const Hardware pod = slice("tpu_v5e", {16, 16});
  ASSERT_EQ(pod.interconnect.dcn_bandwidth_bytes_per_s, 3.125e9);
  const AllReduceEstimate sixteen = estimate_dcn_all_reduce(pod, 1e9, 16);
  EXPECT_NEAR(sixteen.link_seconds, 2.0 * 15 / 16 * 1e9 / 3.125e9, 1e-12);
  EXPECT_EQ(sixteen.steps, 30);
  EXPECT_NEAR(sixteen.latency_seconds, 30 * pod.interconnect.dcn_latency_s, 1e-15);
  EXPECT_EQ(pod.interconnect.dcn_latency_s, 100e-6);
  EXPECT_EQ(estimate_dcn_all_reduce(pod, 1e9, 1).seconds, 0.0);
  EXPECT_THROW(estimate_dcn_all_reduce(slice("tpu_v4", {4, 4, 4}), 1e9, 2), std::invalid_argument);
}

}  // namespace
}  // namespace accel::tpu
