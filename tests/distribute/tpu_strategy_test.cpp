// TPUStrategy on the emulated TPU v4-8 slice: initialize_tpu_system's
// topology, its refusal once the emulator runs another system, the
// equivalence of 8 emulated TensorCores with one core on the same global
// batches, and the simulated gradient all-reduce charged to every step.
// Each test starts a fresh process (the TPU system is chosen once per process).
#include <accel/accel.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/distribute/tpu_strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/losses.hpp>
#include <accel/profiler.hpp>
#include <accel/tpu_emulator.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "strategy_test_support.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace accel::distribute {
namespace {

using accel::testing::in_fresh_process;
using namespace accel::distribute::testing;

constexpr int64_t kSteps = 50;
constexpr int64_t kGlobalBatch = 16;  // 2 rows per TensorCore of a v4-8

TEST(TpuStrategyTest, InitializeTpuSystemDescribesTheV4_8Slice) {
  in_fresh_process([] {
    const TpuTopology topology = initialize_tpu_system(TPUClusterResolver("sim://v4-8"));
    EXPECT_EQ(topology.preset, "tpu_v4");
    EXPECT_EQ(topology.chips, 4);
    EXPECT_EQ(topology.cores_per_chip, 2);
    EXPECT_EQ(topology.mesh_shape, (std::array<int, 4>{2, 2, 1, 2}));
    EXPECT_EQ(topology.num_tasks, 1);
    EXPECT_EQ(topology.num_tpus_per_task, 8);
    EXPECT_EQ(topology.topology_name, "torus_3d");
    ASSERT_EQ(topology.device_coordinates.size(), 8u);
    EXPECT_EQ(topology.device_coordinates[0], (std::array<int, 4>{0, 0, 0, 0}));
    EXPECT_EQ(topology.device_coordinates[3], (std::array<int, 4>{1, 0, 0, 1}));
    EXPECT_EQ(topology.device_coordinates[7], (std::array<int, 4>{1, 1, 0, 1}));
    EXPECT_EQ(config::list_logical_devices("TPU").size(), 8u);
    TPUStrategy strategy{TPUClusterResolver("sim://v4-8")};
    EXPECT_EQ(strategy.num_replicas_in_sync(), 8);
    EXPECT_EQ(strategy.replica_devices().back().short_name(), "/TPU:7");
  });
}

TEST(TpuStrategyTest, InitializingAnotherSystemOnceDevicesAreInUseFails) {
  in_fresh_process([] {
    ASSERT_EQ(config::list_logical_devices("TPU").size(), 2u);  // the default: one v4 chip
    try {
      initialize_tpu_system(TPUClusterResolver("sim://v4-8"));
      ADD_FAILURE() << "expected an error";
    } catch (const FailedPreconditionError& error) {
      EXPECT_NE(std::string(error.what()).find("already runs tpu_v4 with 1 chips (2 TensorCores)"), std::string::npos)
          << error.what();
    }
  });
}

struct TpuRun {
  WeightValues weights;
  keras::History history;
};

TpuRun fit_cnn(Strategy& strategy) {
  keras::set_random_seed(21);
  std::shared_ptr<keras::Sequential> model;
  {
    auto scope = strategy.scope();
    model = make_tutorial_cnn();
    model->compile(make_optimizer(OptimizerKind::kAdam),
                   std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                   {"accuracy"});
  }
  const SyntheticImages data = synthetic_images(kSteps * kGlobalBatch);
  TpuRun run;
  run.history = model->fit(data.images, data.labels, {.batch_size = kGlobalBatch, .verbose = 0, .shuffle = false});
  EXPECT_EQ(model->optimizer().iterations(), kSteps);
  run.weights = weight_values(*model);
  return run;
}

// The MXU rounds each row's inputs to bf16 the same way on any core and sums
// in fp32, so splitting the batch over 8 cores changes only the order of the
// fp32 sums over rows.
TEST(TpuStrategyTest, EightEmulatedCoresTrainLikeOneCoreOnTheSameGlobalBatches) {
  in_fresh_process([] {
    TPUStrategy eight_cores{TPUClusterResolver("sim://v4-8")};
    OneDeviceStrategy one_core("/TPU:0");
    const TpuRun single = fit_cnn(one_core);
    const TpuRun replicated = fit_cnn(eight_cores);
    const double difference = worst_relative_difference(replicated.weights, single.weights);
    std::fprintf(stderr, "8 TensorCores vs 1: worst relative weight difference %.3g\n", difference);
    EXPECT_LE(difference, 1e-5);
    EXPECT_NEAR(replicated.history.history.at("loss").back(), single.history.history.at("loss").back(), 1e-5);
    EXPECT_LT(single.history.history.at("loss").back(), std::log(10.0));  // below chance: it learns
  });
}

TEST(TpuStrategyTest, EveryStepChargesOneGradientAllReduceToTheSimulatedTime) {
  in_fresh_process([] {
    TPUStrategy strategy{TPUClusterResolver("sim://v4-8")};
    const TpuEmulator emulator = *TpuEmulator::find();
    emulator.reset_totals();
    std::shared_ptr<keras::Sequential> model;
    {
      auto scope = strategy.scope();
      model = make_tutorial_cnn();
      model->compile("sgd", std::make_shared<keras::SparseCategoricalCrossentropy>(
                                keras::CrossentropyOptions{.from_logits = true}));
    }
    const SyntheticImages data = synthetic_images(3 * kGlobalBatch);
    profiler::start();
    model->fit(data.images, data.labels, {.batch_size = kGlobalBatch, .verbose = 0});
    profiler::stop();

    const double gradient_bytes = static_cast<double>(model->count_params()) * 4;
    ASSERT_EQ(strategy.step_times().size(), 3u);
    double all_reduce_total = 0;
    for (const TpuStepTime& step : strategy.step_times()) {
      EXPECT_DOUBLE_EQ(step.all_reduce_bytes, gradient_bytes);
      EXPECT_GT(step.all_reduce_seconds, 0);
      EXPECT_GT(step.compute_seconds, 0);
      EXPECT_NEAR(step.total_seconds, step.compute_seconds + step.all_reduce_seconds, 1e-12);
      all_reduce_total += step.all_reduce_seconds;
    }
    // The cores' timelines hold exactly those all-reduces.
    const TpuCoreTotals core_totals = emulator.totals(5);
    EXPECT_NEAR(static_cast<double>(core_totals.collective_cycles) / core_totals.clock_hz, all_reduce_total, 1e-9);
    // Every core ends each step at the same simulated cycle (the collective syncs them).
    for (int core = 0; core < 8; ++core) EXPECT_EQ(emulator.totals(core).cycles, core_totals.cycles);
    // The trace holds one AllReduce per step on every core's track.
    std::set<std::string> devices;
    int all_reduces = 0;
    for (const profiler::OpRecord& record : profiler::records()) {
      if (record.op != "AllReduce") continue;
      ++all_reduces;
      devices.insert(record.device);
      EXPECT_EQ(record.category, "collective");
      EXPECT_EQ(record.time_source, profiler::TimeSource::kSimulated);
      EXPECT_DOUBLE_EQ(record.bytes_accessed, gradient_bytes);
    }
    EXPECT_EQ(all_reduces, 3 * 8);
    EXPECT_EQ(devices.size(), 8u);
  });
}

}  // namespace
}  // namespace accel::distribute
