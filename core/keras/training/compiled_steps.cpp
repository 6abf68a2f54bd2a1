// Model's compiled steps (compile's jit_compile, Keras's train_function /
// test_function / predict_function): each step is an accel::function whose
// body is the whole built-in step, so that one trace per batch signature
// holds the forward pass, the tape's backward pass, the loss, the metrics'
// batch sums and the optimizer update, and later batches replay it.
//
// What stays on the host is what Keras keeps in Python: the running means of
// the loss and the metrics (double totals), folded in after each replay from
// the step's results, one scalar per metric.
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/keras/model.hpp>

#include "../utils/constant_like.hpp"

namespace accel::keras {
std::string Model::batch_shapes_key(const Tensor& x, const Tensor& y) {
  return x.shape().to_string() + y.shape().to_string();
}

void Model::build_for_compiled_step(const Tensor& x, bool training) {
  // One eager forward pass builds any kind of model (Sequential, Functional,
  // subclassed) as its first call does; training=false draws no random
  // numbers and updates no moving statistics.
  if (!built()) (void)(*this)(x, /*training=*/false);
  if (training) optimizer_->build(trainable_weights());
}

std::vector<Tensor> Model::step_results(const Tensor& x, const Tensor& y, bool training) {
  Tensor y_pred;
  Tensor loss;
  if (training) {
    const std::vector<Variable> weights = trainable_weights();
    std::vector<Tensor> gradients;
    {
      GradientTape tape;
      y_pred = (*this)(x, /*training=*/true);
      loss = (*loss_)(y, y_pred);
      gradients = tape.gradient(optimizer_->scale_loss(loss), weights);
    }
    GradientsAndVariables gradients_and_variables;
    gradients_and_variables.reserve(weights.size());
    for (size_t index = 0; index < weights.size(); ++index) {
      gradients_and_variables.emplace_back(gradients[index], weights[index]);
    }
    optimizer_->apply_gradients(gradients_and_variables);
  } else {
    y_pred = (*this)(x, /*training=*/false);
    loss = (*loss_)(y, y_pred);
  }
  build_metrics(y, y_pred);
  std::vector<Tensor> results{loss};
  std::vector<double> counts;
  bool needs_predictions = false;
  for (const auto& metric : metrics_) {
    if (const auto* mean = dynamic_cast<const Mean*>(metric.get())) {
      Mean::BatchContribution contribution = mean->batch_contribution(y, y_pred);
      results.push_back(std::move(contribution.sum));
      counts.push_back(contribution.count);
    } else {
      needs_predictions = true;  // a metric of one's own: updated on the host from them
    }
  }
  if (needs_predictions) results.push_back(y_pred);
  metric_counts_[batch_shapes_key(x, y)] = std::move(counts);
  return results;
}

void Model::update_metrics_from_results(const Tensor& x, const Tensor& y, const std::vector<Tensor>& results) {
  const double batch_size = y.rank() > 0 ? static_cast<double>(y.shape().dim(0)) : 1.0;
  loss_tracker_.update_state(detail::scalar_to_double(results.front()), batch_size);
  const std::vector<double>& counts = metric_counts_.at(batch_shapes_key(x, y));
  size_t next_result = 1;
  size_t next_count = 0;
  for (const auto& metric : metrics_) {
    if (auto* mean = dynamic_cast<Mean*>(metric.get())) {
      mean->add_batch(results[next_result++], counts[next_count++]);
    } else {
      metric->update_state(y, results.back());
    }
  }
}

Logs Model::compiled_step(const Tensor& x, const Tensor& y, bool training) {
  build_for_compiled_step(x, training);
  std::unique_ptr<Function>& function = training ? train_function_ : test_function_;
  if (!function) {
    function = std::make_unique<Function>(
        [this, training](const std::vector<Tensor>& arguments) {
          return step_results(arguments[0], arguments[1], training);
        },
        FunctionOptions{.name = name() + (training ? "_train_function" : "_test_function"),
                        .jit_compile = true,
                        .remat = training ? remat_ : RematPolicy::kNone});
  }
  update_metrics_from_results(x, y, (*function)({x, y}));
  return metric_results();
}

Tensor Model::compiled_predict_step(const Tensor& x) {
  build_for_compiled_step(x, /*training=*/false);
  if (!predict_function_) {
    predict_function_ = std::make_unique<Function>(
        [this](const std::vector<Tensor>& arguments) {
          return std::vector<Tensor>{(*this)(arguments[0], /*training=*/false)};
        },
        FunctionOptions{name() + "_predict_function", /*jit_compile=*/true});
  }
  return (*predict_function_)({x}).front();
}

}  // namespace accel::keras
