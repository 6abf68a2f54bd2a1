// Numbers and byte sizes as written in a hardware description: "1050e6",
// "16 MiB", "32 GB". Only finite values parse: NaN, infinities and numbers
// beyond double range are refused here, before any conversion to an integer.
#pragma once

#include <string>
#include <string_view>

namespace accel::tpu {

// A decimal number ("700e6", "+1.5", "4096"); false for anything else,
// including "nan", "inf", ".inf" and values that overflow a double.
bool parse_finite_number(std::string_view text, double& out);

// A finite number with an optional unit: B, KiB, MiB, GiB, TiB, KB, MB, GB,
// TB. "1e300 TB" parses (to infinity): it is a size, one out of any range.
bool parse_byte_size(std::string_view text, double& bytes);

// Bytes in the largest binary unit that divides them: "16 MiB", "1 TiB", "4096".
std::string format_byte_size(double bytes);

}  // namespace accel::tpu
