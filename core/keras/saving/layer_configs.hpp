// Internal: the Keras 3 configs (config.json's per-layer "config" objects) of
// the layers accel saves to and loads from .keras files, both directions in
// one table so that what is written is exactly what is read back.
#pragma once

#include <accel/keras/layer.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace accel::keras::saving {

// The layer's config as Keras 3 writes it. A layer class the table does not
// have is UnimplementedError naming the layer and the classes it has.
nlohmann::json layer_config(const Layer& layer);

// A new layer from a Keras 3 class name and config (weights not built).
// Unknown classes and arguments are InvalidArgumentError naming `source` and the layer.
std::shared_ptr<Layer> layer_from_config(const std::string& class_name, const nlohmann::json& config,
                                         const std::string& source);

// The registered name of a layer class that is accel's own rather than
// Keras's ("accel>PositionEmbedding", as Keras writes a custom class
// registered with package "accel"); nullopt for Keras's classes.
std::optional<std::string> registered_name(const std::string& class_name);

// "Activation, Add, ...": the classes of the table, for messages and docs.
std::string supported_layer_classes();

// Pieces every Keras 3 config writes: a layer's DTypePolicy object
// ({"module": "keras", "class_name": "DTypePolicy", "config": {"name": ...}}),
// and a shape with null for the axes of any size ([null, 28, 28, 1]).
nlohmann::json dtype_policy_json(const DTypePolicy& policy);
nlohmann::json shape_json(const LayerShape& shape);

}  // namespace accel::keras::saving
