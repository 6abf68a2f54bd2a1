// ReplicaContext (tf.distribute.ReplicaContext): what the function given to
// Strategy::run sees while it runs as one replica: its id, the number of
// replicas, and collectives with the other replicas of the same run.
//
// Every replica must make the same collective calls in the same order (they
// meet at each call); a replica that throws makes the others' pending and
// later collectives fail with a FailedPreconditionError, and run rethrows the
// first error.
//
// Inside a replica, keras::Optimizer::apply_gradients aggregates through the
// replica context: the gradients are SUM-all-reduced across replicas with the
// strategy's CrossDeviceOps, then every replica's copy of each mirrored
// variable is updated with the same summed gradient, once per step.
#pragma once

#include <accel/device.hpp>
#include <accel/distribute/collective_group.hpp>
#include <accel/keras/optimizers/optimizer.hpp>
#include <accel/tensor.hpp>

#include <functional>
#include <vector>

namespace accel::distribute {

class Strategy;
class ReplicaRendezvous;

class ReplicaContext final : public keras::CrossReplicaGradientAggregator {
 public:
  ReplicaContext(Strategy& strategy, ReplicaRendezvous& rendezvous, int local_replica_id);

  // This replica's id among every worker's replicas.
  int replica_id_in_sync_group() const;
  // Its index among this process's replicas (replica_devices() order).
  int local_replica_id() const noexcept { return local_replica_id_; }
  int num_replicas_in_sync() const;
  Strategy& strategy() const noexcept { return strategy_; }
  // This replica's device (where its ops run).
  Device device() const;

  // The reduction of every replica's `value` (same shape everywhere), on this
  // replica's device. SUM or MEAN.
  Tensor all_reduce(ReduceOp op, const Tensor& value);
  // Several tensors in one meeting of the replicas.
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values);
  // Every replica's `value` concatenated along `axis` in replica order (the
  // other axes must match), on this replica's device. Across workers, along
  // the first axis only.
  Tensor all_gather(const Tensor& value, int32_t axis = 0);

  // keras::CrossReplicaGradientAggregator: see the header comment.
  void apply_across_replicas(keras::Optimizer& optimizer,
                             const keras::GradientsAndVariables& replica_gradients) override;

 private:
  Strategy& strategy_;
  ReplicaRendezvous& rendezvous_;
  int local_replica_id_;
};

// The context of the replica this thread runs, or null in cross-replica
// context (outside Strategy::run), as tf.distribute.get_replica_context.
ReplicaContext* get_replica_context() noexcept;
bool in_cross_replica_context() noexcept;

namespace detail {
// Installs `context` as this thread's replica context while it lives.
class ReplicaContextScope {
 public:
  explicit ReplicaContextScope(ReplicaContext* context);
  ~ReplicaContextScope();
  ReplicaContextScope(const ReplicaContextScope&) = delete;
  ReplicaContextScope& operator=(const ReplicaContextScope&) = delete;

 private:
  ReplicaContext* previous_;
};
}  // namespace detail

}  // namespace accel::distribute
