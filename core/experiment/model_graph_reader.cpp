#include "model_graph_reader.hpp"

#include "layer_shape_inference.hpp"
#include "schema_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace accel::experiment {
namespace {

// A name an entry of the graph defines: an input, or a layer at `index`.
struct Definition {
  bool is_input = false;
  std::size_t index = 0;
  SourceLocation where;
};

std::string line_of(const SourceLocation& where) { return fmt::format("line {}", where.line); }

class GraphReader {
 public:
  GraphReader(const SourceNode& graph, const ValueSpec& layer_spec, ModelConfig& model)
      : graph_(graph), layer_spec_(layer_spec), model_(model) {}

  void read() {
    ModelGraph out;
    read_inputs(out);
    read_layers(out);
    check_references(out);
    read_outputs(out);
    check_everything_used(out);
    model_.graph = std::move(out);
  }

 private:
  void define(const std::string& name, Definition definition, const std::string& what) {
    const auto [found, inserted] = definitions_.emplace(name, definition);
    if (inserted) return;
    const Definition& first = found->second;
    fail_at(definition.where,
            fmt::format("{} '{}' has the name of {} ({})", what, name,
                        first.is_input ? "an input" : "another layer", line_of(first.where)),
            "names unique among the graph's inputs and layers");
  }

  void read_inputs(ModelGraph& out) {
    for (const auto& [key, value] : graph_.find("inputs")->entries) {
      GraphInput input;
      input.name = key->text;
      input.where = key->where;
      input.shape = to_value(*value->find("shape"), ValueSpec{.form = ValueForm::kShape}).as_ints();
      if (const SourceNode* dtype = value->find("dtype")) input.dtype = dtype->text;
      define(input.name, {.is_input = true, .index = out.inputs.size(), .where = input.where}, "input");
      out.inputs.push_back(std::move(input));
    }
  }

  void read_layers(ModelGraph& out) {
    const auto& items = graph_.find("layers")->items;
    for (std::size_t i = 0; i < items.size(); ++i) {
      KerasObject layer = read_call(*items[i], layer_spec_);
      const std::string label = fmt::format("model.graph.layers[{}] ({})", i, layer.name);
      const SourceNode* arguments = items[i]->is_map() ? items[i]->entries.front().second.get() : nullptr;
      if (arguments != nullptr && !arguments->is_map()) arguments = nullptr;
      if (const Value* shape = layer.argument("input_shape"); shape != nullptr && shape->is_set()) {
        fail_at(shape->where, fmt::format("{} has input_shape, which model.graph declares in its inputs", label),
                "the shape under model.graph.inputs (input_shape belongs to model.layers)");
      }
      const SourceNode* name = arguments != nullptr ? arguments->find("name") : nullptr;
      if (name == nullptr) {
        fail_at(layer.where, fmt::format("{} has no name", label),
                "a name for every layer of model.graph, e.g. {conv2d: {name: conv1, ...}} (other layers and the "
                "outputs refer to it)");
      }
      define(name->text, {.is_input = false, .index = i, .where = name->where}, "layer");
      const SourceNode* inputs = arguments->find("inputs");
      if (inputs == nullptr) {
        fail_at(layer.where, fmt::format("{} has no inputs", graph_layer_label(layer, i)),
                takes_list_input(layer.name) ? "inputs: [a, b], the names it combines"
                                             : "inputs: NAME, the input or layer it is called on");
      }
      out.calls.push_back(read_call_inputs(*inputs, layer, graph_layer_label(layer, i)));
      if (layer.name == "reversed_embedding") check_reversed_embedding(layer, i);
      model_.layers.push_back(std::move(layer));
    }
  }

  // Its `embedding` names an embedding layer listed before it.
  void check_reversed_embedding(const KerasObject& layer, std::size_t index) const {
    const Value* embedding = layer.argument("embedding");
    const auto found = definitions_.find(embedding->as_text());
    const bool is_embedding = found != definitions_.end() && !found->second.is_input && found->second.index < index &&
                              model_.layers[found->second.index].name == "embedding";
    if (!is_embedding) {
      fail_at(embedding->where,
              fmt::format("{}: embedding '{}' is not an embedding layer listed before it", graph_layer_label(layer, index),
                          embedding->as_text()),
              "the name of an earlier embedding layer of model.graph (its table gives the logits)");
    }
  }

  GraphCall read_call_inputs(const SourceNode& inputs, const KerasObject& layer, const std::string& label) const {
    GraphCall call;
    call.list_input = takes_list_input(layer.name);
    if (inputs.is_scalar()) {
      if (call.list_input) {
        fail_at(inputs, fmt::format("{} is called on one tensor, but {} takes a list", label, layer.name),
                layer.name == "multi_head_attention" ? "inputs: [query, value] (or [query, value, key]; [x, x] attends x to itself)"
                                                     : "inputs: [a, b], the names it combines");
      }
      call.inputs.push_back({inputs.text, inputs.where});
      return call;
    }
    for (const auto& item : inputs.items) call.inputs.push_back({item->text, item->where});
    if (!call.list_input && call.inputs.size() > 1) {
      fail_at(call.inputs[1].where,
              fmt::format("{} takes one input but is called on {}", label, call.inputs.size()),
              "one name (merge layers such as add or concatenate take lists)");
    }
    return call;
  }

  // Whether following references from layer `from` reaches layer `target`;
  // `path` collects the names on the way.
  bool leads_to(std::size_t from, std::size_t target, const ModelGraph& graph, std::vector<std::string>& path,
                std::set<std::size_t>& seen) const {
    if (!seen.insert(from).second) return false;
    for (const GraphReference& reference : graph.calls[from].inputs) {
      const auto found = definitions_.find(reference.name);
      if (found == definitions_.end() || found->second.is_input) continue;
      path.push_back(reference.name);
      if (found->second.index == target || leads_to(found->second.index, target, graph, path, seen)) return true;
      path.pop_back();
    }
    return false;
  }

  std::vector<std::string> known_before(std::size_t index) const {
    std::vector<std::string> names;
    for (const auto& [name, definition] : definitions_) {
      if (definition.is_input || definition.index < index) names.push_back(name);
    }
    return names;
  }

  void check_references(const ModelGraph& graph) const {
    for (std::size_t i = 0; i < graph.calls.size(); ++i) {
      const std::string& own = model_.layers[i].argument("name")->as_text();
      const std::string label = graph_layer_label(model_.layers[i], i);
      for (const GraphReference& reference : graph.calls[i].inputs) {
        const auto found = definitions_.find(reference.name);
        if (found == definitions_.end()) {
          const std::vector<std::string> known = known_before(i);
          fail_at(reference.where,
                  fmt::format("{}: unknown input or layer '{}'{}", label, reference.name, did_you_mean(reference.name, known)),
                  "an input of model.graph or a layer listed before it: " + quoted_names(known));
        }
        const Definition& definition = found->second;
        if (definition.is_input || definition.index < i) continue;
        if (definition.index == i) {
          fail_at(reference.where, fmt::format("{} takes its own output (a cycle)", label),
                  "inputs that are model inputs or layers listed before it");
        }
        std::vector<std::string> path{reference.name};
        std::set<std::size_t> seen;
        if (leads_to(definition.index, i, graph, path, seen)) {
          std::string cycle = own;
          for (const std::string& name : path) cycle += " -> " + name;
          fail_at(reference.where, fmt::format("{} is part of a cycle: {} (each takes the next's output)", label, cycle),
                  "a graph without cycles: each layer takes inputs or layers listed before it");
        }
        fail_at(reference.where,
                fmt::format("{} takes '{}', which is listed after it ({})", label, reference.name,
                            line_of(definition.where)),
                "every layer listed after the layers it takes (as Keras calls them)");
      }
    }
  }

  void read_outputs(ModelGraph& graph) const {
    const SourceNode& outputs = *graph_.find("outputs");
    std::vector<const SourceNode*> names;
    if (outputs.is_scalar()) names.push_back(&outputs);
    for (const auto& item : outputs.items) names.push_back(item.get());
    for (const SourceNode* name : names) {
      if (!definitions_.contains(name->text)) {
        std::vector<std::string> known;
        for (const auto& entry : definitions_) known.push_back(entry.first);
        fail_at(*name, fmt::format("model.graph.outputs names '{}', which is no input or layer{}", name->text,
                                   did_you_mean(name->text, known)),
                "the name of a layer (or input) of model.graph");
      }
      graph.outputs.push_back({name->text, name->where});
    }
  }

  // Backwards from the outputs: whatever is not reached is unused.
  void check_everything_used(const ModelGraph& graph) const {
    std::set<std::string> used;
    std::vector<std::string> pending;
    for (const GraphReference& output : graph.outputs) pending.push_back(output.name);
    while (!pending.empty()) {
      const std::string name = pending.back();
      pending.pop_back();
      if (!used.insert(name).second) continue;
      const Definition& definition = definitions_.at(name);
      if (definition.is_input) continue;
      for (const GraphReference& reference : graph.calls[definition.index].inputs) pending.push_back(reference.name);
    }
    for (const GraphInput& input : graph.inputs) {
      if (!used.contains(input.name)) {
        fail_at(input.where, fmt::format("model.graph input '{}' is not used: no output depends on it", input.name),
                "every input taken by a layer that leads to an output (or remove it)");
      }
    }
    for (std::size_t i = 0; i < model_.layers.size(); ++i) {
      const Value* name = model_.layers[i].argument("name");
      if (!used.contains(name->as_text())) {
        fail_at(name->where,
                fmt::format("{} is not used: no output depends on it (Keras would drop it silently)",
                            graph_layer_label(model_.layers[i], i)),
                "its name in the inputs of a later layer or in model.graph.outputs (or remove it)");
      }
    }
  }

  const SourceNode& graph_;
  const ValueSpec& layer_spec_;
  ModelConfig& model_;
  std::map<std::string, Definition> definitions_;
};

}  // namespace

bool takes_list_input(const std::string& layer) {
  static const std::set<std::string> kListInput{"add",     "subtract", "multiply",    "average",
                                                "maximum", "minimum",  "concatenate", "multi_head_attention"};
  return kListInput.contains(layer);
}

void read_model_graph(const SourceNode& graph, const ValueSpec& layer_spec, ModelConfig& model) {
  GraphReader(graph, layer_spec, model).read();
}

void check_sequential_layer(const KerasObject& layer, std::size_t index) {
  const std::string label = fmt::format("model.layers[{}] ({})", index, layer.name);
  if (const Value* inputs = layer.argument("inputs"); inputs != nullptr && inputs->is_set()) {
    fail_at(inputs->where, label + " has inputs, which only model.graph layers have",
            "no inputs in model.layers (each layer takes the previous one's output), or the model as model.graph");
  }
  if (layer.name == "reversed_embedding") {
    fail_at(layer.where, label + " reads another layer's table, which a Sequential model cannot name",
            "the model as model.graph, with reversed_embedding: {embedding: NAME} naming its embedding layer");
  }
  if (takes_list_input(layer.name)) {
    fail_at(layer.where, fmt::format("{} takes a list of inputs, which a Sequential model cannot give", label),
            "the model as model.graph, where the layer names its inputs");
  }
}

std::optional<std::int64_t> embedding_vocabulary(const ModelConfig& model, const std::string& input) {
  if (!model.graph) return std::nullopt;
  for (std::size_t i = 0; i < model.layers.size() && i < model.graph->calls.size(); ++i) {
    if (model.layers[i].name != "embedding") continue;
    for (const GraphReference& reference : model.graph->calls[i].inputs) {
      if (reference.name == input) return model.layers[i].argument("input_dim")->as_int();
    }
  }
  return std::nullopt;
}

}  // namespace accel::experiment
