// On-chip residency: which tensors a kernel finds in VMEM instead of HBM.
// Each TensorCore keeps the memory ranges of the tensors its most recent
// kernels wrote, newest last, as long as they add up to at most its
// residency capacity (half the core's VMEM: the other half holds the
// kernels' own tiles, the split the memory model uses). A later kernel that
// reads a range still kept reads it from VMEM: no HBM traffic for that
// input. Writes still go to HBM (the emulator cannot know whether anything
// else reads the tensor later). Host copies into a range and freed buffers
// drop it. The setting tpu_sim.vmem_residency chooses which reads count
// (ResidencyMode); docs/tpu-emulator.md, "Compiled programs", has the rule.
//
// CMEM, a second level, where the chip has one (Hardware::cmem_bytes, TPU
// v4): a written tensor too large for the VMEM capacity but within the
// core's share of the CMEM stays in CMEM instead, newest last as in VMEM.
// Each level evicts its own oldest ranges, so VMEM keeps what it kept
// without CMEM. A read of a range kept in CMEM costs no HBM traffic and, as
// CMEM's bandwidth is unpublished, no stall (an upper bound, the timing
// library's CMEM rule); the same modes decide which reads count.
#pragma once

#include <accel/plugin/host_kernels.hpp>

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

namespace accel::tpu_sim {

enum class ResidencyMode {
  kOff,    // every read comes from HBM, as in eager execution
  kFused,  // reads on an edge of a fused kernel: by one, or of what one wrote (the default)
  kAll,    // every read of a kept range
};

// "off", "fused", "all"; false for anything else.
bool parse_residency_mode(std::string_view text, ResidencyMode& mode);
std::string_view to_string(ResidencyMode mode);

// Per input of a call: read on chip, from VMEM or CMEM (true), or from HBM.
// Empty: all from HBM.
using ResidentInputs = std::vector<bool>;

class VmemResidency {
 public:
  explicit VmemResidency(std::int64_t capacity_bytes = 0, std::int64_t cmem_capacity_bytes = 0)
      : capacity_bytes_{capacity_bytes, cmem_capacity_bytes} {}
  VmemResidency(const VmemResidency&) = delete;
  VmemResidency& operator=(const VmemResidency&) = delete;

  // Which of `inputs` a kernel reads on chip under `mode`; `fused_reader`
  // says whether the kernel is a fused one (is_fused_kernel). `in_cmem`,
  // when given, gets which of those on-chip reads come from CMEM.
  ResidentInputs resident_inputs(std::span<const host_kernels::HostTensor> inputs, bool fused_reader,
                                 ResidencyMode mode, ResidentInputs* in_cmem = nullptr) const;

  // After a kernel ran: the tensors it wrote are the newest in VMEM, or in
  // CMEM when too large for VMEM (older ranges they overlap are gone); the
  // oldest of a level leave past its capacity.
  void record_written(std::span<const host_kernels::HostTensor> written, bool fused_writer);

  // Memory changed behind the kernels' back (a host copy, a freed buffer).
  void forget(const void* data, std::uint64_t bytes);

  // The core's capacities (VMEM's, and its CMEM share: 0 without CMEM),
  // set once its hardware is known; drops what is kept.
  void set_capacity_bytes(std::int64_t capacity_bytes, std::int64_t cmem_capacity_bytes = 0);
  std::int64_t capacity_bytes() const;
  std::int64_t resident_bytes() const;
  std::int64_t cmem_capacity_bytes() const;
  std::int64_t cmem_resident_bytes() const;

 private:
  struct Range {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    bool fused_writer = false;
  };
  // The two levels, indexes into the arrays below.
  static constexpr std::size_t kVmem = 0;
  static constexpr std::size_t kCmem = 1;
  // A bound on the ranges kept per level, so that lookups stay cheap when a
  // program writes many scalars.
  static constexpr std::size_t kMaxRanges = 1024;

  void forget_locked(std::uintptr_t begin, std::uintptr_t end);

  mutable std::mutex mutex_;  // guards the fields below
  std::int64_t capacity_bytes_[2];
  std::deque<Range> ranges_[2];  // per level, oldest first
  std::int64_t resident_bytes_[2] = {0, 0};
};

}  // namespace accel::tpu_sim
