// accel::function end to end: tracing once per signature, replaying, the
// eager fallback with its reason, and a compiled training step (forward,
// the tape's backward and a fused SGD update in one graph) against eager.
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/autodiff/variable.hpp>
#include <accel/function.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace accel {
namespace {

Tensor random_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  return ops::random_normal(Shape{rows, cols}, seed, 0.0, 0.5);
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  std::vector<float> left = a.to_vector<float>();
  std::vector<float> right = b.to_vector<float>();
  EXPECT_EQ(left.size(), right.size());
  double worst = 0.0;
  for (size_t i = 0; i < left.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(left[i]) - right[i]));
  return worst;
}

TEST(Function, TracesOncePerSignatureAndReplaysTheSameNumbers) {
  Variable weights(random_matrix(8, 4, 1), "w");
  Variable bias(ops::fill(Shape{4}, 0.25), "b");
  Function dense = function([&](const std::vector<Tensor>& arguments) {
    return std::vector<Tensor>{ops::relu(ops::add(ops::matmul(arguments[0], weights.value()), bias.value()))};
  });
  const Tensor x = random_matrix(16, 8, 2);
  const Tensor eager = ops::relu(ops::add(ops::matmul(x, weights.value()), bias.value()));
  const Tensor traced = dense({x})[0];
  const Tensor replayed = dense({x})[0];
  const Tensor replayed_again = dense({random_matrix(16, 8, 2)})[0];
  EXPECT_EQ(dense.trace_count(), 1);
  EXPECT_LE(max_abs_difference(eager, traced), 1e-6);
  // The tracing call's results are the compiled program's, as every replay's.
  EXPECT_EQ(max_abs_difference(traced, replayed), 0.0);
  EXPECT_LE(max_abs_difference(eager, replayed_again), 1e-6);
  EXPECT_EQ(dense.statistics().replays, 3);

  // A new batch size is a new signature: one retrace, then replays.
  dense({random_matrix(5, 8, 3)});
  dense({random_matrix(5, 8, 4)});
  EXPECT_EQ(dense.trace_count(), 2);
  EXPECT_EQ(dense.statistics().replays, 5);
}

// The tracing call runs the body eagerly, then puts back what it changed and
// runs the compiled program: a variable the body assigns (or an op updates in
// place) changes once per call, and the tracing call's results are the
// program's.
TEST(Function, TheTracingCallChangesStateOnceAndReturnsTheProgramsResults) {
  Variable counter(ops::fill(Shape{}, 0.0), "counter", false);
  Variable weights(ops::fill(Shape{3}, 1.0), "weights");
  Variable velocity(ops::zeros(Shape{3}), "velocity", false);
  Function step = function([&](const std::vector<Tensor>& arguments) {
    counter.assign(ops::add(counter.value(), ops::fill(Shape{}, 1.0)));
    ops::sgd_update(weights.value(), arguments[0], velocity.value(), 0.5, 0.9);  // in place
    return std::vector<Tensor>{ops::mul(counter.value(), ops::fill(Shape{}, 10.0))};
  });
  const Tensor gradient = ops::fill(Shape{3}, 1.0);
  EXPECT_EQ(step({gradient})[0].item<float>(), 10.0f);
  EXPECT_EQ(counter.value().item<float>(), 1.0f);
  EXPECT_EQ(weights.value().to_vector<float>(), std::vector<float>(3, 0.5f));  // one update of 0.5
  EXPECT_EQ(step({gradient})[0].item<float>(), 20.0f);
  EXPECT_EQ(counter.value().item<float>(), 2.0f);
  EXPECT_EQ(step.trace_count(), 1);
  EXPECT_EQ(step.statistics().replays, 2);
}

TEST(Function, CapturesVariablesByReference) {
  Variable scale(ops::fill(Shape{}, 2.0), "scale");
  Function times = function([&](const std::vector<Tensor>& arguments) {
    return std::vector<Tensor>{ops::mul(arguments[0], scale.value())};
  });
  const Tensor x = ops::fill(Shape{3}, 1.5);
  EXPECT_EQ(times({x})[0].to_vector<float>(), std::vector<float>(3, 3.0f));
  scale.assign(ops::fill(Shape{}, 4.0));
  EXPECT_EQ(times({x})[0].to_vector<float>(), std::vector<float>(3, 6.0f));
  EXPECT_EQ(times.trace_count(), 1);
}

TEST(Function, ABodyThatReadsATracedValueOnTheHostRunsEagerlyWithAReason) {
  Function data_dependent = function([](const std::vector<Tensor>& arguments) {
    const float total = ops::reduce_sum(arguments[0]).item<float>();
    return std::vector<Tensor>{total > 0 ? ops::neg(arguments[0]) : arguments[0]};
  });
  const Tensor positive = ops::fill(Shape{2}, 1.0);
  const Tensor negative = ops::fill(Shape{2}, -1.0);
  EXPECT_EQ(data_dependent({positive})[0].to_vector<float>(), std::vector<float>(2, -1.0f));
  // Same signature, other branch: only an eager run gets this right.
  EXPECT_EQ(data_dependent({negative})[0].to_vector<float>(), std::vector<float>(2, -1.0f));
  const FunctionStatistics statistics = data_dependent.statistics();
  EXPECT_NE(statistics.eager_reason.find("on the host"), std::string::npos) << statistics.eager_reason;
  EXPECT_EQ(statistics.replays, 0);
  EXPECT_EQ(statistics.eager_calls, 1);
}

TEST(Function, CreatingAVariableInsideTheBodyIsNotTraced) {
  Function creates = function([](const std::vector<Tensor>& arguments) {
    Variable state(ops::zeros(arguments[0].shape()), "state");
    return std::vector<Tensor>{ops::add(state.value(), arguments[0])};
  });
  creates({ops::fill(Shape{2}, 1.0)});
  EXPECT_NE(creates.statistics().eager_reason.find("creates the variable 'state:0'"), std::string::npos)
      << creates.statistics().eager_reason;
}

// Two dense layers trained with SGD+momentum: the whole step traced, fused
// and replayed, against the same step run eagerly from the same weights.
struct TwoLayerModel {
  Variable w1, b1, w2, b2, v_w1, v_b1, v_w2, v_b2;
  TwoLayerModel()
      : w1(random_matrix(12, 16, 11), "w1"), b1(ops::zeros(Shape{16}), "b1"),
        w2(random_matrix(16, 3, 12), "w2"), b2(ops::zeros(Shape{3}), "b2"),
        v_w1(ops::zeros(Shape{12, 16}), "v_w1", false), v_b1(ops::zeros(Shape{16}), "v_b1", false),
        v_w2(ops::zeros(Shape{16, 3}), "v_w2", false), v_b2(ops::zeros(Shape{3}), "v_b2", false) {}

  Tensor step(const Tensor& x, const Tensor& labels) {
    GradientTape tape;
    const Tensor hidden = ops::relu(ops::add(ops::matmul(x, w1.value()), b1.value()));
    const Tensor logits = ops::add(ops::matmul(hidden, w2.value()), b2.value());
    const Tensor loss = ops::reduce_mean(ops::sparse_softmax_cross_entropy(logits, labels).first);
    const std::vector<Tensor> gradients = tape.gradient(loss, std::vector<Variable>{w1, b1, w2, b2});
    const Variable* weights[] = {&w1, &b1, &w2, &b2};
    const Variable* velocities[] = {&v_w1, &v_b1, &v_w2, &v_b2};
    for (size_t i = 0; i < 4; ++i) {
      ops::sgd_update(weights[i]->value(), gradients[i], velocities[i]->value(), 0.05, 0.9);
    }
    return loss;
  }
};

TEST(Function, CompiledTrainingStepMatchesEagerOverFiftySteps) {
  TwoLayerModel eager_model;
  TwoLayerModel compiled_model;  // the same seeds: the same starting weights
  Function compiled_step = function([&](const std::vector<Tensor>& arguments) {
    return std::vector<Tensor>{compiled_model.step(arguments[0], arguments[1])};
  });
  for (int step = 0; step < 50; ++step) {
    const Tensor x = random_matrix(32, 12, 100 + static_cast<uint64_t>(step));
    std::vector<int32_t> label_values(32);
    for (int i = 0; i < 32; ++i) label_values[static_cast<size_t>(i)] = (i * 7 + step) % 3;
    const Tensor labels = Tensor::from_vector<int32_t>(label_values, Shape{32});
    const float eager_loss = eager_model.step(x, labels).item<float>();
    const float compiled_loss = compiled_step({x, labels})[0].item<float>();
    ASSERT_NEAR(compiled_loss, eager_loss, 1e-5 * std::max(1.0f, std::abs(eager_loss))) << "step " << step;
  }
  EXPECT_EQ(compiled_step.trace_count(), 1);
  const FunctionStatistics statistics = compiled_step.statistics();
  EXPECT_EQ(statistics.replays, 50);  // the tracing call's update is put back and replayed
  EXPECT_GT(statistics.fusions, 0) << compiled_step.graph_text();
  EXPECT_LT(statistics.compiled_ops, statistics.traced_ops);
  const double scale = std::max(1.0, static_cast<double>(ops::reduce_max(ops::abs(eager_model.w1.value())).item<float>()));
  EXPECT_LE(max_abs_difference(eager_model.w1.value(), compiled_model.w1.value()), 1e-4 * scale);
  EXPECT_LE(max_abs_difference(eager_model.w2.value(), compiled_model.w2.value()), 1e-4 * scale);
}

}  // namespace
}  // namespace accel
