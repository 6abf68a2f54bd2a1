// label_smoothing of CategoricalCrossentropy and BinaryCrossentropy against
// Keras 2's formulas written out by hand (labels y * (1 - ls) + ls / classes,
// resp. y * (1 - ls) + 0.5 * ls, then the loss), from probabilities and from
// logits; the gradient of a smoothed loss; and the arguments Keras refuses or
// lacks (SparseCategoricalCrossentropy has no label_smoothing in Keras 2).
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/error.hpp>
#include <accel/keras/losses.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace accel::keras {
namespace {

Tensor floats(std::vector<float> values, Shape shape) { return Tensor::from_vector<float>(values, shape); }
double scalar(const Tensor& t) { return t.item<float>(); }

// -sum_c y_c log(p_c) averaged over rows, labels smoothed over `classes`.
double smoothed_categorical(const std::vector<double>& one_hot, const std::vector<double>& p, int classes,
                            double ls) {
  double total = 0;
  const int rows = static_cast<int>(one_hot.size()) / classes;
  for (int i = 0; i < rows * classes; ++i) total -= (one_hot[i] * (1 - ls) + ls / classes) * std::log(p[i]);
  return total / rows;
}

TEST(LabelSmoothing, CategoricalCrossentropyFromProbabilities) {
  const Tensor one_hot = floats({0, 1, 0, 1, 0, 0}, Shape{2, 3});
  const Tensor p = floats({0.2f, 0.7f, 0.1f, 0.5f, 0.3f, 0.2f}, Shape{2, 3});
  const double expected = smoothed_categorical({0, 1, 0, 1, 0, 0}, {0.2, 0.7, 0.1, 0.5, 0.3, 0.2}, 3, 0.1);
  EXPECT_NEAR(scalar(CategoricalCrossentropy({.label_smoothing = 0.1})(one_hot, p)), expected, 1e-6);
  // No smoothing is the plain loss; full smoothing is the cross-entropy with uniform labels.
  EXPECT_NEAR(scalar(CategoricalCrossentropy({.label_smoothing = 0.0})(one_hot, p)),
              smoothed_categorical({0, 1, 0, 1, 0, 0}, {0.2, 0.7, 0.1, 0.5, 0.3, 0.2}, 3, 0.0), 1e-6);
  EXPECT_NEAR(scalar(CategoricalCrossentropy({.label_smoothing = 1.0})(one_hot, p)),
              -(std::log(0.2) + std::log(0.7) + std::log(0.1) + std::log(0.5) + std::log(0.3) + std::log(0.2)) / 3 / 2,
              1e-6);
}

TEST(LabelSmoothing, CategoricalCrossentropyFromLogits) {
  const std::vector<double> logits{1.0, 2.0, 0.5, -1.0};
  std::vector<double> p(4);
  const double sum = std::exp(1.0) + std::exp(2.0) + std::exp(0.5) + std::exp(-1.0);
  for (int i = 0; i < 4; ++i) p[i] = std::exp(logits[i]) / sum;
  const Tensor labels = floats({0, 0, 1, 0}, Shape{1, 4});
  const Tensor x = floats({1.0f, 2.0f, 0.5f, -1.0f}, Shape{1, 4});
  EXPECT_NEAR(scalar(CategoricalCrossentropy({.from_logits = true, .label_smoothing = 0.2})(labels, x)),
              smoothed_categorical({0, 0, 1, 0}, p, 4, 0.2), 1e-5);
}

TEST(LabelSmoothing, BinaryCrossentropyMovesLabelsTowardsOneHalf) {
  const double ls = 0.2;
  const std::vector<double> y{0, 1, 1, 0};
  const std::vector<double> p{0.25, 0.75, 0.6, 0.1};
  double from_probabilities = 0, from_logits = 0;
  for (int i = 0; i < 4; ++i) {
    const double smoothed = y[i] * (1 - ls) + 0.5 * ls;
    from_probabilities -= smoothed * std::log(p[i] + 1e-7) + (1 - smoothed) * std::log(1 - p[i] + 1e-7);
    // From logits log(p / (1 - p)) there is no clipping and no epsilon.
    from_logits -= smoothed * std::log(p[i]) + (1 - smoothed) * std::log(1 - p[i]);
  }
  const Tensor labels = floats({0, 1, 1, 0}, Shape{2, 2});
  const Tensor probabilities = floats({0.25f, 0.75f, 0.6f, 0.1f}, Shape{2, 2});
  EXPECT_NEAR(scalar(BinaryCrossentropy({.label_smoothing = ls})(labels, probabilities)), from_probabilities / 4, 1e-6);
  std::vector<float> logits;
  for (const double value : p) logits.push_back(static_cast<float>(std::log(value / (1 - value))));
  EXPECT_NEAR(scalar(BinaryCrossentropy({.from_logits = true, .label_smoothing = ls})(labels, floats(logits, Shape{2, 2}))),
              from_logits / 4, 1e-5);
}

TEST(LabelSmoothing, TheGradientIsTheSoftmaxMinusTheSmoothedLabels) {
  // d/dx of -sum(y' log_softmax(x)) is softmax(x) - y' for labels summing to 1.
  const double ls = 0.3;
  Tensor x = floats({0.5f, -0.25f, 1.5f}, Shape{1, 3});
  GradientTape tape;
  tape.watch(x);
  const Tensor loss = CategoricalCrossentropy({.from_logits = true, .label_smoothing = ls})(
      floats({1, 0, 0}, Shape{1, 3}), x);
  const std::vector<float> gradient = tape.gradient(loss, {x})[0].to_vector<float>();
  const double sum = std::exp(0.5) + std::exp(-0.25) + std::exp(1.5);
  const double softmax[3] = {std::exp(0.5) / sum, std::exp(-0.25) / sum, std::exp(1.5) / sum};
  const double smoothed[3] = {1 - ls + ls / 3, ls / 3, ls / 3};
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(gradient[c], softmax[c] - smoothed[c], 1e-6) << c;
}

TEST(LabelSmoothing, OutOfRangeIsRefusedAndSparseHasNone) {
  EXPECT_THROW(CategoricalCrossentropy({.label_smoothing = -0.1}), InvalidArgumentError);
  EXPECT_THROW(BinaryCrossentropy({.label_smoothing = 1.5}), InvalidArgumentError);
  EXPECT_THROW(CategoricalCrossentropy({.label_smoothing = std::nan("")}), InvalidArgumentError);
  EXPECT_THROW(SparseCategoricalCrossentropy({.label_smoothing = 0.1}), InvalidArgumentError);
  EXPECT_NO_THROW(SparseCategoricalCrossentropy({.label_smoothing = 0.0}));
}

}  // namespace
}  // namespace accel::keras
