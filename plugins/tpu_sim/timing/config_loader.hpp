// Reads a TPU hardware description (YAML, schema in docs/tpu-emulator.md)
// into a Hardware, applying "dotted.key=value" overrides for what-if
// studies, and validates it: every field against its physical range
// (hardware_limits.hpp), the cross-field rules, duplicate keys and alias
// abuse (yaml_structure_check.hpp). Every problem, a YAML syntax error
// included, is a ConfigError naming the file (or the override), line,
// column and key; no yaml-cpp exception leaves the loader.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "timing/hardware_config.hpp"

namespace accel::tpu {

// Largest hardware description read (a preset is about 2 KiB).
inline constexpr std::size_t kMaxHardwareFileBytes = 1 << 20;

// An override of one field, e.g. "core.mxu.rows=64" or "hbm.bandwidth_bytes_per_s=2e12".
struct FieldOverride {
  std::string key;
  std::string value;
};
FieldOverride parse_field_override(std::string_view text);  // throws ConfigError

Hardware load_hardware_file(const std::filesystem::path& path, const std::vector<FieldOverride>& overrides = {});
Hardware load_hardware_text(std::string_view yaml, const std::string& source_name,
                            const std::vector<FieldOverride>& overrides = {});

// Checks the cross-field rules (sizes that cannot work); throws ConfigError
// naming `hw.source`. The loader calls it; call it again after editing a Hardware.
void validate_hardware(const Hardware& hw);

}  // namespace accel::tpu
