// The TPU emulator plugin's internal types: the plugin context (the emulated
// system), one emulated TensorCore, a logical device and an HBM buffer, as
// the opaque AccelPluginContext / AccelDevice / AccelBuffer of the C ABI, plus
// the functions the entry table (plugin_entry.cpp) points at, by file.
#pragma once

#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/tpu_sim_extension.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "timing/hardware_config.hpp"
#include "batch_norm_fusion.hpp"
#include "timing/op_timing.hpp"
#include "vmem_residency.hpp"
#include "weight_prefetch.hpp"

namespace accel::tpu_sim {

inline constexpr const char* kPluginName = "tpu_sim";

// The system the settings select (system_settings.cpp).
struct SystemSettings {
  std::string preset = "tpu_v4";  // tpu_sim.preset: a preset name or a YAML file
  std::string overrides;          // tpu_sim.overrides: "key=value;key=value"
  int chips = 0;                  // tpu_sim.chips; 0: one chip unless the overrides set chips
  bool cycle_accurate = false;    // tpu_sim.mode
  tpu::TimingConvention convention = tpu::TimingConvention::kTpu;  // tpu_sim.convention
  ResidencyMode vmem_residency = ResidencyMode::kFused;            // tpu_sim.vmem_residency
  // tpu_sim.values = none: timing only. Buffers are address ranges with no
  // memory behind them and ops are timed but not run, so a step of any size
  // is timed in the time its op calls take (`accel tpu estimate --model`).
  bool timing_only = false;
  // tpu_sim.megacore = on: on a chip whose preset has megacore, the chip is
  // one device (tpu::megacore_view); elsewhere nothing changes.
  bool megacore = false;
  // tpu_sim.devices = first: only the system's first device is listed (and
  // made); the system keeps all its chips for its collectives. A pod
  // estimate times one chip's program on a slice of thousands of chips,
  // more devices than a plugin may list.
  bool first_device_only = false;
};

// The simulated timeline of one core and what ran on it (op_execution.cpp).
struct CoreTimeline {
  std::int64_t end_cycle = 0;
  AccelTpuSimDeviceTotals totals{};
  PreviousKernel previous_kernel;  // for the weight prefetch of compiled programs
  RecentKernels recent_kernels;    // for batch norm's fusions in compiled programs
};

// One emulated TensorCore: a physical device TPU:index.
struct TensorCore {
  int index = 0;
  int chip = 0;
  int core_in_chip = 0;
  std::uint64_t hbm_capacity_bytes = 0;  // this core's share of its chip's HBM
  bool timing_only = false;              // SystemSettings::timing_only
  // Strings of the physical device, alive for the life of the plugin.
  std::string description;
  std::vector<std::pair<std::string, std::string>> property_strings;
  std::vector<AccelProperty> properties;

  std::mutex hbm_mutex;  // guards hbm_in_use_bytes
  std::uint64_t hbm_in_use_bytes = 0;

  std::mutex timeline_mutex;  // guards timeline
  CoreTimeline timeline;

  // The tensors recent kernels left in this core's VMEM (guarded inside).
  VmemResidency residency;
};

}  // namespace accel::tpu_sim

// Opaque ABI types, defined here: the host only ever holds pointers to them.
struct AccelPluginContext {
  const AccelHostApi* host = nullptr;
  accel::tpu_sim::SystemSettings settings;
  accel::tpu::Hardware hardware;
  std::unique_ptr<accel::tpu::TimingModel> timing;  // one core per op, the selected mode and convention
  std::vector<std::unique_ptr<accel::tpu_sim::TensorCore>> cores;
  std::string system_json;
};

struct AccelDevice {
  AccelPluginContext* context = nullptr;
  accel::tpu_sim::TensorCore* core = nullptr;
  void* host_context = nullptr;  // passed back to report_op
};

// Host memory standing for HBM; `data` is never null, even for 0 bytes. In a
// timing-only system `data` is an address no memory stands behind (never read
// or written): ranges still tell the VMEM residency which tensors overlap.
struct AccelBuffer {
  void* data = nullptr;
  std::uint64_t bytes = 0;
  accel::tpu_sim::TensorCore* core = nullptr;  // whose HBM it counts against
};

namespace accel::tpu_sim {

// system_settings.cpp: the runtime settings -> SystemSettings -> Hardware.
SystemSettings read_settings(const AccelHostApi& host);
tpu::Hardware load_system_hardware(const SystemSettings& settings);  // throws PluginError

// tensor_core.cpp: the physical devices of the system.
void create_cores(AccelPluginContext& context);
TensorCore& core_at(AccelPluginContext& context, int32_t index);  // NotFound names the range

// hbm_buffers.cpp: allocation against the core's HBM, and the copies.
AccelBuffer* allocate_hbm(TensorCore& core, std::uint64_t bytes);
void free_hbm(AccelBuffer* buffer) noexcept;
void copy_in(const void* source, AccelBuffer& destination, std::uint64_t offset, std::uint64_t bytes);
void copy_out(const AccelBuffer& source, std::uint64_t offset, void* destination, std::uint64_t bytes);
void copy_between(const AccelBuffer& source, std::uint64_t source_offset, AccelBuffer& destination,
                  std::uint64_t destination_offset, std::uint64_t bytes);

// op_execution.cpp: runs an op with the MXU's numerics and reports its simulated time.
void execute_call(AccelDevice& device, const AccelOpCall& call);

// tpu_sim_extension.cpp: the "accel.tpu_sim.v1" table.
const AccelTpuSimExtension* extension_table();

}  // namespace accel::tpu_sim
