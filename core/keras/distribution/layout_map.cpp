#include <accel/keras/distribution/layout_map.hpp>

#include <accel/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>
#include <set>

namespace accel::keras::distribution {

void LayoutMap::set(const std::string& key, TensorLayout layout) {
  try {
    (void)std::regex(key);
  } catch (const std::regex_error& error) {
    throw InvalidArgumentError(fmt::format("LayoutMap: key '{}' is not a regular expression: {}", key, error.what()));
  }
  std::set<std::string> used;
  for (const std::optional<std::string>& axis : layout.axes) {
    if (!axis) continue;
    if (mesh_.axis_index(*axis) < 0) {
      throw InvalidArgumentError(fmt::format("LayoutMap['{}'] = {}: the mesh has no axis '{}'; its axes are [{}]", key,
                                             format_layout(layout), *axis, fmt::join(mesh_.axis_names(), ", ")));
    }
    if (!used.insert(*axis).second) {
      throw InvalidArgumentError(fmt::format("LayoutMap['{}'] = {}: axis '{}' splits two dimensions", key,
                                             format_layout(layout), *axis));
    }
  }
  for (auto& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::move(layout);
      return;
    }
  }
  entries_.emplace_back(key, std::move(layout));
}

std::optional<TensorLayout> LayoutMap::find(const std::string& path) const {
  for (const auto& [key, layout] : entries_) {
    if (key == path) return layout;
  }
  std::vector<std::string> matches;
  std::optional<TensorLayout> found;
  for (const auto& [key, layout] : entries_) {
    if (std::regex_search(path, std::regex(key))) {
      matches.push_back("'" + key + "'");
      found = layout;
    }
  }
  if (matches.size() > 1) {
    throw InvalidArgumentError(fmt::format(
        "LayoutMap: path '{}' matches several keys: [{}]; make each variable path match at most one key", path,
        fmt::join(matches, ", ")));
  }
  return found;
}

}  // namespace accel::keras::distribution
