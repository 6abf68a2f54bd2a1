// LogicalDevice: one device the runtime opened on a plugin's physical device.
// Owns the plugin's AccelDevice handle, the memory accounting that enforces
// limits, and a table of which (op, dtype) pairs the plugin supports.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include "runtime/loaded_plugin.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

namespace accel::detail {

class LogicalDevice {
 public:
  LogicalDevice(PluginLibrary* plugin, std::string type, int32_t index, std::string physical_name,
                int32_t plugin_device_index, uint64_t memory_limit_bytes);
  // Takes the plugin's handle once device_open succeeded (the device's address is
  // the host context the plugin reports through, so it exists first).
  void attach(AccelDevice* handle);
  ~LogicalDevice();
  LogicalDevice(const LogicalDevice&) = delete;
  LogicalDevice& operator=(const LogicalDevice&) = delete;

  // "/job:localhost/replica:0/task:0/device:GPU:1" for ("GPU", 1).
  static std::string name_for(std::string_view type, int32_t index);

  const std::string& name() const noexcept { return name_; }
  const std::string& type() const noexcept { return type_; }
  int32_t index() const noexcept { return index_; }
  const std::string& physical_name() const noexcept { return physical_name_; }
  // The physical device's index among its plugin's own devices.
  int32_t plugin_device_index() const noexcept { return plugin_device_index_; }
  PluginLibrary& plugin() const noexcept { return *plugin_; }
  const AccelPluginApi& api() const noexcept { return *plugin_->api; }
  AccelDevice* handle() const noexcept { return handle_; }
  uint64_t memory_limit() const noexcept { return memory_limit_; }

  bool supports(AccelOp op, AccelDType dtype) const noexcept {
    return supported_[static_cast<size_t>(op)][static_cast<size_t>(dtype)];
  }
  // Whether the plugin runs `op` with this epilogue (accel_plugin.h, since 1.2);
  // flags 0 is the plain op.
  bool supports_epilogue(AccelOp op, AccelDType dtype, int32_t epilogue_flags, AccelOp activation) const noexcept;

  // Allocates `bytes` (nullptr for 0), enforcing the limit: ResourceExhaustedError
  // names the device, the request and what is in use.
  AccelBuffer* allocate(uint64_t bytes);
  void release(AccelBuffer* buffer, uint64_t bytes) noexcept;
  uint64_t bytes_in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }
  uint64_t peak_bytes() const noexcept { return peak_.load(std::memory_order_relaxed); }
  void reset_peak() noexcept { peak_.store(bytes_in_use(), std::memory_order_relaxed); }

  void copy_from_host(const void* source, AccelBuffer* destination, uint64_t offset, uint64_t bytes);
  void copy_to_host(AccelBuffer* source, uint64_t offset, void* destination, uint64_t bytes);
  void synchronize();

  // True the first time an op falls back from this device; the warning is shown once.
  bool first_fallback(AccelOp op);

 private:
  PluginLibrary* plugin_;
  AccelDevice* handle_ = nullptr;
  std::string type_;
  int32_t index_;
  std::string name_;
  std::string physical_name_;
  int32_t plugin_device_index_;
  uint64_t memory_limit_;
  std::atomic<uint64_t> in_use_{0};
  std::atomic<uint64_t> peak_{0};
  std::array<std::array<bool, ACCEL_DTYPE_COUNT>, ACCEL_OP_COUNT> supported_{};
  std::mutex fallback_mutex_;
  std::set<int32_t> warned_fallbacks_;
};

// What a Tensor's storage is: a plugin buffer on one logical device.
}  // namespace accel::detail

namespace accel::detail {
struct TensorStorage {
  LogicalDevice* device = nullptr;
  AccelBuffer* buffer = nullptr;  // nullptr for zero bytes
  uint64_t bytes = 0;

  TensorStorage(LogicalDevice* owner, uint64_t size)
      : device(owner), buffer(owner->allocate(size)), bytes(size) {}
  ~TensorStorage() {
    if (buffer != nullptr) device->release(buffer, bytes);
  }
  TensorStorage(const TensorStorage&) = delete;
  TensorStorage& operator=(const TensorStorage&) = delete;
};
}  // namespace accel::detail
