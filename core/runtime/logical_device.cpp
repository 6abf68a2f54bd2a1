// LogicalDevice: memory accounting, copies and the supported-op table.
#include "runtime/logical_device.hpp"

#include "runtime/status.hpp"

#include <accel/error.hpp>
#include <accel/plugin/op_classes.hpp>

#include <fmt/format.h>

namespace accel::detail {

LogicalDevice::LogicalDevice(PluginLibrary* plugin, std::string type, int32_t index,
                             std::string physical_name, int32_t plugin_device_index,
                             uint64_t memory_limit_bytes)
    : plugin_(plugin),
      type_(std::move(type)),
      index_(index),
      name_(name_for(type_, index)),
      physical_name_(std::move(physical_name)),
      plugin_device_index_(plugin_device_index),
      memory_limit_(memory_limit_bytes) {}

std::string LogicalDevice::name_for(std::string_view type, int32_t index) {
  return fmt::format("/job:localhost/replica:0/task:0/device:{}:{}", type, index);
}

void LogicalDevice::attach(AccelDevice* handle) {
  handle_ = handle;
  for (int32_t op = 0; op < ACCEL_OP_COUNT; ++op) {
    // A plugin built for an older minor never hears of ops appended after it.
    if (plugin_->api->api_minor < sdk::op_since_minor(op)) continue;
    for (int32_t dtype = 0; dtype < ACCEL_DTYPE_COUNT; ++dtype) {
      supported_[op][dtype] =
          plugin_->api->supports_op(handle_, static_cast<AccelOp>(op), static_cast<AccelDType>(dtype)) != 0;
    }
  }
}

bool LogicalDevice::supports_epilogue(AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                                      AccelOp activation) const noexcept {
  if (epilogue_flags == 0) return supports(op, dtype);
  if (!plugin_->has(&AccelPluginApi::supports_epilogue)) return false;
  return plugin_->api->supports_epilogue(handle_, op, dtype, epilogue_flags, activation) != 0;
}

LogicalDevice::~LogicalDevice() {
  if (handle_ != nullptr) plugin_->api->device_close(handle_);
}

AccelBuffer* LogicalDevice::allocate(uint64_t bytes) {
  if (bytes == 0) return nullptr;
  uint64_t in_use = in_use_.load(std::memory_order_relaxed);
  do {
    if (memory_limit_ != 0 && in_use + bytes > memory_limit_) {
      throw ResourceExhaustedError(fmt::format(
          "OOM when allocating {} bytes on {}: {} bytes in use of a {}-byte memory limit",
          bytes, name_, in_use, memory_limit_));
    }
  } while (!in_use_.compare_exchange_weak(in_use, in_use + bytes, std::memory_order_relaxed));

  AccelBuffer* buffer = nullptr;
  AccelStatus* status = api().buffer_allocate(handle_, bytes, &buffer);
  if (status != nullptr) {
    in_use_.fetch_sub(bytes, std::memory_order_relaxed);
    check_status(status, fmt::format("allocating {} bytes on {} ({} bytes in use)", bytes, name_,
                                     bytes_in_use()));
  }
  uint64_t now = in_use + bytes;
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return buffer;
}

void LogicalDevice::release(AccelBuffer* buffer, uint64_t bytes) noexcept {
  api().buffer_free(handle_, buffer);
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
}

void LogicalDevice::copy_from_host(const void* source, AccelBuffer* destination, uint64_t offset,
                                   uint64_t bytes) {
  if (bytes == 0) return;
  check_status(api().copy_host_to_device(handle_, source, destination, offset, bytes),
               "copying to " + name_);
}

void LogicalDevice::copy_to_host(AccelBuffer* source, uint64_t offset, void* destination,
                                 uint64_t bytes) {
  if (bytes == 0) return;
  check_status(api().copy_device_to_host(handle_, source, offset, destination, bytes),
               "copying from " + name_);
}

void LogicalDevice::synchronize() { check_status(api().synchronize(handle_), "synchronizing " + name_); }

bool LogicalDevice::first_fallback(AccelOp op) {
  std::lock_guard lock(fallback_mutex_);
  return warned_fallbacks_.insert(static_cast<int32_t>(op)).second;
}

}  // namespace accel::detail
