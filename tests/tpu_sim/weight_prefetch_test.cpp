// Weight prefetch between the kernels of a compiled program, as the plugin
// applies it (weight_prefetch.hpp over the costing functions; no kernels
// run): a hand-built chain of two matmuls whose first leaves HBM idle. With
// the prefetch the second one's weight-load stall disappears; eager calls
// (no fused kernel) keep it.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "fused_work.hpp"
#include "op_costing.hpp"
#include "timing/presets.hpp"
#include "weight_prefetch.hpp"

namespace accel::tpu_sim {
namespace {

using host_kernels::HostTensor;

const tpu::TimingModel& tpu_v4() {
  static const tpu::TimingModel model(tpu::load_system({.preset_or_file = "tpu_v4"}));
  return model;
}

HostTensor tensor(std::initializer_list<std::int64_t> shape) {
  HostTensor out;
  out.dtype = ACCEL_DTYPE_F32;
  out.rank = static_cast<int32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), out.shape);
  return out;
}

AccelMatmulAttributes relu_epilogue() {
  AccelMatmulAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.epilogue_flags = ACCEL_EPILOGUE_ACTIVATION;
  attributes.activation = ACCEL_OP_RELU;
  return attributes;
}

struct Chain {
  OpCost first, second;
  std::int64_t prefetched = 0;
};

// x[32768 x 1024] . w1[1024 x 1024] -> h, then h . w2 -> y: long batch,
// small weights, so the first matmul is compute-bound and leaves HBM idle.
Chain run_chain(bool with_epilogue, ResidencyMode mode) {
  const HostTensor x = tensor({32768, 1024}), w = tensor({1024, 1024}), h = tensor({32768, 1024});
  const AccelMatmulAttributes relu = relu_epilogue();
  const void* attributes = with_epilogue ? &relu : nullptr;
  const std::vector<HostTensor> first_in{x, w}, second_in{h, w}, out{h};
  Chain chain;
  chain.first = cost_op(tpu_v4(), ACCEL_OP_MATMUL, first_in, out, attributes);
  chain.second = cost_op(tpu_v4(), ACCEL_OP_MATMUL, second_in, out, attributes);
  const bool fused = is_fused_kernel(ACCEL_OP_MATMUL, attributes);
  PreviousKernel previous;
  EXPECT_EQ(prefetch_kernel_weights(tpu_v4(), ACCEL_OP_MATMUL, fused, mode, previous, chain.first.timing), 0)
      << "the first kernel of a core has nothing before it";
  chain.prefetched = prefetch_kernel_weights(tpu_v4(), ACCEL_OP_MATMUL, fused, mode, previous, chain.second.timing);
  return chain;
}

TEST(WeightPrefetch, ACompiledChainLoadsTheNextWeightsDuringTheCurrentOp) {
  const Chain eager = run_chain(false, ResidencyMode::kFused);
  const Chain compiled = run_chain(true, ResidencyMode::kFused);
  ASSERT_EQ(eager.first.timing.bound, tpu::Bound::kCompute);
  // Eager: each matmul waits for its first weight tile.
  EXPECT_EQ(eager.prefetched, 0);
  EXPECT_GT(eager.second.timing.stall_cycles, 0);
  EXPECT_EQ(eager.second.timing.cycles, eager.second.timing.compute_cycles + eager.second.timing.stall_cycles);
  // Compiled: the second matmul's weights arrived while the first computed.
  EXPECT_EQ(compiled.prefetched, compiled.second.timing.hbm.weights);
  EXPECT_EQ(compiled.second.timing.stall_cycles, 0);
  EXPECT_EQ(compiled.second.timing.cycles, compiled.second.timing.compute_cycles);
  EXPECT_EQ(compiled.second.timing.hbm_bytes, eager.second.timing.hbm_bytes);  // loaded earlier, not skipped
  EXPECT_NE(detail_json(OpCost{compiled.second.timing, 0, 0, compiled.prefetched}).find("\"prefetched_weight_bytes\""),
            std::string::npos);
  EXPECT_EQ(detail_json(eager.second).find("prefetched"), std::string::npos);
}

TEST(WeightPrefetch, ModesFollowTheResidencySetting) {
  // off: never, even in a compiled program; all: plain calls too.
  const Chain off = run_chain(true, ResidencyMode::kOff);
  EXPECT_EQ(off.prefetched, 0);
  EXPECT_GT(off.second.timing.stall_cycles, 0);
  const Chain all = run_chain(false, ResidencyMode::kAll);
  EXPECT_GT(all.prefetched, 0);
  EXPECT_EQ(all.second.timing.stall_cycles, 0);
}

TEST(WeightPrefetch, VectorOpsAreNotPrefetchedButPassOnTheirIdleTime) {
  const HostTensor x = tensor({1024, 1024});
  const std::vector<HostTensor> in{x, x}, out{x};
  OpCost add = cost_op(tpu_v4(), ACCEL_OP_ADD, in, out, nullptr);
  const tpu::OpTiming before = add.timing;
  PreviousKernel previous{1'000'000, true};
  EXPECT_EQ(prefetch_kernel_weights(tpu_v4(), ACCEL_OP_ADD, false, ResidencyMode::kAll, previous, add.timing), 0);
  EXPECT_EQ(add.timing.cycles, before.cycles);
  EXPECT_EQ(previous.idle_hbm_cycles, std::max<std::int64_t>(0, before.cycles - before.memory_cycles));
  EXPECT_FALSE(previous.fused);
}

}  // namespace
}  // namespace accel::tpu_sim
