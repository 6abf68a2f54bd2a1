// What a user relies on when writing experiment files: the shipped configs
// validate, compare runs merge over the base, sweeps expand, --set overrides
// apply (and errors name them), shapes are inferred the Keras way, absent
// backends are skipped with a reason, and the reference page is current.
#include "test_support.hpp"

#include <accel/experiment/schema.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace accel::experiment {
namespace {

using testing::error_of;
using testing::offline_options;
using testing::source_path;

std::vector<std::string> run_names(const Experiment& experiment) {
  std::vector<std::string> names;
  for (const auto& run : experiment.runs) names.push_back(run.name);
  return names;
}

const RunConfig& run_named(const Experiment& experiment, const std::string& name) {
  for (const auto& run : experiment.runs) {
    if (run.name == name) return run;
  }
  throw std::runtime_error("no run " + name);
}

const char* kMinimal = R"(name: minimal
model:
  layers:
    - flatten: {input_shape: [28, 28]}
    - dense: {units: 10}
data: {source: fashion_mnist}
training: {optimizer: adam, loss: sparse_categorical_crossentropy}
)";

TEST(ShippedConfigs, EveryOneValidates) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("configs"))) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW((void)load_experiment(entry.path().string(), offline_options()));
    ++count;
  }
  EXPECT_GE(count, 7);
}

TEST(CompareRuns, QuickstartRunsOnCpuTpuAndSkipsTheAbsentGpu) {
  const Experiment experiment = load_experiment(source_path("configs/quickstart.yaml"), offline_options());
  EXPECT_EQ(run_names(experiment), (std::vector<std::string>{"cpu", "tpu_v4", "tpu_v4_eager", "gpu"}));
  EXPECT_FALSE(run_named(experiment, "cpu").skipped_reason);
  EXPECT_FALSE(run_named(experiment, "tpu_v4").skipped_reason);
  ASSERT_TRUE(run_named(experiment, "gpu").skipped_reason);
  EXPECT_NE(run_named(experiment, "gpu").skipped_reason->find("no GPU device"), std::string::npos);
  // The base (model, data, training) is in every run; tpu only where set.
  for (const auto& run : experiment.runs) {
    ASSERT_TRUE(run.model);
    EXPECT_EQ(run.model->layers.size(), 7u);
    EXPECT_FALSE(run.training->steps_per_epoch);  // the full epoch
  }
  EXPECT_FALSE(run_named(experiment, "cpu").tpu);
  ASSERT_TRUE(run_named(experiment, "tpu_v4").tpu);
  EXPECT_TRUE(run_named(experiment, "tpu_v4").tpu->preset_path.ends_with("configs/tpu/tpu_v4.yaml"));
  // The same TPU compiled (auto) and eager, for the report's HBM comparison;
  // the compare entry's training: {jit_compile: false} keeps the base's other training keys.
  EXPECT_EQ(run_named(experiment, "tpu_v4").training->jit_compile, JitCompile::kAuto);
  EXPECT_EQ(run_named(experiment, "tpu_v4_eager").training->jit_compile, JitCompile::kOff);
  EXPECT_EQ(run_named(experiment, "tpu_v4_eager").training->optimizer.name, "adam");
  EXPECT_EQ(run_named(experiment, "tpu_v4_eager").device, run_named(experiment, "tpu_v4").device);
}

TEST(Training, JitCompileIsTrueFalseOrAutoAndAutoByDefault) {
  EXPECT_EQ(load_experiment_text(kMinimal, "inline.yaml", offline_options()).runs[0].training->jit_compile,
            JitCompile::kAuto);
  const std::pair<const char*, JitCompile> cases[] = {
      {"true", JitCompile::kOn}, {"false", JitCompile::kOff}, {"auto", JitCompile::kAuto}};
  for (const auto& [text, expected] : cases) {
    LoadOptions options = offline_options();
    options.overrides = {std::string("training.jit_compile=") + text};
    EXPECT_EQ(load_experiment_text(kMinimal, "inline.yaml", options).runs[0].training->jit_compile, expected) << text;
  }
}

TEST(Training, JitCompileRejectsOtherValuesAtTheirPlace) {
  const std::string yaml = R"(name: jit
model:
  layers:
    - flatten: {input_shape: [28, 28]}
    - dense: {units: 10}
data: {source: fashion_mnist}
training:
  optimizer: adam
  loss: sparse_categorical_crossentropy
  jit_compile: xla
)";
  const ExperimentError error = error_of(yaml);
  EXPECT_EQ(error.where().file, "inline.yaml");
  EXPECT_EQ(error.where().line, 10);
  EXPECT_EQ(error.where().column, 16);
  EXPECT_NE(std::string(error.what()).find("inline.yaml:10:16: 'training.jit_compile' is 'xla'"), std::string::npos)
      << error.what();
  EXPECT_EQ(error.expected(), "one of 'true', 'false' or 'auto'");
  // In a compare entry, and through --set.
  const ExperimentError in_compare =
      error_of(std::string(kMinimal) + "compare:\n  - name: eager\n    training: {jit_compile: 0}\n");
  EXPECT_EQ(in_compare.where().line, 10);
  EXPECT_EQ(in_compare.where().column, 29);
  LoadOptions options = offline_options();
  options.overrides = {"training.jit_compile=eager"};
  const ExperimentError in_override = error_of(kMinimal, options);
  EXPECT_EQ(in_override.where().file, "override 'training.jit_compile=eager'");
  EXPECT_EQ(in_override.where().column, 22);
}

TEST(CompareRuns, MergeMappingsKeyByKeyAndSameKerasObjectArguments) {
  const std::string yaml = std::string(kMinimal) + R"(
compare:
  - name: small_batch
    data: {batch: 8}
  - name: fast
    training: {optimizer: {adam: {learning_rate: 0.01}}}
  - name: sgd
    training: {optimizer: sgd}
)";
  const Experiment experiment = load_experiment_text(yaml, "inline.yaml", offline_options());
  const auto& small = run_named(experiment, "small_batch");
  EXPECT_EQ(small.data->source, "fashion_mnist");  // kept from the base
  EXPECT_EQ(small.data->options.at("batch").as_int(), 8);
  EXPECT_EQ(run_named(experiment, "fast").training->optimizer.argument("learning_rate")->as_number(), 0.01);
  EXPECT_EQ(run_named(experiment, "fast").training->loss.name, "sparse_categorical_crossentropy");
  EXPECT_EQ(run_named(experiment, "sgd").training->optimizer.name, "sgd");
}

TEST(Sweep, OneRunPerValueWithTheValueApplied) {
  const Experiment experiment = load_experiment(source_path("configs/sweep_array_sizes.yaml"), offline_options());
  EXPECT_EQ(run_names(experiment),
            (std::vector<std::string>{"array=32x32", "array=64x64", "array=128x128", "array=256x256"}));
  EXPECT_EQ(experiment.runs[1].tpu->array_rows, 64);
  EXPECT_EQ(experiment.runs[1].tpu->array_columns, 64);
  ASSERT_EQ(experiment.runs[1].tpu->hardware_overrides.size(), 1u);
  EXPECT_EQ(experiment.runs[1].tpu->hardware_overrides[0], (std::pair<std::string, std::string>{"core.mxus", "1"}));
  EXPECT_EQ(experiment.runs[1].sweep_point->second, "64x64");
}

// Fields the timing library defaults when a preset leaves them out may be
// set as what-ifs; other keys the preset lacks stay errors.
TEST(TpuHardware, OptionalFieldsThePresetOmitsCanBeSet) {
  LoadOptions options = offline_options();
  options.overrides = {"tpu.hardware={interconnect.link_latency_s: 1e-6}"};
  const Experiment experiment = load_experiment(source_path("configs/tpu_strategy.yaml"), options);
  ASSERT_EQ(experiment.runs[0].tpu->hardware_overrides.size(), 1u);
  EXPECT_EQ(experiment.runs[0].tpu->hardware_overrides[0].first, "interconnect.link_latency_s");
  options.overrides = {"tpu.hardware={interconnect.link_latency: 1e-6}"};
  EXPECT_THROW(load_experiment(source_path("configs/tpu_strategy.yaml"), options), ExperimentError);
}

// A tpu strategy's sim:// slice names its preset; another written beside it is an error.
TEST(Strategies, TpuSlicePresetMustMatchTpuPreset) {
  LoadOptions options = offline_options();
  options.overrides = {"tpu.preset=tpu_v5e"};
  try {
    load_experiment(source_path("configs/tpu_strategy.yaml"), options);
    ADD_FAILURE() << "expected an error";
  } catch (const ExperimentError& error) {
    EXPECT_NE(std::string(error.what()).find("contradicts the tpu strategy's slice 'sim://v4-8'"), std::string::npos)
        << error.what();
  }
}

TEST(Strategies, MultiWorkerResolverArgumentsAreKept) {
  LoadOptions options = offline_options();
  options.overrides = {"strategy.multi_worker_mirrored.resolver={simple: {workers: [a:1, b:2], task_id: 1}}"};
  const Experiment experiment = load_experiment(source_path("configs/multi_worker.yaml"), options);
  ASSERT_TRUE(experiment.runs[0].cluster_resolver);
  EXPECT_EQ(experiment.runs[0].cluster_resolver->name, "simple");
  EXPECT_EQ(experiment.runs[0].cluster_resolver->argument("workers")->as_texts(), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(experiment.runs[0].cluster_resolver->argument("task_id")->as_int(), 1);
}

TEST(Sweep, OnlyTheNamedCompareRuns) {
  const std::string yaml = std::string(kMinimal) + R"(
compare:
  - {name: cpu, device: /CPU:0}
  - {name: tpu, device: /TPU:0}
sweep: {parameter: data.batch, values: [16, 32], runs: [tpu]}
)";
  const Experiment experiment = load_experiment_text(yaml, "inline.yaml", offline_options());
  EXPECT_EQ(run_names(experiment), (std::vector<std::string>{"cpu", "tpu[batch=16]", "tpu[batch=32]"}));
  EXPECT_EQ(run_named(experiment, "tpu[batch=32]").data->options.at("batch").as_int(), 32);
}

TEST(Overrides, SetAppliesBeforeValidation) {
  LoadOptions options = offline_options();
  options.overrides = {"training.epochs=3", "compare.gpu.device=/CPU:0", "tpu.array=64x64"};
  const Experiment experiment = load_experiment(source_path("configs/quickstart.yaml"), options);
  EXPECT_EQ(experiment.runs[0].training->epochs, 3);
  EXPECT_FALSE(run_named(experiment, "gpu").skipped_reason);
  EXPECT_EQ(run_named(experiment, "tpu_v4").tpu->array_rows, 64);
}

TEST(Overrides, ErrorsNameTheOverrideAndColumn) {
  LoadOptions options = offline_options();
  options.overrides = {"training.epochs=-1"};
  const ExperimentError error = error_of(kMinimal, options);
  EXPECT_EQ(error.where().file, "override 'training.epochs=-1'");
  EXPECT_EQ(error.where().line, 1);
  EXPECT_EQ(error.where().column, 17);  // where "-1" starts in the override text
  EXPECT_NE(std::string(error.what()).find("'training.epochs' is -1"), std::string::npos) << error.what();

  options.overrides = {"model.layers.1.dense.units=12"};
  EXPECT_NE(std::string(error_of(kMinimal, options).what()).find("override 'model.layers.1.dense.units=12':1:28: "),
            std::string::npos);
  options.overrides = {"no_equals_sign"};
  EXPECT_NE(std::string(error_of(kMinimal, options).what()).find("malformed override"), std::string::npos);
  options.overrides = {"model.layers.9.dense.units=1"};
  EXPECT_NE(std::string(error_of(kMinimal, options).what()).find("no entry 9"), std::string::npos);
  options.overrides = {"data.batch=[1, 2"};
  EXPECT_NE(std::string(error_of(kMinimal, options).what()).find("YAML syntax error"), std::string::npos);
}

TEST(LayerShapes, FollowKeras) {
  const Experiment experiment = load_experiment(source_path("configs/quickstart.yaml"), offline_options());
  const auto& shapes = experiment.runs[0].model->layer_output_shapes;
  ASSERT_EQ(shapes.size(), 7u);
  EXPECT_EQ(shapes[0], (std::vector<std::int64_t>{-1, 26, 26, 32}));
  EXPECT_EQ(shapes[1], (std::vector<std::int64_t>{-1, 13, 13, 32}));
  EXPECT_EQ(shapes[3], (std::vector<std::int64_t>{-1, 5, 5, 64}));
  EXPECT_EQ(shapes[4], (std::vector<std::int64_t>{-1, 1600}));
  EXPECT_EQ(shapes[6], (std::vector<std::int64_t>{-1, 10}));
}

TEST(LayerShapes, DenseAppliesToTheLastAxisOfAnyRank) {
  // Keras Dense on a 4-D input maps the last axis; a flatten follows.
  const std::string yaml = R"(name: dense4d
model:
  layers:
    - conv2d: {filters: 4, kernel_size: 3, padding: same, strides: 2, input_shape: [28, 28, 1]}
    - dense: {units: 6}
    - flatten
    - dense: {units: 10}
data: {source: fashion_mnist}
training: {optimizer: adam, loss: sparse_categorical_crossentropy}
)";
  const Experiment experiment = load_experiment_text(yaml, "inline.yaml", offline_options());
  EXPECT_EQ(experiment.runs[0].model->layer_output_shapes[1], (std::vector<std::int64_t>{-1, 14, 14, 6}));
  EXPECT_EQ(experiment.runs[0].model->layer_output_shapes[2], (std::vector<std::int64_t>{-1, 1176}));
}

TEST(Devices, UnknownTypeIsAnErrorAbsentTypeIsASkip) {
  EXPECT_NE(std::string(error_of(std::string(kMinimal) + "device: /QPU:0\n").what()).find("unknown device type 'QPU'"),
            std::string::npos);
  const Experiment experiment =
      load_experiment_text(std::string(kMinimal) + "device: /GPU:0\n", "inline.yaml", offline_options());
  ASSERT_TRUE(experiment.runs[0].skipped_reason);
  // A plugin's own device type is known once the plugin provides it.
  LoadOptions options = offline_options();
  options.device_catalog = [] { return fixed_device_catalog({{"CPU", 1}, {"QPU", 2}}); };
  EXPECT_NO_THROW((void)load_experiment_text(std::string(kMinimal) + "device: /QPU:1\n", "inline.yaml", options));
}

// --- Validate means runnable: what would fail when the run starts is an error now.

TEST(Devices, AnIndexPastTheMachinesDevicesIsAnErrorAtItsPlace) {
  const ExperimentError error = error_of(std::string(kMinimal) + "device: /CPU:5\n");
  EXPECT_EQ(error.where().line, 8);
  EXPECT_EQ(error.where().column, 9);
  EXPECT_NE(std::string(error.what()).find("no device CPU:5 here: this machine has 1 CPU device"), std::string::npos)
      << error.what();
  EXPECT_NE(error.expected().find("from 0 to 0"), std::string::npos);
  // In the strategies' device lists too.
  EXPECT_NE(std::string(error_of(std::string(kMinimal) + "strategy: {mirrored: {devices: [/CPU:0, /CPU:1]}}\n").what())
                .find("no device CPU:1 here"),
            std::string::npos);
  EXPECT_NE(std::string(error_of(std::string(kMinimal) + "strategy: {one_device: {device: /TPU:8}}\n").what())
                .find("this machine has 8 TPU devices"),
            std::string::npos);
}

TEST(Devices, LogicalSplitsAddDevicesOfTheirType) {
  const std::string two_cpus = std::string(kMinimal) +
                               "devices: [{device: CPU, logical_devices: [{}, {}]}]\n"
                               "strategy: {mirrored: {devices: [/CPU:0, /CPU:1]}}\n";
  EXPECT_NO_THROW((void)load_experiment_text(two_cpus, "inline.yaml", offline_options()));
  const std::string three = std::string(kMinimal) +
                            "devices: [{device: CPU, logical_devices: [{}, {}]}]\n"
                            "strategy: {mirrored: {devices: [/CPU:0, /CPU:2]}}\n";
  EXPECT_NE(std::string(error_of(three).what()).find("has 2 CPU devices (with the run's logical splits)"),
            std::string::npos);
}

TEST(Devices, AnotherJobOrTaskWithoutAClusterIsAnError) {
  EXPECT_NE(std::string(error_of(std::string(kMinimal) + "device: /job:worker/task:3/device:CPU:0\n").what())
                .find("names job 'worker', but this run has no cluster"),
            std::string::npos);
  EXPECT_NE(std::string(error_of(std::string(kMinimal) + "device: /job:localhost/replica:0/task:1/device:CPU:0\n").what())
                .find("names task 1"),
            std::string::npos);
  EXPECT_NO_THROW((void)load_experiment_text(std::string(kMinimal) + "device: /job:localhost/replica:0/task:0/device:CPU:0\n",
                                             "inline.yaml", offline_options()));
}

TEST(Strategies, ASimpleResolversAddressesAndTaskMustBeUsable) {
  const std::string base = std::string(kMinimal) + "device: /CPU:0\nstrategy:\n  multi_worker_mirrored:\n    resolver: ";
  const ExperimentError no_port = error_of(base + "{simple: {workers: ['host1:2222', host2], task_id: 0}}\n");
  EXPECT_NE(std::string(no_port.what()).find("worker address 'host2' is not a \"host:port\""), std::string::npos)
      << no_port.what();
  EXPECT_EQ(no_port.where().line, 11);
  EXPECT_NE(std::string(error_of(base + "{simple: {workers: ['::1:2222'], task_id: 0}}\n").what()).find("needs brackets"),
            std::string::npos);
  EXPECT_NE(std::string(error_of(base + "{simple: {workers: ['h:99999'], task_id: 0}}\n").what()).find("1..65535"),
            std::string::npos);
  const ExperimentError past = error_of(base + "{simple: {workers: ['h1:2222', 'h2:2222'], task_id: 2}}\n");
  EXPECT_NE(std::string(past.what()).find("task_id 2 is past the 2 workers listed"), std::string::npos) << past.what();
  EXPECT_NO_THROW((void)load_experiment_text(base + "{simple: {workers: ['h1:2222', '[::1]:2223'], task_id: 1}}\n",
                                             "inline.yaml", offline_options()));
}

TEST(Strategies, ATpuStrategysTpuMustBeOneTheResolverKnows) {
  const std::string base = std::string(kMinimal) + "strategy: {tpu: {tpu: ";
  for (const auto& [name, message] : std::vector<std::pair<std::string, std::string>>{
           {"sim://v9-8", "unknown generation 'v9'"},
           {"sim://v4-0", "is not a TensorCore count of v4"},
           {"sim://foo", "should read v<generation>-<TensorCores>"},
           {"grpc://10.0.0.1:8470", "'grpc://10.0.0.1:8470' is not a TPU name"},
           {"missing_preset.yaml", "TPU preset file"}}) {
    const ExperimentError error = error_of(base + name + "}}\n");
    EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << name << ": " << error.what();
    EXPECT_EQ(error.where().line, 8) << name;
  }
  EXPECT_NO_THROW((void)load_experiment_text(base + "sim://v4-8}}\n", "inline.yaml", offline_options()));
  EXPECT_NO_THROW((void)load_experiment_text(base + "local}}\n", "inline.yaml", offline_options()));
  // A preset file is read under the rules of every YAML file: a key given twice is an error.
  const std::filesystem::path preset =
      std::filesystem::temp_directory_path() / ("accel_twice_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(preset) << "name: twice\nchips: 4\nchips: 8\n";
  const ExperimentError twice = error_of(base + preset.string() + "}}\n");
  std::filesystem::remove(preset);
  EXPECT_NE(std::string(twice.what()).find("cannot be read"), std::string::npos) << twice.what();
  EXPECT_NE(std::string(twice.what()).find("chips"), std::string::npos) << twice.what();
  // A relative preset path starts at the experiment file's folder, for validation and the run alike.
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("accel_relative_preset_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "slice.yaml") << "name: slice\nchips: 2\n";
  std::ofstream(folder / "run.yaml") << base + "slice.yaml}}\n";
  const Experiment relative = load_experiment((folder / "run.yaml").string(), offline_options());
  EXPECT_EQ(relative.runs[0].strategy->argument("tpu")->as_text(), (folder / "slice.yaml").string());
  std::filesystem::remove_all(folder);
}

TEST(Names, ANameThatWouldLeaveTheResultsFolderIsRefused) {
  for (const std::string bad : {"../../escaped", "/etc/evil", "a/b", "..", "."}) {
    std::string yaml = kMinimal;
    yaml.replace(yaml.find("name: minimal"), 13, "name: '" + bad + "'");
    const ExperimentError error = error_of(yaml);
    EXPECT_EQ(error.where().line, 1) << bad;
    EXPECT_NE(error.expected().find("usable as a file name"), std::string::npos) << bad << ": " << error.what();
  }
  // A run's name too.
  const ExperimentError run_name = error_of(std::string(kMinimal) + "compare: [{name: ../up, device: /CPU:0}]\n");
  EXPECT_NE(std::string(run_name.what()).find("'compare[0].name' is '../up'"), std::string::npos) << run_name.what();
  std::string long_name = kMinimal;
  long_name.replace(long_name.find("name: minimal"), 13, "name: " + std::string(200, 'x'));
  EXPECT_NE(std::string(error_of(long_name).what()).find("200 bytes long"), std::string::npos);
  // Names with spaces, brackets and dots stay valid.
  std::string fine = kMinimal;
  fine.replace(fine.find("name: minimal"), 13, "name: 'CNN v2 [batch 64].run'");
  EXPECT_NO_THROW((void)load_experiment_text(fine, "inline.yaml", offline_options()));
}

TEST(Validation, WritesNothing) {
  const auto directory = std::filesystem::temp_directory_path() / "accel_experiment_validation_writes_nothing";
  std::filesystem::remove_all(directory);
  const Experiment experiment = load_experiment_text(
      std::string(kMinimal) + "output: {directory: " + directory.string() + "}\n", "inline.yaml", offline_options());
  EXPECT_EQ(experiment.runs[0].output_directory, directory.string());
  EXPECT_FALSE(std::filesystem::exists(directory));
}

TEST(Validation, DefaultsAreFilledFromTheSchema) {
  const Experiment experiment = load_experiment_text(kMinimal, "inline.yaml", offline_options());
  const RunConfig& run = experiment.runs[0];
  EXPECT_EQ(run.name, "default");
  EXPECT_EQ(run.data->options.at("batch").as_int(), 32);
  EXPECT_TRUE(run.data->options.at("batch").defaulted);
  EXPECT_EQ(run.data->options.at("prefetch").as_text(), "autotune");
  EXPECT_EQ(run.training->epochs, 1);
  EXPECT_EQ(run.training->optimizer.argument("learning_rate")->as_number(), 0.001);
  EXPECT_EQ(run.output_directory, "runs/minimal");
}

TEST(Reference, DocsYamlReferenceIsGeneratedFromTheSchema) {
  std::ifstream in(source_path("docs/yaml-reference.md"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), render_schema_reference())
      << "docs/yaml-reference.md is out of date: run `accel validate --print-schema > docs/yaml-reference.md`";
}

}  // namespace
}  // namespace accel::experiment
