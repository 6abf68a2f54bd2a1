#!/usr/bin/env python3
"""Writes tests/keras/golden/layers/<case>.safetensors: one small forward pass
of one Keras layer per file, for the C++ layer tests to reproduce.

    CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 \\
        bench/.venv-tensorflow/bin/python tools/keras_goldens/make_layer_goldens.py

Each file holds (all F32 except a boolean attention mask, stored BOOL):

    input_0, input_1, ...  the inputs, drawn from N(0, 1) with a per-case seed
    weight_0, weight_1,... the layer's weights in `layer.weights` order, set to
                           random values (N(0, 0.5^2), same seed), not the
                           initializers, so that every weight matters
    output                 layer(inputs, training=False)

and string metadata: `case`, `layer_class`, `layer_config` (JSON of
get_config()), `call` (the Python call that made `output`, naming the inputs),
`weight_paths` (JSON list of Keras 3 variable paths, `dense/kernel`),
`keras2_weight_names` (JSON list of the same weights as tf.keras 2.15 names
them, `dense/kernel:0`, which is accel's naming), `keras_version`,
`tensorflow_version`, `generator`, `note` (for the cases that need one).
Every layer is named explicitly with Keras 2's default name for a first
instance, so the paths do not depend on name counters.

The goldens are made with Keras 3 (the version in the metadata; TensorFlow
2.21 installs Keras 3.15), while accel follows Keras 2 (tf.keras 2.15).
Where the two differ for these cases:

- MultiHeadAttention. Same weights, shapes, order and math. Keras 3.15 (no
  dropout, no returned scores) computes the attention with
  ops.dot_product_attention: logits = (q . k) * 1/sqrt(key_dim), masked
  logits REPLACED by a large negative; Keras 2 scales the projected query by
  1/sqrt(key_dim) before the einsum and ADDS -1e9 to masked logits. Outputs
  agree to float32 rounding, except for a query row whose keys are ALL
  masked: Keras 2 then gives a uniform softmax over all keys, and so does
  Keras 3's dot_product_attention path, but Keras 3's Softmax-layer path
  (taken with dropout > 0 or return_attention_scores=True) gives zeros.
  The mask golden therefore leaves every query row at least one key.
  Keras 3 adds config keys Keras 2 lacks (flash_attention, seed, use_gate,
  sliding_window...); they are at their defaults, which is Keras 2's
  behaviour.
- DepthwiseConv2D. Keras 3 names the kernel `kernel`, Keras 2
  `depthwise_kernel` (same shape (kh, kw, in_channels, depth_multiplier) and
  layout). keras2_weight_names gives Keras 2's name.
- LayerNormalization. Keras 3 computes moments then x*inv + (beta - mean*inv)
  with inv = gamma * rsqrt(var + eps); Keras 2 uses a fused batch norm on a
  reshaped tensor when the axes are the trailing ones, otherwise
  tf.nn.batch_normalization: float32-rounding differences only. Keras 3's
  config adds rms_scaling (False here = Keras 2's behaviour).
- Activations. "gelu" is exact (erf) in both (approximate=False is the default
  of keras.activations.gelu in both; only keras.ops.gelu defaults to the tanh
  form). "swish" is x * sigmoid(x) in both (Keras 3 registers it as silu).
  The approximate-GELU case is an Activation on a callable (no string names
  it in either version); its layer_config records it by hand.
- Every other case here computes the same function in both versions.
"""
import functools
import json
import os
import sys
import zlib

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_numpy  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "tests", "keras", "golden", "layers")
MAX_FILE_BYTES = 20 * 1024
WEIGHT_SCALE = 0.5


class Case:
    """One golden: `make()` returns the layer; `inputs` are the shapes (or arrays)
    of the inputs; `call(layer, inputs)` runs it and `call_text` says how."""

    def __init__(self, name, make, inputs, call=None, call_text="layer(input_0)", config=None, note=None):
        self.name = name
        self.make = make
        self.inputs = inputs
        self.call = call or (lambda layer, xs: layer(xs[0], training=False))
        self.call_text = call_text
        self.config = config  # replaces get_config() in the metadata when given
        self.note = note


def causal_free_mask(rng):
    """A (2, 5, 5) boolean attention mask with at least one True per query row."""
    mask = rng.random((2, 5, 5)) < 0.6
    for batch in range(2):
        for row in range(5):
            if not mask[batch, row].any():
                mask[batch, row, rng.integers(5)] = True
    return mask


def mha_call(**kwargs):
    def call(layer, xs):
        return layer(xs[0], xs[1] if len(xs) > 1 else xs[0], training=False, **kwargs)
    return call


def mha_mask_call(layer, xs):
    return layer(xs[0], xs[0], attention_mask=xs[2], training=False)


CASES = [
    Case("layer_normalization", lambda: layers.LayerNormalization(axis=-1, name="layer_normalization"), [(2, 3, 8)]),
    Case("layer_normalization_axes", lambda: layers.LayerNormalization(axis=[1, 2], name="layer_normalization"),
         [(2, 3, 4)], note="gamma and beta have shape (3, 4): the sizes of axes 1 and 2"),
    Case("multi_head_attention_self",
         lambda: layers.MultiHeadAttention(num_heads=2, key_dim=4, name="multi_head_attention"), [(2, 5, 8)],
         call=mha_call(), call_text="layer(input_0, input_0)"),
    Case("multi_head_attention_cross",
         lambda: layers.MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3, output_shape=5,
                                           name="multi_head_attention"),
         [(2, 3, 8), (2, 4, 6)], call=mha_call(), call_text="layer(query=input_0, value=input_1)  # key = value",
         note="query (2,3,8), value (2,4,6); key defaults to value; output (2,3,5)"),
    Case("multi_head_attention_causal",
         lambda: layers.MultiHeadAttention(num_heads=2, key_dim=4, name="multi_head_attention"), [(2, 5, 8)],
         call=mha_call(use_causal_mask=True), call_text="layer(input_0, input_0, use_causal_mask=True)"),
    Case("multi_head_attention_mask",
         lambda: layers.MultiHeadAttention(num_heads=2, key_dim=4, name="multi_head_attention"),
         [(2, 5, 8), None, "mask"], call=mha_mask_call,
         call_text="layer(input_0, input_0, attention_mask=input_2)",
         note="input_2 is the boolean attention mask (B, T, S) = (2, 5, 5), stored BOOL; True = attend; every "
              "query row has at least one True; there is no input_1 (self-attention)"),
    Case("conv2d_strides", lambda: layers.Conv2D(6, 3, strides=2, padding="same", name="conv2d"), [(2, 7, 8, 4)],
         note="odd and even spatial sizes: 'same' with stride 2 pads (1,1) rows and (0,1) cols"),
    Case("conv2d_dilation", lambda: layers.Conv2D(5, 3, dilation_rate=2, name="conv2d"), [(2, 9, 8, 3)]),
    Case("conv2d_groups", lambda: layers.Conv2D(6, 3, groups=2, padding="same", name="conv2d"), [(2, 6, 6, 4)],
         note="kernel (3, 3, in/groups = 2, 6); output channels [0,3) see input channels [0,2), [3,6) see [2,4)"),
    Case("depthwise_conv2d",
         lambda: layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", name="depthwise_conv2d"),
         [(2, 6, 5, 3)],
         note="kernel (3, 3, 3, 2); output channel c*2+m is input channel c with multiplier m. Keras 2 names the "
              "kernel depthwise_kernel"),
    Case("separable_conv2d",
         lambda: layers.SeparableConv2D(4, 3, strides=2, depth_multiplier=2, padding="same", name="separable_conv2d"),
         [(2, 7, 6, 3)],
         note="depthwise kernel (3, 3, 3, 2) with stride 2, then pointwise (1, 1, 6, 4); output (2, 4, 3, 4)"),
    Case("conv2d_transpose",
         lambda: layers.Conv2DTranspose(3, 3, strides=2, padding="same", name="conv2d_transpose"), [(2, 4, 5, 4)],
         note="kernel (3, 3, filters = 3, in = 4); output (2, 8, 10, 3)"),
    Case("conv2d_transpose_valid",
         lambda: layers.Conv2DTranspose(3, 3, strides=2, padding="valid", name="conv2d_transpose"), [(2, 4, 5, 4)],
         note="output (2, 9, 11, 3) = (in - 1) * 2 + 3"),
    Case("up_sampling2d", lambda: layers.UpSampling2D(size=(2, 3), name="up_sampling2d"), [(2, 3, 4, 2)],
         note="nearest, rows x2 and columns x3"),
    Case("zero_padding2d", lambda: layers.ZeroPadding2D(padding=((1, 2), (3, 0)), name="zero_padding2d"),
         [(2, 3, 4, 2)]),
    Case("cropping2d", lambda: layers.Cropping2D(cropping=((1, 0), (2, 1)), name="cropping2d"), [(2, 5, 6, 2)]),
    Case("reshape", lambda: layers.Reshape((2, -1), name="reshape"), [(2, 3, 4)], note="(3, 4) -> (2, 6)"),
    Case("permute", lambda: layers.Permute((3, 1, 2), name="permute"), [(2, 3, 4, 5)], note="output (2, 5, 3, 4)"),
    Case("repeat_vector", lambda: layers.RepeatVector(3, name="repeat_vector"), [(2, 4)]),
    Case("global_max_pooling2d", lambda: layers.GlobalMaxPooling2D(name="global_max_pooling2d"), [(2, 4, 5, 3)]),
    Case("activation_gelu", lambda: layers.Activation("gelu", name="activation"), [(2, 3, 8)],
         note="exact GELU: 0.5 x (1 + erf(x / sqrt(2)))"),
    Case("activation_gelu_approximate",
         lambda: layers.Activation(functools.partial(keras.activations.gelu, approximate=True), name="activation"),
         [(2, 3, 8)],
         config={"name": "activation", "trainable": True, "activation": "gelu", "approximate": True},
         note="tanh GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); keras.activations.gelu(x, "
              "approximate=True) in an Activation layer"),
    Case("activation_swish", lambda: layers.Activation("swish", name="activation"), [(2, 3, 8)],
         note="x * sigmoid(x)"),
    Case("activation_softmax_axis1", lambda: layers.Softmax(axis=1, name="softmax"), [(2, 3, 4)],
         note="softmax over axis 1 (size 3)"),
    Case("dense_gelu", lambda: layers.Dense(5, activation="gelu", name="dense"), [(2, 3, 6)],
         note="Dense on a rank-3 input: the kernel applies to the last axis; exact GELU"),
]


def keras2_weight_name(layer, variable):
    """tf.keras 2.15's name for a Keras 3 variable (`<path>:0`, Keras 2's kernel
    names where they differ)."""
    path = variable.path
    if isinstance(layer, layers.DepthwiseConv2D) and path.endswith("/kernel"):
        path = path[: -len("kernel")] + "depthwise_kernel"
    return path + ":0"


def case_seed(name):
    return zlib.crc32(name.encode("utf-8"))


def make_case(case):
    keras.backend.clear_session()
    keras.utils.set_random_seed(case_seed(case.name) % (2**31))
    rng = np.random.default_rng(case_seed(case.name))
    inputs = []
    for spec in case.inputs:
        if spec is None:
            inputs.append(None)
        elif spec == "mask":
            inputs.append(causal_free_mask(rng))
        else:
            inputs.append(rng.standard_normal(spec).astype(np.float32))
    layer = case.make()
    call_inputs = [x if x is not None else np.zeros((0,), np.float32) for x in inputs]
    case.call(layer, call_inputs)  # builds the weights
    weights = [(WEIGHT_SCALE * rng.standard_normal(tuple(w.shape))).astype(np.float32) for w in layer.weights]
    if weights:
        layer.set_weights(weights)
    output = np.asarray(case.call(layer, call_inputs)).astype(np.float32)

    tensors = {}
    for index, x in enumerate(inputs):
        if x is not None:
            tensors[f"input_{index}"] = x
    for index, w in enumerate(weights):
        tensors[f"weight_{index}"] = w
    tensors["output"] = output
    config = case.config if case.config is not None else layer.get_config()
    metadata = {
        "case": case.name,
        "layer_class": type(layer).__name__,
        "layer_config": json.dumps(config, sort_keys=True, default=str),
        "call": case.call_text,
        "weight_paths": json.dumps([w.path for w in layer.weights]),
        "keras2_weight_names": json.dumps([keras2_weight_name(layer, w) for w in layer.weights]),
        "keras_version": keras.__version__,
        "tensorflow_version": tf.__version__,
        "generator": "tools/keras_goldens/make_layer_goldens.py",
    }
    if case.note:
        metadata["note"] = case.note
    return tensors, metadata


def check_file(path, tensors, metadata):
    """Reads the file back and compares it with what was written."""
    read_tensors, read_metadata = safetensors_numpy.read_file(path)
    assert read_metadata == metadata, path
    assert list(read_tensors) == list(tensors), path
    for name, array in tensors.items():
        assert read_tensors[name].dtype == array.dtype and np.array_equal(read_tensors[name], array), (path, name)
    size = os.path.getsize(path)
    assert size <= MAX_FILE_BYTES, f"{path}: {size} bytes, above the {MAX_FILE_BYTES} limit"
    return size


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    only = set(sys.argv[1:])
    for case in CASES:
        if only and case.name not in only:
            continue
        tensors, metadata = make_case(case)
        path = os.path.join(OUT_DIR, case.name + ".safetensors")
        safetensors_numpy.write_file(path, tensors, metadata)
        size = check_file(path, tensors, metadata)
        shapes = ", ".join(f"{k}{list(v.shape)}" for k, v in tensors.items())
        print(f"{case.name:30s} {size:6d} B  {shapes}")


if __name__ == "__main__":
    main()
