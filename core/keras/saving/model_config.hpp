// Internal: a model's architecture as the config.json of a Keras 3 .keras
// file: Sequential ({"class_name": "Sequential", "config": {"layers": [...]}},
// its InputLayer first) and Functional (each layer with its inbound_nodes,
// whose arguments name the producing layer, node and tensor as
// keras_history), nested models included. Weights are not part of it.
#pragma once

#include <accel/keras/model.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace accel::keras::saving {

// The model's config.json object. The model must be built.
nlohmann::json model_config(const Model& model);

// The model a config.json object describes, built (its weights initialized
// by the configured initializers). Faults are InvalidArgumentError naming `source`.
std::unique_ptr<Model> model_from_config(const nlohmann::json& config, const std::string& source);

// The model's class, name, input shapes and output count, every layer's
// config checked by constructing (not building) it: no tensor is made.
struct ConfigSummary {
  std::string class_name;
  std::string name;
  std::vector<LayerShape> input_shapes;
  size_t outputs = 0;
};
ConfigSummary check_model_config(const nlohmann::json& config, const std::string& source);

}  // namespace accel::keras::saving
