// A test fixture owning a fresh folder in the system's temporary directory
// for what the worker processes of a test write (weights, losses), removed
// after the test. The folder's name holds the process id and the test run's
// seed, so tests running side by side do not share one.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>

namespace accel::distribute::testing {

class ScratchFolderTest : public ::testing::Test {
 protected:
  explicit ScratchFolderTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              fmt::format("{}_{}_{}", prefix_, ::getpid(), ::testing::UnitTest::GetInstance()->random_seed());
    std::filesystem::remove_all(folder_);  // left by a crashed earlier process of this pid
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::string path(const std::string& name) const { return (folder_ / name).string(); }

 private:
  std::string prefix_;
  std::filesystem::path folder_;
};

}  // namespace accel::distribute::testing
