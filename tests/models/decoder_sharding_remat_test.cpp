// fit under ModelParallel (decoder_model_parallel.hpp: FSDP x tensor
// parallelism on 4 logical CPUs) with compile's remat: the sharded program
// recomputes activations (and gathers FSDP's weights again) in its backward
// pass, reaches the losses and weights of remat none and of one device, and
// under full each device's peak, measured by the allocator over one step, is
// lower. In decoder_sharding_tests, whose environment splits the CPU into the
// 4 devices (decoder_sharding_test.cpp).
#include <accel/config.hpp>
#include <accel/function.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../common/batch_losses.hpp"
#include "decoder_model_parallel.hpp"
#include "model_zoo.hpp"
#include "small_decoder.hpp"
#include "trained_alike.hpp"

namespace accel::model_zoo {
namespace {

const std::vector<std::string> kMeshDevices = {"/CPU:0", "/CPU:1", "/CPU:2", "/CPU:3"};

struct Fitted {
  std::vector<double> losses;
  std::vector<std::vector<float>> weights;
  FunctionStatistics statistics;         // the sharded program's; empty on one device
  std::vector<uint64_t> peak_bytes;      // per mesh device: the allocator's peak over one more step
};

struct Fit {
  DecoderLanguageModelOptions model = small_decoder();
  std::pair<Tensor, Tensor> batches = pattern_batch(16);
  int64_t batch_size = 4;
  int epochs = 3;
  RematPolicy remat = RematPolicy::kNone;
  std::string remat_blocks;
  bool sharded = true;
};

Fitted fit(const Fit& how) {
  DeviceScope on_cpu("/CPU:0");
  std::shared_ptr<keras::Model> model =
      compiled_decoder(how.model, how.sharded ? decoder_model_parallel() : nullptr,
                       {.jit_compile = true, .remat = how.remat, .remat_blocks = how.remat_blocks});
  const Tensor& x = how.batches.first;
  const Tensor& y = how.batches.second;
  auto losses = std::make_shared<testing::BatchLosses>();
  model->fit(x, y, {.epochs = how.epochs, .batch_size = how.batch_size, .verbose = 0, .callbacks = {losses},
                    .shuffle = false});
  Fitted fitted;
  fitted.losses = losses->losses;
  for (const Variable& weight : model->weights()) fitted.weights.push_back(weight.value().to_vector<float>());
  if (!how.sharded) return fitted;
  const FunctionStatistics* statistics = model->sharded_train_statistics();
  EXPECT_NE(statistics, nullptr) << "fit ran the sharded program";
  if (statistics != nullptr) fitted.statistics = *statistics;
  // One more step of the program already built: its buffers, not the trace's.
  for (const std::string& device : kMeshDevices) config::reset_memory_stats(device);
  model->fit(x, y, {.batch_size = how.batch_size, .verbose = 0, .shuffle = false, .steps_per_epoch = 1});
  for (const std::string& device : kMeshDevices) fitted.peak_bytes.push_back(config::get_memory_info(device).peak);
  return fitted;
}

void expect_same_training(const Fitted& fitted, const Fitted& reference) {
  expect_trained_alike(fitted.losses, fitted.weights, reference.losses, reference.weights);
}

TEST(DecoderShardingRemat, EveryPolicyTrainsAsNoneAndAsOneDevice) {
  const Fitted one_device = fit({.sharded = false});
  const Fitted none = fit({});
  ASSERT_EQ(none.losses.size(), 12u);
  EXPECT_LT(one_device.losses.back(), one_device.losses.front());
  EXPECT_EQ(none.statistics.ops_recomputed, 0);
  expect_same_training(none, one_device);
  struct Case {
    const char* name;
    RematPolicy remat;
    std::string blocks;
  };
  int32_t recomputed_under_full = 0;
  for (const Case& remat_case : {Case{"full", RematPolicy::kFull, ""}, Case{"minimal", RematPolicy::kMinimal, ""},
                                 Case{"full, each decoder block whole", RematPolicy::kFull, "^(block\\d+)_"}}) {
    SCOPED_TRACE(remat_case.name);
    const Fitted fitted = fit({.remat = remat_case.remat, .remat_blocks = remat_case.blocks});
    // Not vacuous: the per-device program recomputes ops, and so has more.
    EXPECT_GT(fitted.statistics.ops_recomputed, 0);
    EXPECT_GT(fitted.statistics.traced_ops, 0);
    EXPECT_EQ(fitted.statistics.traced_ops, none.statistics.traced_ops) << "the same partitioned step";
    EXPECT_GT(fitted.statistics.compiled_ops, none.statistics.compiled_ops);
    if (remat_case.remat == RematPolicy::kFull && remat_case.blocks.empty()) {
      recomputed_under_full = fitted.statistics.ops_recomputed;
    } else if (remat_case.remat == RematPolicy::kMinimal) {
      EXPECT_LT(fitted.statistics.ops_recomputed, recomputed_under_full) << "minimal keeps the matmuls";
    }
    expect_same_training(fitted, none);
    expect_same_training(fitted, one_device);
  }
}

// Longer sequences and more blocks than small_decoder's, so that the
// activations (attention scores above all) outweigh the weights and slots.
TEST(DecoderShardingRemat, FullLowersEachDevicesPeakMeasuredByTheAllocator) {
  Fit how;
  how.model.sequence_length = 64;
  how.model.dim = 32;
  how.model.feed_forward = 128;
  how.model.blocks = 4;
  how.batches = pattern_batch(8, 64);
  how.batch_size = 8;
  how.epochs = 1;
  const Fitted none = fit(how);
  how.remat = RematPolicy::kFull;
  const Fitted full = fit(how);
  EXPECT_GT(full.statistics.ops_recomputed, 0);
  EXPECT_LT(full.statistics.planned_peak_bytes, none.statistics.planned_peak_bytes);
  ASSERT_EQ(full.peak_bytes.size(), kMeshDevices.size());
  ASSERT_EQ(none.peak_bytes.size(), kMeshDevices.size());
  for (size_t device = 0; device < kMeshDevices.size(); ++device) {
    EXPECT_LT(full.peak_bytes[device], none.peak_bytes[device])
        << kMeshDevices[device] << ": full " << full.peak_bytes[device] << ", none " << none.peak_bytes[device];
  }
}

}  // namespace
}  // namespace accel::model_zoo
