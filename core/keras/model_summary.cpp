// Model::summary: Keras 2.13+'s print_summary. A Sequential model, a
// subclassed one, and a Functional model whose graph is a plain chain get the
// 65-column table (Layer, Output Shape, Param #); any other Functional model
// the 98-column one with "Connected to" (every input of the layer's calls in
// this model, as 'layer[node][tensor]').
#include <accel/error.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/model.hpp>

#include "functional_graph.hpp"

#include <algorithm>
#include <cstdio>

namespace accel::keras {
namespace {

// Each field is cut to its column (less two spaces of separation and one of
// alignment, except the last column), overflow wrapped onto further lines.
void print_row(std::ostream& out, std::vector<std::string> fields, const std::vector<size_t>& positions) {
  auto anything_left = [&] {
    return std::any_of(fields.begin(), fields.end(), [](const std::string& field) { return !field.empty(); });
  };
  while (anything_left()) {
    std::string line;
    for (size_t column = 0; column < fields.size(); ++column) {
      const bool last = column + 1 == positions.size();
      const size_t start = column == 0 ? 0 : positions[column - 1];
      const size_t space = last ? 0 : 2;
      size_t cutoff = positions[column] - start - space - (last ? 0 : 1);
      std::string fit = fields[column].substr(0, cutoff);
      // Keras breaks after the end of a tuple/list/dict/string in a long field.
      size_t best = std::string::npos;
      for (const char* boundary : {"),", "},", "],", "',"}) {
        const size_t found = fit.find(boundary);
        if (found != std::string::npos) best = std::min(best, found + 2);
      }
      if (best != std::string::npos) {
        cutoff = best;
        fit = fit.substr(0, cutoff);
      }
      if (column == 0) line += " ";
      line += fit;
      line += std::string(space, ' ');
      fields[column] = fields[column].size() > cutoff ? fields[column].substr(cutoff) : "";
      if (line.size() < positions[column]) line += std::string(positions[column] - line.size(), ' ');
    }
    out << line << "\n";
  }
}

// Keras's readable_memory_size: divide by 1024 until below it, two decimals.
std::string readable_memory_size(double bytes) {
  const char* units[] = {"Byte", "KB", "MB", "GB", "TB", "PB"};
  for (const char* unit : units) {
    if (bytes / 1024.0 < 1.0) {
      char text[64];
      std::snprintf(text, sizeof(text), "%.2f %s", bytes, unit);
      return text;
    }
    bytes /= 1024.0;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f PB", bytes);
  return text;
}

int64_t count(const std::vector<Variable>& weights) {
  int64_t total = 0;
  for (const Variable& weight : weights) total += weight.shape().element_count();
  return total;
}

double bytes_of(const std::vector<Variable>& weights) {
  double total = 0;
  for (const Variable& weight : weights) {
    total += static_cast<double>(weight.shape().element_count()) * static_cast<double>(dtype_size(weight.dtype()));
  }
  return total;
}

// A node's output_shapes as Keras prints them: an InputLayer's as a list of
// one ("[(None, 28, 28, 1)]"), several outputs as a list, one as its tuple.
std::string format_node_shapes(const Node& node) {
  const std::vector<LayerShape>& shapes = node.output_shapes();
  if (shapes.size() == 1 && !node.is_input()) return format_layer_shape(shapes.front());
  std::string text = "[";
  for (size_t index = 0; index < shapes.size(); ++index) {
    if (index > 0) text += ", ";
    text += format_layer_shape(shapes[index]);
  }
  return text + "]";
}

// Keras's layer.output_shape: the same over all the layer's calls, or "multiple".
std::string summary_output_shape(const Layer& layer) {
  const std::vector<std::shared_ptr<Node>> nodes = layer.inbound_nodes();
  if (nodes.empty()) {
    if (!layer.built()) return "?";
    return layer.output_shapes().size() == 1 ? format_layer_shape(layer.output_shape()) : "multiple";
  }
  const std::string first = format_node_shapes(*nodes.front());
  for (const auto& node : nodes) {
    if (format_node_shapes(*node) != first) return "multiple";
  }
  return first;
}

// Keras's sequential_like test: one node per depth, each with at most one
// input, and no layer called twice in the model.
bool is_chain(const detail::FunctionalGraph& graph) {
  for (const auto& level : graph.nodes_by_depth()) {
    if (level.size() > 1 || (level.size() == 1 && level.front()->inputs().size() > 1)) return false;
  }
  for (const auto& layer : graph.layers()) {
    int calls_in_model = 0;
    for (const auto& node : layer->inbound_nodes()) calls_in_model += graph.contains(*node) ? 1 : 0;
    if (calls_in_model > 1) return false;
  }
  return true;
}

// "['input_1[0][0]', 'dense[1][0]']": Python's str of the list of connections.
std::string connections_of(const Layer& layer, const detail::FunctionalGraph& graph) {
  std::string text = "[";
  bool first = true;
  for (const auto& node : layer.inbound_nodes()) {
    if (!graph.contains(*node)) continue;
    for (const KerasTensor& input : node->inputs()) {
      if (!first) text += ", ";
      first = false;
      text += "'" + input.layer().name() + "[" + std::to_string(input.node()->index()) + "][" +
              std::to_string(input.tensor_index()) + "]'";
    }
  }
  return text + "]";
}

}  // namespace

void Model::summary(std::ostream& out) const {
  if (!built()) {
    throw FailedPreconditionError(
        class_name() + " '" + name() + "' is not built: call it on data or build(input_shape) first, "
        "as Keras requires before summary()");
  }
  const bool with_connections = class_name() != "Sequential" && graph_ && !is_chain(*graph_);
  const size_t line_length = with_connections ? 98 : 65;
  // int(line_length * p) for Keras's default positions.
  const std::vector<size_t> positions =
      with_connections ? std::vector<size_t>{29, 58, 68, 98} : std::vector<size_t>{29, 55, 65};
  std::vector<std::string> header{"Layer (type)", "Output Shape", "Param #"};
  if (with_connections) header.push_back("Connected to");

  out << "Model: \"" << name() << "\"\n";
  out << std::string(line_length, '_') << "\n";
  print_row(out, header, positions);
  out << std::string(line_length, '=') << "\n";
  for (const auto& layer : layers()) {
    std::vector<std::string> fields{layer->name() + " (" + layer->class_name() + ")", summary_output_shape(*layer),
                                    layer->built() ? std::to_string(layer->count_params()) : "0 (unused)"};
    if (with_connections) fields.push_back(connections_of(*layer, *graph_));
    print_row(out, fields, positions);
    out << std::string(line_length, ' ') << "\n";
  }
  out << std::string(line_length, '=') << "\n";
  const std::vector<Variable> trainable = trainable_weights();
  const std::vector<Variable> frozen = non_trainable_weights();
  out << "Total params: " << count(trainable) + count(frozen) << " ("
      << readable_memory_size(bytes_of(trainable) + bytes_of(frozen)) << ")\n";
  out << "Trainable params: " << count(trainable) << " (" << readable_memory_size(bytes_of(trainable))
      << ")\n";
  out << "Non-trainable params: " << count(frozen) << " (" << readable_memory_size(bytes_of(frozen))
      << ")\n";
  out << std::string(line_length, '_') << "\n";
}

}  // namespace accel::keras
