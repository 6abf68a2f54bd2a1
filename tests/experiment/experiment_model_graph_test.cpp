// model.graph, the Functional form of an experiment's model: what loads
// (named inputs, layers naming their inputs, outputs; shapes inferred through
// the graph) and every mistake a person makes writing one, each reported at
// the file:line:column of the offending name: unknown names, names used
// before they are defined, cycles, duplicates, unused layers and inputs,
// lists where one tensor is taken and the reverse, shapes that do not meet.
#include "test_support.hpp"

#include <accel/experiment/schema.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace accel::experiment {
namespace {

using testing::error_of;
using testing::offline_options;

// The layers start on line 6 (column 9 is a layer's name).
std::string graph_yaml(const std::string& layers, const std::string& outputs,
                       const std::string& inputs = "{image: {shape: [28, 28, 1]}}",
                       const std::string& data = "{source: fashion_mnist}") {
  return "name: graph\n"
         "model:\n"
         "  graph:\n"
         "    inputs: " + inputs + "\n"
         "    layers:\n" + layers +
         "    outputs: " + outputs + "\n"
         "data: " + data + "\n"
         "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n";
}

// Where `token` is written on 1-based `line` of `yaml`.
SourceLocation location_of(const std::string& yaml, int line, const std::string& token) {
  std::istringstream in(yaml);
  std::string text;
  for (int i = 0; i < line; ++i) std::getline(in, text);
  const auto column = text.find(token);
  EXPECT_NE(column, std::string::npos) << "no '" << token << "' on line " << line << ": " << text;
  return {"inline.yaml", line, static_cast<int>(column) + 1};
}

// The error is at `line`, where `token` is written, and says `problem`.
void expect_error_at(const std::string& yaml, int line, const std::string& token, const std::string& problem) {
  const ExperimentError error = error_of(yaml);
  const SourceLocation expected = location_of(yaml, line, token);
  EXPECT_EQ(error.where().line, expected.line) << error.what();
  EXPECT_EQ(error.where().column, expected.column) << error.what();
  EXPECT_NE(std::string(error.what()).find(problem), std::string::npos) << error.what();
}

const std::string kHead = "      - dense: {name: head, units: 10, inputs: flat}\n";

TEST(ModelGraph, ABranchingGraphLoadsWithItsShapes) {
  const std::string yaml = graph_yaml(
      "      - conv2d: {name: c1, filters: 8, kernel_size: 3, padding: same, inputs: image}\n"
      "      - batch_normalization: {name: bn1, inputs: c1}\n"
      "      - activation: {name: r1, activation: relu, inputs: bn1}\n"
      "      - conv2d: {name: image_proj, filters: 8, kernel_size: 1, inputs: image}\n"
      "      - add: {name: sum, inputs: [image_proj, r1]}\n"
      "      - global_average_pooling2d: {name: pool, inputs: sum}\n"
      "      - dense: {name: head, units: 10, activation: softmax, inputs: pool}\n",
      "head");
  const Experiment experiment = load_experiment_text(yaml, "inline.yaml", offline_options());
  const ModelConfig& model = *experiment.runs.front().model;
  ASSERT_TRUE(model.graph);
  EXPECT_EQ(model.name, "model");  // Keras's default name of a Functional model
  ASSERT_EQ(model.graph->inputs.size(), 1u);
  EXPECT_EQ(model.graph->inputs[0].name, "image");
  EXPECT_EQ(model.graph->inputs[0].shape, (std::vector<std::int64_t>{28, 28, 1}));
  EXPECT_EQ(model.graph->inputs[0].dtype, "float32");
  ASSERT_EQ(model.layers.size(), 7u);
  EXPECT_TRUE(model.graph->calls[4].list_input);
  ASSERT_EQ(model.graph->calls[4].inputs.size(), 2u);
  EXPECT_EQ(model.graph->calls[4].inputs[0].name, "image_proj");
  EXPECT_EQ(model.graph->calls[4].inputs[1].where.line, 10);
  EXPECT_FALSE(model.graph->calls[5].list_input);
  ASSERT_EQ(model.graph->outputs.size(), 1u);
  EXPECT_EQ(model.graph->outputs[0].name, "head");
  const std::vector<std::vector<std::int64_t>> shapes{{-1, 28, 28, 8}, {-1, 28, 28, 8}, {-1, 28, 28, 8}, {-1, 28, 28, 8},
                                                      {-1, 28, 28, 8}, {-1, 8},         {-1, 10}};
  EXPECT_EQ(model.layer_output_shapes, shapes);
}

TEST(ModelGraph, AnAddOfShapesThatDoNotMeetIsReportedAtTheReference) {
  const std::string yaml = graph_yaml(
      "      - conv2d: {name: c1, filters: 32, kernel_size: 3, padding: same, inputs: image}\n"
      "      - conv2d: {name: c2, filters: 64, kernel_size: 3, strides: 2, padding: same, inputs: image}\n"
      "      - add: {name: sum, inputs: [c1, c2]}\n"
      "      - flatten: {name: flat, inputs: sum}\n" + kHead,
      "head");
  expect_error_at(yaml, 8, "c2]",
                  "model.graph.layers[2] (add 'sum'): add cannot combine [None, 28, 28, 32] and [None, 14, 14, 64]");
}

TEST(ModelGraph, AnUnknownNameIsReportedWithTheClosestKnownOne) {
  const std::string yaml = graph_yaml(
      "      - conv2d: {name: conv1, filters: 8, kernel_size: 3, inputs: image}\n"
      "      - flatten: {name: flat, inputs: conv}\n" + kHead,
      "head");
  expect_error_at(yaml, 7, "conv}", "unknown input or layer 'conv' (did you mean 'conv1'?)");
}

TEST(ModelGraph, ANameUsedBeforeItIsDefinedIsAnError) {
  const std::string yaml = graph_yaml(
      "      - flatten: {name: flat, inputs: c1}\n"
      "      - conv2d: {name: c1, filters: 8, kernel_size: 3, inputs: image}\n" + kHead,
      "head");
  expect_error_at(yaml, 6, "c1}", "model.graph.layers[0] (flatten 'flat') takes 'c1', which is listed after it (line 7)");
}

TEST(ModelGraph, CyclesAreNamedWithTheirPath) {
  const std::string two = graph_yaml(
      "      - dense: {name: a, units: 4, inputs: b}\n"
      "      - dense: {name: b, units: 4, inputs: a}\n"
      "      - flatten: {name: flat, inputs: b}\n" + kHead,
      "head", "{image: {shape: [4]}}");
  expect_error_at(two, 6, "b}", "is part of a cycle: a -> b -> a");
  const std::string self = graph_yaml("      - dense: {name: flat, units: 4, inputs: flat}\n" + kHead, "head",
                                      "{image: {shape: [4]}}");
  expect_error_at(self, 6, "flat}", "model.graph.layers[0] (dense 'flat') takes its own output (a cycle)");
}

TEST(ModelGraph, DuplicateNamesAreErrorsAtTheSecond) {
  const std::string layers = graph_yaml(
      "      - conv2d: {name: c1, filters: 8, kernel_size: 3, inputs: image}\n"
      "      - conv2d: {name: c1, filters: 8, kernel_size: 3, inputs: image}\n"
      "      - flatten: {name: flat, inputs: c1}\n" + kHead,
      "head");
  expect_error_at(layers, 7, "c1,", "layer 'c1' has the name of another layer (line 6)");
  const std::string input = graph_yaml(
      "      - flatten: {name: image, inputs: image}\n" + kHead, "head");
  expect_error_at(input, 6, "image,", "layer 'image' has the name of an input (line 4)");
}

TEST(ModelGraph, UnusedLayersAndInputsAreErrors) {
  const std::string layer = graph_yaml(
      "      - conv2d: {name: c1, filters: 8, kernel_size: 3, inputs: image}\n"
      "      - conv2d: {name: c2, filters: 8, kernel_size: 3, inputs: c1}\n"
      "      - flatten: {name: flat, inputs: c1}\n" + kHead,
      "head");
  expect_error_at(layer, 7, "c2", "model.graph.layers[1] (conv2d 'c2') is not used: no output depends on it");
  const std::string input = graph_yaml("      - flatten: {name: flat, inputs: image}\n" + kHead, "head",
                                       "{image: {shape: [28, 28, 1]}, meta: {shape: [4]}}");
  expect_error_at(input, 4, "meta", "model.graph input 'meta' is not used");
}

TEST(ModelGraph, OutputsMustNameLayers) {
  const std::string yaml = graph_yaml("      - flatten: {name: flat, inputs: image}\n" + kHead, "[head, haed]");
  expect_error_at(yaml, 8, "haed", "model.graph.outputs names 'haed', which is no input or layer (did you mean 'head'?)");
}

TEST(ModelGraph, MergeLayersTakeListsAndOneInputLayersOneName) {
  const std::string scalar = graph_yaml(
      "      - flatten: {name: f, inputs: image}\n"
      "      - add: {name: flat, inputs: f}\n" + kHead,
      "head");
  expect_error_at(scalar, 7, "f}", "model.graph.layers[1] (add 'flat') is called on one tensor, but add takes a list");
  const std::string list = graph_yaml(
      "      - flatten: {name: f, inputs: image}\n"
      "      - dense: {name: flat, units: 4, inputs: [f, image]}\n" + kHead,
      "head");
  expect_error_at(list, 7, "image]", "takes one input but is called on 2");
  const std::string subtract = graph_yaml(
      "      - flatten: {name: f, inputs: image}\n"
      "      - subtract: {name: flat, inputs: [f, f, f]}\n" + kHead,
      "head");
  expect_error_at(subtract, 7, "f]", "subtract takes 2 inputs but is called on 3");
  const std::string attention = graph_yaml(
      "      - reshape: {name: seq, target_shape: [28, 28], inputs: image}\n"
      "      - multi_head_attention: {name: mha, num_heads: 2, key_dim: 4, inputs: [seq]}\n"
      "      - flatten: {name: flat, inputs: mha}\n" + kHead,
      "head");
  expect_error_at(attention, 7, "seq]", "multi_head_attention takes 2 to 3 inputs ([query, value] or [query, value, key])");
}

TEST(ModelGraph, EveryLayerNeedsANameAndItsInputs) {
  const std::string unnamed = graph_yaml("      - flatten: {inputs: image}\n" + kHead, "head");
  expect_error_at(unnamed, 6, "flatten", "model.graph.layers[0] (flatten) has no name");
  const std::string bare = graph_yaml("      - flatten\n" + kHead, "head");
  expect_error_at(bare, 6, "flatten", "model.graph.layers[0] (flatten) has no name");
  const std::string unconnected = graph_yaml("      - flatten: {name: flat}\n" + kHead, "head");
  expect_error_at(unconnected, 6, "flatten", "model.graph.layers[0] (flatten 'flat') has no inputs");
  const std::string shaped =
      graph_yaml("      - flatten: {name: flat, input_shape: [784], inputs: image}\n" + kHead, "head");
  expect_error_at(shaped, 6, "[784]", "has input_shape, which model.graph declares in its inputs");
}

TEST(ModelGraph, ExactlyOneOfLayersAndGraph) {
  const std::string both =
      "name: both\n"
      "model:\n"
      "  layers: [flatten, {dense: {units: 10}}]\n"
      "  graph: {inputs: {x: {shape: [784]}}, layers: [dense: {name: d, units: 10, inputs: x}], outputs: d}\n"
      "data: {source: fashion_mnist}\n"
      "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n";
  expect_error_at(both, 4, "graph", "'model' has both 'layers' and 'graph'");
  const std::string neither =
      "name: neither\n"
      "model: {name: empty}\n"
      "data: {source: fashion_mnist}\n"
      "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n";
  expect_error_at(neither, 2, "{name", "'model' has none of 'layers', 'graph' or 'keras_file'");
}

TEST(ModelGraph, GraphOnlyArgumentsAndLayersAreErrorsInModelLayers) {
  const std::string inputs =
      "name: sequential\n"
      "model:\n"
      "  layers:\n"
      "    - flatten: {input_shape: [28, 28], inputs: image}\n"
      "    - dense: {units: 10}\n"
      "data: {source: fashion_mnist}\n"
      "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n";
  expect_error_at(inputs, 4, "image", "model.layers[0] (flatten) has inputs, which only model.graph layers have");
  const std::string merge =
      "name: sequential\n"
      "model:\n"
      "  layers:\n"
      "    - flatten: {input_shape: [28, 28]}\n"
      "    - add\n"
      "    - dense: {units: 10}\n"
      "data: {source: fashion_mnist}\n"
      "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n";
  expect_error_at(merge, 5, "add", "model.layers[1] (add) takes a list of inputs, which a Sequential model cannot give");
}

TEST(ModelGraph, TheInputMustFitTheDataInSizeAndType) {
  const std::string size = graph_yaml("      - flatten: {name: flat, inputs: image}\n" + kHead, "head",
                                      "{image: {shape: [32, 32, 3]}}");
  expect_error_at(size, 4, "[32, 32, 3]",
                  "input 'image' of shape [32, 32, 3] does not fit the data: fashion_mnist examples have shape [28, 28]");
  const std::string ids = graph_yaml(
      "      - embedding: {name: embed, input_dim: 16, output_dim: 8, inputs: image}\n"
      "      - flatten: {name: flat, inputs: embed}\n" + kHead,
      "head", "{image: {shape: [784], dtype: int32}}");
  expect_error_at(ids, 4, "int32", "input 'image' is int32 but the data gives float32 examples");
  const std::string tokens = graph_yaml(
      "      - embedding: {name: embed, input_dim: 16, output_dim: 8, inputs: tokens}\n"
      "      - flatten: {name: flat, inputs: embed}\n" + kHead,
      "head", "{tokens: {shape: [49], dtype: int32}}", "{source: fashion_mnist, tokens: fashion_mnist_blocks}");
  const Experiment experiment = load_experiment_text(tokens, "inline.yaml", offline_options());
  EXPECT_EQ(experiment.runs.front().data->example_shape, (std::vector<std::int64_t>{49}));
  EXPECT_EQ(experiment.runs.front().data->example_dtype, "int32");
  EXPECT_EQ(experiment.runs.front().model->layer_output_shapes[0], (std::vector<std::int64_t>{-1, 49, 8}));
}

TEST(ModelGraph, SeveralInputsAndOutputsValidate) {
  const std::string yaml = graph_yaml(
      "      - flatten: {name: f, inputs: image}\n"
      "      - concatenate: {name: both, inputs: [f, meta]}\n"
      "      - dense: {name: head, units: 10, inputs: both}\n"
      "      - dense: {name: aux, units: 10, inputs: meta}\n",
      "[head, aux]", "{image: {shape: [28, 28, 1]}, meta: {shape: [4]}}", "{source: synthetic}");
  const Experiment experiment = load_experiment_text(yaml, "inline.yaml", offline_options());
  const ModelConfig& model = *experiment.runs.front().model;
  EXPECT_EQ(model.graph->inputs.size(), 2u);
  EXPECT_EQ(model.graph->outputs.size(), 2u);
  EXPECT_EQ(model.layer_output_shapes[1], (std::vector<std::int64_t>{-1, 788}));
}

// What feeds several inputs and outputs is checked where it is written:
// an image source has one input, synthetic data takes the inputs' own shapes,
// csv needs every input's columns (as many as its shape holds) and names
// only the graph's inputs and outputs.
TEST(ModelGraph, DataForSeveralInputsAndOutputsIsCheckedWhereWritten) {
  const std::string two_inputs = "{image: {shape: [28, 28, 1]}, meta: {shape: [4]}}";
  const std::string layers =
      "      - flatten: {name: f, inputs: image}\n"
      "      - concatenate: {name: both, inputs: [f, meta]}\n"
      "      - dense: {name: head, units: 10, inputs: both}\n"
      "      - dense: {name: aux, units: 10, inputs: meta}\n";
  expect_error_at(graph_yaml(layers, "[head, aux]", two_inputs), 4, "meta",
                  "model.graph has 2 inputs (image, meta), but source 'fashion_mnist' gives one input tensor");
  const std::string with_shape = graph_yaml(layers, "[head, aux]", two_inputs, "{source: synthetic, shape: [4]}");
  expect_error_at(with_shape, 11, "[4]}", "'data.shape' does not apply to a model.graph of 2 inputs");
  const std::string one_input = graph_yaml("      - flatten: {name: flat, inputs: image}\n" + kHead, "head",
                                           "{image: {shape: [28, 28, 1]}}", "{source: synthetic}");
  expect_error_at(one_input, 9, "synthetic", "source 'synthetic' needs 'data.shape'");
  const std::string csv = "{source: csv, path: /etc/passwd";
  expect_error_at(graph_yaml(layers, "[head, aux]", two_inputs, csv + "}"), 11, "csv",
                  "source 'csv' needs data.input_columns to feed them");
  expect_error_at(graph_yaml(layers, "[head, aux]", two_inputs,
                             csv + ", input_columns: {image: [a], meta: [b, c, d, e], extra: [f]}}"),
                  11, "image: [a]", "input 'image' takes 1 columns, but its shape [28, 28, 1] holds 784 values");
  const std::string small = "{image: {shape: [1]}, meta: {shape: [4]}}";
  expect_error_at(graph_yaml(layers, "[head, aux]", small,
                             csv + ", input_columns: {image: [a], meta: [b, c, d, e], extra: [f]}}"),
                  11, "extra", "data.input_columns names 'extra', which is not an input of model.graph");
  expect_error_at(graph_yaml(layers, "[head, aux]", small, csv + ", input_columns: {image: a}}"), 11, "image: a",
                  "data.input_columns gives no columns to input 'meta'");
  expect_error_at(graph_yaml(layers, "[head, aux]", small,
                             csv + ", input_columns: {image: a, meta: [b, c, d, e]}, label_columns: {heads: y}}"),
                  11, "heads", "data.label_columns names 'heads', which is not an output of model.graph");
  // The same csv keys on a Sequential model have no names to refer to.
  const std::string sequential =
      "name: s\nmodel:\n  layers: [dense: {units: 10, input_shape: [4]}]\n"
      "data: {source: csv, path: /etc/passwd, label_columns: {out: y}}\n"
      "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n";
  expect_error_at(sequential, 4, "out: y", "data.label_columns names the outputs of a model.graph");
  // Fed correctly, it loads.
  const Experiment experiment = load_experiment_text(
      graph_yaml(layers, "[head, aux]", small,
                 csv + ", input_columns: {image: a, meta: [b, c, d, e]}, label_columns: {head: y, aux: z}}"),
      "inline.yaml", offline_options());
  const DataConfig& data = *experiment.runs.front().data;
  ASSERT_EQ(data.input_columns.size(), 2u);
  EXPECT_EQ(data.input_columns[1].columns, (std::vector<std::string>{"b", "c", "d", "e"}));
  ASSERT_EQ(data.label_columns.size(), 2u);
  EXPECT_EQ(data.label_columns[1].column, "z");
}

TEST(ModelGraph, ACompareRunsGraphReplacesTheBaseLayers) {
  const std::string yaml =
      "name: compare\n"
      "model:\n"
      "  layers: [flatten: {input_shape: [28, 28]}, dense: {units: 10}]\n"
      "data: {source: fashion_mnist}\n"
      "training: {optimizer: adam, loss: sparse_categorical_crossentropy}\n"
      "compare:\n"
      "  - name: sequential\n"
      "  - name: functional\n"
      "    model:\n"
      "      graph:\n"
      "        inputs: {pixels: {shape: [784]}}\n"
      "        layers: [dense: {name: head, units: 10, inputs: pixels}]\n"
      "        outputs: head\n";
  const Experiment experiment = load_experiment_text(yaml, "inline.yaml", offline_options());
  ASSERT_EQ(experiment.runs.size(), 2u);
  EXPECT_FALSE(experiment.runs[0].model->graph);
  EXPECT_EQ(experiment.runs[0].model->layers.size(), 2u);
  ASSERT_TRUE(experiment.runs[1].model->graph);
  EXPECT_EQ(experiment.runs[1].model->layers.size(), 1u);
}

TEST(ModelGraph, ArgumentsOfTheNewLayersAreCheckedWhereWritten) {
  const std::string reshape = graph_yaml(
      "      - reshape: {name: seq, target_shape: [-1, -1], inputs: image}\n"
      "      - flatten: {name: flat, inputs: seq}\n" + kHead,
      "head");
  expect_error_at(reshape, 6, "[-1, -1]", "target_shape [-1, -1] has more than one -1");
  const std::string groups = graph_yaml(
      "      - conv2d: {name: c, filters: 8, kernel_size: 3, groups: 3, inputs: image}\n"
      "      - flatten: {name: flat, inputs: c}\n" + kHead,
      "head");
  expect_error_at(groups, 6, "3, inputs", "groups 3 does not divide both the 1 input channels");
  const std::string cropping = graph_yaml(
      "      - cropping2d: {name: crop, cropping: [[14, 14], [0, 0]], inputs: image}\n"
      "      - flatten: {name: flat, inputs: crop}\n" + kHead,
      "head");
  expect_error_at(cropping, 6, "[[14", "cropping 28 rows and 0 columns leaves nothing of [None, 28, 28, 1]");
  const std::string margins = graph_yaml(
      "      - zero_padding2d: {name: pad, padding: [[1, 2], 3], inputs: image}\n"
      "      - flatten: {name: flat, inputs: pad}\n" + kHead,
      "head");
  expect_error_at(margins, 6, "3]", "'model.graph.layers[0].zero_padding2d.padding[1]' is '3', not a pair");
  const std::string transpose = graph_yaml(
      "      - conv2d_transpose: {name: up, filters: 4, kernel_size: 3, strides: 2, output_padding: 2, inputs: image}\n"
      "      - flatten: {name: flat, inputs: up}\n" + kHead,
      "head");
  expect_error_at(transpose, 6, "2, inputs", "output_padding 2x2 is not below the strides 2x2");
  const std::string activation = graph_yaml(
      "      - activation: {name: flat, activation: hard_sigmoid, inputs: image}\n" + kHead, "head");
  expect_error_at(activation, 6, "hard_sigmoid", "'model.graph.layers[0].activation.activation' is 'hard_sigmoid'");
}

}  // namespace
}  // namespace accel::experiment
