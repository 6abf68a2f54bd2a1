// The reshaping layers (Reshape, Permute, RepeatVector, ZeroPadding2D,
// Cropping2D, UpSampling2D) and the global pooling layers GlobalMaxPooling2D,
// GlobalAveragePooling1D and GlobalMaxPooling1D: Keras 2's defaults and
// output shapes (unknown axes included), values on small hand-computed
// inputs, the errors for bad arguments and inputs, gradients against finite
// differences, and use inside a Functional model.
#include "layer_gradient_check.hpp"

#include <accel/autodiff/gradient_tape.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/layers/concatenate.hpp>
#include <accel/keras/layers/cropping2d.hpp>
#include <accel/keras/layers/global_average_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling2d.hpp>
#include <accel/keras/layers/permute.hpp>
#include <accel/keras/layers/repeat_vector.hpp>
#include <accel/keras/layers/reshape.hpp>
#include <accel/keras/layers/up_sampling2d.hpp>
#include <accel/keras/layers/zero_padding2d.hpp>
#include <accel/keras/layers.hpp>  // Dense
#include <accel/keras/model.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace accel::keras {
namespace {

constexpr int64_t kNone = kUnknownDim;

class ReshapingLayersTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

// 1, 2, ..., count in `shape`.
Tensor counting(const Shape& shape) {
  std::vector<float> values(static_cast<size_t>(shape.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
  return Tensor::from_vector<float>(values, shape);
}

// Runs `make_or_call`, expects an `ErrorType`, and checks that its message
// holds every one of `fragments` (the layer's name and what was expected).
template <typename ErrorType>
void expect_error(const std::function<void()>& make_or_call, std::initializer_list<std::string> fragments) {
  try {
    make_or_call();
    ADD_FAILURE() << "no error thrown";
  } catch (const ErrorType& error) {
    const std::string message = error.what();
    for (const std::string& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "\"" << fragment << "\" not in: " << message;
    }
  }
}

TEST_F(ReshapingLayersTest, KerasNames) {
  EXPECT_EQ(Reshape({2, 3}).name(), "reshape");
  EXPECT_EQ(Reshape({2, 3}).name(), "reshape_1");
  EXPECT_EQ(Permute({1}).name(), "permute");
  EXPECT_EQ(RepeatVector(2).name(), "repeat_vector");
  EXPECT_EQ(ZeroPadding2D().name(), "zero_padding2d");
  EXPECT_EQ(Cropping2D().name(), "cropping2d");
  EXPECT_EQ(UpSampling2D().name(), "up_sampling2d");
  EXPECT_EQ(GlobalMaxPooling2D().name(), "global_max_pooling2d");
  EXPECT_EQ(GlobalAveragePooling1D().name(), "global_average_pooling1d");
  EXPECT_EQ(GlobalMaxPooling1D().name(), "global_max_pooling1d");
  EXPECT_EQ(GlobalMaxPooling1D().class_name(), "GlobalMaxPooling1D");
  EXPECT_EQ(Reshape({4}, "flat").name(), "flat");
  EXPECT_EQ(UpSampling2D({.name = "up"}).name(), "up");
}

// ---- Reshape ----

TEST_F(ReshapingLayersTest, ReshapeKeepsTheBatchAndInfersTheMinusOne) {
  Reshape reshape({3, -1});
  const Tensor y = reshape(counting({2, 6}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(y.to_vector<float>(), counting({2, 6}).to_vector<float>());  // row-major order kept
  EXPECT_EQ(reshape.output_shape(), (LayerShape{kNone, 3, 2}));
  EXPECT_EQ(reshape.count_params(), 0);
  EXPECT_EQ(Reshape({-1})(counting({2, 2, 3})).shape(), (Shape{2, 6}));
}

TEST_F(ReshapingLayersTest, ReshapeOutputShapesFollowKeras) {
  EXPECT_EQ(Reshape({2, 3}).compute_output_shape({kNone, 6}), (LayerShape{kNone, 2, 3}));
  EXPECT_EQ(Reshape({-1}).compute_output_shape({kNone, 2, 3}), (LayerShape{kNone, 6}));
  EXPECT_EQ(Reshape({2, -1, 2}).compute_output_shape({8, 12}), (LayerShape{8, 2, 3, 2}));
  // An unknown input axis leaves the -1 unknown (Keras turns -1 into None).
  EXPECT_EQ(Reshape({-1, 3}).compute_output_shape({kNone, kNone, 3}), (LayerShape{kNone, kNone, 3}));
  EXPECT_EQ(Reshape({3, 4}).compute_output_shape({kNone, kNone}), (LayerShape{kNone, 3, 4}));
}

TEST_F(ReshapingLayersTest, ReshapeRejectsBadTargetsAndSizes) {
  expect_error<InvalidArgumentError>([] { Reshape({-1, 2, -1}); },
                                     {"Reshape 'reshape'", "at most one -1", "(-1, 2, -1)"});
  expect_error<InvalidArgumentError>([] { Reshape({2, -3}); }, {"Reshape", "(2, -3)"});
  expect_error<InvalidArgumentError>([] { Reshape({4, -1}).compute_output_shape({kNone, 6}); },
                                     {"Reshape 'reshape_", "total size must be unchanged", "(None, 6)", "(4, -1)"});
  expect_error<InvalidArgumentError>([] { Reshape({5}).compute_output_shape({kNone, 2, 3}); },
                                     {"(None, 2, 3)", "(5,)"});
  // An eager call checks every input, not only the one the layer was built from.
  Reshape reshape({3, -1});
  reshape(counting({2, 6}));
  expect_error<InvalidArgumentError>([&] { reshape(counting({2, 5})); }, {"Reshape 'reshape", "(2, 5)"});
}

// ---- Permute ----

TEST_F(ReshapingLayersTest, PermuteReordersTheAxesAfterTheBatch) {
  Permute swap({2, 1});
  const Tensor y = swap(counting({1, 2, 3}));  // [[1, 2, 3], [4, 5, 6]] transposed
  EXPECT_EQ(y.shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // dims (3, 1, 2): output axis 1 is input axis 3. x[0, i, j, k] = 1 + 6i + 3j + k on (1, 2, 2, 3).
  const Tensor z = Permute({3, 1, 2})(counting({1, 2, 2, 3}));
  EXPECT_EQ(z.shape(), (Shape{1, 3, 2, 2}));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12}));
}

TEST_F(ReshapingLayersTest, PermuteOutputShapesMoveUnknownAxesToo) {
  EXPECT_EQ(Permute({3, 1, 2}).compute_output_shape({kNone, 2, 3, 4}), (LayerShape{kNone, 4, 2, 3}));
  EXPECT_EQ(Permute({2, 1}).compute_output_shape({kNone, kNone, 5}), (LayerShape{kNone, 5, kNone}));
  EXPECT_EQ(Permute({1}).compute_output_shape({7, 5}), (LayerShape{7, 5}));
}

TEST_F(ReshapingLayersTest, PermuteRejectsDimsThatAreNotAOneBasedPermutation) {
  expect_error<InvalidArgumentError>([] { Permute({0, 1}); }, {"Permute 'permute'", "permutation of 1..2", "(0, 1)"});
  expect_error<InvalidArgumentError>([] { Permute({1, 3}); }, {"(1, 3)"});
  expect_error<InvalidArgumentError>([] { Permute({2, 2}); }, {"(2, 2)"});
  expect_error<InvalidArgumentError>([] { Permute({2, 1}).compute_output_shape({kNone, 2, 3, 4}); },
                                     {"Permute 'permute", "rank 3", "(None, 2, 3, 4)"});
}

// ---- RepeatVector ----

TEST_F(ReshapingLayersTest, RepeatVectorRepeatsEachExampleNTimes) {
  RepeatVector repeat(3);
  const Tensor y = repeat(Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(repeat.output_shape(), (LayerShape{kNone, 3, 2}));
  EXPECT_EQ(RepeatVector(4).compute_output_shape({kNone, kNone}), (LayerShape{kNone, 4, kNone}));
  EXPECT_EQ(repeat.n(), 3);
}

TEST_F(ReshapingLayersTest, RepeatVectorRejectsBadArguments) {
  expect_error<InvalidArgumentError>([] { RepeatVector(0); }, {"RepeatVector 'repeat_vector'", "at least 1", "0"});
  expect_error<InvalidArgumentError>([] { RepeatVector(2).compute_output_shape({kNone, 3, 4}); },
                                     {"RepeatVector", "(batch, features)", "(None, 3, 4)"});
}

// ---- ZeroPadding2D and Cropping2D ----

TEST_F(ReshapingLayersTest, MarginsTakeKerasThreeSpellings) {
  EXPECT_EQ(Margins2D(2), Margins2D({2, 2}, {2, 2}));
  EXPECT_EQ(Margins2D(1, 3), Margins2D({1, 1}, {3, 3}));
  EXPECT_EQ(ZeroPadding2D().padding(), Margins2D(1));  // Keras's (1, 1)
  EXPECT_EQ(Cropping2D().cropping(), Margins2D(0));    // Keras's ((0, 0), (0, 0))
  const ZeroPadding2D per_side({.padding = {{1, 2}, {3, 4}}});
  EXPECT_EQ(per_side.padding().top, 1);
  EXPECT_EQ(per_side.padding().bottom, 2);
  EXPECT_EQ(per_side.padding().left, 3);
  EXPECT_EQ(per_side.padding().right, 4);
  EXPECT_EQ(per_side.padding().to_string(), "((1, 2), (3, 4))");
}

TEST_F(ReshapingLayersTest, ZeroPaddingAddsZeroRowsAndColumns) {
  // [[1, 2], [3, 4]] with one row on top and two columns on the right.
  ZeroPadding2D pad({.padding = {{1, 0}, {0, 2}}});
  const Tensor y = pad(counting({1, 2, 2, 1}));
  EXPECT_EQ(y.shape(), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  // The default pads every side by one; channels are kept apart.
  const Tensor z = ZeroPadding2D()(counting({1, 1, 1, 2}));
  EXPECT_EQ(z.shape(), (Shape{1, 3, 3, 2}));
  std::vector<float> expected(18, 0.0f);
  expected[8] = 1;  // the centre cell (1, 1), channel 0
  expected[9] = 2;
  EXPECT_EQ(z.to_vector<float>(), expected);
}

TEST_F(ReshapingLayersTest, ZeroPaddingOutputShapes) {
  EXPECT_EQ(ZeroPadding2D().compute_output_shape({kNone, 5, 6, 3}), (LayerShape{kNone, 7, 8, 3}));
  EXPECT_EQ(ZeroPadding2D({.padding = {1, 2}}).compute_output_shape({kNone, 5, 6, 3}), (LayerShape{kNone, 7, 10, 3}));
  EXPECT_EQ(ZeroPadding2D({.padding = {{0, 3}, {2, 0}}}).compute_output_shape({4, kNone, 6, 3}),
            (LayerShape{4, kNone, 8, 3}));
}

TEST_F(ReshapingLayersTest, CroppingRemovesRowsAndColumns) {
  // 1..12 as 3 rows of 4; keep rows 1..2 and column 1.
  Cropping2D crop({.cropping = {{1, 0}, {1, 2}}});
  const Tensor y = crop(counting({1, 3, 4, 1}));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{6, 10}));
  EXPECT_EQ(Cropping2D({.cropping = 1})(counting({1, 4, 4, 1})).to_vector<float>(),
            (std::vector<float>{6, 7, 10, 11}));
  EXPECT_EQ(Cropping2D()(counting({2, 2, 2, 2})).to_vector<float>(), counting({2, 2, 2, 2}).to_vector<float>());
}

TEST_F(ReshapingLayersTest, CroppingOutputShapes) {
  EXPECT_EQ(Cropping2D({.cropping = {1, 2}}).compute_output_shape({kNone, 5, 6, 3}), (LayerShape{kNone, 3, 2, 3}));
  EXPECT_EQ(Cropping2D({.cropping = {{0, 1}, {2, 0}}}).compute_output_shape({kNone, 5, kNone, 3}),
            (LayerShape{kNone, 4, kNone, 3}));
}

TEST_F(ReshapingLayersTest, PaddingAndCroppingRejectBadArguments) {
  expect_error<InvalidArgumentError>([] { ZeroPadding2D({.padding = {{1, -1}, {0, 0}}}); },
                                     {"ZeroPadding2D 'zero_padding2d'", ">= 0", "((1, -1), (0, 0))"});
  expect_error<InvalidArgumentError>([] { Cropping2D({.cropping = -2}); },
                                     {"Cropping2D 'cropping2d'", ">= 0", "((-2, -2), (-2, -2))"});
  expect_error<InvalidArgumentError>([] { Cropping2D({.cropping = {1, 2}}).compute_output_shape({kNone, 5, 4, 3}); },
                                     {"Cropping2D", "none of the 4 columns", "(None, 5, 4, 3)"});
  expect_error<InvalidArgumentError>([] { ZeroPadding2D().compute_output_shape({kNone, 5, 3}); },
                                     {"ZeroPadding2D", "NHWC", "(None, 5, 3)"});
  expect_error<InvalidArgumentError>([] { Cropping2D()(counting({2, 3})); }, {"Cropping2D", "NHWC", "(None, 3)"});
}

// ---- UpSampling2D ----

TEST_F(ReshapingLayersTest, UpSamplingRepeatsRowsAndColumns) {
  UpSampling2D up({.size = {2, 3}});
  const Tensor y = up(counting({1, 2, 2, 1}));
  EXPECT_EQ(y.shape(), (Shape{1, 4, 6, 1}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2,  //
                                                      1, 1, 1, 2, 2, 2,  //
                                                      3, 3, 3, 4, 4, 4,  //
                                                      3, 3, 3, 4, 4, 4}));
  // Default 2x2; the channels of a cell travel together. One row of cells (1, 2) and (3, 4).
  const Tensor z = UpSampling2D()(counting({1, 1, 2, 2}));
  EXPECT_EQ(z.shape(), (Shape{1, 2, 4, 2}));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
  EXPECT_EQ(UpSampling2D({.size = {3, 1}}).compute_output_shape({kNone, 4, kNone, 2}),
            (LayerShape{kNone, 12, kNone, 2}));
}

TEST_F(ReshapingLayersTest, UpSamplingSupportsNearestOnly) {
  expect_error<UnimplementedError>([] { UpSampling2D({.interpolation = "bilinear"}); },
                                   {"UpSampling2D 'up_sampling2d'", "\"bilinear\"", "not implemented", "nearest"});
  expect_error<UnimplementedError>([] { UpSampling2D({.interpolation = "bicubic"}); }, {"\"bicubic\""});
  expect_error<InvalidArgumentError>([] { UpSampling2D({.interpolation = "cubic"}); },
                                     {"UpSampling2D", "must be one of", "\"cubic\""});
  expect_error<InvalidArgumentError>([] { UpSampling2D({.size = {0, 2}}); }, {"UpSampling2D", "size", "(0, 2)"});
}

// ---- data_format: channels_last only ----

TEST_F(ReshapingLayersTest, OnlyChannelsLastIsSupported) {
  expect_error<UnimplementedError>([] { ZeroPadding2D({.data_format = "channels_first"}); },
                                   {"ZeroPadding2D 'zero_padding2d'", "\"channels_first\"", "only \"channels_last\""});
  expect_error<UnimplementedError>([] { Cropping2D({.data_format = "channels_first"}); },
                                   {"Cropping2D", "channels_last"});
  expect_error<UnimplementedError>([] { UpSampling2D({.data_format = "channels_first"}); }, {"UpSampling2D"});
  expect_error<UnimplementedError>([] { GlobalMaxPooling2D({.data_format = "channels_first"}); },
                                   {"GlobalMaxPooling2D"});
  expect_error<UnimplementedError>([] { GlobalAveragePooling1D({.data_format = "channels_first"}); },
                                   {"GlobalAveragePooling1D 'global_average_pooling1d'", "channels_last"});
  expect_error<UnimplementedError>([] { GlobalMaxPooling1D({.data_format = "channels_first"}); },
                                   {"GlobalMaxPooling1D"});
  expect_error<InvalidArgumentError>([] { ZeroPadding2D({.data_format = "NHWC"}); },
                                     {"\"NHWC\"", "only \"channels_last\""});
  // Keras lowercases the value; "" stands for Keras's None (the default, channels_last).
  EXPECT_NO_THROW(UpSampling2D({.data_format = "Channels_Last"}));
  EXPECT_NO_THROW(GlobalMaxPooling1D({.data_format = ""}));
}

// ---- Global pooling ----

TEST_F(ReshapingLayersTest, GlobalMaxPooling2DTakesEachChannelsMaximum) {
  // Channel c of example n holds 10 * n + c + {0, 1, 2, 3}: maximum 10 * n + c + 3.
  std::vector<float> values;
  for (int n = 0; n < 2; ++n)
    for (int cell = 0; cell < 4; ++cell)
      for (int c = 0; c < 3; ++c) values.push_back(static_cast<float>(10 * n + c + (cell * 3) % 4));
  const Tensor x = Tensor::from_vector<float>(values, Shape{2, 2, 2, 3});
  GlobalMaxPooling2D pool;
  const Tensor y = pool(x);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 4, 5, 13, 14, 15}));
  EXPECT_EQ(pool.output_shape(), (LayerShape{kNone, 3}));
  GlobalMaxPooling2D kept({.keepdims = true});
  EXPECT_EQ(kept(x).shape(), (Shape{2, 1, 1, 3}));
  EXPECT_EQ(kept.compute_output_shape({kNone, kNone, kNone, 3}), (LayerShape{kNone, 1, 1, 3}));
  expect_error<InvalidArgumentError>([] { GlobalMaxPooling2D().compute_output_shape({kNone, 4, 3}); },
                                     {"GlobalMaxPooling2D 'global_max_pooling2d", "NHWC", "(None, 4, 3)"});
}

TEST_F(ReshapingLayersTest, GlobalPooling1DReducesTheStepsAxis) {
  // Example 0: steps (1, 2), (3, -4), (5, 0); example 1: (0, 0), (-1, 1), (4, 8).
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, -4, 5, 0, 0, 0, -1, 1, 4, 8}, Shape{2, 3, 2});
  GlobalAveragePooling1D average;
  const Tensor mean = average(x);
  EXPECT_EQ(mean.shape(), (Shape{2, 2}));
  const std::vector<float> means = mean.to_vector<float>();
  const std::vector<float> expected_means{3, -2.0f / 3.0f, 1, 3};
  for (size_t i = 0; i < means.size(); ++i) EXPECT_FLOAT_EQ(means[i], expected_means[i]) << i;
  GlobalMaxPooling1D max;
  EXPECT_EQ(max(x).to_vector<float>(), (std::vector<float>{5, 2, 4, 8}));
  EXPECT_EQ(GlobalMaxPooling1D({.keepdims = true})(x).shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(GlobalAveragePooling1D({.keepdims = true})(x).shape(), (Shape{2, 1, 2}));
}

TEST_F(ReshapingLayersTest, GlobalPooling1DOutputShapesAndErrors) {
  EXPECT_EQ(GlobalAveragePooling1D().compute_output_shape({kNone, kNone, 4}), (LayerShape{kNone, 4}));
  EXPECT_EQ(GlobalMaxPooling1D({.keepdims = true}).compute_output_shape({kNone, 7, 4}), (LayerShape{kNone, 1, 4}));
  expect_error<InvalidArgumentError>([] { GlobalAveragePooling1D().compute_output_shape({kNone, 2, 3, 4}); },
                                     {"GlobalAveragePooling1D 'global_average_pooling1d",
                                      "(batch, steps, features)", "(None, 2, 3, 4)"});
  expect_error<InvalidArgumentError>([] { GlobalMaxPooling1D()(counting({2, 3})); },
                                     {"GlobalMaxPooling1D", "(batch, steps, features)", "(None, 3)"});
}

// ---- Gradients ----

TEST_F(ReshapingLayersTest, GradientsMatchFiniteDifferences) {
  // Distinct values 0.05 apart: a 0.01 step never changes which element is a maximum.
  const Tensor image = testing::distinct_tensor({2, 4, 5, 2}, 11);
  const Tensor sequence = testing::distinct_tensor({2, 5, 3}, 12);
  const Tensor vectors = testing::distinct_tensor({2, 4}, 13);
  struct Case {
    std::shared_ptr<Layer> layer;
    Tensor input;
  };
  const std::vector<Case> cases{
      {std::make_shared<Reshape>(std::vector<int64_t>{-1, 4}), image},
      {std::make_shared<Permute>(std::vector<int32_t>{3, 1, 2}), image},
      {std::make_shared<RepeatVector>(3), vectors},
      {std::make_shared<ZeroPadding2D>(ZeroPadding2DOptions{.padding = {{1, 0}, {2, 1}}}), image},
      {std::make_shared<Cropping2D>(Cropping2DOptions{.cropping = {{1, 0}, {0, 2}}}), image},
      {std::make_shared<UpSampling2D>(UpSampling2DOptions{.size = {2, 3}}), image},
      {std::make_shared<GlobalMaxPooling2D>(), image},
      {std::make_shared<GlobalAveragePooling1D>(), sequence},
      {std::make_shared<GlobalMaxPooling1D>(GlobalMaxPooling1DOptions{.keepdims = true}), sequence},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.layer->class_name());
    testing::expect_layer_gradients_match_finite_differences(
        [&](const Tensor& input) { return (*test.layer)(input); }, test.input, {});
  }
}

TEST_F(ReshapingLayersTest, RepeatingLayersSumTheGradientsOfTheirCopies) {
  // d sum(y) / dx counts the copies of each input element: 2 * 3 for UpSampling2D of size (2, 3), n for RepeatVector.
  const Tensor image = testing::random_tensor({1, 2, 2, 1}, 14);
  const Tensor vectors = testing::random_tensor({2, 3}, 15);
  GradientTape tape;
  tape.watch(image);
  tape.watch(vectors);
  const Tensor loss = ops::add(ops::reduce_sum(UpSampling2D({.size = {2, 3}})(image)),
                               ops::reduce_sum(RepeatVector(4)(vectors)));
  const std::vector<Tensor> gradients = tape.gradient(loss, std::vector<Tensor>{image, vectors});
  EXPECT_EQ(gradients[0].to_vector<float>(), std::vector<float>(4, 6.0f));
  EXPECT_EQ(gradients[1].to_vector<float>(), std::vector<float>(6, 4.0f));
}

// ---- Functional API ----

TEST_F(ReshapingLayersTest, EveryLayerWorksInAFunctionalModel) {
  // An image branch and a sequence branch, joined: every layer of this file is called on a KerasTensor.
  const KerasTensor image = Input({4, 4, 2});
  const KerasTensor sequence = Input({12});
  auto pad = std::make_shared<ZeroPadding2D>();
  auto crop = std::make_shared<Cropping2D>(Cropping2DOptions{.cropping = {{2, 1}, {1, 2}}});
  auto up = std::make_shared<UpSampling2D>();
  auto permute = std::make_shared<Permute>(std::vector<int32_t>{2, 1, 3});
  auto image_max = std::make_shared<GlobalMaxPooling2D>();
  auto to_steps = std::make_shared<Reshape>(std::vector<int64_t>{4, -1});
  auto step_mean = std::make_shared<GlobalAveragePooling1D>(GlobalAveragePooling1DOptions{.keepdims = true});
  auto flatten = std::make_shared<Reshape>(std::vector<int64_t>{-1});
  auto repeat = std::make_shared<RepeatVector>(5);
  auto step_max = std::make_shared<GlobalMaxPooling1D>();
  auto join = std::make_shared<Concatenate>();

  KerasTensor x = (*pad)(image);
  EXPECT_EQ(x.shape(), (LayerShape{kNone, 6, 6, 2}));
  x = (*crop)(x);
  EXPECT_EQ(x.shape(), (LayerShape{kNone, 3, 3, 2}));
  x = (*up)(x);
  EXPECT_EQ(x.shape(), (LayerShape{kNone, 6, 6, 2}));
  x = (*permute)(x);
  x = (*image_max)(x);
  EXPECT_EQ(x.shape(), (LayerShape{kNone, 2}));
  KerasTensor s = (*to_steps)(sequence);
  EXPECT_EQ(s.shape(), (LayerShape{kNone, 4, 3}));
  s = (*step_mean)(s);
  EXPECT_EQ(s.shape(), (LayerShape{kNone, 1, 3}));
  s = (*flatten)(s);
  EXPECT_EQ(s.shape(), (LayerShape{kNone, 3}));
  s = (*repeat)(s);
  EXPECT_EQ(s.shape(), (LayerShape{kNone, 5, 3}));
  s = (*step_max)(s);
  EXPECT_EQ(s.shape(), (LayerShape{kNone, 3}));
  const KerasTensor joined = (*join)({x, s});
  Model model({image, sequence}, joined);
  EXPECT_EQ(model.output_shape(), (LayerShape{kNone, 5}));
  EXPECT_EQ(crop->output_shape(), (LayerShape{kNone, 3, 3, 2}));

  // The model computes what the layers compute called one after the other.
  const Tensor images = testing::random_tensor({3, 4, 4, 2}, 21);
  const Tensor sequences = testing::random_tensor({3, 12}, 22);
  const Tensor image_part = (*image_max)((*permute)((*up)((*crop)((*pad)(images)))));
  const Tensor sequence_part = (*step_max)((*repeat)((*flatten)((*step_mean)((*to_steps)(sequences)))));
  const Tensor expected = ops::concat({image_part, sequence_part}, 1);
  const std::vector<Tensor> predicted = model.predict(std::vector<Tensor>{images, sequences}, {.verbose = 0});
  ASSERT_EQ(predicted.size(), 1u);
  EXPECT_EQ(predicted[0].shape(), (Shape{3, 5}));
  EXPECT_EQ(predicted[0].to_vector<float>(), expected.to_vector<float>());

  // Gradients flow back through the whole graph to both inputs.
  GradientTape tape;
  tape.watch(images);
  tape.watch(sequences);
  const Tensor loss = ops::reduce_sum(model.call_outputs(std::vector<Tensor>{images, sequences}).front());
  const std::vector<Tensor> gradients = tape.gradient(loss, std::vector<Tensor>{images, sequences});
  ASSERT_TRUE(gradients[0].defined());
  ASSERT_TRUE(gradients[1].defined());
  EXPECT_EQ(gradients[0].shape(), images.shape());
  EXPECT_EQ(gradients[1].shape(), sequences.shape());
}

// One chain of all nine layers with a Dense head, trained with compiled steps
// and eagerly from the same weights.
struct ChainRun {
  std::vector<double> losses;
  std::vector<float> kernel;
  std::string eager_reason;
};

ChainRun train_chain(bool jit_compile) {
  clear_session();
  set_random_seed(5);
  const KerasTensor inputs = Input({4, 4, 2});
  KerasTensor x = (*std::make_shared<ZeroPadding2D>())(inputs);                                    // (6, 6, 2)
  x = (*std::make_shared<Cropping2D>(Cropping2DOptions{.cropping = {{2, 1}, {1, 2}}}))(x);        // (3, 3, 2)
  x = (*std::make_shared<UpSampling2D>())(x);                                                      // (6, 6, 2)
  x = (*std::make_shared<Permute>(std::vector<int32_t>{2, 1, 3}))(x);                              // (6, 6, 2)
  x = (*std::make_shared<GlobalMaxPooling2D>(GlobalMaxPooling2DOptions{.keepdims = true}))(x);     // (1, 1, 2)
  x = (*std::make_shared<Reshape>(std::vector<int64_t>{-1, 2}))(x);                                // (1, 2)
  x = (*std::make_shared<GlobalAveragePooling1D>())(x);                                            // (2,)
  x = (*std::make_shared<RepeatVector>(3))(x);                                                     // (3, 2)
  x = (*std::make_shared<GlobalMaxPooling1D>())(x);                                                // (2,)
  auto head = std::make_shared<Dense>(1);
  Model model(inputs, (*head)(x));
  model.compile("sgd", "mse", {}, {.jit_compile = jit_compile});
  const Tensor images = testing::random_tensor({8, 4, 4, 2}, 31);
  const Tensor targets = testing::random_tensor({8, 1}, 32);
  History history = model.fit(images, targets, {.epochs = 3, .batch_size = 4, .verbose = 0, .shuffle = false});
  ChainRun run{history.history["loss"], head->kernel().value().to_vector<float>(), ""};
  if (jit_compile && model.train_function() != nullptr) {
    run.eager_reason = model.train_function()->statistics().eager_reason;
  }
  return run;
}

TEST_F(ReshapingLayersTest, CompiledStepsTraceTheLayersAndTrainAsEagerly) {
  const ChainRun eager = train_chain(false);
  const ChainRun compiled = train_chain(true);
  EXPECT_EQ(compiled.eager_reason, "");
  ASSERT_EQ(compiled.losses.size(), eager.losses.size());
  for (size_t epoch = 0; epoch < eager.losses.size(); ++epoch) {
    EXPECT_NEAR(compiled.losses[epoch], eager.losses[epoch], 1e-5 * std::max(1.0, eager.losses[epoch])) << epoch;
  }
  ASSERT_EQ(compiled.kernel.size(), eager.kernel.size());
  for (size_t i = 0; i < eager.kernel.size(); ++i) EXPECT_NEAR(compiled.kernel[i], eager.kernel[i], 1e-5) << i;
}

}  // namespace
}  // namespace accel::keras
