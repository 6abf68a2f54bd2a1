// Strategies in one process: the default strategy, OneDeviceStrategy and
// MirroredStrategy over logical CPU devices (each test splits the CPU in a
// fresh process, as logical devices are set once per process): run and the
// replica context, reduce / gather, mirrored and sync-on-read variables,
// both cross-device ops and their profile records, and the dataset splits
// TensorFlow documents.
#include <accel/accel.hpp>
#include <accel/distribute/compute_average_loss.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/keras/optimizers/sgd.hpp>
#include <accel/profiler.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "strategy_test_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace accel::distribute {
namespace {

using accel::testing::in_fresh_process;

using testing::cpu_devices;
using testing::split_cpu;

// The first component of each replica's element, as int64 rows.
std::vector<std::vector<int64_t>> replica_rows(const PerReplica<data::Element>& inputs) {
  std::vector<std::vector<int64_t>> rows;
  for (const data::Element& element : inputs.values()) rows.push_back(element[0].to_vector<int64_t>());
  return rows;
}

using Rows = std::vector<std::vector<int64_t>>;

TEST(StrategyTest, DefaultStrategyRunsOneReplicaInPlace) {
  Strategy& strategy = get_strategy();
  EXPECT_FALSE(has_strategy());
  EXPECT_EQ(strategy.num_replicas_in_sync(), 1);
  PerReplica<Tensor> result = strategy.run([](ReplicaContext& context, const Tensor& x) {
    EXPECT_EQ(context.replica_id_in_sync_group(), 0);
    return context.all_reduce(ReduceOp::kSum, x);
  }, Tensor::from_vector<float>({1, 2}, Shape{2}));
  EXPECT_EQ(result[0].to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_TRUE(in_cross_replica_context());
  Variable plain(ops::ones(Shape{2}));
  EXPECT_FALSE(is_mirrored(plain));
}

TEST(StrategyTest, ComputeAverageLossDividesByTheGlobalBatch) {
  Tensor per_example = Tensor::from_vector<float>({1, 2, 3, 6}, Shape{4});
  EXPECT_FLOAT_EQ(compute_average_loss(per_example, 8).item<float>(), 1.5f);
  EXPECT_FLOAT_EQ(compute_average_loss(per_example).item<float>(), 3.0f);
}

TEST(StrategyTest, TensorFlowsSplitOfSixRowsInBatchesOfFourOnTwoReplicas) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    DistributedDataset distributed = strategy.experimental_distribute_dataset(data::Dataset::range(6).batch(4));
    std::vector<Rows> steps;
    for (const PerReplica<data::Element>& inputs : distributed) {
      steps.push_back(replica_rows(inputs));
      EXPECT_EQ(inputs[1][0].device().index(), 1);
    }
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0], (Rows{{0, 1}, {2, 3}}));
    EXPECT_EQ(steps[1], (Rows{{4}, {5}}));
  });
}

TEST(StrategyTest, TensorFlowsSplitOfEightRowsInBatchesOfFourOnThreeReplicas) {
  in_fresh_process([] {
    split_cpu(3);
    MirroredStrategy strategy(cpu_devices(3));
    DistributedDataset distributed = strategy.experimental_distribute_dataset(data::Dataset::range(8).batch(4));
    std::vector<Rows> steps;
    for (const PerReplica<data::Element>& inputs : distributed) steps.push_back(replica_rows(inputs));
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0], (Rows{{0, 1}, {2, 3}, {}}));
    EXPECT_EQ(steps[1], (Rows{{4, 5}, {6, 7}, {}}));
  });
}

TEST(StrategyTest, DatasetsFromFunctionGetAnInputContext) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    int calls = 0;
    DistributedDataset distributed = strategy.distribute_datasets_from_function([&](const InputContext& context) {
      ++calls;
      EXPECT_EQ(context.num_input_pipelines(), 1);
      EXPECT_EQ(context.input_pipeline_id(), 0);
      EXPECT_EQ(context.num_replicas_in_sync(), 2);
      EXPECT_EQ(context.get_per_replica_batch_size(8), 4);
      EXPECT_THROW(context.get_per_replica_batch_size(7), InvalidArgumentError);
      return data::Dataset::range(10).batch(context.get_per_replica_batch_size(8));
    });
    std::vector<Rows> steps;
    for (const PerReplica<data::Element>& inputs : distributed) steps.push_back(replica_rows(inputs));
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0], (Rows{{0, 1, 2, 3}, {4, 5, 6, 7}}));
    EXPECT_EQ(steps[1], (Rows{{8, 9}, {}}));
  });
}

TEST(StrategyTest, RunGivesEachReplicaItsDeviceAndCollectives) {
  in_fresh_process([] {
    split_cpu(4);
    for (auto cross_device_ops : std::vector<std::shared_ptr<CrossDeviceOps>>{
             std::make_shared<ReductionToOneDevice>(), std::make_shared<HostRingAllReduce>()}) {
      MirroredStrategy strategy(cpu_devices(4), cross_device_ops);
      EXPECT_EQ(strategy.num_replicas_in_sync(), 4);
      PerReplica<Tensor> sums = strategy.run([](ReplicaContext& context) {
        const float id = static_cast<float>(context.replica_id_in_sync_group());
        EXPECT_EQ(context.num_replicas_in_sync(), 4);
        EXPECT_EQ(current_device().index(), context.replica_id_in_sync_group());
        Tensor value = Tensor::from_vector<float>({id, 10 * id, 1, 2, 3}, Shape{5});
        Tensor sum = context.all_reduce(ReduceOp::kSum, value);
        Tensor mean = context.all_reduce(ReduceOp::kMean, value);
        EXPECT_EQ(mean.to_vector<float>(), (std::vector<float>{1.5f, 15, 1, 2, 3}));
        Tensor gathered = context.all_gather(Tensor::from_vector<float>({id}, Shape{1}));
        EXPECT_EQ(gathered.to_vector<float>(), (std::vector<float>{0, 1, 2, 3}));
        EXPECT_EQ(sum.device().index(), context.replica_id_in_sync_group());
        return sum;
      });
      for (const Tensor& sum : strategy.experimental_local_results(sums)) {
        EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{6, 60, 4, 8, 12})) << cross_device_ops->name();
      }
    }
  });
}

// The host ring's all-reduces are in the profile, one wall-timed "AllReduce"
// per replica device and call; ReductionToOneDevice's are plain ops (copies
// and adds), already in the profile as themselves.
TEST(StrategyTest, HostRingAllReducesAreInTheProfile) {
  in_fresh_process([] {
    split_cpu(2);
    for (auto cross_device_ops : std::vector<std::shared_ptr<CrossDeviceOps>>{
             std::make_shared<HostRingAllReduce>(), std::make_shared<ReductionToOneDevice>()}) {
      MirroredStrategy strategy(cpu_devices(2), cross_device_ops);
      profiler::start();
      strategy.run([](ReplicaContext& context) {
        const Tensor value = ops::ones(Shape{5});
        context.all_reduce(ReduceOp::kSum, value);
        return context.all_reduce(ReduceOp::kMean, value);
      });
      profiler::stop();
      std::map<std::string, int> per_device;
      for (const profiler::OpRecord& record : profiler::records()) {
        if (record.category != "collective") continue;
        EXPECT_EQ(record.op, "AllReduce");
        EXPECT_EQ(record.time_source, profiler::TimeSource::kWall);
        EXPECT_EQ(record.bytes_accessed, 5 * sizeof(float));
        EXPECT_GE(record.start_seconds, 0.0);
        EXPECT_GE(record.duration_seconds, 0.0);
        EXPECT_NE(record.detail_json.find("\"algorithm\":\"HostRingAllReduce\""), std::string::npos)
            << record.detail_json;
        ++per_device[record.device];
      }
      const bool ring = cross_device_ops->name() == "HostRingAllReduce";
      EXPECT_EQ(per_device.size(), ring ? 2u : 0u) << cross_device_ops->name();
      for (const auto& [device, count] : per_device) EXPECT_EQ(count, 2) << device;
    }
  });
}

TEST(StrategyTest, ReduceAndGatherCombineTheReplicas) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    PerReplica<Tensor> values = strategy.run([](ReplicaContext& context) {
      return context.replica_id_in_sync_group() == 0 ? Tensor::from_vector<float>({1, 2, 3}, Shape{3})
                                                     : Tensor::from_vector<float>({10}, Shape{1});
    });
    EXPECT_FLOAT_EQ(strategy.reduce(ReduceOp::kSum, values, 0).item<float>(), 16.0f);
    EXPECT_FLOAT_EQ(strategy.reduce(ReduceOp::kMean, values, 0).item<float>(), 4.0f);
    EXPECT_EQ(strategy.gather(values).to_vector<float>(), (std::vector<float>{1, 2, 3, 10}));
    PerReplica<Tensor> same_shape = strategy.run([](ReplicaContext& context) {
      return Tensor::from_vector<float>({static_cast<float>(context.replica_id_in_sync_group() + 1)}, Shape{1});
    });
    EXPECT_EQ(strategy.reduce(ReduceOp::kSum, same_shape).to_vector<float>(), (std::vector<float>{3}));
    EXPECT_EQ(strategy.reduce(ReduceOp::kMean, same_shape).to_vector<float>(), (std::vector<float>{1.5f}));
  });
}

TEST(StrategyTest, VariablesMadeInScopeAreMirroredAndUpdatedIdentically) {
  in_fresh_process([] {
    split_cpu(3);
    MirroredStrategy strategy(cpu_devices(3));
    Variable weight;
    std::shared_ptr<keras::SGD> optimizer;
    {
      auto scope = strategy.scope();
      EXPECT_TRUE(has_strategy());
      EXPECT_EQ(&get_strategy(), &strategy);
      weight = Variable(Tensor::from_vector<float>({1, 1}, Shape{2}), "w");
      optimizer = std::make_shared<keras::SGD>(keras::SGDOptions{.learning_rate = 0.5, .momentum = 0.5});
    }
    ASSERT_TRUE(is_mirrored(weight));
    std::vector<Tensor> copies = mirrored_copies(weight);
    ASSERT_EQ(copies.size(), 3u);
    for (size_t replica = 0; replica < 3; ++replica) {
      EXPECT_EQ(copies[replica].device().index(), static_cast<int>(replica));
      EXPECT_EQ(copies[replica].to_vector<float>(), (std::vector<float>{1, 1}));
    }
    // Each replica's gradient is its id + 1: the update uses the sum, 6.
    strategy.run([&](ReplicaContext& context) {
      EXPECT_EQ(weight.device().index(), context.replica_id_in_sync_group());
      const float g = static_cast<float>(context.replica_id_in_sync_group() + 1);
      optimizer->apply_gradients({{Tensor::from_vector<float>({g, 0}, Shape{2}), weight}});
    });
    EXPECT_EQ(optimizer->iterations(), 1);
    for (const Tensor& copy : mirrored_copies(weight)) {
      EXPECT_EQ(copy.to_vector<float>(), (std::vector<float>{1 - 0.5f * 6, 1}));
    }
    EXPECT_TRUE(is_mirrored(optimizer->slot(weight, "momentum")));
    weight.assign(Tensor::from_vector<float>({7, 8}, Shape{2}));
    for (const Tensor& copy : mirrored_copies(weight)) EXPECT_EQ(copy.to_vector<float>(), (std::vector<float>{7, 8}));
  });
}

TEST(StrategyTest, SyncOnReadTotalsAreSummedWhenReadOutsideTheReplicas) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    SyncOnReadVariable total(strategy, Tensor::scalar<float>(0), "loss_total");
    for (int step = 0; step < 3; ++step) {
      strategy.run([&](ReplicaContext& context) {
        total.local().assign_add(Tensor::scalar<float>(static_cast<float>(context.replica_id_in_sync_group() + 1)));
        EXPECT_EQ(total.local().device().index(), context.replica_id_in_sync_group());
      });
    }
    EXPECT_FLOAT_EQ(total.read_value().item<float>(), 9.0f);
    total.assign(Tensor::scalar<float>(0));
    EXPECT_FLOAT_EQ(total.read_value().item<float>(), 0.0f);
  });
}

TEST(StrategyTest, AFailingReplicaFailsTheRunWithoutHangingTheOthers) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    try {
      strategy.run([](ReplicaContext& context) {
        if (context.replica_id_in_sync_group() == 1) throw InvalidArgumentError("replica 1 broke");
        context.all_reduce(ReduceOp::kSum, ops::ones(Shape{1}));
      });
      ADD_FAILURE() << "expected an error";
    } catch (const InvalidArgumentError& error) {
      EXPECT_STREQ(error.what(), "replica 1 broke");
    }
  });
}

TEST(StrategyTest, OneDeviceStrategyPlacesVariablesAndRunsOnItsDevice) {
  in_fresh_process([] {
    split_cpu(2);
    OneDeviceStrategy strategy("/CPU:1");
    Variable weight;
    {
      auto scope = strategy.scope();
      weight = Variable(ops::ones(Shape{2}));
    }
    EXPECT_EQ(weight.device().index(), 1);
    EXPECT_FALSE(is_mirrored(weight));
    PerReplica<Tensor> result = strategy.run([](ReplicaContext&) { return ops::ones(Shape{1}); });
    EXPECT_EQ(result[0].device().index(), 1);
    EXPECT_THROW(MirroredStrategy({"/CPU:0", "/CPU:0"}), InvalidArgumentError);
  });
}

}  // namespace
}  // namespace accel::distribute
