// MultiWorkerMirroredStrategy between real worker processes on loopback,
// training the tutorial CNN with Keras fit (multi_worker_training_worker):
//  - 2 workers on global batch 8 end with the weights of 1 replica on batch 8;
//  - a worker killed mid-training makes every other worker exit with a clear
//    error well within 60 s;
//  - a worker that never arrives makes the others fail after the configured
//    timeout, naming it;
//  - after a kill, restarting every worker resumes from the chief's last
//    BackupAndRestore backup and ends with the weights of an uninterrupted run;
//  - each worker's profile holds its Gloo all-reduces, one or more a step.
// Every wait is bounded and every process dies with its test.
#include "scratch_folder_test.hpp"
#include "worker_cluster.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace accel::distribute {
namespace {

using namespace std::chrono_literals;
using testing::WorkerCluster;
using Weights = std::vector<std::vector<float>>;

const std::string kWorker = ACCEL_TRAINING_WORKER;

class MultiWorkerTraining : public testing::ScratchFolderTest {
 protected:
  MultiWorkerTraining() : ScratchFolderTest("accel_multi_worker") {}
};

// Each line: one weight's values as hex floats (exact).
Weights read_weights(const std::string& path) {
  Weights weights;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream tokens(line);
    std::vector<float>& values = weights.emplace_back();
    std::string token;
    while (tokens >> token) values.push_back(std::strtof(token.c_str(), nullptr));
  }
  return weights;
}

double worst_relative_difference(const Weights& a, const Weights& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t weight = 0; weight < std::min(a.size(), b.size()); ++weight) {
    EXPECT_EQ(a[weight].size(), b[weight].size());
    double scale = 0, difference = 0;
    for (size_t i = 0; i < std::min(a[weight].size(), b[weight].size()); ++i) {
      scale = std::max(scale, static_cast<double>(std::abs(b[weight][i])));
      difference = std::max(difference, static_cast<double>(std::abs(a[weight][i] - b[weight][i])));
    }
    worst = std::max(worst, scale == 0 ? difference : difference / scale);
  }
  return worst;
}

void start_workers(WorkerCluster& cluster, const std::string& cluster_json, const std::vector<int>& indices,
                   const std::vector<std::string>& arguments) {
  for (int index : indices) {
    std::vector<std::string> command{kWorker, "multi_worker"};
    command.insert(command.end(), arguments.begin(), arguments.end());
    cluster.start(command, testing::tf_config_for(cluster_json, "worker", index));
  }
}

void expect_all_exited_zero(WorkerCluster& cluster) {
  for (int i = 0; i < cluster.size(); ++i) EXPECT_EQ(cluster.exit_code(i), 0) << cluster.all_output();
}

TEST_F(MultiWorkerTraining, TwoWorkersTrainLikeOneReplicaOnTheGlobalBatch) {
  WorkerCluster reference;
  reference.start({kWorker, "single", "weights=" + path("single.txt")}, "{}");
  ASSERT_TRUE(reference.wait_all(120s)) << reference.all_output();
  expect_all_exited_zero(reference);

  WorkerCluster cluster;
  start_workers(cluster, testing::local_workers_cluster_json(2), {0, 1},
                {"weights=" + path("two_workers.txt"), "profile=1"});
  ASSERT_TRUE(cluster.wait_all(120s)) << cluster.all_output();
  expect_all_exited_zero(cluster);
  // Every step's gradient all-reduce (Gloo) is in each worker's profile.
  const std::regex collectives("collective records ([0-9]+)");
  for (int i = 0; i < cluster.size(); ++i) {
    std::smatch match;
    const std::string output = cluster.output(i);
    ASSERT_TRUE(std::regex_search(output, match, collectives)) << cluster.all_output();
    EXPECT_GE(std::stoi(match[1]), 50) << cluster.all_output();
  }
  const double difference = worst_relative_difference(read_weights(path("two_workers.txt")), read_weights(path("single.txt")));
  std::fprintf(stderr, "2 workers vs 1 replica: worst relative weight difference %.3g\n", difference);
  EXPECT_LE(difference, 1e-5);
}

TEST_F(MultiWorkerTraining, AWorkerKilledMidTrainingMakesTheOthersExitWithAClearError) {
  WorkerCluster cluster;
  start_workers(cluster, testing::local_workers_cluster_json(3), {0, 1, 2}, {"steps=100000", "pause_ms=20"});
  ASSERT_TRUE(cluster.wait_for_text_from_all("epoch 0 step 3\n", 60s)) << cluster.all_output();
  const auto killed_at = std::chrono::steady_clock::now();
  cluster.process(1).signal_group(SIGKILL);
  ASSERT_TRUE(cluster.wait_all(60s)) << cluster.all_output();
  const auto took = std::chrono::steady_clock::now() - killed_at;
  std::fprintf(stderr, "the other workers exited %.1f s after the kill\n", std::chrono::duration<double>(took).count());
  EXPECT_LT(took, 60s);
  EXPECT_EQ(cluster.exit_code(1), 128 + SIGKILL);
  for (int i : {0, 2}) {
    EXPECT_EQ(cluster.exit_code(i), 3) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find("error: "), std::string::npos) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find("a peer left or did not answer"), std::string::npos) << cluster.all_output();
  }
}

TEST_F(MultiWorkerTraining, AWorkerThatNeverArrivesFailsTheOthersAfterTheTimeoutNamingIt) {
  std::vector<std::string> addresses;
  const std::string cluster_json = testing::local_workers_cluster_json(3, &addresses);
  WorkerCluster cluster;
  const auto started = std::chrono::steady_clock::now();
  start_workers(cluster, cluster_json, {0, 1}, {"timeout_ms=2000"});  // worker 2 never starts
  ASSERT_TRUE(cluster.wait_all(60s)) << cluster.all_output();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
  const std::string expected = fmt::format("worker 2 ({}) did not join within 2 s", addresses[2]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cluster.exit_code(i), 3) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find(expected), std::string::npos) << cluster.all_output();
  }
}

TEST_F(MultiWorkerTraining, RestartedWorkersResumeFromTheChiefsLastBackup) {
  const std::vector<std::string> training{"epochs=2", "steps=20", "save_freq=5"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> arguments = training;
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
  };
  // An uninterrupted run: the weights to end with.
  {
    WorkerCluster cluster;
    start_workers(cluster, testing::local_workers_cluster_json(2), {0, 1},
                  with({"backup=" + path("backup_a"), "weights=" + path("uninterrupted.txt")}));
    ASSERT_TRUE(cluster.wait_all(120s)) << cluster.all_output();
    expect_all_exited_zero(cluster);
  }
  // Killed in the second epoch, after the chief's backup of step 5 of it.
  const std::string backup = path("backup_b");
  {
    WorkerCluster cluster;
    start_workers(cluster, testing::local_workers_cluster_json(2), {0, 1}, with({"backup=" + backup, "pause_ms=30"}));
    ASSERT_TRUE(cluster.wait_for_text_from_all("epoch 1 step 6\n", 120s)) << cluster.all_output();
    cluster.process(1).signal_group(SIGKILL);
    ASSERT_TRUE(cluster.wait_all(60s)) << cluster.all_output();
    EXPECT_EQ(cluster.exit_code(0), 3) << cluster.all_output();
  }
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(backup) / "checkpoint.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(backup) / "workertemp_1")) << "non-chief temp left behind";
  // Every worker restarted: they resume where the backup stopped.
  WorkerCluster restarted;
  start_workers(restarted, testing::local_workers_cluster_json(2), {0, 1},
                with({"backup=" + backup, "weights=" + path("resumed.txt")}));
  ASSERT_TRUE(restarted.wait_all(120s)) << restarted.all_output();
  expect_all_exited_zero(restarted);
  for (int i = 0; i < 2; ++i) {
    std::smatch first;
    const std::string output = restarted.output(i);
    ASSERT_TRUE(std::regex_search(output, first, std::regex("first step (\\d+) (\\d+)"))) << output;
    EXPECT_EQ(first[1].str(), "1") << output;  // the second epoch,
    const int step = std::stoi(first[2].str());
    EXPECT_TRUE(step > 0 && step % 5 == 0) << output;  // at a backup after its start
  }
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(backup) / "checkpoint.safetensors"))
      << "a finished fit deletes the backup";
  EXPECT_EQ(read_weights(path("resumed.txt")), read_weights(path("uninterrupted.txt")));
}

}  // namespace
}  // namespace accel::distribute
