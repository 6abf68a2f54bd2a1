// `accel tpu estimate --model`: one compiled step of a model timed on the
// emulated TPU from shapes alone (tpu_sim.values=none) is bitwise the
// simulated time of the same step actually run with values (--values
// compute); a file with only name: and model: is estimated with SGD on a mean
// squared error; fusions are named by what they fuse; on an emulated slice
// the all-reduce is part of the step; a sweep over a preset field
// re-estimates per value; a file without an input shape is refused; the
// published model-scale rows (configs/tpu/fidelity/mlperf_training.yaml) hold.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "run_test_support.hpp"

#include <filesystem>
#include <fstream>
#include <string>

namespace accel::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_shell;
using testing::scratch_dir;

const std::string kAccel = ACCEL_CLI_PATH;

fs::path write_model_file(const std::string& name, const std::string& text) {
  const fs::path folder = scratch_dir("tpu_estimate_" + name);
  fs::create_directories(folder);
  const fs::path file = folder / (name + ".yaml");
  std::ofstream(file) << text;
  return file;
}

// A small CNN with a residual Add, BatchNormalization and a Dense head, and
// its training: every kind of kernel a compiled step sends (MXU ops with
// epilogues, fusions, reductions, optimizer updates).
const char* kResidualCnn = R"(name: residual
model:
  graph:
    inputs: {image: {shape: [16, 16, 3]}}
    layers:
      - conv2d: {name: stem, filters: 16, kernel_size: 3, padding: same, activation: relu, inputs: image}
      - batch_normalization: {name: norm, inputs: stem}
      - conv2d: {name: branch, filters: 16, kernel_size: 3, padding: same, inputs: norm}
      - add: {name: residual, inputs: [stem, branch]}
      - global_average_pooling2d: {name: pool, inputs: residual}
      - dense: {name: logits, units: 10, inputs: pool}
    outputs: logits
data: {source: synthetic, shape: [16, 16, 3], classes: 10, samples: 64, batch: 8}
training:
  optimizer: {adam: {learning_rate: 0.001}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
)";

json estimate(const fs::path& file, const std::string& arguments) {
  const testing::CommandResult result =
      run_shell(kAccel + " tpu estimate --model " + file.string() + " --json " + arguments);
  EXPECT_EQ(result.code, 0) << result.output;
  return json::parse(result.output, nullptr, false);
}

TEST(TpuModelEstimate, TimingOnlyEqualsTheStepRunWithValuesBitwise) {
  const fs::path file = write_model_file("residual", kResidualCnn);
  const json timing_only = estimate(file, "--batch 8");
  const json with_values = estimate(file, "--batch 8 --values compute");
  ASSERT_TRUE(timing_only.is_object() && with_values.is_object());
  EXPECT_GT(timing_only["step_seconds"].get<double>(), 0.0);
  EXPECT_EQ(timing_only["step_seconds"].get<double>(), with_values["step_seconds"].get<double>());
  EXPECT_EQ(timing_only["cycles"], with_values["cycles"]);
  EXPECT_EQ(timing_only["hbm_bytes"], with_values["hbm_bytes"]);
  EXPECT_EQ(timing_only["by_op"], with_values["by_op"]);
  // The step's kernels, named by what they fuse; the sum of their times is the step.
  double seconds = 0;
  bool has_epilogue = false;
  bool has_fusion = false;
  for (const json& op : timing_only["by_op"]) {
    seconds += op["seconds"].get<double>();
    const std::string name = op["op"];
    has_epilogue |= name.find("+bias_add") != std::string::npos;
    has_fusion |= name.rfind("Fusion(", 0) == 0;
    EXPECT_EQ(name.find("Slice"), std::string::npos) << "the batch is fed whole, not sliced";
  }
  EXPECT_TRUE(has_epilogue) << timing_only["by_op"].dump();
  EXPECT_TRUE(has_fusion) << timing_only["by_op"].dump();
  EXPECT_NEAR(seconds, timing_only["step_seconds"].get<double>(), 1e-12 + 1e-9 * seconds);
}

// Under TPUStrategy on an emulated v4-8, the step is the slowest core plus
// the gradient all-reduce over the interconnect; timing only equals the step
// run with values there too.
TEST(TpuModelEstimate, OnASliceTheStepIncludesTheAllReduce) {
  const fs::path file = write_model_file("slice", kResidualCnn);
  const json timing_only = estimate(file, "--batch 16 --slice v4-8");
  const json with_values = estimate(file, "--batch 16 --slice v4-8 --values compute");
  ASSERT_TRUE(timing_only.is_object() && with_values.is_object());
  EXPECT_EQ(timing_only["replicas"], 8);
  EXPECT_GT(timing_only["all_reduce_seconds"].get<double>(), 0.0);
  EXPECT_GT(timing_only["step_seconds"].get<double>(), timing_only["all_reduce_seconds"].get<double>());
  EXPECT_EQ(timing_only["step_seconds"].get<double>(), with_values["step_seconds"].get<double>());
  EXPECT_EQ(timing_only["by_op"], with_values["by_op"]);
  // Each replica trains on 16 / 8 examples: less work per core than one core on all 16.
  const json one_core = estimate(file, "--batch 16");
  EXPECT_LT(timing_only["flops"].get<double>(), one_core["flops"].get<double>());
}

// The step's time by unit, and megacore: on a v4 a chip's two TensorCores
// as one device make a convolution-heavy step faster.
TEST(TpuModelEstimate, TimeByUnitAndMegacore) {
  const fs::path file = write_model_file("units", kResidualCnn);
  const json one_core = estimate(file, "--batch 64");
  const json megacore = estimate(file, "--batch 64 --megacore");
  EXPECT_GT(one_core["mxu_cycles"].get<int64_t>(), 0);
  EXPECT_GT(one_core["vector_cycles"].get<int64_t>(), 0);
  EXPECT_LE(one_core["mxu_cycles"].get<int64_t>() + one_core["vector_cycles"].get<int64_t>(),
            one_core["cycles"].get<int64_t>());
  EXPECT_LT(megacore["mxu_cycles"].get<int64_t>(), one_core["mxu_cycles"].get<int64_t>());
  EXPECT_LT(megacore["step_seconds"].get<double>(), one_core["step_seconds"].get<double>());
}

TEST(TpuModelEstimate, AModelOnlyFileIsEstimatedWithSgdOnAMeanSquaredError) {
  const fs::path file = write_model_file("model_only", R"(name: model_only
model:
  layers:
    - flatten: {input_shape: [28, 28]}
    - dense: {units: 64, activation: relu}
    - dense: {units: 10}
)");
  const json training = estimate(file, "--batch 128");
  const json inference = estimate(file, "--batch 128 --inference");
  EXPECT_EQ(training["batch"], 128);
  EXPECT_EQ(training["step"], "training");
  EXPECT_EQ(inference["step"], "inference");
  EXPECT_GT(training["step_seconds"].get<double>(), inference["step_seconds"].get<double>());
  bool sgd = false;
  for (const json& op : training["by_op"]) sgd |= op["op"].get<std::string>().find("SGD_UPDATE") != std::string::npos;
  EXPECT_TRUE(sgd) << training["by_op"].dump();
}

TEST(TpuModelEstimate, ASweepReestimatesPerValueOfAPresetField) {
  const fs::path file = write_model_file("sweep", kResidualCnn);
  const testing::CommandResult result =
      run_shell(kAccel + " tpu estimate --model " + file.string() +
                " --batch 8 --json --sweep hbm.bandwidth_bytes_per_s=100e9,1200e9,12000e9");
  ASSERT_EQ(result.code, 0) << result.output;
  const json sweep = json::parse(result.output);
  ASSERT_EQ(sweep["points"].size(), 3u);
  // More bandwidth never makes the step slower, and from 100 GB/s it helps.
  const double slow = sweep["points"][0]["step_seconds"];
  const double base = sweep["points"][1]["step_seconds"];
  const double fast = sweep["points"][2]["step_seconds"];
  EXPECT_GT(slow, base);
  EXPECT_GE(base, fast);
}

// The number of chips is swept through the slice: more chips, a smaller
// batch per replica, a shorter step (at a batch where compute outweighs the
// all-reduce's hops; at 64 images the step is latency-bound).
TEST(TpuModelEstimate, ASweepOverSlicesSweepsTheChips) {
  const fs::path file = write_model_file("slices", kResidualCnn);
  const testing::CommandResult result = run_shell(kAccel + " tpu estimate --model " + file.string() +
                                                  " --batch 1024 --json --sweep slice=v4-8,v4-16");
  ASSERT_EQ(result.code, 0) << result.output;
  const json sweep = json::parse(result.output);
  ASSERT_EQ(sweep["points"].size(), 2u);
  EXPECT_GT(sweep["points"][0]["step_seconds"].get<double>(), sweep["points"][1]["step_seconds"].get<double>());
}

// Every replica of a data-parallel step runs the same program, so a slice
// can be timed as one replica plus the slice's all-reduce: on a v4-16 (8
// chips as megacore devices, 16 TensorCores without) that equals running
// every replica, and a 2,048-chip slice is estimated without opening 2,048
// devices.
TEST(TpuModelEstimate, OneReplicaTimedEqualsTheWholeSlice) {
  const fs::path file = write_model_file("one_replica", kResidualCnn);
  for (const std::string megacore : {"", " --megacore"}) {
    const json whole = estimate(file, "--batch 1024 --slice v4-16" + megacore);
    const json one = estimate(file, "--batch 1024 --slice v4-16 --time-one-replica" + megacore);
    ASSERT_TRUE(whole.is_object() && one.is_object());
    EXPECT_FALSE(whole["one_replica_timed"].get<bool>());
    EXPECT_TRUE(one["one_replica_timed"].get<bool>());
    EXPECT_EQ(one["replicas"], whole["replicas"]);
    EXPECT_EQ(one["replicas"], megacore.empty() ? 16 : 8);
    EXPECT_EQ(one["all_reduce_bytes"], whole["all_reduce_bytes"]);
    // The replica's own work is the same; the one replica's all-reduce runs
    // overlapped with its backward pass (in parts, as gradients are ready),
    // the emulated slice's after the step (TPUStrategy's one all-reduce).
    const double one_work = one["step_seconds"].get<double>() - one["all_reduce_exposed_seconds"].get<double>();
    const double whole_work = whole["step_seconds"].get<double>() - whole["all_reduce_seconds"].get<double>();
    EXPECT_NEAR(one_work / whole_work, 1.0, 1e-2) << megacore;
    EXPECT_GT(one["all_reduce_seconds"].get<double>(), 0.0);
    EXPECT_LE(one["all_reduce_exposed_seconds"].get<double>(), one["all_reduce_seconds"].get<double>());
  }
  const json pod = estimate(file, "--batch 262144 --slice v4-4096 --megacore");
  ASSERT_TRUE(pod.is_object());
  EXPECT_TRUE(pod["one_replica_timed"].get<bool>());
  EXPECT_EQ(pod["replicas"], 2048);
  EXPECT_GT(pod["all_reduce_seconds"].get<double>(), 0.0);
  // A batch that does not split over the replicas is refused, naming both.
  const testing::CommandResult uneven =
      run_shell(kAccel + " tpu estimate --model " + file.string() + " --batch 1000 --slice v4-4096 --megacore");
  EXPECT_EQ(uneven.code, 2);
  EXPECT_NE(uneven.output.find("a global batch of 1000 does not split over its 2048 replicas"), std::string::npos)
      << uneven.output;
}

// The emulated system of `--run NAME` is that run's `tpu:` section (preset
// and hardware fields) unless --preset is given; a bad preset file or --set
// key is named, with its position, not reported as a plugin that did not load.
TEST(TpuModelEstimate, TheChosenRunsPresetAndNamedPresetErrors) {
  const fs::path file = write_model_file("runs", R"(name: two_runs
model:
  graph:
    inputs: {image: {shape: [16, 16, 3]}}
    layers:
      - conv2d: {name: stem, filters: 16, kernel_size: 3, padding: same, activation: relu, inputs: image}
      - global_average_pooling2d: {name: pool, inputs: stem}
      - dense: {name: logits, units: 10, inputs: pool}
    outputs: logits
data: {source: synthetic, shape: [16, 16, 3], classes: 10, samples: 64, batch: 64}
training:
  optimizer: sgd
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
compare:
  - {name: on_v4, device: /TPU:0, tpu: {preset: tpu_v4}}
  - {name: on_v5e, device: /TPU:0, tpu: {preset: tpu_v5e, hardware: {hbm.bandwidth_bytes_per_s: 1e11}}}
)");
  const json v5e = estimate(file, "--run on_v5e");
  ASSERT_TRUE(v5e.is_object());
  EXPECT_EQ(v5e["system"]["preset"], "tpu_v5e");
  EXPECT_EQ(v5e["system"]["hbm_bandwidth_bytes_per_s"].get<double>(), 1e11);
  const json v4 = estimate(file, "--run on_v5e --preset tpu_v4");
  ASSERT_TRUE(v4.is_object());
  EXPECT_EQ(v4["system"]["preset"], "tpu_v4");

  const fs::path bad_preset = file.parent_path() / "bad_preset.yaml";
  std::ofstream(bad_preset) << "name: x\n";
  for (const auto& [arguments, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--set core.mxu.rowz=3", "unknown key 'core.mxu.rowz'"},
           {"--set core.mxu.rows=0", "'core.mxu.rows' is 0, out of range"},
           {"--preset no_such_preset", "no such TPU preset"},
           {"--preset " + bad_preset.string(), bad_preset.string() + ":1:1: missing key 'clock_hz'"}}) {
    const testing::CommandResult result =
        run_shell(kAccel + " tpu estimate --model " + file.string() + " " + arguments);
    EXPECT_EQ(result.code, 2) << arguments;
    EXPECT_NE(result.output.find(expected), std::string::npos) << arguments << ": " << result.output;
    EXPECT_EQ(result.output.find("did not load"), std::string::npos) << result.output;
  }
}

TEST(TpuModelEstimate, AFileWithoutAnInputShapeIsRefused) {
  const fs::path file = write_model_file("no_shape", "name: no_shape\nmodel:\n  layers: [flatten, dense: {units: 10}]\n");
  const testing::CommandResult result = run_shell(kAccel + " tpu estimate --model " + file.string());
  EXPECT_EQ(result.code, 2) << result.output;
  EXPECT_NE(result.output.find("needs the model's input shape"), std::string::npos) << result.output;
}

// Each row of the model-scale fidelity table: `accel tpu estimate --model`
// on the published slice (one replica timed, its gradient all-reduce on the
// slice's torus overlapped with the backward pass), within the row's
// tolerance of the published step time.
TEST(TpuModelEstimate, PublishedModelStepsWithinTheirTolerance) {
  const fs::path root = EXPERIMENT_SOURCE_DIR;
  const YAML::Node table = YAML::LoadFile((root / "configs/tpu/fidelity/mlperf_training.yaml").string());
  ASSERT_GT(table["steps"].size(), 0u);
  for (const YAML::Node& row : table["steps"]) {
    const std::string name = row["name"].as<std::string>();
    const std::string preset = row["preset"].as<std::string>();
    std::string arguments = "--preset " + preset + " --batch " + std::to_string(row["batch"].as<int>()) +
                            " --slice " + row["slice"].as<std::string>() + " --time-one-replica";
    if (row["megacore"].as<bool>()) arguments += " --megacore";
    const json step = estimate(root / row["model"].as<std::string>(), arguments);
    ASSERT_TRUE(step.is_object()) << name;
    EXPECT_TRUE(step["one_replica_timed"].get<bool>()) << name;
    EXPECT_GT(step["all_reduce_seconds"].get<double>(), 0.0) << name;
    const double estimated = step["step_seconds"].get<double>();
    const double published = row["published_step_seconds"].as<double>();
    EXPECT_NEAR(estimated / published, 1.0, row["tolerance"].as<double>())
        << name << ": estimated " << estimated * 1e3 << " ms (all-reduce "
        << step["all_reduce_seconds"].get<double>() * 1e3 << " ms on the links, "
        << step["all_reduce_exposed_seconds"].get<double>() * 1e3 << " ms exposed), published " << published * 1e3
        << " ms";
    if (const YAML::Node power = row["published_power_w"]) {
      ASSERT_TRUE(step["energy"].is_object()) << name << ": the preset has no energy figures";
      const double watts = step["energy"]["average_power_w"].get<double>();
      EXPECT_GE(watts, power[0].as<double>()) << name;
      EXPECT_LE(watts, power[1].as<double>()) << name;
    }
  }
}

}  // namespace
}  // namespace accel::experiment
