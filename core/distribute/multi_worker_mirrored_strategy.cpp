// MultiWorkerMirroredStrategy: local replicas joined across workers by a
// CollectiveGroup (Gloo). Its CollectiveAllReduce sums the local replicas on
// the host, then all workers in one Gloo all-reduce per batch of values; on
// GPUs, NcclAllReduce over one clique of every worker's GPUs replaces it.
#include <accel/distribute/multi_worker_mirrored_strategy.hpp>

#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/log.hpp>
#include <accel/nccl_communicator.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>

#include "collective_profile.hpp"
#include "replica_values.hpp"

namespace accel::distribute {
namespace {

Device host_device() { return find_device("/CPU:0"); }

std::vector<Device> local_replica_devices(const std::vector<std::string>& names) {
  std::vector<Device> devices;
  for (const std::string& name : names) devices.push_back(find_device(name));
  if (devices.empty()) {
    for (const config::LogicalDevice& gpu : config::list_logical_devices("GPU")) devices.push_back(find_device(gpu.name));
  }
  if (devices.empty()) devices.push_back(host_device());
  return devices;
}

// TensorFlow's CollectiveAllReduce: each worker adds its local replicas'
// values on the host (replica order), then the workers all-reduce the sums
// with Gloo, every value of a batch packed into one buffer. Every
// replica of every worker ends with bit-identical values.
class CollectiveAllReduce final : public CrossDeviceOps {
 public:
  CollectiveAllReduce(std::shared_ptr<CollectiveGroup> group, int replicas_in_sync)
      : group_(std::move(group)), replicas_in_sync_(replicas_in_sync) {}
  std::string name() const override { return "CollectiveAllReduce"; }

  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) override {
    return batch_all_reduce(op, {per_replica}).front();
  }

  std::vector<std::vector<Tensor>> batch_all_reduce(ReduceOp op,
                                                    const std::vector<std::vector<Tensor>>& values) override {
    const detail::HostCollectiveTimer timer;
    size_t total = 0;
    for (const std::vector<Tensor>& per_replica : values) {
      detail::check_replica_values(name().c_str(), op, per_replica);
      require_float32(per_replica.front());
      total += static_cast<size_t>(per_replica.front().shape().element_count());
    }
    // Packed straight into the group's buffer for this size: no extra copy.
    const std::span<float> packed = group_->reusable_buffer(total);
    size_t offset = 0;
    for (const std::vector<Tensor>& per_replica : values) offset += add_local_replicas(per_replica, packed.subspan(offset));
    group_->all_reduce(packed, ReduceOp::kSum);
    if (op == ReduceOp::kMean) {
      const float scale = 1.0f / static_cast<float>(replicas_in_sync_);
      for (float& value : packed) value *= scale;
    }
    std::vector<std::vector<Tensor>> results;
    offset = 0;
    for (const std::vector<Tensor>& per_replica : values) {
      const Shape& shape = per_replica.front().shape();
      std::vector<Tensor>& reduced = results.emplace_back();
      for (const Tensor& value : per_replica) {
        reduced.push_back(Tensor::from_host(packed.data() + offset, shape, DType::kFloat32, value.device()));
      }
      offset += static_cast<size_t>(shape.element_count());
    }
    timer.finish(detail::replica_devices(values.front()), static_cast<double>(total * sizeof(float)),
                 nlohmann::json{{"algorithm", name()}, {"workers", group_->size()}, {"values", values.size()}}.dump());
    return results;
  }

  Tensor reduce_to(ReduceOp op, const std::vector<Tensor>& per_replica, const Device& destination) override {
    return batch_all_reduce(op, {per_replica}).front().front().to(destination);
  }

 private:
  void require_float32(const Tensor& value) const {
    if (value.dtype() != DType::kFloat32) {
      throw UnimplementedError(fmt::format("{}: float32 values only, got {}", name(), dtype_name(value.dtype())));
    }
  }

  // Writes the sum of the local replicas' values (replica order) into
  // `destination`; returns how many values that is.
  static size_t add_local_replicas(const std::vector<Tensor>& per_replica, std::span<float> destination) {
    const std::vector<float> first = per_replica.front().to_vector<float>();
    std::copy(first.begin(), first.end(), destination.begin());
    for (size_t replica = 1; replica < per_replica.size(); ++replica) {
      const std::vector<float> values = per_replica[replica].to_vector<float>();
      for (size_t i = 0; i < values.size(); ++i) destination[i] += values[i];
    }
    return first.size();
  }

  std::shared_ptr<CollectiveGroup> group_;
  int replicas_in_sync_;
};

// NCCL when asked for or left to AUTO and every local replica is a GPU NCCL
// can drive; otherwise the Gloo ring (with a warning when NCCL was asked for).
// require_same_choice then checks that every worker decided alike.
CommunicationImplementation resolve_communication(CommunicationImplementation requested,
                                                  const std::vector<Device>& local_devices) {
  if (requested == CommunicationImplementation::kRing) return requested;
  const std::string reason = NcclCommunicator::unavailable_reason(local_devices);
  if (reason.empty()) return CommunicationImplementation::kNccl;
  if (requested == CommunicationImplementation::kNccl) {
    log::warning("MultiWorkerMirroredStrategy: NCCL cannot run: " + reason +
                 "; using the Gloo ring through host memory instead");
  }
  return CommunicationImplementation::kRing;
}

// Workers that chose differently would wait in different collectives forever.
void require_same_choice(CollectiveGroup& group, CommunicationImplementation chosen) {
  float local = chosen == CommunicationImplementation::kNccl ? 1.0f : 0.0f;
  const std::vector<float> choices = group.all_gather(std::span<const float>(&local, 1));
  for (int rank = 0; rank < group.size(); ++rank) {
    if (choices[static_cast<size_t>(rank)] != local) {
      throw InvalidArgumentError(fmt::format(
          "MultiWorkerMirroredStrategy: {} all-reduces with {} but {} with {}; every worker needs GPUs NCCL can "
          "drive, or none",
          group.task_name(group.rank()), local != 0 ? "NCCL" : "the Gloo ring", group.task_name(rank),
          local != 0 ? "the Gloo ring" : "NCCL"));
    }
  }
}

// One NCCL clique of every worker's GPUs: worker 0 makes the id, Gloo carries
// it (bit for bit, as floats) to the others; ranks follow the replica ids.
std::shared_ptr<NcclCommunicator> join_nccl_clique(CollectiveGroup& group, const std::vector<Device>& local_devices) {
  NcclCommunicator::UniqueId id{};
  if (group.rank() == 0) id = NcclCommunicator::make_unique_id(local_devices.front());
  std::array<float, sizeof(id) / sizeof(float)> words;
  static_assert(sizeof(words) == sizeof(id));
  std::memcpy(words.data(), id.data(), sizeof(id));
  group.broadcast(std::span<float>(words), 0);
  std::memcpy(id.data(), words.data(), sizeof(id));
  const int local = static_cast<int>(local_devices.size());
  return std::make_shared<NcclCommunicator>(local_devices, id, group.rank() * local, group.size() * local);
}

// Every worker must run as many replicas: the global replica ids assume it.
void require_same_local_replicas(CollectiveGroup& group, size_t local_replicas) {
  float local = static_cast<float>(local_replicas);
  const std::vector<float> counts = group.all_gather(std::span<const float>(&local, 1));
  for (int rank = 0; rank < group.size(); ++rank) {
    if (counts[static_cast<size_t>(rank)] != local) {
      throw InvalidArgumentError(fmt::format(
          "MultiWorkerMirroredStrategy: {} runs {} local replicas but {} runs {}; every worker needs as many",
          group.task_name(group.rank()), local_replicas, group.task_name(rank), counts[static_cast<size_t>(rank)]));
    }
  }
}

}  // namespace

struct MultiWorkerMirroredStrategy::Setup {
  std::shared_ptr<CollectiveGroup> group;
  std::vector<Device> local_devices;
  std::shared_ptr<CrossDeviceOps> cross_device_ops;
  CommunicationImplementation communication = CommunicationImplementation::kRing;
};

MultiWorkerMirroredStrategy::Setup MultiWorkerMirroredStrategy::set_up(
    const ClusterResolver& resolver, const CommunicationOptions& options,
    const std::vector<std::string>& local_device_names) {
  Setup setup;
  setup.group = std::make_shared<CollectiveGroup>(resolver, CollectiveOptions{options.timeout});
  setup.local_devices = local_replica_devices(local_device_names);
  require_same_local_replicas(*setup.group, setup.local_devices.size());
  setup.communication = resolve_communication(options.implementation, setup.local_devices);
  require_same_choice(*setup.group, setup.communication);
  if (setup.communication == CommunicationImplementation::kNccl) {
    setup.cross_device_ops = std::make_shared<NcclAllReduce>(join_nccl_clique(*setup.group, setup.local_devices));
  } else {
    setup.cross_device_ops = std::make_shared<CollectiveAllReduce>(
        setup.group, setup.group->size() * static_cast<int>(setup.local_devices.size()));
  }
  return setup;
}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(const ClusterResolver& resolver,
                                                         CommunicationOptions options,
                                                         const std::vector<std::string>& local_devices)
    : MultiWorkerMirroredStrategy(resolver, set_up(resolver, options, local_devices)) {}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(const ClusterResolver& resolver, Setup setup)
    : Strategy(setup.local_devices, setup.cross_device_ops),
      group_(std::move(setup.group)),
      task_type_(resolver.task_type()),
      task_id_(resolver.task_id()),
      communication_(setup.communication) {}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() = default;

int MultiWorkerMirroredStrategy::num_replicas_in_sync() const { return group_->size() * num_local_replicas(); }
int MultiWorkerMirroredStrategy::first_local_replica_id() const { return group_->rank() * num_local_replicas(); }
int MultiWorkerMirroredStrategy::num_workers() const { return group_->size(); }
int MultiWorkerMirroredStrategy::worker_index() const { return task_id_; }
// The group's rank 0 is the chief task, or worker 0 without one (TensorFlow's rule).
bool MultiWorkerMirroredStrategy::is_chief() const { return group_->rank() == 0; }

uint64_t MultiWorkerMirroredStrategy::shared_seed(uint64_t seed) {
  // Broadcast copies bytes, so the seed's bits travel as two floats untouched.
  float words[2];
  std::memcpy(words, &seed, sizeof seed);
  group_->broadcast(std::span<float>(words, 2), 0);
  std::memcpy(&seed, words, sizeof seed);
  return seed;
}

std::function<Tensor(const Tensor&)> MultiWorkerMirroredStrategy::initial_value_source() {
  return [group = group_](const Tensor& initial_value) {
    // Counters and integer state start equal everywhere; float values are worker 0's.
    if (initial_value.dtype() != DType::kFloat32 || group->size() == 1) return initial_value;
    return group->broadcast(initial_value, 0);
  };
}

Tensor MultiWorkerMirroredStrategy::gather_across_workers(const Tensor& local) const {
  if (group_->size() == 1) return local;
  if (local.dtype() != DType::kFloat32) {
    throw UnimplementedError(fmt::format("gathering across workers: float32 values only, got {}",
                                         dtype_name(local.dtype())));
  }
  // Workers may hold different numbers of rows (uneven batches): gather the
  // counts, pad every worker's rows to the largest, gather, and cut.
  const std::vector<int64_t> dims = local.shape().dims();
  const int64_t rows = dims.empty() ? 1 : dims.front();
  int64_t row_size = 1;
  for (size_t axis = 1; axis < dims.size(); ++axis) row_size *= dims[axis];
  float local_rows = static_cast<float>(rows);
  const std::vector<float> counts = group_->all_gather(std::span<const float>(&local_rows, 1));
  const auto most_rows = static_cast<int64_t>(*std::max_element(counts.begin(), counts.end()));
  std::vector<float> padded = local.to_vector<float>();
  padded.resize(static_cast<size_t>(most_rows * row_size), 0.0f);
  const std::vector<float> gathered = group_->all_gather(std::span<const float>(padded));
  std::vector<float> values;
  int64_t total_rows = 0;
  for (int rank = 0; rank < group_->size(); ++rank) {
    const auto worker_rows = static_cast<int64_t>(counts[static_cast<size_t>(rank)]);
    const auto begin = gathered.begin() + static_cast<std::ptrdiff_t>(rank * most_rows * row_size);
    values.insert(values.end(), begin, begin + static_cast<std::ptrdiff_t>(worker_rows * row_size));
    total_rows += worker_rows;
  }
  std::vector<int64_t> gathered_dims = dims.empty() ? std::vector<int64_t>{1} : dims;
  gathered_dims.front() = total_rows;
  return Tensor::from_vector<float>(values, Shape(gathered_dims), local.device());
}

}  // namespace accel::distribute
