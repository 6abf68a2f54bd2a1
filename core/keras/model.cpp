// Model: compile and the per-batch steps (train_step, test_step) with their
// loss and metric bookkeeping. The loops over epochs and batches are in
// training/ (fit, evaluate, predict).
#include <accel/keras/model.hpp>

#include <accel/autodiff/gradient_tape.hpp>
#include <accel/autodiff/variable_mirroring.hpp>
#include <accel/error.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/ops.hpp>

#include "utils/constant_like.hpp"

#include <map>
#include <regex>

namespace accel::keras {
namespace {

std::string metric_argument_name(const MetricArgument& metric) {
  if (const auto* name = std::get_if<std::string>(&metric)) return *name;
  return std::get<std::shared_ptr<Metric>>(metric)->name();
}

// CompileOptions::remat_blocks: each layer whose name the pattern's first
// group matches, to its block (numbered by first appearance). Throws
// InvalidArgumentError for a pattern that is no regular expression or has no group.
std::map<const Layer*, int32_t> remat_blocks_of(const std::string& text, const std::vector<std::shared_ptr<Layer>>& layers) {
  std::map<const Layer*, int32_t> block_of;
  if (text.empty()) return block_of;
  std::regex pattern;
  try {
    pattern = std::regex(text);
  } catch (const std::regex_error& error) {
    throw InvalidArgumentError("compile: remat_blocks '" + text + "' is not a regular expression: " + error.what());
  }
  if (pattern.mark_count() < 1) {
    throw InvalidArgumentError("compile: remat_blocks '" + text +
                               "' has no group; expected one that names the block, e.g. ^(layer\\d+)_");
  }
  std::map<std::string, int32_t> blocks;
  for (const std::shared_ptr<Layer>& layer : layers) {
    std::smatch match;
    const std::string& layer_name = layer->name();
    if (!std::regex_search(layer_name, match, pattern) || match[1].length() == 0) continue;
    const auto [found, added] = blocks.emplace(match[1].str(), static_cast<int32_t>(blocks.size()));
    block_of[layer.get()] = found->second;
  }
  return block_of;
}

}  // namespace

void Model::compile(OptimizerArgument optimizer, LossArgument loss, std::vector<MetricArgument> metrics,
                    CompileOptions options) {
  if (options.steps_per_execution < 1) {
    throw InvalidArgumentError("compile: steps_per_execution must be >= 1, got " +
                               std::to_string(options.steps_per_execution));
  }
  DistributedTraining* distribution = current_distributed_training();
  // keras.distribution's global, taken now as Keras takes it when it makes the train function.
  std::shared_ptr<const distribution::Distribution> sharding = keras::distribution::distribution();
  if (sharding && distribution != nullptr) {
    throw InvalidArgumentError("compile: model '" + name() + "' is compiled both in the scope of " +
                               distribution->strategy_name() +
                               " and under keras.distribution's set_distribution; use one of the two");
  }
  if (sharding && !options.jit_compile) {
    throw FailedPreconditionError("compile: under keras.distribution's set_distribution the train step runs "
                                  "sharded as a compiled program; compile with jit_compile = true");
  }
  std::map<const Layer*, int32_t> remat_blocks = remat_blocks_of(options.remat_blocks, layers());
  if (distribution != nullptr && distribution->num_local_replicas() > 1) {
    for (const Variable& weight : weights()) {
      if (weight.replica_count() != static_cast<size_t>(distribution->num_local_replicas())) {
        throw InvalidArgumentError("compile: the weight '" + weight.name() + "' of model '" + name() +
                                   "' was not created in the scope of " + distribution->strategy_name() +
                                   "; create (or build) the model inside strategy.scope()");
      }
    }
  }
  std::shared_ptr<Optimizer> resolved_optimizer = std::holds_alternative<std::string>(optimizer)
                                                      ? get_optimizer(std::get<std::string>(optimizer))
                                                      : std::get<std::shared_ptr<Optimizer>>(optimizer);
  std::shared_ptr<Loss> resolved_loss =
      std::holds_alternative<std::string>(loss) ? get_loss(std::get<std::string>(loss)) : std::get<std::shared_ptr<Loss>>(loss);
  if (!resolved_optimizer) throw InvalidArgumentError("compile: the optimizer is null");
  if (options.auto_scale_loss && dtype_policy().name() == "mixed_float16" &&
      dynamic_cast<const LossScaleOptimizer*>(resolved_optimizer.get()) == nullptr) {
    resolved_optimizer = std::make_shared<LossScaleOptimizer>(std::move(resolved_optimizer));
  }
  if (!resolved_loss) throw InvalidArgumentError("compile: the loss is null");
  for (const MetricArgument& metric : metrics) {
    if (const auto* name = std::get_if<std::string>(&metric)) {
      // Names resolve against the data's shapes later; check them now, so a
      // typo fails at compile as in Keras rather than at the first batch.
      (void)get_metric(*name, Shape{1}, Shape{1, 2});
    } else if (!std::get<std::shared_ptr<Metric>>(metric)) {
      throw InvalidArgumentError("compile: a metric is null");
    }
  }
  optimizer_ = std::move(resolved_optimizer);
  loss_ = std::move(resolved_loss);
  distribution_ = distribution;
  steps_per_execution_ = options.steps_per_execution;
  // A new compile starts new compiled steps, as Keras's make_train_function.
  jit_compile_ = options.jit_compile;
  remat_ = options.remat;
  remat_block_of_ = std::move(remat_blocks);
  sharding_ = std::move(sharding);
  sharded_step_.reset();
  train_function_.reset();
  test_function_.reset();
  predict_function_.reset();
  replica_train_functions_.clear();
  metric_counts_.clear();
  metric_arguments_ = std::move(metrics);
  metrics_.clear();
  metrics_built_ = false;
  output_metrics_.clear();
  loss_tracker_.reset_state();
}

void Model::require_compiled(const char* what) const {
  if (!compiled()) {
    throw FailedPreconditionError("Model '" + name() + "': call compile(optimizer, loss, metrics) before " + what);
  }
}

Optimizer& Model::optimizer() const {
  require_compiled("optimizer()");
  return *optimizer_;
}

const Loss& Model::loss() const {
  require_compiled("loss()");
  return *loss_;
}

std::vector<std::string> Model::metrics_names() const {
  std::vector<std::string> names{loss_tracker_.name()};
  if (outputs().size() > 1) {
    // Keras: the total loss, each output's loss, then each output's metrics.
    const std::vector<std::string> prefixes = output_prefixes();
    for (const std::string& prefix : prefixes) names.push_back(prefix + "loss");
    for (const std::string& prefix : prefixes) {
      for (const MetricArgument& metric : metric_arguments_) names.push_back(prefix + metric_argument_name(metric));
    }
    return names;
  }
  for (const MetricArgument& metric : metric_arguments_) names.push_back(metric_argument_name(metric));
  return names;
}

Logs Model::metric_results() const {
  Logs logs{{loss_tracker_.name(), loss_tracker_.result()}};
  for (const auto& metric : metrics_) logs[metric->name()] = metric->result();
  const std::vector<std::string> prefixes = output_metrics_.empty() ? std::vector<std::string>{} : output_prefixes();
  for (size_t output = 0; output < output_metrics_.size(); ++output) {
    logs[prefixes[output] + "loss"] = output_metrics_[output].loss->result();
    for (size_t index = 0; index < output_metrics_[output].metrics.size(); ++index) {
      logs[prefixes[output] + metric_argument_name(metric_arguments_[index])] =
          output_metrics_[output].metrics[index]->result();
    }
  }
  return logs;
}

void Model::reset_metrics() {
  loss_tracker_.reset_state();
  for (const auto& metric : metrics_) metric->reset_state();
  for (const OutputMetrics& output : output_metrics_) {
    output.loss->reset_state();
    for (const auto& metric : output.metrics) metric->reset_state();
  }
}

void Model::build_metrics(const Tensor& y_true, const Tensor& y_pred) {
  if (metrics_built_) return;
  for (const MetricArgument& metric : metric_arguments_) {
    if (const auto* name = std::get_if<std::string>(&metric)) {
      metrics_.push_back(get_metric(*name, y_true.shape(), y_pred.shape()));
    } else {
      metrics_.push_back(std::get<std::shared_ptr<Metric>>(metric));
    }
  }
  metrics_built_ = true;
}

void Model::update_metrics(const Tensor& y_true, const Tensor& y_pred, const Tensor& loss) {
  build_metrics(y_true, y_pred);
  // Keras weights each batch's mean loss by the batch size, so the epoch
  // loss is the mean over samples even when the last batch is smaller.
  const double batch_size = y_true.rank() > 0 ? static_cast<double>(y_true.shape().dim(0)) : 1.0;
  loss_tracker_.update_state(detail::scalar_to_double(loss), batch_size);
  for (const auto& metric : metrics_) metric->update_state(y_true, y_pred);
}

Logs Model::train_step(const Tensor& x, const Tensor& y) {
  require_compiled("training");
  // Under a strategy: fit runs this step on every replica (distributed_steps.cpp).
  if (distribution_ != nullptr) {
    if (!inside_replica()) return distributed_train_step(x, y);
    replica_train_step(x, y);
    return {};
  }
  if (sharding_) return sharded_train_step(x, y);
  if (jit_compile_) return compiled_step(x, y, /*training=*/true);
  Tensor y_pred;
  Tensor loss;
  std::vector<Variable> weights;
  std::vector<Tensor> gradients;
  {
    GradientTape tape;
    y_pred = (*this)(x, /*training=*/true);
    loss = (*loss_)(y, y_pred);
    // Listed after the call: the first call is what builds the weights.
    weights = trainable_weights();
    // Scaled up under a LossScaleOptimizer (mixed_float16); the metrics see the loss itself.
    gradients = tape.gradient(optimizer_->scale_loss(loss), weights);
  }
  std::vector<std::pair<Tensor, Variable>> gradients_and_variables;
  gradients_and_variables.reserve(weights.size());
  for (size_t index = 0; index < weights.size(); ++index) {
    gradients_and_variables.emplace_back(gradients[index], weights[index]);
  }
  optimizer_->apply_gradients(gradients_and_variables);
  update_metrics(y, y_pred, loss);
  return metric_results();
}

Logs Model::test_step(const Tensor& x, const Tensor& y) {
  require_compiled("evaluation");
  if (distribution_ != nullptr) {
    if (!inside_replica()) return distributed_test_step(x, y);
    replica_test_step(x, y);
    return {};
  }
  if (jit_compile_) return compiled_step(x, y, /*training=*/false);
  const Tensor y_pred = (*this)(x, /*training=*/false);
  update_metrics(y, y_pred, (*loss_)(y, y_pred));
  return metric_results();
}

}  // namespace accel::keras
