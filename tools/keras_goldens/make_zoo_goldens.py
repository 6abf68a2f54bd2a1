#!/usr/bin/env python3
"""Writes the model zoo's goldens from zoo_models.py:

    tests/keras/golden/zoo_parameter_counts.txt      one line per configuration:
                                                     `name total trainable non_trainable`
    tests/keras/golden/zoo_<configuration>_layers.txt  per layer (all but ResNet50):
                                                     `name class output_shape params inbound forward_macs`

    CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 \\
        bench/.venv-tensorflow/bin/python tools/keras_goldens/make_zoo_goldens.py

The layer rows come in tf.keras 2's `model.layers` order, which accel's
Functional models reproduce (core/keras/functional_graph.cpp): layers by
decreasing depth from the outputs, within one depth by first visit in a
depth-first walk from the outputs (Keras 2's _map_graph_network,
reimplemented below on the Keras 3 graph; Keras 3's own `model.layers` order
is a different topological order). Columns:

    name          the layer's name
    class         its Keras class name
    output_shape  e.g. (None,28,28,32), no spaces
    params        count_params(): trainable and non-trainable weights
    inbound       the layers whose outputs it is called on, in call order,
                  comma-separated ("-" for the InputLayer); a layer called as
                  mha(y, y) lists y twice
    forward_macs  multiply-accumulates of one sample's forward pass: Conv2D
                  out_h*out_w*filters*kh*kw*in/groups, Dense out_elements*in,
                  MultiHeadAttention its four projections plus the two
                  attention einsums; 0 for the rest (elementwise, pooling,
                  normalization, embedding lookups are not counted)

A training step costs about 3 forward passes (forward, gradients for the
inputs, gradients for the weights), so training FLOPs per sample ~=
3 * 2 * sum(forward_macs); the file header states both.
"""
import os
import sys

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_models  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN_DIR = os.path.join(REPO, "tests", "keras", "golden")
NO_LAYER_TABLE = {"resnet50_224x224x3_1000", "resnet50_32x32x3_10"}


def node_of(tensor):
    operation, node_index, _ = tensor._keras_history
    return operation, operation._inbound_nodes[node_index]


def keras2_layer_order(model):
    """tf.keras 2.15's Functional._map_graph_network order of model.layers."""
    finished, in_progress = set(), set()
    nodes_in_decreasing_depth = []  # (layer, node), inputs first
    layer_indices = {}

    def visit(tensor):  # _build_map_helper
        layer, node = node_of(tensor)
        if id(node) in finished:
            return
        if id(node) in in_progress:
            raise ValueError(f"cycle at {layer.name}")
        layer_indices.setdefault(id(layer), len(layer_indices))
        in_progress.add(id(node))
        if not node.is_input:
            for parent in node.input_tensors:
                visit(parent)
        finished.add(id(node))
        in_progress.remove(id(node))
        nodes_in_decreasing_depth.append((layer, node))

    for output in model.outputs:
        visit(output)
    node_depths, layer_depths, layers_by_id = {}, {}, {}
    for layer, node in reversed(nodes_in_decreasing_depth):
        depth = node_depths.setdefault(id(node), 0)
        depth = max(depth, layer_depths.get(id(layer), 0))
        layer_depths[id(layer)] = depth
        layers_by_id[id(layer)] = layer
        node_depths[id(node)] = depth
        for parent in node.input_tensors if not node.is_input else []:
            _, parent_node = node_of(parent)
            node_depths[id(parent_node)] = max(depth + 1, node_depths.get(id(parent_node), 0))
    for tensor in model.inputs:  # an input that reaches no output
        layer, _ = node_of(tensor)
        if id(layer) not in layer_depths:
            layer_depths[id(layer)] = 0
            layer_indices[id(layer)] = -1
            layers_by_id[id(layer)] = layer
    ordered = []
    for depth in sorted(set(layer_depths.values()), reverse=True):
        at_depth = [key for key, d in layer_depths.items() if d == depth]
        at_depth.sort(key=lambda key: layer_indices[key])
        ordered.extend(layers_by_id[key] for key in at_depth)
    return ordered


def shape_text(shape):
    return "(" + ",".join("None" if d is None else str(d) for d in shape) + ")"


def forward_macs(layer, node):
    """Multiply-accumulates of one sample's forward pass through `layer` at `node`."""
    inputs = [tuple(t.shape) for t in node.input_tensors]
    output = tuple(node.output_tensors[0].shape)
    if isinstance(layer, layers.DepthwiseConv2D):
        kh, kw = layer.kernel_size
        return int(np.prod(output[1:])) * kh * kw
    if isinstance(layer, layers.Conv2D):  # Conv2DTranspose is not in the zoo
        kh, kw = layer.kernel_size
        return int(np.prod(output[1:])) * kh * kw * inputs[0][-1] // layer.groups
    if isinstance(layer, layers.Dense):
        return int(np.prod(output[1:])) * inputs[0][-1]
    if isinstance(layer, layers.MultiHeadAttention):
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        t, s = query[1], value[1]
        heads, key_dim = layer.num_heads, layer.key_dim
        value_dim = layer.value_dim or key_dim
        out_dim = output[-1]
        projections = (t * query[-1] * heads * key_dim + s * key[-1] * heads * key_dim
                       + s * value[-1] * heads * value_dim + t * heads * value_dim * out_dim)
        attention = heads * t * s * key_dim + heads * t * s * value_dim
        return projections + attention
    return 0


def layer_rows(model):
    rows = []
    for layer in keras2_layer_order(model):
        nodes = [node for node in layer._inbound_nodes if id(node) in model_node_ids(model)]
        if len(nodes) != 1:
            raise ValueError(f"{layer.name}: {len(nodes)} calls in the model; the table assumes one")
        node = nodes[0]
        inbound = "-" if node.is_input else ",".join(node_of(t)[0].name for t in node.input_tensors)
        rows.append((layer.name, type(layer).__name__, shape_text(node.output_tensors[0].shape),
                     layer.count_params(), inbound, forward_macs(layer, node)))
    return rows


_MODEL_NODES = {}


def model_node_ids(model):
    if id(model) not in _MODEL_NODES:
        seen = set()
        stack = list(model.outputs)
        while stack:
            _, node = node_of(stack.pop())
            if id(node) in seen:
                continue
            seen.add(id(node))
            if not node.is_input:
                stack.extend(node.input_tensors)
        _MODEL_NODES[id(model)] = seen
    return _MODEL_NODES[id(model)]


def weight_count(weights):
    return int(sum(np.prod(w.shape) for w in weights))


def main():
    header = (f"# accel model zoo parameter counts, Keras {keras.__version__}: "
              "tools/keras_goldens/make_zoo_goldens.py\n"
              "# from tools/keras_goldens/zoo_models.py (docs/model-zoo.md)\n"
              "# name total trainable non_trainable\n")
    count_lines = []
    for configuration in zoo_models.CONFIGURATIONS:
        model = zoo_models.build(configuration)
        trainable = weight_count(model.trainable_weights)
        non_trainable = weight_count(model.non_trainable_weights)
        assert trainable + non_trainable == model.count_params(), configuration
        count_lines.append(f"{configuration} {model.count_params()} {trainable} {non_trainable}")
        print(count_lines[-1])
        if configuration in NO_LAYER_TABLE:
            continue
        rows = layer_rows(model)
        assert sum(row[3] for row in rows) == model.count_params(), configuration
        macs = sum(row[5] for row in rows)
        path = os.path.join(GOLDEN_DIR, f"zoo_{configuration}_layers.txt")
        with open(path, "w") as out:
            out.write(f"# {configuration}: Functional model '{model.name}', {len(rows)} layers, "
                      f"Keras {keras.__version__}: tools/keras_goldens/make_zoo_goldens.py\n")
            out.write(f"# params total {model.count_params()} trainable {trainable} non_trainable {non_trainable}\n")
            out.write(f"# per sample: forward {macs} MACs = {2 * macs} FLOPs; training ~3x forward = "
                      f"{6 * macs} FLOPs\n")
            out.write("# rows in tf.keras 2's model.layers order\n")
            out.write("# name class output_shape params inbound forward_macs\n")
            for row in rows:
                out.write(" ".join(str(field) for field in row) + "\n")
        print(f"  {path}: {len(rows)} layers, forward {macs / 1e6:.2f} M MACs per sample")
    with open(os.path.join(GOLDEN_DIR, "zoo_parameter_counts.txt"), "w") as out:
        out.write(header + "\n".join(count_lines) + "\n")


if __name__ == "__main__":
    main()
