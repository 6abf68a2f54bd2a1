// One layer of an experiment's model (model.layers or model.graph.layers)
// made real: the Keras layer of that snake_case name with its arguments,
// unbuilt. A layer the schema lists but accel's Keras lacks is an
// UnimplementedError naming it.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/keras/layer.hpp>

#include <functional>
#include <memory>
#include <string>

namespace accel::experiment {

// The layers made before this one, by name: a reversed_embedding reads the
// embedding it names (model.graph; the loader checked that it is one).
using EarlierLayer = std::function<std::shared_ptr<keras::Layer>(const std::string& name)>;

std::shared_ptr<keras::Layer> make_layer(const KerasObject& layer, const EarlierLayer& earlier_layer = {});

}  // namespace accel::experiment
