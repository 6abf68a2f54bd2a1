// One layer of an experiment's model (model.layers or model.graph.layers)
// made real: the Keras layer of that snake_case name with its arguments,
// unbuilt. A layer the schema lists but accel's Keras lacks is an
// UnimplementedError naming it.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/keras/layer.hpp>

#include <memory>

namespace accel::experiment {

std::shared_ptr<keras::Layer> make_layer(const KerasObject& layer);

}  // namespace accel::experiment
