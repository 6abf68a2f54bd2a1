// Sequential and Functional configs, written as Keras 3.15 writes them and
// read back by replaying each layer's inbound nodes on KerasTensors (in
// passes, since a node may name a layer listed after it).
#include "model_config.hpp"

#include <accel/error.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/sequential.hpp>

#include "layer_arguments.hpp"
#include "layer_configs.hpp"

#include <map>
#include <tuple>

namespace accel::keras::saving {
namespace {

using nlohmann::json;

json input_layer_entry(const LayerShape& batch_shape, DType dtype, const std::string& name) {
  return {{"module", "keras.layers"},
          {"class_name", "InputLayer"},
          {"config",
           {{"batch_shape", shape_json(batch_shape)},
            {"dtype", std::string(dtype_name(dtype))},
            {"sparse", false},
            {"ragged", false},
            {"name", name},
            {"optional", false}}},
          {"registered_name", nullptr}};
}

// The input shape(s) of the layer's first call, as build_config holds them.
std::optional<json> build_input_shape(const Layer& layer) {
  const std::vector<std::shared_ptr<Node>> nodes = layer.inbound_nodes();
  if (nodes.empty() || nodes.front()->is_input()) return std::nullopt;
  const Node& node = *nodes.front();
  if (!node.list_input()) return shape_json(node.inputs().front().shape());
  json shapes = json::array();
  for (const KerasTensor& input : node.inputs()) shapes.push_back(shape_json(input.shape()));
  return shapes;
}

json keras_tensor_json(const KerasTensor& tensor) {
  return {{"class_name", "__keras_tensor__"},
          {"config",
           {{"shape", shape_json(tensor.shape())},
            {"dtype", std::string(dtype_name(tensor.dtype()))},
            {"keras_history", json::array({tensor.layer().name(), tensor.node()->index(), tensor.tensor_index()})}}}};
}

json layer_entry(const Layer& layer);

json sequential_config(const Sequential& model) {
  if (model.inputs().empty()) {
    throw FailedPreconditionError("saving model '" + model.name() +
                                  "': a Sequential model must be built (model.build(input_shape)) before it is saved");
  }
  const KerasTensor& input = model.inputs().front();
  json layers = json::array({input_layer_entry(input.shape(), input.dtype(), input.layer().name())});
  for (const std::shared_ptr<Layer>& layer : model.layers()) {
    if (layer->class_name() != "InputLayer") layers.push_back(layer_entry(*layer));
  }
  return {{"module", "keras"},
          {"class_name", "Sequential"},
          {"config",
           {{"name", model.name()},
            {"trainable", model.trainable()},
            {"dtype", dtype_policy_json(model.dtype_policy())},
            {"layers", layers},
            {"build_input_shape", shape_json(input.shape())}}},
          {"registered_name", nullptr},
          {"build_config", {{"input_shape", shape_json(input.shape())}}}};
}

// ["name", node, tensor] for one tensor, a list of them for several (Keras 3's form).
json tensor_references(const std::vector<KerasTensor>& tensors) {
  auto reference = [](const KerasTensor& tensor) {
    return json::array({tensor.layer().name(), tensor.node()->index(), tensor.tensor_index()});
  };
  if (tensors.size() == 1) return reference(tensors.front());
  json references = json::array();
  for (const KerasTensor& tensor : tensors) references.push_back(reference(tensor));
  return references;
}

// One call of a layer as Keras writes it: {"args": [...], "kwargs": {...}}.
// MultiHeadAttention is called as mha(query, value, key=..., attention_mask=...,
// use_causal_mask=..., return_attention_scores=...); other list layers take one list.
json node_arguments(const Layer& layer, const Node& node) {
  const std::vector<KerasTensor>& inputs = node.inputs();
  json arguments = json::array();
  json keywords = json::object();
  if (const auto* attention = dynamic_cast<const MultiHeadAttention*>(&layer)) {
    arguments.push_back(keras_tensor_json(inputs.at(0)));
    arguments.push_back(keras_tensor_json(inputs.at(1)));
    if (inputs.size() > 2) keywords["key"] = keras_tensor_json(inputs[2]);
    if (inputs.size() > 3) keywords["attention_mask"] = keras_tensor_json(inputs[3]);
    if (attention->symbolic_use_causal_mask()) keywords["use_causal_mask"] = true;
    if (attention->symbolic_return_attention_scores()) keywords["return_attention_scores"] = true;
  } else if (node.list_input()) {
    json list = json::array();
    for (const KerasTensor& tensor : inputs) list.push_back(keras_tensor_json(tensor));
    arguments.push_back(list);
  } else {
    arguments.push_back(keras_tensor_json(inputs.front()));
  }
  return {{"args", arguments}, {"kwargs", keywords}};
}

json functional_config(const Model& model) {
  json layers = json::array();
  for (const std::shared_ptr<Layer>& layer : model.layers()) {
    json entry;
    if (const auto* input = dynamic_cast<const InputLayer*>(layer.get())) {
      entry = input_layer_entry(input->batch_shape(), input->dtype(), input->name());
    } else {
      entry = layer_entry(*layer);
    }
    entry["name"] = layer->name();
    json inbound = json::array();
    for (const std::shared_ptr<Node>& node : layer->inbound_nodes()) {
      if (node->is_input()) continue;
      inbound.push_back(node_arguments(*layer, *node));
    }
    entry["inbound_nodes"] = inbound;
    layers.push_back(entry);
  }
  return {{"module", "keras.src.models.functional"},
          {"class_name", "Functional"},
          {"config",
           {{"name", model.name()},
            {"trainable", model.trainable()},
            {"layers", layers},
            {"input_layers", tensor_references(model.inputs())},
            {"output_layers", tensor_references(model.outputs())}}},
          {"registered_name", "Functional"},
          {"build_config", {{"input_shape", nullptr}}}};
}

json layer_entry(const Layer& layer) {
  if (const auto* sequential = dynamic_cast<const Sequential*>(&layer)) return sequential_config(*sequential);
  if (const auto* model = dynamic_cast<const Model*>(&layer)) return functional_config(*model);
  json entry{{"module", "keras.layers"},
             {"class_name", layer.class_name()},
             {"config", layer_config(layer)},
             {"registered_name", nullptr}};
  if (const std::optional<std::string> registered = registered_name(layer.class_name())) {
    entry["module"] = "accel.layers";
    entry["registered_name"] = *registered;
  }
  if (dynamic_cast<const MultiHeadAttention*>(&layer) != nullptr && !layer.inbound_nodes().empty()) {
    // Keras builds it with build(query_shape, value_shape, key_shape=None).
    const std::vector<KerasTensor>& inputs = layer.inbound_nodes().front()->inputs();
    json shapes{{"query_shape", shape_json(inputs.at(0).shape())}, {"value_shape", shape_json(inputs.at(1).shape())}};
    if (inputs.size() > 2) shapes["key_shape"] = shape_json(inputs[2].shape());
    entry["build_config"] = {{"shapes_dict", shapes}};
  } else if (std::optional<json> shape = build_input_shape(layer)) {
    entry["build_config"] = {{"input_shape", *shape}};
  }
  return entry;
}

// ---- reading ----

class ConfigReader {
 public:
  explicit ConfigReader(std::string source) : source_(std::move(source)) {}

  ConfigSummary check(const json& entry) {
    ConfigSummary summary;
    summary.class_name = entry.value("class_name", "");
    if (!entry.contains("config") || !entry["config"].is_object()) fail("the model has no \"config\" object");
    const json& config = entry["config"];
    summary.name = config.value("name", std::string());
    if (summary.class_name != "Sequential" && summary.class_name != "Functional" && summary.class_name != "Model") {
      fail("the model is of class '" + summary.class_name + "'; accel loads Sequential and Functional models");
    }
    for (const json& layer_entry : config.value("layers", json::array())) {
      const std::string class_name = layer_entry.value("class_name", "");
      if (class_name == "InputLayer") {
        summary.input_shapes.push_back(input_shape(layer_entry.value("config", json::object())));
      } else if (class_name == "Sequential" || class_name == "Functional") {
        (void)check(layer_entry);
      } else {
        (void)layer(layer_entry);  // constructed, never built: no weights, no tensors
      }
    }
    if (summary.class_name == "Sequential") {
      if (summary.input_shapes.empty() && config.contains("build_input_shape")) {
        summary.input_shapes.push_back(shape_of(config["build_input_shape"]));
      }
      summary.outputs = 1;
    } else {
      summary.outputs = references(config.value("output_layers", json())).size();
    }
    return summary;
  }

  std::unique_ptr<Model> model(const json& entry) {
    const std::string class_name = entry.value("class_name", "");
    if (!entry.contains("config") || !entry["config"].is_object()) fail("the model has no \"config\" object");
    if (class_name == "Sequential") return sequential(entry["config"]);
    if (class_name == "Functional" || class_name == "Model") return functional(entry["config"]);
    fail("the model is of class '" + class_name +
         "'; accel loads Sequential and Functional models (a subclassed model's Python code cannot be loaded)");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InvalidArgumentError(source_ + ": " + what); }

  std::shared_ptr<Layer> layer(const json& entry) {
    if (!entry.is_object() || !entry.contains("class_name") || !entry["class_name"].is_string()) {
      fail("a layer entry has no class_name: " + entry.dump().substr(0, 200));
    }
    const std::string class_name = entry["class_name"];
    if (class_name == "Sequential" || class_name == "Functional") return std::shared_ptr<Model>(model(entry));
    if (entry.contains("registered_name") && entry["registered_name"].is_string() &&
        entry["registered_name"] != class_name && class_name != "Functional" &&
        entry["registered_name"] != registered_name(class_name)) {
      fail("layer " + entry.value("config", json::object()).value("name", std::string("?")) + " is the custom class '" +
           entry["registered_name"].get<std::string>() +
           "' (registered in Python); accel cannot load it. It loads " + supported_layer_classes());
    }
    return layer_from_config(class_name, entry.value("config", json::object()), source_);
  }

  std::unique_ptr<Model> sequential(const json& config) {
    std::vector<std::shared_ptr<Layer>> layers;
    std::optional<LayerShape> batch_shape;
    std::string input_name;
    for (const json& entry : config.value("layers", json::array())) {
      if (entry.value("class_name", "") == "InputLayer") {
        batch_shape = input_shape(entry.value("config", json::object()));
        input_name = entry.value("config", json::object()).value("name", std::string());
        continue;
      }
      layers.push_back(layer(entry));
    }
    if (!batch_shape && config.contains("build_input_shape") && config["build_input_shape"].is_array()) {
      batch_shape = shape_of(config["build_input_shape"]);
    }
    auto model = std::make_unique<Sequential>(std::move(layers), config.value("name", std::string()));
    if (!input_name.empty()) model->set_input_name(input_name);  // kept, so that the file saves back as it was
    if (config.contains("dtype")) {
      try {
        if (const std::optional<DTypePolicy> policy = read_dtype_policy(config["dtype"])) model->set_dtype_policy(*policy);
      } catch (const InvalidArgumentError& error) {
        fail("Sequential model '" + model->name() + "': " + error.what());
      }
    }
    if (!batch_shape) fail("Sequential model '" + model->name() + "' has no InputLayer or build_input_shape");
    model->build(*batch_shape);
    return model;
  }

  LayerShape shape_of(const json& dims) {
    LayerShape shape;
    for (const json& dim : dims) {
      if (dim.is_null()) {
        shape.push_back(kUnknownDim);
      } else if (dim.is_number_integer()) {
        shape.push_back(dim.get<int64_t>());
      } else {
        fail("bad shape " + dims.dump());
      }
    }
    return shape;
  }

  LayerShape input_shape(const json& config) {
    const json& shape = config.contains("batch_shape") ? config["batch_shape"] : config.value("batch_input_shape", json());
    if (!shape.is_array() || shape.empty()) fail("InputLayer " + config.value("name", std::string("?")) + " has no batch_shape");
    if (config.value("sparse", false) || config.value("ragged", false)) {
      fail("InputLayer " + config.value("name", std::string("?")) + " is sparse or ragged; accel's tensors are dense");
    }
    return shape_of(shape);
  }

  // Keras 3 writes ["name", node, tensor] for one, a list of those for several.
  std::vector<std::tuple<std::string, int64_t, int64_t>> references(const json& value) {
    std::vector<std::tuple<std::string, int64_t, int64_t>> result;
    auto one = [&](const json& item) {
      if (!item.is_array() || item.size() != 3 || !item[0].is_string()) fail("bad layer reference " + item.dump());
      result.emplace_back(item[0].get<std::string>(), item[1].get<int64_t>(), item[2].get<int64_t>());
    };
    if (value.is_array() && !value.empty() && value[0].is_string()) {
      one(value);
    } else if (value.is_array()) {
      for (const json& item : value) one(item);
    } else {
      fail("bad input_layers/output_layers " + value.dump());
    }
    return result;
  }

  std::unique_ptr<Model> functional(const json& config) {
    using Key = std::tuple<std::string, int64_t, int64_t>;
    std::map<Key, KerasTensor> tensors;
    std::map<std::string, std::shared_ptr<Layer>> layers;
    std::map<std::string, int64_t> calls_made;
    struct Pending {
      std::string layer_name;
      json node;
    };
    std::vector<Pending> pending;
    for (const json& entry : config.value("layers", json::array())) {
      const std::string name = entry.value("name", entry.value("config", json::object()).value("name", std::string()));
      if (entry.value("class_name", "") == "InputLayer") {
        const json layer_config = entry.value("config", json::object());
        LayerShape batch_shape = input_shape(layer_config);
        InputOptions options{.name = name, .dtype = parse_dtype(layer_config.value("dtype", std::string("float32")))};
        if (batch_shape.front() != kUnknownDim) options.batch_size = batch_shape.front();
        tensors[{name, 0, 0}] = Input(LayerShape(batch_shape.begin() + 1, batch_shape.end()), options);
        continue;
      }
      layers[name] = layer(entry);
      for (const json& node : entry.value("inbound_nodes", json::array())) pending.push_back({name, node});
    }
    // Replay the calls; a call whose inputs do not exist yet waits for the next pass.
    while (!pending.empty()) {
      std::vector<Pending> waiting;
      for (Pending& call : pending) {
        Layer& layer = *layers.at(call.layer_name);
        std::optional<CallArguments> arguments = resolve_arguments(call, layer, tensors);
        if (!arguments) {
          waiting.push_back(std::move(call));
          continue;
        }
        const int64_t node_index = calls_made[call.layer_name]++;
        const std::vector<KerasTensor> outputs = replay(layer, *arguments);
        for (size_t index = 0; index < outputs.size(); ++index) {
          tensors[{call.layer_name, node_index, static_cast<int64_t>(index)}] = outputs[index];
        }
      }
      if (waiting.size() == pending.size()) {
        fail("layer '" + waiting.front().layer_name + "' is called on tensors no layer produces: " +
             waiting.front().node.dump().substr(0, 300));
      }
      pending = std::move(waiting);
    }
    // A flat ["name", 0, 0] is one tensor (the model takes and returns a tensor); a list is a list.
    auto collect = [&](const char* key) -> KerasTensors {
      const json value = config.value(key, json());
      std::vector<KerasTensor> result;
      for (const Key& reference : references(value)) {
        const auto found = tensors.find(reference);
        if (found == tensors.end()) fail(std::string(key) + " names a tensor no layer produces: " + std::get<0>(reference));
        result.push_back(found->second);
      }
      if (value.is_array() && !value.empty() && value[0].is_string()) return KerasTensors(result.front());
      return KerasTensors(std::move(result));
    };
    return std::make_unique<Model>(collect("input_layers"), collect("output_layers"), config.value("name", std::string()));
  }

  // One recorded call: its tensors and the keyword arguments accel replays.
  struct CallArguments {
    std::vector<KerasTensor> positional;
    bool list_input = false;  // the single positional argument is a list
    std::map<std::string, KerasTensor> tensor_keywords;
    bool use_causal_mask = false;
    bool return_attention_scores = false;
  };

  std::vector<KerasTensor> replay(Layer& layer, const CallArguments& call) {
    if (auto* attention = dynamic_cast<MultiHeadAttention*>(&layer)) {
      auto keyword = [&](const char* name) {
        const auto found = call.tensor_keywords.find(name);
        return found == call.tensor_keywords.end() ? KerasTensor() : found->second;
      };
      const std::vector<KerasTensor>& list = call.positional;
      const KerasTensor query = list.size() > 0 ? list[0] : keyword("query");
      const KerasTensor value = list.size() > 1 ? list[1] : keyword("value");
      const AttentionArguments<KerasTensor> arguments{.key = list.size() > 2 ? list[2] : keyword("key"),
                                                      .attention_mask = keyword("attention_mask"),
                                                      .use_causal_mask = call.use_causal_mask};
      if (!query.defined() || !value.defined()) {
        fail("MultiHeadAttention '" + layer.name() + "' is called without a query and a value");
      }
      if (call.return_attention_scores) return attention->call_with_attention_scores(query, value, arguments);
      return {(*attention)(query, value, arguments)};
    }
    if (!call.tensor_keywords.empty() || call.use_causal_mask || call.return_attention_scores ||
        (call.positional.size() > 1 && !call.list_input)) {
      fail("layer '" + layer.name() + "' (" + layer.class_name() +
           ") is called with more than one argument; accel replays that for MultiHeadAttention only");
    }
    if (call.list_input) return layer.call_outputs(call.positional);
    return {layer(call.positional.front())};
  }

  // The node's arguments, or nullopt when one of its tensors is not made yet.
  template <typename Tensors>
  std::optional<CallArguments> resolve_arguments(const auto& call, const Layer& layer, const Tensors& tensors) {
    const json& node = call.node;
    if (!node.is_object() || !node.contains("args") || !node["args"].is_array() || node["args"].empty()) {
      fail("layer '" + call.layer_name + "': an inbound node without positional arguments: " + node.dump().substr(0, 300));
    }
    bool missing = false;
    auto tensor = [&](const json& item) -> KerasTensor {
      const json history = item.is_object() && item.value("class_name", "") == "__keras_tensor__"
                               ? item.value("config", json::object()).value("keras_history", json())
                               : json();
      if (!history.is_array() || history.size() != 3 || !history[0].is_string() || !history[1].is_number_integer() ||
          !history[2].is_number_integer()) {
        fail("layer '" + call.layer_name + "': an argument is not a tensor of the model: " + item.dump().substr(0, 300));
      }
      const auto found = tensors.find({history[0].get<std::string>(), history[1].get<int64_t>(), history[2].get<int64_t>()});
      if (found == tensors.end()) {
        missing = true;
        return KerasTensor();
      }
      return found->second;
    };
    CallArguments arguments;
    const json& positional = node["args"];
    arguments.list_input = positional.size() == 1 && positional[0].is_array();
    const json items = arguments.list_input ? positional[0] : positional;
    for (const json& item : items) arguments.positional.push_back(tensor(item));
    const bool attention = dynamic_cast<const MultiHeadAttention*>(&layer) != nullptr;
    const json kwargs = node.value("kwargs", json::object());
    if (!kwargs.is_object()) fail("layer '" + call.layer_name + "': kwargs is not an object: " + kwargs.dump());
    for (const auto& [key, value] : kwargs.items()) {
      if (value.is_null() || key == "training") continue;
      if (attention && (key == "query" || key == "value" || key == "key" || key == "attention_mask")) {
        arguments.tensor_keywords[key] = tensor(value);
      } else if (attention && value.is_boolean() && key == "use_causal_mask") {
        arguments.use_causal_mask = value == true;
      } else if (attention && value.is_boolean() && key == "return_attention_scores") {
        arguments.return_attention_scores = value == true;
      } else if (value == false && (key == "use_causal_mask" || key == "return_attention_scores")) {
        // Keras's default, written out
      } else {
        fail("layer '" + call.layer_name + "' is called with keyword argument '" + key + "' = " +
             value.dump().substr(0, 200) + ", which accel's reader does not replay");
      }
    }
    if (missing) return std::nullopt;
    return arguments;
  }

  std::string source_;
};

}  // namespace

json model_config(const Model& model) {
  if (const auto* sequential = dynamic_cast<const Sequential*>(&model)) return sequential_config(*sequential);
  if (model.class_name() != "Functional") {
    throw UnimplementedError("saving model '" + model.name() + "' (" + model.class_name() +
                             "): a subclassed model has no config; save its weights (.weights.h5) instead");
  }
  return functional_config(model);
}

namespace {

// Every fault of a config names the file: a JSON value of the wrong type
// (nlohmann's exceptions) and errors raised below without the file (a layer's
// constructor rejecting an argument) get `source` in front.
template <typename Read>
auto naming_the_source(const std::string& source, Read&& read) {
  try {
    return read();
  } catch (const json::exception& error) {
    throw InvalidArgumentError(source + ": malformed config: " + error.what());
  } catch (const Error& error) {
    if (std::string_view(error.what()).starts_with(source)) throw;
    throw_error(error.code(), source + ": " + error.what());
  }
}

}  // namespace

std::unique_ptr<Model> model_from_config(const json& config, const std::string& source) {
  return naming_the_source(source, [&] { return ConfigReader(source).model(config); });
}

ConfigSummary check_model_config(const json& config, const std::string& source) {
  return naming_the_source(source, [&] { return ConfigReader(source).check(config); });
}

}  // namespace accel::keras::saving
