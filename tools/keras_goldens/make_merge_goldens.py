#!/usr/bin/env python3
"""Writes tests/keras/golden/keras3/{merges,activations,shaping,convolutions,
transformer}.keras and their
<name>_forward.safetensors, saved by TensorFlow 2.21 (Keras 3.15), with a
forward pass for accel's loader test (tests/keras/saving_keras3_goldens_test.cpp
reads them like mlp, cnn and functional):

- merges: every merge layer without arguments (Add, Subtract, Multiply,
  Average, Maximum, Minimum) combining two Dense branches;
- activations: the activation layer classes and Rescaling, with arguments
  off their defaults (ReLU's slope, cap and threshold, LeakyReLU, ELU,
  Softmax along an inner axis);
- shaping: Permute, RepeatVector and the global poolings (1D average and max,
  2D max), with keepdims where Keras has it;
- convolutions: DepthwiseConv2D, PReLU (shared over the image axes and
  not), Conv2DTranspose, Cropping2D, UpSampling2D, and Conv1D with "causal"
  and strided "valid" padding over a sequence;
- decoder: a small decoder-only LM (RMSNormalization, causal self-attention,
  GELU MLP, logits per position), trained with SGD;
- transformer: Embedding of int32 tokens, self-attention, a causal
  attention with its own value size and output size and no biases, a
  cross-attention given its key by keyword, LayerNormalization and Dense
  feed-forward blocks.

For convolutions and transformer, <name>_train.safetensors also holds 10
batches and the losses of 10 Adam steps (train_on_batch, from the saved
weights), which accel's training must follow.

resume_<optimizer> (adam, sgd with momentum, rmsprop with momentum and
centered): the merges model trained 5 steps by TensorFlow and saved
(compile_config and the optimizer's variables in model.weights.h5), then
resume_<optimizer>_next.safetensors: 3 more batches, the losses
train_on_batch returned for them and every weight after them, which accel,
loading the file compiled with the optimizer's state, must reproduce.

Every weight is moved off its initial value (PReLU's zeros, the biases'
zeros) so that the forward pass checks each of them.

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


def fresh_session():
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)


def classifier(x, features, name):
    """The model from input x: its feature tensors concatenated, then Dense(3) logits, compiled."""
    joined = layers.Concatenate(name="joined")(features)
    model = keras.Model(x, layers.Dense(3, name="logits")(joined), name=name)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def build():
    fresh_session()
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
    return classifier(x, merged, "merges")


def build_activations():
    fresh_session()
    x = keras.Input((4, 6), name="features")
    y = layers.Rescaling(0.5, offset=-0.25, name="rescaled")(x)
    y = layers.Dense(6, name="mix")(y)
    branches = [
        layers.ReLU(name="relu")(y),
        layers.ReLU(max_value=0.6, negative_slope=0.1, threshold=0.2, name="relu_shaped")(y),
        layers.ReLU(negative_slope=0.25, name="relu_leaky")(y),
        layers.ReLU(max_value=0.5, name="relu_capped")(y),
        layers.LeakyReLU(negative_slope=0.15, name="leaky")(y),
        layers.ELU(alpha=0.7, name="elu")(y),
        layers.Softmax(axis=1, name="softmax_steps")(y),
        layers.Softmax(name="softmax")(y),
    ]
    return classifier(x, branches, "activations")


def build_shaping():
    fresh_session()
    x = keras.Input((4, 6), name="sequence")
    swapped = layers.Permute((2, 1), name="swapped")(x)
    mean = layers.GlobalAveragePooling1D(name="mean_steps")(swapped)
    largest = layers.GlobalMaxPooling1D(keepdims=True, name="max_steps")(x)
    repeated = layers.RepeatVector(3, name="repeated")(mean)
    image = layers.Reshape((2, 2, 6), name="image")(x)
    pooled = layers.GlobalMaxPooling2D(name="max_image")(image)
    return classifier(x, [mean, layers.Flatten(name="flat_max")(largest),
                          layers.Flatten(name="flat_repeated")(repeated), pooled], "shaping")


def build_convolutions():
    fresh_session()
    x = keras.Input((8, 8, 3), name="image")
    y = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", name="depthwise")(x)
    y = layers.PReLU(shared_axes=[1, 2], name="prelu_channels")(y)
    y = layers.Conv2DTranspose(4, 3, strides=2, padding="same", name="transposed")(y)
    y = layers.Cropping2D(((1, 2), (0, 1)), name="cropped")(y)
    y = layers.UpSampling2D((1, 2), name="upsampled")(y)
    image = layers.GlobalAveragePooling2D(name="image_mean")(y)
    sequence = layers.Reshape((8, 24), name="rows")(x)
    s = layers.Conv1D(5, 3, padding="causal", dilation_rate=2, name="causal")(sequence)
    s = layers.PReLU(name="prelu")(s)
    s = layers.Conv1D(4, 2, strides=2, activation="tanh", name="strided")(s)
    steps = layers.GlobalMaxPooling1D(name="steps_max")(s)
    return classifier(x, [image, steps], "convolutions")


def build_transformer():
    fresh_session()
    tokens = keras.Input((10,), dtype="int32", name="tokens")
    e = layers.Embedding(100, 16, name="embedding")(tokens)
    a = layers.MultiHeadAttention(4, 4, name="self_attention")(e, e)
    h = layers.LayerNormalization(epsilon=1e-6, name="norm_1")(layers.Add(name="residual_1")([e, a]))
    f = layers.Dense(32, activation="relu", name="ffn_in")(h)
    f = layers.Dense(16, name="ffn_out")(f)
    h = layers.LayerNormalization(name="norm_2")(layers.Add(name="residual_2")([h, f]))
    c = layers.MultiHeadAttention(2, 8, value_dim=6, output_shape=12, use_bias=False,
                                  name="causal_attention")(h, h, use_causal_mask=True)
    k = layers.MultiHeadAttention(2, 4, name="cross_attention")(h, e, key=h)
    pooled = [layers.GlobalAveragePooling1D(name="causal_mean")(c),
              layers.GlobalAveragePooling1D(name="cross_mean")(k)]
    return classifier(tokens, pooled, "transformer")


def build_decoder():
    """A small decoder-only language model: token embeddings, two pre-norm
    blocks (RMSNormalization, causal self-attention, a GELU MLP, residual adds),
    a final RMSNormalization and logits over the vocabulary at every position;
    SGD, as Keras on TensorFlow hands Adam an Embedding's gradient per
    occurrence (docs/keras.md, differences)."""
    fresh_session()
    tokens = keras.Input((12,), dtype="int32", name="tokens")
    x = layers.Embedding(40, 16, name="token_embedding")(tokens)
    for block in (1, 2):
        h = layers.RMSNormalization(name=f"block{block}_norm1")(x)
        h = layers.MultiHeadAttention(4, 4, name=f"block{block}_attention")(h, h, use_causal_mask=True)
        x = layers.Add(name=f"block{block}_add1")([x, h])
        h = layers.RMSNormalization(epsilon=1e-5, name=f"block{block}_norm2")(x)
        h = layers.Dense(32, activation="gelu", name=f"block{block}_mlp_in")(h)
        h = layers.Dense(16, name=f"block{block}_mlp_out")(h)
        x = layers.Add(name=f"block{block}_add2")([x, h])
    x = layers.RMSNormalization(name="final_norm")(x)
    model = keras.Model(tokens, layers.Dense(40, name="logits")(x), name="decoder")
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def perturb(model, rng):
    for weight in model.weights:
        weight.assign(weight.numpy() + 0.2 * rng.standard_normal(weight.shape).astype(np.float32))


def write(name, model, x):
    model.save(os.path.join(OUT, f"{name}.keras"))
    y = model(x, training=False).numpy()
    safetensors_numpy.write_file(os.path.join(OUT, f"{name}_forward.safetensors"), {"x": x, "y": y},
                                 {"tensorflow_version": tf.__version__, "keras_version": keras.__version__,
                                  "generator": "tools/keras_goldens/make_merge_goldens.py", "model": name,
                                  "call": "y = model(x, training=False)"})
    reloaded = keras.models.load_model(os.path.join(OUT, f"{name}.keras"))
    assert np.max(np.abs(reloaded(x, training=False).numpy() - y)) == 0.0
    print(f"{name}.keras:", [layer.__class__.__name__ for layer in model.layers])


def write_training(name, model, batches, labels, optimizer="Adam(1e-3)"):
    losses = [float(model.train_on_batch(x, y)) for x, y in zip(batches, labels)]
    safetensors_numpy.write_file(os.path.join(OUT, f"{name}_train.safetensors"),
                                 {"x": batches, "labels": labels, "losses": np.array(losses, np.float32)},
                                 {"tensorflow_version": tf.__version__, "keras_version": keras.__version__,
                                  "generator": "tools/keras_goldens/make_merge_goldens.py", "model": name,
                                  "call": f"losses[i] = model.train_on_batch(x[i], labels[i]), {optimizer}"})
    print(f"{name} losses:", losses)


RESUME_OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(2e-3),
    "sgd": lambda: keras.optimizers.SGD(0.05, momentum=0.9),
    "rmsprop": lambda: keras.optimizers.RMSprop(1e-3, momentum=0.5, centered=True),
}


def write_resume(name, make_optimizer, rng):
    model = build()
    model.compile(optimizer=make_optimizer(),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    for _ in range(5):
        model.train_on_batch(rng.standard_normal((16, 8)).astype(np.float32), rng.integers(0, 3, 16).astype(np.int32))
    model.save(os.path.join(OUT, f"resume_{name}.keras"))
    x = rng.standard_normal((3, 16, 8)).astype(np.float32)
    y = rng.integers(0, 3, (3, 16)).astype(np.int32)
    losses = [float(model.train_on_batch(x[step], y[step])[0]) for step in range(3)]
    tensors = {"x": x, "y": y, "losses": np.array(losses, np.float32),
               "iterations": np.array(int(model.optimizer.iterations.numpy()), np.int64)}
    for index, weight in enumerate(model.weights):
        tensors[f"weight_{index}"] = np.asarray(weight.numpy(), np.float32)
    safetensors_numpy.write_file(os.path.join(OUT, f"resume_{name}_next.safetensors"), tensors,
                                 {"tensorflow_version": tf.__version__, "keras_version": keras.__version__,
                                  "generator": "tools/keras_goldens/make_merge_goldens.py",
                                  "call": "losses[i] = train_on_batch(x[i], y[i]) after resume_<name>.keras was saved; "
                                          "weight_<i>: model.weights[i] after them"})
    print(f"resume_{name}: losses {losses}")


def main():
    rng = np.random.default_rng(SEED)
    write("merges", build(), rng.standard_normal((16, 8)).astype(np.float32))
    write("activations", build_activations(), (2 * rng.standard_normal((16, 4, 6))).astype(np.float32))
    write("shaping", build_shaping(), rng.standard_normal((16, 4, 6)).astype(np.float32))
    convolutions = build_convolutions()
    perturb(convolutions, rng)
    write("convolutions", convolutions, rng.standard_normal((6, 8, 8, 3)).astype(np.float32))
    write_training("convolutions", convolutions, rng.standard_normal((10, 8, 8, 8, 3)).astype(np.float32),
                   rng.integers(0, 3, (10, 8)).astype(np.int32))
    transformer = build_transformer()
    perturb(transformer, rng)
    write("transformer", transformer, rng.integers(0, 100, (6, 10)).astype(np.int32))
    # Each training batch holds every id once: Keras on TensorFlow squares each
    # occurrence's gradient of a gathered row separately in Adam's second
    # moment (IndexedSlices), where accel squares the row's summed gradient
    # (docs/keras.md, differences).
    unique_ids = np.stack([rng.permutation(100)[:80].reshape(8, 10) for _ in range(10)])
    write_training("transformer", transformer, unique_ids.astype(np.int32),
                   rng.integers(0, 3, (10, 8)).astype(np.int32))
    for name, make_optimizer in RESUME_OPTIMIZERS.items():
        write_resume(name, make_optimizer, rng)
    decoder = build_decoder()
    perturb(decoder, rng)
    write("decoder", decoder, rng.integers(0, 40, (6, 12)).astype(np.int32))
    sequences = rng.integers(0, 40, (10, 8, 13)).astype(np.int32)  # inputs and their next tokens
    write_training("decoder", decoder, sequences[..., :-1].copy(), sequences[..., 1:].copy(), "SGD(0.1)")


if __name__ == "__main__":
    main()
