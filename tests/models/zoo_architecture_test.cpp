// The zoo's models are Keras's: for every configuration Keras counted
// (tests/keras/golden/zoo_parameter_counts.txt) the C++ builder gives the
// same total, trainable and non-trainable parameter counts, and for the
// configurations with a layer table, the same layers in the same order with
// the same classes, output shapes, parameters and inbound layers.
#include "model_zoo.hpp"
#include "zoo_goldens.hpp"

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/keras_tensor.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>

namespace accel::model_zoo {
namespace {

using testing::LayerRow;

const std::map<std::string, std::function<std::shared_ptr<keras::Model>()>>& configurations() {
  static const std::map<std::string, std::function<std::shared_ptr<keras::Model>()>> table = {
      {"resnet50_224x224x3_1000", [] { return resnet50({{224, 224, 3}, 1000}); }},
      {"resnet50_32x32x3_10", [] { return resnet50({{32, 32, 3}, 10}); }},
      {"resnet50_v1_5_224x224x3_1000", [] { return resnet50_v1_5({{224, 224, 3}, 1000}); }},
      {"resnet18_224x224x3_1000", [] { return resnet18({{224, 224, 3}, 1000}); }},
      {"resnet_small_28x28", [] { return resnet_small_28x28(); }},
      {"vit_fashion_mnist_p4", [] { return vit_fashion_mnist({.patch_size = 4}); }},
      {"vit_fashion_mnist_p7", [] { return vit_fashion_mnist({.patch_size = 7}); }},
      {"transformer_encoder_classifier", [] { return transformer_encoder_classifier(); }},
      {"decoder_language_model", [] { return decoder_language_model(); }},
      {"decoder_lm", [] { return decoder_language_model(decoder_lm_options()); }},
      {"decoder_lm_parallel_layer_norm_relu",
       [] {
         return decoder_language_model({.mlp = DecoderMlp::kRelu,
                                        .norm = DecoderNorm::kLayer,
                                        .parallel_block = true,
                                        .causal = false,
                                        .name = "decoder_lm_parallel_layer_norm_relu"});
       }},
  };
  return table;
}

int64_t count(const std::vector<Variable>& weights) {
  int64_t total = 0;
  for (const Variable& weight : weights) total += weight.value().shape().element_count();
  return total;
}

std::string keras_shape(const keras::LayerShape& shape) {
  std::string text = "(";
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (axis > 0) text += ",";
    text += shape[axis] == keras::kUnknownDim ? "None" : std::to_string(shape[axis]);
  }
  return text + ")";
}

LayerRow row_of(const keras::Layer& layer) {
  LayerRow row{.name = layer.name(), .class_name = layer.class_name(), .parameters = layer.count_params()};
  const auto nodes = layer.inbound_nodes();
  if (!nodes.empty()) {
    row.output_shape = keras_shape(nodes.front()->output_shapes().at(0));
    for (const keras::KerasTensor& input : nodes.front()->inputs()) row.inbound.push_back(input.layer().name());
  }
  return row;
}

TEST(ZooArchitectureTest, EveryConfigurationHasKerasParameterCounts) {
  const auto goldens = testing::read_parameter_counts();
  ASSERT_FALSE(goldens.empty());
  for (const auto& [configuration, expected] : goldens) {
    SCOPED_TRACE(configuration);
    const auto builder = configurations().find(configuration);
    ASSERT_NE(builder, configurations().end()) << "a golden configuration without a C++ builder in this test";
    keras::clear_session();
    const std::shared_ptr<keras::Model> model = builder->second();
    EXPECT_EQ(model->count_params(), expected.total);
    EXPECT_EQ(count(model->trainable_weights()), expected.trainable);
    EXPECT_EQ(count(model->non_trainable_weights()), expected.non_trainable);
  }
}

TEST(ZooArchitectureTest, LayerTablesEqualKeras) {
  int tables = 0;
  for (const auto& [configuration, builder] : configurations()) {
    if (!std::filesystem::exists(testing::golden_path("zoo_" + configuration + "_layers.txt"))) continue;
    SCOPED_TRACE(configuration);
    ++tables;
    keras::clear_session();
    const std::shared_ptr<keras::Model> model = builder();
    const std::vector<LayerRow> expected = testing::read_layer_table(configuration);
    const auto& layers = model->layers();
    ASSERT_EQ(layers.size(), expected.size());
    for (size_t index = 0; index < layers.size(); ++index) {
      const LayerRow actual = row_of(*layers[index]);
      SCOPED_TRACE("layer " + std::to_string(index) + " " + expected[index].name);
      EXPECT_EQ(actual.name, expected[index].name);
      EXPECT_EQ(actual.class_name, expected[index].class_name);
      EXPECT_EQ(actual.output_shape, expected[index].output_shape);
      EXPECT_EQ(actual.parameters, expected[index].parameters);
      EXPECT_EQ(actual.inbound, expected[index].inbound);
    }
  }
  EXPECT_GE(tables, 6) << "the small models, ResNet-50 v1.5 and ResNet-18 have layer tables";
}

TEST(ZooArchitectureTest, ModelsAreFoundByNameAndAnUnknownNameListsThem) {
  for (const std::string& name : model_names()) {
    keras::clear_session();
    EXPECT_NE(build_model(name), nullptr) << name;
  }
  try {
    build_model("resnet_101");
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& error) {
    EXPECT_NE(std::string(error.what()).find("resnet_small_28x28"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace accel::model_zoo
