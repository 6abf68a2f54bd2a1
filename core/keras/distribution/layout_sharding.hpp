// keras.distribution's layouts in the graph layer's terms: a DeviceMesh as
// the SPMD pass's MeshShape, a TensorLayout (axis names) as a ValueSharding
// (axis indices), for the partitioning of a compiled step (docs/sharding.md).
#pragma once

#include "graph/sharding.hpp"

#include <accel/autodiff/variable.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/optimizers/optimizer.hpp>

#include <map>
#include <string>
#include <vector>

namespace accel::keras::distribution {

graph::MeshShape mesh_shape(const DeviceMesh& mesh);

// Throws InvalidArgumentError when `layout` names an axis `mesh` lacks.
graph::ValueSharding to_sharding(const TensorLayout& layout, const DeviceMesh& mesh);

// Keras 3's variable path: the variable's name without TensorFlow's ":0"
// ("dense/kernel"), what a LayoutMap matches.
std::string variable_path(const std::string& variable_name);

// What the SPMD pass's capture callback looks up, by the storage of each
// value: the sharding of every variable of `weights` under `distribution`,
// and of every slot of `optimizer` ("Adam/dense/kernel/m:0") its variable's.
// No optimizer: the variables only.
using ShardingsByStorage = std::map<const void*, graph::ValueSharding>;
ShardingsByStorage variable_shardings(const Distribution& distribution, const std::vector<Variable>& weights,
                                      const Optimizer* optimizer = nullptr);

}  // namespace accel::keras::distribution
