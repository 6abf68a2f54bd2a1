// On-chip residency of recently written tensors, in VMEM and CMEM (see vmem_residency.hpp).
// Ranges are host addresses of the emulated HBM: a tensor is [data, data +
// bytes), so a reshaped view of a kept tensor (same storage) is found too.
#include "vmem_residency.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <algorithm>

namespace accel::tpu_sim {
namespace {

std::uint64_t tensor_bytes(const host_kernels::HostTensor& tensor) {
  return static_cast<std::uint64_t>(host_kernels::element_count(tensor)) * sdk::dtype_size(tensor.dtype);
}

}  // namespace

bool parse_residency_mode(std::string_view text, ResidencyMode& mode) {
  for (ResidencyMode candidate : {ResidencyMode::kOff, ResidencyMode::kFused, ResidencyMode::kAll}) {
    if (text == to_string(candidate)) {
      mode = candidate;
      return true;
    }
  }
  return false;
}

std::string_view to_string(ResidencyMode mode) {
  switch (mode) {
    case ResidencyMode::kOff: return "off";
    case ResidencyMode::kFused: return "fused";
    case ResidencyMode::kAll: return "all";
  }
  return "?";
}

ResidentInputs VmemResidency::resident_inputs(std::span<const host_kernels::HostTensor> inputs, bool fused_reader,
                                              ResidencyMode mode, ResidentInputs* in_cmem) const {
  ResidentInputs resident;
  if (in_cmem != nullptr) in_cmem->clear();
  if (mode == ResidencyMode::kOff) return resident;
  resident.assign(inputs.size(), false);
  if (in_cmem != nullptr) in_cmem->assign(inputs.size(), false);
  std::lock_guard lock(mutex_);
  for (std::size_t index = 0; index < inputs.size(); ++index) {
    const std::uint64_t bytes = tensor_bytes(inputs[index]);
    if (bytes == 0 || inputs[index].data == nullptr) continue;
    const auto begin = reinterpret_cast<std::uintptr_t>(inputs[index].data);
    const std::uintptr_t end = begin + bytes;
    for (std::size_t level : {kVmem, kCmem}) {
      const auto kept = std::find_if(ranges_[level].begin(), ranges_[level].end(),
                                     [&](const Range& range) { return range.begin <= begin && end <= range.end; });
      if (kept == ranges_[level].end()) continue;
      resident[index] = mode == ResidencyMode::kAll || fused_reader || kept->fused_writer;
      if (in_cmem != nullptr) (*in_cmem)[index] = resident[index] && level == kCmem;
      break;
    }
  }
  return resident;
}

void VmemResidency::record_written(std::span<const host_kernels::HostTensor> written, bool fused_writer) {
  std::lock_guard lock(mutex_);
  for (const host_kernels::HostTensor& tensor : written) {
    const std::uint64_t bytes = tensor_bytes(tensor);
    if (bytes == 0 || tensor.data == nullptr) continue;
    const auto begin = reinterpret_cast<std::uintptr_t>(tensor.data);
    forget_locked(begin, begin + bytes);
    // The smallest level it fits; a tensor larger than both stays in HBM only.
    std::size_t level = kVmem;
    if (bytes > static_cast<std::uint64_t>(capacity_bytes_[kVmem])) {
      if (bytes > static_cast<std::uint64_t>(capacity_bytes_[kCmem])) continue;
      level = kCmem;
    }
    std::deque<Range>& ranges = ranges_[level];
    ranges.push_back({begin, begin + bytes, fused_writer});
    resident_bytes_[level] += static_cast<std::int64_t>(bytes);
    while (resident_bytes_[level] > capacity_bytes_[level] || ranges.size() > kMaxRanges) {
      resident_bytes_[level] -= static_cast<std::int64_t>(ranges.front().end - ranges.front().begin);
      ranges.pop_front();
    }
  }
}

void VmemResidency::forget(const void* data, std::uint64_t bytes) {
  if (bytes == 0 || data == nullptr) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  std::lock_guard lock(mutex_);
  forget_locked(begin, begin + bytes);
}

void VmemResidency::forget_locked(std::uintptr_t begin, std::uintptr_t end) {
  const auto overlaps = [&](const Range& range) { return range.begin < end && begin < range.end; };
  for (std::size_t level : {kVmem, kCmem}) {
    std::deque<Range>& ranges = ranges_[level];
    for (const Range& range : ranges) {
      if (overlaps(range)) resident_bytes_[level] -= static_cast<std::int64_t>(range.end - range.begin);
    }
    ranges.erase(std::remove_if(ranges.begin(), ranges.end(), overlaps), ranges.end());
  }
}

void VmemResidency::set_capacity_bytes(std::int64_t capacity_bytes, std::int64_t cmem_capacity_bytes) {
  std::lock_guard lock(mutex_);
  capacity_bytes_[kVmem] = capacity_bytes;
  capacity_bytes_[kCmem] = cmem_capacity_bytes;
  for (std::size_t level : {kVmem, kCmem}) {
    ranges_[level].clear();
    resident_bytes_[level] = 0;
  }
}

std::int64_t VmemResidency::capacity_bytes() const {
  std::lock_guard lock(mutex_);
  return capacity_bytes_[kVmem];
}

std::int64_t VmemResidency::resident_bytes() const {
  std::lock_guard lock(mutex_);
  return resident_bytes_[kVmem];
}

std::int64_t VmemResidency::cmem_capacity_bytes() const {
  std::lock_guard lock(mutex_);
  return capacity_bytes_[kCmem];
}

std::int64_t VmemResidency::cmem_resident_bytes() const {
  std::lock_guard lock(mutex_);
  return resident_bytes_[kCmem];
}

}  // namespace accel::tpu_sim
