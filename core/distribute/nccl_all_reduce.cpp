// NcclAllReduce (cross_device_ops.hpp) and the default choice of CrossDeviceOps.
#include <accel/distribute/cross_device_ops.hpp>

#include <accel/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "replica_values.hpp"

namespace accel::distribute {
namespace {

std::string short_names(const std::vector<Device>& devices) {
  std::vector<std::string> names;
  for (const Device& device : devices) names.push_back(device.short_name());
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

const NcclCommunicator& NcclAllReduce::communicator_for(const std::vector<Tensor>& per_replica) {
  const std::vector<Device> devices = detail::replica_devices(per_replica);
  std::lock_guard lock(mutex_);
  if (!communicator_) communicator_ = std::make_shared<NcclCommunicator>(devices);
  if (communicator_->devices() != devices) {
    throw InvalidArgumentError(fmt::format("NcclAllReduce: its clique runs on [{}], the values are on [{}]",
                                           short_names(communicator_->devices()), short_names(devices)));
  }
  return *communicator_;
}

std::vector<Tensor> NcclAllReduce::all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) {
  detail::check_replica_values("NcclAllReduce", op, per_replica);
  const NcclCommunicator& communicator = communicator_for(per_replica);
  // NCCL reduces in place: into fresh tensors, never a buffer the caller still holds.
  std::vector<Tensor> results;
  results.reserve(per_replica.size());
  for (const Tensor& value : per_replica) {
    Tensor& result = results.emplace_back(Tensor::empty(value.shape(), value.dtype(), value.device()));
    result.assign(value);
  }
  communicator.all_reduce(op == ReduceOp::kMean ? NcclReduction::kAverage : NcclReduction::kSum, results);
  return results;
}

Tensor NcclAllReduce::reduce_to(ReduceOp op, const std::vector<Tensor>& per_replica, const Device& destination) {
  return all_reduce(op, per_replica).front().to(destination);
}

std::shared_ptr<CrossDeviceOps> select_cross_device_ops(const std::vector<Device>& devices) {
  // Only GPUs' plugins offer NCCL: unavailable_reason answers for every other device.
  if (devices.size() >= 2 && NcclCommunicator::unavailable_reason(devices).empty()) {
    return std::make_shared<NcclAllReduce>();
  }
  return std::make_shared<ReductionToOneDevice>();
}

}  // namespace accel::distribute
