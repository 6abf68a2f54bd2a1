// keras.distribution across 2 real processes on loopback, joined by
// distribute::initialize_distribution (Gloo): the zoo's small decoder,
// fitted 20 steps with each process holding 2 logical CPU devices, reaches
// the losses and the weights of the same fit on one device, within 1e-5
// relative (absolute for values under 1), in every process:
//  - DataParallel over the 4 devices of both processes;
//  - ModelParallel, FSDP over "data" (across the processes) x tensor
//    parallelism over "model" (within each) on a 2 x 2 mesh.
// A mesh the processes cannot split is refused in every process, naming why;
// a process that dies mid-training makes the other fail with a clear error,
// not wait for it.
// The programs run in sharded_training_worker; every wait is bounded.
#include "scratch_folder_test.hpp"
#include "worker_cluster.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace accel::distribute {
namespace {

using namespace std::chrono_literals;
using testing::WorkerCluster;

const std::string kWorker = ACCEL_SHARDED_TRAINING_WORKER;

// What a worker wrote: the losses of every step, then every weight's values.
struct Trained {
  std::vector<double> losses;
  std::vector<std::vector<double>> weights;
};

std::vector<double> hex_floats(const std::string& line) {
  std::istringstream tokens(line);
  std::vector<double> values;
  std::string token;
  while (tokens >> token) values.push_back(std::strtod(token.c_str(), nullptr));
  return values;
}

Trained read_trained(const std::string& path) {
  Trained trained;
  std::ifstream in(path);
  std::string line;
  if (std::getline(in, line)) trained.losses = hex_floats(line);
  while (std::getline(in, line)) trained.weights.push_back(hex_floats(line));
  return trained;
}

// The largest difference of a value from the reference's, relative to the
// reference's value, or absolute where that is under 1 (as the in-process
// test holds them: the keys' biases, whose gradient is zero up to rounding,
// stay at rounding size, where a relative difference means nothing).
double worst_relative_difference(const std::vector<double>& values, const std::vector<double>& reference) {
  EXPECT_EQ(values.size(), reference.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(values.size(), reference.size()); ++i) {
    worst = std::max(worst, std::abs(values[i] - reference[i]) / std::max(1.0, std::abs(reference[i])));
  }
  return worst;
}

class ShardedTrainingAcrossProcesses : public testing::ScratchFolderTest {
 protected:
  ShardedTrainingAcrossProcesses() : ScratchFolderTest("accel_sharded") {}

  // Runs `mode` in 2 worker processes; each writes what it trained.
  void run_two_workers(const std::string& mode) {
    const std::string cluster_json = testing::local_workers_cluster_json(2);
    WorkerCluster cluster;
    for (int index : {0, 1}) {
      cluster.start({kWorker, mode, fmt::format("output={}", path(fmt::format("{}_{}.txt", mode, index)))},
                    testing::tf_config_for(cluster_json, "worker", index));
    }
    ASSERT_TRUE(cluster.wait_all(100s)) << cluster.all_output();
    for (int index = 0; index < cluster.size(); ++index) {
      ASSERT_EQ(cluster.exit_code(index), 0) << cluster.all_output();
    }
  }

  // Both processes' losses and weights against one device's.
  void expect_trained_as_one_device(const std::string& mode) {
    WorkerCluster single;
    single.start({kWorker, "single", "output=" + path("single.txt")}, "{}");
    ASSERT_TRUE(single.wait_all(100s)) << single.all_output();
    ASSERT_EQ(single.exit_code(0), 0) << single.all_output();
    const Trained reference = read_trained(path("single.txt"));
    ASSERT_EQ(reference.losses.size(), 20u);
    EXPECT_LT(reference.losses.back(), reference.losses.front()) << "the decoder learns the pattern";

    ASSERT_NO_FATAL_FAILURE(run_two_workers(mode));
    for (int index : {0, 1}) {
      const Trained trained = read_trained(path(fmt::format("{}_{}.txt", mode, index)));
      EXPECT_LE(worst_relative_difference(trained.losses, reference.losses), 1e-5) << "process " << index;
      ASSERT_EQ(trained.weights.size(), reference.weights.size()) << "process " << index;
      double worst = 0;
      for (size_t weight = 0; weight < trained.weights.size(); ++weight) {
        worst = std::max(worst, worst_relative_difference(trained.weights[weight], reference.weights[weight]));
      }
      std::fprintf(stderr, "%s, process %d vs one device: worst relative weight difference %.3g\n", mode.c_str(),
                   index, worst);
      EXPECT_LE(worst, 1e-5) << "process " << index;
    }
  }
};

TEST_F(ShardedTrainingAcrossProcesses, DataParallelOverTwoProcessesTrainsAsOneDevice) {
  expect_trained_as_one_device("data_parallel");
}

TEST_F(ShardedTrainingAcrossProcesses, FsdpTimesTensorParallelOverTwoProcessesTrainsAsOneDevice) {
  expect_trained_as_one_device("model_parallel");
}

TEST_F(ShardedTrainingAcrossProcesses, AMeshTheProcessesCannotSplitIsRefusedNamingWhy) {
  const std::string cluster_json = testing::local_workers_cluster_json(2);
  WorkerCluster cluster;
  for (int index : {0, 1}) cluster.start({kWorker, "bad_meshes"}, testing::tf_config_for(cluster_json, "worker", index));
  ASSERT_TRUE(cluster.wait_all(100s)) << cluster.all_output();
  for (int index : {0, 1}) {
    ASSERT_EQ(cluster.exit_code(index), 0) << cluster.all_output();
    const std::string& output = cluster.output(index);
    EXPECT_NE(output.find("refused: a mesh of 3 devices across 2 processes"), std::string::npos) << output;
    EXPECT_NE(output.find("names task 2, but the mesh spans 2 processes"), std::string::npos) << output;
    EXPECT_EQ(output.find("accepted"), std::string::npos) << output;
  }
}

TEST_F(ShardedTrainingAcrossProcesses, AProcessThatDiesMidTrainingMakesTheOtherFailNotWait) {
  const std::string cluster_json = testing::local_workers_cluster_json(2);
  WorkerCluster cluster;
  const auto started = std::chrono::steady_clock::now();
  cluster.start({kWorker, "model_parallel", "timeout_ms=5000"}, testing::tf_config_for(cluster_json, "worker", 0));
  cluster.start({kWorker, "model_parallel", "timeout_ms=5000", "exit_at_step=3"},
                testing::tf_config_for(cluster_json, "worker", 1));
  ASSERT_TRUE(cluster.wait_all(100s)) << cluster.all_output();
  const auto took = std::chrono::steady_clock::now() - started;
  std::fprintf(stderr, "both processes exited after %.1f s\n", std::chrono::duration<double>(took).count());
  EXPECT_LT(took, 60s);
  EXPECT_EQ(cluster.exit_code(1), 9) << cluster.all_output();
  EXPECT_EQ(cluster.exit_code(0), 3) << cluster.all_output();
  const std::string& output = cluster.output(0);
  EXPECT_NE(output.find("error: "), std::string::npos) << output;
  EXPECT_NE(output.find("a peer left or did not answer"), std::string::npos) << output;
}

}  // namespace
}  // namespace accel::distribute
