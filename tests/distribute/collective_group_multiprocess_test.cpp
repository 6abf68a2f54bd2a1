// CollectiveGroup between real processes on loopback: exact results with 2
// and 4 processes, over IPv6 too, chief-first ranks, a task that never
// joins, and a task killed mid-collective. Every wait is bounded; children
// die with the test.
#include "worker_cluster.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <accel/distribute/launch.hpp>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

namespace accel::distribute {
namespace {

using namespace std::chrono_literals;
using testing::WorkerCluster;

const std::string kWorker = ACCEL_TEST_WORKER;

void start_workers(WorkerCluster& cluster, const std::string& cluster_json, const std::vector<int>& indices,
                   const std::string& scenario, std::chrono::milliseconds timeout) {
  for (int index : indices) {
    cluster.start({kWorker, scenario, std::to_string(timeout.count())},
                  testing::tf_config_for(cluster_json, "worker", index));
  }
}

void expect_exact_collectives(int workers) {
  WorkerCluster cluster;
  std::vector<int> all(workers);
  for (int i = 0; i < workers; ++i) all[i] = i;
  start_workers(cluster, testing::local_workers_cluster_json(workers), all, "collectives", 20s);
  ASSERT_TRUE(cluster.wait_all(60s)) << cluster.all_output();
  for (int i = 0; i < workers; ++i) {
    EXPECT_EQ(cluster.exit_code(i), 0) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find(fmt::format("task worker {} is rank {}", i, i)), std::string::npos);
    EXPECT_NE(cluster.output(i).find(fmt::format("ok rank {} of {}", i, workers)), std::string::npos)
        << cluster.all_output();
  }
}

TEST(CollectiveGroupMultiprocess, TwoProcessesReduceGatherAndBroadcastExactly) { expect_exact_collectives(2); }

TEST(CollectiveGroupMultiprocess, FourProcessesReduceGatherAndBroadcastExactly) { expect_exact_collectives(4); }

bool has_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return bound;
}

TEST(CollectiveGroupMultiprocess, TwoProcessesOnIpv6LoopbackReduceExactly) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "this host has no IPv6 loopback (::1)";
  std::vector<std::string> addresses;
  for (int port : find_free_local_ports(2)) addresses.push_back(fmt::format("[::1]:{}", port));
  const std::string cluster_json = nlohmann::json{{"worker", addresses}}.dump();
  WorkerCluster cluster;
  start_workers(cluster, cluster_json, {0, 1}, "collectives", 20s);
  ASSERT_TRUE(cluster.wait_all(60s)) << cluster.all_output();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cluster.exit_code(i), 0) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find(fmt::format("ok rank {} of 2", i)), std::string::npos) << cluster.all_output();
  }
}

TEST(CollectiveGroupMultiprocess, ChiefIsRankZeroThenWorkersByIndex) {
  std::vector<std::string> addresses;
  testing::local_workers_cluster_json(3, &addresses);
  const std::string cluster_json =
      nlohmann::json{{"chief", {addresses[2]}}, {"worker", {addresses[0], addresses[1]}}}.dump();
  WorkerCluster cluster;
  cluster.start({kWorker, "collectives", "20000"}, testing::tf_config_for(cluster_json, "worker", 1));
  cluster.start({kWorker, "collectives", "20000"}, testing::tf_config_for(cluster_json, "chief", 0));
  cluster.start({kWorker, "collectives", "20000"}, testing::tf_config_for(cluster_json, "worker", 0));
  ASSERT_TRUE(cluster.wait_all(60s)) << cluster.all_output();
  EXPECT_NE(cluster.output(0).find("task worker 1 is rank 2"), std::string::npos) << cluster.all_output();
  EXPECT_NE(cluster.output(1).find("task chief 0 is rank 0"), std::string::npos) << cluster.all_output();
  EXPECT_NE(cluster.output(2).find("task worker 0 is rank 1"), std::string::npos) << cluster.all_output();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cluster.exit_code(i), 0) << cluster.all_output();
}

TEST(CollectiveGroupMultiprocess, AWorkerThatNeverJoinsIsNamedAfterTheTimeout) {
  std::vector<std::string> addresses;
  const std::string cluster_json = testing::local_workers_cluster_json(3, &addresses);
  WorkerCluster cluster;
  const auto started = std::chrono::steady_clock::now();
  start_workers(cluster, cluster_json, {0, 1}, "collectives", 2s);  // worker 2 never starts
  ASSERT_TRUE(cluster.wait_all(30s)) << cluster.all_output();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 15s);
  const std::string expected = fmt::format("worker 2 ({}) did not join within 2 s", addresses[2]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cluster.exit_code(i), 3) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find(expected), std::string::npos) << cluster.all_output();
  }
}

TEST(CollectiveGroupMultiprocess, AMissingChiefIsNamedAfterTheTimeout) {
  std::vector<std::string> addresses;
  const std::string cluster_json = testing::local_workers_cluster_json(3, &addresses);
  WorkerCluster cluster;
  start_workers(cluster, cluster_json, {1, 2}, "collectives", 2s);  // worker 0 hosts the rendezvous
  ASSERT_TRUE(cluster.wait_all(30s)) << cluster.all_output();
  const std::string expected = fmt::format("worker 0 ({}) did not join within 2 s", addresses[0]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cluster.exit_code(i), 3) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find(expected), std::string::npos) << cluster.all_output();
  }
}

TEST(CollectiveGroupMultiprocess, AWorkerKilledMidCollectiveMakesEveryOtherFailWithinTheTimeout) {
  constexpr auto kTimeout = 5s;
  WorkerCluster cluster;
  start_workers(cluster, testing::local_workers_cluster_json(4), {0, 1, 2, 3}, "loop", kTimeout);
  ASSERT_TRUE(cluster.wait_for_text_from_all("joined", 30s)) << cluster.all_output();
  std::this_thread::sleep_for(200ms);  // well inside the all-reduce loop
  const auto killed_at = std::chrono::steady_clock::now();
  cluster.process(2).signal_group(SIGKILL);
  ASSERT_TRUE(cluster.wait_all(kTimeout + 10s)) << cluster.all_output();
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, kTimeout + 3s);
  EXPECT_EQ(cluster.exit_code(2), 128 + SIGKILL);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(cluster.exit_code(i), 3) << cluster.all_output();
    EXPECT_NE(cluster.output(i).find("error: all_reduce failed on worker"), std::string::npos)
        << cluster.all_output();
  }
}

}  // namespace
}  // namespace accel::distribute
