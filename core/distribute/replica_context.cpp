// ReplicaContext: collectives between the replica threads of one run, and the
// optimizer's cross-replica gradient aggregation.
#include <accel/distribute/replica_context.hpp>

#include <accel/distribute/strategy.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include "replica_rendezvous.hpp"

namespace accel::distribute {
namespace {

thread_local ReplicaContext* current_context = nullptr;

void require_sum_or_mean(ReduceOp op) {
  if (op != ReduceOp::kSum && op != ReduceOp::kMean) {
    throw UnimplementedError(std::string("ReplicaContext::all_reduce supports SUM and MEAN, not ") +
                             reduce_op_name(op));
  }
}

}  // namespace

ReplicaContext::ReplicaContext(Strategy& strategy, ReplicaRendezvous& rendezvous, int local_replica_id)
    : strategy_(strategy), rendezvous_(rendezvous), local_replica_id_(local_replica_id) {}

int ReplicaContext::replica_id_in_sync_group() const { return strategy_.first_local_replica_id() + local_replica_id_; }

int ReplicaContext::num_replicas_in_sync() const { return strategy_.num_replicas_in_sync(); }

Device ReplicaContext::device() const { return current_device(); }

Tensor ReplicaContext::all_reduce(ReduceOp op, const Tensor& value) { return all_reduce(op, std::vector{value}).front(); }

std::vector<Tensor> ReplicaContext::all_reduce(ReduceOp op, const std::vector<Tensor>& values) {
  require_sum_or_mean(op);
  CrossDeviceOps& cross_device_ops = strategy_.cross_device_ops();
  // Deposit: this replica's tensors. Result: this replica's reduced tensors.
  std::any reduced = rendezvous_.exchange(local_replica_id_, values, [&](std::vector<std::any>& deposits) {
    const size_t replicas = deposits.size();
    std::vector<std::vector<Tensor>> per_replica;
    for (std::any& deposit : deposits) per_replica.push_back(std::any_cast<std::vector<Tensor>>(deposit));
    const size_t tensors = per_replica.front().size();
    std::vector<std::vector<Tensor>> by_value(tensors);
    for (size_t index = 0; index < tensors; ++index) {
      for (size_t replica = 0; replica < replicas; ++replica) {
        if (per_replica[replica].size() != tensors) {
          throw InvalidArgumentError("all_reduce: the replicas gave different numbers of tensors");
        }
        by_value[index].push_back(per_replica[replica][index]);
      }
    }
    const std::vector<std::vector<Tensor>> outputs = cross_device_ops.batch_all_reduce(op, by_value);
    std::vector<std::vector<Tensor>> results(replicas);
    for (size_t index = 0; index < tensors; ++index) {
      for (size_t replica = 0; replica < replicas; ++replica) results[replica].push_back(outputs[index][replica]);
    }
    return std::vector<std::any>(results.begin(), results.end());
  });
  return std::any_cast<std::vector<Tensor>>(reduced);
}

Tensor ReplicaContext::all_gather(const Tensor& value, int32_t axis) {
  const Device here = current_device();
  std::any gathered = rendezvous_.exchange(local_replica_id_, value, [&](std::vector<std::any>& deposits) {
    std::vector<Tensor> parts;
    for (std::any& deposit : deposits) parts.push_back(std::any_cast<Tensor>(deposit));
    // This process's replicas first, then every worker's in worker order.
    const Device first = parts.front().device();
    Tensor local;
    {
      DeviceScope on_first(first);
      std::vector<Tensor> local_parts;
      for (const Tensor& each : parts) local_parts.push_back(each.to(first));
      local = ops::concat(local_parts, axis);
    }
    if (strategy_.num_workers() > 1 && axis != 0) {
      throw UnimplementedError("all_gather across workers concatenates along axis 0 only, not axis " +
                               std::to_string(axis));
    }
    const Tensor all = strategy_.gather_across_workers(local);
    return std::vector<std::any>(parts.size(), std::any(all));
  });
  return std::any_cast<Tensor>(gathered).to(here);
}

void ReplicaContext::apply_across_replicas(keras::Optimizer& optimizer,
                                           const keras::GradientsAndVariables& replica_gradients) {
  CrossDeviceOps& cross_device_ops = strategy_.cross_device_ops();
  // TensorFlow's merge_call: the last replica to arrive sums every gradient
  // across replicas (in one batch, as TensorFlow packs them) and runs the one
  // update of all copies; the others wait.
  rendezvous_.exchange(local_replica_id_, replica_gradients, [&](std::vector<std::any>& deposits) {
    std::vector<keras::GradientsAndVariables> per_replica;
    for (std::any& deposit : deposits) per_replica.push_back(std::any_cast<keras::GradientsAndVariables>(deposit));
    const size_t pairs = per_replica.front().size();
    std::vector<size_t> reduced_indices;
    std::vector<std::vector<Tensor>> gradients;
    for (size_t index = 0; index < pairs; ++index) {
      if (!per_replica.front()[index].first.defined()) continue;  // no gradient: skipped by the optimizer
      std::vector<Tensor>& replicas_gradient = gradients.emplace_back();
      for (const keras::GradientsAndVariables& replica : per_replica) {
        if (replica.size() != pairs || !replica[index].first.defined()) {
          throw InvalidArgumentError("apply_gradients: the replicas gave gradients for different variables");
        }
        replicas_gradient.push_back(replica[index].first);
      }
      reduced_indices.push_back(index);
    }
    const std::vector<std::vector<Tensor>> summed = cross_device_ops.batch_all_reduce(ReduceOp::kSum, gradients);
    for (size_t position = 0; position < reduced_indices.size(); ++position) {
      for (size_t replica = 0; replica < per_replica.size(); ++replica) {
        per_replica[replica][reduced_indices[position]].first = summed[position][replica];
      }
    }
    optimizer.apply_gradients_per_replica(per_replica);
    return std::vector<std::any>(deposits.size());
  });
}

ReplicaContext* get_replica_context() noexcept { return current_context; }
bool in_cross_replica_context() noexcept { return current_context == nullptr; }

namespace detail {
ReplicaContextScope::ReplicaContextScope(ReplicaContext* context) : previous_(current_context) {
  current_context = context;
}
ReplicaContextScope::~ReplicaContextScope() { current_context = previous_; }
}  // namespace detail

}  // namespace accel::distribute
