// End to end: `accel run` with tf.distribute strategies, Keras callbacks and
// an op benchmark, on small synthetic data:
//  - one run on /CPU:0, MirroredStrategy over 2 logical CPUs and TPUStrategy
//    on the emulated v4-8 train the same model; results.json records each
//    strategy, and the TPU run's steps carry their simulated all-reduce;
//  - the callbacks written in the file run (CSV log, checkpoints per epoch,
//    early stopping);
//  - configs/matmul_benchmark.yaml times matmul on the CPU and the emulated TPU;
//  - two workers under `accel launch` train one model with
//    MultiWorkerMirroredStrategy, and only the chief writes results.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_test_support.hpp"

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

// A small CNN on 8x8 synthetic images; `extra` is appended to the file.
fs::path write_experiment(const fs::path& folder, const std::string& name, const std::string& extra) {
  fs::create_directories(folder);
  const fs::path file = folder / (name + ".yaml");
  std::ofstream(file) << "name: " << name << R"(
model:
  layers:
    - conv2d: {filters: 8, kernel_size: 3, activation: relu, input_shape: [8, 8, 1]}
    - flatten
    - dense: {units: 10}
data: {source: synthetic, shape: [8, 8, 1], classes: 10, samples: 256, batch: 16}
training:
  optimizer: {sgd: {learning_rate: 0.05}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  metrics: [accuracy]
  epochs: 2
  steps_per_epoch: 4
  seed: 3
)" << extra;
  return file;
}

TEST(ExperimentStrategies, MirroredAndTpuStrategyRunsRecordTheirDistribution) {
  const fs::path out = scratch_dir("strategies");
  const fs::path folder = out.string() + "_files";
  const fs::path file = write_experiment(folder, "strategies", R"(
compare:
  - name: one_cpu
    device: /CPU:0
  - name: two_cpus
    devices: [{device: CPU, logical_devices: [{}, {}]}]
    strategy: {mirrored: {devices: [/CPU:0, /CPU:1], cross_device_ops: ring}}
  - name: v4_8
    strategy: {tpu: {tpu: sim://v4-8}}
)");
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  for (const char* name : {"one_cpu", "two_cpus", "v4_8"}) {
    EXPECT_EQ(run_named(document, name)["status"], "completed") << name << ": " << run_named(document, name)["reason"];
    EXPECT_EQ(run_named(document, name)["steps"].size(), 8u) << name;
  }
  EXPECT_TRUE(run_named(document, "one_cpu")["distribution"].is_null());
  const json& mirrored = run_named(document, "two_cpus")["distribution"];
  EXPECT_EQ(mirrored["strategy"], "MirroredStrategy");
  EXPECT_EQ(mirrored["replicas_in_sync"], 2);
  EXPECT_EQ(mirrored["replica_devices"], json::array({"/CPU:0", "/CPU:1"}));
  EXPECT_EQ(mirrored["cross_device_ops"], "HostRingAllReduce");
  // Same model, same global batches: the same training up to fp32 summation order.
  EXPECT_NEAR(run_named(document, "two_cpus")["steps"][7]["logs"]["loss"].get<double>(),
              run_named(document, "one_cpu")["steps"][7]["logs"]["loss"].get<double>(), 1e-4);
  // jit_compile (auto) reaches strategy runs: each replica's pass is compiled.
  EXPECT_EQ(run_named(document, "one_cpu")["compiled_step"]["per_replica"], false);
  for (const char* name : {"two_cpus", "v4_8"}) {
    const json& step = run_named(document, name)["compiled_step"];
    EXPECT_EQ(step["jit_compile"], true) << name;
    EXPECT_EQ(step["per_replica"], true) << name;
    EXPECT_EQ(step["eager_reason"], "") << name;
    EXPECT_EQ(step["traces"], 1) << name;
  }

  const json& tpu = run_named(document, "v4_8");
  EXPECT_EQ(tpu["distribution"]["strategy"], "TPUStrategy");
  EXPECT_EQ(tpu["distribution"]["replicas_in_sync"], 8);
  EXPECT_EQ(tpu["distribution"]["cross_device_ops"], "TpuCrossReplicaSum");
  EXPECT_GT(tpu["distribution"]["all_reduce_seconds_per_step"].get<double>(), 0);
  EXPECT_GT(tpu["distribution"]["all_reduce_bytes_per_step"].get<double>(), 0);
  EXPECT_EQ(tpu["headline"]["time_source"], "simulated");
  for (const json& step : tpu["steps"]) {
    ASSERT_TRUE(step.contains("all_reduce_seconds")) << step.dump();
    EXPECT_GT(step["simulated_seconds"].get<double>(), step["all_reduce_seconds"].get<double>());
  }
  EXPECT_EQ(json::parse(tpu["tpu_system"].dump())["chips"], 4);
  const std::string report = read_text(out / "report.md");
  EXPECT_NE(report.find("strategy: TPUStrategy, 8 replicas in sync"), std::string::npos) << report;
  EXPECT_NE(report.find("gradient all-reduce over the emulated interconnect (simulated)"), std::string::npos);
  EXPECT_NE(read_text(out / "report.html").find("id=\"all-reduce-per-step\""), std::string::npos);
}

TEST(ExperimentStrategies, CallbacksFromTheFileRun) {
  const fs::path out = scratch_dir("callbacks");
  const fs::path folder = out.string() + "_files";
  const fs::path file = write_experiment(folder, "callbacks", "  callbacks:\n    - csv_logger: {filename: " +
                                                                  (folder / "log.csv").string() +
                                                                  "}\n    - model_checkpoint: {filepath: '" +
                                                                  (folder / "checkpoints" / "{epoch}.safetensors").string() +
                                                                  "'}\n    - early_stopping: {monitor: loss, patience: 0, min_delta: 100}\n");
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string() +
                                                  " --set training.epochs=5");
  ASSERT_EQ(result.code, 0) << result.output;
  // min_delta 100: no epoch improves enough, so training stops after epoch 2 (patience 0).
  const json run = json::parse(read_text(out / "results.json"))["runs"][0];
  EXPECT_EQ(run["epochs"].size(), 2u) << read_text(out / "report.md");
  const std::string log = read_text(folder / "log.csv");
  EXPECT_EQ(log.rfind("epoch,accuracy,loss", 0), 0u) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 3) << log;  // header and 2 epochs
  EXPECT_TRUE(fs::exists(folder / "checkpoints" / "1.safetensors"));
  EXPECT_TRUE(fs::exists(folder / "checkpoints" / "2.safetensors"));
  EXPECT_FALSE(fs::exists(folder / "checkpoints" / "3.safetensors"));
}

TEST(ExperimentStrategies, MatmulBenchmarkTimesEveryBackendByItsClock) {
  const fs::path out = scratch_dir("matmul");
  const testing::CommandResult result =
      run_shell(kAccel + " run " + std::string(EXPERIMENT_SOURCE_DIR) + "/configs/matmul_benchmark.yaml --out " +
                out.string() + " --set 'benchmark.sizes=[64, [128, 96, 32]]' --set benchmark.repeats=3");
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  for (const auto& [name, clock] : {std::pair{"cpu", "measured wall"}, std::pair{"tpu_v4", "simulated"}}) {
    const json& run = run_named(document, name);
    ASSERT_EQ(run["status"], "completed") << run["reason"];
    ASSERT_EQ(run["benchmark"].size(), 2u);
    const json& square = run["benchmark"][0];
    EXPECT_EQ(square["size"], json::array({64}));
    EXPECT_DOUBLE_EQ(square["flops"].get<double>(), 2.0 * 64 * 64 * 64);
    EXPECT_EQ(square["time_source"], clock);
    EXPECT_GT(square["seconds"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(run["benchmark"][1]["flops"].get<double>(), 2.0 * 128 * 96 * 32);
    EXPECT_EQ(run["headline"]["time_source"], clock);
  }
  EXPECT_EQ(run_named(document, "tpu_v4")["benchmark"][0]["dtype"], "bfloat16");
  EXPECT_NE(read_text(out / "report.md").find("| matmul | 128x96x32 | float32 | measured wall |"), std::string::npos);
  EXPECT_NE(read_text(out / "report.html").find("id=\"op-benchmark\""), std::string::npos);
}

TEST(ExperimentStrategies, TwoWorkersUnderAccelLaunchTrainOneModelAndTheChiefWritesResults) {
  const fs::path out = scratch_dir("multi_worker");
  const fs::path folder = out.string() + "_files";
  const fs::path file = write_experiment(folder, "multi_worker", R"(
device: /CPU:0
strategy: {multi_worker_mirrored: {resolver: tf_config, timeout_seconds: 60}}
)");
  const testing::CommandResult result =
      run_shell(kAccel + " launch --workers 2 -- " + kAccel + " run " + file.string() + " --out " + out.string());
  ASSERT_EQ(result.code, 0) << result.output;
  EXPECT_NE(result.output.find("[worker 1] accel run: this process is a worker but not the chief"), std::string::npos)
      << result.output;
  const json run = json::parse(read_text(out / "results.json"))["runs"][0];
  ASSERT_EQ(run["status"], "completed") << run["reason"];
  EXPECT_EQ(run["distribution"]["strategy"], "MultiWorkerMirroredStrategy");
  EXPECT_EQ(run["distribution"]["workers"], 2);
  EXPECT_EQ(run["distribution"]["replicas_in_sync"], 2);
  EXPECT_EQ(run["distribution"]["cross_device_ops"], "CollectiveAllReduce");
  EXPECT_NE(read_text(out / "report.md").find("over 2 workers"), std::string::npos);
}

}  // namespace
}  // namespace accel::experiment
