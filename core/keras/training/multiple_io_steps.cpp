// The training and test steps of a model of several inputs or outputs, as
// Keras's compiled loss and metrics containers: the compiled loss applied to
// every output and summed (tf.add_n) into the total that is differentiated;
// the total, each output's loss and each output's metrics tracked under
// "<output layer name>_" names.
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/ops.hpp>

#include "../utils/constant_like.hpp"
#include "output_losses.hpp"

#include <map>
#include <set>

namespace accel::keras {

bool Model::has_several_inputs_or_outputs() const { return inputs().size() > 1 || outputs().size() > 1; }

void Model::check_list_data(const char* what, const std::vector<Tensor>& x, const std::vector<Tensor>& y) const {
  if (x.size() != inputs().size() || y.size() != outputs().size()) {
    throw InvalidArgumentError(std::string(what) + ": model '" + name() + "' has " + std::to_string(inputs().size()) +
                               " inputs and " + std::to_string(outputs().size()) + " outputs, got " +
                               std::to_string(x.size()) + " input and " + std::to_string(y.size()) + " target tensors");
  }
  if (outputs().size() > 1) {
    for (const MetricArgument& metric : metric_arguments_) {
      if (!std::holds_alternative<std::string>(metric)) {
        throw InvalidArgumentError(std::string(what) + ": model '" + name() +
                                   "' has several outputs, each with its own metrics: compile it with metric "
                                   "names, not a metric object ('" +
                                   std::get<std::shared_ptr<Metric>>(metric)->name() + "')");
      }
    }
  }
}

// Keras's _set_output_names: the output layers' names, a repeated one
// numbered ("dense", "dense_1", ...).
std::vector<std::string> Model::output_prefixes() const {
  std::vector<std::string> prefixes;
  std::set<std::string> taken;
  std::map<std::string, int> counts;
  for (const KerasTensor& output : outputs()) {
    const std::string& layer_name = output.layer().name();
    std::string proposal = layer_name;
    while (taken.count(proposal) > 0) {
      int& count = counts.emplace(layer_name, 1).first->second;
      proposal = layer_name + "_" + std::to_string(count++);
    }
    taken.insert(proposal);
    prefixes.push_back(proposal + "_");
  }
  return prefixes;
}

void Model::update_output_metrics(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                                  const std::vector<Tensor>& losses, const Tensor& total_loss) {
  if (y_pred.size() == 1) {
    update_metrics(y_true.front(), y_pred.front(), total_loss);
    return;
  }
  if (output_metrics_.empty()) {
    const std::vector<std::string> prefixes = output_prefixes();
    for (size_t output = 0; output < y_pred.size(); ++output) {
      OutputMetrics metrics{std::make_shared<Mean>(prefixes[output] + "loss"), {}};
      for (const MetricArgument& argument : metric_arguments_) {
        // Checked by fit / evaluate: a model of several outputs takes metric names.
        metrics.metrics.push_back(get_metric(std::get<std::string>(argument), y_true[output].shape(),
                                             y_pred[output].shape()));
      }
      output_metrics_.push_back(std::move(metrics));
    }
  }
  // Keras weights each batch's losses by the batch size, as for one output.
  const double batch_size = y_true.front().rank() > 0 ? static_cast<double>(y_true.front().shape().dim(0)) : 1.0;
  loss_tracker_.update_state(detail::scalar_to_double(total_loss), batch_size);
  for (size_t output = 0; output < y_pred.size(); ++output) {
    output_metrics_[output].loss->update_state(detail::scalar_to_double(losses[output]), batch_size);
    for (const auto& metric : output_metrics_[output].metrics) metric->update_state(y_true[output], y_pred[output]);
  }
}

Logs Model::train_step_on_lists(const std::vector<Tensor>& x, const std::vector<Tensor>& y) {
  require_compiled("training");
  std::vector<Tensor> y_pred;
  detail::OutputLosses losses;
  std::vector<Variable> weights;
  std::vector<Tensor> gradients;
  {
    GradientTape tape;
    y_pred = call_outputs(x, /*training=*/true);
    losses = detail::output_losses(*loss_, y, y_pred);
    // Listed after the call, as train_step does.
    weights = trainable_weights();
    gradients = tape.gradient(optimizer_->scale_loss(losses.total), weights);
  }
  std::vector<std::pair<Tensor, Variable>> gradients_and_variables;
  gradients_and_variables.reserve(weights.size());
  for (size_t index = 0; index < weights.size(); ++index) {
    gradients_and_variables.emplace_back(gradients[index], weights[index]);
  }
  optimizer_->apply_gradients(gradients_and_variables);
  update_output_metrics(y, y_pred, losses.each, losses.total);
  return metric_results();
}

Logs Model::test_step_on_lists(const std::vector<Tensor>& x, const std::vector<Tensor>& y) {
  require_compiled("evaluation");
  const std::vector<Tensor> y_pred = call_outputs(x, /*training=*/false);
  const detail::OutputLosses losses = detail::output_losses(*loss_, y, y_pred);
  update_output_metrics(y, y_pred, losses.each, losses.total);
  return metric_results();
}

}  // namespace accel::keras
