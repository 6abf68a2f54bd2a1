// keras.distribution's layouts in the graph layer's terms: a DeviceMesh as
// the SPMD pass's MeshShape, a TensorLayout (axis names) as a ValueSharding
// (axis indices), for the partitioning of a compiled step (docs/sharding.md).
#pragma once

#include "graph/sharding.hpp"

#include <accel/keras/distribution/device_mesh.hpp>

namespace accel::keras::distribution {

graph::MeshShape mesh_shape(const DeviceMesh& mesh);

// Throws InvalidArgumentError when `layout` names an axis `mesh` lacks.
graph::ValueSharding to_sharding(const TensorLayout& layout, const DeviceMesh& mesh);

}  // namespace accel::keras::distribution
