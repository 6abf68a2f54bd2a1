// Model's steps under a tf.distribute strategy (distributed_training.hpp):
// the global batch split across the replicas, the virtual train_step /
// test_step run on each replica's part on its own thread, device and copies
// of the weights (Keras's strategy.run), then the loss and metrics updated
// once from the gathered results of every replica, so that they are those
// of the global batch; and compute_loss, scaled for the replicas. A model of
// several inputs or outputs takes the same course with lists: every input
// and target split, each output's loss summed on each replica, each output's
// predictions and loss gathered for its own metrics.
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/autodiff/variable_mirroring.hpp>
#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include "../utils/constant_like.hpp"
#include "output_losses.hpp"

#include <algorithm>

namespace accel::keras {
namespace {

int64_t rows_of(const Tensor& batch) { return batch.rank() == 0 ? 1 : batch.shape().dim(0); }

Device host_device() { return find_device("/CPU:0"); }

// A replica's loss times 1 / num_replicas_in_sync (unchanged for one replica).
Tensor scale_for_replicas(const Tensor& loss, const DistributedTraining& strategy) {
  const double loss_scale = 1.0 / static_cast<double>(strategy.num_replicas_in_sync());
  return loss_scale == 1.0 ? loss : ops::mul(loss, detail::constant_like(loss_scale, loss));
}

// The model's output shape after the batch axis: the row shape of its predictions.
std::vector<int64_t> prediction_row_shape(const Model& model) {
  const LayerShape& shape = model.output_shape();
  return {shape.begin() + 1, shape.end()};
}

// One replica's [loss * rows, rows], as one row on the host (the gathered
// rows sum to the global batch's loss total and row count).
Tensor loss_row(const Tensor& loss, int64_t rows) {
  const double total = rows == 0 ? 0.0 : detail::scalar_to_double(loss) * static_cast<double>(rows);
  return Tensor::from_vector<float>({static_cast<float>(total), static_cast<float>(rows)}, Shape{1, 2}, host_device());
}

// Replicas without rows produced no predictions: an empty block of the right row shape.
void fill_empty_predictions(std::vector<Tensor>& predictions, const std::vector<int64_t>& row_shape) {
  DType dtype = DType::kFloat32;
  for (const Tensor& prediction : predictions) {
    if (prediction.defined()) dtype = prediction.dtype();
  }
  std::vector<int64_t> empty_dims{0};
  empty_dims.insert(empty_dims.end(), row_shape.begin(), row_shape.end());
  for (Tensor& prediction : predictions) {
    if (!prediction.defined()) prediction = Tensor::empty(Shape(empty_dims), dtype, host_device());
  }
}

struct GatheredLoss {
  double total = 0;
  double rows = 0;
};

GatheredLoss gather_losses(DistributedTraining& strategy, const std::vector<data::Element>& parts,
                           const std::vector<Tensor>& losses) {
  std::vector<Tensor> rows;
  for (size_t replica = 0; replica < parts.size(); ++replica) {
    rows.push_back(loss_row(losses[replica], losses[replica].defined() ? rows_of(parts[replica][0]) : 0));
  }
  const std::vector<float> gathered =
      strategy.gather_replica_rows(rows).to_vector<float>();
  GatheredLoss sum;
  for (size_t index = 0; index + 1 < gathered.size(); index += 2) {
    sum.total += gathered[index];
    sum.rows += gathered[index + 1];
  }
  return sum;
}

}  // namespace

Logs Model::update_metrics_from_replicas(const std::vector<data::Element>& parts, std::vector<Tensor> predictions,
                                         const std::vector<Tensor>& losses, const Tensor& y_true) {
  DistributedTraining& strategy = *distribution_;
  fill_empty_predictions(predictions, prediction_row_shape(*this));
  const Tensor y_pred = strategy.gather_replica_rows(predictions);
  const GatheredLoss loss = gather_losses(strategy, parts, losses);
  const Tensor labels = y_true.to(host_device());
  build_metrics(labels, y_pred);
  if (loss.rows > 0) loss_tracker_.update_state(loss.total / loss.rows, loss.rows);
  for (const auto& metric : metrics_) metric->update_state(labels, y_pred);
  return metric_results();
}

void Model::build_in_strategy_scope(const Tensor& x) {
  if (built()) return;
  distribution_->run_in_scope([&] { build(LayerShape(x.shape().dims().begin(), x.shape().dims().end())); });
}

Logs Model::distributed_train_step(const Tensor& x, const Tensor& y) {
  require_compiled("training");
  DistributedTraining& strategy = *distribution_;
  build_in_strategy_scope(x);
  const std::vector<data::Element> parts = strategy.split_batch(data::Element{x, y});
  replica_step_results_.assign(parts.size(), ReplicaStepResult{});
  std::vector<Logs> replica_logs(parts.size());
  if (jit_compile_ && replica_train_functions_.size() != parts.size()) {
    // Made here, before the replicas' threads start; each traces on its own.
    replica_train_functions_.clear();
    for (size_t replica = 0; replica < parts.size(); ++replica) {
      replica_train_functions_.push_back(std::make_unique<Function>(
          [this](const std::vector<Tensor>& arguments) { return replica_forward_backward(arguments[0], arguments[1]); },
          FunctionOptions{.name = name() + "_replica_" + std::to_string(replica) + "_train_function",
                          .jit_compile = true,
                          .remat = remat_}));
    }
  }
  // Keras's strategy.run(train_step): the virtual step, an override included.
  strategy.run_replicas([&](int replica) {
    const data::Element& part = parts[static_cast<size_t>(replica)];
    replica_logs[static_cast<size_t>(replica)] = train_step(part[0], part[1]);
  });
  return logs_after_replicas(parts, replica_logs, y);
}

std::vector<Tensor> Model::replica_forward_backward(const Tensor& x, const Tensor& y) {
  const std::vector<Variable> weights = trainable_weights();
  GradientTape tape;
  const Tensor y_pred = (*this)(x, /*training=*/true);
  const Tensor loss = (*loss_)(y, y_pred);
  // Keras scales each replica's loss so that the summed gradients are those
  // of the mean over the replicas.
  const Tensor scaled = scale_for_replicas(loss, *distribution_);
  std::vector<Tensor> gradients = tape.gradient(optimizer_->scale_loss(scaled), weights);
  std::vector<Tensor> results{loss, y_pred};
  for (size_t index = 0; index < weights.size(); ++index) {
    // A compiled pass returns a tensor for every weight: a weight the loss
    // does not reach gets an empty one, which replica_train_step turns back
    // into no gradient, so the optimizer skips the weight as Keras does.
    if (!gradients[index].defined() && jit_compile_) gradients[index] = ops::zeros(Shape{0}, weights[index].dtype());
    results.push_back(std::move(gradients[index]));
  }
  return results;
}

void Model::replica_train_step(const Tensor& x, const Tensor& y) {
  const int replica = current_replica_index();
  const std::vector<Variable> weights = trainable_weights();
  GradientsAndVariables gradients_and_variables;
  ReplicaStepResult& result = replica_step_results_.at(static_cast<size_t>(replica));
  if (rows_of(x) == 0) {
    // No rows (the end of an uneven last batch): zero gradients, so this
    // replica still takes part in the all-reduce.
    for (const Variable& weight : weights) {
      gradients_and_variables.emplace_back(ops::zeros(weight.shape(), weight.dtype()), weight);
    }
  } else {
    Function* compiled = jit_compile_ && static_cast<size_t>(replica) < replica_train_functions_.size()
                             ? replica_train_functions_[static_cast<size_t>(replica)].get()
                             : nullptr;
    const std::vector<Tensor> results = compiled != nullptr ? (*compiled)({x, y}) : replica_forward_backward(x, y);
    for (size_t index = 0; index < weights.size(); ++index) {
      const Tensor& gradient = results[2 + index];
      const bool reached = gradient.defined() && gradient.element_count() == weights[index].shape().element_count();
      gradients_and_variables.emplace_back(reached ? gradient : Tensor(), weights[index]);
    }
    result.loss = results[0];
    result.prediction = results[1];
  }
  optimizer_->apply_gradients(gradients_and_variables);
  result.built_in_step = true;
}

Logs Model::distributed_test_step(const Tensor& x, const Tensor& y) {
  require_compiled("evaluation");
  DistributedTraining& strategy = *distribution_;
  build_in_strategy_scope(x);
  const std::vector<data::Element> parts = strategy.split_batch(data::Element{x, y});
  replica_step_results_.assign(parts.size(), ReplicaStepResult{});
  std::vector<Logs> replica_logs(parts.size());
  strategy.run_replicas([&](int replica) {
    const data::Element& part = parts[static_cast<size_t>(replica)];
    replica_logs[static_cast<size_t>(replica)] = test_step(part[0], part[1]);
  });
  return logs_after_replicas(parts, replica_logs, y);
}

void Model::replica_test_step(const Tensor& x, const Tensor& y) {
  ReplicaStepResult& result = replica_step_results_.at(static_cast<size_t>(current_replica_index()));
  result.built_in_step = true;
  if (rows_of(x) == 0) return;
  result.prediction = (*this)(x, /*training=*/false);
  result.loss = (*loss_)(y, result.prediction);
}

Logs Model::logs_after_replicas(const std::vector<data::Element>& parts, const std::vector<Logs>& replica_logs,
                                const Tensor& y_true) {
  const bool built_in = std::all_of(replica_step_results_.begin(), replica_step_results_.end(),
                                    [](const ReplicaStepResult& result) { return result.built_in_step; });
  if (!built_in) return replica_logs.front();
  std::vector<Tensor> predictions;
  std::vector<Tensor> losses;
  for (const ReplicaStepResult& result : replica_step_results_) {
    predictions.push_back(result.prediction);
    losses.push_back(result.loss);
  }
  replica_step_results_.clear();
  return update_metrics_from_replicas(parts, std::move(predictions), losses, y_true);
}

Tensor Model::compute_loss(const Tensor& /*x*/, const Tensor& y, const Tensor& y_pred) const {
  require_compiled("compute_loss");
  const Tensor loss = (*loss_)(y, y_pred);
  if (distribution_ == nullptr || !inside_replica()) return loss;
  return scale_for_replicas(loss, *distribution_);
}

namespace {

std::vector<Tensor> part_range(const data::Element& part, size_t begin, size_t end) {
  const std::vector<Tensor>& components = part.components();
  return {components.begin() + static_cast<std::ptrdiff_t>(begin), components.begin() + static_cast<std::ptrdiff_t>(end)};
}

// Output `output`'s rows from every replica (`by_replica[r]`: replica r's
// outputs, empty where it had no rows), on the host in replica order.
Tensor gather_output(DistributedTraining& strategy, const Model& model, size_t output,
                     const std::vector<std::vector<Tensor>>& by_replica) {
  std::vector<Tensor> blocks;
  for (const std::vector<Tensor>& replica : by_replica) blocks.push_back(replica.empty() ? Tensor() : replica[output]);
  const LayerShape& shape = model.outputs()[output].shape();
  fill_empty_predictions(blocks, {shape.begin() + 1, shape.end()});
  return strategy.gather_replica_rows(blocks);
}

}  // namespace

Logs Model::distributed_step_on_lists(const std::vector<Tensor>& x, const std::vector<Tensor>& y, bool training) {
  require_compiled(training ? "training" : "evaluation");
  DistributedTraining& strategy = *distribution_;
  std::vector<Tensor> global = x;
  global.insert(global.end(), y.begin(), y.end());
  const std::vector<data::Element> parts = strategy.split_batch(data::Element(std::move(global)));
  // Each replica's predictions and (unscaled) losses, one per output; empty without rows.
  std::vector<std::vector<Tensor>> predictions_by_replica(parts.size()), losses_by_replica(parts.size());
  strategy.run_replicas([&](int replica) {
    const data::Element& part = parts[static_cast<size_t>(replica)];
    const std::vector<Tensor> part_x = part_range(part, 0, x.size());
    const std::vector<Tensor> part_y = part_range(part, x.size(), part.size());
    const std::vector<Variable> weights = trainable_weights();
    std::vector<Tensor> gradients(weights.size());
    if (rows_of(part_x.front()) > 0) {
      GradientTape tape;
      std::vector<Tensor>& predictions = predictions_by_replica[static_cast<size_t>(replica)];
      predictions = call_outputs(part_x, training);
      const detail::OutputLosses losses = detail::output_losses(*loss_, part_y, predictions);
      losses_by_replica[static_cast<size_t>(replica)] = losses.each;
      if (training) gradients = tape.gradient(optimizer_->scale_loss(scale_for_replicas(losses.total, strategy)), weights);
    }
    if (!training) return;
    // Every replica hands every weight to the all-reduce: zeros where it had
    // no rows or the loss does not reach the weight.
    GradientsAndVariables gradients_and_variables;
    for (size_t index = 0; index < weights.size(); ++index) {
      Tensor gradient = gradients[index].defined() ? gradients[index]
                                                    : ops::zeros(weights[index].shape(), weights[index].dtype());
      gradients_and_variables.emplace_back(std::move(gradient), weights[index]);
    }
    optimizer_->apply_gradients(gradients_and_variables);
  });

  // The global batch's predictions and mean loss of each output, on the host.
  const size_t output_count = outputs().size();
  std::vector<Tensor> predictions(output_count), losses(output_count), targets;
  double total_loss = 0;
  for (size_t output = 0; output < output_count; ++output) {
    predictions[output] = gather_output(strategy, *this, output, predictions_by_replica);
    std::vector<Tensor> replica_losses;
    for (const std::vector<Tensor>& replica : losses_by_replica) {
      replica_losses.push_back(replica.empty() ? Tensor() : replica[output]);
    }
    const GatheredLoss gathered = gather_losses(strategy, parts, replica_losses);
    const double mean = gathered.rows > 0 ? gathered.total / gathered.rows : 0.0;
    total_loss += mean;
    losses[output] = Tensor::scalar<float>(static_cast<float>(mean), host_device());
    targets.push_back(y[output].to(host_device()));
  }
  update_output_metrics(targets, predictions, losses,
                        Tensor::scalar<float>(static_cast<float>(total_loss), host_device()));
  return metric_results();
}

std::vector<Tensor> Model::distributed_predict_on_lists(const std::vector<Tensor>& x) {
  DistributedTraining& strategy = *distribution_;
  const std::vector<data::Element> parts = strategy.split_batch(data::Element(x));
  std::vector<std::vector<Tensor>> by_replica(parts.size());
  strategy.run_replicas([&](int replica) {
    const data::Element& part = parts[static_cast<size_t>(replica)];
    if (rows_of(part[0]) > 0) by_replica[static_cast<size_t>(replica)] = call_outputs(part.components(), false);
  });
  std::vector<Tensor> predictions;
  for (size_t output = 0; output < outputs().size(); ++output) {
    predictions.push_back(gather_output(strategy, *this, output, by_replica));
  }
  return predictions;
}

Tensor Model::distributed_predict_step(const Tensor& x) {
  DistributedTraining& strategy = *distribution_;
  build_in_strategy_scope(x);
  const std::vector<data::Element> parts = strategy.split_batch(data::Element{x});
  std::vector<Tensor> predictions(parts.size());
  strategy.run_replicas([&](int replica) {
    const data::Element& part = parts[static_cast<size_t>(replica)];
    if (rows_of(part[0]) > 0) predictions[static_cast<size_t>(replica)] = (*this)(part[0], /*training=*/false);
  });
  fill_empty_predictions(predictions, prediction_row_shape(*this));
  return strategy.gather_replica_rows(predictions);
}

}  // namespace accel::keras
