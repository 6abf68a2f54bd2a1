// Strategy (tf.distribute.Strategy): runs a step once per replica and
// combines the results. The shape of TensorFlow's custom training loop:
//
//   MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
//   std::shared_ptr<keras::Sequential> model;  std::shared_ptr<keras::SGD> optimizer;
//   {
//     auto scope = strategy.scope();            // variables made here are mirrored
//     model = make_model();  model->build({-1, 28, 28, 1});
//     optimizer = std::make_shared<keras::SGD>();
//   }
//   for (const auto& batch : strategy.experimental_distribute_dataset(dataset.batch(64))) {
//     PerReplica<Tensor> losses = strategy.run([&](ReplicaContext&, const data::Element& inputs) {
//       GradientTape tape;
//       Tensor loss = compute_average_loss(per_example_loss(inputs), 64);
//       auto gradients = tape.gradient(loss, model->trainable_weights());
//       optimizer->apply_gradients(zip(gradients, model->trainable_weights()));  // SUM-all-reduced
//       return loss;
//     }, batch);
//     Tensor loss = strategy.reduce(ReduceOp::kSum, losses);
//   }
//
// scope(): while the returned guard lives, this is the current strategy
// (get_strategy()) and every Variable created (layer weights, optimizer slots
// and counters) is a mirrored variable: one copy per replica device, equal
// initial values (see accel/autodiff/variable_mirroring.hpp, mirrored_variable.hpp).
// A Keras model compiled in scope() trains under the strategy through
// fit / evaluate / predict (accel/keras/distributed_training.hpp).
// run(fn, args...): fn(ReplicaContext&, args...) once per replica of this
// process, each on its own thread under its device's DeviceScope; a
// PerReplica argument gives local replica r its component r. Returns
// PerReplica of fn's results (nothing for void).
//
// Replicas may span processes (MultiWorkerMirroredStrategy): then
// num_replicas_in_sync() counts every worker's replicas, this process runs
// its own, and reduce / gather / all_reduce / the gradient aggregation are
// collectives across the workers.
#pragma once

#include <accel/autodiff/variable_mirroring.hpp>
#include <accel/data/dataset.hpp>
#include <accel/device.hpp>
#include <accel/distribute/collective_group.hpp>
#include <accel/distribute/cross_device_ops.hpp>
#include <accel/distribute/distributed_dataset.hpp>
#include <accel/distribute/per_replica.hpp>
#include <accel/distribute/replica_context.hpp>
#include <accel/keras/distributed_training.hpp>
#include <accel/tensor.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace accel::distribute {

class Strategy;

// The guard scope() returns.
class StrategyScope {
 public:
  explicit StrategyScope(Strategy& strategy);
  ~StrategyScope();
  StrategyScope(const StrategyScope&) = delete;
  StrategyScope& operator=(const StrategyScope&) = delete;

 private:
  Strategy& strategy_;
  std::optional<VariableMirroringScope> mirroring_;
  std::optional<keras::DistributedTrainingScope> keras_training_;
};

class Strategy : public keras::DistributedTraining {
 public:
  ~Strategy() override = default;
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  // "MirroredStrategy", ...
  virtual std::string name() const = 0;
  // One device per replica of this process, in replica order (extended.worker_devices).
  const std::vector<Device>& replica_devices() const noexcept { return replica_devices_; }
  // Every worker's replicas (this process's alone, except across workers).
  int num_replicas_in_sync() const override { return static_cast<int>(replica_devices_.size()); }
  int num_local_replicas() const override { return static_cast<int>(replica_devices_.size()); }
  // The global id of this process's first replica (0 except across workers).
  virtual int first_local_replica_id() const { return 0; }
  // Workers of the job (1 in one process); worker_index() says which one this process is.
  virtual int num_workers() const { return 1; }
  CrossDeviceOps& cross_device_ops() const { return *cross_device_ops_; }

  // Makes this the current strategy and mirrors new variables while the guard
  // lives. Entering a second, different strategy's scope inside it is a
  // FailedPreconditionError (as TensorFlow's "mixing different strategies").
  [[nodiscard]] StrategyScope scope() { return StrategyScope(*this); }

  template <typename Function, typename... Args>
  auto run(Function&& function, const Args&... args);

  // The reduction of a PerReplica tensor on the current device. Without
  // `axis`, element-wise across replicas (MEAN divides by the replicas);
  // with `axis`, also along that axis of every value (MEAN divides by the
  // total length of the axis over all replicas: the global batch mean).
  Tensor reduce(ReduceOp op, const PerReplica<Tensor>& value, std::optional<int32_t> axis = {}) const;
  // The replicas' values in replica order (each on its replica's device).
  template <typename T>
  std::vector<T> experimental_local_results(const PerReplica<T>& value) const { return value.values(); }
  // Every replica's value concatenated along `axis` on the current device
  // (across workers: along the first axis only).
  Tensor gather(const PerReplica<Tensor>& value, int32_t axis = 0) const;

  DistributedDataset experimental_distribute_dataset(const data::Dataset& global_batches) const;
  DistributedDataset distribute_datasets_from_function(const DatasetFunction& dataset_function) const;

  // keras::DistributedTraining: how Model::fit / evaluate / predict run here.
  std::string strategy_name() const override { return name(); }
  std::vector<data::Element> split_batch(const data::Element& global_batch) const override;
  void run_replicas(const std::function<void(int local_replica)>& step) override;
  void run_in_scope(const std::function<void()>& fn) override;
  Tensor gather_replica_rows(const std::vector<Tensor>& local_parts) override;

 protected:
  Strategy(std::vector<Device> replica_devices, std::shared_ptr<CrossDeviceOps> cross_device_ops);
  // The devices a variable made in scope() is mirrored onto (replica_devices();
  // none for the default strategy, which leaves variables alone).
  virtual std::vector<Device> variable_devices() const { return replica_devices_; }
  // What a variable made in scope() starts from (across workers: worker 0's
  // initial value, broadcast); none keeps the value as created.
  virtual std::function<Tensor(const Tensor&)> initial_value_source() { return {}; }
  // The strategy Keras trains under in scope() (null: Keras trains as usual).
  virtual keras::DistributedTraining* keras_training() { return this; }
  // Runs body once per local replica (see the header comment); rethrows the first error.
  virtual void run_each_replica(const std::function<void(ReplicaContext&)>& body);
  // This process's replicas as the distributed datasets see them.
  ReplicaPlacement replica_placement() const;
  // `local` (this process's replicas' values, concatenated along the first
  // axis) with every other worker's, in worker order; `local` itself in one process.
  virtual Tensor gather_across_workers(const Tensor& local) const { return local; }

 private:
  friend class StrategyScope;
  friend class ReplicaContext;
  std::vector<Device> replica_devices_;
  std::shared_ptr<CrossDeviceOps> cross_device_ops_;
  int scope_depth_ = 0;
};

// The strategy of the innermost scope(), else the default strategy: one
// replica on the current device, variables not mirrored, run calls fn on the
// calling thread (tf.distribute.get_strategy).
Strategy& get_strategy();
// True inside some strategy's scope() (tf.distribute.has_strategy).
bool has_strategy();

template <typename Function, typename... Args>
auto Strategy::run(Function&& function, const Args&... args) {
  using Result = std::invoke_result_t<Function&, ReplicaContext&, const typename ReplicaLocalType<Args>::type&...>;
  if constexpr (std::is_void_v<Result>) {
    run_each_replica([&](ReplicaContext& context) {
      function(context, replica_local_value(args, context.local_replica_id())...);
    });
  } else {
    std::vector<std::optional<Result>> results(replica_devices_.size());
    run_each_replica([&](ReplicaContext& context) {
      const int replica = context.local_replica_id();
      results[static_cast<size_t>(replica)].emplace(function(context, replica_local_value(args, replica)...));
    });
    std::vector<Result> values;
    values.reserve(results.size());
    for (std::optional<Result>& result : results) values.push_back(std::move(*result));
    return PerReplica<Result>(std::move(values));
  }
}

}  // namespace accel::distribute
