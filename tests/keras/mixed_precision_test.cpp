// Mixed precision (keras.mixed_precision): DTypePolicy and the global policy;
// every layer's output, variable and gradient dtypes under mixed_bfloat16 and
// mixed_float16 as Keras 3 gives them; the normalization layers' float32
// statistics; a float32 last layer; the policies through .keras files; and a
// model made by TensorFlow 2.21 under mixed_bfloat16 computing and training
// as TensorFlow did (golden/mixed_precision/, made by
// tools/keras_goldens/make_mixed_precision_goldens.py).
#include <accel/autodiff/autodiff.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/layers/conv2d_transpose.hpp>
#include <accel/keras/layers/cropping2d.hpp>
#include <accel/keras/layers/depthwise_conv2d.hpp>
#include <accel/keras/layers/global_average_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling2d.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/layers/permute.hpp>
#include <accel/keras/layers/position_embedding.hpp>
#include <accel/keras/layers/repeat_vector.hpp>
#include <accel/keras/layers/up_sampling2d.hpp>
#include <accel/keras/layers/zero_padding2d.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/optimizers/loss_scale_optimizer.hpp>
#include <accel/keras/optimizers/sgd.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/keras_file.hpp>
#include <accel/keras/saving/safetensors.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/tpu_emulator.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../common/tensorflow_keras_check.hpp"
#include "layer_gradient_check.hpp"
#include "saving_test_support.hpp"
#include "zip_archive.hpp"

namespace accel::keras {
namespace {

using mixed_precision::GlobalPolicyScope;
using testing::TemporaryFolder;
using testing::tensor_named;

std::string golden(const std::string& name) { return std::string(ACCEL_KERAS_GOLDEN_DIR) + "/" + name; }

// A copy of the .keras file `source` at `target` whose config.json has every
// `from` replaced by `to` (metadata and weights as they were).
void write_edited_keras_file(const std::string& source, const std::string& target, const std::string& from,
                             const std::string& to) {
  std::map<std::string, std::string> members = saving::read_zip_archive(source);
  std::string& config = members.at("config.json");
  for (size_t at = config.find(from); at != std::string::npos; at = config.find(from, at + to.size())) {
    config.replace(at, from.size(), to);
  }
  const std::string bytes = saving::make_zip_archive(
      {{"metadata.json", members.at("metadata.json")}, {"config.json", config},
       {"model.weights.h5", members.at("model.weights.h5")}},
      target);
  std::ofstream(target, std::ios::binary) << bytes;
}

std::vector<float> as_floats(const Tensor& tensor) {
  return (tensor.dtype() == DType::kFloat32 ? tensor : ops::cast(tensor, DType::kFloat32)).to_vector<float>();
}

TEST(DTypePolicy, NamesGiveKerasComputeAndVariableDtypes) {
  struct Case {
    const char* name;
    DType compute;
    DType variable;
  };
  for (const Case& policy : {Case{"float32", DType::kFloat32, DType::kFloat32},
                             Case{"bfloat16", DType::kBFloat16, DType::kBFloat16},
                             Case{"float16", DType::kFloat16, DType::kFloat16},
                             Case{"mixed_bfloat16", DType::kBFloat16, DType::kFloat32},
                             Case{"mixed_float16", DType::kFloat16, DType::kFloat32}}) {
    const DTypePolicy made(policy.name);
    EXPECT_EQ(made.name(), policy.name);
    EXPECT_EQ(made.compute_dtype(), policy.compute) << policy.name;
    EXPECT_EQ(made.variable_dtype(), policy.variable) << policy.name;
  }
  try {
    DTypePolicy("mixed_float64");
    FAIL() << "an unknown policy was accepted";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("'mixed_float64'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("mixed_bfloat16"), std::string::npos) << error.what();
  }
}

TEST(DTypePolicy, NewLayersTakeTheGlobalPolicyAndTheScopeRestoresIt) {
  clear_session();
  EXPECT_EQ(mixed_precision::global_policy().name(), "float32");
  {
    const GlobalPolicyScope mixed(DTypePolicy("mixed_bfloat16"));
    Dense dense(4);
    EXPECT_EQ(dense.dtype_policy().name(), "mixed_bfloat16");
    EXPECT_EQ(dense.compute_dtype(), DType::kBFloat16);
    EXPECT_EQ(dense.variable_dtype(), DType::kFloat32);
  }
  EXPECT_EQ(mixed_precision::global_policy().name(), "float32");
  EXPECT_EQ(Dense(4).dtype_policy().name(), "float32");
}

TEST(DTypePolicy, APolicyChangesOnlyBeforeTheLayerHasWeights) {
  clear_session();
  Dense dense(3);
  dense.set_dtype_policy(DTypePolicy("mixed_float16"));
  dense(Tensor::from_vector<float>({1, 2}, Shape{1, 2}));
  EXPECT_EQ(dense.dtype_policy().name(), "mixed_float16");
  EXPECT_THROW(dense.set_dtype_policy(DTypePolicy("float32")), FailedPreconditionError);
  dense.set_dtype_policy(DTypePolicy("mixed_float16"));  // the same policy is no change
}

// One layer and an input it takes.
struct LayerCase {
  std::string name;
  std::function<std::shared_ptr<Layer>()> make;
  std::vector<Shape> input_shapes;  // several: called on a list
  bool integer_input = false;
  bool training = true;
};

std::vector<LayerCase> layer_cases() {
  const Shape image{2, 6, 6, 3};
  const Shape sequence{2, 5, 4};
  return {
      {"Dense", [] { return std::make_shared<Dense>(3, DenseOptions{.activation = "relu"}); }, {Shape{2, 4}}},
      {"Conv2D", [] { return std::make_shared<Conv2D>(4, 3, Conv2DOptions{.padding = "same"}); }, {image}},
      {"Conv2DTranspose", [] { return std::make_shared<Conv2DTranspose>(2, 3); }, {image}},
      {"DepthwiseConv2D", [] { return std::make_shared<DepthwiseConv2D>(3); }, {image}},
      {"BatchNormalization", [] { return std::make_shared<BatchNormalization>(); }, {image}},
      {"BatchNormalizationInference", [] { return std::make_shared<BatchNormalization>(); }, {image}, false, false},
      {"LayerNormalization", [] { return std::make_shared<LayerNormalization>(); }, {sequence}},
      {"Embedding", [] { return std::make_shared<Embedding>(7, 3); }, {Shape{2, 5}}, true},
      {"PositionEmbedding", [] { return std::make_shared<PositionEmbedding>(); }, {sequence}},
      {"MultiHeadAttention", [] { return std::make_shared<MultiHeadAttention>(2, 3); }, {sequence, sequence}},
      {"MaxPooling2D", [] { return std::make_shared<MaxPooling2D>(); }, {image}},
      {"AveragePooling2D", [] { return std::make_shared<AveragePooling2D>(); }, {image}},
      {"GlobalAveragePooling2D", [] { return std::make_shared<GlobalAveragePooling2D>(); }, {image}},
      {"GlobalMaxPooling2D", [] { return std::make_shared<GlobalMaxPooling2D>(); }, {image}},
      {"GlobalAveragePooling1D", [] { return std::make_shared<GlobalAveragePooling1D>(); }, {sequence}},
      {"GlobalMaxPooling1D", [] { return std::make_shared<GlobalMaxPooling1D>(); }, {sequence}},
      {"Flatten", [] { return std::make_shared<Flatten>(); }, {image}},
      {"Reshape", [] { return std::make_shared<Reshape>(std::vector<int64_t>{-1, 9}); }, {image}},
      {"Permute", [] { return std::make_shared<Permute>(std::vector<int32_t>{2, 1}); }, {sequence}},
      {"RepeatVector", [] { return std::make_shared<RepeatVector>(3); }, {Shape{2, 4}}},
      {"ZeroPadding2D", [] { return std::make_shared<ZeroPadding2D>(); }, {image}},
      {"Cropping2D", [] { return std::make_shared<Cropping2D>(Cropping2DOptions{.cropping = 1}); }, {image}},
      {"UpSampling2D", [] { return std::make_shared<UpSampling2D>(); }, {image}},
      {"Dropout", [] { return std::make_shared<Dropout>(0.5, DropoutOptions{.seed = 3}); }, {Shape{2, 8}}},
      {"Activation", [] { return std::make_shared<Activation>("gelu"); }, {Shape{2, 4}}},
      {"Add", [] { return std::make_shared<Add>(); }, {Shape{2, 4}, Shape{2, 4}}},
      {"Subtract", [] { return std::make_shared<Subtract>(); }, {Shape{2, 4}, Shape{2, 4}}},
      {"Multiply", [] { return std::make_shared<Multiply>(); }, {Shape{2, 4}, Shape{2, 4}}},
      {"Average", [] { return std::make_shared<Average>(); }, {Shape{2, 4}, Shape{2, 4}}},
      {"Concatenate", [] { return std::make_shared<Concatenate>(); }, {Shape{2, 4}, Shape{2, 3}}},
  };
}

class LayerUnderMixedPolicy : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

// Keras 3 under a mixed policy: float32 inputs are cast to the compute dtype,
// the output is in the compute dtype (BatchNormalization and
// LayerNormalization compute in float32 and cast back), every variable stays
// float32, and so does every gradient with respect to one.
TEST_P(LayerUnderMixedPolicy, OutputVariableAndGradientDtypesAreKeras3s) {
  const DTypePolicy policy(std::get<0>(GetParam()));
  const LayerCase layer_case = layer_cases()[std::get<1>(GetParam())];
  clear_session();
  const GlobalPolicyScope scope(policy);
  std::shared_ptr<Layer> layer = layer_case.make();
  std::vector<Tensor> inputs;
  uint32_t seed = 1;
  for (const Shape& shape : layer_case.input_shapes) {
    inputs.push_back(layer_case.integer_input
                         ? ops::cast(ops::mul(testing::random_tensor(shape, seed++, 0.0f, 1.0f),
                                              ops::fill({}, 6.0, DType::kFloat32)),
                                     DType::kInt32)
                         : testing::random_tensor(shape, seed++));
  }
  GradientTape tape;
  const Tensor output = inputs.size() == 1 ? (*layer)(inputs.front(), layer_case.training)
                                           : (*layer)(inputs, layer_case.training);
  EXPECT_EQ(output.dtype(), policy.compute_dtype()) << layer_case.name;
  for (const float value : as_floats(output)) ASSERT_TRUE(std::isfinite(value)) << layer_case.name;
  const std::vector<Variable> weights = layer->trainable_weights();
  for (const Variable& weight : layer->weights()) EXPECT_EQ(weight.dtype(), DType::kFloat32) << weight.name();
  if (!weights.empty()) {
    const Tensor loss = ops::reduce_sum(ops::cast(output, DType::kFloat32));
    const std::vector<Tensor> gradients = tape.gradient(loss, weights);
    for (size_t index = 0; index < weights.size(); ++index) {
      ASSERT_TRUE(gradients[index].defined()) << weights[index].name();
      EXPECT_EQ(gradients[index].dtype(), DType::kFloat32) << weights[index].name();
    }
  }
  // A symbolic call gives the dtype the eager call gave.
  std::shared_ptr<Layer> symbolic = layer_case.make();
  std::vector<KerasTensor> symbolic_inputs;
  for (const Tensor& input : inputs) {
    const auto& dims = input.shape().dims();
    symbolic_inputs.push_back(Input(LayerShape(dims.begin() + 1, dims.end()), InputOptions{.dtype = input.dtype()}));
  }
  const KerasTensor symbolic_output =
      symbolic_inputs.size() == 1 ? (*symbolic)(symbolic_inputs.front()) : (*symbolic)(symbolic_inputs);
  EXPECT_EQ(symbolic_output.dtype(), policy.compute_dtype()) << layer_case.name;
}

INSTANTIATE_TEST_SUITE_P(Layers, LayerUnderMixedPolicy,
                         ::testing::Combine(::testing::Values("mixed_bfloat16", "mixed_float16"),
                                            ::testing::Range(size_t{0}, layer_cases().size())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + layer_cases()[std::get<1>(info.param)].name;
                         });

TEST(MixedPrecision, DenseComputesOnWeightsRoundedToTheComputeDtype) {
  clear_session();
  const GlobalPolicyScope scope(DTypePolicy("mixed_bfloat16"));
  Dense dense(1, DenseOptions{.use_bias = false});
  const Tensor x = Tensor::from_vector<float>({1.0f, 1.0f}, Shape{1, 2});
  dense(x);
  // 1 + 2^-10 is not a bfloat16 (8 bits of mantissa): read in bfloat16 it is 1.
  testing::assign_weight(dense.weights().front(), Tensor::from_vector<float>({1.0f + 0x1p-10f, 2.0f}, Shape{2, 1}));
  EXPECT_EQ(as_floats(dense(x)), std::vector<float>{3.0f});
  // The variable itself keeps every bit.
  EXPECT_EQ(dense.weights().front().value().to_vector<float>()[0], 1.0f + 0x1p-10f);
}

TEST(MixedPrecision, NormalizationStatisticsAreFloat32) {
  clear_session();
  const GlobalPolicyScope scope(DTypePolicy("mixed_float16"));
  // Values whose squares overflow float16 (max 65504): statistics in 16 bits would be inf.
  BatchNormalization batch_norm;
  const Tensor x = Tensor::from_vector<float>({300.0f, -300.0f, 500.0f, -500.0f}, Shape{4, 1});
  const std::vector<float> y = as_floats(batch_norm(x, /*training=*/true));
  for (const float value : y) EXPECT_TRUE(std::isfinite(value));
  EXPECT_NEAR(y[0], 300.0f / std::sqrt(170000.0f), 1e-2);
  EXPECT_EQ(batch_norm.weights()[3].dtype(), DType::kFloat32);  // moving_variance
  const float moving_variance = batch_norm.weights()[3].value().to_vector<float>()[0];
  EXPECT_NEAR(moving_variance, 0.99f + 0.01f * 170000.0f, 1.0f);  // rank 2: the biased variance
  LayerNormalization layer_norm;
  const std::vector<float> z = as_floats(layer_norm(Tensor::from_vector<float>({300.0f, -300.0f}, Shape{1, 2})));
  EXPECT_NEAR(z[0], 1.0f, 1e-2);
}

TEST(MixedPrecision, AFloat32LastLayerGivesFloat32OutputsFromSixteenBitInputs) {
  clear_session();
  const GlobalPolicyScope scope(DTypePolicy("mixed_bfloat16"));
  auto hidden = std::make_shared<Dense>(4, DenseOptions{.activation = "relu"});
  auto last = std::make_shared<Dense>(2);
  last->set_dtype_policy(DTypePolicy("float32"));
  Sequential model({hidden, last});
  const Tensor y = model(testing::random_tensor(Shape{3, 5}, 7));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(model.output_shape(), (LayerShape{kUnknownDim, 2}));
  EXPECT_EQ(model.outputs().front().dtype(), DType::kFloat32);
}

// Losses are float32 whatever the predictions' dtype, and training under a
// mixed policy moves the float32 variables by float32 gradients, eagerly and
// compiled, to nearly the same place.
TEST(MixedPrecision, TrainingKeepsFloat32WeightsAndLossesEagerAndCompiled) {
  std::vector<std::vector<float>> final_weights;
  for (const bool jit_compile : {false, true}) {
    clear_session();
    set_random_seed(5);
    const GlobalPolicyScope scope(DTypePolicy("mixed_bfloat16"));
    Sequential model({std::make_shared<Dense>(8, DenseOptions{.activation = "relu"}), std::make_shared<Dense>(3)});
    model.build({kUnknownDim, 4});
    model.compile("sgd", std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}), {},
                  CompileOptions{.jit_compile = jit_compile});
    const Tensor x = testing::random_tensor(Shape{16, 4}, 11);
    const Tensor y = Tensor::from_vector<int32_t>({0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, Shape{16});
    double first_loss = 0, last_loss = 0;
    for (int step = 0; step < 30; ++step) {
      const Logs logs = model.train_step(x, y);
      if (step == 0) first_loss = logs.at("loss");
      last_loss = logs.at("loss");
    }
    EXPECT_LT(last_loss, first_loss) << "jit_compile " << jit_compile;
    for (const Variable& weight : model.weights()) EXPECT_EQ(weight.dtype(), DType::kFloat32);
    final_weights.push_back(model.weights().front().value().to_vector<float>());
  }
  ASSERT_EQ(final_weights[0].size(), final_weights[1].size());
  for (size_t index = 0; index < final_weights[0].size(); ++index) {
    EXPECT_NEAR(final_weights[0][index], final_weights[1][index], 1e-2) << index;
  }
}

TEST(MixedPrecision, KerasFilesKeepEveryLayersPolicy) {
  clear_session();
  TemporaryFolder folder;
  {
    const GlobalPolicyScope scope(DTypePolicy("mixed_bfloat16"));
    auto last = std::make_shared<Dense>(2);
    last->set_dtype_policy(DTypePolicy("float32"));
    Sequential model({std::make_shared<Dense>(4), std::make_shared<BatchNormalization>(), last});
    model.build({kUnknownDim, 3});
    saving::save_model(model, folder.file("mixed.keras"));
  }
  clear_session();
  std::unique_ptr<Model> loaded = saving::load_model(folder.file("mixed.keras"));  // under the float32 policy
  EXPECT_EQ(loaded->dtype_policy().name(), "mixed_bfloat16");
  ASSERT_EQ(loaded->layers().size(), 3u);
  EXPECT_EQ(loaded->layers()[0]->dtype_policy().name(), "mixed_bfloat16");
  EXPECT_EQ(loaded->layers()[1]->dtype_policy().name(), "mixed_bfloat16");
  EXPECT_EQ(loaded->layers()[2]->dtype_policy().name(), "float32");
  EXPECT_EQ((*loaded)(testing::random_tensor(Shape{2, 3}, 3)).dtype(), DType::kFloat32);
}

TEST(MixedPrecision, AnUnknownPolicyInAKerasFileNamesTheFileAndTheLayer) {
  clear_session();
  TemporaryFolder folder;
  Sequential model({std::make_shared<Dense>(2, DenseOptions{.name = "head"})});
  model.build({kUnknownDim, 3});
  saving::save_model(model, folder.file("model.keras"));
  write_edited_keras_file(folder.file("model.keras"), folder.file("bad.keras"), "\"float32\"}", "\"mixed_float64\"}");
  try {
    saving::load_model(folder.file("bad.keras"));
    FAIL() << "an unknown dtype policy was accepted";
  } catch (const InvalidArgumentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("bad.keras"), std::string::npos) << message;
    EXPECT_NE(message.find("mixed_float64"), std::string::npos) << message;
  }
}

// The emulated TPU stores a bfloat16 tensor in 2 bytes in HBM, as the chip
// does: one compiled training step of the tutorial CNN at batch 256 moves at
// most 0.6x the float32 step's HBM bytes under mixed_bfloat16 (the float32
// weights and their updates are what keeps it above one half).
int64_t tutorial_cnn_step_hbm_bytes(const std::string& policy) {
  std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) return -1;
  clear_session();
  set_random_seed(3);
  const GlobalPolicyScope scope{DTypePolicy(policy)};
  DeviceScope on_tpu("/TPU:0");
  Sequential model({std::make_shared<Conv2D>(32, 3, Conv2DOptions{.activation = "relu"}), std::make_shared<MaxPooling2D>(),
                    std::make_shared<Conv2D>(64, 3, Conv2DOptions{.activation = "relu"}), std::make_shared<MaxPooling2D>(),
                    std::make_shared<Flatten>(), std::make_shared<Dense>(64, DenseOptions{.activation = "relu"}),
                    std::make_shared<Dense>(10)});
  model.build({kUnknownDim, 28, 28, 1});
  model.compile("sgd", std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}), {},
                CompileOptions{.jit_compile = true});
  const Tensor x = testing::random_tensor(Shape{256, 28, 28, 1}, 5, 0.0f, 1.0f).to(find_device("/TPU:0"));
  std::vector<int32_t> labels(256);
  for (size_t index = 0; index < labels.size(); ++index) labels[index] = static_cast<int32_t>(index % 10);
  const Tensor y = Tensor::from_vector<int32_t>(labels, Shape{256}).to(find_device("/TPU:0"));
  model.train_step(x, y);  // traces
  model.train_step(x, y);
  emulator->reset_totals();
  model.train_step(x, y);  // one replay of the compiled step
  return emulator->totals(0).hbm_bytes;
}

TEST(MixedPrecision, TheEmulatedTpuMovesAtMostSixTenthsOfTheFloat32BytesPerStep) {
  const int64_t float32_bytes = tutorial_cnn_step_hbm_bytes("float32");
  if (float32_bytes < 0) GTEST_SKIP() << "the tpu_sim plugin did not load";
  const int64_t mixed_bytes = tutorial_cnn_step_hbm_bytes("mixed_bfloat16");
  ASSERT_GT(float32_bytes, 0);
  EXPECT_LE(static_cast<double>(mixed_bytes), 0.6 * static_cast<double>(float32_bytes))
      << "mixed_bfloat16 " << mixed_bytes << " bytes, float32 " << float32_bytes;
  RecordProperty("hbm_bytes_ratio", std::to_string(static_cast<double>(mixed_bytes) / static_cast<double>(float32_bytes)));
}

// Under the bfloat16 and float16 policies the variables themselves are
// 16-bit: .weights.h5 files hold them as TensorFlow writes them (float16 as
// h5py's 2-byte float, bfloat16 as Keras's 2-byte opaque type), both ways,
// and float32 weights load into them cast, as Keras's assign casts.
class SixteenBitWeights : public ::testing::TestWithParam<std::string> {};

TEST_P(SixteenBitWeights, WeightsFilesReadAndWriteAsTensorFlowDoes) {
  const std::string policy = GetParam();
  auto dense_model = [&] {
    clear_session();
    const GlobalPolicyScope scope{DTypePolicy(policy)};
    auto model = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(2)});
    model->build({kUnknownDim, 3});
    return model;
  };
  std::unique_ptr<Sequential> model = dense_model();
  EXPECT_EQ(model->weights()[0].dtype(), DTypePolicy(policy).variable_dtype());
  model->load_weights(golden("mixed_precision/dense_" + policy + ".weights.h5"));
  const auto values = saving::read_safetensors_file(golden("mixed_precision/dense_" + policy + "_values.safetensors"));
  EXPECT_EQ(as_floats(model->weights()[0].value()), tensor_named(values, "kernel").to_vector<float>());
  EXPECT_EQ(as_floats(model->weights()[1].value()), tensor_named(values, "bias").to_vector<float>());

  TemporaryFolder folder;
  model->save_weights(folder.file("copy.weights.h5"));
  std::unique_ptr<Sequential> copy = dense_model();
  copy->load_weights(folder.file("copy.weights.h5"));
  EXPECT_EQ(as_floats(copy->weights()[0].value()), as_floats(model->weights()[0].value()));
  const std::string python = std::string(ACCEL_SOURCE_DIR) + "/bench/.venv-tensorflow/bin/python";
  if (std::filesystem::exists(python)) {
    // h5py sees the dtype TensorFlow wrote.
    const std::string command = "TF_CPP_MIN_LOG_LEVEL=3 " + python + " -c \"import h5py; f = h5py.File('" +
                                folder.file("copy.weights.h5") +
                                "'); print(f['layers/dense/vars/0'].dtype.str)\" > " + folder.file("dtype.txt");
    ASSERT_EQ(std::system(command.c_str()), 0);
    EXPECT_EQ(testing::read_text(folder.file("dtype.txt")), policy == "float16" ? "<f2\n" : "|V2\n");
  }

  // float32 weights into the 16-bit model: cast.
  clear_session();
  Sequential float32_model({std::make_shared<Dense>(2)});
  float32_model.build({kUnknownDim, 3});
  float32_model.save_weights(folder.file("float32.weights.h5"));
  copy->load_weights(folder.file("float32.weights.h5"));
  EXPECT_EQ(copy->weights()[0].value().dtype(), DTypePolicy(policy).variable_dtype());
  EXPECT_EQ(as_floats(copy->weights()[0].value()),
            as_floats(ops::cast(float32_model.weights()[0].value(), DTypePolicy(policy).variable_dtype())));
}

INSTANTIATE_TEST_SUITE_P(Policies, SixteenBitWeights, ::testing::Values("bfloat16", "float16"));

// Loss scaling (LossScaleOptimizer, Keras 3's dynamic scale). A small
// mixed_float16 model whose float16 gradients underflow to zero unscaled:
// inputs ~1e-4 and targets 0 make d(loss)/d(output) ~3e-6, and the first
// kernel's gradient is a sum of products ~2e-10, below float16's smallest
// subnormal (6e-8). Its true value is ~1e-8, so a large learning rate makes
// the update visible in the float32 weights.
struct UnderflowingModel {
  std::unique_ptr<Sequential> model;
  Tensor x, y;
};

UnderflowingModel underflowing_model(bool auto_scale_loss, bool jit_compile,
                                     std::shared_ptr<Optimizer> optimizer = std::make_shared<SGD>(SGDOptions{.learning_rate = 1e4}),
                                     const std::string& policy = "mixed_float16") {
  clear_session();
  set_random_seed(9);
  const GlobalPolicyScope scope{DTypePolicy(policy)};
  UnderflowingModel made;
  made.model = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(8, DenseOptions{.use_bias = false}), std::make_shared<Dense>(1, DenseOptions{.use_bias = false})});
  made.model->build({kUnknownDim, 4});
  made.model->compile(std::move(optimizer), "mse", {},
                      CompileOptions{.jit_compile = jit_compile, .auto_scale_loss = auto_scale_loss});
  made.x = ops::mul(testing::random_tensor(Shape{64, 4}, 21), ops::fill({}, 1e-4, DType::kFloat32));
  made.y = ops::zeros(Shape{64, 1}, DType::kFloat32);
  return made;
}

TEST(LossScaling, CompileWrapsTheOptimizerUnderMixedFloat16Only) {
  EXPECT_NE(dynamic_cast<const LossScaleOptimizer*>(&underflowing_model(true, false).model->optimizer()), nullptr);
  EXPECT_EQ(dynamic_cast<const LossScaleOptimizer*>(&underflowing_model(false, false).model->optimizer()), nullptr);
  clear_session();
  const GlobalPolicyScope scope(DTypePolicy("mixed_bfloat16"));
  Sequential model({std::make_shared<Dense>(2)});
  model.build({kUnknownDim, 3});
  model.compile("sgd", "mse");
  EXPECT_EQ(dynamic_cast<const LossScaleOptimizer*>(&model.optimizer()), nullptr);
}

TEST(LossScaling, GradientsThatUnderflowInFloat16TrainOnlyWhenScaled) {
  UnderflowingModel unscaled = underflowing_model(false, false);
  const std::vector<float> before = unscaled.model->weights().front().value().to_vector<float>();
  unscaled.model->train_step(unscaled.x, unscaled.y);
  EXPECT_EQ(unscaled.model->weights().front().value().to_vector<float>(), before) << "float16 gradients should underflow";

  UnderflowingModel reference = underflowing_model(false, false, std::make_shared<SGD>(SGDOptions{.learning_rate = 1e4}),
                                                   "float32");
  EXPECT_EQ(reference.model->weights().front().value().to_vector<float>(), before);  // the same start
  reference.model->train_step(reference.x, reference.y);
  const std::vector<float> expected = reference.model->weights().front().value().to_vector<float>();

  UnderflowingModel scaled = underflowing_model(true, false);
  scaled.model->train_step(scaled.x, scaled.y);
  const std::vector<float> after = scaled.model->weights().front().value().to_vector<float>();
  // The scaled float16 step moves each weight as the float32 step does, to float16's precision.
  double largest_step = 0, worst = 0;
  for (size_t index = 0; index < before.size(); ++index) {
    largest_step = std::max(largest_step, static_cast<double>(std::abs(expected[index] - before[index])));
    worst = std::max(worst, static_cast<double>(std::abs(after[index] - expected[index])));
  }
  EXPECT_GT(largest_step, 1e-5);
  EXPECT_LE(worst, 2e-2 * largest_step);
  const auto& optimizer = dynamic_cast<const LossScaleOptimizer&>(scaled.model->optimizer());
  EXPECT_EQ(optimizer.iterations(), 1);
  EXPECT_EQ(optimizer.step_counter(), 1);
  EXPECT_EQ(optimizer.dynamic_scale(), 32768.0);
}

// The scale halves on every non-finite step (the update skipped), doubles
// after dynamic_growth_steps finite ones, and compiled steps do exactly what
// eager ones do.
TEST(LossScaling, TheScaleAdaptsAndSkipsExactlyTheNonFiniteUpdatesEagerAndCompiled) {
  std::vector<std::vector<float>> final_weights;
  for (const bool jit_compile : {false, true}) {
    auto optimizer = std::make_shared<LossScaleOptimizer>(
        std::make_shared<SGD>(SGDOptions{.learning_rate = 1e4, .momentum = 0.9}),
        LossScaleOptimizerOptions{.initial_scale = 0x1p40, .dynamic_growth_steps = 3});
    UnderflowingModel made = underflowing_model(true, jit_compile, optimizer);
    // 2^40 overflows float16 in the backward pass: halved until it does not.
    std::vector<double> scales;
    int64_t skipped = 0;
    for (int step = 0; step < 40; ++step) {
      const int64_t iterations = optimizer->iterations();
      const std::vector<float> before = made.model->weights().front().value().to_vector<float>();
      made.model->train_step(made.x, made.y);
      scales.push_back(optimizer->dynamic_scale());
      if (optimizer->iterations() == iterations) {
        ++skipped;
        EXPECT_EQ(made.model->weights().front().value().to_vector<float>(), before) << "step " << step;
        EXPECT_EQ(optimizer->step_counter(), 0);
      }
    }
    EXPECT_GT(skipped, 0) << "jit_compile " << jit_compile;
    EXPECT_EQ(optimizer->iterations(), 40 - skipped);
    // Halved once per skipped step; then doubled after every 3 finite steps in
    // a row (until it overflows again and halves).
    EXPECT_LT(scales[static_cast<size_t>(skipped) - 1], 0x1p40);
    // A forced non-finite gradient (an infinite input) skips exactly one update.
    const int64_t iterations = optimizer->iterations();
    const double scale = optimizer->dynamic_scale();
    const std::vector<float> before = made.model->weights().front().value().to_vector<float>();
    std::vector<float> poisoned = made.x.to_vector<float>();
    poisoned[5] = std::numeric_limits<float>::infinity();
    made.model->train_step(Tensor::from_vector<float>(poisoned, made.x.shape()), made.y);
    EXPECT_EQ(optimizer->iterations(), iterations);
    EXPECT_EQ(optimizer->dynamic_scale(), scale / 2);
    EXPECT_EQ(made.model->weights().front().value().to_vector<float>(), before);
    made.model->train_step(made.x, made.y);
    EXPECT_EQ(optimizer->iterations(), iterations + 1);
    EXPECT_NE(made.model->weights().front().value().to_vector<float>(), before);
    final_weights.push_back(made.model->weights().front().value().to_vector<float>());
  }
  EXPECT_EQ(final_weights[0], final_weights[1]) << "compiled and eager loss scaling should agree bitwise";
}

// The step counter and the scale are optimizer variables: a training
// checkpoint (ModelCheckpoint, BackupAndRestore) saves and restores them
// with the inner optimizer's.
TEST(LossScaling, ItsStateTravelsInTrainingCheckpoints) {
  auto make_optimizer = [] {
    return std::make_shared<LossScaleOptimizer>(std::make_shared<SGD>(SGDOptions{.learning_rate = 1e4, .momentum = 0.5}),
                                                LossScaleOptimizerOptions{.initial_scale = 0x1p40});
  };
  UnderflowingModel made = underflowing_model(true, false, make_optimizer());
  for (int step = 0; step < 30; ++step) made.model->train_step(made.x, made.y);
  const auto& trained = dynamic_cast<const LossScaleOptimizer&>(made.model->optimizer());
  ASSERT_LT(trained.dynamic_scale(), 0x1p40);  // it overflowed and halved
  const std::vector<Variable> variables = trained.variables();
  ASSERT_GE(variables.size(), 3u);
  EXPECT_EQ(variables[0].name(), "loss_scale_optimizer/step_counter:0");
  EXPECT_EQ(variables[1].name(), "loss_scale_optimizer/dynamic_scale:0");
  TemporaryFolder folder;
  saving::save_checkpoint(*made.model, folder.file("checkpoint.safetensors"), {.include_optimizer = true});

  UnderflowingModel fresh = underflowing_model(true, false, make_optimizer());
  saving::load_checkpoint(*fresh.model, folder.file("checkpoint.safetensors"), {.include_optimizer = true});
  const auto& restored = dynamic_cast<const LossScaleOptimizer&>(fresh.model->optimizer());
  EXPECT_EQ(restored.dynamic_scale(), trained.dynamic_scale());
  EXPECT_EQ(restored.step_counter(), trained.step_counter());
  EXPECT_EQ(restored.iterations(), trained.iterations());
  // Both go on identically.
  made.model->train_step(made.x, made.y);
  fresh.model->train_step(fresh.x, fresh.y);
  EXPECT_EQ(fresh.model->weights().front().value().to_vector<float>(),
            made.model->weights().front().value().to_vector<float>());
}

// TensorFlow 2.21's mixed_bfloat16 models (golden/mixed_precision/): the
// .keras loads with its policies, computes TensorFlow's outputs to bfloat16
// rounding, and 20 SGD steps from TensorFlow's weights on TensorFlow's
// batches follow TensorFlow's losses within 2e-2 relative; the losses differ
// from the float32 policy's, and the trained model, saved, loads in
// TensorFlow with accel's predictions.
class TensorFlowMixedModel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { clear_session(); }
};

TEST_P(TensorFlowMixedModel, LoadsWithItsPoliciesAndComputesTensorFlowsOutputs) {
  const std::string stem = GetParam();
  const std::string policy = stem.substr(stem.find('_') + 1);
  // The residual and separable CNNs end in a Dense of dtype="float32"; the tutorial CNN does not.
  const bool float32_head_model = !stem.starts_with("cnn");
  std::unique_ptr<Model> model = saving::load_model(golden("mixed_precision/" + stem + ".keras"));
  for (const std::shared_ptr<Layer>& layer : model->layers()) {
    if (layer->class_name() == "InputLayer") continue;
    const bool float32_head = float32_head_model && layer.get() == model->layers().back().get();
    EXPECT_EQ(layer->dtype_policy().name(), float32_head ? "float32" : policy) << layer->name();
  }
  const auto forward = saving::read_safetensors_file(golden("mixed_precision/" + stem + "_forward.safetensors"));
  const Tensor y = (*model)(tensor_named(forward, "x"), false);
  EXPECT_EQ(y.dtype(), float32_head_model ? DType::kFloat32 : DTypePolicy(policy).compute_dtype());
  const std::vector<float> expected = tensor_named(forward, "y").to_vector<float>();
  const std::vector<float> got = as_floats(y);
  ASSERT_EQ(got.size(), expected.size());
  double worst = 0, largest = 0;
  for (size_t index = 0; index < got.size(); ++index) {
    worst = std::max(worst, static_cast<double>(std::abs(got[index] - expected[index])));
    largest = std::max(largest, static_cast<double>(std::abs(expected[index])));
  }
  // A few bfloat16 steps (2^-8 relative each) of the largest output.
  EXPECT_LE(worst, 4.0 * 0x1p-8 * largest) << stem;

  // Saved again, every layer's policy and every symbolic tensor's dtype are
  // written as TensorFlow wrote them (its "shared_object_id"s are Python
  // object ids, left out; so are the InputLayers, whose dtype is float32).
  TemporaryFolder folder;
  saving::save_model(*model, folder.file("copy.keras"));
  auto layers_of = [](const std::string& path) {
    nlohmann::json config = nlohmann::json::parse(saving::read_zip_archive(path).at("config.json"));
    const auto without_ids = [](nlohmann::json policy) {
      if (policy.is_object()) policy.erase("shared_object_id");
      return policy;
    };
    std::map<std::string, nlohmann::json> layers;
    for (const nlohmann::json& layer : config["config"]["layers"]) {
      if (layer["class_name"] == "InputLayer") continue;
      nlohmann::json dtypes = nlohmann::json::array();
      for (const nlohmann::json& node : layer.value("inbound_nodes", nlohmann::json::array())) {
        for (const nlohmann::json& argument : node["args"]) {
          for (const nlohmann::json& tensor : argument.is_array() ? argument : nlohmann::json::array({argument})) {
            dtypes.push_back(tensor["config"]["dtype"]);
          }
        }
      }
      layers[layer["config"]["name"].get<std::string>()] = {{"dtype", without_ids(layer["config"]["dtype"])},
                                                            {"inputs", dtypes}};
    }
    return std::make_pair(without_ids(config["config"].value("dtype", nlohmann::json())), layers);
  };
  const auto [written_model_policy, written] = layers_of(folder.file("copy.keras"));
  const auto [golden_model_policy, expected_layers] = layers_of(golden("mixed_precision/" + stem + ".keras"));
  EXPECT_EQ(written_model_policy, golden_model_policy);
  EXPECT_EQ(written, expected_layers);
}

std::vector<float> train_twenty_steps(Model& model) {
  const auto batches = saving::read_safetensors_file(golden("keras3/train_batches.safetensors"));
  const std::vector<uint8_t> pixels = tensor_named(batches, "train_pixels").to_vector<uint8_t>();
  const std::vector<int32_t> labels = tensor_named(batches, "train_labels").to_vector<int32_t>();
  constexpr size_t kBatchPixels = 16 * 28 * 28;
  std::vector<float> losses;
  for (size_t step = 0; step < 20; ++step) {
    std::vector<float> images(kBatchPixels);
    for (size_t index = 0; index < kBatchPixels; ++index) {
      images[index] = static_cast<float>(pixels[step * kBatchPixels + index]) / 255.0f;
    }
    const std::vector<int32_t> batch_labels(labels.begin() + static_cast<std::ptrdiff_t>(step * 16),
                                            labels.begin() + static_cast<std::ptrdiff_t>(step * 16 + 16));
    model.reset_metrics();
    const Logs logs = model.train_step(Tensor::from_vector<float>(images, Shape{16, 28, 28, 1}),
                                       Tensor::from_vector<int32_t>(batch_labels, Shape{16}));
    losses.push_back(static_cast<float>(logs.at("loss")));
  }
  return losses;
}

TEST_P(TensorFlowMixedModel, TwentySgdStepsFollowTensorFlowsLosses) {
  const std::string stem = GetParam();
  const std::string policy = stem.substr(stem.find('_') + 1);
  const auto golden_losses = saving::read_safetensors_file(golden("mixed_precision/" + stem + "_train.safetensors"));
  const std::vector<float> expected = tensor_named(golden_losses, "losses").to_vector<float>();
  ASSERT_EQ(expected.size(), 20u);
  auto sparse_crossentropy = [] {
    return std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true});
  };
  std::unique_ptr<Model> model = saving::load_model(golden("mixed_precision/" + stem + ".keras"));
  model->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.01}), sparse_crossentropy(), {"accuracy"});
  // Keras wraps the optimizer of a mixed_float16 model in a LossScaleOptimizer.
  EXPECT_EQ(dynamic_cast<const LossScaleOptimizer*>(&model->optimizer()) != nullptr, policy == "mixed_float16");
  const std::vector<float> losses = train_twenty_steps(*model);
  for (size_t step = 0; step < 20; ++step) {
    EXPECT_NEAR(losses[step], expected[step], 2e-2 * std::abs(expected[step])) << stem << " step " << step;
  }
  // The same weights under the float32 policy train differently.
  clear_session();
  TemporaryFolder folder;
  write_edited_keras_file(golden("mixed_precision/" + stem + ".keras"), folder.file("float32.keras"), policy, "float32");
  std::unique_ptr<Model> float32_model = saving::load_model(folder.file("float32.keras"));
  float32_model->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.01}), sparse_crossentropy(), {"accuracy"});
  const std::vector<float> float32_losses = train_twenty_steps(*float32_model);
  int differing = 0;
  for (size_t step = 0; step < 20; ++step) differing += float32_losses[step] != losses[step] ? 1 : 0;
  EXPECT_GE(differing, 15) << "the mixed policy's losses should not be the float32 policy's";

  // Saved, the trained model loads in TensorFlow and predicts what accel predicts.
  const std::string trained = folder.file("trained.keras");
  saving::save_model(*model, trained);
  const Tensor x = tensor_named(
      saving::read_safetensors_file(golden("mixed_precision/" + stem + "_forward.safetensors")), "x");
  const Tensor y = ops::cast((*model)(x, false), DType::kFloat32);
  const auto verdict = accel::testing::check_keras_file_with_tensorflow(trained, x, y, /*tolerance=*/5e-2);
  if (!verdict) GTEST_SKIP() << "no TensorFlow environment (bench/.venv-tensorflow)";
  EXPECT_EQ(verdict->status, 0) << verdict->output;
}

INSTANTIATE_TEST_SUITE_P(Models, TensorFlowMixedModel,
                         ::testing::Values("cnn_mixed_bfloat16", "residual_mixed_bfloat16", "cnn_mixed_float16",
                                           "separable_mixed_bfloat16", "attention_mixed_bfloat16"));

}  // namespace
}  // namespace accel::keras
