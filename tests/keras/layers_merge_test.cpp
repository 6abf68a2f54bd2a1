// Merge layers (Add, Subtract, Multiply, Average, Concatenate): values,
// Keras 2's output shapes (broadcasting, None), gradients, and the errors
// Keras raises for a wrong number of inputs or incompatible shapes.
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

namespace accel::keras {
namespace {

class MergeLayersTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

Tensor matrix(std::vector<float> values) { return Tensor::from_vector<float>(values, Shape{2, 2}); }

TEST_F(MergeLayersTest, ElementwiseValues) {
  const Tensor a = matrix({1, 2, 3, 4});
  const Tensor b = matrix({10, 20, 30, 40});
  const Tensor c = matrix({-1, 0.5f, 2, 8});
  EXPECT_EQ(Add()({a, b, c}).to_vector<float>(), (std::vector<float>{10, 22.5f, 35, 52}));
  EXPECT_EQ(Subtract()({b, a}).to_vector<float>(), (std::vector<float>{9, 18, 27, 36}));
  EXPECT_EQ(Multiply()({a, b, c}).to_vector<float>(), (std::vector<float>{-10, 20, 180, 1280}));
  EXPECT_EQ(Average()({a, b, c}).to_vector<float>(), (std::vector<float>{10.0f / 3, 22.5f / 3, 35.0f / 3, 52.0f / 3}));
  // Keras 2.15 accepts a list of one; in C++ {a} would pick the one-tensor call, hence the vector.
  EXPECT_EQ(Add()(std::vector<Tensor>{a}).to_vector<float>(), a.to_vector<float>());
}

TEST_F(MergeLayersTest, ConcatenateJoinsAlongTheAxis) {
  const Tensor a = matrix({1, 2, 3, 4});
  const Tensor b = Tensor::from_vector<float>({5, 6}, Shape{2, 1});
  EXPECT_EQ(Concatenate()({a, b}).to_vector<float>(), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(Concatenate(0)({a, a}).shape(), (Shape{4, 2}));
  Concatenate layer(1);
  EXPECT_EQ(layer.compute_output_shapes({{kUnknownDim, 3, 4}, {kUnknownDim, 2, 4}}),
            (std::vector<LayerShape>{{kUnknownDim, 5, 4}}));
  EXPECT_EQ(layer.compute_output_shapes({{kUnknownDim, 3}, {kUnknownDim, kUnknownDim}}),
            (std::vector<LayerShape>{{kUnknownDim, kUnknownDim}}));
  EXPECT_THROW(layer.compute_output_shapes({{kUnknownDim, 3, 4}, {kUnknownDim, 2, 5}}), InvalidArgumentError);
  EXPECT_THROW(layer.compute_output_shapes({{kUnknownDim, 3, 4}, {kUnknownDim, 2}}), InvalidArgumentError);
}

TEST_F(MergeLayersTest, OutputShapesBroadcastAsKeras) {
  Add add;
  EXPECT_EQ(add.compute_output_shapes({{kUnknownDim, 1, 4}, {kUnknownDim, 3, 4}}),
            (std::vector<LayerShape>{{kUnknownDim, 3, 4}}));
  EXPECT_EQ(add.compute_output_shapes({{kUnknownDim, 3, 4}, {kUnknownDim, 4}}),
            (std::vector<LayerShape>{{kUnknownDim, 3, 4}}));
  EXPECT_EQ(add.compute_output_shapes({{8, kUnknownDim}, {kUnknownDim, 5}}), (std::vector<LayerShape>{{8, kUnknownDim}}));
  EXPECT_THROW(add.compute_output_shapes({{kUnknownDim, 3}, {kUnknownDim, 4}}), InvalidArgumentError);
  EXPECT_THROW(add.compute_output_shapes({{2, 3}, {4, 3}}), InvalidArgumentError);  // batch sizes differ
}

TEST_F(MergeLayersTest, SymbolicCallsGiveTheMergedShape) {
  const KerasTensor a = Input({3, 4});
  const KerasTensor b = Input({1, 4});
  EXPECT_EQ((*std::make_shared<Multiply>())({a, b}).shape(), (LayerShape{kUnknownDim, 3, 4}));
  EXPECT_EQ((*std::make_shared<Concatenate>(1))({a, b}).shape(), (LayerShape{kUnknownDim, 4, 4}));
}

TEST_F(MergeLayersTest, WrongInputCountsAreErrors) {
  const Tensor a = matrix({1, 2, 3, 4});
  EXPECT_THROW(Subtract()({a, a, a}), InvalidArgumentError);
  EXPECT_THROW(Subtract()({a}), InvalidArgumentError);
  EXPECT_THROW(Add()(a), InvalidArgumentError);                                  // not a list
  EXPECT_THROW((*std::make_shared<Add>())(Input({2})), InvalidArgumentError);   // not a list
  EXPECT_THROW(Add()(std::vector<Tensor>{}), InvalidArgumentError);
}

TEST_F(MergeLayersTest, GradientsFlowToEveryInput) {
  const Tensor a = matrix({1, 2, 3, 4});
  const Tensor b = matrix({5, 6, 7, 8});
  Variable first(a, "first");
  Variable second(b, "second");
  GradientTape tape;
  const Tensor merged = Multiply()({first.value(), second.value()});
  const Tensor loss = ops::reduce_sum(ops::add(merged, Average()({first.value(), second.value()})));
  const std::vector<Tensor> gradients = tape.gradient(loss, {first, second});
  EXPECT_EQ(gradients[0].to_vector<float>(), (std::vector<float>{5.5f, 6.5f, 7.5f, 8.5f}));
  EXPECT_EQ(gradients[1].to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f}));
}

TEST_F(MergeLayersTest, KerasNames) {
  EXPECT_EQ(Add().name(), "add");
  EXPECT_EQ(Add().name(), "add_1");
  EXPECT_EQ(Subtract().name(), "subtract");
  EXPECT_EQ(Multiply().class_name(), "Multiply");
  EXPECT_EQ(Average().name(), "average");
  EXPECT_EQ(Concatenate().name(), "concatenate");
  EXPECT_EQ(Concatenate().axis(), -1);
}

}  // namespace
}  // namespace accel::keras
