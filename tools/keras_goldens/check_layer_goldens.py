#!/usr/bin/env python3
"""Recomputes every layer golden's output from its inputs and weights with plain
numpy (float64), written from Keras 2's (tf.keras 2.15) definitions, and
compares with the output Keras 3 stored. It checks that the files say what
their metadata says, and spells out the math the C++ layers must reproduce.

    bench/.venv-tensorflow/bin/python tools/keras_goldens/check_layer_goldens.py

Needs numpy only (no TensorFlow).
"""
import glob
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_numpy  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN_DIR = os.path.join(REPO, "tests", "keras", "golden", "layers")
TOLERANCE = 1e-5  # relative to max(1, |expected|)

_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def same_padding(size, kernel, stride, dilation=1):
    """TensorFlow's SAME: (before, after), the extra one after."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def conv2d(x, kernel, bias, strides=(1, 1), dilation=(1, 1), padding="valid", groups=1):
    """NHWC x (kh, kw, in/groups, filters) -> NHWC."""
    kh, kw, group_in, filters = kernel.shape
    if padding == "same":
        x = np.pad(x, ((0, 0), same_padding(x.shape[1], kh, strides[0], dilation[0]),
                       same_padding(x.shape[2], kw, strides[1], dilation[1]), (0, 0)))
    batch, height, width, _ = x.shape
    out_h = (height - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    out_w = (width - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    group_out = filters // groups
    out = np.zeros((batch, out_h, out_w, filters))
    for a in range(kh):
        for b in range(kw):
            rows = slice(a * dilation[0], a * dilation[0] + (out_h - 1) * strides[0] + 1, strides[0])
            cols = slice(b * dilation[1], b * dilation[1] + (out_w - 1) * strides[1] + 1, strides[1])
            patch = x[:, rows, cols, :]
            for g in range(groups):
                out[..., g * group_out:(g + 1) * group_out] += (
                    patch[..., g * group_in:(g + 1) * group_in] @ kernel[a, b, :, g * group_out:(g + 1) * group_out])
    return out + bias


def depthwise_conv2d(x, kernel, bias, padding):
    kh, kw, channels, multiplier = kernel.shape
    # Output channel c * multiplier + m is input channel c through kernel[..., c, m]:
    # a grouped convolution with one group per input channel.
    grouped = kernel.reshape(kh, kw, 1, channels * multiplier)
    return conv2d(x, grouped, bias, padding=padding, groups=channels)


def conv2d_transpose(x, kernel, bias, strides, padding):
    """kernel (kh, kw, filters, in): every input pixel scatters kernel * value."""
    kh, kw, filters, _ = kernel.shape
    batch, height, width, _ = x.shape
    full_h, full_w = (height - 1) * strides[0] + kh, (width - 1) * strides[1] + kw
    full = np.zeros((batch, full_h, full_w, filters))
    for i in range(height):
        for j in range(width):
            full[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw, :] += np.einsum(
                "bc,hwfc->bhwf", x[:, i, j, :], kernel)
    if padding == "same":  # output size = input * stride; TF crops the extra rows/cols, the smaller half first
        out_h, out_w = height * strides[0], width * strides[1]
        top, left = (full_h - out_h) // 2, (full_w - out_w) // 2
        full = full[:, top:top + out_h, left:left + out_w, :]
    return full + bias


def layer_normalization(x, gamma, beta, axes, epsilon):
    mean = x.mean(axis=tuple(axes), keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=tuple(axes), keepdims=True)
    shape = [1] * x.ndim
    for axis in axes:
        shape[axis] = x.shape[axis]
    return (x - mean) / np.sqrt(variance + epsilon) * gamma.reshape(shape) + beta.reshape(shape)


def multi_head_attention(query, value, weights, key_dim, attention_mask=None, causal=False):
    wq, bq, wk, bk, wv, bv, wo, bo = weights
    q = np.einsum("btd,dnh->btnh", query, wq) + bq
    k = np.einsum("bsd,dnh->bsnh", value, wk) + bk  # key = value
    v = np.einsum("bsd,dnh->bsnh", value, wv) + bv
    logits = np.einsum("btnh,bsnh->bnts", q / math.sqrt(key_dim), k)
    mask = np.ones(logits.shape, bool)
    if attention_mask is not None:
        mask &= attention_mask[:, None, :, :]
    if causal:
        mask &= np.tril(np.ones(logits.shape[-2:], bool))
    logits = logits + (1.0 - mask) * -1e9  # Keras 2's Softmax(mask): adds -1e9
    attended = np.einsum("bnts,bsnh->btnh", softmax(logits, -1), v)
    return np.einsum("btnh,nhd->btd", attended, wo) + bo


def expected_output(case, config, x, w):
    if case.startswith("layer_normalization"):
        axes = config["axis"] if isinstance(config["axis"], list) else [config["axis"]]
        axes = [a % x[0].ndim for a in axes]
        return layer_normalization(x[0], w[0], w[1], axes, config["epsilon"])
    if case.startswith("multi_head_attention"):
        value = x[1] if case == "multi_head_attention_cross" else x[0]
        mask = x[2] if case == "multi_head_attention_mask" else None
        return multi_head_attention(x[0], value, w, config["key_dim"], mask, case == "multi_head_attention_causal")
    if case.startswith("conv2d_transpose"):
        return conv2d_transpose(x[0], w[0], w[1], tuple(config["strides"]), config["padding"])
    if case.startswith("conv2d"):
        return conv2d(x[0], w[0], w[1], tuple(config["strides"]), tuple(config["dilation_rate"]), config["padding"],
                      config["groups"])
    if case == "depthwise_conv2d":
        return depthwise_conv2d(x[0], w[0], w[1], config["padding"])
    if case == "up_sampling2d":
        rows, cols = config["size"]
        return np.repeat(np.repeat(x[0], rows, axis=1), cols, axis=2)
    if case == "zero_padding2d":
        return np.pad(x[0], ((0, 0), *[tuple(p) for p in config["padding"]], (0, 0)))
    if case == "cropping2d":
        (top, bottom), (left, right) = config["cropping"]
        h, wdt = x[0].shape[1:3]
        return x[0][:, top:h - bottom, left:wdt - right, :]
    if case == "reshape":
        return x[0].reshape((x[0].shape[0], *config["target_shape"]))
    if case == "permute":
        return x[0].transpose((0, *config["dims"]))
    if case == "repeat_vector":
        return np.repeat(x[0][:, None, :], config["n"], axis=1)
    if case == "global_max_pooling2d":
        return x[0].max(axis=(1, 2))
    if case == "activation_gelu":
        return gelu(x[0])
    if case == "activation_gelu_approximate":
        return gelu_tanh(x[0])
    if case == "activation_swish":
        return x[0] / (1.0 + np.exp(-x[0]))
    if case == "activation_softmax_axis1":
        return softmax(x[0], config["axis"])
    if case == "dense_gelu":
        return gelu(x[0] @ w[0] + w[1])
    raise KeyError(f"no numpy reference for case {case!r}")


def main():
    paths = sorted(glob.glob(os.path.join(GOLDEN_DIR, "*.safetensors")))
    failures = 0
    for path in paths:
        tensors, metadata = safetensors_numpy.read_file(path)
        case = metadata["case"]
        config = json.loads(metadata["layer_config"])
        inputs = {int(name.split("_")[1]): t for name, t in tensors.items() if name.startswith("input_")}
        x = [inputs.get(i) for i in range(max(inputs) + 1)]
        x = [t.astype(np.float64) if t is not None and t.dtype != np.bool_ else t for t in x]
        w = [tensors[f"weight_{i}"].astype(np.float64) for i in range(len(json.loads(metadata["weight_paths"])))]
        expected = expected_output(case, config, x, w)
        got = tensors["output"]
        assert got.shape == expected.shape, (case, got.shape, expected.shape)
        error = float(np.max(np.abs(got - expected) / np.maximum(1.0, np.abs(expected))))
        ok = error <= TOLERANCE
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {case:30s} max relative error {error:.2e}")
    print(f"{len(paths) - failures}/{len(paths)} goldens match the numpy references")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
