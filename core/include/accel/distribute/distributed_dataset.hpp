// DistributedDataset (tf.distribute.DistributedDataset): a dataset whose
// elements are PerReplica<Element>, component r already on replica r's
// device, ready to be an argument of Strategy::run. Two kinds, as TensorFlow:
//
//   Strategy::experimental_distribute_dataset(dataset)
//       `dataset` is batched by the GLOBAL batch size. Each batch of b rows is
//       split along its first axis: every replica gets ceil(b / N) rows in
//       order, the last ones fewer or none. range(6).batch(4) on 2 replicas:
//       [0,1] [2,3], then [4] [5]; range(8).batch(4) on 3 replicas: [0,1]
//       [2,3] [], then [4,5] [6,7] []. Across workers the data is sharded by
//       data: every worker reads the whole dataset and keeps the rows of its
//       own replicas (N counts the replicas of every worker).
//   Strategy::distribute_datasets_from_function(fn)
//       fn(InputContext) returns a dataset batched by the PER-REPLICA batch
//       size; each step gives its next N elements to replicas 0..N-1. At the
//       end, replicas without an element get an empty batch shaped like the
//       last one.
#pragma once

#include <accel/data/dataset.hpp>
#include <accel/device.hpp>
#include <accel/distribute/input_context.hpp>
#include <accel/distribute/per_replica.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace accel::distribute {

using DatasetFunction = std::function<data::Dataset(const InputContext&)>;

// Which replicas of the job this process feeds: replicas_in_sync over every
// worker, this worker's being [first_replica, first_replica + devices.size()).
struct ReplicaPlacement {
  std::vector<Device> devices;  // this process's replicas, in order
  int first_replica = 0;
  int replicas_in_sync = 1;
  int num_workers = 1;
  int worker_index = 0;
};

// Rows of each of `replicas` replicas for a global batch of `rows` rows:
// ceil(rows / replicas) each in order, the last ones fewer or none.
std::vector<int64_t> replica_row_counts(int64_t rows, int replicas);
// This process's parts of a global batch: part r (global replica
// first_replica + r) on devices[r].
std::vector<data::Element> split_global_batch(const data::Element& batch, const ReplicaPlacement& placement);

class DistributedDataset {
 public:
  // Global batches split across every replica; this process keeps its own parts.
  static DistributedDataset split_global_batches(data::Dataset global_batches, ReplicaPlacement placement);
  // Per-replica batches from fn: this worker's pipeline (InputContext
  // num_input_pipelines = workers, input_pipeline_id = this worker).
  static DistributedDataset from_function(const DatasetFunction& dataset_function, ReplicaPlacement placement);

  class Iterator {
   public:
    // The next step's inputs, or nullopt at the end.
    std::optional<PerReplica<data::Element>> next();

   private:
    friend class DistributedDataset;
    Iterator(const DistributedDataset& dataset);
    bool split_global_batches_;
    ReplicaPlacement placement_;
    data::Iterator source_;
  };
  Iterator iterator() const { return Iterator(*this); }

  // Range-for support: for (const PerReplica<data::Element>& inputs : distributed) { ... }
  class InputIterator {
   public:
    explicit InputIterator(std::optional<Iterator> iterator);
    const PerReplica<data::Element>& operator*() const { return *current_; }
    InputIterator& operator++();
    bool operator!=(const InputIterator& other) const { return current_.has_value() != other.current_.has_value(); }

   private:
    std::optional<Iterator> iterator_;
    std::optional<PerReplica<data::Element>> current_;
  };
  InputIterator begin() const { return InputIterator(iterator()); }
  InputIterator end() const { return InputIterator(std::nullopt); }

  // The replicas this process feeds.
  int num_replicas() const noexcept { return static_cast<int>(placement_.devices.size()); }

 private:
  DistributedDataset(data::Dataset source, bool split_global_batches, ReplicaPlacement placement)
      : source_(std::move(source)), split_global_batches_(split_global_batches), placement_(std::move(placement)) {}
  data::Dataset source_;
  bool split_global_batches_;
  ReplicaPlacement placement_;
};

// The rows [begin, begin + count) of a batch along its first axis (count may be 0).
Tensor slice_batch(const Tensor& batch, int64_t begin, int64_t count);

}  // namespace accel::distribute
