#include <accel/keras/distribution/device_mesh.hpp>

#include <accel/config.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

namespace accel::keras::distribution {
namespace {

// The first `count` logical devices of the first type that has that many.
std::vector<std::string> default_devices(int64_t count) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> by_type;
  for (const config::LogicalDevice& device : config::list_logical_devices()) {
    if (by_type.find(device.device_type) == by_type.end()) order.push_back(device.device_type);
    by_type[device.device_type].push_back(device.name);
  }
  std::vector<std::string> available;
  for (const std::string& type : order) {
    std::vector<std::string>& devices = by_type[type];
    if (static_cast<int64_t>(devices.size()) >= count) {
      devices.resize(static_cast<size_t>(count));
      return devices;
    }
    available.push_back(fmt::format("{} {}", devices.size(), type));
  }
  throw InvalidArgumentError(fmt::format(
      "DeviceMesh: a mesh of {} devices, but this process has {}; give the devices, or split one into logical "
      "devices (config::set_logical_device_configuration)",
      count, available.empty() ? std::string("none") : fmt::format("{}", fmt::join(available, ", "))));
}

}  // namespace

DeviceMesh::DeviceMesh(std::vector<int64_t> shape, std::vector<std::string> axis_names, std::vector<std::string> devices)
    : shape_(std::move(shape)), axis_names_(std::move(axis_names)) {
  if (shape_.empty() || shape_.size() != axis_names_.size()) {
    throw InvalidArgumentError(fmt::format("DeviceMesh: shape [{}] and axis_names [{}] must have one length (at least 1)",
                                           fmt::join(shape_, ", "), fmt::join(axis_names_, ", ")));
  }
  std::set<std::string> seen;
  int64_t count = 1;
  for (size_t axis = 0; axis < shape_.size(); ++axis) {
    if (shape_[axis] < 1) {
      throw InvalidArgumentError(fmt::format("DeviceMesh: axis '{}' has size {}; expected at least 1", axis_names_[axis],
                                             shape_[axis]));
    }
    if (axis_names_[axis].empty() || !seen.insert(axis_names_[axis]).second) {
      throw InvalidArgumentError(fmt::format("DeviceMesh: axis names must be distinct and not empty; got [{}]",
                                             fmt::join(axis_names_, ", ")));
    }
    count *= shape_[axis];
  }
  if (devices.empty()) {
    devices_ = default_devices(count);
  } else if (static_cast<int64_t>(devices.size()) != count) {
    throw InvalidArgumentError(fmt::format("DeviceMesh: shape [{}] holds {} devices; {} given", fmt::join(shape_, ", "),
                                           count, devices.size()));
  } else {
    devices_ = std::move(devices);
  }
}

int32_t DeviceMesh::axis_index(std::string_view name) const noexcept {
  for (size_t axis = 0; axis < axis_names_.size(); ++axis) {
    if (axis_names_[axis] == name) return static_cast<int32_t>(axis);
  }
  return -1;
}

int64_t DeviceMesh::axis_size(std::string_view name) const {
  const int32_t axis = axis_index(name);
  if (axis < 0) {
    throw InvalidArgumentError(fmt::format("DeviceMesh: no axis '{}'; the mesh's axes are [{}]", name,
                                           fmt::join(axis_names_, ", ")));
  }
  return shape_[static_cast<size_t>(axis)];
}

std::string format_layout(const TensorLayout& layout) {
  std::vector<std::string> parts;
  for (const std::optional<std::string>& axis : layout.axes) parts.push_back(axis ? "'" + *axis + "'" : "None");
  return fmt::format("({}{})", fmt::join(parts, ", "), parts.size() == 1 ? "," : "");
}

}  // namespace accel::keras::distribution
