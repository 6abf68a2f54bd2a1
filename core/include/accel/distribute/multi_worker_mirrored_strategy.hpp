// MultiWorkerMirroredStrategy (tf.distribute.MultiWorkerMirroredStrategy):
// synchronous data parallelism across worker processes, on one machine or
// many. Each worker runs one replica per local device (its GPUs, else
// /CPU:0); num_replicas_in_sync counts every worker's replicas.
//
//   TFConfigClusterResolver resolver;                   // TF_CONFIG / ACCEL_CONFIG
//   MultiWorkerMirroredStrategy strategy(resolver);     // joins the cluster (bounded wait)
//   { auto scope = strategy.scope(); model = make_model(); model->compile(...); }
//   model->fit(x, y, {.batch_size = 64});   // global batch: 32 per worker of two
//
// Collectives between workers run on Gloo over TCP (CollectiveGroup):
// rendezvous at the chief's address, then a ring all-reduce. Gradients are
// summed on each worker over its local replicas, then across workers, packed
// into one buffer per step. When every worker's replicas are GPUs, gradients
// are all-reduced by NCCL instead (TensorFlow's AUTO), in one clique of every
// worker's GPUs whose id worker 0 broadcasts over Gloo. Variables made in scope() start from worker 0's
// initial values (broadcast), so every worker holds the same model. Data is
// sharded by data: every worker reads the whole (identically shuffled)
// dataset and keeps its replicas' rows of each global batch. The chief (the
// "chief" task, else worker 0) writes checkpoints; the other workers write to
// temporary folders, as TensorFlow does (keras ModelCheckpoint,
// BackupAndRestore).
//
// Failures are bounded by CommunicationOptions::timeout: a worker that never
// joins, or one that dies or stalls, makes every other worker fail with an
// UnavailableError naming it instead of hanging.
#pragma once

#include <accel/distribute/cluster_resolver.hpp>
#include <accel/distribute/collective_group.hpp>
#include <accel/distribute/strategy.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace accel::distribute {

// tf.distribute.experimental.CommunicationImplementation.
enum class CommunicationImplementation {
  kAuto,  // NCCL when every local replica is a GPU NCCL can drive, else the Gloo ring
  kRing,  // Gloo all-reduce over TCP, through host memory
  kNccl,  // NCCL across every worker's GPUs; without such GPUs: logged, and the ring is used
};

// tf.distribute.experimental.CommunicationOptions.
struct CommunicationOptions {
  CommunicationImplementation implementation = CommunicationImplementation::kAuto;
  // Bounds joining the cluster and every collective (TensorFlow's timeout_seconds).
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

class MultiWorkerMirroredStrategy final : public Strategy {
 public:
  // `local_devices`: this worker's replicas; none: every GPU, else /CPU:0.
  // Every worker must have as many. Blocks until the whole cluster joined.
  explicit MultiWorkerMirroredStrategy(const ClusterResolver& resolver, CommunicationOptions options = {},
                                       const std::vector<std::string>& local_devices = {});
  ~MultiWorkerMirroredStrategy() override;
  std::string name() const override { return "MultiWorkerMirroredStrategy"; }

  int num_replicas_in_sync() const override;
  int first_local_replica_id() const override;
  int num_workers() const override;
  int worker_index() const override;
  bool is_chief() const override;
  // This worker's task ("worker", 1), and its rank in the collective group.
  const std::string& task_type() const noexcept { return task_type_; }
  int task_id() const noexcept { return task_id_; }
  CollectiveGroup& collective_group() const { return *group_; }
  CommunicationImplementation communication() const noexcept { return communication_; }

  // fit shuffles with worker 0's seed, so every worker reads the same global batches.
  uint64_t shared_seed(uint64_t seed) override;

 protected:
  std::function<Tensor(const Tensor&)> initial_value_source() override;
  Tensor gather_across_workers(const Tensor& local) const override;

 private:
  struct Setup;  // the joined group, the local devices and the chosen collectives
  // Joins the cluster (bounded wait), checks the workers agree, builds the collectives.
  static Setup set_up(const ClusterResolver& resolver, const CommunicationOptions& options,
                      const std::vector<std::string>& local_devices);
  MultiWorkerMirroredStrategy(const ClusterResolver& resolver, Setup setup);
  std::shared_ptr<CollectiveGroup> group_;
  std::string task_type_;
  int task_id_ = 0;
  CommunicationImplementation communication_;
};

}  // namespace accel::distribute
