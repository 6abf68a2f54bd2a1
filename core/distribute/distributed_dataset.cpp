// DistributedDataset: splitting global batches across replicas, or handing
// per-replica batches out in turn (the rules are in distributed_dataset.hpp).
#include <accel/distribute/distributed_dataset.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

namespace accel::distribute {
namespace {

int64_t batch_length(const data::Element& element) {
  if (element.empty() || element[0].rank() == 0) {
    throw InvalidArgumentError("distribute_dataset: elements must be batches (tensors with a first axis)");
  }
  return element[0].shape()[0];
}

data::Element on_device(const data::Element& element, const Device& device) {
  std::vector<Tensor> components;
  for (const Tensor& component : element.components()) components.push_back(component.to(device));
  return element.has_names() ? data::Element(element.names(), std::move(components))
                             : data::Element(std::move(components));
}

data::Element rows_of(const data::Element& element, int64_t begin, int64_t count, const Device& device) {
  std::vector<Tensor> components;
  for (const Tensor& component : element.components()) {
    // A view of the replica's rows, copied to its device: it receives its rows only.
    const Tensor rows = slice_batch(component, begin, count);
    DeviceScope on_replica_device(device);
    components.push_back(rows.to(device));
  }
  return element.has_names() ? data::Element(element.names(), std::move(components))
                             : data::Element(std::move(components));
}

}  // namespace

Tensor slice_batch(const Tensor& batch, int64_t begin, int64_t count) {
  std::vector<int64_t> sizes = batch.shape().dims();
  sizes[0] = count;
  if (count == 0) return Tensor::empty(Shape(sizes), batch.dtype(), batch.device());
  // Rows begin .. begin + count of a row-major tensor are one contiguous
  // range of its storage: a view, not a copy (a replica's copy to its device
  // then moves only its rows, once).
  const uint64_t row_bytes = batch.byte_size() / static_cast<uint64_t>(batch.shape().dim(0));
  return Tensor(batch.storage(), Shape(sizes), batch.dtype(),
                batch.byte_offset() + static_cast<uint64_t>(begin) * row_bytes);
}

std::vector<int64_t> replica_row_counts(int64_t rows, int replicas) {
  if (replicas < 1) throw InvalidArgumentError("replica_row_counts: no replicas");
  const int64_t rows_per_replica = (rows + replicas - 1) / replicas;
  std::vector<int64_t> counts;
  for (int64_t replica = 0; replica < replicas; ++replica) {
    const int64_t begin = std::min(rows, replica * rows_per_replica);
    counts.push_back(std::min(rows, begin + rows_per_replica) - begin);
  }
  return counts;
}

std::vector<data::Element> split_global_batch(const data::Element& batch, const ReplicaPlacement& placement) {
  const std::vector<int64_t> counts = replica_row_counts(batch_length(batch), placement.replicas_in_sync);
  int64_t begin = 0;
  for (int replica = 0; replica < placement.first_replica; ++replica) begin += counts[static_cast<size_t>(replica)];
  std::vector<data::Element> parts;
  for (size_t local = 0; local < placement.devices.size(); ++local) {
    const int64_t count = counts.at(static_cast<size_t>(placement.first_replica) + local);
    parts.push_back(rows_of(batch, begin, count, placement.devices[local]));
    begin += count;
  }
  return parts;
}

DistributedDataset DistributedDataset::split_global_batches(data::Dataset global_batches, ReplicaPlacement placement) {
  return DistributedDataset(std::move(global_batches), /*split_global_batches=*/true, std::move(placement));
}

DistributedDataset DistributedDataset::from_function(const DatasetFunction& dataset_function,
                                                     ReplicaPlacement placement) {
  const InputContext context(placement.num_workers, placement.worker_index, placement.replicas_in_sync);
  return DistributedDataset(dataset_function(context), /*split_global_batches=*/false, std::move(placement));
}

DistributedDataset::Iterator::Iterator(const DistributedDataset& dataset)
    : split_global_batches_(dataset.split_global_batches_),
      placement_(dataset.placement_),
      source_(dataset.source_.make_iterator()) {}

std::optional<PerReplica<data::Element>> DistributedDataset::Iterator::next() {
  const int64_t replicas = static_cast<int64_t>(placement_.devices.size());
  std::vector<data::Element> per_replica;
  if (split_global_batches_) {
    std::optional<data::Element> batch = source_.next();
    if (!batch) return std::nullopt;
    per_replica = split_global_batch(*batch, placement_);
  } else {
    for (int64_t replica = 0; replica < replicas; ++replica) {
      const Device& device = placement_.devices[static_cast<size_t>(replica)];
      std::optional<data::Element> batch = source_.next();
      if (!batch) {
        if (replica == 0) return std::nullopt;
        per_replica.push_back(rows_of(per_replica.back(), 0, 0, device));  // an empty batch
        continue;
      }
      per_replica.push_back(on_device(*batch, device));
    }
  }
  return PerReplica<data::Element>(std::move(per_replica));
}

DistributedDataset::InputIterator::InputIterator(std::optional<Iterator> iterator) : iterator_(std::move(iterator)) {
  if (iterator_) current_ = iterator_->next();
}

DistributedDataset::InputIterator& DistributedDataset::InputIterator::operator++() {
  current_ = iterator_->next();
  return *this;
}

}  // namespace accel::distribute
