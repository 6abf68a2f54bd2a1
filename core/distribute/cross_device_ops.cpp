// ReductionToOneDevice and HostRingAllReduce (the algorithms are described in
// cross_device_ops.hpp).
#include <accel/distribute/cross_device_ops.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "collective_profile.hpp"
#include "replica_values.hpp"

namespace accel::distribute {

void detail::check_replica_values(const char* who, ReduceOp op, const std::vector<Tensor>& per_replica) {
  if (op != ReduceOp::kSum && op != ReduceOp::kMean) {
    throw UnimplementedError(std::string(who) + ": only SUM and MEAN are supported, not " + reduce_op_name(op));
  }
  if (per_replica.empty()) throw InvalidArgumentError(std::string(who) + ": no values to reduce");
  for (const Tensor& value : per_replica) {
    if (!value.defined()) throw InvalidArgumentError(std::string(who) + ": an undefined tensor");
    if (value.shape() != per_replica.front().shape() || value.dtype() != per_replica.front().dtype()) {
      throw InvalidArgumentError(std::string(who) + ": the replicas' values differ in shape or dtype: " +
                                 per_replica.front().shape().to_string() + " vs " + value.shape().to_string());
    }
  }
}

std::vector<Device> detail::replica_devices(const std::vector<Tensor>& per_replica) {
  std::vector<Device> devices;
  devices.reserve(per_replica.size());
  for (const Tensor& value : per_replica) devices.push_back(value.device());
  return devices;
}

namespace {

using detail::check_replica_values;

Tensor scaled_for_mean(ReduceOp op, const Tensor& sum, size_t replicas) {
  if (op != ReduceOp::kMean) return sum;
  return ops::mul(sum, ops::fill(Shape{}, 1.0 / static_cast<double>(replicas), sum.dtype()));
}

// Chunk c of a buffer of `length` values cut into `chunks` nearly equal parts.
std::pair<size_t, size_t> chunk_bounds(size_t length, size_t chunks, size_t chunk) {
  const size_t base = length / chunks;
  const size_t extra = length % chunks;
  const size_t begin = chunk * base + std::min(chunk, extra);
  return {begin, begin + base + (chunk < extra ? 1 : 0)};
}

}  // namespace

std::vector<std::vector<Tensor>> CrossDeviceOps::batch_all_reduce(ReduceOp op,
                                                                  const std::vector<std::vector<Tensor>>& values) {
  std::vector<std::vector<Tensor>> results;
  results.reserve(values.size());
  for (const std::vector<Tensor>& per_replica : values) results.push_back(all_reduce(op, per_replica));
  return results;
}

Tensor CrossDeviceOps::reduce_to(ReduceOp op, const std::vector<Tensor>& per_replica, const Device& destination) {
  check_replica_values("reduce", op, per_replica);
  DeviceScope on_destination(destination);
  Tensor sum = per_replica.front().to(destination);
  for (size_t replica = 1; replica < per_replica.size(); ++replica) {
    sum = ops::add(sum, per_replica[replica].to(destination));
  }
  if (per_replica.size() == 1) sum = ops::copy(sum);  // never alias a replica's tensor
  return scaled_for_mean(op, sum, per_replica.size());
}

std::vector<Tensor> ReductionToOneDevice::all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) {
  check_replica_values("ReductionToOneDevice", op, per_replica);
  if (per_replica.size() == 1) return per_replica;
  const Device reduce_device = reduce_to_device_.value_or(per_replica.front().device());
  const Tensor reduced = reduce_to(op, per_replica, reduce_device);
  std::vector<Tensor> results;
  for (const Tensor& value : per_replica) results.push_back(reduced.to(value.device()));
  return results;
}

std::vector<Tensor> HostRingAllReduce::all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) {
  check_replica_values("HostRingAllReduce", op, per_replica);
  if (per_replica.front().dtype() != DType::kFloat32) {
    throw UnimplementedError("HostRingAllReduce: float32 only, got " +
                             std::string(dtype_name(per_replica.front().dtype())));
  }
  const size_t replicas = per_replica.size();
  if (replicas == 1) return per_replica;
  const detail::HostCollectiveTimer timer;
  std::vector<std::vector<float>> buffers;
  for (const Tensor& value : per_replica) buffers.push_back(value.to_vector<float>());
  const size_t length = buffers.front().size();

  // Reduce-scatter: at step s, replica r sends chunk (r - s) mod N to r + 1,
  // which adds it into its own copy of that chunk. Within a step every chunk
  // has one sender and one receiver, so the steps can run in place.
  for (size_t step = 0; step + 1 < replicas; ++step) {
    for (size_t sender = 0; sender < replicas; ++sender) {
      const size_t chunk = (sender + replicas - step) % replicas;
      const size_t receiver = (sender + 1) % replicas;
      const auto [begin, end] = chunk_bounds(length, replicas, chunk);
      for (size_t i = begin; i < end; ++i) buffers[receiver][i] += buffers[sender][i];
    }
  }
  // Replica r now holds the full sum of chunk (r + 1) mod N. All-gather: at
  // step s, replica r passes chunk (r + 1 - s) mod N on to r + 1 (a copy).
  for (size_t step = 0; step + 1 < replicas; ++step) {
    for (size_t sender = 0; sender < replicas; ++sender) {
      const size_t chunk = (sender + 1 + replicas - step) % replicas;
      const size_t receiver = (sender + 1) % replicas;
      const auto [begin, end] = chunk_bounds(length, replicas, chunk);
      std::copy(buffers[sender].begin() + static_cast<std::ptrdiff_t>(begin),
                buffers[sender].begin() + static_cast<std::ptrdiff_t>(end),
                buffers[receiver].begin() + static_cast<std::ptrdiff_t>(begin));
    }
  }
  const float scale = op == ReduceOp::kMean ? 1.0f / static_cast<float>(replicas) : 1.0f;
  std::vector<Tensor> results;
  for (size_t replica = 0; replica < replicas; ++replica) {
    if (scale != 1.0f) {
      for (float& value : buffers[replica]) value *= scale;
    }
    const Tensor& input = per_replica[replica];
    results.push_back(Tensor::from_vector<float>(buffers[replica], input.shape(), input.device()));
  }
  timer.finish(detail::replica_devices(per_replica), static_cast<double>(length * sizeof(float)),
               nlohmann::json{{"algorithm", name()}, {"replicas", replicas}}.dump());
  return results;
}

}  // namespace accel::distribute
