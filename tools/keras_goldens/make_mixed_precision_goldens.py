#!/usr/bin/env python3
"""Writes tests/keras/golden/mixed_precision/: Keras 3 models under the mixed
dtype policies as TensorFlow 2.21 (Keras 3.15) saves and trains them, for
accel's mixed-precision tests (which only read these files and never need
TensorFlow).

    CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 \\
        bench/.venv-tensorflow/bin/python tools/keras_goldens/make_mixed_precision_goldens.py

The training batches are tests/keras/golden/keras3/train_batches.safetensors
(Fashion-MNIST training images 0..319 in 20 batches of 16; the input is
pixels / 255 in float32 with a trailing channel axis of 1).

Models (keras.mixed_precision.set_global_policy(POLICY) before building; weights
from keras.utils.set_random_seed(42) after keras.backend.clear_session();
compiled with SGD(learning_rate=0.01), SparseCategoricalCrossentropy(
from_logits=True), metrics=["accuracy"]):

    cnn          the TensorFlow tutorial CNN (Conv2D 32 relu, MaxPooling2D, Conv2D 64
                 relu, MaxPooling2D, Flatten, Dense 64 relu, Dense 10), every layer
                 under the global policy, so its logits are 16-bit
    residual     a small residual CNN with batch norm (Functional): Conv2D 16 same
                 (no bias) -> BatchNormalization -> relu, two more such convolutions
                 (the second without its relu), Add with the first, relu,
                 MaxPooling2D, GlobalAveragePooling2D, Dense 10 with dtype="float32"
                 (the usual float32 last layer of a mixed-precision model)
    separable    a separable CNN (Sequential): SeparableConv2D 16 same (no bias) ->
                 BatchNormalization -> relu, SeparableConv2D 32 with stride 2 and
                 depth_multiplier 2 -> BatchNormalization -> relu,
                 GlobalAveragePooling2D, Dense 10 with dtype="float32"
    attention    a small causal transformer over the image's rows (Functional): Dense 16
                 per row, MultiHeadAttention (2 heads of 8, use_causal_mask) added back
                 and LayerNormalization, a causal Conv1D 16 relu,
                 GlobalAveragePooling1D, Dense 10 with dtype="float32"

Files, for each model M and policy P (mixed_bfloat16; and mixed_float16 for cnn,
whose compile wraps the optimizer in a LossScaleOptimizer):

    M_P.keras               model.save before training
    M_P_forward.safetensors x: test images 0..15 / 255 [16, 28, 28, 1]; y =
                            model(x, training=False) as float32 (16-bit values are
                            exact in float32)
    M_P_train.safetensors   losses, accuracies float32 [20]: train_on_batch at each of
                            the 20 steps (the pre-update loss of that batch); and
                            float32_losses: the same model, weights and batches under
                            the float32 policy, to show that the policy changed them
    M_P.config.json         the .keras's config.json, pretty-printed

And the 16-bit weight files of the bfloat16 and float16 policies (variables in
16 bits), for accel's .weights.h5 reader and writer:

    dense_P.weights.h5      Sequential([Input((3,)), Dense(2)]) under P = bfloat16 or
                            float16, model.save_weights (h5py writes float16 as a 2-byte
                            IEEE float, Keras's bfloat16 as a 2-byte opaque type)
    dense_P_values.safetensors  kernel [3, 2] and bias [2]: the variables' values as
                            float32 (exact)

`--weights-only` remakes just these, and naming cases (`separable_mixed_bfloat16`)
remakes just those (the .keras files hold a save date).
"""
import json
import os
import sys
import zipfile

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_numpy  # noqa: E402
from train_zoo_check import load_fashion_mnist  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "tests", "keras", "golden", "mixed_precision")
BATCHES = os.path.join(REPO, "tests", "keras", "golden", "keras3", "train_batches.safetensors")
DATA_DIR = os.environ.get("ACCEL_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
SEED = 42
FORWARD_IMAGES = 16
CASES = (("cnn", "mixed_bfloat16"), ("residual", "mixed_bfloat16"), ("cnn", "mixed_float16"),
         ("separable", "mixed_bfloat16"), ("attention", "mixed_bfloat16"))


def build_cnn():
    return keras.Sequential([keras.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
                             layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Flatten(),
                             layers.Dense(64, activation="relu"), layers.Dense(10)])


def build_residual():
    def conv_bn(x, relu=True):
        x = layers.Conv2D(16, 3, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        return layers.Activation("relu")(x) if relu else x

    image = keras.Input((28, 28, 1), name="image")
    stem = conv_bn(image)
    branch = conv_bn(conv_bn(stem), relu=False)
    x = layers.Activation("relu")(layers.Add()([stem, branch]))
    x = layers.GlobalAveragePooling2D()(layers.MaxPooling2D()(x))
    return keras.Model(image, layers.Dense(10, dtype="float32")(x))


def build_separable():
    return keras.Sequential([
        keras.Input((28, 28, 1)),
        layers.SeparableConv2D(16, 3, padding="same", use_bias=False), layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.SeparableConv2D(32, 3, strides=2, depth_multiplier=2), layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.GlobalAveragePooling2D(), layers.Dense(10, dtype="float32")])


def build_attention():
    rows = keras.Input((28, 28, 1), name="image")
    x = layers.Dense(16)(layers.Reshape((28, 28))(rows))
    attended = layers.MultiHeadAttention(2, 8)(x, x, use_causal_mask=True)
    x = layers.LayerNormalization()(layers.Add()([x, attended]))
    x = layers.Conv1D(16, 3, padding="causal", activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(rows, layers.Dense(10, dtype="float32")(x))


BUILDERS = {"cnn": build_cnn, "residual": build_residual, "separable": build_separable, "attention": build_attention}


def fresh_model(name, policy):
    keras.backend.clear_session()
    keras.mixed_precision.set_global_policy(policy)
    keras.utils.set_random_seed(SEED)
    model = BUILDERS[name]()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def out_path(name):
    return os.path.join(OUT_DIR, name)


def versions():
    return {"tensorflow_version": tf.__version__, "keras_version": keras.__version__,
            "generator": "tools/keras_goldens/make_mixed_precision_goldens.py"}


def train(model, pixels, labels):
    losses, accuracies = [], []
    for step in range(pixels.shape[0]):
        x = (pixels[step].astype(np.float32) / np.float32(255.0))[..., np.newaxis]
        loss, accuracy = model.train_on_batch(x, labels[step])
        losses.append(loss)
        accuracies.append(accuracy)
    return np.array(losses, np.float32), np.array(accuracies, np.float32)


def write_sixteen_bit_weights():
    for policy in ("bfloat16", "float16"):
        keras.backend.clear_session()
        keras.mixed_precision.set_global_policy(policy)
        keras.utils.set_random_seed(SEED)
        model = keras.Sequential([keras.Input((3,)), layers.Dense(2, bias_initializer="random_uniform")])
        model.save_weights(out_path(f"dense_{policy}.weights.h5"))
        kernel, bias = (np.asarray(tf.cast(v.value, tf.float32)) for v in model.layers[0].weights)
        safetensors_numpy.write_file(out_path(f"dense_{policy}_values.safetensors"), {"kernel": kernel, "bias": bias},
                                     dict(versions(), policy=policy, what="the Dense layer's variables as float32"))
        print(f"dense_{policy}: variables {[v.dtype for v in model.layers[0].weights]}")
    keras.mixed_precision.set_global_policy("float32")


def main():
    tf.config.experimental.enable_op_determinism()
    os.makedirs(OUT_DIR, exist_ok=True)
    named = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    if not named:
        write_sixteen_bit_weights()
    if "--weights-only" in sys.argv[1:]:
        return
    batches, _ = safetensors_numpy.read_file(BATCHES)
    pixels, labels = batches["train_pixels"], batches["train_labels"]
    _, _, test_x, _ = load_fashion_mnist(DATA_DIR)
    x = (test_x[:FORWARD_IMAGES].astype(np.float32) / np.float32(255.0))[..., np.newaxis]
    for name, policy in CASES:
        stem = f"{name}_{policy}"
        if named and stem not in named:
            continue
        model = fresh_model(name, policy)
        model.save(out_path(f"{stem}.keras"))
        with zipfile.ZipFile(out_path(f"{stem}.keras")) as zf:
            with open(out_path(f"{stem}.config.json"), "w") as f:
                f.write(json.dumps(json.loads(zf.read("config.json")), indent=2) + "\n")
        y = model(x, training=False)
        safetensors_numpy.write_file(out_path(f"{stem}_forward.safetensors"),
                                     {"x": x, "y": np.asarray(tf.cast(y, tf.float32))},
                                     dict(versions(), model=name, policy=policy, output_dtype=str(y.dtype.name),
                                          call="y = model(x, training=False), cast to float32"))
        losses, accuracies = train(model, pixels, labels)
        reference = fresh_model(name, "float32")
        reference.set_weights(keras.models.load_model(out_path(f"{stem}.keras")).get_weights())
        float32_losses, _ = train(reference, pixels, labels)
        safetensors_numpy.write_file(
            out_path(f"{stem}_train.safetensors"),
            {"losses": losses, "accuracies": accuracies, "float32_losses": float32_losses},
            dict(versions(), model=name, policy=policy, optimizer="SGD(learning_rate=0.01)",
                 data="keras3/train_batches.safetensors: step i uses train_pixels[i] / 255 and train_labels[i]",
                 semantics="losses[i] = model.train_on_batch(x_i, y_i)[0], the batch's pre-update loss; "
                           "float32_losses: the same from the same weights under the float32 policy"))
        print(f"{stem}: losses {losses[0]:.6f} -> {losses[-1]:.6f}; float32 {float32_losses[0]:.6f} -> "
              f"{float32_losses[-1]:.6f}; output dtype {y.dtype.name}")
    keras.mixed_precision.set_global_policy("float32")


if __name__ == "__main__":
    main()
