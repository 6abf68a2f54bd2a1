// `accel launch`: per-worker TF_CONFIG, prefixed output, failure propagation,
// SIGINT, and no worker left behind.
#include "worker_cluster.hpp"

#include <accel/distribute/launch.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>

namespace accel::distribute {
namespace {

using namespace std::chrono_literals;

TEST(LocalWorkerTfConfig, NamesEveryWorkerAndThisIndex) {
  EXPECT_EQ(local_worker_tf_config({"127.0.0.1:1", "127.0.0.1:2"}, 1),
            R"({"cluster":{"worker":["127.0.0.1:1","127.0.0.1:2"]},"task":{"index":1,"type":"worker"}})");
}

#ifdef ACCEL_CLI
const std::string kAccel = ACCEL_CLI;

// Runs `accel launch ...` as a child of the test, output collected.
struct LaunchRun {
  testing::WorkerCluster launcher;
  explicit LaunchRun(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {kAccel, "launch"});
    launcher.start(arguments, "");
  }
};

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(AccelLaunch, GivesEachWorkerItsTfConfigAndPrefixesItsOutput) {
  LaunchRun run({"--workers", "3", "--port", "41000", "--", "sh", "-c", "echo \"config $TF_CONFIG\""});
  ASSERT_TRUE(run.launcher.wait_all(30s)) << run.launcher.all_output();
  EXPECT_EQ(run.launcher.exit_code(0), 0) << run.launcher.all_output();
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(run.launcher.output(0).find(fmt::format("[worker {}] config {}", i,
                                                      local_worker_tf_config({"127.0.0.1:41000", "127.0.0.1:41001",
                                                                              "127.0.0.1:41002"}, i))),
              std::string::npos)
        << run.launcher.all_output();
  }
}

TEST(AccelLaunch, AFailingWorkerStopsTheOthersAndSetsTheExitCode) {
  const auto started = std::chrono::steady_clock::now();
  LaunchRun run({"-n", "3", "--", "sh", "-c",
                 R"(case "$TF_CONFIG" in *'"index":1'*) exit 7;; *) exec sleep 60;; esac)"});
  ASSERT_TRUE(run.launcher.wait_all(30s)) << run.launcher.all_output();
  EXPECT_EQ(run.launcher.exit_code(0), 7) << run.launcher.all_output();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_NE(run.launcher.output(0).find("worker 1 exited with code 7"), std::string::npos);
}

TEST(AccelLaunch, SigintStopsEveryWorkerAndLeavesNone) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() /
                                       fmt::format("accel_launch_test_{}", ::getpid());
  std::filesystem::remove_all(folder);  // pid files of an earlier process with this pid
  std::filesystem::create_directories(folder);
  LaunchRun run({"-n", "2", "--", "sh", "-c",
                 fmt::format(R"(echo $$ > {}/$(echo "$TF_CONFIG" | tr -dc 0-9 | tail -c 1); echo started; sleep 60 & wait)",
                             folder.string())});
  ASSERT_TRUE(run.launcher.wait_for_text_from_all("[worker 1] started", 30s) ||
              run.launcher.output(0).find("[worker 1] started") != std::string::npos)
      << run.launcher.all_output();
  ASSERT_TRUE(run.launcher.wait_for_text_from_all("[worker 0] started", 30s)) << run.launcher.all_output();
  run.launcher.process(0).signal_group(SIGINT);
  ASSERT_TRUE(run.launcher.wait_all(20s)) << run.launcher.all_output();
  EXPECT_EQ(run.launcher.exit_code(0), 130);
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    pid_t pid = 0;
    std::ifstream(entry.path()) >> pid;
    ASSERT_GT(pid, 0);
    EXPECT_FALSE(process_alive(pid)) << "worker pid " << pid << " survived";
  }
  std::filesystem::remove_all(folder);
}
#endif

}  // namespace
}  // namespace accel::distribute
