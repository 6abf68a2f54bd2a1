// Each layer's forward pass against Keras's own: golden/layers/<case>.safetensors
// (tools/keras_goldens/make_layer_goldens.py) holds a layer's inputs, its
// weights in Keras's layer.weights order, the output Keras computed, and
// metadata naming the layer class, its config and its weights. Each case
// builds the accel layer with the same arguments, checks its weights' names
// and shapes against the metadata, loads the stored weights and compares the
// output. Every file on disk must have a case here, so that a new golden is
// never skipped unnoticed.
#include "layer_gradient_check.hpp"

#include <accel/error.hpp>
#include <accel/keras/activations.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>  // Dense, Activation
#include <accel/keras/layers/conv2d.hpp>
#include <accel/keras/layers/conv2d_transpose.hpp>
#include <accel/keras/layers/cropping2d.hpp>
#include <accel/keras/layers/depthwise_conv2d.hpp>
#include <accel/keras/layers/global_max_pooling2d.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/layers/permute.hpp>
#include <accel/keras/layers/repeat_vector.hpp>
#include <accel/keras/layers/reshape.hpp>
#include <accel/keras/layers/separable_conv2d.hpp>
#include <accel/keras/layers/up_sampling2d.hpp>
#include <accel/keras/layers/zero_padding2d.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace accel::keras {
namespace {

using saving::SafetensorsContents;
using saving::StoredTensor;
using testing::assign_weight;

const std::string kGoldenLayersDir = std::string(ACCEL_KERAS_GOLDEN_DIR) + "/layers";

// |actual - expected| <= absolute + relative * |expected|, elementwise.
struct Tolerance {
  double absolute = 0.0;
  double relative = 0.0;
};

// Data movement (padding, cropping, reshapes, repeats, max): the values are
// copied, so they must be identical.
constexpr Tolerance kExact{0.0, 0.0};
// float32 sums of at most a few dozen products (matmuls, convolutions,
// moments) and elementwise erf / tanh / exp: only the order of the additions
// and the transcendental functions' last bits differ from TensorFlow's. The
// inputs are N(0, 1) and the weights N(0, 0.25), so the outputs are of order
// 1 and a few float32 ulps are ~1e-7; no case needs more than this.
constexpr Tolerance kFloat32Sums{1e-5, 1e-5};

// One stored forward pass.
class GoldenFile {
 public:
  explicit GoldenFile(const std::string& path) : contents_(saving::read_safetensors_file(path)) {}

  const StoredTensor& stored(const std::string& name) const {
    const StoredTensor* tensor = contents_.find(name);
    if (tensor == nullptr) throw NotFoundError("golden file has no tensor '" + name + "'");
    return *tensor;
  }
  Tensor tensor(const std::string& name) const {
    const StoredTensor& stored_tensor = stored(name);
    return Tensor::from_host(stored_tensor.bytes.data(), stored_tensor.shape, stored_tensor.dtype);
  }
  Tensor input(int index) const { return tensor("input_" + std::to_string(index)); }
  // weight_0, weight_1, ... as many as the file holds.
  std::vector<Tensor> weights() const {
    std::vector<Tensor> weights;
    while (contents_.find("weight_" + std::to_string(weights.size())) != nullptr) {
      weights.push_back(tensor("weight_" + std::to_string(weights.size())));
    }
    return weights;
  }
  std::string metadata(const std::string& key) const {
    const auto entry = contents_.metadata.find(key);
    return entry == contents_.metadata.end() ? std::string() : entry->second;
  }

 private:
  SafetensorsContents contents_;
};

// The strings of a JSON list of strings, as json.dumps writes the weight
// names (["dense/kernel:0", "dense/bias:0"]; the names need no escapes).
// keras_tests does not link a JSON library, and this is the one list read.
std::vector<std::string> json_string_list(const std::string& text) {
  if (text.find('\\') != std::string::npos) ADD_FAILURE() << "escaped characters in " << text;
  std::vector<std::string> strings;
  for (size_t open = text.find('"'); open != std::string::npos; open = text.find('"', open)) {
    const size_t close = text.find('"', open + 1);
    if (close == std::string::npos) {
      ADD_FAILURE() << "unterminated string in " << text;
      break;
    }
    strings.push_back(text.substr(open + 1, close - open - 1));
    open = close + 1;
  }
  return strings;
}

struct GoldenCase {
  std::string name;         // the file's stem
  std::string keras_class;  // the metadata's layer_class
  // Key arguments as `"key": value`, the way json.dumps(sort_keys=True)
  // writes them into the metadata's layer_config: each must appear there, so
  // that the C++ arguments below and Keras's agree.
  std::vector<std::string> config_entries;
  // The accel layer with the same arguments; null where accel has the
  // function but no layer class (Softmax).
  std::function<std::shared_ptr<Layer>()> make;
  // The call the metadata's `call` names; by default layer(input_0).
  std::function<Tensor(Layer*, const GoldenFile&)> forward;
  Tolerance tolerance = kFloat32Sums;
};

void PrintTo(const GoldenCase& golden_case, std::ostream* out) { *out << golden_case.name; }

Tensor call_on_input_0(Layer* layer, const GoldenFile& golden) { return (*layer)(golden.input(0)); }

// MultiHeadAttention's call as the metadata's `call` names it: query input_0;
// value input_1, or the query itself (self-attention); attention_mask input_2
// (stored BOOL) when named; use_causal_mask as the case says, checked there.
std::function<Tensor(Layer*, const GoldenFile&)> attention_call(bool use_causal_mask) {
  return [use_causal_mask](Layer* layer, const GoldenFile& golden) {
    auto& attention = dynamic_cast<MultiHeadAttention&>(*layer);
    const Tensor query = golden.input(0);
    AttentionArguments<Tensor> arguments;
    arguments.use_causal_mask = use_causal_mask;
    const std::string call = golden.metadata("call");
    EXPECT_EQ(call.find("use_causal_mask=True") != std::string::npos, use_causal_mask) << call;
    const bool has_value = call.find("input_1") != std::string::npos;
    const bool has_mask = call.find("input_2") != std::string::npos;
    if (has_mask) arguments.attention_mask = golden.input(2);
    return attention(query, has_value ? golden.input(1) : query, arguments);
  };
}

template <typename LayerType, typename... Arguments>
std::function<std::shared_ptr<Layer>()> make_layer(Arguments... arguments) {
  return [=] { return std::shared_ptr<Layer>(std::make_shared<LayerType>(arguments...)); };
}

const std::vector<std::string> kMultiHeadAttentionDefaults = {
    R"("num_heads": 2)", R"("key_dim": 4)", R"("attention_axes": [1])", R"("dropout": 0.0)", R"("use_bias": true)"};

std::vector<std::string> with(std::vector<std::string> entries, const std::vector<std::string>& more) {
  entries.insert(entries.end(), more.begin(), more.end());
  return entries;
}

std::vector<GoldenCase> golden_cases() {
  using Pair = std::array<int32_t, 2>;
  return {
      {"layer_normalization", "LayerNormalization",
       {R"("axis": [-1])", R"("epsilon": 0.001)", R"("center": true)", R"("scale": true)", R"("rms_scaling": false)"},
       make_layer<LayerNormalization>(LayerNormalizationOptions{.name = "layer_normalization"})},
      {"layer_normalization_axes", "LayerNormalization",
       {R"("axis": [1, 2])", R"("epsilon": 0.001)", R"("center": true)", R"("scale": true)"},
       make_layer<LayerNormalization>(LayerNormalizationOptions{.axis = {1, 2}, .name = "layer_normalization"})},
      // Attention: three float32 matmuls of depth <= 8 and a softmax of 5 exps;
      // the stored output went through Keras 3's dot_product_attention, which
      // scales the logits instead of the query (same math, other rounding).
      {"multi_head_attention_self", "MultiHeadAttention",
       with(kMultiHeadAttentionDefaults, {R"("value_dim": 4)", R"("output_shape": null)"}),
       make_layer<MultiHeadAttention>(int64_t{2}, int64_t{4},
                                      MultiHeadAttentionOptions{.name = "multi_head_attention"}),
       attention_call(false)},
      {"multi_head_attention_cross", "MultiHeadAttention",
       with(kMultiHeadAttentionDefaults, {R"("value_dim": 3)", R"("output_shape": [5])"}),
       make_layer<MultiHeadAttention>(
           int64_t{2}, int64_t{4},
           MultiHeadAttentionOptions{.value_dim = 3, .output_shape = 5, .name = "multi_head_attention"}),
       attention_call(false)},
      {"multi_head_attention_causal", "MultiHeadAttention",
       with(kMultiHeadAttentionDefaults, {R"("value_dim": 4)", R"("output_shape": null)"}),
       make_layer<MultiHeadAttention>(int64_t{2}, int64_t{4},
                                      MultiHeadAttentionOptions{.name = "multi_head_attention"}),
       attention_call(true)},
      {"multi_head_attention_mask", "MultiHeadAttention",
       with(kMultiHeadAttentionDefaults, {R"("value_dim": 4)", R"("output_shape": null)"}),
       make_layer<MultiHeadAttention>(int64_t{2}, int64_t{4},
                                      MultiHeadAttentionOptions{.name = "multi_head_attention"}),
       attention_call(false)},
      {"conv2d_strides", "Conv2D",
       {R"("filters": 6)", R"("kernel_size": [3, 3])", R"("strides": [2, 2])", R"("padding": "same")",
        R"("dilation_rate": [1, 1])", R"("groups": 1)", R"("activation": "linear")", R"("use_bias": true)"},
       make_layer<Conv2D>(int64_t{6}, 3, Conv2DOptions{.strides = {2, 2}, .padding = "same", .name = "conv2d"})},
      {"conv2d_dilation", "Conv2D",
       {R"("filters": 5)", R"("kernel_size": [3, 3])", R"("strides": [1, 1])", R"("padding": "valid")",
        R"("dilation_rate": [2, 2])", R"("groups": 1)"},
       make_layer<Conv2D>(int64_t{5}, 3, Conv2DOptions{.dilation_rate = {2, 2}, .name = "conv2d"})},
      {"conv2d_groups", "Conv2D",
       {R"("filters": 6)", R"("kernel_size": [3, 3])", R"("strides": [1, 1])", R"("padding": "same")",
        R"("dilation_rate": [1, 1])", R"("groups": 2)"},
       make_layer<Conv2D>(int64_t{6}, 3, Conv2DOptions{.padding = "same", .groups = 2, .name = "conv2d"})},
      {"depthwise_conv2d", "DepthwiseConv2D",
       {R"("kernel_size": [3, 3])", R"("depth_multiplier": 2)", R"("strides": [1, 1])", R"("padding": "same")",
        R"("dilation_rate": [1, 1])", R"("use_bias": true)"},
       make_layer<DepthwiseConv2D>(
           3, DepthwiseConv2DOptions{.padding = "same", .depth_multiplier = 2, .name = "depthwise_conv2d"})},
      {"separable_conv2d", "SeparableConv2D",
       {R"("filters": 4)", R"("kernel_size": [3, 3])", R"("depth_multiplier": 2)", R"("strides": [2, 2])",
        R"("padding": "same")", R"("dilation_rate": [1, 1])", R"("use_bias": true)"},
       make_layer<SeparableConv2D>(int64_t{4}, 3,
                                   SeparableConv2DOptions{.strides = {2, 2}, .padding = "same",
                                                          .depth_multiplier = 2, .name = "separable_conv2d"})},
      {"conv2d_transpose", "Conv2DTranspose",
       {R"("filters": 3)", R"("kernel_size": [3, 3])", R"("strides": [2, 2])", R"("padding": "same")",
        R"("output_padding": null)", R"("dilation_rate": [1, 1])"},
       make_layer<Conv2DTranspose>(
           int64_t{3}, 3, Conv2DTransposeOptions{.strides = {2, 2}, .padding = "same", .name = "conv2d_transpose"})},
      {"conv2d_transpose_valid", "Conv2DTranspose",
       {R"("filters": 3)", R"("kernel_size": [3, 3])", R"("strides": [2, 2])", R"("padding": "valid")",
        R"("output_padding": null)", R"("dilation_rate": [1, 1])"},
       make_layer<Conv2DTranspose>(
           int64_t{3}, 3, Conv2DTransposeOptions{.strides = {2, 2}, .padding = "valid", .name = "conv2d_transpose"})},
      {"up_sampling2d", "UpSampling2D", {R"("size": [2, 3])", R"("interpolation": "nearest")"},
       make_layer<UpSampling2D>(UpSampling2DOptions{.size = Pair{2, 3}, .name = "up_sampling2d"}), nullptr, kExact},
      {"zero_padding2d", "ZeroPadding2D", {R"("padding": [[1, 2], [3, 0]])"},
       make_layer<ZeroPadding2D>(ZeroPadding2DOptions{.padding = {{1, 2}, {3, 0}}, .name = "zero_padding2d"}), nullptr,
       kExact},
      {"cropping2d", "Cropping2D", {R"("cropping": [[1, 0], [2, 1]])"},
       make_layer<Cropping2D>(Cropping2DOptions{.cropping = {{1, 0}, {2, 1}}, .name = "cropping2d"}), nullptr, kExact},
      {"reshape", "Reshape", {R"("target_shape": [2, -1])"},
       make_layer<Reshape>(std::vector<int64_t>{2, -1}, std::string("reshape")), nullptr, kExact},
      {"permute", "Permute", {R"("dims": [3, 1, 2])"},
       make_layer<Permute>(std::vector<int32_t>{3, 1, 2}, std::string("permute")), nullptr, kExact},
      {"repeat_vector", "RepeatVector", {R"("n": 3)"},
       make_layer<RepeatVector>(int64_t{3}, std::string("repeat_vector")), nullptr, kExact},
      {"global_max_pooling2d", "GlobalMaxPooling2D", {R"("keepdims": false)"},
       make_layer<GlobalMaxPooling2D>(GlobalMaxPooling2DOptions{.name = "global_max_pooling2d"}), nullptr, kExact},
      {"activation_gelu", "Activation", {R"("activation": "gelu")"},
       make_layer<Activation>(std::string("gelu"), std::string("activation"))},
      // Keras 3 records the callable gelu(approximate=True) by hand in this config.
      {"activation_gelu_approximate", "Activation", {R"("activation": "gelu")", R"("approximate": true)"},
       make_layer<Activation>(std::string("gelu_approximate"), std::string("activation"))},
      // Keras 3 registers swish under the name silu: the same function.
      {"activation_swish", "Activation", {R"("activation": "silu")"},
       make_layer<Activation>(std::string("swish"), std::string("activation"))},
      // keras.layers.Softmax(axis=1): accel has the function the layer calls,
      // keras::softmax(x, axis), and no Softmax layer class.
      {"activation_softmax_axis1", "Softmax", {R"("axis": 1)"}, nullptr,
       [](Layer*, const GoldenFile& golden) { return softmax(golden.input(0), 1); }},
      {"dense_gelu", "Dense", {R"("units": 5)", R"("activation": "gelu")", R"("use_bias": true)"},
       make_layer<Dense>(int64_t{5}, DenseOptions{.activation = "gelu", .name = "dense"})},
  };
}

std::string golden_path(const std::string& case_name) { return kGoldenLayersDir + "/" + case_name + ".safetensors"; }

class KerasLayerGoldenTest : public ::testing::TestWithParam<GoldenCase> {
 protected:
  void SetUp() override { clear_session(); }
};

TEST_P(KerasLayerGoldenTest, ForwardMatchesKeras) {
  const GoldenCase& golden_case = GetParam();
  const GoldenFile golden(golden_path(golden_case.name));
  EXPECT_EQ(golden.metadata("case"), golden_case.name);
  EXPECT_EQ(golden.metadata("layer_class"), golden_case.keras_class);
  const std::string config = golden.metadata("layer_config");
  for (const std::string& entry : golden_case.config_entries) {
    EXPECT_NE(config.find(entry), std::string::npos) << "Keras's config lacks " << entry << ": " << config;
  }

  std::shared_ptr<Layer> layer = golden_case.make ? golden_case.make() : nullptr;
  if (layer) EXPECT_EQ(layer->class_name(), golden_case.keras_class);
  const auto forward = golden_case.forward ? golden_case.forward : call_on_input_0;
  forward(layer.get(), golden);  // builds the layer's weights

  // Keras 2's names (keras2_weight_names), in Keras's order, with the stored shapes.
  const std::vector<std::string> keras_names = json_string_list(golden.metadata("keras2_weight_names"));
  const std::vector<Tensor> stored_weights = golden.weights();
  ASSERT_EQ(stored_weights.size(), keras_names.size()) << "the file's weights and its metadata disagree";
  const std::vector<Variable> weights = layer ? layer->weights() : std::vector<Variable>{};
  ASSERT_EQ(weights.size(), stored_weights.size()) << "weight count";
  for (size_t i = 0; i < weights.size(); ++i) {
    EXPECT_EQ(weights[i].name(), keras_names[i]) << "weight " << i;
    ASSERT_EQ(weights[i].shape(), stored_weights[i].shape()) << "weight " << i << " (" << keras_names[i] << ")";
    assign_weight(weights[i], stored_weights[i]);
  }

  const Tensor output = forward(layer.get(), golden);
  const Tensor expected = golden.tensor("output");
  ASSERT_EQ(output.shape(), expected.shape());
  ASSERT_EQ(output.dtype(), DType::kFloat32);
  const std::vector<float> actual_values = output.to_vector<float>();
  const std::vector<float> expected_values = expected.to_vector<float>();
  double max_error = 0.0;
  int reported = 0;
  for (size_t i = 0; i < actual_values.size(); ++i) {
    const double error = std::abs(static_cast<double>(actual_values[i]) - expected_values[i]);
    max_error = std::max(max_error, error);
    const double allowed = golden_case.tolerance.absolute + golden_case.tolerance.relative * std::abs(expected_values[i]);
    if (!(error <= allowed) && reported < 10) {
      ++reported;
      ADD_FAILURE() << golden_case.name << " element " << i << ": accel " << actual_values[i] << ", Keras "
                    << expected_values[i] << " (difference " << error << ", allowed " << allowed << ")";
    }
  }
  RecordProperty("max_abs_error", std::to_string(max_error));
  std::printf("[ golden   ] %s: max |accel - Keras| = %.3g over %zu values\n", golden_case.name.c_str(), max_error,
              actual_values.size());
}

INSTANTIATE_TEST_SUITE_P(Keras, KerasLayerGoldenTest, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) { return info.param.name; });

// A golden written by make_layer_goldens.py without a case above would
// otherwise never run: every file must have one, and every case its file.
TEST(KerasLayerGoldenFiles, EveryFileHasACase) {
  std::set<std::string> case_names;
  for (const GoldenCase& golden_case : golden_cases()) case_names.insert(golden_case.name);
  std::set<std::string> file_names;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenLayersDir)) {
    if (entry.path().extension() == ".safetensors") file_names.insert(entry.path().stem().string());
  }
  EXPECT_FALSE(file_names.empty()) << "no goldens in " << kGoldenLayersDir;
  for (const std::string& file : file_names) {
    EXPECT_TRUE(case_names.contains(file)) << kGoldenLayersDir << "/" << file
                                           << ".safetensors has no case in layers_keras_goldens_test.cpp";
  }
  for (const std::string& name : case_names) {
    EXPECT_TRUE(file_names.contains(name)) << "case " << name << " has no golden file in " << kGoldenLayersDir;
  }
}

}  // namespace
}  // namespace accel::keras
