// mesh_distribution: axis names and sizes to keras.distribution's layouts.
#include "mesh_distribution.hpp"

#include <accel/keras/distribution/auto_layout.hpp>

#include <fmt/format.h>

namespace accel::experiment {

std::string mesh_text(const MeshAxes& axes) {
  std::string text;
  for (const auto& [name, size] : axes) text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, size);
  return text;
}

std::int64_t mesh_device_count(const MeshAxes& axes) {
  std::int64_t count = 1;
  for (const auto& axis : axes) count *= axis.second;
  return count;
}

std::shared_ptr<const keras::distribution::Distribution> mesh_distribution(const MeshAxes& axes,
                                                                           std::vector<std::string> devices,
                                                                           const std::vector<Variable>& weights) {
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;
  for (const auto& [name, size] : axes) {
    shape.push_back(size);
    names.push_back(name);
  }
  return keras::distribution::auto_distribution(
      keras::distribution::DeviceMesh(std::move(shape), std::move(names), std::move(devices)), weights);
}

}  // namespace accel::experiment
