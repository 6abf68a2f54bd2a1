// Keras output shapes of a model's layers, Sequential (model.layers) or
// Functional (model.graph), so a layer whose input does not fit is reported
// where it is written ("conv2d needs a rank-4 input but gets [None, 784]",
// "add: inputs [None, 28, 28, 32] and [None, 14, 14, 64] do not broadcast").
// Shapes carry the batch axis first as -1 (None). The rules are Keras 2's
// compute_output_shape for each layer the schema lists; a test builds the
// same layers in accel's Keras and compares.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/source_node.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::experiment {

using Shape = std::vector<std::int64_t>;

std::string shape_text(const Shape& shape);  // "[None, 28, 28, 1]"

// One input of a layer call: its shape and where it is named (the reference
// in model.graph; the layer itself in model.layers, which names no inputs).
struct LayerInput {
  Shape shape;
  SourceLocation where;
};

// The output shape of `layer` called on `inputs` (one tensor, or the list of
// a merge layer or multi_head_attention). `label` names the layer in
// messages: "model.layers[2] (conv2d)". A reversed_embedding needs
// `reversed`, the embedding layer whose table it reads. Throws ExperimentError.
Shape infer_layer_output_shape(const KerasObject& layer, const std::string& label, const std::vector<LayerInput>& inputs,
                               const KerasObject* reversed = nullptr);

// model.layers: `example_shape` is one example without the batch axis.
// Returns the output shape of every layer; throws at the first layer that
// cannot take its input.
std::vector<Shape> infer_layer_output_shapes(const std::vector<KerasObject>& layers, const Shape& example_shape);

// model.graph (already checked for names, order and cycles): the output
// shape of every layer, from the inputs' declared shapes.
std::vector<Shape> infer_graph_output_shapes(const std::vector<KerasObject>& layers, const ModelGraph& graph);

// "model.graph.layers[3] (conv2d 'c1')" / "model.layers[3] (conv2d)".
std::string graph_layer_label(const KerasObject& layer, std::size_t index);

}  // namespace accel::experiment
