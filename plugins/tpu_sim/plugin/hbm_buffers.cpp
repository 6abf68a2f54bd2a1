// The emulated HBM: buffers are 64-byte aligned host allocations counted
// against their TensorCore's share of the chip's HBM capacity. Going past
// the capacity is RESOURCE_EXHAUSTED with the requested bytes, the bytes in
// use and the capacity, and allocates nothing, so the device stays usable.
// Copies are memcpy with bounds checks (the host<->HBM transfers are not
// timed: the emulator times ops, not PCIe). A copy into a buffer and a freed
// buffer leave the core's VMEM residency: what was kept there is stale.
// A timing-only system (tpu_sim.values=none) hands out address ranges with
// no memory behind them and does not refuse past the capacity (a what-if may
// be a model too big for the chip); copies move nothing and reads give zeros.
#include "tpu_sim_plugin.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace accel::tpu_sim {
namespace {

constexpr std::uint64_t kAlignment = 64;

void check_range(const AccelBuffer& buffer, std::uint64_t offset, std::uint64_t bytes, const char* what) {
  if (offset > buffer.bytes || bytes > buffer.bytes - offset) {
    throw sdk::PluginError(ACCEL_STATUS_OUT_OF_RANGE, fmt::format("{}: bytes [{}, {}) outside a buffer of {} bytes",
                                                                  what, offset, offset + bytes, buffer.bytes));
  }
}

void reserve_hbm(TensorCore& core, std::uint64_t bytes) {
  std::lock_guard lock(core.hbm_mutex);
  // Timing only answers what-if questions, a model too big for the chip among
  // them: its bytes are counted, not refused.
  if (!core.timing_only && bytes > core.hbm_capacity_bytes - core.hbm_in_use_bytes) {
    throw sdk::PluginError(ACCEL_STATUS_RESOURCE_EXHAUSTED,
                           fmt::format("emulated HBM of TPU:{} exhausted: cannot allocate {} bytes; {} bytes in use "
                                       "of a {}-byte capacity (the core's share of the chip's HBM)",
                                       core.index, bytes, core.hbm_in_use_bytes, core.hbm_capacity_bytes));
  }
  core.hbm_in_use_bytes += bytes;
}

void release_hbm(TensorCore& core, std::uint64_t bytes) noexcept {
  std::lock_guard lock(core.hbm_mutex);
  core.hbm_in_use_bytes -= bytes;
}

// Timing only: distinct, never reused address ranges far above real
// allocations' (ranges decide VMEM residency, so two live buffers must not
// overlap, as real allocations never do). 2^62 bytes of address space is
// never used up by a process.
void* timing_only_address(std::uint64_t rounded) {
  static std::atomic<std::uintptr_t> next{std::uintptr_t{1} << 62};
  return reinterpret_cast<void*>(next.fetch_add(rounded + kAlignment));
}

}  // namespace

AccelBuffer* allocate_hbm(TensorCore& core, std::uint64_t bytes) {
  reserve_hbm(core, bytes);
  const std::uint64_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (core.timing_only) return new AccelBuffer{timing_only_address(rounded), bytes, &core};
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr) {
    release_hbm(core, bytes);
    throw sdk::PluginError(ACCEL_STATUS_RESOURCE_EXHAUSTED,
                           fmt::format("cannot allocate {} bytes of host memory to stand for HBM", bytes));
  }
  return new AccelBuffer{data, bytes, &core};
}

void free_hbm(AccelBuffer* buffer) noexcept {
  if (buffer == nullptr) return;
  buffer->core->residency.forget(buffer->data, buffer->bytes);
  release_hbm(*buffer->core, buffer->bytes);
  if (!buffer->core->timing_only) std::free(buffer->data);
  delete buffer;
}

void copy_in(const void* source, AccelBuffer& destination, std::uint64_t offset, std::uint64_t bytes) {
  check_range(destination, offset, bytes, "copy_host_to_device");
  destination.core->residency.forget(static_cast<char*>(destination.data) + offset, bytes);
  if (bytes != 0 && !destination.core->timing_only) {
    std::memcpy(static_cast<char*>(destination.data) + offset, source, bytes);
  }
}

void copy_out(const AccelBuffer& source, std::uint64_t offset, void* destination, std::uint64_t bytes) {
  check_range(source, offset, bytes, "copy_device_to_host");
  if (bytes == 0) return;
  if (source.core->timing_only) {
    std::memset(destination, 0, bytes);
  } else {
    std::memcpy(destination, static_cast<const char*>(source.data) + offset, bytes);
  }
}

void copy_between(const AccelBuffer& source, std::uint64_t source_offset, AccelBuffer& destination,
                  std::uint64_t destination_offset, std::uint64_t bytes) {
  check_range(source, source_offset, bytes, "copy_device_to_device source");
  check_range(destination, destination_offset, bytes, "copy_device_to_device destination");
  destination.core->residency.forget(static_cast<char*>(destination.data) + destination_offset, bytes);
  if (bytes != 0 && !destination.core->timing_only) {  // memmove: the host may copy within one buffer
    std::memmove(static_cast<char*>(destination.data) + destination_offset,
                 static_cast<const char*>(source.data) + source_offset, bytes);
  }
}

}  // namespace accel::tpu_sim
