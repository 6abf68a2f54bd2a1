// LayerNormalization and MultiHeadAttention (the Transformer's layers):
// Keras 2's weights (names, shapes, order, parameter counts), values against
// straightforward double computations written here, masks (padding, causal,
// both), gradients against finite differences, and both layers in a
// Functional model with a residual Add that trains eagerly and compiled alike.
#include "layer_gradient_check.hpp"

#include <accel/error.hpp>
#include <accel/function.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/layers/add.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace accel::keras {
namespace {

using testing::assign_weight;
using testing::random_tensor;

class AttentionLayersTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

std::vector<std::string> names_of(const std::vector<Variable>& weights) {
  std::vector<std::string> names;
  for (const Variable& weight : weights) names.push_back(weight.name());
  return names;
}

std::vector<Shape> shapes_of(const std::vector<Variable>& weights) {
  std::vector<Shape> shapes;
  for (const Variable& weight : weights) shapes.push_back(weight.shape());
  return shapes;
}

std::vector<double> to_doubles(const Tensor& tensor) {
  const std::vector<float> values = tensor.to_vector<float>();
  return std::vector<double>(values.begin(), values.end());
}

void expect_near_all(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

// ---------------------------------------------------------------- LayerNormalization

// y = (x - mean) / sqrt(var + eps) * gamma + beta over the trailing `normalized`
// elements of each of the `rows` rows, in double; gamma and beta flat over them.
std::vector<double> reference_layer_norm(const std::vector<double>& x, int64_t rows, int64_t normalized,
                                         const std::vector<double>& gamma, const std::vector<double>& beta,
                                         double epsilon) {
  std::vector<double> y(x.size());
  for (int64_t row = 0; row < rows; ++row) {
    const double* in = x.data() + row * normalized;
    double mean = 0.0, variance = 0.0;
    for (int64_t i = 0; i < normalized; ++i) mean += in[i];
    mean /= static_cast<double>(normalized);
    for (int64_t i = 0; i < normalized; ++i) variance += (in[i] - mean) * (in[i] - mean);
    variance /= static_cast<double>(normalized);  // biased, as Keras
    for (int64_t i = 0; i < normalized; ++i) {
      const size_t at = static_cast<size_t>(i);
      y[static_cast<size_t>(row * normalized + i)] = (in[i] - mean) / std::sqrt(variance + epsilon) * gamma[at] + beta[at];
    }
  }
  return y;
}

TEST_F(AttentionLayersTest, LayerNormalizationWeightsFollowKeras) {
  LayerNormalization last;
  last.build({kUnknownDim, 3, 4});
  EXPECT_EQ(names_of(last.weights()), (std::vector<std::string>{"layer_normalization/gamma:0", "layer_normalization/beta:0"}));
  EXPECT_EQ(shapes_of(last.weights()), (std::vector<Shape>{Shape{4}, Shape{4}}));
  EXPECT_EQ(last.gamma().value().to_vector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(last.beta().value().to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(last.count_params(), 8);
  EXPECT_EQ(last.output_shape(), (LayerShape{kUnknownDim, 3, 4}));

  LayerNormalization two_axes({.axis = {1, -1}});
  two_axes.build({kUnknownDim, 3, 4});
  EXPECT_EQ(two_axes.axes(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(shapes_of(two_axes.weights()), (std::vector<Shape>{Shape{3, 4}, Shape{3, 4}}));

  LayerNormalization no_center({.center = false});
  no_center.build({kUnknownDim, 5});
  EXPECT_EQ(names_of(no_center.weights()), (std::vector<std::string>{"layer_normalization_2/gamma:0"}));

  EXPECT_THROW(LayerNormalization({.axis = {1, 1}}).build({kUnknownDim, 3}), InvalidArgumentError);
  EXPECT_THROW(LayerNormalization({.axis = {2}}).build({kUnknownDim, 3}), InvalidArgumentError);
  EXPECT_THROW(LayerNormalization({.axis = {1}}).build({kUnknownDim, kUnknownDim}), InvalidArgumentError);
  EXPECT_THROW(LayerNormalization({.epsilon = 0.0}), InvalidArgumentError);
}

TEST_F(AttentionLayersTest, LayerNormalizationMatchesADoubleComputation) {
  const Tensor x = random_tensor({2, 3, 5}, 1u, -3.0f, 3.0f);
  LayerNormalization last;
  last.build({kUnknownDim, 3, 5});
  assign_weight(last.gamma(), random_tensor({5}, 2u, 0.5f, 1.5f));
  assign_weight(last.beta(), random_tensor({5}, 3u));
  expect_near_all(last(x).to_vector<float>(),
                  reference_layer_norm(to_doubles(x), 6, 5, to_doubles(last.gamma().value()),
                                       to_doubles(last.beta().value()), 1e-3));

  // Over the last two axes: one mean and variance per example, gamma (3, 5).
  LayerNormalization both({.axis = {1, 2}, .epsilon = 1e-5});
  both.build({kUnknownDim, 3, 5});
  assign_weight(both.gamma(), random_tensor({3, 5}, 4u, 0.5f, 1.5f));
  assign_weight(both.beta(), random_tensor({3, 5}, 5u));
  expect_near_all(both(x).to_vector<float>(),
                  reference_layer_norm(to_doubles(x), 2, 15, to_doubles(both.gamma().value()),
                                       to_doubles(both.beta().value()), 1e-5));
  // Training changes nothing: there are no statistics to use or update.
  EXPECT_EQ(both(x, /*training=*/true).to_vector<float>(), both(x).to_vector<float>());
}

TEST_F(AttentionLayersTest, LayerNormalizationGradientsMatchFiniteDifferences) {
  LayerNormalization layer;
  const Tensor x = random_tensor({2, 3, 4}, 6u, -2.0f, 2.0f);
  layer.build({kUnknownDim, 3, 4});
  assign_weight(layer.gamma(), random_tensor({4}, 7u, 0.5f, 1.5f));
  assign_weight(layer.beta(), random_tensor({4}, 8u));
  testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, x,
                                                           layer.weights(), {.epsilon = 1e-2f});
}

// ---------------------------------------------------------------- MultiHeadAttention

struct AttentionWeights {
  std::vector<double> query_kernel, query_bias, key_kernel, key_bias, value_kernel, value_bias, output_kernel, output_bias;
};

AttentionWeights weights_of(const MultiHeadAttention& layer) {
  const std::vector<Variable> w = layer.weights();
  EXPECT_EQ(w.size(), 8u);
  return {to_doubles(w[0].value()), to_doubles(w[1].value()), to_doubles(w[2].value()), to_doubles(w[3].value()),
          to_doubles(w[4].value()), to_doubles(w[5].value()), to_doubles(w[6].value()), to_doubles(w[7].value())};
}

// Random biases too, so that a bias in the wrong place shows.
void randomize_biases(MultiHeadAttention& layer) {
  uint32_t seed = 100;
  for (const Variable& weight : layer.weights()) {
    if (weight.name().ends_with("/bias:0")) assign_weight(weight, random_tensor(weight.shape(), seed++));
  }
}

// (batch, length, features) @ kernel (features, heads, dim) + bias (heads, dim) -> (batch, length, heads, dim).
std::vector<double> reference_projection(const std::vector<double>& x, int64_t batch, int64_t length, int64_t features,
                                         const std::vector<double>& kernel, const std::vector<double>& bias,
                                         int64_t heads, int64_t dim) {
  std::vector<double> y(static_cast<size_t>(batch * length * heads * dim));
  for (int64_t n = 0; n < batch * length; ++n)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t e = 0; e < dim; ++e) {
        double sum = bias[static_cast<size_t>(h * dim + e)];
        for (int64_t c = 0; c < features; ++c) {
          sum += x[static_cast<size_t>(n * features + c)] * kernel[static_cast<size_t>((c * heads + h) * dim + e)];
        }
        y[static_cast<size_t>((n * heads + h) * dim + e)] = sum;
      }
  return y;
}

struct ReferenceAttention {
  std::vector<double> output;  // (batch, T, d_out)
  std::vector<double> scores;  // (batch, heads, T, S)
};

// Keras's MultiHeadAttention in double, loop by loop; mask[b][t][s] == 0 adds -1e9.
ReferenceAttention reference_attention(const Tensor& query, const Tensor& value, const Tensor& key,
                                       const std::vector<float>& mask, const AttentionWeights& w, int64_t heads,
                                       int64_t key_dim, int64_t value_dim, int64_t out_features) {
  const int64_t batch = query.shape()[0], target = query.shape()[1], source = value.shape()[1];
  const std::vector<double> q = reference_projection(to_doubles(query), batch, target, query.shape()[2], w.query_kernel,
                                                     w.query_bias, heads, key_dim);
  const std::vector<double> k =
      reference_projection(to_doubles(key), batch, source, key.shape()[2], w.key_kernel, w.key_bias, heads, key_dim);
  const std::vector<double> v = reference_projection(to_doubles(value), batch, source, value.shape()[2],
                                                     w.value_kernel, w.value_bias, heads, value_dim);
  ReferenceAttention result;
  result.scores.resize(static_cast<size_t>(batch * heads * target * source));
  result.output.assign(static_cast<size_t>(batch * target * out_features), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < target; ++t) {
      std::vector<double> attended(static_cast<size_t>(heads * value_dim), 0.0);
      for (int64_t h = 0; h < heads; ++h) {
        std::vector<double> logits(static_cast<size_t>(source));
        double largest = -1e300;
        for (int64_t s = 0; s < source; ++s) {
          double dot = 0.0;
          for (int64_t e = 0; e < key_dim; ++e) {
            dot += q[static_cast<size_t>(((b * target + t) * heads + h) * key_dim + e)] *
                   k[static_cast<size_t>(((b * source + s) * heads + h) * key_dim + e)];
          }
          double logit = dot / std::sqrt(static_cast<double>(key_dim));
          if (!mask.empty() && mask[static_cast<size_t>((b * target + t) * source + s)] == 0.0f) logit += -1e9;
          logits[static_cast<size_t>(s)] = logit;
          largest = std::max(largest, logit);
        }
        double total = 0.0;
        for (double& logit : logits) total += (logit = std::exp(logit - largest));
        for (int64_t s = 0; s < source; ++s) {
          const double score = logits[static_cast<size_t>(s)] / total;
          result.scores[static_cast<size_t>(((b * heads + h) * target + t) * source + s)] = score;
          for (int64_t f = 0; f < value_dim; ++f) {
            attended[static_cast<size_t>(h * value_dim + f)] +=
                score * v[static_cast<size_t>(((b * source + s) * heads + h) * value_dim + f)];
          }
        }
      }
      for (int64_t o = 0; o < out_features; ++o) {
        double sum = w.output_bias[static_cast<size_t>(o)];
        for (int64_t hf = 0; hf < heads * value_dim; ++hf) {
          sum += attended[static_cast<size_t>(hf)] * w.output_kernel[static_cast<size_t>(hf * out_features + o)];
        }
        result.output[static_cast<size_t>((b * target + t) * out_features + o)] = sum;
      }
    }
  return result;
}

// A (batch, T, S) mask of 0/1 floats: each example attends to its first `lengths[b]` positions.
std::vector<float> padding_mask(int64_t target, int64_t source, const std::vector<int64_t>& lengths) {
  std::vector<float> mask;
  for (const int64_t length : lengths)
    for (int64_t t = 0; t < target; ++t)
      for (int64_t s = 0; s < source; ++s) mask.push_back(s < length ? 1.0f : 0.0f);
  return mask;
}

std::vector<float> causal_mask(int64_t batch, int64_t target, int64_t source) {
  std::vector<float> mask;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < target; ++t)
      for (int64_t s = 0; s < source; ++s) mask.push_back(s <= t ? 1.0f : 0.0f);
  return mask;
}

TEST_F(AttentionLayersTest, MultiHeadAttentionWeightsFollowKeras) {
  auto layer = std::make_shared<MultiHeadAttention>(2, 4);
  const KerasTensor x = Input({5, 8});
  const KerasTensor y = (*layer)(x, x);
  EXPECT_EQ(y.shape(), (LayerShape{kUnknownDim, 5, 8}));
  EXPECT_EQ(names_of(layer->weights()),
            (std::vector<std::string>{"multi_head_attention/query/kernel:0", "multi_head_attention/query/bias:0",
                                      "multi_head_attention/key/kernel:0", "multi_head_attention/key/bias:0",
                                      "multi_head_attention/value/kernel:0", "multi_head_attention/value/bias:0",
                                      "multi_head_attention/attention_output/kernel:0",
                                      "multi_head_attention/attention_output/bias:0"}));
  EXPECT_EQ(shapes_of(layer->weights()), (std::vector<Shape>{Shape{8, 2, 4}, Shape{2, 4}, Shape{8, 2, 4}, Shape{2, 4},
                                                             Shape{8, 2, 4}, Shape{2, 4}, Shape{2, 4, 8}, Shape{8}}));
  // Each projection is 8 x (2 * 4) plus 8 biases: 4 * (8 * 8 + 8), as Keras's summary says.
  EXPECT_EQ(layer->count_params(), 4 * (8 * 8 + 8));
  for (const Variable& weight : layer->weights()) {
    if (weight.name().ends_with("/bias:0")) EXPECT_EQ(ops::reduce_max(ops::abs(weight.value())).item<float>(), 0.0f);
  }

  // Cross-attention with its own key, value_dim, output_shape and no biases:
  // query (None, 3, 6), value (None, 7, 5), key (None, 7, 4).
  auto cross = std::make_shared<MultiHeadAttention>(
      3, 2, MultiHeadAttentionOptions{.value_dim = 5, .use_bias = false, .output_shape = 9});
  const KerasTensor out = (*cross)(Input({3, 6}), Input({7, 5}), {.key = Input({7, 4})});
  EXPECT_EQ(out.shape(), (LayerShape{kUnknownDim, 3, 9}));
  EXPECT_EQ(shapes_of(cross->weights()),
            (std::vector<Shape>{Shape{6, 3, 2}, Shape{4, 3, 2}, Shape{5, 3, 5}, Shape{3, 5, 9}}));
  EXPECT_EQ(cross->count_params(), 6 * 6 + 4 * 6 + 5 * 15 + 15 * 9);
}

// Rotary positions: with the same vector at every position, a score's
// logit depends only on how far apart query and key are, so
// log s[i][j] - log s[i][j + 1] is the same for every row i (a softmax row
// shifts its logits by one constant). Without rotary the scores are uniform.
TEST_F(AttentionLayersTest, RotaryPositionsMakeScoresDependOnDistanceOnly) {
  const int64_t length = 6, features = 8;
  std::vector<float> same(static_cast<size_t>(length * features));
  for (int64_t position = 0; position < length; ++position) {
    for (int64_t f = 0; f < features; ++f) same[static_cast<size_t>(position * features + f)] = 0.3f * static_cast<float>(f + 1);
  }
  const Tensor x = Tensor::from_vector<float>(same, Shape{1, length, features});
  MultiHeadAttention plain(1, 4, {.name = "plain"});
  MultiHeadAttention rotary(1, 4, {.rotary_max_wavelength = 10.0, .name = "rotary"});
  const AttentionOutputs uniform = plain.call_with_attention_scores(x, x, {});
  for (float score : uniform.scores.to_vector<float>()) EXPECT_NEAR(score, 1.0f / length, 1e-6);
  rotary(x, x, {});  // builds
  const std::vector<float> scores = rotary.call_with_attention_scores(x, x, {}).scores.to_vector<float>();
  auto log_score = [&](int64_t i, int64_t j) { return std::log(static_cast<double>(scores[static_cast<size_t>(i * length + j)])); };
  bool varies = false;
  for (int64_t offset = -1; offset <= 1; ++offset) {
    for (int64_t i = 1; i + 2 < length; ++i) {
      const int64_t j = i + offset;
      EXPECT_NEAR(log_score(i, j) - log_score(i, j + 1), log_score(1, 1 + offset) - log_score(1, 2 + offset), 1e-4)
          << "row " << i << " offset " << offset;
      varies = varies || std::abs(log_score(i, j) - log_score(i, j + 1)) > 1e-3;
    }
  }
  EXPECT_TRUE(varies) << "rotary positions changed nothing";
  EXPECT_THROW(MultiHeadAttention(1, 3, {.rotary_max_wavelength = 10.0}), InvalidArgumentError);
  EXPECT_THROW(MultiHeadAttention(1, 4, {.rotary_max_wavelength = 0.5}), InvalidArgumentError);
}

TEST_F(AttentionLayersTest, MultiHeadAttentionMatchesADoubleComputation) {
  struct Case {
    std::string what;
    int64_t heads, key_dim, value_dim, target, source, query_features, value_features, key_features;
    bool separate_key;
  };
  const std::vector<Case> cases{
      {"self-attention", 2, 4, 4, 5, 5, 8, 8, 8, false},
      {"key_dim != value_dim", 3, 2, 5, 4, 4, 6, 6, 6, false},
      {"cross-attention T != S, own key", 2, 3, 4, 3, 6, 5, 7, 4, true},
  };
  const int64_t batch = 2;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    MultiHeadAttention layer(c.heads, c.key_dim, {.value_dim = c.value_dim});
    const Tensor query = random_tensor({batch, c.target, c.query_features}, 11u);
    const Tensor value = c.separate_key || c.target != c.source
                             ? random_tensor({batch, c.source, c.value_features}, 12u)
                             : query;
    const Tensor key = c.separate_key ? random_tensor({batch, c.source, c.key_features}, 13u) : value;
    const AttentionArguments<Tensor> arguments{.key = c.separate_key ? key : Tensor()};
    layer(query, value, arguments);  // builds
    randomize_biases(layer);
    const AttentionWeights w = weights_of(layer);

    const AttentionOutputs unmasked = layer.call_with_attention_scores(query, value, arguments);
    ReferenceAttention expected = reference_attention(query, value, key, {}, w, c.heads, c.key_dim, c.value_dim,
                                                      c.query_features);
    EXPECT_EQ(unmasked.output.shape(), (Shape{batch, c.target, c.query_features}));
    EXPECT_EQ(unmasked.scores.shape(), (Shape{batch, c.heads, c.target, c.source}));
    expect_near_all(unmasked.output.to_vector<float>(), expected.output, 1e-4);
    expect_near_all(unmasked.scores.to_vector<float>(), expected.scores, 1e-5);

    // A padding mask (example 0 sees 2 positions, example 1 all), as bool.
    const std::vector<float> padding = padding_mask(c.target, c.source, {2, c.source});
    std::vector<bool> padding_bools(padding.begin(), padding.end());
    AttentionArguments<Tensor> padded = arguments;
    padded.attention_mask = Tensor::from_vector<bool>(padding_bools, Shape{batch, c.target, c.source});
    const AttentionOutputs masked = layer.call_with_attention_scores(query, value, padded);
    expected = reference_attention(query, value, key, padding, w, c.heads, c.key_dim, c.value_dim, c.query_features);
    expect_near_all(masked.output.to_vector<float>(), expected.output, 1e-4);
    expect_near_all(masked.scores.to_vector<float>(), expected.scores, 1e-5);

    // The causal mask, alone and and-ed with the padding mask given as 0/1 floats.
    AttentionArguments<Tensor> causal = arguments;
    causal.use_causal_mask = true;
    expected = reference_attention(query, value, key, causal_mask(batch, c.target, c.source), w, c.heads, c.key_dim,
                                   c.value_dim, c.query_features);
    expect_near_all(layer(query, value, causal).to_vector<float>(), expected.output, 1e-4);
    causal.attention_mask = Tensor::from_vector<float>(padding, Shape{batch, c.target, c.source});
    std::vector<float> both = causal_mask(batch, c.target, c.source);
    for (size_t i = 0; i < both.size(); ++i) both[i] *= padding[i];
    expected = reference_attention(query, value, key, both, w, c.heads, c.key_dim, c.value_dim, c.query_features);
    expect_near_all(layer(query, value, causal).to_vector<float>(), expected.output, 1e-4);
  }
}

TEST_F(AttentionLayersTest, MaskedPositionsGetZeroAttention) {
  MultiHeadAttention layer(2, 3);
  const Tensor x = random_tensor({2, 4, 6}, 21u, -2.0f, 2.0f);
  // Example 0 may not attend to positions 1 and 3; example 1 only to position 0. A mask of one row broadcasts over T.
  const Tensor mask = Tensor::from_vector<float>({1, 0, 1, 0, 1, 0, 0, 0}, Shape{2, 1, 4});
  const Tensor scores = layer.call_with_attention_scores(x, x, {.attention_mask = mask}).scores;
  const std::vector<float> values = scores.to_vector<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 4; ++t) {
        double row_sum = 0.0;
        for (int64_t s = 0; s < 4; ++s) {
          const float score = values[static_cast<size_t>(((b * 2 + h) * 4 + t) * 4 + s)];
          row_sum += score;
          const bool allowed = mask.to_vector<float>()[static_cast<size_t>(b * 4 + s)] != 0.0f;
          if (!allowed) EXPECT_EQ(score, 0.0f) << "b " << b << " h " << h << " t " << t << " s " << s;
        }
        EXPECT_NEAR(row_sum, 1.0, 1e-6);
      }
  // The one allowed position of example 1 takes all the attention.
  EXPECT_EQ(values[static_cast<size_t>(((1 * 2 + 0) * 4 + 2) * 4 + 0)], 1.0f);

  // Causal: nothing above the diagonal.
  const std::vector<float> causal =
      layer.call_with_attention_scores(x, x, {.use_causal_mask = true}).scores.to_vector<float>();
  for (int64_t bh = 0; bh < 4; ++bh)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t s = t + 1; s < 4; ++s) EXPECT_EQ(causal[static_cast<size_t>((bh * 4 + t) * 4 + s)], 0.0f);
}

TEST_F(AttentionLayersTest, MultiHeadAttentionGradientsMatchFiniteDifferences) {
  {
    SCOPED_TRACE("self-attention with a causal mask");
    MultiHeadAttention layer(2, 3, {.value_dim = 2});
    const Tensor x = random_tensor({2, 3, 4}, 31u);
    layer(x, x);
    randomize_biases(layer);
    testing::expect_layer_gradients_match_finite_differences(
        [&](const Tensor& input) { return layer(input, input, {.use_causal_mask = true}); }, x, layer.weights());
  }
  {
    SCOPED_TRACE("cross-attention with a padding mask");
    MultiHeadAttention layer(2, 2, {.output_shape = 3});
    const Tensor value = random_tensor({2, 4, 5}, 32u);
    const Tensor key = random_tensor({2, 4, 3}, 33u);
    const Tensor mask = Tensor::from_vector<float>(padding_mask(3, 4, {3, 2}), Shape{2, 3, 4});
    const Tensor query = random_tensor({2, 3, 4}, 34u);
    layer(query, value, {.key = key});
    randomize_biases(layer);
    testing::expect_layer_gradients_match_finite_differences(
        [&](const Tensor& input) { return layer(input, value, {.key = key, .attention_mask = mask}); }, query,
        layer.weights());
  }
}

TEST_F(AttentionLayersTest, AttentionDropoutOnlyWhileTraining) {
  MultiHeadAttention layer(2, 4, {.dropout = 0.5});
  const Tensor x = random_tensor({2, 6, 8}, 41u);
  const std::vector<float> inference = layer(x, x).to_vector<float>();
  EXPECT_EQ(layer(x, x, {}, /*training=*/false).to_vector<float>(), inference);
  EXPECT_NE(layer(x, x, {}, /*training=*/true).to_vector<float>(), inference);
  // The returned scores are those before dropout, as Keras's.
  EXPECT_EQ(layer.call_with_attention_scores(x, x, {}, /*training=*/true).scores.to_vector<float>(),
            layer.call_with_attention_scores(x, x).scores.to_vector<float>());
  EXPECT_EQ(layer.weights().size(), 8u);  // the dropout owns none
  EXPECT_THROW(MultiHeadAttention(2, 4, {.dropout = 1.0}), InvalidArgumentError);
}

TEST_F(AttentionLayersTest, MultiHeadAttentionRejectsWrongInputs) {
  MultiHeadAttention layer(2, 4);
  const Tensor x = random_tensor({2, 5, 8}, 51u);
  EXPECT_THROW(layer(x), InvalidArgumentError);  // one input
  layer(x, x);
  EXPECT_THROW(layer(random_tensor({2, 5, 7}, 52u), x), InvalidArgumentError);                       // built for 8 features
  EXPECT_THROW(layer(x, x, {.key = random_tensor({2, 4, 8}, 53u)}), InvalidArgumentError);            // S of key != value
  EXPECT_THROW(layer(x, x, {.attention_mask = ops::ones({2, 5, 4})}), InvalidArgumentError);          // mask (B, T, S)
  EXPECT_THROW(layer(random_tensor({2, 8}, 54u), random_tensor({2, 8}, 55u)), InvalidArgumentError);  // no sequence axis
  EXPECT_THROW(MultiHeadAttention(0, 4), InvalidArgumentError);
}

// x -> LayerNormalization(x + MHA(x, x)): a Transformer encoder's attention block.
struct EncoderBlock {
  KerasTensor inputs;
  std::shared_ptr<MultiHeadAttention> attention;
  std::shared_ptr<LayerNormalization> norm;
  KerasTensor outputs;
};

EncoderBlock encoder_block(int64_t length, int64_t features, bool causal) {
  EncoderBlock block;
  block.inputs = Input({length, features});
  block.attention = std::make_shared<MultiHeadAttention>(2, 4);
  block.norm = std::make_shared<LayerNormalization>();
  const KerasTensor attended = (*block.attention)(block.inputs, block.inputs, {.use_causal_mask = causal});
  block.outputs = (*block.norm)((*std::make_shared<Add>())({block.inputs, attended}));
  return block;
}

TEST_F(AttentionLayersTest, FunctionalModelWithAResidualAdd) {
  EncoderBlock block = encoder_block(5, 8, /*causal=*/true);
  Model model(block.inputs, block.outputs);
  EXPECT_EQ(model.layers().size(), 4u);  // input, attention, add, norm
  EXPECT_EQ(model.count_params(), 4 * (8 * 8 + 8) + 2 * 8);
  EXPECT_EQ(names_of(model.weights()).back(), "layer_normalization/beta:0");
  EXPECT_EQ(block.attention->inbound_nodes().front()->inputs().size(), 2u);  // [x, x]

  const Tensor x = random_tensor({3, 5, 8}, 61u);
  const Tensor expected = (*block.norm)(ops::add(x, (*block.attention)(x, x, {.use_causal_mask = true})));
  EXPECT_EQ(model(x).to_vector<float>(), expected.to_vector<float>());
  EXPECT_EQ(model.predict(x, {.verbose = 0}).to_vector<float>(), expected.to_vector<float>());

  // Every weight gets a gradient through the model.
  GradientTape tape;
  const Tensor loss = ops::reduce_sum(ops::square(model(x, /*training=*/true)));
  for (const Tensor& gradient : tape.gradient(loss, model.trainable_weights())) EXPECT_TRUE(gradient.defined());

  // One layer cannot be replayed with two different call arguments.
  EXPECT_THROW((*block.attention)(block.inputs, block.inputs), UnimplementedError);
}

TEST_F(AttentionLayersTest, FunctionalModelTakesAMaskInputAndReturnsScores) {
  const KerasTensor query = Input({3, 4});
  const KerasTensor value = Input({6, 5});
  const KerasTensor mask = Input({3, 6}, {.dtype = DType::kBool});
  auto attention = std::make_shared<MultiHeadAttention>(2, 3);
  const std::vector<KerasTensor> outputs =
      attention->call_with_attention_scores(query, value, {.attention_mask = mask});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].shape(), (LayerShape{kUnknownDim, 3, 4}));
  EXPECT_EQ(outputs[1].shape(), (LayerShape{kUnknownDim, 2, 3, 6}));
  Model model({query, value, mask}, outputs);

  const Tensor q = random_tensor({2, 3, 4}, 71u);
  const Tensor v = random_tensor({2, 6, 5}, 72u);
  std::vector<bool> allowed;
  for (int i = 0; i < 2 * 3 * 6; ++i) allowed.push_back(i % 4 != 1);
  const Tensor m = Tensor::from_vector<bool>(allowed, Shape{2, 3, 6});
  const std::vector<Tensor> results = model.call_outputs({q, v, m});
  const AttentionOutputs direct = attention->call_with_attention_scores(q, v, {.attention_mask = m});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].to_vector<float>(), direct.output.to_vector<float>());
  EXPECT_EQ(results[1].to_vector<float>(), direct.scores.to_vector<float>());
}

TEST_F(AttentionLayersTest, EncoderBlockTrainsEagerlyAndCompiledAlike) {
  DeviceScope on_cpu("/CPU:0");
  const int64_t samples = 32, length = 4, features = 8;
  const Tensor x = random_tensor({samples, length, features}, 81u);
  // A target the block can move towards: the input's running mean along the sequence.
  std::vector<float> xs = x.to_vector<float>(), targets(xs.size());
  for (int64_t n = 0; n < samples; ++n)
    for (int64_t f = 0; f < features; ++f) {
      double sum = 0.0;
      for (int64_t t = 0; t < length; ++t) {
        sum += xs[static_cast<size_t>((n * length + t) * features + f)];
        targets[static_cast<size_t>((n * length + t) * features + f)] = static_cast<float>(sum / (t + 1));
      }
    }
  const Tensor y = Tensor::from_vector<float>(targets, x.shape());

  std::vector<std::vector<double>> losses;
  std::vector<std::vector<Tensor>> weights;
  for (const bool compiled : {false, true}) {
    clear_session();
    set_random_seed(7);
    EncoderBlock block = encoder_block(length, features, /*causal=*/true);
    Model model(block.inputs, block.outputs);
    model.compile(std::make_shared<Adam>(AdamOptions{.learning_rate = 0.01}), std::make_shared<MeanSquaredError>(),
                  {}, {.jit_compile = compiled});
    const History history = model.fit(x, y, {.epochs = 5, .batch_size = 8, .verbose = 0, .shuffle = false});
    if (compiled) {
      EXPECT_EQ(model.train_function()->statistics().eager_reason, "");
      EXPECT_GT(model.train_function()->statistics().replays, 0);
    }
    losses.push_back(history.history.at("loss"));
    weights.emplace_back();
    for (const Variable& weight : model.weights()) weights.back().push_back(weight.value());
  }
  EXPECT_LT(losses[0].back(), losses[0].front());
  ASSERT_EQ(losses[0].size(), losses[1].size());
  for (size_t epoch = 0; epoch < losses[0].size(); ++epoch) EXPECT_NEAR(losses[0][epoch], losses[1][epoch], 1e-4);
  for (size_t index = 0; index < weights[0].size(); ++index) {
    const double difference = ops::reduce_max(ops::abs(ops::sub(weights[0][index], weights[1][index]))).item<float>();
    EXPECT_LE(difference, 1e-4) << "weight " << index;
  }
}

}  // namespace
}  // namespace accel::keras
