// A run's or a pod estimate's device mesh, given as axis names and sizes
// (`distribution.mesh`, `--mesh`), made into keras.distribution's layouts
// (keras/distribution/auto_layout.hpp) over named devices.
#pragma once

#include <accel/autodiff/variable.hpp>
#include <accel/keras/distribution/distribution.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace accel::experiment {

using MeshAxes = std::vector<std::pair<std::string, std::int64_t>>;

// "fsdp=2,tensor=2".
std::string mesh_text(const MeshAxes& axes);

// The product of the axes' sizes.
std::int64_t mesh_device_count(const MeshAxes& axes);

// A ModelParallel over `devices` (row-major over the axes, as many as they
// hold) with auto_distribution's layouts of `weights`.
std::shared_ptr<const keras::distribution::Distribution> mesh_distribution(const MeshAxes& axes,
                                                                           std::vector<std::string> devices,
                                                                           const std::vector<Variable>& weights);

}  // namespace accel::experiment
