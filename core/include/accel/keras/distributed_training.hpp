// DistributedTraining: what Model's compile / fit / evaluate / predict need
// from a tf.distribute strategy, declared here so that Keras does not depend
// on core/distribute/ (which builds on Keras). Every distribute::Strategy
// implements it, and its scope() makes it the current one, so that
//
//   MirroredStrategy strategy({"/CPU:0", "/CPU:1"});
//   {
//     auto scope = strategy.scope();
//     model = make_model();
//     model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
//   }
//   model->fit(x, y, {.batch_size = 256});   // 128 rows on each replica
//
// trains as Keras does under a strategy: compile remembers the strategy
// (model.distribute_strategy); each global batch is split across the
// replicas; each replica runs the forward pass, the loss scaled by
// 1 / num_replicas_in_sync and the gradients on its own thread, device and
// copies of the weights; apply_gradients SUM-all-reduces the gradients and
// updates every copy identically; the replicas' predictions and losses are
// gathered so that the logged loss and metrics are those of the global batch.
#pragma once

#include <accel/data/element.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace accel::keras {

class DistributedTraining {
 public:
  virtual ~DistributedTraining() = default;

  // "MirroredStrategy", "TPUStrategy", ...
  virtual std::string strategy_name() const = 0;
  // Replicas over every worker: Keras scales each replica's loss by 1 / this.
  virtual int num_replicas_in_sync() const = 0;
  // The replicas of this process (a variable made in scope has one copy each).
  virtual int num_local_replicas() const = 0;

  // This process's parts of a global batch (every worker sees the whole
  // global batch): one per local replica, part r on replica r's device, split
  // along the first axis as the strategy's distributed datasets split it. A
  // part may have no rows.
  virtual std::vector<data::Element> split_batch(const data::Element& global_batch) const = 0;

  // step(r) once per local replica r, each on its own thread under its
  // device, with the replica context installed (so apply_gradients
  // aggregates across replicas). Rethrows the first error.
  virtual void run_replicas(const std::function<void(int local_replica)>& step) = 0;

  // fn on the calling thread inside the strategy's scope (variables created
  // there are mirrored): how fit builds a model that was not built yet.
  virtual void run_in_scope(const std::function<void()>& fn) = 0;

  // The rows every replica produced from its part of a global batch,
  // concatenated in global replica order, on the host: `local_parts[r]` is
  // local replica r's result (rows along the first axis, possibly none).
  // Across workers this is a collective.
  virtual Tensor gather_replica_rows(const std::vector<Tensor>& local_parts) = 0;

  // The seed fit shuffles with: worker 0's, so that every worker reads the
  // same global batches (the same `seed` in one process).
  virtual uint64_t shared_seed(uint64_t seed) { return seed; }

  // TensorFlow's chief: the worker that writes checkpoints and logs; the
  // others write to temporary places. Always true in one process.
  virtual bool is_chief() const { return true; }
  // This worker's task index (0 in one process).
  virtual int worker_index() const { return 0; }
};

// The strategy whose scope() is entered, or null (the default strategy:
// Keras trains on one device as usual).
DistributedTraining* current_distributed_training() noexcept;

// Makes `training` current while it lives (what Strategy::scope() uses).
class DistributedTrainingScope {
 public:
  explicit DistributedTrainingScope(DistributedTraining* training);
  ~DistributedTrainingScope();
  DistributedTrainingScope(const DistributedTrainingScope&) = delete;
  DistributedTrainingScope& operator=(const DistributedTrainingScope&) = delete;

 private:
  DistributedTraining* previous_;
};

}  // namespace accel::keras
