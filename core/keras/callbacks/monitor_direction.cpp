// Keras 2's resolution of mode="auto" / "min" / "max" for monitored values.
#include "monitor_direction.hpp"

#include <iostream>

namespace accel::keras::detail {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "min" / "max", or nullopt for "auto" (and, with a warning, anything else).
std::optional<MonitorDirection> explicit_direction(const std::string& callback, const std::string& mode) {
  if (mode == "min") return MonitorDirection::kLowerIsBetter;
  if (mode == "max") return MonitorDirection::kHigherIsBetter;
  if (mode != "auto") std::cerr << "WARNING: " << callback << " mode " << mode << " is unknown, fallback to auto mode.\n";
  return std::nullopt;
}

}  // namespace

MonitorDirection resolve_checkpoint_direction(const std::string& callback, const std::string& monitor,
                                              const std::string& mode) {
  if (auto direction = explicit_direction(callback, mode)) return *direction;
  const bool higher = monitor.find("acc") != std::string::npos || monitor.rfind("fmeasure", 0) == 0;
  return higher ? MonitorDirection::kHigherIsBetter : MonitorDirection::kLowerIsBetter;
}

MonitorDirection resolve_early_stopping_direction(const std::string& callback, const std::string& monitor,
                                                  const std::string& mode) {
  if (auto direction = explicit_direction(callback, mode)) return *direction;
  const bool higher = ends_with(monitor, "acc") || ends_with(monitor, "accuracy") || ends_with(monitor, "auc");
  return higher ? MonitorDirection::kHigherIsBetter : MonitorDirection::kLowerIsBetter;
}

std::string available_log_names(const std::map<std::string, double>& logs) {
  std::string names;
  for (const auto& [name, value] : logs) names += (names.empty() ? "" : ",") + name;
  return names;
}

}  // namespace accel::keras::detail
