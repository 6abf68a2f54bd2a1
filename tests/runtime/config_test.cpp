// tf.config behaviour. Each test runs in a fresh process (a threadsafe death
// test re-executes the binary) because physical-device settings can only be
// made before the runtime initializes, once per process.
#include <accel/accel.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"

#include <cstdio>
#include <cstdlib>

namespace accel {
namespace {

using accel::testing::in_fresh_process;

config::PhysicalDevice cpu() { return config::list_physical_devices("CPU").at(0); }

TEST(ConfigTest, ListsPhysicalCpu) {
  auto devices = config::list_physical_devices("CPU");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "/physical_device:CPU:0");
  EXPECT_EQ(devices[0].plugin, "cpu");
  EXPECT_GT(devices[0].memory_bytes, 0u);
  EXPECT_EQ(config::list_physical_devices("cpu").size(), 1u);  // type matching ignores case
}

TEST(ConfigTest, SplitsOnePhysicalCpuIntoLogicalDevices) {
  in_fresh_process([] {
    config::set_logical_device_configuration(cpu(), {{}, {}, {}});
    auto logical = config::list_logical_devices("CPU");
    ASSERT_EQ(logical.size(), 3u);
    EXPECT_EQ(logical[2].name, "/job:localhost/replica:0/task:0/device:CPU:2");
    EXPECT_EQ(logical[2].physical_device, "/physical_device:CPU:0");
    DeviceScope scope("/CPU:2");
    Tensor t = ops::ones(Shape{4});
    EXPECT_EQ(t.device().index(), 2);
    EXPECT_EQ(t.to(find_device("/CPU:1")).device().index(), 1);
  });
}

TEST(ConfigTest, MemoryLimitIsEnforcedAndTheRuntimeStaysUsable) {
  in_fresh_process([] {
    config::set_logical_device_configuration(cpu(), {{1}, {}});  // CPU:0 limited to 1 MiB
    DeviceScope scope("/CPU:0");
    Tensor kept = ops::zeros(Shape{128 * 1024});  // 512 KiB
    try {
      ops::zeros(Shape{192 * 1024});  // 768 KiB more: over the limit
      ADD_FAILURE() << "expected ResourceExhaustedError";
    } catch (const ResourceExhaustedError& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("device:CPU:0"), std::string::npos) << message;
      EXPECT_NE(message.find("786432 bytes"), std::string::npos) << message;
      EXPECT_NE(message.find("524288 bytes in use"), std::string::npos) << message;
    }
    Tensor fits = ops::zeros(Shape{64 * 1024});
    EXPECT_EQ(config::get_memory_info("/CPU:0").current, 768u * 1024u);
    {
      DeviceScope other("/CPU:1");
      Tensor unlimited = ops::zeros(Shape{1024 * 1024});  // CPU:1 has no limit
      EXPECT_EQ(unlimited.element_count(), 1024 * 1024);
    }
  });
}

TEST(ConfigTest, MemoryInfoTracksCurrentAndPeak) {
  in_fresh_process([] {
    DeviceScope scope("/CPU:0");
    uint64_t base = config::get_memory_info("/CPU:0").current;
    {
      Tensor big = ops::zeros(Shape{1000});
      EXPECT_EQ(config::get_memory_info("/CPU:0").current, base + 4000);
    }
    EXPECT_EQ(config::get_memory_info("/CPU:0").current, base);
    EXPECT_GE(config::get_memory_info("/CPU:0").peak, base + 4000);
    config::reset_memory_stats("/CPU:0");
    EXPECT_EQ(config::get_memory_info("/CPU:0").peak, base);
  });
}

// `accel devices` lists the logical devices without opening them (a GPU gets no
// context and no memory reserved): the same list initialization then opens.
TEST(ConfigTest, PlannedLogicalDevicesAreTheOpenedOnesAndOpenNothing) {
  in_fresh_process([] {
    config::set_logical_device_configuration(cpu(), {{1}, {}});
    const std::vector<config::PhysicalDevice> tpus = config::list_physical_devices("TPU");
    if (tpus.size() > 1) config::set_visible_devices({cpu(), tpus[1]});  // TPU:1 only: it becomes /TPU:0
    const std::vector<config::LogicalDevice> planned = runtime::planned_logical_devices();
    config::set_memory_growth(cpu(), false);  // not initialized: physical settings still allowed
    const std::vector<config::LogicalDevice> opened = config::list_logical_devices();
    ASSERT_EQ(planned.size(), opened.size());
    ASSERT_GE(planned.size(), 2u);
    for (size_t i = 0; i < planned.size(); ++i) {
      EXPECT_EQ(planned[i].name, opened[i].name);
      EXPECT_EQ(planned[i].device_type, opened[i].device_type);
      EXPECT_EQ(planned[i].physical_device, opened[i].physical_device);
      EXPECT_EQ(planned[i].memory_limit_bytes, opened[i].memory_limit_bytes);
    }
    EXPECT_EQ(planned[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");
    EXPECT_EQ(planned[0].memory_limit_bytes, std::optional<uint64_t>(1024 * 1024));
    if (tpus.size() > 1) {
      EXPECT_EQ(planned.back().name, "/job:localhost/replica:0/task:0/device:TPU:0");
      EXPECT_EQ(planned.back().physical_device, tpus[1].name);
    }
    EXPECT_EQ(runtime::planned_logical_devices().size(), opened.size());  // after initialization: the opened ones
  });
}

TEST(ConfigTest, PhysicalSettingsAfterInitializationFail) {
  in_fresh_process([] {
    config::set_memory_growth(cpu(), true);
    EXPECT_TRUE(config::get_memory_growth(cpu()));
    config::list_logical_devices();
    try {
      config::set_memory_growth(cpu(), false);
      ADD_FAILURE() << "expected FailedPreconditionError";
    } catch (const FailedPreconditionError& error) {
      EXPECT_NE(std::string(error.what()).find("cannot be modified after being initialized"), std::string::npos);
    }
    EXPECT_THROW(config::set_logical_device_configuration(cpu(), {{}, {}}), FailedPreconditionError);
    EXPECT_THROW(config::set_visible_devices({cpu()}), FailedPreconditionError);
  });
}

TEST(ConfigTest, RequireAcceleratorFailsWithoutOneAndListsSkippedPlugins) {
  in_fresh_process([] {
    config::set_visible_devices({cpu()});  // hide every non-CPU device
    config::set_require_accelerator(true);
    try {
      config::list_logical_devices();
      ADD_FAILURE() << "expected FailedPreconditionError";
    } catch (const FailedPreconditionError& error) {
      EXPECT_NE(std::string(error.what()).find("accelerator is required"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("skipped plugins"), std::string::npos) << error.what();
    }
  });
}

// The fault plugin "dup" is a good plugin whose TESTDEV device supports no op.
void load_device_without_ops() {
  setenv("ACCEL_PLUGIN_PATH", ACCEL_TEST_FAULT_PLUGIN_DIR "/libaccel-plugin-fault_none_dup.so", 1);
}

TEST(ConfigTest, OpsADeviceLacksRunOnTheCpuWithCopiesCounted) {
  in_fresh_process([] {
    load_device_without_ops();
    DeviceScope scope("/TESTDEV:0");
    Tensor a = Tensor::from_vector<float>({1, 2, 3}, Shape{3});
    EXPECT_EQ(a.device().type(), "TESTDEV");
    Tensor sum = ops::add(a, a);
    EXPECT_EQ(sum.device().type(), "TESTDEV");  // the result comes back to the device asked for
    EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{2, 4, 6}));
    runtime::FallbackStats stats = runtime::fallback_stats();
    EXPECT_EQ(stats.ops, 1u);
    EXPECT_EQ(stats.bytes_to_cpu, 24u);
    EXPECT_EQ(stats.bytes_from_cpu, 12u);
  });
}

TEST(ConfigTest, WithoutSoftPlacementAMissingOpIsAnError) {
  in_fresh_process([] {
    load_device_without_ops();
    config::set_soft_device_placement(false);
    DeviceScope scope("/TESTDEV:0");
    Tensor a = Tensor::from_vector<float>({1}, Shape{1});
    try {
      ops::exp(a);
      ADD_FAILURE() << "expected InvalidArgumentError";
    } catch (const InvalidArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find("soft device placement is disabled"), std::string::npos);
    }
  });
}

TEST(ConfigTest, UnknownPhysicalDeviceIsNotFound) {
  config::PhysicalDevice ghost{"/physical_device:GPU:9", "GPU", "", "", 0, {}};
  EXPECT_THROW(config::set_memory_growth(ghost, true), NotFoundError);
}

TEST(ConfigTest, SettingsFallBackToTheEnvironment) {
  setenv("ACCEL_TEST_SETTING_KEY", "from-env", 1);
  EXPECT_EQ(config::get_setting("test.setting_key").value_or(""), "from-env");
  config::set_setting("test.setting_key", "set");
  EXPECT_EQ(config::get_setting("test.setting_key").value_or(""), "set");
}

}  // namespace
}  // namespace accel
