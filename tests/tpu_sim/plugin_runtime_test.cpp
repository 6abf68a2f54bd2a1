// The TPU emulator plugin through the accel runtime, as a user meets it:
// devices TPU:0..N-1 with their properties, MXU numerics (bf16 inputs, fp32
// accumulation) equal to the CPU's on bf16-rounded inputs, simulated
// profile records whose cycles are the timing model's, HBM exhaustion, and
// system selection by settings (fresh processes: the runtime is a process
// singleton and reads the settings once).
#include <accel/accel.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "timing/op_timing.hpp"
#include "timing/presets.hpp"

namespace accel {
namespace {

using accel::testing::in_fresh_process;

const config::PhysicalDevice* find_physical(const std::vector<config::PhysicalDevice>& devices, const std::string& name) {
  for (const auto& device : devices) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

// The CPU's result on the same inputs rounded to bfloat16: what the MXU computes.
Tensor rounded_to_bf16(const Tensor& x) { return ops::cast(ops::cast(x, DType::kBFloat16), DType::kFloat32); }

void expect_identical(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  const std::vector<float> got = actual.to(find_device("/CPU:0")).to_vector<float>();
  const std::vector<float> want = expected.to_vector<float>();
  size_t mismatches = 0;
  for (size_t i = 0; i < want.size(); ++i) mismatches += got[i] != want[i] ? 1 : 0;
  EXPECT_EQ(mismatches, 0u) << "of " << want.size() << " elements";
}

TEST(TpuSimPlugin, DefaultSystemIsOneTpuV4ChipOfTwoCores) {
  const auto devices = config::list_physical_devices("TPU");
  ASSERT_EQ(devices.size(), 2u);
  const auto* core1 = find_physical(devices, "/physical_device:TPU:1");
  ASSERT_NE(core1, nullptr);
  EXPECT_EQ(core1->plugin, "tpu_sim");
  EXPECT_EQ(core1->description, "TPU v4 (emulated, chip 0 core 1)");
  EXPECT_EQ(core1->memory_bytes, 16ull << 30);  // 32 GiB of HBM per chip, two cores
  const auto& properties = core1->properties;
  EXPECT_EQ(properties.at("preset"), "tpu_v4");
  EXPECT_EQ(properties.at("chip"), "0");
  EXPECT_EQ(properties.at("core"), "1");
  EXPECT_EQ(properties.at("mxus"), "4");
  EXPECT_EQ(properties.at("array"), "128x128");
  EXPECT_EQ(properties.at("dataflow"), "ws");
  EXPECT_EQ(properties.at("matmul_precision"), "bfloat16");
  EXPECT_EQ(std::stod(properties.at("clock_hz")), 1.05e9);
  EXPECT_EQ(properties.at("mode"), "analytical");
  EXPECT_EQ(std::stod(properties.at("peak_flops")), 2.0 * 4 * 128 * 128 * 1.05e9);
}

TEST(TpuSimPlugin, MatmulEqualsTheCpuOnBf16RoundedInputsExactly) {
  DeviceScope cpu("/CPU:0");
  const Tensor a = ops::random_uniform(Shape{33, 70}, 1, -2, 2);
  const Tensor b = ops::random_uniform(Shape{70, 65}, 2, -2, 2);
  const Tensor expected = ops::matmul(rounded_to_bf16(a), rounded_to_bf16(b));
  Tensor actual;
  {
    DeviceScope tpu("/TPU:0");
    actual = ops::matmul(a.to(find_device("/TPU:0")), b.to(find_device("/TPU:0")));
  }
  EXPECT_EQ(actual.device().name(), find_device("/TPU:0").name());
  expect_identical(actual, expected);
  // ... and differs from the float32 product: the inputs really were rounded.
  EXPECT_NE(actual.to(find_device("/CPU:0")).to_vector<float>(), ops::matmul(a, b).to_vector<float>());
}

TEST(TpuSimPlugin, ConvolutionAndItsGradientsRoundInputsToBf16) {
  DeviceScope cpu("/CPU:0");
  const ops::Conv2DOptions options{{1, 1}, ops::Padding::kSame, {1, 1}};
  const Tensor x = ops::random_uniform(Shape{4, 9, 9, 3}, 3, -1, 1);
  const Tensor filter = ops::random_uniform(Shape{3, 3, 3, 8}, 4, -1, 1);
  const Tensor dy = ops::random_uniform(Shape{4, 9, 9, 8}, 5, -1, 1);
  const Device tpu = find_device("/TPU:1");
  Tensor y, dx, dfilter;
  {
    DeviceScope scope(tpu);
    y = ops::conv2d(x.to(tpu), filter.to(tpu), options);
    dx = ops::conv2d_backward_input(dy.to(tpu), filter.to(tpu), x.shape(), options);
    dfilter = ops::conv2d_backward_filter(x.to(tpu), dy.to(tpu), filter.shape(), options);
  }
  expect_identical(y, ops::conv2d(rounded_to_bf16(x), rounded_to_bf16(filter), options));
  expect_identical(dx, ops::conv2d_backward_input(rounded_to_bf16(dy), rounded_to_bf16(filter), x.shape(), options));
  expect_identical(dfilter, ops::conv2d_backward_filter(rounded_to_bf16(x), rounded_to_bf16(dy), filter.shape(), options));
}

TEST(TpuSimPlugin, VectorOpsComputeInFloat32) {
  DeviceScope cpu("/CPU:0");
  const Tensor a = ops::random_uniform(Shape{1000}, 6, -3, 3);
  Tensor on_tpu;
  {
    DeviceScope tpu("/TPU:0");
    on_tpu = ops::tanh(ops::mul(a.to(find_device("/TPU:0")), a.to(find_device("/TPU:0"))));
  }
  expect_identical(on_tpu, ops::tanh(ops::mul(a, a)));
}

TEST(TpuSimPlugin, ProfileRecordsCarryTheTimingModelsCycles) {
  const tpu::TimingModel model(tpu::load_system({}));
  const tpu::OpTiming matmul_timing = model.estimate_matmul(256, 512, 1024, tpu::NumberType::kFp32);
  const tpu::OpTiming conv_timing =
      model.estimate_conv2d({32, 28, 28, 1, 32, 3, 3, 1, tpu::Padding::kValid}, tpu::NumberType::kFp32);
  const Device tpu = find_device("/TPU:0");
  const Tensor a = ops::zeros(Shape{256, 1024}).to(tpu);
  const Tensor b = ops::zeros(Shape{1024, 512}).to(tpu);
  const Tensor x = ops::zeros(Shape{32, 28, 28, 1}).to(tpu);
  const Tensor filter = ops::zeros(Shape{3, 3, 1, 32}).to(tpu);
  profiler::start();
  {
    DeviceScope scope(tpu);
    ops::matmul(a, b);
    ops::conv2d(x, filter);
  }
  profiler::stop();
  std::vector<profiler::OpRecord> records;
  for (const auto& record : profiler::records()) {
    if (record.device == tpu.name()) records.push_back(record);
  }
  ASSERT_EQ(records.size(), 2u);
  const profiler::OpRecord& matmul = records[0];
  EXPECT_EQ(matmul.op, "MatMul");
  EXPECT_EQ(matmul.time_source, profiler::TimeSource::kSimulated);
  EXPECT_EQ(matmul.cycles, static_cast<uint64_t>(matmul_timing.cycles));
  EXPECT_EQ(matmul.clock_hz, 1.05e9);
  EXPECT_DOUBLE_EQ(matmul.duration_seconds, matmul_timing.seconds);
  EXPECT_EQ(matmul.flops, 2.0 * 256 * 512 * 1024);
  EXPECT_EQ(matmul.bytes_accessed, static_cast<double>(matmul_timing.hbm_bytes));
  EXPECT_DOUBLE_EQ(matmul.utilization, matmul_timing.mxu_utilization);
  EXPECT_EQ(matmul.bound, matmul_timing.bound == tpu::Bound::kMemory ? "memory" : "compute");
  EXPECT_NE(matmul.detail_json.find("\"folds\":" + std::to_string(matmul_timing.folds)), std::string::npos)
      << matmul.detail_json;
  EXPECT_NE(matmul.detail_json.find("\"stall_cycles\""), std::string::npos);
  EXPECT_NE(matmul.detail_json.find("\"hbm_bytes\":{\"input\""), std::string::npos);

  const profiler::OpRecord& conv = records[1];
  EXPECT_EQ(conv.cycles, static_cast<uint64_t>(conv_timing.cycles));
  // Ops run back to back on the core's simulated timeline.
  EXPECT_DOUBLE_EQ(conv.start_seconds, matmul.start_seconds + matmul.duration_seconds);
}

TEST(TpuSimPlugin, HbmExhaustionIsResourceExhaustedAndTheDeviceStaysUsable) {
  in_fresh_process([] {
    config::set_setting("tpu_sim.overrides", "hbm.capacity_bytes=64 MiB");  // 32 MiB per core
    DeviceScope scope("/TPU:0");
    const Tensor kept = ops::zeros(Shape{6 * 1024 * 1024});  // 24 MiB
    try {
      ops::zeros(Shape{4 * 1024 * 1024});  // 16 MiB more
      ADD_FAILURE() << "expected ResourceExhaustedError";
    } catch (const ResourceExhaustedError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("16777216 bytes"), std::string::npos) << message;
      EXPECT_NE(message.find("25165824 bytes in use"), std::string::npos) << message;
      EXPECT_NE(message.find("33554432-byte capacity"), std::string::npos) << message;
    }
    const Tensor fits = ops::ones(Shape{1024, 1024});  // 4 MiB
    EXPECT_EQ(ops::reduce_sum(ops::matmul(fits, ops::ones(Shape{1024, 1}))).to_vector<float>().at(0),
              1024.0f * 1024.0f);
  });
}

TEST(TpuSimPlugin, SettingsSelectPresetChipsAndOverrides) {
  in_fresh_process([] {
    config::set_setting("tpu_sim.preset", "tpu_v4");
    config::set_setting("tpu_sim.chips", "4");  // a v4-8 slice
    config::set_setting("tpu_sim.overrides", "core.mxu.rows=64;core.mxu.columns=64;core.mxu.dataflow=os");
    const auto devices = config::list_physical_devices("TPU");
    ASSERT_EQ(devices.size(), 8u);
    const auto* last = find_physical(devices, "/physical_device:TPU:7");
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->description, "TPU v4 (emulated, chip 3 core 1)");
    EXPECT_EQ(last->properties.at("coords"), "1,1,0");
    EXPECT_EQ(last->properties.at("array"), "64x64");
    EXPECT_EQ(last->properties.at("dataflow"), "os");
  });
  in_fresh_process([] {
    config::set_setting("tpu_sim.preset", "tpu_v5e");
    config::set_setting("tpu_sim.mode", "cycle_accurate");
    const auto devices = config::list_physical_devices("TPU");
    ASSERT_EQ(devices.size(), 1u);  // v5e: one TensorCore per chip
    EXPECT_EQ(devices[0].properties.at("preset"), "tpu_v5e");
    EXPECT_EQ(devices[0].properties.at("mode"), "cycle_accurate");
    DeviceScope scope("/TPU:0");
    EXPECT_EQ(ops::matmul(ops::ones(Shape{4, 8}), ops::ones(Shape{8, 2})).to_vector<float>().at(0), 8.0f);
    EXPECT_THROW(ops::matmul(ops::ones(Shape{4096, 4096}), ops::ones(Shape{4096, 4096})), InvalidArgumentError);
  });
}

TEST(TpuSimPlugin, BadPresetFileSkipsThePluginWithFileLineAndColumn) {
  const std::filesystem::path bad = std::filesystem::temp_directory_path() / "accel_tpu_sim_bad_preset.yaml";
  int misspelled_line = 0;
  {
    std::ifstream preset(tpu::find_preset("tpu_v4"));
    std::ofstream out(bad);
    int number = 0;
    for (std::string line; std::getline(preset, line);) {
      ++number;
      if (line.rfind("clock_hz:", 0) == 0) misspelled_line = number;
      out << (line.rfind("clock_hz:", 0) == 0 ? "clock_hx: 1050e6" : line) << '\n';
    }
  }
  ASSERT_GT(misspelled_line, 0);
  in_fresh_process([bad, misspelled_line] {
    config::set_setting("tpu_sim.preset", bad.string());
    EXPECT_TRUE(config::list_physical_devices("TPU").empty());
    bool skipped = false;
    for (const auto& plugin : runtime::skipped_plugins()) {
      if (plugin.name != "tpu_sim") continue;
      skipped = true;
      EXPECT_NE(plugin.reason.find(bad.string() + ":" + std::to_string(misspelled_line) + ":1: unknown key 'clock_hx'"),
                std::string::npos)
          << plugin.reason;
    }
    EXPECT_TRUE(skipped);
  });
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace accel
