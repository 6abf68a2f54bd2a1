// model.graph (the Functional form of a model, already checked against the
// schema) -> its layers and their connections, with the rules that span its
// entries, each reported where the offending name is written: every layer has
// a name, names are unique (inputs and layers alike, as in a Keras model),
// every reference names an input or a layer listed before it (one listed
// later is reported as such, or as a cycle when it leads back), merge layers
// and attention take a list, one-input layers one name, and every input and
// layer leads to an output (Keras drops such a layer silently; here it is
// an error, as it is most likely a misspelt reference). Also the rules of
// model.layers that the schema cannot say (no `inputs`, no list-input layers).
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/schema.hpp>
#include <accel/experiment/source_node.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace accel::experiment {

// The layers that take a list of inputs (model.graph only).
bool takes_list_input(const std::string& layer);

// `graph` is the value of model.graph; `layer_spec` the schema's layer calls.
// Sets model.layers and model.graph (shapes are inferred separately).
void read_model_graph(const SourceNode& graph, const ValueSpec& layer_spec, ModelConfig& model);

// The vocabulary of a model.graph input of token ids: the input_dim of the
// embedding layer it feeds (the first, in file order), or none.
std::optional<std::int64_t> embedding_vocabulary(const ModelConfig& model, const std::string& input);

// model.layers: the arguments that belong to model.graph, and layers that
// need a list of inputs, are errors at the layer.
void check_sequential_layer(const KerasObject& layer, std::size_t index);

}  // namespace accel::experiment
