// Tensor construction, host access and movement between devices.
#include <accel/tensor.hpp>

#include <accel/error.hpp>
#include <accel/placement.hpp>

#include "runtime/dispatch.hpp"
#include "runtime/logical_device.hpp"
#include "runtime/op_observer.hpp"
#include "runtime/status.hpp"
#include "runtime/trace_hooks.hpp"

#include <fmt/format.h>

#include <atomic>

namespace accel {
namespace {

std::atomic<uint64_t> next_tensor_id{1};

detail::LogicalDevice* resolve(const std::optional<Device>& device) {
  return device ? device->internal() : current_device().internal();
}

}  // namespace

Tensor::Tensor(std::shared_ptr<detail::TensorStorage> storage, Shape shape, DType dtype, uint64_t byte_offset)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      dtype_(dtype),
      byte_offset_(byte_offset),
      id_(next_tensor_id.fetch_add(1, std::memory_order_relaxed)) {}

uint64_t Tensor::byte_size() const noexcept {
  return static_cast<uint64_t>(shape_.element_count()) * dtype_size(dtype_);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, std::optional<Device> device) {
  for (int64_t dim : shape.dims()) {
    if (dim < 0) throw InvalidArgumentError("negative dimension in shape " + shape.to_string());
  }
  detail::LogicalDevice* target = resolve(device);
  uint64_t bytes = static_cast<uint64_t>(shape.element_count()) * dtype_size(dtype);
  return Tensor(std::make_shared<detail::TensorStorage>(target, bytes), shape, dtype);
}

Tensor Tensor::from_host(const void* data, const Shape& shape, DType dtype, std::optional<Device> device) {
  Tensor tensor = empty(shape, dtype, device);
  tensor.storage_->device->copy_from_host(data, tensor.storage_->buffer, 0, tensor.byte_size());
  return tensor;
}

Tensor Tensor::from_vector_checked(const void* data, size_t count, const Shape& shape, DType dtype,
                                   std::optional<Device> device) {
  if (static_cast<int64_t>(count) != shape.element_count()) {
    throw InvalidArgumentError(fmt::format("{} values given for shape {} which holds {}", count,
                                           shape.to_string(), shape.element_count()));
  }
  return from_host(data, shape, dtype, device);
}

Device Tensor::device() const { return Device(storage_ ? storage_->device : nullptr); }

void Tensor::copy_to_host(void* destination) const {
  if (!storage_) throw FailedPreconditionError("copy_to_host of an undefined tensor");
  if (detail::TraceHooks* hooks = detail::active_trace_hooks()) hooks->on_host_read(*this);
  storage_->device->copy_to_host(storage_->buffer, byte_offset_, destination, byte_size());
}

void Tensor::check_host_type(DType requested) const {
  if (!storage_) throw FailedPreconditionError("reading an undefined tensor");
  if (requested != dtype_) {
    throw InvalidArgumentError(fmt::format("tensor has dtype {} but was read as {}", dtype_name(dtype_),
                                           dtype_name(requested)));
  }
}

void Tensor::throw_item_error() const {
  throw InvalidArgumentError(fmt::format("item() needs a tensor of one element; this one has shape {}",
                                         shape_.to_string()));
}

Tensor Tensor::to(const Device& device) const {
  if (!storage_) throw FailedPreconditionError("moving an undefined tensor");
  if (device.internal() == storage_->device) return *this;
  return detail::copy_to_device(*this, device.internal());
}

Tensor Tensor::reshape(const Shape& requested) const {
  std::vector<int64_t> dims = requested.dims();
  int64_t known = 1;
  int inferred = -1;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == -1) {
      if (inferred >= 0) throw InvalidArgumentError("reshape: only one dimension can be -1 in " + requested.to_string());
      inferred = static_cast<int>(axis);
    } else if (dims[axis] < 0) {
      throw InvalidArgumentError("reshape: negative dimension in " + requested.to_string());
    } else {
      known *= dims[axis];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || element_count() % known != 0) {
      throw InvalidArgumentError(fmt::format("reshape: cannot infer -1 reshaping {} to {}", shape_.to_string(),
                                             requested.to_string()));
    }
    dims[static_cast<size_t>(inferred)] = element_count() / known;
  }
  Shape shape(std::move(dims));
  if (shape.element_count() != element_count()) {
    throw InvalidArgumentError(fmt::format("reshape: cannot reshape {} ({} elements) to {} ({} elements)",
                                           shape_.to_string(), element_count(), shape.to_string(),
                                           shape.element_count()));
  }
  Tensor result(storage_, shape, dtype_, byte_offset_);
  detail::notify_observers(detail::kReshapeOp, std::span<const Tensor>(this, 1),
                           std::span<const Tensor>(&result, 1), nullptr);
  return result;
}

void Tensor::assign(const Tensor& source) {
  if (!storage_ || !source.storage_) throw FailedPreconditionError("assign with an undefined tensor");
  if (source.shape_ != shape_ || source.dtype_ != dtype_) {
    throw InvalidArgumentError(fmt::format("assign: source {} {} does not match target {} {}",
                                           dtype_name(source.dtype_), source.shape_.to_string(),
                                           dtype_name(dtype_), shape_.to_string()));
  }
  if (detail::TraceHooks* hooks = detail::active_trace_hooks()) hooks->on_assign(*this, source);
  if (byte_size() == 0) return;
  // The staging read below is part of this assignment, not a read the tracer should see.
  detail::TraceHooksSuspension assignment_is_reported;
  detail::LogicalDevice* device = storage_->device;
  if (source.storage_->device == device) {
    detail::check_status(
        device->api().copy_device_to_device(device->handle(), source.storage_->buffer, source.byte_offset_,
                                            storage_->buffer, byte_offset_, byte_size()),
        "assign on " + device->name());
    return;
  }
  detail::copy_through_host(source, device, storage_->buffer, byte_offset_);
}

}  // namespace accel
