// End to end: training.jit_compile in `accel run`. A compiled run records
// what compiling its train step did (one trace, the other steps replayed, no
// eager fallback, fusions made), and training.remat what it recomputed; on
// the emulated TPU the quickstart's CNN
// moves less HBM traffic per training step compiled than eager, and the
// report shows both with their ratio. Synthetic 28x28 images, so it runs
// without Fashion-MNIST: the emulator's traffic depends on shapes, not values.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_test_support.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace accel::experiment {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_text;
using testing::run_named;
using testing::run_shell;
using testing::scratch_dir;

const std::string kAccel = ACCEL_CLI_PATH;

// configs/quickstart.yaml's model and training, 4 steps of batch 32; `compare` is appended.
fs::path quickstart_like(const fs::path& folder, const std::string& compare) {
  fs::create_directories(folder);
  const fs::path file = folder / "compiled.yaml";
  std::ofstream(file) << R"(name: compiled
model:
  layers:
    - conv2d: {filters: 32, kernel_size: [3, 3], activation: relu, input_shape: [28, 28, 1]}
    - max_pooling2d: {pool_size: [2, 2]}
    - conv2d: {filters: 64, kernel_size: [3, 3], activation: relu}
    - max_pooling2d: {pool_size: [2, 2]}
    - flatten
    - dense: {units: 64, activation: relu}
    - dense: {units: 10}
data: {source: synthetic, shape: [28, 28, 1], classes: 10, samples: 256, batch: 32}
training:
  optimizer: {adam: {learning_rate: 0.001}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  metrics: [accuracy]
  epochs: 1
  steps_per_epoch: 4
  seed: 42
output: {trace: false}
compare:
)" << compare;
  return file;
}

TEST(CompiledSteps, ACompiledRunRecordsWhatCompilingItsStepDid) {
  const fs::path out = scratch_dir("compiled_cpu");
  const fs::path file = quickstart_like(out.string() + "_files", R"(
  - name: compiled
    device: /CPU:0
    training: {jit_compile: true}
  - name: eager
    device: /CPU:0
    training: {jit_compile: false}
)");
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  const json& compiled = run_named(document, "compiled");
  ASSERT_EQ(compiled["status"], "completed") << compiled["reason"];
  const json& step = compiled["compiled_step"];
  EXPECT_EQ(step["setting"], "true");
  EXPECT_EQ(step["jit_compile"], true);
  EXPECT_EQ(step["eager_reason"], "");
  EXPECT_EQ(step["traces"], 1);
  EXPECT_EQ(step["replays"], 4);  // every step, the traced one too
  EXPECT_EQ(step["eager_calls"], 0);
  EXPECT_GT(step["fusions"].get<int64_t>(), 0);
  EXPECT_GT(step["ops_fused"].get<int64_t>(), step["fusions"].get<int64_t>());
  EXPECT_LT(step["compiled_ops"].get<int64_t>(), step["traced_ops"].get<int64_t>());
  EXPECT_GT(step["fusion_bytes_saved"].get<int64_t>(), 0);
  EXPECT_GT(step["planned_peak_bytes"].get<int64_t>(), 0);
  EXPECT_LE(step["planned_peak_bytes"].get<int64_t>(), step["eager_peak_bytes"].get<int64_t>());
  const json& eager = run_named(document, "eager");
  ASSERT_EQ(eager["status"], "completed") << eager["reason"];
  EXPECT_EQ(eager["compiled_step"]["setting"], "false");
  EXPECT_EQ(eager["compiled_step"]["jit_compile"], false);
  EXPECT_EQ(eager["compiled_step"]["traces"], 0);
  const std::string markdown = read_text(out / "report.md");
  EXPECT_NE(markdown.find("- train step (jit_compile: true): compiled, "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- train step (jit_compile: false): eager"), std::string::npos) << markdown;
}

// training.remat: a stack of Dense, GELU and LayerNormalization layers with
// full rematerialization trains to the same losses as without, recomputing
// ops in the backward pass, with a lower planned peak (each layer's
// activations live only around its own backward pass); the report says so.
// (On the quickstart's CNN the peak does not fall: the first convolution's
// backward pass holds it, with or without remat.)
TEST(CompiledSteps, RematFullTrainsAlikeWithALowerPeak) {
  const fs::path out = scratch_dir("compiled_remat");
  fs::create_directories(out.string() + "_files");
  const fs::path file = fs::path(out.string() + "_files") / "remat.yaml";
  std::ofstream(file) << R"(name: remat
model:
  layers:
    - dense: {units: 256, activation: gelu, input_shape: [64]}
    - layer_normalization
    - dense: {units: 256, activation: gelu}
    - layer_normalization
    - dense: {units: 256, activation: gelu}
    - layer_normalization
    - dense: {units: 10}
data: {source: synthetic, shape: [64], classes: 10, samples: 512, batch: 128}
training:
  optimizer: {sgd: {learning_rate: 0.1}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  epochs: 1
  steps_per_epoch: 3
  seed: 42
  jit_compile: true
output: {trace: false}
compare:
  - {name: kept, device: /CPU:0}
  - {name: recomputed, device: /CPU:0, training: {remat: full}}
)";
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  const json& kept = run_named(document, "kept");
  const json& recomputed = run_named(document, "recomputed");
  ASSERT_EQ(recomputed["status"], "completed") << recomputed["reason"];
  EXPECT_EQ(kept["compiled_step"]["remat"], "none");
  EXPECT_EQ(kept["compiled_step"]["ops_recomputed"], 0);
  EXPECT_EQ(recomputed["compiled_step"]["remat"], "full");
  EXPECT_GT(recomputed["compiled_step"]["ops_recomputed"].get<int64_t>(), 0);
  EXPECT_LT(recomputed["compiled_step"]["planned_peak_bytes"].get<int64_t>(),
            kept["compiled_step"]["planned_peak_bytes"].get<int64_t>());
  ASSERT_EQ(kept["steps"].size(), recomputed["steps"].size());
  for (size_t step = 0; step < kept["steps"].size(); ++step) {
    const double expected = kept["steps"][step]["logs"]["loss"].get<double>();
    EXPECT_NEAR(recomputed["steps"][step]["logs"]["loss"].get<double>(), expected, 1e-6 * expected) << step;
  }
  EXPECT_NE(read_text(out / "report.md").find("(remat full: "), std::string::npos);
}

// The quickstart's CNN on the emulated TPU v4, eager vs compiled: fusion and
// on-chip residency keep intermediates out of HBM, and the ReLU mask and bias
// gradient run on the pooled tensor (simplify_pooling_gradients), and the
// pooling gradient is made inside the filter gradient's kernel (never in
// HBM). At batch 32 (the quickstart's) the emulator gives 61.2 MB vs 14.3 MB
// per step (4.28x; 19.8 MB, 3.09x, with MaxPoolGrad and the filter gradient
// as two kernels); what remains compiled is mostly the read of the unpooled
// activations, the convolutions and Adam's update. The emulator's figures
// are deterministic.
TEST(CompiledSteps, OnTheEmulatedTpuCompiledStepsMoveLessHbmTrafficThanEager) {
  const fs::path out = scratch_dir("compiled_tpu");
  const fs::path file = quickstart_like(out.string() + "_files", R"(
  - name: tpu_v4
    device: /TPU:0
  - name: tpu_v4_eager
    device: /TPU:0
    training: {jit_compile: false}
)");
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  const json& compiled = run_named(document, "tpu_v4");
  const json& eager = run_named(document, "tpu_v4_eager");
  ASSERT_EQ(compiled["status"], "completed") << compiled["reason"];
  ASSERT_EQ(eager["status"], "completed") << eager["reason"];
  EXPECT_EQ(compiled["compiled_step"]["setting"], "auto");
  EXPECT_EQ(compiled["compiled_step"]["jit_compile"], true);  // auto compiles on the TPU
  EXPECT_EQ(compiled["compiled_step"]["eager_reason"], "");
  EXPECT_GT(compiled["compiled_step"]["fusions"].get<int64_t>(), 0);
  const double compiled_bytes = compiled["headline"]["hbm_traffic_per_step"]["value"].get<double>();
  const double eager_bytes = eager["headline"]["hbm_traffic_per_step"]["value"].get<double>();
  ASSERT_GT(compiled_bytes, 0);
  const double ratio = eager_bytes / compiled_bytes;
  EXPECT_GE(ratio, 3.0) << "eager " << eager_bytes << " bytes per step, compiled " << compiled_bytes;
  const std::string markdown = read_text(out / "report.md");
  EXPECT_NE(markdown.find("- HBM traffic per training step: `tpu_v4_eager` (eager) "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("eager / compiled = "), std::string::npos) << markdown;
}

// training.mixed_precision: the quickstart's CNN on the CPU and the emulated
// TPU under mixed_bfloat16 (its last layer kept float32 by its own dtype)
// trains, compiled, with the policy in results.json and the report; on the
// TPU at batch 256 its compiled step moves at most 0.6x the float32 run's HBM
// bytes, as bfloat16 activations take 2 bytes there (at batch 32 Adam's
// float32 weights and slots are a third of the traffic).
TEST(CompiledSteps, AMixedBfloat16RunTrainsAndHalvesTheActivationsBytesOnTheTpu) {
  const fs::path out = scratch_dir("mixed_precision");
  const fs::path file = quickstart_like(out.string() + "_files", R"(
  - name: tpu_float32
    device: /TPU:0
    data: {source: synthetic, shape: [28, 28, 1], classes: 10, samples: 1024, batch: 256}
  - name: tpu_mixed
    device: /TPU:0
    data: {source: synthetic, shape: [28, 28, 1], classes: 10, samples: 1024, batch: 256}
    training: {mixed_precision: mixed_bfloat16}
  - name: cpu_mixed
    device: /CPU:0
    training: {mixed_precision: mixed_bfloat16}
    model:
      layers:
        - conv2d: {filters: 8, kernel_size: [3, 3], activation: relu, input_shape: [28, 28, 1]}
        - flatten
        - dense: {units: 10, dtype: float32}
)");
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  for (const char* name : {"tpu_float32", "tpu_mixed", "cpu_mixed"}) {
    const json& run = run_named(document, name);
    ASSERT_EQ(run["status"], "completed") << name << ": " << run["reason"];
    EXPECT_EQ(run["compiled_step"]["eager_reason"], "") << name;
    EXPECT_EQ(run["dtype_policy"], std::string(name) == "tpu_float32" ? "float32" : "mixed_bfloat16") << name;
    ASSERT_FALSE(run["steps"].empty()) << name;
    for (const json& step : run["steps"]) EXPECT_TRUE(std::isfinite(step["logs"]["loss"].get<double>())) << name;
  }
  const double float32_bytes = run_named(document, "tpu_float32")["headline"]["hbm_traffic_per_step"]["value"].get<double>();
  const double mixed_bytes = run_named(document, "tpu_mixed")["headline"]["hbm_traffic_per_step"]["value"].get<double>();
  ASSERT_GT(float32_bytes, 0);
  EXPECT_LE(mixed_bytes, 0.6 * float32_bytes) << "mixed " << mixed_bytes << ", float32 " << float32_bytes;
  EXPECT_NE(read_text(out / "report.md").find(", dtype policy mixed_bfloat16"), std::string::npos);
}

}  // namespace
}  // namespace accel::experiment
