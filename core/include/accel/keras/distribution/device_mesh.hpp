// DeviceMesh and TensorLayout (keras.distribution): devices arranged in a
// grid with named axes, and the layout of one tensor over that grid (which
// mesh axis, if any, splits each of its dimensions). Every layout of a
// sharded model refers to one mesh; docs/sharding.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::keras::distribution {

class DeviceMesh {
 public:
  // `shape` and `axis_names` of one length, names distinct, sizes positive;
  // `devices` (device names, row-major over the shape) as many as the
  // shape's product. Without devices: the first that many logical devices
  // of the first device type that has enough (list_logical_devices order).
  // Throws InvalidArgumentError naming what does not fit.
  DeviceMesh(std::vector<int64_t> shape, std::vector<std::string> axis_names, std::vector<std::string> devices = {});

  const std::vector<int64_t>& shape() const noexcept { return shape_; }
  const std::vector<std::string>& axis_names() const noexcept { return axis_names_; }
  const std::vector<std::string>& devices() const noexcept { return devices_; }
  int64_t device_count() const noexcept { return static_cast<int64_t>(devices_.size()); }
  // The axis called `name`, or -1.
  int32_t axis_index(std::string_view name) const noexcept;
  // The size of axis `name`; throws InvalidArgumentError naming the mesh's axes.
  int64_t axis_size(std::string_view name) const;

 private:
  std::vector<int64_t> shape_;
  std::vector<std::string> axis_names_;
  std::vector<std::string> devices_;
};

// keras.distribution.TensorLayout: per dimension, the mesh axis that splits
// it, or none (whole on every device).
struct TensorLayout {
  std::vector<std::optional<std::string>> axes;

  // Every dimension whole.
  static TensorLayout replicated(int32_t rank) { return TensorLayout{std::vector<std::optional<std::string>>(static_cast<size_t>(rank))}; }
  bool operator==(const TensorLayout&) const = default;
};

// "('batch', None)", as Python prints the axes tuple.
std::string format_layout(const TensorLayout& layout);

}  // namespace accel::keras::distribution
