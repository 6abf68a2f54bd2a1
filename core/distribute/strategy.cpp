// Strategy: scope, run on replica threads, reduce / gather, dataset
// distribution, the Keras training hooks; and the default strategy
// get_strategy() returns outside any scope.
#include <accel/distribute/strategy.hpp>

#include <accel/autodiff/variable_mirroring.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <mutex>
#include <thread>

#include "replica_rendezvous.hpp"

namespace accel::distribute {
namespace {

// The innermost entered strategy, process-wide (replica threads see it too).
std::mutex current_strategy_mutex;
std::vector<Strategy*> entered_strategies;

// tf.distribute's default strategy: one replica, wherever the caller's ops run.
class DefaultStrategy final : public Strategy {
 public:
  DefaultStrategy() : Strategy({default_device()}, std::make_shared<ReductionToOneDevice>()) {}
  std::string name() const override { return "DefaultDistributionStrategy"; }

 protected:
  std::vector<Device> variable_devices() const override { return {}; }
  keras::DistributedTraining* keras_training() override { return nullptr; }
  void run_each_replica(const std::function<void(ReplicaContext&)>& body) override {
    ReplicaRendezvous rendezvous(1);
    ReplicaContext context(*this, rendezvous, 0);
    detail::ReplicaContextScope in_replica(&context);
    body(context);
  }
};

Device host_device() { return find_device("/CPU:0"); }

}  // namespace

StrategyScope::StrategyScope(Strategy& strategy) : strategy_(strategy) {
  {
    std::lock_guard lock(current_strategy_mutex);
    if (!entered_strategies.empty() && entered_strategies.back() != &strategy) {
      throw FailedPreconditionError("Mixing different tf.distribute.Strategy objects: entering the scope of " +
                                    strategy.name() + " inside the scope of " + entered_strategies.back()->name());
    }
    entered_strategies.push_back(&strategy);
  }
  ++strategy.scope_depth_;
  mirroring_.emplace(strategy.variable_devices(), strategy.initial_value_source());
  keras_training_.emplace(strategy.keras_training());
}

StrategyScope::~StrategyScope() {
  keras_training_.reset();
  mirroring_.reset();
  --strategy_.scope_depth_;
  std::lock_guard lock(current_strategy_mutex);
  entered_strategies.pop_back();
}

Strategy::Strategy(std::vector<Device> replica_devices, std::shared_ptr<CrossDeviceOps> cross_device_ops)
    : replica_devices_(std::move(replica_devices)),
      cross_device_ops_(cross_device_ops ? std::move(cross_device_ops) : std::make_shared<ReductionToOneDevice>()) {
  if (replica_devices_.empty()) throw InvalidArgumentError("a strategy needs at least one replica device");
  for (size_t i = 0; i < replica_devices_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (replica_devices_[i] == replica_devices_[j]) {
        throw InvalidArgumentError("device " + replica_devices_[i].name() + " is listed twice for one strategy");
      }
    }
  }
}

void Strategy::run_each_replica(const std::function<void(ReplicaContext&)>& body) {
  const int replicas = num_local_replicas();
  ReplicaRendezvous rendezvous(replicas);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(replicas));
  auto run_replica = [&](int replica) {
    try {
      DeviceScope on_replica_device(replica_devices_[static_cast<size_t>(replica)]);
      ReplicaIndexScope reads_own_copies(replica);
      ReplicaContext context(*this, rendezvous, replica);
      detail::ReplicaContextScope in_replica(&context);
      keras::CrossReplicaGradientAggregatorScope aggregates_gradients(&context);
      body(context);
    } catch (...) {
      errors[static_cast<size_t>(replica)] = std::current_exception();
      rendezvous.abort();
    }
  };
  {
    // Variables a step creates (optimizer slots) are mirrored like those of scope().
    std::optional<StrategyScope> entered;
    if (scope_depth_ == 0) entered.emplace(*this);
    std::vector<std::jthread> threads;
    for (int replica = 1; replica < replicas; ++replica) threads.emplace_back(run_replica, replica);
    run_replica(0);
  }
  // The first error that is not another replica's cancellation, else the first.
  std::exception_ptr first_error;
  for (const std::exception_ptr& error : errors) {
    if (!error) continue;
    if (!first_error) first_error = error;
    try {
      std::rethrow_exception(error);
    } catch (const FailedPreconditionError&) {
    } catch (...) {
      std::rethrow_exception(error);
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

Tensor Strategy::reduce(ReduceOp op, const PerReplica<Tensor>& value, std::optional<int32_t> axis) const {
  if (value.size() == 0) throw InvalidArgumentError("Strategy::reduce: an empty PerReplica");
  const Device destination = current_device();
  if (!axis) return cross_device_ops_->reduce_to(op, value.values(), destination);
  // Along the axis first (the replicas' batches may differ in length), then
  // across replicas; the lengths are summed the same way, so MEAN divides by
  // the length over every replica of every worker.
  std::vector<Tensor> sums;
  std::vector<Tensor> lengths;
  for (const Tensor& replica_value : value.values()) {
    const int32_t rank = replica_value.rank();
    const int32_t resolved_axis = *axis < 0 ? *axis + rank : *axis;
    if (resolved_axis < 0 || resolved_axis >= rank) {
      throw InvalidArgumentError("Strategy::reduce: axis " + std::to_string(*axis) + " is out of range for " +
                                 replica_value.shape().to_string());
    }
    DeviceScope on_replica_device(replica_value.device());
    sums.push_back(ops::reduce_sum(replica_value, {resolved_axis}));
    lengths.push_back(ops::fill(Shape{}, static_cast<double>(replica_value.shape()[resolved_axis]), DType::kFloat32));
  }
  Tensor sum = cross_device_ops_->reduce_to(ReduceOp::kSum, sums, destination);
  if (op == ReduceOp::kSum) return sum;
  if (op != ReduceOp::kMean) throw UnimplementedError("Strategy::reduce supports SUM and MEAN");
  const double total_length = cross_device_ops_->reduce_to(ReduceOp::kSum, lengths, host_device()).item<float>();
  DeviceScope on_destination(destination);
  return ops::div(sum, ops::fill(Shape{}, total_length, sum.dtype()));
}

Tensor Strategy::gather(const PerReplica<Tensor>& value, int32_t axis) const {
  if (value.size() == 0) throw InvalidArgumentError("Strategy::gather: an empty PerReplica");
  if (num_workers() > 1 && axis != 0) {
    throw UnimplementedError("Strategy::gather across workers concatenates along axis 0 only, not axis " +
                             std::to_string(axis));
  }
  const Device destination = current_device();
  DeviceScope on_destination(destination);
  std::vector<Tensor> parts;
  for (const Tensor& replica_value : value.values()) parts.push_back(replica_value.to(destination));
  return gather_across_workers(ops::concat(parts, axis)).to(destination);
}

ReplicaPlacement Strategy::replica_placement() const {
  return {replica_devices_, first_local_replica_id(), num_replicas_in_sync(), num_workers(), worker_index()};
}

DistributedDataset Strategy::experimental_distribute_dataset(const data::Dataset& global_batches) const {
  return DistributedDataset::split_global_batches(global_batches, replica_placement());
}

DistributedDataset Strategy::distribute_datasets_from_function(const DatasetFunction& dataset_function) const {
  return DistributedDataset::from_function(dataset_function, replica_placement());
}

std::vector<data::Element> Strategy::split_batch(const data::Element& global_batch) const {
  return split_global_batch(global_batch, replica_placement());
}

void Strategy::run_replicas(const std::function<void(int local_replica)>& step) {
  run_each_replica([&](ReplicaContext& context) { step(context.local_replica_id()); });
}

void Strategy::run_in_scope(const std::function<void()>& fn) {
  StrategyScope in_scope(*this);
  fn();
}

Tensor Strategy::gather_replica_rows(const std::vector<Tensor>& local_parts) {
  if (local_parts.empty()) throw InvalidArgumentError("gather_replica_rows: no parts");
  const Device host = host_device();
  DeviceScope on_host(host);
  std::vector<Tensor> parts;
  for (const Tensor& part : local_parts) parts.push_back(part.to(host));
  return gather_across_workers(parts.size() == 1 ? parts.front() : ops::concat(parts, 0));
}

Strategy& get_strategy() {
  {
    std::lock_guard lock(current_strategy_mutex);
    if (!entered_strategies.empty()) return *entered_strategies.back();
  }
  static DefaultStrategy default_strategy;
  return default_strategy;
}

bool has_strategy() {
  std::lock_guard lock(current_strategy_mutex);
  return !entered_strategies.empty();
}

}  // namespace accel::distribute
