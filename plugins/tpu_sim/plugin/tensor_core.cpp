// The physical devices of the emulated system: one per TensorCore, chips x
// cores_per_chip of them, TPU:0 .. TPU:N-1 in chip-major order. Each gets
// its share of its chip's HBM and the properties `accel devices` prints and
// the conformance suite reads (matmul_precision).
#include "tpu_sim_plugin.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <fmt/format.h>

namespace accel::tpu_sim {
namespace {

// "tpu_v4" -> "TPU v4"; a file stem without the prefix stays as it is.
std::string display_name(const std::string& name) {
  return name.rfind("tpu_", 0) == 0 ? "TPU " + name.substr(4) : name;
}

// The chip's position in the slice, "x,y,z" (first dimension fastest).
std::string chip_coordinates(const tpu::Hardware& hw, int chip) {
  if (hw.interconnect.dims.empty()) return "0";
  std::string text;
  for (int size : hw.interconnect.dims) {
    if (!text.empty()) text += ',';
    text += std::to_string(chip % size);
    chip /= size;
  }
  return text;
}

void describe(TensorCore& core, const AccelPluginContext& context) {
  const tpu::Hardware& hw = context.hardware;
  const auto& mxu = hw.core.mxu;
  const double peak_flops = 2.0 * static_cast<double>(tpu::peak_macs_per_cycle_per_core(hw)) * hw.clock_hz;
  core.description = fmt::format("{} (emulated, chip {} core {})", display_name(hw.name), core.chip, core.core_in_chip);
  core.property_strings = {
      {"preset", hw.name},
      {"source", hw.source},
      {"chip", std::to_string(core.chip)},
      {"core", std::to_string(core.core_in_chip)},
      {"coords", chip_coordinates(hw, core.chip)},
      {"mxus", std::to_string(hw.core.mxus)},
      {"array", fmt::format("{}x{}", mxu.rows, mxu.columns)},
      {"dataflow", std::string(tpu::to_string(mxu.dataflow))},
      {"mxu_input_type", std::string(tpu::to_string(mxu.input_type))},
      // The functional model rounds MXU inputs to bf16 on every preset,
      // int8 ones included (docs/tpu-emulator.md, "Functional model").
      {"matmul_precision", "bfloat16"},
      {"clock_hz", fmt::format("{}", hw.clock_hz)},
      {"peak_flops", fmt::format("{}", peak_flops)},
      // The device's share: a chip's TensorCores share its HBM (a megacore device has all of it).
      {"hbm_bandwidth", fmt::format("{}", hw.hbm.bandwidth_bytes_per_s / hw.cores_per_chip)},
      {"vmem_bytes", std::to_string(hw.core.vmem_bytes)},
      {"mode", context.settings.cycle_accurate ? "cycle_accurate" : "analytical"},
      {"convention", std::string(to_string(context.settings.convention))},
  };
  core.properties.clear();
  for (const auto& [key, value] : core.property_strings) core.properties.push_back({key.c_str(), value.c_str()});
}

}  // namespace

void create_cores(AccelPluginContext& context) {
  const tpu::Hardware& hw = context.hardware;
  context.cores.clear();
  const int listed_chips = context.settings.first_device_only ? 1 : hw.chips;
  const int listed_cores = context.settings.first_device_only ? 1 : hw.cores_per_chip;
  for (int chip = 0; chip < listed_chips; ++chip) {
    for (int core_in_chip = 0; core_in_chip < listed_cores; ++core_in_chip) {
      auto core = std::make_unique<TensorCore>();
      core->index = static_cast<int>(context.cores.size());
      core->chip = chip;
      core->core_in_chip = core_in_chip;
      core->hbm_capacity_bytes = static_cast<std::uint64_t>(hw.hbm.capacity_bytes) / hw.cores_per_chip;
      core->timing_only = context.settings.timing_only;
      core->timeline.totals.struct_size = sizeof(AccelTpuSimDeviceTotals);
      core->timeline.totals.clock_hz = hw.clock_hz;
      // VMEM: the other half holds the kernels' own tiles. CMEM: the core's
      // share of the chip's (a megacore device, one per chip, has all of it).
      core->residency.set_capacity_bytes(hw.core.vmem_bytes / 2, hw.cmem_bytes / hw.cores_per_chip);
      describe(*core, context);
      context.cores.push_back(std::move(core));
    }
  }
}

TensorCore& core_at(AccelPluginContext& context, int32_t index) {
  if (index < 0 || index >= static_cast<int32_t>(context.cores.size())) {
    throw sdk::PluginError(ACCEL_STATUS_NOT_FOUND,
                           fmt::format("no TPU device {}: the emulated {} has devices 0 to {}", index,
                                       context.hardware.name, context.cores.size() - 1));
  }
  return *context.cores[static_cast<size_t>(index)];
}

}  // namespace accel::tpu_sim
