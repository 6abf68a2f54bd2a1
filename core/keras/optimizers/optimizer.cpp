// Optimizer's shared step (OptimizerV2.apply_gradients): filter, create
// slots, clip, update each variable, count the iteration.
#include <accel/keras/optimizers/optimizer.hpp>

#include <accel/autodiff/variable_mirroring.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/plugin/accel_plugin.h>

#include <cmath>

#include "../utils/constant_like.hpp"
#include "graph/trace_scopes.hpp"

namespace accel::keras {
namespace {

using detail::constant_like;

// "dense/kernel:0" -> "dense/kernel" (TensorFlow's shared name).
std::string without_output_index(const std::string& name) {
  const size_t colon = name.rfind(':');
  return colon == std::string::npos ? name : name.substr(0, colon);
}

Tensor squared_l2_norm(const Tensor& tensor) { return ops::reduce_sum(ops::square(tensor)); }

// A compiled step replays the update ops with the attributes they were traced
// with; the rate and Adam's step change every iteration, so they are set again
// before each replay. The three update ops' attributes all start with the rate.
void set_rate_and_step(int32_t op, void* attributes, double learning_rate, int64_t iteration) {
  switch (op) {
    case ACCEL_OP_SGD_UPDATE:
      static_cast<AccelSgdAttributes*>(attributes)->learning_rate = learning_rate;
      break;
    case ACCEL_OP_ADAM_UPDATE:
      static_cast<AccelAdamAttributes*>(attributes)->learning_rate = learning_rate;
      static_cast<AccelAdamAttributes*>(attributes)->step = iteration + 1;
      break;
    case ACCEL_OP_RMSPROP_UPDATE:
      static_cast<AccelRmspropAttributes*>(attributes)->learning_rate = learning_rate;
      break;
    default:
      break;
  }
}

}  // namespace

Optimizer::Optimizer(std::string name, LearningRate learning_rate, GradientClipping clipping)
    : name_(std::move(name)), learning_rate_(std::move(learning_rate)), clipping_(clipping) {
  if (clipping_.clipnorm && clipping_.global_clipnorm) {
    throw InvalidArgumentError("optimizer '" + name_ + "': set at most one of clipnorm and global_clipnorm");
  }
  for (const auto& [what, bound] : {std::pair{"clipvalue", clipping_.clipvalue},
                                    std::pair{"clipnorm", clipping_.clipnorm},
                                    std::pair{"global_clipnorm", clipping_.global_clipnorm}}) {
    if (bound && !(*bound > 0)) {
      throw InvalidArgumentError("optimizer '" + name_ + "': " + what + " must be positive, got " +
                                 std::to_string(*bound));
    }
  }
  // The counter lives on the host: it is read every step (learning rate
  // schedules, Adam's bias correction), so reading it must not sync a device.
  DeviceScope on_host(find_device("/CPU:0"));
  iterations_ = Variable(Tensor::scalar<int64_t>(0), name_ + "/iter", /*trainable=*/false);
}

int64_t Optimizer::iterations() const { return iterations_.value().item<int64_t>(); }

void Optimizer::set_iterations(int64_t count) {
  iterations_.assign(Tensor::scalar<int64_t>(count, iterations_.device()));
}

double Optimizer::learning_rate() const { return learning_rate_.at(iterations()); }

std::vector<Variable> Optimizer::variables() const {
  std::vector<Variable> all{iterations_};
  all.insert(all.end(), slots_in_creation_order_.begin(), slots_in_creation_order_.end());
  return all;
}

const Variable& Optimizer::slot(const Variable& variable, const std::string& slot_name) const {
  auto found = slots_.find({variable.id(), slot_name});
  if (found == slots_.end()) {
    throw NotFoundError("optimizer '" + name_ + "' has no slot '" + slot_name + "' for variable '" +
                        variable.name() + "'");
  }
  return found->second;
}

void Optimizer::add_slot(const Variable& variable, const std::string& slot_name) {
  const auto key = std::make_pair(variable.id(), slot_name);
  if (slots_.contains(key)) return;
  DeviceScope on_variable_device(variable.device());
  Variable slot(ops::zeros(variable.shape(), variable.dtype()),
                name_ + "/" + without_output_index(variable.name()) + "/" + slot_name, /*trainable=*/false);
  slots_.emplace(key, slot);
  slots_in_creation_order_.push_back(slot);
}

std::vector<Tensor> Optimizer::clip(std::vector<Tensor> gradients) const {
  if (clipping_.clipvalue) {
    for (Tensor& gradient : gradients) {
      gradient = ops::minimum(ops::maximum(gradient, constant_like(-*clipping_.clipvalue, gradient)),
                              constant_like(*clipping_.clipvalue, gradient));
    }
  }
  if (clipping_.clipnorm) {
    // tf.clip_by_norm: g * c / max(||g||, c), each gradient by itself.
    for (Tensor& gradient : gradients) {
      const Tensor bound = constant_like(*clipping_.clipnorm, gradient);
      const Tensor norm = ops::sqrt(squared_l2_norm(gradient));
      gradient = ops::div(ops::mul(gradient, bound), ops::maximum(norm, bound));
    }
  }
  if (clipping_.global_clipnorm && !gradients.empty()) {
    // tf.clip_by_global_norm: every gradient scaled by c / max(global norm, c),
    // computed by ops on the first gradient's device (no host read, so a
    // compiled step keeps it in its graph).
    const Device device = gradients.front().device();
    Tensor sum_of_squares;
    for (const Tensor& gradient : gradients) {
      const Tensor squares = squared_l2_norm(gradient).to(device);
      sum_of_squares = sum_of_squares.defined() ? ops::add(sum_of_squares, squares) : squares;
    }
    const Tensor bound = constant_like(*clipping_.global_clipnorm, sum_of_squares);
    const Tensor scale = ops::div(bound, ops::maximum(ops::sqrt(sum_of_squares), bound));
    for (Tensor& gradient : gradients) {
      gradient = ops::mul(gradient, scale.to(gradient.device()));
    }
  }
  return gradients;
}

namespace {
thread_local CrossReplicaGradientAggregator* installed_aggregator = nullptr;
}  // namespace

CrossReplicaGradientAggregatorScope::CrossReplicaGradientAggregatorScope(
    CrossReplicaGradientAggregator* aggregator)
    : previous_(installed_aggregator) {
  installed_aggregator = aggregator;
}

CrossReplicaGradientAggregatorScope::~CrossReplicaGradientAggregatorScope() {
  installed_aggregator = previous_;
}

std::pair<std::vector<Tensor>, std::vector<Variable>> Optimizer::pairs_with_gradients(
    const GradientsAndVariables& gradients_and_variables) const {
  std::vector<Tensor> gradients;
  std::vector<Variable> variables;
  for (const auto& [gradient, variable] : gradients_and_variables) {
    if (!variable.defined()) throw InvalidArgumentError("optimizer '" + name_ + "': undefined variable");
    if (!gradient.defined()) continue;  // Keras warns and skips variables without a gradient
    if (gradient.shape() != variable.shape()) {
      throw InvalidArgumentError("optimizer '" + name_ + "': gradient " + gradient.shape().to_string() +
                                 " does not match variable '" + variable.name() + "' " +
                                 variable.shape().to_string());
    }
    gradients.push_back(gradient);
    variables.push_back(variable);
  }
  if (variables.empty() && !gradients_and_variables.empty()) {
    std::string names;
    for (const auto& pair : gradients_and_variables) names += (names.empty() ? "" : ", ") + pair.second.name();
    throw InvalidArgumentError("No gradients provided for any variable: " + names);
  }
  return {std::move(gradients), std::move(variables)};
}

void Optimizer::apply_gradients(const std::vector<std::pair<Tensor, Variable>>& gradients_and_variables) {
  if (installed_aggregator != nullptr) {
    installed_aggregator->apply_across_replicas(*this, gradients_and_variables);
    return;
  }
  apply_gradients_per_replica({gradients_and_variables});
}

void Optimizer::apply_gradients_per_replica(const std::vector<GradientsAndVariables>& per_replica) {
  if (per_replica.empty()) return;
  std::vector<std::vector<Tensor>> replica_gradients;
  std::vector<Variable> variables;
  for (const GradientsAndVariables& pairs : per_replica) {
    auto [gradients, replica_variables] = pairs_with_gradients(pairs);
    if (!variables.empty() && replica_variables != variables) {
      throw InvalidArgumentError("optimizer '" + name_ + "': the replicas' gradients are for different variables");
    }
    variables = std::move(replica_variables);
    replica_gradients.push_back(std::move(gradients));
  }
  create_slots(variables);
  // Inside a compiled step the iteration read here is the traced one; the
  // update ops get the replay's rate and step through the refresh below.
  int64_t iteration = 0;
  {
    graph::HostStateScope reads_host_state;
    iteration = iterations();
  }
  const double rate = learning_rate_.at(iteration);
  for (size_t replica = 0; replica < replica_gradients.size(); ++replica) {
    // With one list this is replica 0 (or the thread's own replica), as before.
    std::optional<ReplicaIndexScope> on_replica;
    if (per_replica.size() > 1) on_replica.emplace(static_cast<int>(replica));
    const std::vector<Tensor> gradients = clip(std::move(replica_gradients[replica]));
    for (size_t index = 0; index < variables.size(); ++index) {
      const Variable& variable = variables[index];
      // The fused ops run on the variable's device and need the gradient there.
      const Device device = variable.device();
      DeviceScope on_variable_device(device);
      const Tensor gradient = gradients[index].to(device);
      graph::RefreshedAttributes refreshed([this](int32_t op, void* attributes) {
        const int64_t current = iterations();
        set_rate_and_step(op, attributes, learning_rate_.at(current), current);
      });
      update_variable(variable, gradient, rate, iteration);
    }
  }
  graph::run_host_work([this] { iterations_.assign(Tensor::scalar<int64_t>(iterations() + 1, iterations_.device())); });
}

}  // namespace accel::keras
