// A test environment that splits the CPU into `count` logical devices
// (/CPU:0 ... /CPU:count-1) before the runtime starts, for suites that run
// on several devices in a process of their own.
#pragma once

#include <accel/config.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace accel::testing {

class SplitCpuEnvironment : public ::testing::Environment {
 public:
  explicit SplitCpuEnvironment(int count) : count_(count) {}
  void SetUp() override {
    config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0),
                                             std::vector<config::LogicalDeviceConfiguration>(static_cast<size_t>(count_)));
  }

 private:
  int count_;
};

}  // namespace accel::testing
