// The CUDA plugin through the runtime, as a user meets it: the tutorial CNN
// trains on /GPU:0 as on /CPU:0, and TensorFlow's memory modes (reserve most
// of the GPU, grow on demand, a hard limit) show in get_memory_info and in the
// driver's own free-memory figure. Each test runs in a fresh process (device
// settings precede the runtime's start). Without a GPU every test is skipped
// with the cuda plugin's reason.
#include <accel/accel.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/losses.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "../common/gpu_skip.hpp"
#include "strategy_test_support.hpp"

namespace accel {
namespace {

using distribute::testing::make_optimizer;
using distribute::testing::make_tutorial_cnn;
using distribute::testing::OptimizerKind;
using distribute::testing::synthetic_images;
using distribute::testing::weight_values;
using distribute::testing::worst_relative_difference;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// The first physical GPU (after ACCEL_SKIP_WITHOUT_GPUS).
config::PhysicalDevice first_gpu() { return config::list_physical_devices("GPU").at(0); }

// The driver's figures for the current GPU (every process's use).
struct DriverMemory {
  uint64_t used = 0;
  uint64_t total = 0;
};
DriverMemory driver_memory() {
  size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  return {total_bytes - free_bytes, total_bytes};
}

struct Trained {
  keras::Logs evaluation;
  distribute::testing::WeightValues weights;
};

Trained train_tutorial_cnn(const std::string& device, int epochs, bool jit_compile = false,
                           FunctionStatistics* compiled = nullptr) {
  distribute::OneDeviceStrategy strategy(device);
  keras::set_random_seed(77);
  std::shared_ptr<keras::Sequential> model;
  {
    auto scope = strategy.scope();
    model = make_tutorial_cnn();
    model->compile(make_optimizer(OptimizerKind::kAdam),
                   std::make_shared<keras::SparseCategoricalCrossentropy>(
                       keras::CrossentropyOptions{.from_logits = true}),
                   {"accuracy"}, {.jit_compile = jit_compile});
  }
  const distribute::testing::SyntheticImages data = synthetic_images(512);
  model->fit(data.images, data.labels, {.epochs = epochs, .batch_size = 32, .verbose = 0, .seed = 5});
  // Under a strategy the replica's pass is the compiled function.
  const Function* step = model->train_function() != nullptr ? model->train_function() : model->replica_train_function(0);
  if (compiled != nullptr && step != nullptr) *compiled = step->statistics();
  return {model->evaluate(data.images, data.labels, {.batch_size = 64, .verbose = 0}), weight_values(*model)};
}

// The reference the GPU test below compares with, checked where there is no GPU:
// three epochs of 16 steps learn the synthetic images well above chance (0.1;
// about 0.51 is reached), so matching it means the GPU really trained.
constexpr double kLearnedAccuracy = 0.3;
TEST(TutorialCnnReference, LearnsTheSyntheticImagesOnTheCpu) {
  const Trained on_cpu = train_tutorial_cnn("/CPU:0", 3);
  EXPECT_GT(on_cpu.evaluation.at("accuracy"), kLearnedAccuracy);
}

TEST(GpuTraining, TutorialCnnTrainsAsOnTheCpu) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const Trained on_cpu = train_tutorial_cnn("/CPU:0", 3);
  const Trained on_gpu = train_tutorial_cnn("/GPU:0", 3);
  std::fprintf(stderr, "accuracy: CPU %.4f, GPU %.4f; loss: CPU %.5f, GPU %.5f; worst weight difference %.3g\n",
               on_cpu.evaluation.at("accuracy"), on_gpu.evaluation.at("accuracy"), on_cpu.evaluation.at("loss"),
               on_gpu.evaluation.at("loss"), worst_relative_difference(on_gpu.weights, on_cpu.weights));
  EXPECT_GT(on_cpu.evaluation.at("accuracy"), kLearnedAccuracy);
  EXPECT_NEAR(on_gpu.evaluation.at("accuracy"), on_cpu.evaluation.at("accuracy"), 0.02);
  EXPECT_NEAR(on_gpu.evaluation.at("loss"), on_cpu.evaluation.at("loss"), 0.02 * on_cpu.evaluation.at("loss") + 1e-3);
  // Same seeds and data: only summation order and libm differ (fp32 exact, no TF32).
  EXPECT_LT(worst_relative_difference(on_gpu.weights, on_cpu.weights), 1e-2);
}

// Compiled steps on the GPU replay runs of their kernels as CUDA graphs
// (plugin API 1.5) and train as the same steps dispatched kernel by kernel.
TEST(GpuTraining, CompiledStepsReplayedAsCudaGraphsTrainAsDispatched) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  FunctionStatistics recorded, dispatched;
  const Trained with_graphs = train_tutorial_cnn("/GPU:0", 2, true, &recorded);
  setenv("ACCEL_RECORDED_REPLAYS", "0", 1);
  const Trained without_graphs = train_tutorial_cnn("/GPU:0", 2, true, &dispatched);
  unsetenv("ACCEL_RECORDED_REPLAYS");
  std::fprintf(stderr, "recorded: %d runs of %d ops, %lld recordings, %lld replays; reason '%s'\n",
               recorded.recorded_runs, recorded.recorded_nodes, static_cast<long long>(recorded.recordings),
               static_cast<long long>(recorded.recorded_replays), recorded.recording_reason.c_str());
  EXPECT_EQ(recorded.eager_reason, "");
  EXPECT_GE(recorded.recorded_runs, 1);
  EXPECT_EQ(recorded.recording_reason, "");
  EXPECT_EQ(recorded.recordings, recorded.recorded_runs);
  EXPECT_EQ(recorded.recorded_replays, recorded.recorded_runs * recorded.replays);
  EXPECT_EQ(dispatched.recorded_runs, 0);
  EXPECT_LT(worst_relative_difference(with_graphs.weights, without_graphs.weights), 1e-5);
  EXPECT_NEAR(with_graphs.evaluation.at("loss"), without_graphs.evaluation.at("loss"), 1e-5);
}

TEST(GpuMemory, WithoutGrowthMostOfTheGpuIsReservedAtStart) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const config::PhysicalDevice gpu = first_gpu();
  EXPECT_FALSE(config::get_memory_growth(gpu));  // TensorFlow's default
  config::set_memory_growth(gpu, false);  // explicit: ACCEL_FORCE_GPU_ALLOW_GROWTH does not apply
  const Tensor small = Tensor::from_vector<float>({1.0f, 2.0f}, Shape{2}, find_device("/GPU:0"));
  const config::MemoryInfo info = config::get_memory_info("/GPU:0");
  EXPECT_GE(info.current, small.byte_size());
  // The arena takes ~90% of what was free: the driver sees most of the GPU in use.
  const DriverMemory driver = driver_memory();
  EXPECT_GT(driver.used, driver.total * 8 / 10);
}

TEST(GpuMemory, WithGrowthOnlyWhatIsUsedIsTaken) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const config::PhysicalDevice gpu = first_gpu();
  config::set_memory_growth(gpu, true);
  const Device device = find_device("/GPU:0");  // starts the runtime: the CUDA context exists now
  (void)Tensor::from_vector<float>({1.0f}, Shape{1}, device);
  const uint64_t used_before = driver_memory().used;
  const Tensor big = Tensor::empty(Shape{256 * static_cast<int64_t>(kMiB) / 4}, DType::kFloat32, device);
  const DriverMemory after = driver_memory();
  const uint64_t grown = after.used - used_before;
  EXPECT_GE(grown, 256 * kMiB);
  EXPECT_LT(grown, 512 * kMiB);
  EXPECT_GE(config::get_memory_info("/GPU:0").current, 256 * kMiB);
  EXPECT_LT(after.used, after.total / 2);
}

TEST(GpuMemory, ForcedGrowthAppliesWhereGrowthWasNotSet) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  config::set_setting("force_gpu_allow_growth", "1");
  (void)Tensor::from_vector<float>({1.0f}, Shape{1}, find_device("/GPU:0"));
  const DriverMemory driver = driver_memory();
  EXPECT_LT(driver.used, driver.total / 2);
}

TEST(GpuMemory, PastTheLimitIsResourceExhaustedAndTrainingGoesOn) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const config::PhysicalDevice gpu = first_gpu();
  config::set_logical_device_configuration(gpu, {{.memory_limit_mib = 1024}});
  const std::vector<config::LogicalDevice> logical = config::list_logical_devices("GPU");
  ASSERT_EQ(logical.size(), 1u);
  EXPECT_EQ(logical.front().memory_limit_bytes, 1024 * kMiB);
  const Trained before = train_tutorial_cnn("/GPU:0", 1);
  try {
    (void)Tensor::empty(Shape{2048 * static_cast<int64_t>(kMiB) / 4}, DType::kFloat32, find_device("/GPU:0"));
    FAIL() << "a 2 GiB tensor fit under a 1 GiB limit";
  } catch (const ResourceExhaustedError& error) {
    EXPECT_NE(std::string(error.what()).find("2147483648"), std::string::npos) << error.what();
  }
  const Trained after = train_tutorial_cnn("/GPU:0", 1);
  EXPECT_TRUE(std::isfinite(after.evaluation.at("loss")));
  EXPECT_EQ(after.evaluation.at("loss"), before.evaluation.at("loss"));  // same seeds, same result
  EXPECT_LE(config::get_memory_info("/GPU:0").peak, 1024 * kMiB);
}

}  // namespace
}  // namespace accel
