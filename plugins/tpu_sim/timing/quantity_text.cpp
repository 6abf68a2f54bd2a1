#include "timing/quantity_text.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace accel::tpu {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

constexpr std::array<std::pair<std::string_view, double>, 10> kByteUnits{{
    {"B", 1.0},
    {"KiB", 1024.0},
    {"MiB", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
    {"TiB", 1024.0 * 1024 * 1024 * 1024},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"", 1.0},
}};

}  // namespace

bool parse_finite_number(std::string_view text, double& out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  // from_chars takes "inf" and "nan" too; isfinite refuses them below.
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '-' ||
                        text.front() == '.')) {
    return false;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return false;
  out = value;
  return true;
}

bool parse_byte_size(std::string_view text, double& bytes) {
  text = trim(text);
  std::size_t unit_start = text.size();
  while (unit_start > 0 && std::isalpha(static_cast<unsigned char>(text[unit_start - 1]))) --unit_start;
  // "1e9" ends in a digit; "16e" is not a size. Only a known unit is split off.
  const std::string_view unit = text.substr(unit_start);
  for (const auto& [name, scale] : kByteUnits) {
    if (name != unit) continue;
    double value = 0;
    if (!parse_finite_number(text.substr(0, unit_start), value)) return false;
    bytes = value * scale;  // may round to infinity: callers range-check it
    return true;
  }
  return false;
}

std::string format_byte_size(double bytes) {
  constexpr std::array<std::pair<std::string_view, double>, 4> kBinary{{
      {"TiB", 1024.0 * 1024 * 1024 * 1024}, {"GiB", 1024.0 * 1024 * 1024}, {"MiB", 1024.0 * 1024}, {"KiB", 1024.0}}};
  for (const auto& [name, scale] : kBinary) {
    if (bytes >= scale && std::fmod(bytes, scale) == 0) return fmt::format("{:g} {}", bytes / scale, name);
  }
  return fmt::format("{:g}", bytes);
}

}  // namespace accel::tpu
