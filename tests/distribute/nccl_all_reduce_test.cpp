// NcclAllReduce and the choice of collectives: why NCCL cannot run on CPU
// devices or twice on one physical GPU (everywhere), and NCCL all-reduces on
// real GPUs (skipped without one, with the reason; the clique tests need as
// many physical GPUs as they name).
#include <accel/config.hpp>
#include <accel/distribute/cluster_spec.hpp>
#include <accel/distribute/cross_device_ops.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/multi_worker_mirrored_strategy.hpp>
#include <accel/distribute/simple_cluster_resolver.hpp>
#include <accel/error.hpp>
#include <accel/nccl_communicator.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>
#include <accel/runtime.hpp>

#include <gtest/gtest.h>

#include "../common/gpu_skip.hpp"
#include "strategy_test_support.hpp"

namespace accel::distribute {
namespace {

using testing::cpu_devices;
using testing::split_cpu;

std::vector<Device> devices_named(const std::vector<std::string>& names) {
  std::vector<Device> devices;
  for (const std::string& name : names) devices.push_back(find_device(name));
  return devices;
}

TEST(NcclAvailability, NamesTwoLogicalDevicesOnOnePhysicalDevice) {
  split_cpu(2);
  const std::string reason = NcclCommunicator::unavailable_reason(devices_named(cpu_devices(2)));
  EXPECT_NE(reason.find("/CPU:0 and /CPU:1 are both on physical device"), std::string::npos) << reason;
}

TEST(NcclAvailability, NamesAPluginWithoutTheExtension) {
  const std::string reason = NcclCommunicator::unavailable_reason(devices_named({"/CPU:0"}));
  EXPECT_NE(reason.find("the cpu plugin of /CPU:0 offers no NCCL collectives"), std::string::npos) << reason;
  EXPECT_EQ(NcclCommunicator::unavailable_reason({}), "no devices");
  EXPECT_THROW(NcclCommunicator(devices_named({"/CPU:0"})), FailedPreconditionError);
}

TEST(NcclAvailability, MirroredStrategyOffGpusReducesToOneDevice) {
  split_cpu(2);
  const MirroredStrategy strategy(cpu_devices(2));
  EXPECT_EQ(strategy.cross_device_ops().name(), "ReductionToOneDevice");
}

TEST(NcclAvailability, MirroredStrategyRefusesNcclOnCpuDevicesAtOnce) {
  split_cpu(2);
  try {
    MirroredStrategy strategy(cpu_devices(2), std::make_shared<NcclAllReduce>());
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("MirroredStrategy: NcclAllReduce cannot run: /CPU:0 and /CPU:1"),
              std::string::npos)
        << error.what();
  }
}

TEST(NcclAvailability, MultiWorkerAskedForNcclOnTheCpuUsesTheRing) {
  const SimpleClusterResolver outside_any_cluster(ClusterSpec{}, "", 0);
  CommunicationOptions options;
  options.implementation = CommunicationImplementation::kNccl;
  const MultiWorkerMirroredStrategy strategy(outside_any_cluster, options, {"/CPU:0"});
  EXPECT_EQ(strategy.communication(), CommunicationImplementation::kRing);
  EXPECT_EQ(strategy.cross_device_ops().name(), "CollectiveAllReduce");
}

TEST(NcclOnGpus, OneGpuCliqueSumsAndAveragesInPlace) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const Device gpu = find_device("/GPU:0");
  EXPECT_GE(NcclCommunicator::version(gpu), 20000);
  const NcclCommunicator clique({gpu});
  EXPECT_EQ(clique.world_size(), 1);
  const Tensor values = Tensor::from_vector<float>({1.5f, -2.0f, 3.25f}, Shape{3}, gpu);
  clique.all_reduce(NcclReduction::kSum, {values});
  EXPECT_EQ(values.to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  clique.all_reduce(NcclReduction::kAverage, {values});
  EXPECT_EQ(values.to_vector<float>(), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_THROW(clique.all_reduce(NcclReduction::kSum, {values, values}), InvalidArgumentError);
}

TEST(NcclOnGpus, NcclAllReduceNeverWritesTheCallersTensor) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const Tensor value = Tensor::from_vector<float>({4.0f, 8.0f}, Shape{2}, find_device("/GPU:0"));
  NcclAllReduce nccl;
  const std::vector<Tensor> reduced = nccl.all_reduce(ReduceOp::kMean, {value});
  ASSERT_EQ(reduced.size(), 1u);
  EXPECT_NE(reduced[0].storage(), value.storage());
  EXPECT_EQ(reduced[0].to_vector<float>(), (std::vector<float>{4.0f, 8.0f}));
  EXPECT_THROW(nccl.all_reduce(ReduceOp::kMax, {value}), UnimplementedError);
}

// The CUDA plugin times the collective with CUDA events on the GPU's stream
// and reports it with the device's op profiles, named (plugin API 1.1).
TEST(NcclOnGpus, AllReduceIsTimedOnTheGpuIntoTheProfile) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  const Device gpu = find_device("/GPU:0");
  const NcclCommunicator clique({gpu});
  const Tensor values = Tensor::from_vector<float>(std::vector<float>(1024, 1.0f), Shape{1024}, gpu);
  profiler::start();
  clique.all_reduce(NcclReduction::kSum, {values});
  runtime::synchronize();
  profiler::stop();
  int collectives = 0;
  for (const profiler::OpRecord& record : profiler::records()) {
    if (record.op != "AllReduce") continue;
    ++collectives;
    EXPECT_EQ(record.category, "collective");
    EXPECT_EQ(record.device, gpu.name());
    EXPECT_EQ(record.time_source, profiler::TimeSource::kDevice);
    EXPECT_EQ(record.bytes_accessed, 1024 * sizeof(float));
    EXPECT_GE(record.duration_seconds, 0.0);  // one rank in place: NCCL may have nothing to do
  }
  EXPECT_EQ(collectives, 1);
}

TEST(NcclOnGpus, TwoLogicalGpusOnOnePhysicalGpuAreRefused) {
  ACCEL_SKIP_WITHOUT_GPUS(1);
  config::set_logical_device_configuration(config::list_physical_devices("GPU").at(0), {{.memory_limit_mib = 1024},
                                                                 {.memory_limit_mib = 1024}});
  const std::vector<Device> gpus = devices_named({"/GPU:0", "/GPU:1"});
  const std::string reason = NcclCommunicator::unavailable_reason(gpus);
  EXPECT_NE(reason.find("/GPU:0 and /GPU:1 are both on physical device"), std::string::npos) << reason;
  const MirroredStrategy strategy(std::vector<std::string>{"/GPU:0", "/GPU:1"});
  EXPECT_EQ(strategy.cross_device_ops().name(), "ReductionToOneDevice");
}

TEST(NcclOnGpus, MirroredStrategyOnTwoGpusAllReducesWithNccl) {
  ACCEL_SKIP_WITHOUT_GPUS(2);
  const MirroredStrategy strategy;  // every GPU
  ASSERT_EQ(strategy.cross_device_ops().name(), "NcclAllReduce");
  std::vector<Tensor> per_replica;
  for (const Device& device : strategy.replica_devices()) {
    const float base = static_cast<float>(per_replica.size() + 1);
    per_replica.push_back(Tensor::from_vector<float>({base, 10 * base}, Shape{2}, device));
  }
  const float replicas = static_cast<float>(per_replica.size());
  const float sum_of_bases = replicas * (replicas + 1) / 2;
  const std::vector<Tensor> sums = strategy.cross_device_ops().all_reduce(ReduceOp::kSum, per_replica);
  for (size_t replica = 0; replica < sums.size(); ++replica) {
    EXPECT_EQ(sums[replica].device(), per_replica[replica].device());
    EXPECT_EQ(sums[replica].to_vector<float>(), (std::vector<float>{sum_of_bases, 10 * sum_of_bases}));
  }
}

}  // namespace
}  // namespace accel::distribute
