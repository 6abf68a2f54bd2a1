#!/usr/bin/env python3
"""Writes tests/keras/golden/keras3/merges.keras and merges_forward.safetensors:
a Functional model whose every merge layer without arguments (Add, Subtract,
Multiply, Average, Maximum, Minimum) combines two Dense branches, saved by
TensorFlow 2.21 (Keras 3.15), with a forward pass for accel's loader test
(tests/keras/saving_keras3_goldens_test.cpp reads them like mlp, cnn and
functional).

    CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 \\
        bench/.venv-tensorflow/bin/python tools/keras_goldens/make_merge_goldens.py
"""
import os
import sys

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_numpy  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "tests", "keras", "golden", "keras3")
SEED = 42


def build():
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    x = keras.Input((8,), name="features")
    a = layers.Dense(6, name="left")(x)
    b = layers.Dense(6, activation="tanh", name="right")(x)
    merged = [
        layers.Add(name="sum")([a, b]),
        layers.Subtract(name="difference")([a, b]),
        layers.Multiply(name="product")([a, b]),
        layers.Average(name="mean")([a, b]),
        layers.Maximum(name="largest")([a, b]),
        layers.Minimum(name="smallest")([a, b]),
    ]
    joined = layers.Concatenate(name="joined")(merged)
    model = keras.Model(x, layers.Dense(3, name="logits")(joined), name="merges")
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def main():
    model = build()
    model.save(os.path.join(OUT, "merges.keras"))
    x = np.random.default_rng(SEED).standard_normal((16, 8)).astype(np.float32)
    y = model(x, training=False).numpy()
    safetensors_numpy.write_file(os.path.join(OUT, "merges_forward.safetensors"), {"x": x, "y": y},
                                 {"tensorflow_version": tf.__version__, "keras_version": keras.__version__,
                                  "generator": "tools/keras_goldens/make_merge_goldens.py", "model": "merges",
                                  "call": "y = model(x, training=False)"})
    reloaded = keras.models.load_model(os.path.join(OUT, "merges.keras"))
    assert np.max(np.abs(reloaded(x, training=False).numpy() - y)) == 0.0
    print("merges.keras:", [layer.__class__.__name__ for layer in model.layers])


if __name__ == "__main__":
    main()
