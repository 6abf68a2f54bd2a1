// Conv2D(groups=...), DepthwiseConv2D and Conv2DTranspose: Keras 2's output
// shapes, weights and errors, values against direct evaluations of the
// convolution sums in double, gradients against finite differences, and
// training with compiled steps as eagerly.
#include "layer_gradient_check.hpp"
#include "../common/batch_losses.hpp"

#include <accel/error.hpp>
#include <accel/function.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>  // Flatten, Dense
#include <accel/keras/layers/conv2d.hpp>
#include <accel/keras/layers/conv2d_transpose.hpp>
#include <accel/keras/layers/depthwise_conv2d.hpp>
#include <accel/keras/layers/separable_conv2d.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace accel::keras {
namespace {

class ConvVariantsTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

using Pair = std::array<int32_t, 2>;

// The zeros TensorFlow pads before the input of a "same" convolution along
// one axis: half the total, the odd one after.
int64_t same_pad_before(int64_t input, int64_t output, int64_t window, int64_t stride, int64_t dilation) {
  const int64_t dilated = (window - 1) * dilation + 1;
  return std::max<int64_t>(0, (output - 1) * stride + dilated - input) / 2;
}

struct Geometry {
  Pair strides{1, 1};
  Pair dilation{1, 1};
  bool same = false;
};

// The padding before the input for a forward convolution from `input` (N, H, W, .) to `output`.
std::array<int64_t, 2> pad_before(const Shape& input, const Shape& output, const Shape& kernel, const Geometry& g) {
  if (!g.same) return {0, 0};
  return {same_pad_before(input[1], output[1], kernel[0], g.strides[0], g.dilation[0]),
          same_pad_before(input[2], output[2], kernel[1], g.strides[1], g.dilation[1])};
}

size_t nhwc(const Shape& shape, int64_t n, int64_t i, int64_t j, int64_t c) {
  return static_cast<size_t>(((n * shape[1] + i) * shape[2] + j) * shape[3] + c);
}

// y[n,i,j,f] = b[f] + sum over r, s and the channels ci of f's group g = f / (F / groups) of
// x[n, i*stride - pad + r*dilation, ..., g * (C / groups) + ci] * w[r, s, ci, f] (zeros outside x).
std::vector<float> reference_grouped_conv2d(const Tensor& x, const Tensor& w, const Tensor& b, int64_t groups,
                                            const Shape& out, const Geometry& g) {
  const std::vector<float> xs = x.to_vector<float>(), ws = w.to_vector<float>(), bs = b.to_vector<float>();
  const Shape& xshape = x.shape();
  const int64_t R = w.shape()[0], S = w.shape()[1], group_channels = w.shape()[2], F = w.shape()[3];
  const auto pad = pad_before(xshape, out, w.shape(), g);
  std::vector<float> y;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t i = 0; i < out[1]; ++i)
      for (int64_t j = 0; j < out[2]; ++j)
        for (int64_t f = 0; f < F; ++f) {
          const int64_t group = f / (F / groups);
          double sum = bs[static_cast<size_t>(f)];
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s)
              for (int64_t ci = 0; ci < group_channels; ++ci) {
                const int64_t row = i * g.strides[0] - pad[0] + r * g.dilation[0];
                const int64_t col = j * g.strides[1] - pad[1] + s * g.dilation[1];
                if (row < 0 || row >= xshape[1] || col < 0 || col >= xshape[2]) continue;
                sum += static_cast<double>(xs[nhwc(xshape, n, row, col, group * group_channels + ci)]) *
                       ws[static_cast<size_t>(((r * S + s) * group_channels + ci) * F + f)];
              }
          y.push_back(static_cast<float>(sum));
        }
  return y;
}

// TensorFlow's depthwise_conv2d: y[n,i,j,c*M+m] = b[c*M+m] + sum over r, s of
// x[n, i*stride - pad + r*dilation, ..., c] * k[r, s, c, m].
std::vector<float> reference_depthwise_conv2d(const Tensor& x, const Tensor& k, const Tensor& b, const Shape& out,
                                              const Geometry& g) {
  const std::vector<float> xs = x.to_vector<float>(), ks = k.to_vector<float>(), bs = b.to_vector<float>();
  const Shape& xshape = x.shape();
  const int64_t R = k.shape()[0], S = k.shape()[1], C = k.shape()[2], M = k.shape()[3];
  const auto pad = pad_before(xshape, out, k.shape(), g);
  std::vector<float> y(static_cast<size_t>(out.element_count()));
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t i = 0; i < out[1]; ++i)
      for (int64_t j = 0; j < out[2]; ++j)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t m = 0; m < M; ++m) {
            double sum = bs[static_cast<size_t>(c * M + m)];
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t row = i * g.strides[0] - pad[0] + r * g.dilation[0];
                const int64_t col = j * g.strides[1] - pad[1] + s * g.dilation[1];
                if (row < 0 || row >= xshape[1] || col < 0 || col >= xshape[2]) continue;
                sum += static_cast<double>(xs[nhwc(xshape, n, row, col, c)]) *
                       ks[static_cast<size_t>(((r * S + s) * C + c) * M + m)];
              }
            y[nhwc(out, n, i, j, c * M + m)] = static_cast<float>(sum);
          }
  return y;
}

// The transposed convolution by scattering: every input element x[n,i,j,c]
// adds x * w[r, s, f, c] to y[n, i*stride - pad + r*dilation, ..., f], pad
// being that of the forward convolution from y's shape to x's.
std::vector<float> reference_conv2d_transpose(const Tensor& x, const Tensor& w, const Tensor& b, const Shape& out,
                                              const Geometry& g) {
  const std::vector<float> xs = x.to_vector<float>(), ws = w.to_vector<float>(), bs = b.to_vector<float>();
  const Shape& xshape = x.shape();
  const int64_t R = w.shape()[0], S = w.shape()[1], F = w.shape()[2], C = w.shape()[3];
  const auto pad = pad_before(out, xshape, w.shape(), g);
  std::vector<double> y(static_cast<size_t>(out.element_count()), 0.0);
  for (int64_t n = 0; n < xshape[0]; ++n)
    for (int64_t i = 0; i < xshape[1]; ++i)
      for (int64_t j = 0; j < xshape[2]; ++j)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t row = i * g.strides[0] - pad[0] + r * g.dilation[0];
              const int64_t col = j * g.strides[1] - pad[1] + s * g.dilation[1];
              if (row < 0 || row >= out[1] || col < 0 || col >= out[2]) continue;
              for (int64_t f = 0; f < F; ++f) {
                y[nhwc(out, n, row, col, f)] += static_cast<double>(xs[nhwc(xshape, n, i, j, c)]) *
                                                ws[static_cast<size_t>(((r * S + s) * F + f) * C + c)];
              }
            }
  std::vector<float> result(y.size());
  for (size_t e = 0; e < y.size(); ++e) result[e] = static_cast<float>(y[e] + bs[e % static_cast<size_t>(F)]);
  return result;
}

void expect_near_all(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance = 1e-4f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

Shape to_shape(const LayerShape& shape) { return Shape(std::vector<int64_t>(shape.begin(), shape.end())); }

std::string padding_of(const Geometry& g) { return g.same ? "same" : "valid"; }

// Strided, dilated, "same" with an odd split, and unequal strides: each layer is checked on all of them.
const std::vector<Geometry>& geometries() {
  static const std::vector<Geometry> cases{
      {}, {.strides = {2, 2}}, {.strides = {2, 2}, .same = true}, {.dilation = {2, 2}},
      {.dilation = {2, 1}, .same = true}, {.strides = {2, 3}, .same = true}, {.strides = {2, 1}, .dilation = {1, 2}}};
  return cases;
}

// ---- Conv2D(groups=...) ----

TEST_F(ConvVariantsTest, GroupedConv2DKernelHoldsTheGroupsChannels) {
  Conv2D layer(6, 3, {.groups = 3});
  layer.build({kUnknownDim, 8, 8, 12});
  EXPECT_EQ(layer.kernel().shape(), (Shape{3, 3, 4, 6}));  // (kh, kw, in / groups, filters)
  EXPECT_EQ(layer.bias().shape(), (Shape{6}));
  EXPECT_EQ(layer.count_params(), 3 * 3 * 4 * 6 + 6);
  EXPECT_EQ(layer.compute_output_shape({kUnknownDim, 8, 8, 12}), (LayerShape{kUnknownDim, 6, 6, 6}));
}

TEST_F(ConvVariantsTest, GroupedConv2DMatchesTheDefinition) {
  // groups 2 (2 channels a group: a convolution per group) and groups 4 with
  // 2 filters a group (1 channel a group: the sum over taps).
  const Tensor x = testing::random_tensor({2, 7, 6, 4}, 1);
  for (int64_t groups : {2, 4}) {
    for (const Geometry& g : geometries()) {
      Conv2D layer(8, 3, {.strides = g.strides, .padding = padding_of(g), .dilation_rate = g.dilation, .groups = groups});
      layer.build({kUnknownDim, 7, 6, 4});
      testing::assign_weight(layer.bias(), testing::random_tensor({8}, 2));
      const Tensor y = layer(x);
      ASSERT_EQ(y.shape(), to_shape(layer.compute_output_shape({2, 7, 6, 4})));
      SCOPED_TRACE("groups " + std::to_string(groups) + ", strides " + std::to_string(g.strides[0]) + "x" +
                   std::to_string(g.strides[1]) + ", dilation " + std::to_string(g.dilation[0]) + "x" +
                   std::to_string(g.dilation[1]) + ", " + padding_of(g));
      expect_near_all(y.to_vector<float>(),
                      reference_grouped_conv2d(x, layer.kernel().value(), layer.bias().value(), groups, y.shape(), g));
    }
  }
}

TEST_F(ConvVariantsTest, OneGroupIsPlainConv2D) {
  const Tensor x = testing::random_tensor({2, 6, 5, 3}, 3);
  Conv2D grouped(4, 3, {.strides = {2, 1}, .padding = "same", .groups = 1});
  Conv2D plain(4, 3, {.strides = {2, 1}, .padding = "same"});
  grouped.build({kUnknownDim, 6, 5, 3});
  plain.build({kUnknownDim, 6, 5, 3});
  EXPECT_EQ(grouped.kernel().shape(), plain.kernel().shape());
  testing::assign_weight(plain.kernel(), grouped.kernel().value());
  testing::assign_weight(grouped.bias(), testing::random_tensor({4}, 4));
  testing::assign_weight(plain.bias(), grouped.bias().value());
  EXPECT_EQ(grouped(x).to_vector<float>(), plain(x).to_vector<float>());
}

TEST_F(ConvVariantsTest, GroupedConv2DIsPlainConv2DWithABlockDiagonalKernel) {
  // The grouped kernel (3, 3, 2, 6) in 3 groups, spread over a (3, 3, 6, 6)
  // kernel that is zero between different groups' channels and filters.
  const Tensor x = testing::random_tensor({1, 5, 5, 6}, 5);
  Conv2D grouped(6, 3, {.padding = "same", .groups = 3});
  Conv2D plain(6, 3, {.padding = "same"});
  grouped.build({kUnknownDim, 5, 5, 6});
  plain.build({kUnknownDim, 5, 5, 6});
  const std::vector<float> small = grouped.kernel().value().to_vector<float>();
  std::vector<float> full(3 * 3 * 6 * 6, 0.0f);
  for (int64_t tap = 0; tap < 9; ++tap)
    for (int64_t ci = 0; ci < 2; ++ci)
      for (int64_t f = 0; f < 6; ++f) {
        const int64_t c = (f / 2) * 2 + ci;  // filter f is in group f / 2, whose channels start at 2 * (f / 2)
        full[static_cast<size_t>((tap * 6 + c) * 6 + f)] = small[static_cast<size_t>((tap * 2 + ci) * 6 + f)];
      }
  testing::assign_weight(plain.kernel(), Tensor::from_vector<float>(full, Shape{3, 3, 6, 6}));
  expect_near_all(grouped(x).to_vector<float>(), plain(x).to_vector<float>(), 1e-5f);
}

TEST_F(ConvVariantsTest, GroupedConv2DRejectsIndivisibleCounts) {
  EXPECT_THROW(Conv2D(4, 3, {.groups = 0}), InvalidArgumentError);
  try {
    Conv2D(6, 3, {.groups = 4, .name = "grouped"});
    FAIL() << "6 filters in 4 groups";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("Conv2D 'grouped'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("filters"), std::string::npos) << error.what();
  }
  Conv2D layer(4, 3, {.groups = 2, .name = "odd_channels"});
  try {
    layer.build({kUnknownDim, 8, 8, 3});
    FAIL() << "3 input channels in 2 groups";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("Conv2D 'odd_channels'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("input channels"), std::string::npos) << error.what();
  }
}

TEST_F(ConvVariantsTest, GroupedConv2DGradientsMatchFiniteDifferences) {
  for (const Conv2DOptions& options : {Conv2DOptions{.strides = {2, 1}, .padding = "same", .groups = 2},
                                       Conv2DOptions{.strides = {2, 2}, .padding = "same", .groups = 4},
                                       Conv2DOptions{.dilation_rate = {2, 1}, .groups = 4}}) {
    Conv2D layer(4, 2, options);
    const Tensor x = testing::random_tensor({2, 5, 4, 4}, 6);
    layer(x);  // build
    testing::assign_weight(layer.bias(), testing::random_tensor({4}, 7));
    testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, x,
                                                             {layer.kernel(), layer.bias()});
  }
}

// ---- DepthwiseConv2D ----

TEST_F(ConvVariantsTest, DepthwiseOutputShapesFollowKeras) {
  const LayerShape input{kUnknownDim, 7, 9, 3};
  EXPECT_EQ(DepthwiseConv2D(3).compute_output_shape(input), (LayerShape{kUnknownDim, 5, 7, 3}));
  EXPECT_EQ(DepthwiseConv2D(3, {.depth_multiplier = 4}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 5, 7, 12}));
  EXPECT_EQ(DepthwiseConv2D(3, {.strides = {2, 2}, .padding = "same"}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 4, 5, 3}));  // ceil(7/2), ceil(9/2)
  EXPECT_EQ(DepthwiseConv2D(3, {.strides = {2, 3}}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 3, 3, 3}));  // ceil(5/2), ceil(7/3)
  EXPECT_EQ(DepthwiseConv2D(3, {.dilation_rate = {2, 2}}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 3, 5, 3}));  // the dilated window spans 5
}

TEST_F(ConvVariantsTest, DepthwiseWeightsHaveKerasNamesShapesAndDefaults) {
  DepthwiseConv2D layer(3, {.depth_multiplier = 2});
  layer.build({kUnknownDim, 28, 28, 16});
  EXPECT_EQ(layer.name(), "depthwise_conv2d");
  ASSERT_EQ(layer.weights().size(), 2u);
  EXPECT_EQ(layer.depthwise_kernel().name(), "depthwise_conv2d/depthwise_kernel:0");
  EXPECT_EQ(layer.depthwise_kernel().shape(), (Shape{3, 3, 16, 2}));
  EXPECT_EQ(layer.bias().name(), "depthwise_conv2d/bias:0");
  EXPECT_EQ(layer.bias().shape(), (Shape{32}));
  EXPECT_EQ(layer.count_params(), 3 * 3 * 16 * 2 + 32);
  // glorot_uniform with Keras's fans of (3, 3, 16, 2): fan_in = 9*16, fan_out = 9*2.
  const float limit = std::sqrt(6.0f / (144.0f + 18.0f));
  float largest = 0.0f;
  for (float value : layer.depthwise_kernel().value().to_vector<float>()) largest = std::max(largest, std::abs(value));
  EXPECT_LE(largest, limit);
  EXPECT_GT(largest, 0.5f * limit);
  for (float value : layer.bias().value().to_vector<float>()) EXPECT_EQ(value, 0.0f);

  DepthwiseConv2D no_bias(3, {.use_bias = false});
  no_bias.build({kUnknownDim, 8, 8, 4});
  EXPECT_EQ(no_bias.name(), "depthwise_conv2d_1");
  EXPECT_EQ(no_bias.weights().size(), 1u);
}

TEST_F(ConvVariantsTest, DepthwiseOutputChannelsAreChannelTimesMultiplierPlusM) {
  // A 1x1 kernel: output channel c*2 + m is x[c] * k[c, m], as tf.nn.depthwise_conv2d orders it.
  DepthwiseConv2D layer(1, {.depth_multiplier = 2, .use_bias = false});
  layer.build({kUnknownDim, 1, 1, 2});
  testing::assign_weight(layer.depthwise_kernel(), Tensor::from_vector<float>({10, 100, 1000, 10000}, Shape{1, 1, 2, 2}));
  const Tensor y = layer(Tensor::from_vector<float>({2, 3}, Shape{1, 1, 1, 2}));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 4}));
  expect_near_all(y.to_vector<float>(), {20, 200, 3000, 30000});
}

TEST_F(ConvVariantsTest, DepthwiseMatchesTheDefinition) {
  const Tensor x = testing::random_tensor({2, 7, 6, 3}, 8);
  for (int64_t multiplier : {1, 2}) {
    for (const Geometry& g : geometries()) {
      DepthwiseConv2D layer(3, {.strides = g.strides, .padding = padding_of(g), .depth_multiplier = multiplier,
                                .dilation_rate = g.dilation, .activation = "tanh"});
      layer.build({kUnknownDim, 7, 6, 3});
      testing::assign_weight(layer.bias(), testing::random_tensor({3 * multiplier}, 9));
      const Tensor y = layer(x);
      ASSERT_EQ(y.shape(), to_shape(layer.compute_output_shape({2, 7, 6, 3})));
      std::vector<float> expected =
          reference_depthwise_conv2d(x, layer.depthwise_kernel().value(), layer.bias().value(), y.shape(), g);
      for (float& value : expected) value = std::tanh(value);
      SCOPED_TRACE("multiplier " + std::to_string(multiplier) + ", strides " + std::to_string(g.strides[0]) + "x" +
                   std::to_string(g.strides[1]) + ", dilation " + std::to_string(g.dilation[0]) + "x" +
                   std::to_string(g.dilation[1]) + ", " + padding_of(g));
      expect_near_all(y.to_vector<float>(), expected);
    }
  }
}

TEST_F(ConvVariantsTest, DepthwiseOfOneChannelIsAConvolution) {
  const Tensor x = testing::random_tensor({2, 6, 6, 1}, 10);
  DepthwiseConv2D layer(3, {.padding = "same", .depth_multiplier = 3});
  layer.build({kUnknownDim, 6, 6, 1});
  const Tensor y = layer(x);
  expect_near_all(y.to_vector<float>(), reference_depthwise_conv2d(x, layer.depthwise_kernel().value(),
                                                                   layer.bias().value(), y.shape(), {.same = true}));
}

TEST_F(ConvVariantsTest, DepthwiseRejectsBadArguments) {
  EXPECT_THROW(DepthwiseConv2D(0), InvalidArgumentError);
  EXPECT_THROW(DepthwiseConv2D(3, {.depth_multiplier = 0}), InvalidArgumentError);
  EXPECT_THROW(DepthwiseConv2D(3, {.padding = "causal"}), InvalidArgumentError);
  EXPECT_THROW(DepthwiseConv2D(3, {.strides = {1, 0}}), InvalidArgumentError);
  DepthwiseConv2D layer(3, {.name = "flat"});
  try {
    layer.build({kUnknownDim, 28, 28});
    FAIL() << "not NHWC";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("DepthwiseConv2D 'flat'"), std::string::npos) << error.what();
  }
}

TEST_F(ConvVariantsTest, DepthwiseGradientsMatchFiniteDifferences) {
  for (const DepthwiseConv2DOptions& options :
       {DepthwiseConv2DOptions{.strides = {2, 1}, .padding = "same", .depth_multiplier = 2},
        DepthwiseConv2DOptions{.depth_multiplier = 1, .dilation_rate = {1, 2}},
        DepthwiseConv2DOptions{.strides = {2, 2}, .depth_multiplier = 2}}) {
    DepthwiseConv2D layer(2, options);
    const Tensor x = testing::random_tensor({2, 5, 5, 3}, 11);
    layer(x);  // build
    testing::assign_weight(layer.bias(), testing::random_tensor(layer.bias().shape(), 12));
    testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, x,
                                                             {layer.depthwise_kernel(), layer.bias()});
  }
}

// ---- SeparableConv2D ----

TEST_F(ConvVariantsTest, SeparableWeightsHaveKerasNamesShapesAndOrder) {
  SeparableConv2D layer(8, 3, {.strides = {2, 2}, .padding = "same", .depth_multiplier = 2});
  layer.build({kUnknownDim, 9, 7, 5});
  EXPECT_EQ(layer.name(), "separable_conv2d");
  ASSERT_EQ(layer.weights().size(), 3u);
  EXPECT_EQ(layer.weights()[0].name(), "separable_conv2d/depthwise_kernel:0");
  EXPECT_EQ(layer.weights()[0].shape(), (Shape{3, 3, 5, 2}));
  EXPECT_EQ(layer.weights()[1].name(), "separable_conv2d/pointwise_kernel:0");
  EXPECT_EQ(layer.weights()[1].shape(), (Shape{1, 1, 10, 8}));
  EXPECT_EQ(layer.weights()[2].name(), "separable_conv2d/bias:0");
  EXPECT_EQ(layer.output_shape(), (LayerShape{kUnknownDim, 5, 4, 8}));
  EXPECT_THROW(SeparableConv2D(0, 3), InvalidArgumentError);
  EXPECT_THROW(SeparableConv2D(4, 3, {.depth_multiplier = 0}), InvalidArgumentError);
}

// Separable = the depthwise convolution (with the strides and dilation), then a 1x1 convolution.
TEST_F(ConvVariantsTest, SeparableIsDepthwiseThenPointwise) {
  SeparableConv2D separable(4, 3, {.strides = {2, 1}, .padding = "same", .depth_multiplier = 2, .use_bias = false});
  DepthwiseConv2D depthwise(3, {.strides = {2, 1}, .padding = "same", .depth_multiplier = 2, .use_bias = false});
  Conv2D pointwise(4, 1, {.use_bias = false});
  const Tensor x = testing::random_tensor({2, 6, 5, 3}, 31);
  separable(x);  // builds each of them
  const Tensor built = depthwise(x);
  pointwise(built);
  testing::assign_weight(depthwise.depthwise_kernel(), separable.depthwise_kernel().value());
  testing::assign_weight(pointwise.weights()[0], separable.pointwise_kernel().value());
  const Tensor spread = depthwise(x);
  EXPECT_EQ(separable(x).to_vector<float>(), pointwise(spread).to_vector<float>());
}

TEST_F(ConvVariantsTest, SeparableGradientsMatchFiniteDifferences) {
  SeparableConv2D layer(3, 2, {.strides = {2, 1}, .padding = "same", .dilation_rate = {1, 1}, .depth_multiplier = 2});
  const Tensor x = testing::random_tensor({2, 5, 5, 2}, 13);
  layer(x);  // build
  testing::assign_weight(layer.bias(), testing::random_tensor(layer.bias().shape(), 14));
  testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, x,
                                                           {layer.depthwise_kernel(), layer.pointwise_kernel(), layer.bias()});
}

// ---- Conv2DTranspose ----

TEST_F(ConvVariantsTest, TransposeOutputShapesFollowKerasDeconvOutputLength) {
  const LayerShape input{kUnknownDim, 5, 4, 3};
  EXPECT_EQ(Conv2DTranspose(2, 3).compute_output_shape(input), (LayerShape{kUnknownDim, 7, 6, 2}));  // n + k - 1
  // valid, stride 2: n*2 + max(3 - 2, 0).
  EXPECT_EQ(Conv2DTranspose(2, 3, {.strides = {2, 2}}).compute_output_shape(input), (LayerShape{kUnknownDim, 11, 9, 2}));
  // same, stride 2: n*2.
  EXPECT_EQ(Conv2DTranspose(2, 3, {.strides = {2, 2}, .padding = "same"}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 10, 8, 2}));
  // valid, output_padding (1, 0): (n - 1)*2 + 3 + padding.
  EXPECT_EQ(Conv2DTranspose(2, 3, {.strides = {2, 2}, .output_padding = Pair{1, 0}}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 12, 9, 2}));
  // same, output_padding (1, 0): (n - 1)*2 + 3 - 2*1 + padding.
  EXPECT_EQ(Conv2DTranspose(2, 3, {.strides = {2, 2}, .padding = "same", .output_padding = Pair{1, 0}})
                .compute_output_shape(input),
            (LayerShape{kUnknownDim, 10, 7, 2}));
  // dilation 2: the window spans 5.
  EXPECT_EQ(Conv2DTranspose(2, 3, {.dilation_rate = {2, 2}}).compute_output_shape(input),
            (LayerShape{kUnknownDim, 9, 8, 2}));
  // stride 3 above a kernel of 2: n*3 without overhang.
  EXPECT_EQ(Conv2DTranspose(2, 2, {.strides = {3, 3}}).compute_output_shape(input), (LayerShape{kUnknownDim, 15, 12, 2}));
  EXPECT_EQ(Conv2DTranspose(2, 3).compute_output_shape({kUnknownDim, kUnknownDim, 4, 3}),
            (LayerShape{kUnknownDim, kUnknownDim, 6, 2}));
}

TEST_F(ConvVariantsTest, TransposeWeightsHaveKerasNamesShapesAndDefaults) {
  Conv2DTranspose layer(8, {3, 2});
  layer.build({kUnknownDim, 14, 14, 4});
  EXPECT_EQ(layer.name(), "conv2d_transpose");
  ASSERT_EQ(layer.weights().size(), 2u);
  EXPECT_EQ(layer.kernel().name(), "conv2d_transpose/kernel:0");
  EXPECT_EQ(layer.kernel().shape(), (Shape{3, 2, 8, 4}));  // (h, w, filters, in)
  EXPECT_EQ(layer.bias().name(), "conv2d_transpose/bias:0");
  EXPECT_EQ(layer.bias().shape(), (Shape{8}));
  EXPECT_EQ(layer.count_params(), 3 * 2 * 8 * 4 + 8);
  for (float value : layer.bias().value().to_vector<float>()) EXPECT_EQ(value, 0.0f);
  Conv2DTranspose no_bias(8, 3, {.use_bias = false});
  no_bias.build({kUnknownDim, 14, 14, 4});
  EXPECT_EQ(no_bias.weights().size(), 1u);
}

TEST_F(ConvVariantsTest, TransposeMatchesTheScatteringDefinition) {
  struct Case {
    Geometry geometry;
    std::optional<Pair> output_padding;
    int32_t kernel = 3;
  };
  const Tensor x = testing::random_tensor({2, 4, 3, 3}, 13);
  for (const Case& c : {Case{{}}, Case{{.strides = {2, 2}}}, Case{{.strides = {2, 2}, .same = true}},
                        Case{{.strides = {2, 3}}, Pair{1, 2}}, Case{{.strides = {2, 2}, .same = true}, Pair{1, 0}},
                        Case{{.strides = {2, 2}, .same = true}, std::nullopt, 2},
                        Case{{.strides = {3, 2}, .same = true}, Pair{2, 1}, 2},
                        Case{{.dilation = {2, 2}}}, Case{{.dilation = {2, 1}, .same = true}},
                        Case{{.strides = {2, 1}, .dilation = {1, 2}}}}) {
    const Geometry& g = c.geometry;
    Conv2DTranspose layer(2, c.kernel, {.strides = g.strides, .padding = padding_of(g), .output_padding = c.output_padding,
                                        .dilation_rate = g.dilation, .activation = "relu"});
    layer.build({kUnknownDim, 4, 3, 3});
    testing::assign_weight(layer.bias(), testing::random_tensor({2}, 14));
    const Tensor y = layer(x);
    ASSERT_EQ(y.shape(), to_shape(layer.compute_output_shape({2, 4, 3, 3})));
    std::vector<float> expected =
        reference_conv2d_transpose(x, layer.kernel().value(), layer.bias().value(), y.shape(), g);
    for (float& value : expected) value = std::max(value, 0.0f);
    SCOPED_TRACE("kernel " + std::to_string(c.kernel) + ", strides " + std::to_string(g.strides[0]) + "x" +
                 std::to_string(g.strides[1]) + ", dilation " + std::to_string(g.dilation[0]) + "x" +
                 std::to_string(g.dilation[1]) + ", " + padding_of(g) +
                 (c.output_padding ? ", output_padding " + std::to_string((*c.output_padding)[0]) + "x" +
                                         std::to_string((*c.output_padding)[1])
                                   : std::string()));
    expect_near_all(y.to_vector<float>(), expected);
  }
}

TEST_F(ConvVariantsTest, TransposeUndoesTheShapeOfConv2D) {
  // The transpose of a Conv2D with the same kernel size, strides and padding
  // restores the Conv2D's input shape (with output_padding where it is ambiguous).
  const Tensor x = testing::random_tensor({1, 9, 8, 2}, 15);
  Conv2D down(4, 3, {.strides = {2, 2}, .padding = "same"});
  const Tensor y = down(x);
  EXPECT_EQ(y.shape(), (Shape{1, 5, 4, 4}));
  Conv2DTranspose up(2, 3, {.strides = {2, 2}, .padding = "same", .output_padding = Pair{0, 1}});
  EXPECT_EQ(up(y).shape(), x.shape());
}

TEST_F(ConvVariantsTest, TransposeRejectsBadArguments) {
  EXPECT_THROW(Conv2DTranspose(0, 3), InvalidArgumentError);
  EXPECT_THROW(Conv2DTranspose(2, 0), InvalidArgumentError);
  EXPECT_THROW(Conv2DTranspose(2, 3, {.padding = "full"}), InvalidArgumentError);
  // Keras: "Strides must be greater than output padding".
  EXPECT_THROW(Conv2DTranspose(2, 3, {.strides = {2, 2}, .output_padding = Pair{2, 0}}), InvalidArgumentError);
  EXPECT_THROW(Conv2DTranspose(2, 3, {.output_padding = Pair{1, 1}}), InvalidArgumentError);
  // An even kernel, "same", output_padding 0, stride 2: (4 - 1)*2 + 2 - 2 = 6 rows, which a
  // convolution maps to 3, not 4 (TensorFlow's conv2d_transpose fails too).
  Conv2DTranspose layer(2, 2, {.strides = {2, 2}, .padding = "same", .output_padding = Pair{0, 0}, .name = "up"});
  try {
    layer(testing::random_tensor({1, 4, 4, 1}, 16));
    FAIL() << "an output that does not map back to the input";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("Conv2DTranspose 'up'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("output_padding"), std::string::npos) << error.what();
  }
}

TEST_F(ConvVariantsTest, TransposeGradientsMatchFiniteDifferences) {
  // Through conv2d_backward_input: its gradients with respect to its first
  // operand (the layer's input) and its filter (the kernel).
  for (const Conv2DTransposeOptions& options :
       {Conv2DTransposeOptions{.strides = {2, 1}, .padding = "same"},
        Conv2DTransposeOptions{.strides = {2, 2}, .output_padding = Pair{1, 0}},
        Conv2DTransposeOptions{.dilation_rate = {2, 1}, .activation = "tanh"}}) {
    Conv2DTranspose layer(3, 2, options);
    const Tensor x = testing::random_tensor({2, 3, 4, 2}, 17);
    layer(x);  // build
    testing::assign_weight(layer.bias(), testing::random_tensor({3}, 18));
    testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, x,
                                                             {layer.kernel(), layer.bias()});
  }
}

// ---- all three in a model ----

TEST_F(ConvVariantsTest, CompiledTrainingMatchesEager) {
  const Tensor x = testing::random_tensor({64, 10, 10, 2}, 19, 0.0f, 1.0f);
  const Tensor y = ops::cast(ops::mul(testing::random_tensor({64}, 20, 0.0f, 1.0f), ops::fill({}, 2.99)), DType::kInt32);
  auto train = [&](bool compiled) {
    set_random_seed(5);
    auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
        std::make_shared<Conv2D>(4, 3, Conv2DOptions{.padding = "same", .groups = 2, .activation = "relu"}),
        std::make_shared<DepthwiseConv2D>(3, DepthwiseConv2DOptions{.strides = {2, 2}, .padding = "same",
                                                                    .depth_multiplier = 2, .activation = "relu"}),
        std::make_shared<Conv2DTranspose>(2, 3, Conv2DTransposeOptions{.strides = {2, 2}, .padding = "same"}),
        std::make_shared<SeparableConv2D>(4, 3, SeparableConv2DOptions{.padding = "same", .activation = "relu"}),
        std::make_shared<Flatten>(), std::make_shared<Dense>(3)});
    model->build({kUnknownDim, 10, 10, 2});
    model->compile("sgd", std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}), {},
                   {.jit_compile = compiled});
    auto losses = std::make_shared<accel::testing::BatchLosses>();
    model->fit(x, y, {.epochs = 2, .batch_size = 16, .verbose = 0, .callbacks = {losses}, .shuffle = false});
    if (compiled) EXPECT_EQ(model->train_function()->statistics().eager_reason, "");
    return losses->losses;
  };
  const std::vector<double> eager = train(false), compiled = train(true);
  ASSERT_EQ(eager.size(), 8u);
  ASSERT_EQ(compiled.size(), eager.size());
  for (size_t step = 0; step < eager.size(); ++step) {
    EXPECT_NEAR(compiled[step], eager[step], 1e-5 * std::max(1.0, std::abs(eager[step]))) << "step " << step;
  }
  EXPECT_LT(eager.back(), eager.front());
}

}  // namespace
}  // namespace accel::keras
