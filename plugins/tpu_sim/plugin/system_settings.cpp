// Which TPU system the plugin emulates, from the runtime settings:
//   tpu_sim.preset      preset name (configs/tpu) or a YAML file; default tpu_v4
//   tpu_sim.overrides   "key=value;key=value" field overrides (as `accel tpu estimate --set`)
//   tpu_sim.chips       chips of the system; default one chip of the preset
//   tpu_sim.mode        analytical (default) | cycle_accurate
//   tpu_sim.convention  tpu (default) | scalesim
//   tpu_sim.vmem_residency  fused (default) | all | off: which reads find
//                       recently written tensors in VMEM (vmem_residency.hpp)
//   tpu_sim.values      compute (default) | none: timing only, no tensor values
//   tpu_sim.megacore    off (default) | on: a chip whose preset has megacore is
//                       one device, its TensorCores acting as one (tpu::megacore_view)
//   tpu_sim.devices     all (default) | first: list only the first device; the
//                       system keeps its chips (a pod estimate of thousands of chips)
// Each falls back to its environment variable (ACCEL_TPU_SIM_PRESET, ...)
// through the host. A bad value is an InvalidArgument naming the setting; a
// bad hardware description keeps the loader's "file:line:column: ..." text.
#include "tpu_sim_plugin.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string_view>

#include "timing/config_error.hpp"
#include "timing/config_loader.hpp"
#include "timing/presets.hpp"

namespace accel::tpu_sim {
namespace {

[[noreturn]] void bad_setting(std::string_view key, std::string_view value, std::string_view expected) {
  throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "setting " + std::string(key) + "='" + std::string(value) +
                                                            "': expected " + std::string(expected));
}

std::string setting_or(const AccelHostApi& host, const char* key, std::string fallback) {
  const char* value = host.get_setting != nullptr ? host.get_setting(key) : nullptr;
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

std::vector<tpu::FieldOverride> parse_overrides(std::string_view text) {
  std::vector<tpu::FieldOverride> overrides;
  while (!text.empty()) {
    const size_t end = text.find(';');
    std::string_view field = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
    while (!field.empty() && field.back() == ' ') field.remove_suffix(1);
    if (!field.empty()) overrides.push_back(tpu::parse_field_override(field));
  }
  return overrides;
}

bool overrides_set(const std::vector<tpu::FieldOverride>& overrides, std::string_view key) {
  for (const auto& field : overrides) {
    if (field.key == key) return true;
  }
  return false;
}


}  // namespace

SystemSettings read_settings(const AccelHostApi& host) {
  SystemSettings settings;
  settings.preset = setting_or(host, "tpu_sim.preset", settings.preset);
  settings.overrides = setting_or(host, "tpu_sim.overrides", "");
  const std::string chips = setting_or(host, "tpu_sim.chips", "");
  if (!chips.empty()) {
    const auto [end, error] = std::from_chars(chips.data(), chips.data() + chips.size(), settings.chips);
    if (error != std::errc() || end != chips.data() + chips.size() || settings.chips < 1) {
      bad_setting("tpu_sim.chips", chips, "a positive number of chips, e.g. 4 for a v4-8 slice");
    }
  }
  const std::string mode = setting_or(host, "tpu_sim.mode", "analytical");
  if (mode != "analytical" && mode != "cycle_accurate") bad_setting("tpu_sim.mode", mode, "analytical or cycle_accurate");
  settings.cycle_accurate = mode == "cycle_accurate";
  const std::string convention = setting_or(host, "tpu_sim.convention", "tpu");
  if (convention != "tpu" && convention != "scalesim") bad_setting("tpu_sim.convention", convention, "tpu or scalesim");
  settings.convention = convention == "tpu" ? tpu::TimingConvention::kTpu : tpu::TimingConvention::kScaleSim;
  const std::string residency = setting_or(host, "tpu_sim.vmem_residency", "fused");
  if (!parse_residency_mode(residency, settings.vmem_residency)) {
    bad_setting("tpu_sim.vmem_residency", residency, "fused, all or off");
  }
  const std::string values = setting_or(host, "tpu_sim.values", "compute");
  if (values != "compute" && values != "none") {
    bad_setting("tpu_sim.values", values, "compute (tensor values and timing) or none (timing only)");
  }
  settings.timing_only = values == "none";
  const std::string megacore = setting_or(host, "tpu_sim.megacore", "off");
  if (megacore != "off" && megacore != "on") bad_setting("tpu_sim.megacore", megacore, "off or on");
  settings.megacore = megacore == "on";
  const std::string devices = setting_or(host, "tpu_sim.devices", "all");
  if (devices != "all" && devices != "first") bad_setting("tpu_sim.devices", devices, "all or first");
  settings.first_device_only = devices == "first";
  return settings;
}

tpu::Hardware load_system_hardware(const SystemSettings& settings) {
  try {
    tpu::SystemSelection selection;
    selection.preset_or_file = settings.preset;
    selection.overrides = parse_overrides(settings.overrides);
    tpu::Hardware hw = tpu::load_system(selection);
    // A runtime system is one chip of the preset unless tpu_sim.chips (or an
    // override of `chips`) asks for more.
    const int chips = settings.chips > 0 ? settings.chips : overrides_set(selection.overrides, "chips") ? hw.chips : 1;
    if (chips != hw.chips) {
      hw.interconnect.dims = tpu::slice_dims(hw, chips);
      hw.chips = chips;
      hw.source += " (tpu_sim.chips=" + std::to_string(chips) + ")";
      tpu::validate_hardware(hw);
    }
    if (settings.megacore && hw.megacore && hw.cores_per_chip > 1) {
      hw = tpu::megacore_view(hw);
      tpu::validate_hardware(hw);
    }
    return hw;
  } catch (const tpu::ConfigError& error) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, error.what());
  }
}

}  // namespace accel::tpu_sim
