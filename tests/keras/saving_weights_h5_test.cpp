// Keras 3's .weights.h5 written and read by accel: the group layout Keras 3
// uses (class names in snake_case, numbered per class; InputLayer groups in
// Functional models only; sublayers of MultiHeadAttention; nested models),
// bitwise round trips, and the errors for files that do not fit the model.
// The files TensorFlow 2.21 wrote are read in saving_keras3_goldens_test.cpp.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/weights_h5.hpp>
#include <accel/keras/sequential.hpp>

#include <gtest/gtest.h>

#include <fstream>

#include "hdf5_file.hpp"
#include "saving_test_support.hpp"

namespace accel::keras {
namespace {

using testing::TemporaryFolder;
using testing::toy_classifier;
using testing::weight_values;

// Every dataset path below `group`, recursively, with its shape.
void list_datasets(const saving::Hdf5File& file, const std::string& group, std::vector<std::string>& out) {
  for (const std::string& member : file.members(group)) {
    const std::string path = group.empty() ? member : group + "/" + member;
    if (file.has_dataset(path)) {
      out.push_back(path + " " + file.read_dataset(path).shape.to_string());
    } else {
      list_datasets(file, path, out);
    }
  }
}

std::vector<std::string> datasets_of(const std::string& path) {
  std::vector<std::string> datasets;
  list_datasets(saving::Hdf5File::open(path), "", datasets);
  return datasets;
}

// Input(6) -> Dense(4, name "first") and Dense(4) -> Add -> Dense(2): two
// layers of one class, a layer named apart from its class, an InputLayer.
std::unique_ptr<Model> residual_model() {
  KerasTensor input = Input({6}, {.name = "features"});
  KerasTensor a = std::make_shared<Dense>(4, DenseOptions{.name = "first"})->operator()(input);
  KerasTensor b = std::make_shared<Dense>(4)->operator()(input);
  KerasTensor sum = std::make_shared<Add>()->operator()({a, b});
  KerasTensor output = std::make_shared<Dense>(2)->operator()(sum);
  return std::make_unique<Model>(std::vector<KerasTensor>{input}, std::vector<KerasTensor>{output}, "residual");
}

class WeightsH5Test : public ::testing::Test {
 protected:
  void SetUp() override {
    clear_session();
    set_random_seed(11);
  }
  TemporaryFolder folder_;
};

TEST_F(WeightsH5Test, SequentialLayersAreGroupedByClassAsKeras3Does) {
  auto model = toy_classifier();
  const std::string path = folder_.file("toy.weights.h5");
  model->save_weights(path);
  // The compiled model's Adam state too, as Keras 3's save_weights writes it:
  // iteration, learning rate, then momentum and velocity per variable.
  EXPECT_EQ(datasets_of(path),
            (std::vector<std::string>{"layers/dense/vars/0 (4, 8)", "layers/dense/vars/1 (8,)",
                                      "layers/dense_1/vars/0 (8, 3)", "layers/dense_1/vars/1 (3,)",
                                      "optimizer/vars/0 ()", "optimizer/vars/1 ()", "optimizer/vars/2 (4, 8)",
                                      "optimizer/vars/3 (4, 8)", "optimizer/vars/4 (8,)", "optimizer/vars/5 (8,)",
                                      "optimizer/vars/6 (8, 3)", "optimizer/vars/7 (8, 3)", "optimizer/vars/8 (3,)",
                                      "optimizer/vars/9 (3,)"}));
  const saving::Hdf5File file = saving::Hdf5File::open(path);
  EXPECT_EQ(file.string_attribute("optimizer/vars", "name"), "adam");
  EXPECT_EQ(file.string_attribute("layers/dense_1/vars", "name"), "dense_1");
  EXPECT_EQ(file.string_attribute("vars", "name"), model->name());
  EXPECT_FALSE(file.has_group("layers/input_layer"));  // Sequential: no InputLayer group
}

TEST_F(WeightsH5Test, FunctionalModelsHaveInputGroupsAndNameLayersByClass) {
  auto model = residual_model();
  const std::string path = folder_.file("residual.weights.h5");
  model->save_weights(path);
  EXPECT_EQ(datasets_of(path),
            (std::vector<std::string>{"layers/dense/vars/0 (6, 4)", "layers/dense/vars/1 (4,)",
                                      "layers/dense_1/vars/0 (6, 4)", "layers/dense_1/vars/1 (4,)",
                                      "layers/dense_2/vars/0 (4, 2)", "layers/dense_2/vars/1 (2,)"}));
  const saving::Hdf5File file = saving::Hdf5File::open(path);
  EXPECT_EQ(file.string_attribute("layers/dense/vars", "name"), "first");  // the layer's own name
  EXPECT_EQ(file.string_attribute("layers/input_layer/vars", "name"), "features");
  EXPECT_TRUE(file.has_group("layers/add/vars"));  // weightless layers keep (empty) groups
}

TEST_F(WeightsH5Test, RoundTripIsBitwise) {
  auto trained = residual_model();
  for (Variable weight : trained->weights()) {
    std::vector<float> values(weight.shape().element_count());
    for (size_t index = 0; index < values.size(); ++index) values[index] = 0.001f * float(index) - 0.37f;
    weight.assign(Tensor::from_vector<float>(values, weight.shape(), weight.device()));
  }
  const std::string path = folder_.file("residual.weights.h5");
  trained->save_weights(path);
  clear_session();
  auto fresh = residual_model();
  ASSERT_NE(weight_values(*fresh), weight_values(*trained));
  fresh->load_weights(path);
  EXPECT_EQ(weight_values(*fresh), weight_values(*trained));
}

TEST_F(WeightsH5Test, MultiHeadAttentionVariablesLiveInItsSublayers) {
  KerasTensor input = Input({5, 8});
  auto attention = std::make_shared<MultiHeadAttention>(2, 4);
  KerasTensor output = attention->operator()({input, input});
  Model model({input}, {output});
  const std::string path = folder_.file("mha.weights.h5");
  model.save_weights(path);
  const std::vector<std::string> datasets = datasets_of(path);
  const std::vector<std::string> expected{
      "layers/multi_head_attention/key_dense/vars/0 (8, 2, 4)",
      "layers/multi_head_attention/key_dense/vars/1 (2, 4)",
      "layers/multi_head_attention/output_dense/vars/0 (2, 4, 8)",
      "layers/multi_head_attention/output_dense/vars/1 (8,)",
      "layers/multi_head_attention/query_dense/vars/0 (8, 2, 4)",
      "layers/multi_head_attention/query_dense/vars/1 (2, 4)",
      "layers/multi_head_attention/value_dense/vars/0 (8, 2, 4)",
      "layers/multi_head_attention/value_dense/vars/1 (2, 4)"};
  EXPECT_EQ(datasets, expected);
  const saving::Hdf5File file = saving::Hdf5File::open(path);
  EXPECT_EQ(file.string_attribute("layers/multi_head_attention/output_dense/vars", "name"), "attention_output");
  EXPECT_TRUE(file.has_group("layers/multi_head_attention/_softmax/vars"));
}

TEST_F(WeightsH5Test, NestedModelsNestTheirLayers) {
  auto inner = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(3)}, "inner");
  KerasTensor input = Input({4});
  KerasTensor output = inner->operator()(std::make_shared<Dense>(4)->operator()(input));
  Model model({input}, {output});
  const std::string path = folder_.file("nested.weights.h5");
  model.save_weights(path);
  EXPECT_EQ(datasets_of(path), (std::vector<std::string>{"layers/dense/vars/0 (4, 4)", "layers/dense/vars/1 (4,)",
                                                         "layers/sequential/layers/dense/vars/0 (4, 3)",
                                                         "layers/sequential/layers/dense/vars/1 (3,)"}));
  EXPECT_EQ(saving::Hdf5File::open(path).string_attribute("layers/sequential/vars", "name"), "inner");
}

TEST_F(WeightsH5Test, MismatchesAreNamedByTheirPathInOneError) {
  auto model = toy_classifier();
  const std::string path = folder_.file("other.weights.h5");
  Sequential other({std::make_shared<Dense>(9), std::make_shared<Dense>(3), std::make_shared<Dense>(2)});
  other.build({kUnknownDim, 4});
  other.save_weights(path);
  const std::vector<std::vector<float>> before = weight_values(*model);
  try {
    model->load_weights(path);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("'layers/dense/vars/0' (file float32 (4, 9), model float32 (4, 8))"), std::string::npos)
        << message;
    EXPECT_NE(message.find("not in the model: 'layers/dense_2'"), std::string::npos) << message;
  }
  EXPECT_EQ(weight_values(*model), before);  // nothing assigned
}

TEST_F(WeightsH5Test, FilesThatAreNotKerasWeightsAreTypedErrors) {
  auto model = toy_classifier();
  EXPECT_THROW(model->load_weights(folder_.file("absent.weights.h5")), NotFoundError);
  const std::string text = folder_.file("text.weights.h5");
  std::ofstream(text) << "not hdf5 at all";
  try {
    model->load_weights(text);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("not an HDF5 file"), std::string::npos) << error.what();
  }
  // An HDF5 file without Keras's groups.
  saving::Hdf5File other = saving::Hdf5File::create_in_memory("other.h5");
  other.write_dataset("data", {"data", DType::kFloat32, Shape{2}, std::vector<uint8_t>(8)});
  try {
    saving::load_weights_h5_image(*model, other.image(), "other.h5");
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("other.h5: not a Keras weights file"), std::string::npos) << error.what();
  }
  EXPECT_THROW(saving::load_weights_h5_image(*model, "garbage", "garbage.h5"), InvalidArgumentError);
}

}  // namespace
}  // namespace accel::keras
