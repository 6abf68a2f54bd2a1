// keras.activations: every name get_activation() knows against its closed
// form computed in double, the far tails where naive formulas overflow or
// round to zero, gradients against finite differences (and against the
// closed-form derivatives where the tails make differences useless), and
// softmax over any axis.
#include "layer_gradient_check.hpp"

#include <accel/autodiff/autodiff.hpp>
#include <accel/error.hpp>
#include <accel/function.hpp>
#include <accel/keras/activations.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace accel::keras {
namespace {

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Each activation straight from its definition, in double.
double closed_form(const std::string& name, double x) {
  if (name == "linear") return x;
  if (name == "relu") return x > 0 ? x : 0.0;
  if (name == "sigmoid") return sigmoid_of(x);
  if (name == "tanh") return std::tanh(x);
  if (name == "gelu") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (name == "gelu_approximate") {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::acos(-1.0)) * (x + 0.044715 * x * x * x)));
  }
  if (name == "swish" || name == "silu") return x * sigmoid_of(x);
  if (name == "softplus") return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  if (name == "elu") return x > 0 ? x : std::expm1(x);
  if (name == "selu") return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x));
  if (name == "leaky_relu") return x > 0 ? x : 0.2 * x;
  ADD_FAILURE() << "no closed form for " << name;
  return NAN;
}

// The elementwise names, as the error message lists them (softmax aside).
const std::vector<std::string> kElementwiseNames = {"linear", "relu",  "sigmoid", "tanh",     "gelu",
                                                    "gelu_approximate", "swish", "silu", "softplus",
                                                    "elu",    "selu",  "leaky_relu"};

const std::vector<float> kPoints = {-100.0f, -30.0f, -20.0f, -14.5f, -13.0f, -5.0f, -2.5f, -1.0f, -0.5f,
                                    -1e-3f,  0.0f,   1e-3f,  0.3f,   1.0f,   2.5f,  5.0f,  13.0f, 14.5f,
                                    20.0f,   30.0f,  100.0f};

Tensor points_tensor() { return Tensor::from_vector<float>(kPoints, {static_cast<int64_t>(kPoints.size())}); }

// Random values in [-3, 3] kept 0.1 away from 0, where relu, leaky_relu
// and selu have kinks that central differences straddle.
Tensor away_from_zero(const Shape& shape, uint32_t seed) {
  std::vector<float> values = testing::random_values(shape.element_count(), seed, -3.0f, 3.0f);
  for (float& value : values) {
    if (std::fabs(value) < 0.1f) value += value < 0 ? -0.1f : 0.1f;
  }
  return Tensor::from_vector<float>(values, shape);
}

TEST(Activations, EveryNameMatchesItsClosedForm) {
  const Tensor x = points_tensor();
  for (const std::string& name : kElementwiseNames) {
    SCOPED_TRACE(name);
    const std::vector<float> got = get_activation(name)(x).to_vector<float>();
    ASSERT_EQ(got.size(), kPoints.size());
    for (size_t i = 0; i < kPoints.size(); ++i) {
      const double want = closed_form(name, kPoints[i]);
      EXPECT_NEAR(got[i], want, 1e-6 + 4e-7 * std::fabs(want)) << "at x = " << kPoints[i];
    }
  }
}

TEST(Activations, EmptyNameIsLinear) {
  const Tensor x = points_tensor();
  EXPECT_EQ(get_activation("")(x).to_vector<float>(), kPoints);
}

TEST(Activations, FunctionsWithArgumentsMatchTheirClosedForms) {
  const Tensor x = points_tensor();
  const std::vector<float> elu_half = elu(x, 0.5).to_vector<float>();
  const std::vector<float> leaky = leaky_relu(x, 0.3).to_vector<float>();
  const std::vector<float> gelu_tanh = gelu(x, /*approximate=*/true).to_vector<float>();
  const std::vector<float> gelu_named = get_activation("gelu_approximate")(x).to_vector<float>();
  for (size_t i = 0; i < kPoints.size(); ++i) {
    const double point = kPoints[i];
    EXPECT_NEAR(elu_half[i], point > 0 ? point : 0.5 * std::expm1(point), 1e-6 + 4e-7 * std::fabs(point));
    EXPECT_NEAR(leaky[i], point > 0 ? point : 0.3 * point, 4e-7 * std::fabs(point));
    EXPECT_EQ(gelu_tanh[i], gelu_named[i]);
  }
  EXPECT_EQ(swish(x).to_vector<float>(), silu(x).to_vector<float>());
}

// TensorFlow's softplus: e^x below log(eps) + 2, so the far left tail keeps
// its relative precision instead of rounding log(1 + tiny) to 0, and x above
// the mirror threshold, so e^x never overflows.
TEST(Activations, SoftplusKeepsBothTailsAccurate) {
  const std::vector<float> points = {-80.0f, -40.0f, -20.0f, -14.0f, 14.0f, 40.0f, 100.0f, 1e30f};
  const std::vector<float> got =
      softplus(Tensor::from_vector<float>(points, {static_cast<int64_t>(points.size())})).to_vector<float>();
  for (size_t i = 0; i < points.size(); ++i) {
    const double want = closed_form("softplus", points[i]);
    EXPECT_NEAR(got[i], want, 2e-6 * want) << "at x = " << points[i];
  }
}

TEST(Activations, GradientsMatchFiniteDifferences) {
  for (const std::string& name : kElementwiseNames) {
    SCOPED_TRACE(name);
    testing::expect_layer_gradients_match_finite_differences(get_activation(name), away_from_zero({3, 7}, 17),
                                                             {});
  }
}

// In the tails a branch not taken holds e^x = inf; the select's zero
// gradient must not become 0 * inf = NaN there.
TEST(Activations, TailGradientsAreTheClosedFormDerivatives) {
  const std::vector<float> points = {-100.0f, -30.0f, -20.0f, -14.5f, 14.5f, 20.0f, 30.0f, 100.0f};
  const Tensor x = Tensor::from_vector<float>(points, {static_cast<int64_t>(points.size())});
  auto gradient_of = [&](const std::string& name) {
    GradientTape tape;
    tape.watch(x);
    return tape.gradient(ops::reduce_sum(get_activation(name)(x)), {x})[0].to_vector<float>();
  };
  const std::vector<float> softplus_slope = gradient_of("softplus"), elu_slope = gradient_of("elu"),
                           selu_slope = gradient_of("selu"), gelu_slope = gradient_of("gelu"),
                           swish_slope = gradient_of("swish");
  const double pi = std::acos(-1.0);
  for (size_t i = 0; i < points.size(); ++i) {
    const double point = points[i];
    SCOPED_TRACE(point);
    const double phi = std::exp(-0.5 * point * point) / std::sqrt(2.0 * pi);
    const double cdf = 0.5 * (1.0 + std::erf(point / std::sqrt(2.0)));
    EXPECT_NEAR(softplus_slope[i], sigmoid_of(point), 1e-6 + 1e-6 * sigmoid_of(point));
    EXPECT_NEAR(elu_slope[i], point > 0 ? 1.0 : std::exp(point), 1e-6);
    EXPECT_NEAR(selu_slope[i], kSeluScale * (point > 0 ? 1.0 : kSeluAlpha * std::exp(point)), 2e-6);
    EXPECT_NEAR(gelu_slope[i], cdf + point * phi, 1e-6);
    EXPECT_NEAR(swish_slope[i], sigmoid_of(point) * (1.0 + point * (1.0 - sigmoid_of(point))), 1e-6);
  }
}

// A compiled step (accel::function) runs each activation and its gradient as
// fused elementwise programs (ERF among them) to the eager numbers.
TEST(Activations, CompiledStepsMatchEagerAndFuse) {
  const Tensor x = away_from_zero({16, 33}, 23);
  for (const std::string& name : {"gelu", "gelu_approximate", "swish", "softplus", "elu", "selu", "leaky_relu"}) {
    SCOPED_TRACE(name);
    const ActivationFunction activation = get_activation(name);
    auto value_and_gradient = [&](const std::vector<Tensor>& arguments) {
      GradientTape tape;
      tape.watch(arguments[0]);
      const Tensor y = activation(arguments[0]);
      return std::vector<Tensor>{y, tape.gradient(ops::reduce_sum(y), {arguments[0]})[0]};
    };
    const std::vector<Tensor> eager = value_and_gradient({x});
    Function compiled = function(value_and_gradient);
    const std::vector<Tensor> replayed = compiled({x});
    ASSERT_EQ(replayed.size(), 2u);
    for (size_t output = 0; output < 2; ++output) {
      const std::vector<float> want = eager[output].to_vector<float>(), got = replayed[output].to_vector<float>();
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-6 * (1.0 + std::fabs(want[i]))) << "output " << output << " at " << i;
      }
    }
    EXPECT_EQ(compiled.statistics().eager_calls, 0);
    EXPECT_GE(compiled.statistics().fusions, 1);
  }
}

TEST(Activations, HalfPrecisionKeepsTheDtype) {
  const Tensor x = ops::cast(points_tensor(), DType::kBFloat16);
  for (const std::string& name : {"gelu", "gelu_approximate", "softplus", "elu", "selu", "swish"}) {
    SCOPED_TRACE(name);
    const Tensor y = get_activation(name)(x);
    EXPECT_EQ(y.dtype(), DType::kBFloat16);
    const std::vector<float> got = ops::cast(y, DType::kFloat32).to_vector<float>();
    const std::vector<float> rounded_x = ops::cast(x, DType::kFloat32).to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = closed_form(name, rounded_x[i]);
      // Every op rounds to bfloat16 (8 bits), and 1 + erf cancels: a loose bound.
      EXPECT_NEAR(got[i], want, 2e-2 * (1.0 + std::fabs(want))) << "at x = " << rounded_x[i];
    }
  }
}

// The softmax of `values` (shape dims) along `axis`, in double.
std::vector<double> reference_softmax(const std::vector<float>& values, const std::vector<int64_t>& dims, int axis) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t length = dims[static_cast<size_t>(axis)];
  std::vector<double> result(values.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * length + k) * inner + i); };
      double largest = -INFINITY, sum = 0;
      for (int64_t k = 0; k < length; ++k) largest = std::max<double>(largest, values[at(k)]);
      for (int64_t k = 0; k < length; ++k) sum += std::exp(values[at(k)] - largest);
      for (int64_t k = 0; k < length; ++k) result[at(k)] = std::exp(values[at(k)] - largest) / sum;
    }
  }
  return result;
}

TEST(Activations, SoftmaxOverAnyAxis) {
  const Shape shape{2, 3, 4};
  const Tensor x = testing::random_tensor(shape, 5, -4.0f, 4.0f);
  const std::vector<float> values = x.to_vector<float>();
  for (int axis : {0, 1, 2, -1, -2, -3}) {
    SCOPED_TRACE(axis);
    const Tensor y = softmax(x, axis);
    EXPECT_EQ(y.shape(), shape);
    const std::vector<double> want = reference_softmax(values, shape.dims(), axis < 0 ? axis + 3 : axis);
    const std::vector<float> got = y.to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "at flat index " << i;
  }
  EXPECT_EQ(get_activation("softmax")(x).to_vector<float>(), softmax(x, -1).to_vector<float>());
}

TEST(Activations, SoftmaxGradientsOverAnInnerAxis) {
  for (int axis : {0, 1}) {
    SCOPED_TRACE(axis);
    testing::expect_layer_gradients_match_finite_differences(
        [axis](const Tensor& x) { return softmax(x, axis); }, testing::random_tensor({3, 4, 2}, 9, -2.0f, 2.0f),
        {});
  }
}

TEST(Activations, SoftmaxRejectsAScalarAndAnAxisOutOfRange) {
  const Tensor x = testing::random_tensor({2, 3}, 1);
  EXPECT_THROW(softmax(x, 2), InvalidArgumentError);
  EXPECT_THROW(softmax(x, -3), InvalidArgumentError);
  EXPECT_THROW(softmax(Tensor::scalar<float>(1.0f)), InvalidArgumentError);
  try {
    softmax(x, 5);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("axis 5 is out of range for shape"), std::string::npos) << error.what();
  }
}

TEST(Activations, AnUnknownNameListsEveryKnownOne) {
  try {
    get_activation("gelu_tanh");
    FAIL() << "no error";
  } catch (const InvalidArgumentError& error) {
    EXPECT_STREQ(error.what(),
                 "unknown activation 'gelu_tanh'; expected one of linear, relu, sigmoid, tanh, softmax, gelu, "
                 "gelu_approximate, swish, silu, softplus, elu, selu, leaky_relu");
  }
  for (const std::string& name : kElementwiseNames) EXPECT_NO_THROW(get_activation(name)) << name;
}

}  // namespace
}  // namespace accel::keras
