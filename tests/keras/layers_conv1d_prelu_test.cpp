// Conv1D and PReLU: output lengths for each padding (causal too), values
// against a direct loop, Keras's errors, and gradients of the input and every
// weight against finite differences.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>

#include <gtest/gtest.h>

#include "layer_gradient_check.hpp"

namespace accel::keras {
namespace {

class Conv1DPReLUTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

// y[b, t, f] = sum over k, c of x[b, t * stride + k * dilation - left, c] * kernel[k, c, f] (zero outside).
std::vector<float> direct_conv1d(const std::vector<float>& x, const std::vector<float>& kernel, int64_t batch,
                                 int64_t steps, int64_t channels, int64_t width, int64_t filters, int64_t stride,
                                 int64_t dilation, int64_t left, int64_t out_steps) {
  std::vector<float> y(static_cast<size_t>(batch * out_steps * filters), 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < out_steps; ++t)
      for (int64_t f = 0; f < filters; ++f) {
        double sum = 0.0;
        for (int64_t k = 0; k < width; ++k) {
          const int64_t source = t * stride + k * dilation - left;
          if (source < 0 || source >= steps) continue;
          for (int64_t c = 0; c < channels; ++c) {
            sum += static_cast<double>(x[(b * steps + source) * channels + c]) * kernel[(k * channels + c) * filters + f];
          }
        }
        y[(b * out_steps + t) * filters + f] = static_cast<float>(sum);
      }
  return y;
}

TEST_F(Conv1DPReLUTest, Conv1DOutputLengthsFollowKerasForEachPadding) {
  const LayerShape input{kUnknownDim, 10, 2};
  EXPECT_EQ(Conv1D(4, 3).compute_output_shape(input), LayerShape({kUnknownDim, 8, 4}));
  EXPECT_EQ(Conv1D(4, 3, {.strides = 2, .padding = "same"}).compute_output_shape(input), LayerShape({kUnknownDim, 5, 4}));
  EXPECT_EQ(Conv1D(4, 3, {.padding = "causal", .dilation_rate = 2}).compute_output_shape(input),
            LayerShape({kUnknownDim, 10, 4}));
  EXPECT_EQ(Conv1D(4, 3, {.dilation_rate = 3}).compute_output_shape(input), LayerShape({kUnknownDim, 4, 4}));
  EXPECT_THROW(Conv1D(4, 3).compute_output_shape({kUnknownDim, 10, 2, 1}), InvalidArgumentError);  // not 3-D
  EXPECT_THROW(Conv1D(4, 3, {.groups = 3}), InvalidArgumentError);        // 3 does not divide 4 filters
  EXPECT_THROW(Conv1D(4, 3, {.padding = "full"}), InvalidArgumentError);  // not a Keras padding
  EXPECT_THROW(Conv1D(0, 3), InvalidArgumentError);
}

TEST_F(Conv1DPReLUTest, Conv1DComputesTheDirectSumForEachPadding) {
  struct Case {
    Conv1DOptions options;
    int64_t left;  // zeros before the sequence
    int64_t out_steps;
  };
  const std::vector<Case> cases{{{.use_bias = false}, 0, 5},
                                {{.strides = 2, .padding = "same", .use_bias = false}, 1, 4},
                                {{.padding = "causal", .dilation_rate = 2, .use_bias = false}, 4, 7}};
  const Tensor x = testing::random_tensor({2, 7, 3}, 21);
  for (const Case& test : cases) {
    Conv1D layer(4, 3, test.options);
    const Tensor y = layer(x);
    ASSERT_EQ(y.shape(), Shape({2, test.out_steps, 4}));
    const std::vector<float> expected =
        direct_conv1d(x.to_vector<float>(), layer.kernel().value().to_vector<float>(), 2, 7, 3, 3, 4,
                      test.options.strides, test.options.dilation_rate, test.left, test.out_steps);
    const std::vector<float> actual = y.to_vector<float>();
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5f) << test.options.padding << i;
  }
}

TEST_F(Conv1DPReLUTest, Conv1DGradientsMatchFiniteDifferences) {
  const Tensor x = testing::random_tensor({2, 9, 4}, 22);
  for (const Conv1DOptions& options : {Conv1DOptions{.padding = "causal", .dilation_rate = 2},
                                       Conv1DOptions{.strides = 2, .padding = "same", .groups = 2}}) {
    SCOPED_TRACE(options.padding);
    auto layer = std::make_shared<Conv1D>(6, 3, options);
    (*layer)(x);
    testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return (*layer)(input); }, x,
                                                             {layer->kernel(), layer->bias()});
  }
}

TEST_F(Conv1DPReLUTest, PReLULearnsOneSlopePerSharedGroup) {
  PReLU shared({.shared_axes = {1, 2}});
  const Tensor image = testing::random_tensor({2, 3, 4, 5}, 23);
  shared(image);
  EXPECT_EQ(shared.alpha().shape(), Shape({1, 1, 5}));
  PReLU elementwise;
  elementwise(image);
  EXPECT_EQ(elementwise.alpha().shape(), Shape({3, 4, 5}));
  EXPECT_THROW(PReLU({.shared_axes = {0}}), InvalidArgumentError);  // the batch axis is always shared
  EXPECT_THROW(PReLU({.shared_axes = {4}})(image), InvalidArgumentError);

  // relu(x) - alpha * relu(-x) with alpha = 0.25 per channel.
  testing::assign_weight(shared.alpha(), Tensor::from_vector<float>(std::vector<float>(5, 0.25f), Shape{1, 1, 5}));
  const std::vector<float> x = image.to_vector<float>(), y = shared(image).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], x[i] > 0 ? x[i] : 0.25f * x[i]);
}

TEST_F(Conv1DPReLUTest, PReLUGradientsMatchFiniteDifferences) {
  auto layer = std::make_shared<PReLU>(PReLUOptions{.shared_axes = {1}});
  const Tensor x = testing::random_tensor({3, 4, 5}, 24);
  (*layer)(x);
  testing::assign_weight(layer->alpha(), testing::random_tensor({1, 5}, 25));
  testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return (*layer)(input); }, x,
                                                           {layer->alpha()});
}

}  // namespace
}  // namespace accel::keras
