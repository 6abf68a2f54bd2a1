// End to end: `accel run` on models written as model.graph (Functional):
//  - a residual graph trains on the CPU eagerly and compiled, under
//    MirroredStrategy over 2 logical CPUs and TPUStrategy on the emulated
//    v4-8 (the same training as one CPU), and on a TPU device; a chain
//    written as model.graph trains exactly as the same layers in model.layers;
//  - a Keras 3 .keras file as model.keras_file trains as its layers with
//    its .weights.h5 as model.initial_weights;
//  - graphs of several inputs and outputs train on synthetic data (also under
//    MirroredStrategy), on csv columns named per input and output, and with
//    an auxiliary head on Fashion-MNIST;
//  - the model zoo's files run: ResNet-18 on synthetic images, and the
//    Transformer encoder on Fashion-MNIST token sequences (data.tokens) with
//    training.evaluation_steps bounding the evaluation, and the decoder on a
//    real text beating the unigram entropy of its held-out bytes.
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
using testing::have_fashion_mnist;
using testing::read_text;
using testing::run_named;
using testing::run_shell;
using testing::scratch_dir;

const std::string kAccel = ACCEL_CLI_PATH;

// `accel run FILE --out OUT`, which must succeed; its results.json.
json run_experiment(const fs::path& file, const fs::path& out) {
  const testing::CommandResult result = run_shell(kAccel + " run " + file.string() + " --out " + out.string());
  EXPECT_EQ(result.code, 0) << result.output;
  return json::parse(read_text(out / "results.json"));
}

fs::path write_file(const fs::path& folder, const std::string& name, const std::string& text) {
  fs::create_directories(folder);
  const fs::path file = folder / (name + ".yaml");
  std::ofstream(file) << text;
  return file;
}

const std::string kTrainingSection = R"(training:
  optimizer: {sgd: {learning_rate: 0.05}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  metrics: [accuracy]
  epochs: 1
  steps_per_epoch: 4
  seed: 3
)";
const std::string kTraining =
    "data: {source: synthetic, shape: [8, 8, 1], classes: 10, samples: 256, batch: 16}\n" + kTrainingSection;

// Compare runs on the CPU: compiled (the default there), eager, and
// MirroredStrategy over two logical CPUs.
const std::string kCpuCompareRuns = R"(compare:
  - name: one_cpu
    device: /CPU:0
  - name: one_cpu_eager
    device: /CPU:0
    training: {jit_compile: false}
  - name: two_cpus
    devices: [{device: CPU, logical_devices: [{}, {}]}]
    strategy: {mirrored: {devices: [/CPU:0, /CPU:1], cross_device_ops: ring}}
)";

TEST(ModelGraphRuns, AResidualGraphTrainsOnEveryBackendAndStrategy) {
  const fs::path out = scratch_dir("graph_strategies");
  const fs::path file = write_file(out.string() + "_files", "graph_strategies", std::string(R"(name: graph_strategies
model:
  name: residual
  graph:
    inputs: {image: {shape: [8, 8, 1]}}
    layers:
      - conv2d: {name: stem, filters: 8, kernel_size: 3, padding: same, activation: relu, inputs: image}
      - conv2d: {name: branch, filters: 8, kernel_size: 3, padding: same, inputs: stem}
      - add: {name: residual, inputs: [stem, branch]}
      - global_average_pooling2d: {name: pool, inputs: residual}
      - dense: {name: logits, units: 10, inputs: pool}
    outputs: logits
)") + kTraining + kCpuCompareRuns + R"(  - name: v4_8
    strategy: {tpu: {tpu: sim://v4-8}}
  - name: tpu_device
    device: /TPU:0
)");
  const json document = run_experiment(file, out);
  for (const char* name : {"one_cpu", "one_cpu_eager", "two_cpus", "v4_8", "tpu_device"}) {
    const json& run = run_named(document, name);
    EXPECT_EQ(run["status"], "completed") << name << ": " << run["reason"];
    EXPECT_EQ(run["steps"].size(), 4u) << name;
  }
  const double loss = run_named(document, "one_cpu")["steps"][3]["logs"]["loss"].get<double>();
  // Compiled and eager agree to rounding; N replicas on a global batch train as one.
  EXPECT_NEAR(run_named(document, "one_cpu_eager")["steps"][3]["logs"]["loss"].get<double>(), loss, 1e-4);
  EXPECT_NEAR(run_named(document, "two_cpus")["steps"][3]["logs"]["loss"].get<double>(), loss, 1e-4);
  EXPECT_EQ(run_named(document, "one_cpu")["compiled_step"]["jit_compile"], true);
  EXPECT_EQ(run_named(document, "one_cpu")["compiled_step"]["eager_reason"], "");
  EXPECT_EQ(run_named(document, "one_cpu_eager")["compiled_step"]["jit_compile"], false);
  EXPECT_EQ(run_named(document, "two_cpus")["distribution"]["replicas_in_sync"], 2);
  EXPECT_EQ(run_named(document, "v4_8")["distribution"]["strategy"], "TPUStrategy");
  EXPECT_EQ(run_named(document, "tpu_device")["headline"]["time_source"], "simulated");
}

TEST(ModelGraphRuns, AChainGraphTrainsAsTheSameSequentialLayers) {
  const fs::path out = scratch_dir("graph_vs_sequential");
  const fs::path file = write_file(out.string() + "_files", "graph_vs_sequential", std::string(R"(name: graph_vs_sequential
model:
  layers:
    - conv2d: {name: conv, filters: 4, kernel_size: 3, activation: relu, input_shape: [8, 8, 1]}
    - flatten: {name: flat}
    - dense: {name: logits, units: 10}
)") + kTraining + R"(
compare:
  - name: sequential
  - name: functional
    model:
      graph:
        inputs: {image: {shape: [8, 8, 1]}}
        layers:
          - conv2d: {name: conv, filters: 4, kernel_size: 3, activation: relu, inputs: image}
          - flatten: {name: flat, inputs: conv}
          - dense: {name: logits, units: 10, inputs: flat}
        outputs: logits
)");
  const json document = run_experiment(file, out);
  const json& sequential = run_named(document, "sequential");
  const json& functional = run_named(document, "functional");
  ASSERT_EQ(functional["status"], "completed") << functional["reason"];
  ASSERT_EQ(sequential["steps"].size(), functional["steps"].size());
  for (size_t step = 0; step < sequential["steps"].size(); ++step) {
    EXPECT_DOUBLE_EQ(functional["steps"][step]["logs"]["loss"].get<double>(),
                     sequential["steps"][step]["logs"]["loss"].get<double>())
        << "step " << step;
  }
}

TEST(ModelGraphRuns, TheZoosResNet18RunsOnSyntheticImages) {
  const fs::path out = scratch_dir("resnet18");
  const testing::CommandResult result =
      run_shell(kAccel + " run " + std::string(EXPERIMENT_SOURCE_DIR) + "/configs/models/resnet18.yaml --out " +
                out.string() + " --set training.steps_per_epoch=1");
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  const json& run = document["runs"][0];
  EXPECT_EQ(run["status"], "completed") << run["reason"];
  EXPECT_EQ(run["steps"].size(), 1u);
}

TEST(ModelGraphRuns, TheZoosTransformerTrainsOnFashionMnistTokens) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is not installed (tools/setup.sh installs it)";
  const fs::path out = scratch_dir("transformer");
  const testing::CommandResult result = run_shell(
      kAccel + " run " + std::string(EXPERIMENT_SOURCE_DIR) + "/configs/models/transformer_encoder_classifier.yaml --out " +
      out.string() + " --set training.steps_per_epoch=3 --set training.evaluation_steps=2 --profile-steps 1");
  ASSERT_EQ(result.code, 0) << result.output;
  const json document = json::parse(read_text(out / "results.json"));
  const json& run = document["runs"][0];
  EXPECT_EQ(run["status"], "completed") << run["reason"];
  EXPECT_EQ(run["steps"].size(), 3u);
  EXPECT_EQ(run["evaluation_examples"], 2 * 64);
  EXPECT_TRUE(run["evaluation"].contains("accuracy")) << run.dump();
  EXPECT_NE(run["notes"].dump().find("fashion_mnist_blocks"), std::string::npos) << run["notes"].dump();
}

// The docs' recipe for the decoder (docs/model-zoo.md): configs/models/decoder_lm.yaml
// as shipped learns the GPL-3 text byte by byte, and its loss on the held-out
// tail falls below the unigram entropy of those bytes: it predicts from
// context, not from byte frequencies alone.
TEST(ModelGraphRuns, TheZoosDecoderBeatsTheUnigramEntropyOnHeldOutText) {
  if (!fs::exists("/usr/share/common-licenses/GPL-3")) GTEST_SKIP() << "Debian's base-files text GPL-3 is missing";
  const fs::path out = scratch_dir("decoder_lm");
  const json document =
      run_experiment(fs::path(EXPERIMENT_SOURCE_DIR) / "configs/models/decoder_lm.yaml", out);
  const json& run = document["runs"][0];
  ASSERT_EQ(run["status"], "completed") << run["reason"];
  ASSERT_TRUE(run["held_out_unigram_entropy"].is_number()) << run.dump();
  const double entropy = run["held_out_unigram_entropy"].get<double>();
  EXPECT_GT(entropy, 2.5) << "English text's bytes carry 3 to 3.5 nats each";
  EXPECT_LT(entropy, std::log(256.0));
  const double first_loss = run["steps"][0]["logs"]["loss"].get<double>();
  EXPECT_NEAR(first_loss, std::log(256.0), 0.5) << "a fresh model guesses about uniformly";
  EXPECT_LT(run["evaluation"]["loss"].get<double>(), entropy);
  EXPECT_EQ(run["evaluation_examples"], 54) << "the last tenth of the text in windows of 64 bytes";
  EXPECT_NE(read_text(out / "report.md").find("held-out unigram entropy"), std::string::npos);
}

// The same decoder with its logits tied to the embedding (a
// reversed_embedding in place of the logits' Dense): the table is one
// variable, and the model learns the text as well.
TEST(ModelGraphRuns, TheDecoderWithTiedLogitsLearnsTheTextToo) {
  if (!fs::exists("/usr/share/common-licenses/GPL-3")) GTEST_SKIP() << "Debian's base-files text GPL-3 is missing";
  std::string text = read_text(fs::path(EXPERIMENT_SOURCE_DIR) / "configs/models/decoder_lm.yaml");
  const std::string own = "- dense: {name: logits, units: 256, inputs: final_norm}";
  ASSERT_NE(text.find(own), std::string::npos);
  text.replace(text.find(own), own.size(), "- reversed_embedding: {name: logits, embedding: token_embedding, inputs: final_norm}");
  const fs::path out = scratch_dir("decoder_lm_tied");
  const json document = run_experiment(write_file(out, "tied.yaml", text), out);
  const json& run = document["runs"][0];
  ASSERT_EQ(run["status"], "completed") << run["reason"];
  const double first_loss = run["steps"][0]["logs"]["loss"].get<double>();
  EXPECT_NEAR(first_loss, std::log(256.0), 0.5);
  EXPECT_LT(run["evaluation"]["loss"].get<double>(), run["held_out_unigram_entropy"].get<double>());
}

// A graph of two inputs and two outputs (an image and a feature vector in,
// a class and an auxiliary class out) trains from YAML on synthetic data,
// eagerly, compiled and under MirroredStrategy on two logical CPUs (the
// same training: the global batch split across the replicas), each output
// with its own loss in the logs, as Keras names them.
TEST(ModelGraphRuns, AGraphOfTwoInputsAndTwoOutputsTrainsOnSyntheticData) {
  const fs::path out = scratch_dir("two_inputs_two_outputs");
  const fs::path file = write_file(out.string() + "_files", "two_inputs_two_outputs", R"(name: two_inputs_two_outputs
model:
  graph:
    inputs: {image: {shape: [8, 8, 1]}, meta: {shape: [4]}}
    layers:
      - flatten: {name: flat, inputs: image}
      - concatenate: {name: both, inputs: [flat, meta]}
      - dense: {name: hidden, units: 16, activation: relu, inputs: both}
      - dense: {name: head, units: 10, inputs: hidden}
      - dense: {name: aux, units: 10, inputs: meta}
    outputs: [head, aux]
data: {source: synthetic, classes: 10, samples: 256, batch: 16}
)" + kTrainingSection + kCpuCompareRuns);
  const json document = run_experiment(file, out);
  for (const char* name : {"one_cpu", "one_cpu_eager", "two_cpus"}) {
    const json& run = run_named(document, name);
    ASSERT_EQ(run["status"], "completed") << name << ": " << run["reason"];
    ASSERT_EQ(run["steps"].size(), 4u) << name;
    const json& logs = run["steps"][3]["logs"];
    ASSERT_TRUE(logs.contains("head_loss") && logs.contains("aux_loss")) << logs.dump();
    // The total is the sum of the outputs' losses, as Keras.
    EXPECT_NEAR(logs["loss"].get<double>(), logs["head_loss"].get<double>() + logs["aux_loss"].get<double>(), 1e-5);
  }
  EXPECT_NEAR(run_named(document, "one_cpu_eager")["steps"][3]["logs"]["loss"].get<double>(),
              run_named(document, "one_cpu")["steps"][3]["logs"]["loss"].get<double>(), 1e-4);
  EXPECT_NEAR(run_named(document, "two_cpus")["steps"][3]["logs"]["loss"].get<double>(),
              run_named(document, "one_cpu")["steps"][3]["logs"]["loss"].get<double>(), 1e-4);
  EXPECT_EQ(run_named(document, "two_cpus")["distribution"]["replicas_in_sync"], 2);
}

// csv: data.input_columns gives each input its columns and data.label_columns
// each output its labels; a model reading one column set differently learns
// something else, so the run's loss must move from the first step.
TEST(ModelGraphRuns, ACsvFeedsEachInputItsColumnsAndEachOutputItsLabels) {
  const fs::path out = scratch_dir("csv_columns");
  const fs::path folder = out.string() + "_files";
  fs::create_directories(folder);
  {
    std::ofstream csv(folder / "table.csv");
    csv << "a,b,c,kind,size\n";
    for (int row = 0; row < 64; ++row) {
      const double a = (row % 7) / 7.0, b = (row % 5) / 5.0, c = (row % 3) / 3.0;
      csv << a << "," << b << "," << c << "," << (a + b > 0.8 ? 1 : 0) << "," << (c > 0.5 ? 2 : row % 2) << "\n";
    }
  }
  const fs::path file = write_file(folder, "csv_columns", R"(name: csv_columns
model:
  graph:
    inputs: {pair: {shape: [2]}, single: {shape: [1]}}
    layers:
      - dense: {name: kind, units: 2, inputs: pair}
      - dense: {name: size, units: 3, inputs: single}
    outputs: [kind, size]
data:
  source: csv
  path: table.csv
  input_columns: {pair: [a, b], single: c}
  label_columns: {kind: kind, size: size}
  batch: 16
training:
  optimizer: {adam: {learning_rate: 0.05}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  epochs: 5
  seed: 1
)");
  const json document = run_experiment(file, out);
  const json& run = document["runs"][0];
  ASSERT_EQ(run["status"], "completed") << run["reason"];
  const json& steps = run["steps"];
  ASSERT_EQ(steps.size(), 20u);  // 64 rows / 16, 5 epochs
  EXPECT_LT(steps.back()["logs"]["kind_loss"].get<double>(), steps.front()["logs"]["kind_loss"].get<double>());
  EXPECT_LT(steps.back()["logs"]["size_loss"].get<double>(), steps.front()["logs"]["size_loss"].get<double>());
}

// A Sequential model on csv: every column but the last is the input, the
// last (no label_column written) the label, as the schema documents.
TEST(ModelGraphRuns, ACsvWithoutLabelColumnTrainsOnItsLastColumn) {
  const fs::path out = scratch_dir("csv_last_column");
  const fs::path folder = out.string() + "_files";
  fs::create_directories(folder);
  {
    std::ofstream csv(folder / "table.csv");
    csv << "x,y,label\n";
    for (int row = 0; row < 48; ++row) csv << (row % 4) / 4.0 << "," << (row % 3) / 3.0 << "," << row % 2 << "\n";
  }
  const fs::path file = write_file(folder, "csv_last_column", R"(name: csv_last_column
model:
  layers: [dense: {units: 2, input_shape: [2]}]
data: {source: csv, path: table.csv, batch: 16}
training:
  optimizer: adam
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  epochs: 2
)");
  const json document = run_experiment(file, out);
  const json& run = document["runs"][0];
  ASSERT_EQ(run["status"], "completed") << run["reason"];
  EXPECT_EQ(run["steps"].size(), 6u);
}

// Fashion-MNIST with an auxiliary head: both outputs learn the image's label.
TEST(ModelGraphRuns, AnAuxiliaryHeadTrainsOnTheImageLabels) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is not installed (tools/setup.sh installs it)";
  const fs::path out = scratch_dir("aux_head");
  const fs::path file = write_file(out.string() + "_files", "aux_head", R"(name: aux_head
model:
  graph:
    inputs: {image: {shape: [28, 28, 1]}}
    layers:
      - flatten: {name: flat, inputs: image}
      - dense: {name: hidden, units: 32, activation: relu, inputs: flat}
      - dense: {name: head, units: 10, inputs: hidden}
      - dense: {name: aux, units: 10, inputs: flat}
    outputs: [head, aux]
data: {source: fashion_mnist, batch: 64, take: 2048}
training:
  optimizer: adam
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  metrics: [accuracy]
  steps_per_epoch: 30
  evaluation_steps: 4
  seed: 2
)");
  const json document = run_experiment(file, out);
  const json& run = document["runs"][0];
  ASSERT_EQ(run["status"], "completed") << run["reason"];
  EXPECT_NE(run["notes"].dump().find("2 outputs: each trained on the examples' labels"), std::string::npos)
      << run["notes"].dump();
  const json& evaluation = run["evaluation"];
  ASSERT_TRUE(evaluation.contains("head_accuracy") && evaluation.contains("aux_accuracy")) << evaluation.dump();
  EXPECT_GT(evaluation["head_accuracy"].get<double>(), 0.5);
  EXPECT_GT(evaluation["aux_accuracy"].get<double>(), 0.5);
}

// model.keras_file trains the Keras 3 file's model; the same layers written
// out with the file's weights as model.initial_weights (.weights.h5) train
// identically from the same data.
TEST(KerasFileRuns, AKerasFileTrainsAsItsLayersWithItsWeightsFile) {
  const fs::path out = scratch_dir("keras_file");
  const std::string golden = std::string(EXPERIMENT_SOURCE_DIR) + "/tests/keras/golden/keras3/";
  const fs::path file = write_file(out.string() + "_files", "keras_file", R"(name: keras_file
model:
  keras_file: )" + golden + R"(mlp.keras
data: {source: synthetic, shape: [28, 28], classes: 10, samples: 64, batch: 16}
training:
  optimizer: {sgd: {learning_rate: 0.05}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  epochs: 1
  steps_per_epoch: 3
  seed: 3
compare:
  - name: keras_file
  - name: initial_weights
    model:
      layers: [flatten: {input_shape: [28, 28]}, dense: {units: 128, activation: relu}, dense: {units: 10}]
      initial_weights: )" + golden + R"(mlp.weights.h5
)");
  const json document = run_experiment(file, out);
  const json& from_file = run_named(document, "keras_file");
  const json& from_weights = run_named(document, "initial_weights");
  ASSERT_EQ(from_file["status"], "completed") << from_file["reason"];
  ASSERT_EQ(from_weights["status"], "completed") << from_weights["reason"];
  for (size_t step = 0; step < 3; ++step) {
    EXPECT_EQ(from_file["steps"][step]["logs"]["loss"].get<double>(),
              from_weights["steps"][step]["logs"]["loss"].get<double>())
        << "step " << step;
  }
}

// A .keras CNN takes images of (28, 28, 1) while the data gives (28, 28):
// the data is shaped to the file's input (its element count fits) in the run
// process itself, as for model.layers, for Sequential and Functional files
// and for a file TensorFlow saved under mixed_bfloat16 (whose policies it
// keeps).
TEST(KerasFileRuns, ImagesAreShapedToTheFilesInput) {
  const fs::path out = scratch_dir("keras_file_shaped");
  const std::string golden = std::string(EXPERIMENT_SOURCE_DIR) + "/tests/keras/golden/";
  const fs::path file = write_file(out.string() + "_files", "keras_file_shaped", R"(name: keras_file_shaped
model:
  keras_file: )" + golden + R"(keras3/cnn.keras
data: {source: synthetic, shape: [28, 28], classes: 10, samples: 64, batch: 16}
training:
  optimizer: {sgd: {learning_rate: 0.05}}
  loss: {sparse_categorical_crossentropy: {from_logits: true}}
  epochs: 1
  steps_per_epoch: 2
compare:
  - name: sequential
  - name: functional
    model: {keras_file: )" + golden + R"(keras3/functional.keras}
  - name: mixed
    model: {keras_file: )" + golden + R"(mixed_precision/residual_mixed_bfloat16.keras}
)");
  const json document = run_experiment(file, out);
  for (const char* name : {"sequential", "functional", "mixed"}) {
    const json& run = run_named(document, name);
    EXPECT_EQ(run["status"], "completed") << name << ": " << run["reason"];
  }
}

}  // namespace
}  // namespace accel::experiment
