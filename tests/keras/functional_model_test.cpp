// The Functional API: keras::Input, layers called on KerasTensors,
// Model(inputs, outputs) over any graph (a chain, a residual Add, a layer
// shared by two inputs, a layer used twice, several inputs and outputs), its
// layer and weight order, summary() against tables worked out with Keras's
// print_summary, predict, saving and the errors Keras raises.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace accel::keras {
namespace {

class FunctionalModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clear_session();
    set_random_seed(3);
  }
};

template <typename LayerType, typename... Arguments>
std::shared_ptr<LayerType> make(Arguments&&... arguments) {
  return std::make_shared<LayerType>(std::forward<Arguments>(arguments)...);
}

std::string summary_of(const Model& model) {
  std::ostringstream out;
  model.summary(out);
  return out.str();
}

std::vector<std::string> names_of(const std::vector<std::shared_ptr<Layer>>& layers) {
  std::vector<std::string> names;
  for (const auto& layer : layers) names.push_back(layer->name());
  return names;
}

std::vector<std::string> names_of(const std::vector<Variable>& weights) {
  std::vector<std::string> names;
  for (const Variable& weight : weights) names.push_back(weight.name());
  return names;
}

void expect_close(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  const std::vector<float> a = actual.to_vector<float>();
  const std::vector<float> b = expected.to_vector<float>();
  for (size_t index = 0; index < a.size(); ++index) EXPECT_NEAR(a[index], b[index], 1e-5) << index;
}

Tensor dense_reference(const Tensor& x, const Dense& dense) {
  return ops::add(ops::matmul(x, dense.kernel().value()), dense.bias().value());
}

// The TF beginner tutorial's MLP, written functionally.
Model functional_mlp() {
  KerasTensor inputs = Input({28, 28});
  KerasTensor x = (*make<Flatten>())(inputs);
  x = (*make<Dense>(128, DenseOptions{.activation = "relu"}))(x);
  KerasTensor outputs = (*make<Dense>(10))(x);
  return Model(inputs, outputs);
}

TEST_F(FunctionalModelTest, InputIsASymbolicTensorWithAnUnknownBatch) {
  const KerasTensor inputs = Input({28, 28, 1});
  EXPECT_EQ(inputs.shape(), (LayerShape{kUnknownDim, 28, 28, 1}));
  EXPECT_EQ(inputs.dtype(), DType::kFloat32);
  EXPECT_EQ(inputs.layer().name(), "input_1");
  EXPECT_EQ(inputs.layer().class_name(), "InputLayer");
  EXPECT_EQ(Input({3}, InputOptions{.batch_size = 8}).shape(), (LayerShape{8, 3}));
  EXPECT_EQ(Input({3}).layer().name(), "input_3");
  EXPECT_EQ(Input({3}, InputOptions{.name = "features"}).layer().name(), "features");
}

TEST_F(FunctionalModelTest, CallingALayerOnASymbolicTensorBuildsItAndRecordsTheCall) {
  const KerasTensor inputs = Input({5});
  auto dense = make<Dense>(3);
  EXPECT_FALSE(dense->built());
  const KerasTensor outputs = (*dense)(inputs);
  EXPECT_TRUE(dense->built());
  EXPECT_EQ(dense->kernel().shape(), (Shape{5, 3}));
  EXPECT_EQ(outputs.shape(), (LayerShape{kUnknownDim, 3}));
  EXPECT_EQ(&outputs.layer(), dense.get());
  EXPECT_EQ(outputs.node()->index(), 0u);
  EXPECT_EQ(&outputs.node()->inputs().front().layer(), &inputs.layer());
  EXPECT_EQ(outputs.to_string(), "KerasTensor(shape=(None, 3), dtype=float32, created by layer 'dense')");
  EXPECT_EQ(dense->inbound_nodes().size(), 1u);
}

TEST_F(FunctionalModelTest, ALayerNotHeldByASharedPointerCannotJoinAGraph) {
  Dense dense(3);
  EXPECT_THROW(dense(Input({5})), FailedPreconditionError);
}

TEST_F(FunctionalModelTest, ChainModelRunsItsLayersInOrder) {
  Model model = functional_mlp();
  EXPECT_EQ(model.class_name(), "Functional");
  EXPECT_EQ(model.name(), "model");
  EXPECT_TRUE(model.built());
  EXPECT_EQ(names_of(model.layers()), (std::vector<std::string>{"input_1", "flatten", "dense", "dense_1"}));
  EXPECT_EQ(names_of(model.weights()),
            (std::vector<std::string>{"dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"}));
  EXPECT_EQ(model.output_shape(), (LayerShape{kUnknownDim, 10}));
  EXPECT_EQ(model.count_params(), 101770);
  const Tensor x = ops::random_uniform({2, 28, 28}, 5);
  const Tensor expected = dense_reference(
      ops::relu(dense_reference(x.reshape(Shape{2, 784}), static_cast<const Dense&>(*model.layers()[2]))),
      static_cast<const Dense&>(*model.layers()[3]));
  expect_close(model(x), expected);
  expect_close(model.predict(x, {.batch_size = 1, .verbose = 0}), expected);
}

TEST_F(FunctionalModelTest, ChainSummaryIsTheSequentialTableWithTheInputLayer) {
  Model model = functional_mlp();
  const std::string expected =
      "Model: \"model\"\n"
      "_________________________________________________________________\n"
      " Layer (type)                Output Shape              Param #   \n"
      "=================================================================\n"
      " input_1 (InputLayer)        [(None, 28, 28)]          0         \n"
      "                                                                 \n"
      " flatten (Flatten)           (None, 784)               0         \n"
      "                                                                 \n"
      " dense (Dense)               (None, 128)               100480    \n"
      "                                                                 \n"
      " dense_1 (Dense)             (None, 10)                1290      \n"
      "                                                                 \n"
      "=================================================================\n"
      "Total params: 101770 (397.54 KB)\n"
      "Trainable params: 101770 (397.54 KB)\n"
      "Non-trainable params: 0 (0.00 Byte)\n"
      "_________________________________________________________________\n";
  EXPECT_EQ(summary_of(model), expected);
}

TEST_F(FunctionalModelTest, ResidualAddSummaryHasConnections) {
  const KerasTensor inputs = Input({16});
  const KerasTensor x = (*make<Dense>(16, DenseOptions{.activation = "relu"}))(inputs);
  const KerasTensor y = (*make<Dense>(16))(x);
  const KerasTensor sum = (*make<Add>())({x, y});
  const KerasTensor outputs = (*make<Dense>(4))(sum);
  Model model(inputs, outputs);
  const std::string expected =
"Model: \"model\"\n"
      "__________________________________________________________________________________________________\n"
      " Layer (type)                Output Shape                 Param #   Connected to                  \n"
      "==================================================================================================\n"
      " input_1 (InputLayer)        [(None, 16)]                 0         []                            \n"
      "                                                                                                  \n"
      " dense (Dense)               (None, 16)                   272       ['input_1[0][0]']             \n"
      "                                                                                                  \n"
      " dense_1 (Dense)             (None, 16)                   272       ['dense[0][0]']               \n"
      "                                                                                                  \n"
      " add (Add)                   (None, 16)                   0         ['dense[0][0]',               \n"
      "                                                                     'dense_1[0][0]']             \n"
      "                                                                                                  \n"
      " dense_2 (Dense)             (None, 4)                    68        ['add[0][0]']                 \n"
      "                                                                                                  \n"
      "==================================================================================================\n"
      "Total params: 612 (2.39 KB)\n"
      "Trainable params: 612 (2.39 KB)\n"
      "Non-trainable params: 0 (0.00 Byte)\n"
      "__________________________________________________________________________________________________\n";
  EXPECT_EQ(summary_of(model), expected);

  const Tensor data = ops::random_uniform({3, 16}, 9);
  const auto& first = static_cast<const Dense&>(*model.get_layer("dense"));
  const auto& second = static_cast<const Dense&>(*model.get_layer("dense_1"));
  const auto& last = static_cast<const Dense&>(*model.get_layer("dense_2"));
  EXPECT_THROW(model.get_layer("dense_3"), InvalidArgumentError);
  const Tensor hidden = ops::relu(dense_reference(data, first));
  expect_close(model(data), dense_reference(ops::add(hidden, dense_reference(hidden, second)), last));
}

TEST_F(FunctionalModelTest, SharedLayerHasOneSetOfWeightsAndTwoCalls) {
  const KerasTensor left = Input({4});
  const KerasTensor right = Input({4});
  auto shared = make<Dense>(8);
  const KerasTensor joined = (*make<Concatenate>())({(*shared)(left), (*shared)(right)});
  Model model({left, right}, joined, "siamese");
  EXPECT_EQ(names_of(model.layers()), (std::vector<std::string>{"input_1", "input_2", "dense", "concatenate"}));
  EXPECT_EQ(names_of(model.weights()), (std::vector<std::string>{"dense/kernel:0", "dense/bias:0"}));
  EXPECT_EQ(shared->inbound_nodes().size(), 2u);
  const std::string expected =
      "Model: \"siamese\"\n"
      "__________________________________________________________________________________________________\n"
      " Layer (type)                Output Shape                 Param #   Connected to                  \n"
      "==================================================================================================\n"
      " input_1 (InputLayer)        [(None, 4)]                  0         []                            \n"
      "                                                                                                  \n"
      " input_2 (InputLayer)        [(None, 4)]                  0         []                            \n"
      "                                                                                                  \n"
      " dense (Dense)               (None, 8)                    40        ['input_1[0][0]',             \n"
      "                                                                     'input_2[0][0]']             \n"
      "                                                                                                  \n"
      " concatenate (Concatenate)   (None, 16)                   0         ['dense[0][0]',               \n"
      "                                                                     'dense[1][0]']               \n"
      "                                                                                                  \n"
      "==================================================================================================\n"
      "Total params: 40 (160.00 Byte)\n"
      "Trainable params: 40 (160.00 Byte)\n"
      "Non-trainable params: 0 (0.00 Byte)\n"
      "__________________________________________________________________________________________________\n";
  EXPECT_EQ(summary_of(model), expected);

  const Tensor a = ops::random_uniform({5, 4}, 1);
  const Tensor b = ops::random_uniform({5, 4}, 2);
  const Tensor expected_output = ops::concat({dense_reference(a, *shared), dense_reference(b, *shared)}, 1);
  expect_close(model({a, b}), expected_output);
  const std::vector<Tensor> predicted = model.predict(std::vector<Tensor>{a, b}, {.batch_size = 2, .verbose = 0});
  ASSERT_EQ(predicted.size(), 1u);
  expect_close(predicted.front(), expected_output);
}

TEST_F(FunctionalModelTest, LayerUsedTwiceAppliesTheSameWeightsTwice) {
  const KerasTensor inputs = Input({4});
  auto dense = make<Dense>(4);
  Model model(inputs, (*dense)((*dense)(inputs)));
  EXPECT_EQ(names_of(model.layers()), (std::vector<std::string>{"input_1", "dense"}));
  EXPECT_EQ(model.weights().size(), 2u);
  const Tensor x = ops::random_uniform({3, 4}, 4);
  expect_close(model(x), dense_reference(dense_reference(x, *dense), *dense));
  // Called twice in the model: not a chain, so the table shows both calls.
  const std::string summary = summary_of(model);
  EXPECT_NE(summary.find("['input_1[0][0]',"), std::string::npos) << summary;
  EXPECT_NE(summary.find("'dense[0][0]']"), std::string::npos) << summary;
}

TEST_F(FunctionalModelTest, SeveralInputsAndOutputsPredictEveryOutput) {
  const KerasTensor image = Input({3}, InputOptions{.name = "image"});
  const KerasTensor meta = Input({2}, InputOptions{.name = "meta"});
  auto score = make<Dense>(1, DenseOptions{.name = "score"});
  auto kind = make<Dense>(3, DenseOptions{.name = "kind"});
  const KerasTensor score_output = (*score)(image);
  const KerasTensor kind_output = (*kind)((*make<Concatenate>())({image, meta}));
  Model model({image, meta}, {score_output, kind_output});
  EXPECT_EQ(model.inputs().size(), 2u);
  EXPECT_EQ(model.output_shapes(), (std::vector<LayerShape>{{kUnknownDim, 1}, {kUnknownDim, 3}}));
  EXPECT_TRUE(model.takes_list_input());

  const Tensor a = ops::random_uniform({7, 3}, 11);
  const Tensor b = ops::random_uniform({7, 2}, 12);
  const std::vector<Tensor> called = model.call_outputs({a, b});
  ASSERT_EQ(called.size(), 2u);
  expect_close(called[0], dense_reference(a, *score));
  expect_close(called[1], dense_reference(ops::concat({a, b}, 1), *kind));
  const std::vector<Tensor> predicted = model.predict(std::vector<Tensor>{a, b}, {.batch_size = 3, .verbose = 0});
  ASSERT_EQ(predicted.size(), 2u);
  expect_close(predicted[0], called[0]);
  expect_close(predicted[1], called[1]);
  EXPECT_THROW(model(a), InvalidArgumentError);  // two inputs needed

  model.compile("sgd", "mse");
  EXPECT_THROW(model.fit(a, ops::zeros({7, 1}), {.verbose = 0}), InvalidArgumentError);  // one tensor each needed
}

TEST_F(FunctionalModelTest, ModelIsALayerOfAnotherModel) {
  const KerasTensor inner_inputs = Input({4});
  auto inner = std::make_shared<Model>(inner_inputs, (*make<Dense>(2))(inner_inputs), "encoder");
  const KerasTensor inputs = Input({4});
  const KerasTensor outputs = (*make<Dense>(1))((*inner)(inputs));
  Model model(inputs, outputs);
  EXPECT_EQ(names_of(model.layers()), (std::vector<std::string>{"input_2", "encoder", "dense_1"}));
  EXPECT_EQ(model.weights().size(), 4u);
  EXPECT_NE(summary_of(model).find(" encoder (Functional)        (None, 2)                 10        "),
            std::string::npos)
      << summary_of(model);
  const Tensor x = ops::random_uniform({3, 4}, 6);
  expect_close(model(x), dense_reference((*inner)(x), static_cast<const Dense&>(*model.layers()[2])));
}

TEST_F(FunctionalModelTest, InputsOfTheWrongShapeAreRefused) {
  Model model = functional_mlp();
  EXPECT_THROW(model(ops::zeros({2, 28, 27})), InvalidArgumentError);
  EXPECT_THROW(model(ops::zeros({2, 784})), InvalidArgumentError);
  // A Sequential built from a shape runs on any input its layers accept, as Keras 2's.
  Sequential pooled({make<GlobalAveragePooling2D>(), make<Dense>(2)});
  pooled.build({kUnknownDim, 8, 8, 3});
  EXPECT_EQ(pooled(ops::zeros({1, 16, 16, 3})).shape(), (Shape{1, 2}));
}

TEST_F(FunctionalModelTest, DisconnectedGraphsAndNonInputsAreRefused) {
  const KerasTensor a = Input({4});
  const KerasTensor b = Input({4});
  const KerasTensor sum = (*make<Add>())({a, b});
  try {
    Model model(a, sum);
    FAIL() << "a graph that needs an input the model lacks was accepted";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("graph disconnected"), std::string::npos) << error.what();
  }
  const KerasTensor hidden = (*make<Dense>(3))(a);
  EXPECT_THROW(Model(hidden, (*make<Dense>(2))(hidden)), InvalidArgumentError);
}

TEST_F(FunctionalModelTest, UnusedInputsStillBelongToTheModel) {
  const KerasTensor used = Input({2});
  const KerasTensor unused = Input({3});
  Model model({used, unused}, (*make<Dense>(1))(used));
  // Keras puts an unused input at depth 0, before the layers there (its traversal index is -1).
  EXPECT_EQ(names_of(model.layers()), (std::vector<std::string>{"input_1", "input_2", "dense"}));
  const Tensor x = ops::random_uniform({2, 2}, 3);
  EXPECT_EQ(model({x, ops::zeros({2, 3})}).shape(), (Shape{2, 1}));
}

TEST_F(FunctionalModelTest, SaveAndLoadWeightsRoundTripAndMatchSequentialNames) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "accel_functional_weights_test";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const std::string path = (folder / "weights.safetensors").string();
  const Tensor x = ops::random_uniform({4, 28, 28}, 21);

  Model saved = functional_mlp();
  saved.save_weights(path);
  const std::vector<float> expected = saved(x).to_vector<float>();

  clear_session();
  set_random_seed(99);  // other initial weights, the same names
  Model loaded = functional_mlp();
  EXPECT_NE(loaded(x).to_vector<float>(), expected);
  loaded.load_weights(path);
  EXPECT_EQ(loaded(x).to_vector<float>(), expected);

  // The same names as the Sequential model of these layers: its file loads too.
  clear_session();
  Sequential sequential({make<Flatten>(), make<Dense>(128, DenseOptions{.activation = "relu"}), make<Dense>(10)});
  sequential.build({kUnknownDim, 28, 28});
  EXPECT_EQ(names_of(sequential.weights()), names_of(loaded.weights()));
  sequential.load_weights(path);
  EXPECT_EQ(sequential(x).to_vector<float>(), expected);
  std::filesystem::remove_all(folder);
}

TEST_F(FunctionalModelTest, SequentialIsAFunctionalGraphOnceBuilt) {
  Sequential model({make<Dense>(4), make<Dense>(2)});
  EXPECT_TRUE(model.inputs().empty());
  model.build({kUnknownDim, 3});
  ASSERT_EQ(model.inputs().size(), 1u);
  EXPECT_EQ(model.inputs().front().layer().name(), "dense_input");
  EXPECT_EQ(model.inputs().front().shape(), (LayerShape{kUnknownDim, 3}));
  EXPECT_EQ(&model.outputs().front().layer(), model.layers().back().get());
  EXPECT_EQ(names_of(model.layers()), (std::vector<std::string>{"dense", "dense_1"}));
  // A built Sequential is a layer of a Functional model like any other.
  auto inner = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{make<Dense>(2)});
  const KerasTensor inputs = Input({3});
  Model outer(inputs, (*inner)(inputs));
  EXPECT_EQ(outer.weights().size(), 2u);
}

}  // namespace
}  // namespace accel::keras
