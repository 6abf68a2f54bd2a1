// configs/models/: the model zoo as experiment files (model.graph). Each one
// loads, builds into a keras::Model with the parameter counts of the Keras
// goldens (tests/keras/golden/zoo_parameter_counts.txt), and equals the C++
// builder of examples/model_zoo layer for layer: names, classes, output
// shapes and parameters. Also what the zoo relies on: the shapes the loader
// infers are the shapes accel's Keras computes for every layer kind, every
// activation and initializer the schema offers builds, the token sequences of
// data.tokens are the zoo's, and a graph the data cannot feed is refused with
// its reason.
#include "test_support.hpp"

#include "runner/model_factory.hpp"

#include <accel/experiment/run_executor.hpp>
#include <accel/experiment/schema.hpp>
#include <accel/keras/activations.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/initializers.hpp>
#include <model_zoo.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace accel::experiment {
namespace {

using testing::offline_options;
using testing::source_path;

struct ParameterCounts {
  int64_t total = 0;
  int64_t trainable = 0;
  int64_t non_trainable = 0;
};

std::map<std::string, ParameterCounts> golden_parameter_counts() {
  std::map<std::string, ParameterCounts> counts;
  std::ifstream in(source_path("tests/keras/golden/zoo_parameter_counts.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream fields(line);
    std::string name;
    ParameterCounts count;
    fields >> name >> count.total >> count.trainable >> count.non_trainable;
    counts[name] = count;
  }
  return counts;
}

int64_t element_count(const std::vector<Variable>& weights) {
  int64_t count = 0;
  for (const Variable& weight : weights) count += weight.shape().element_count();
  return count;
}

// Each file of configs/models/, the golden configuration it is, and the C++
// builder it mirrors with the same options.
struct ZooFile {
  std::string file;
  std::string golden;
  std::function<std::shared_ptr<keras::Model>()> builder;
};

void PrintTo(const ZooFile& zoo, std::ostream* out) { *out << zoo.file; }

const std::vector<ZooFile>& zoo_files() {
  static const std::vector<ZooFile> files{
      {"resnet_small_28x28.yaml", "resnet_small_28x28", [] { return model_zoo::resnet_small_28x28(); }},
      {"vit_fashion_mnist.yaml", "vit_fashion_mnist_p4", [] { return model_zoo::vit_fashion_mnist(); }},
      {"transformer_encoder_classifier.yaml", "transformer_encoder_classifier",
       [] { return model_zoo::transformer_encoder_classifier(); }},
      {"resnet50.yaml", "resnet50_32x32x3_10", [] { return model_zoo::resnet50({{32, 32, 3}, 10}); }},
      {"resnet50_v1_5.yaml", "resnet50_v1_5_224x224x3_1000",
       [] { return model_zoo::resnet50_v1_5({{224, 224, 3}, 1000}); }},
      // ResNet-18's parameters do not depend on the input size (global
      // average pooling feeds the head): the 224x224 golden holds for 32x32.
      {"resnet18.yaml", "resnet18_224x224x3_1000", [] { return model_zoo::resnet18({{32, 32, 3}, 1000}); }},
      {"decoder_lm.yaml", "decoder_lm", [] { return model_zoo::decoder_language_model(model_zoo::decoder_lm_options()); }},
  };
  return files;
}

const ModelConfig& model_of(const Experiment& experiment) { return *experiment.runs.front().model; }

std::shared_ptr<keras::Model> build_from_yaml(const std::string& file) {
  const Experiment experiment = load_experiment(source_path("configs/models/" + file), offline_options());
  const RunConfig& run = experiment.runs.front();
  keras::clear_session();
  return make_model(*run.model, model_input_shape(*run.model, run.data->example_shape));
}

TEST(ModelZooConfigs, EveryFileIsAZooModelWithAGolden) {
  std::set<std::string> listed;
  for (const ZooFile& zoo : zoo_files()) listed.insert(zoo.file);
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("configs/models"))) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_TRUE(listed.contains(entry.path().filename().string())) << entry.path() << " has no golden in this test";
    ++count;
  }
  EXPECT_EQ(count, static_cast<int>(zoo_files().size()));
}

class ModelZooConfig : public ::testing::TestWithParam<ZooFile> {};

TEST_P(ModelZooConfig, BuildsWithTheKerasParameterCounts) {
  const ZooFile& zoo = GetParam();
  const std::map<std::string, ParameterCounts> goldens = golden_parameter_counts();
  ASSERT_TRUE(goldens.contains(zoo.golden)) << zoo.golden;
  const ParameterCounts& golden = goldens.at(zoo.golden);
  const std::shared_ptr<keras::Model> model = build_from_yaml(zoo.file);
  EXPECT_EQ(model->count_params(), golden.total);
  EXPECT_EQ(element_count(model->trainable_weights()), golden.trainable);
  EXPECT_EQ(element_count(model->non_trainable_weights()), golden.non_trainable);
}

TEST_P(ModelZooConfig, EqualsTheCppBuilderLayerForLayer) {
  const ZooFile& zoo = GetParam();
  const std::shared_ptr<keras::Model> from_yaml = build_from_yaml(zoo.file);
  keras::clear_session();
  const std::shared_ptr<keras::Model> from_cpp = zoo.builder();
  EXPECT_EQ(from_yaml->name(), from_cpp->name());
  const auto& yaml_layers = from_yaml->layers();
  const auto& cpp_layers = from_cpp->layers();
  ASSERT_EQ(yaml_layers.size(), cpp_layers.size());
  for (size_t i = 0; i < yaml_layers.size(); ++i) {
    SCOPED_TRACE(cpp_layers[i]->name());
    EXPECT_EQ(yaml_layers[i]->name(), cpp_layers[i]->name());
    EXPECT_EQ(yaml_layers[i]->class_name(), cpp_layers[i]->class_name());
    EXPECT_EQ(yaml_layers[i]->output_shapes(), cpp_layers[i]->output_shapes());
    EXPECT_EQ(yaml_layers[i]->count_params(), cpp_layers[i]->count_params());
  }
  ASSERT_EQ(from_yaml->weights().size(), from_cpp->weights().size());
  for (size_t i = 0; i < from_cpp->weights().size(); ++i) {
    EXPECT_EQ(from_yaml->weights()[i].name(), from_cpp->weights()[i].name());
  }
}

TEST_P(ModelZooConfig, InfersTheShapesKerasComputes) {
  const ZooFile& zoo = GetParam();
  const Experiment experiment = load_experiment(source_path("configs/models/" + zoo.file), offline_options());
  const ModelConfig& config = model_of(experiment);
  keras::clear_session();
  const std::shared_ptr<keras::Model> model = zoo.builder();
  ASSERT_EQ(config.layer_output_shapes.size(), config.layers.size());
  for (size_t i = 0; i < config.layers.size(); ++i) {
    const std::string& name = config.layers[i].argument("name")->as_text();
    EXPECT_EQ(model->get_layer(name)->output_shape(), keras::LayerShape(config.layer_output_shapes[i].begin(),
                                                                        config.layer_output_shapes[i].end()))
        << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, ModelZooConfig, ::testing::ValuesIn(zoo_files()),
                         [](const ::testing::TestParamInfo<ZooFile>& info) { return info.param.golden; });

// Every layer kind, with arguments that change its shape, in one graph.
const char* kEveryLayer = R"(name: every_layer
model:
  graph:
    inputs: {image: {shape: [8, 8, 3]}, ids: {shape: [5], dtype: int32}}
    layers:
      - conv2d: {name: strided, filters: 4, kernel_size: 3, strides: 2, padding: same, inputs: image}
      - conv2d: {name: grouped, filters: 6, kernel_size: 3, dilation_rate: 2, groups: 3, inputs: image}
      - depthwise_conv2d: {name: depthwise, kernel_size: 3, depth_multiplier: 2, padding: same, inputs: image}
      - separable_conv2d: {name: separable, filters: 5, kernel_size: 3, strides: 2, depth_multiplier: 2, inputs: image}
      - conv2d_transpose: {name: transposed, filters: 2, kernel_size: 3, strides: 2, inputs: image}
      - conv2d_transpose: {name: transposed_same, filters: 2, kernel_size: 3, strides: 2, padding: same, output_padding: 1, inputs: image}
      - max_pooling2d: {name: max_pool, pool_size: 3, strides: 2, inputs: image}
      - average_pooling2d: {name: average_pool, pool_size: 2, strides: 3, padding: same, inputs: image}
      - zero_padding2d: {name: padded, padding: [[1, 2], [3, 4]], inputs: image}
      - cropping2d: {name: cropped, cropping: [1, 2], inputs: image}
      - up_sampling2d: {name: upsampled, size: [2, 3], inputs: image}
      - global_max_pooling2d: {name: global_max, keepdims: true, inputs: image}
      - global_average_pooling2d: {name: global_average, inputs: image}
      - batch_normalization: {name: batch_norm, momentum: 0.9, inputs: image}
      - layer_normalization: {name: layer_norm, axis: 1, epsilon: 1.0e-6, inputs: image}
      - rms_normalization: {name: rms_norm, epsilon: 1.0e-5, inputs: image}
      - flatten: {name: flat, inputs: image}
      - reshape: {name: sequence, target_shape: [-1, 3], inputs: image}
      - permute: {name: permuted, dims: [2, 1], inputs: sequence}
      - global_average_pooling1d: {name: steps_average, inputs: sequence}
      - global_max_pooling1d: {name: steps_max, keepdims: true, inputs: sequence}
      - conv1d: {name: causal, filters: 4, kernel_size: 3, dilation_rate: 2, padding: causal, inputs: sequence}
      - conv1d: {name: strided_steps, filters: 6, kernel_size: 2, strides: 3, groups: 2, inputs: causal}
      - prelu: {name: prelu, shared_axes: [1], inputs: strided_steps}
      - repeat_vector: {name: repeated, n: 4, inputs: global_average}
      - dense: {name: projected, units: 5, use_bias: false, inputs: sequence}
      - dropout: {name: dropped, rate: 0.5, seed: 7, inputs: projected}
      - activation: {name: activated, activation: gelu_approximate, inputs: dropped}
      - multi_head_attention: {name: attention, num_heads: 2, key_dim: 4, value_dim: 3, output_shape: 7, use_causal_mask: true, inputs: [sequence, activated, projected]}
      - concatenate: {name: joined, inputs: [sequence, projected]}
      - add: {name: sum, inputs: [global_average, steps_average]}
      - subtract: {name: difference, inputs: [global_average, steps_average]}
      - multiply: {name: product, inputs: [global_average, steps_max]}
      - average: {name: mean, inputs: [global_average, steps_average, sum]}
      - maximum: {name: largest, inputs: [global_average, steps_max]}
      - minimum: {name: smallest, inputs: [global_average, steps_average, sum]}
      - rescaling: {name: rescaled, scale: 0.5, offset: -1, inputs: image}
      - relu: {name: relu_shaped, max_value: 0.6, negative_slope: 0.1, threshold: 0.2, inputs: rescaled}
      - leaky_relu: {name: leaky, negative_slope: 0.2, inputs: relu_shaped}
      - elu: {name: elu, alpha: 0.5, inputs: leaky}
      - softmax: {name: softmax_rows, axis: 1, inputs: elu}
      - embedding: {name: embedded, input_dim: 10, output_dim: 4, inputs: ids}
      - position_embedding: {name: positioned, trainable: false, inputs: embedded}
      - reversed_embedding: {name: tied_logits, embedding: embedded, inputs: positioned}
    outputs: [strided, grouped, depthwise, separable, transposed, transposed_same, max_pool, average_pool, padded, cropped,
              upsampled, global_max, batch_norm, layer_norm, rms_norm, flat, permuted, repeated, attention, joined, difference,
              product, mean, largest, smallest, softmax_rows, positioned, prelu, tied_logits]
data: {source: synthetic}
training: {optimizer: adam, loss: mse}
)";

TEST(LayerShapes, EveryLayerKindIsInferredAsAccelsKerasComputesIt) {
  const Experiment experiment = load_experiment_text(kEveryLayer, "every_layer.yaml", offline_options());
  const ModelConfig& config = model_of(experiment);
  keras::clear_session();
  const std::shared_ptr<keras::Model> model = make_model(config, {});
  std::set<std::string> kinds;
  for (size_t i = 0; i < config.layers.size(); ++i) {
    const std::string& name = config.layers[i].argument("name")->as_text();
    kinds.insert(config.layers[i].name);
    EXPECT_EQ(model->get_layer(name)->output_shape(), keras::LayerShape(config.layer_output_shapes[i].begin(),
                                                                        config.layer_output_shapes[i].end()))
        << name;
  }
  // Every layer the schema offers is in the graph above.
  for (const Call& call : run_spec().field("model")->spec->field("layers")->spec->item->calls) {
    EXPECT_TRUE(kinds.contains(call.name)) << call.name << " is not covered";
  }
  // Arguments reach the layers.
  EXPECT_FALSE(model->get_layer("positioned")->trainable());
  EXPECT_EQ(model->get_layer("projected")->weights().size(), 1u);  // use_bias: false
  EXPECT_EQ(model->get_layer("grouped")->weights().front().shape(), (Shape{3, 3, 1, 6}));
  EXPECT_EQ(model->get_layer("depthwise")->weights().front().shape(), (Shape{3, 3, 3, 2}));
  EXPECT_EQ(model->get_layer("separable")->weights()[1].shape(), (Shape{1, 1, 6, 5}));
  EXPECT_EQ(model->get_layer("layer_norm")->weights().front().shape(), (Shape{8}));
}

TEST(LayerNames, EveryActivationAndInitializerTheSchemaOffersBuilds) {
  const ValueSpec& layers = *run_spec().field("model")->spec->field("layers")->spec->item;
  for (const std::string& name : layers.call("activation")->arguments.front().spec->choices) {
    EXPECT_NO_THROW((void)keras::get_activation(name)) << name;
  }
  for (const Field& field : layers.call("dense")->arguments) {
    if (field.key != "kernel_initializer") continue;
    for (const std::string& name : field.spec->choices) EXPECT_NO_THROW((void)keras::get_initializer(name)) << name;
  }
}

}  // namespace
}  // namespace accel::experiment
