#!/usr/bin/env python3
"""Writes tests/keras/golden/keras3/: Keras 3 `.keras` and `.weights.h5` files as
TensorFlow 2.21 (Keras 3.15) writes them, with forward and training results and
text dumps of their structure, for accel's reader and writer tests (which only
read these files and never need TensorFlow).

    CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 \\
        bench/.venv-tensorflow/bin/python tools/keras_goldens/make_keras3_goldens.py

Needs the Fashion-MNIST idx files (ACCEL_FASHION_MNIST_DIR, default
/usr/share/datasets/fashion-mnist): the images are real digits of clothing so
that the 20 training steps move the loss the way real training does.

Per model (mlp, cnn, functional; compiled with Adam(1e-3),
SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]; weights
from keras.utils.set_random_seed(SEED) after keras.backend.clear_session(), so
that layer names restart at `dense`, `dense_1`, ...):

    <name>.keras, <name>.weights.h5   model.save / model.save_weights before training
    <name>_forward.safetensors        x (the first 16 test images / 255, float32, the
                                      model's input shape) and y = model(x, training=False)
    <name>.config.json, <name>.metadata.json   the .keras's JSON members, pretty-printed
    <name>.keras.structure.txt, <name>.weights.h5.structure.txt   keras3_file_dump.py output
    <name>.variables.txt              HDF5 path -> Keras variable path and shape

For mlp and cnn only (the functional model's Dropout draws random masks while
training, which accel cannot reproduce):

    train_batches.safetensors         train_pixels uint8 [20, 16, 28, 28] (training images
                                      0..319 in order; the float input is pixels / 255 in
                                      float32, reshaped to [16, 28, 28, 1] for cnn) and
                                      train_labels int32 [20, 16]; shared by both models
    <name>_train.safetensors          losses, accuracies float32 [20]: what
                                      model.train_on_batch returned at each step (float32
                                      scalars made Python floats, so float32 holds them
                                      exactly; accel's safetensors reader has no F64)
    <name>_trained.weights.h5 (+ .structure.txt)   model.save_weights after the 20 steps
                                      (the file itself for mlp only: see TRAINED_WEIGHTS_KEPT)

train_on_batch in Keras 3.15 (keras/src/backend/tensorflow/trainer.py): it resets
the metrics, then runs one train_step, which computes y_pred = model(x,
training=True) and the loss with the weights as they are BEFORE the update,
updates the loss tracker (a Mean, so after the reset it holds just this batch's
loss), then applies the gradients. It returns [loss, accuracy] (return_dict=False)
where loss is that batch's pre-update loss (sum_over_batch_size: the mean over the
16 samples) and accuracy the fraction of the batch right before the update: no
running mean across calls. This script checks that claim at every step against
a loss computed by hand before the step.

Malformed inputs for the error tests:

    bad_truncated.keras           cnn.keras cut to its first half (no central directory)
    bad_missing_weights.keras     mlp.keras's metadata.json and config.json only
    bad_unknown_layer.keras       a valid file whose model uses a registered custom layer
                                  (custom>Scale) that a reader does not know
    bad_not_keras.h5              an HDF5 file of unrelated datasets (no layers/, no vars/)
    bad_wrong_shape.weights.h5    mlp.weights.h5 with layers/dense_1/vars/0 (the (128, 10)
                                  kernel) replaced by a (10, 128) dataset
"""
import json
import os
import shutil
import sys
import zipfile

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras3_file_dump  # noqa: E402
import safetensors_numpy  # noqa: E402
from train_zoo_check import load_fashion_mnist  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(REPO, "tests", "keras", "golden", "keras3")
DATA_DIR = os.environ.get("ACCEL_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
SEED = 42
FORWARD_IMAGES = 16
TRAIN_STEPS = 20
BATCH = 16
TRAINED_MODELS = ("mlp", "cnn")
# The models whose weights after training are kept as <name>_trained.weights.h5: none, to
# keep the folder small (mlp's is 1.2 MB with its two Adam slots, cnn's 1.5 MB). The losses
# check the training and the structure dumps record the optimizer-slot layout.
TRAINED_WEIGHTS_KEPT = ()
# Standalone .weights.h5 files kept for the tests; cnn's (0.5 MB) holds what cnn.keras holds.
WEIGHTS_FILES_KEPT = ("mlp", "functional")


def build_mlp():
    return keras.Sequential([keras.Input((28, 28)), layers.Flatten(), layers.Dense(128, activation="relu"),
                             layers.Dense(10)])


def build_cnn():
    return keras.Sequential([keras.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
                             layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Flatten(),
                             layers.Dense(64, activation="relu"), layers.Dense(10)])


def build_functional():
    x = keras.Input((28, 28, 1), name="image")
    s = layers.Conv2D(8, 3, padding="same", activation="relu", name="stem")(x)
    b = layers.BatchNormalization()(s)
    c = layers.Conv2D(8, 3, padding="same")(b)
    a = layers.Add()([s, c])
    a = layers.Activation("relu")(a)
    g = layers.GlobalAveragePooling2D()(a)
    g = layers.Dropout(0.25)(g)
    out = layers.Dense(10)(g)
    return keras.Model(x, out)


BUILDERS = {"mlp": build_mlp, "cnn": build_cnn, "functional": build_functional}


@keras.saving.register_keras_serializable(package="custom")
class Scale(layers.Layer):
    """A layer no reader knows: multiplies by one learned scalar."""

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")

    def call(self, inputs):
        return inputs * self.scale


def compile_model(model):
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])


def fresh_model(name):
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    model = BUILDERS[name]()
    compile_model(model)
    return model


def as_input(model, pixels):
    """uint8 images [..., 28, 28] -> the model's float32 input (pixels / 255)."""
    x = pixels.astype(np.float32) / np.float32(255.0)
    if len(model.input_shape) == 4:
        x = x[..., np.newaxis]
    return x


def out_path(name):
    return os.path.join(OUT_DIR, name)


def write_text(name, text):
    with open(out_path(name), "w") as f:
        f.write(text)


def variable_listing(model):
    """Lines `h5_path  keras_path  shape  dtype  trainable` in the order Keras saves them
    (layers in model.layers order, named by class in snake_case; then the optimizer)."""
    lines = []
    used = {}
    for layer in model.layers:
        base = keras.src.utils.naming.to_snake_case(layer.__class__.__name__)
        group = base if base not in used else f"{base}_{used[base]}"
        used[base] = used.get(base, 0) + 1
        lines.append(f"layers/{group}/vars  (@name {layer.name!r}, class {layer.__class__.__name__})")
        for i, v in enumerate(layer._trainable_variables + layer._non_trainable_variables):
            lines.append(f"  layers/{group}/vars/{i}  {v.path}  {tuple(v.shape)}  {v.dtype}  trainable={v.trainable}")
    optimizer = model.optimizer
    lines.append(f"optimizer/vars  (@name {optimizer.name!r}; built={optimizer.built})")
    for i, v in enumerate(optimizer.variables):
        lines.append(f"  optimizer/vars/{i}  {v.path}  {tuple(v.shape)}  {v.dtype}")
    return "\n".join(lines) + "\n"


def save_model_files(name, model):
    model.save(out_path(f"{name}.keras"))
    model.save_weights(out_path(f"{name}.weights.h5"))
    with zipfile.ZipFile(out_path(f"{name}.keras")) as zf:
        for member in ("config.json", "metadata.json"):
            parsed = json.loads(zf.read(member))
            write_text(f"{name}.{member}", json.dumps(parsed, indent=2) + "\n")
    write_text(f"{name}.keras.structure.txt", keras3_file_dump.dump_keras(out_path(f"{name}.keras")))
    dump_weights_file(f"{name}.weights.h5")


def dump_weights_file(filename):
    with open(out_path(filename), "rb") as f:
        write_text(f"{filename}.structure.txt", keras3_file_dump.dump_h5_bytes(f.read(), filename))


def versions():
    return {"tensorflow_version": tf.__version__, "keras_version": keras.__version__,
            "h5py_version": h5py.__version__, "hdf5_version": h5py.version.hdf5_version,
            "generator": "tools/keras_goldens/make_keras3_goldens.py"}


def write_forward(name, model, test_pixels):
    x = as_input(model, test_pixels[:FORWARD_IMAGES])
    y = model(x, training=False).numpy()
    safetensors_numpy.write_file(out_path(f"{name}_forward.safetensors"), {"x": x, "y": y},
                                 dict(versions(), model=name, call="y = model(x, training=False)"))


def train(name, model, train_pixels, train_labels):
    losses, accuracies = [], []
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for step in range(TRAIN_STEPS):
        x = as_input(model, train_pixels[step])
        y = train_labels[step]
        # What the step's loss should be if train_on_batch reports the pre-update loss
        # of this batch alone (mlp and cnn have no dropout or batch norm, so training=True
        # changes nothing in the forward pass).
        expected = float(loss_fn(y, model(x, training=True)))
        loss, accuracy = model.train_on_batch(x, y)
        if abs(loss - expected) > 1e-5 * max(1.0, abs(expected)):
            raise AssertionError(f"{name} step {step}: train_on_batch returned {loss}, pre-update loss {expected}")
        losses.append(loss)
        accuracies.append(accuracy)
    safetensors_numpy.write_file(
        out_path(f"{name}_train.safetensors"),
        {"losses": np.array(losses, np.float32), "accuracies": np.array(accuracies, np.float32)},
        dict(versions(), model=name, steps=str(TRAIN_STEPS), batch=str(BATCH),
             data="train_batches.safetensors: step i uses train_pixels[i] / 255 (float32) and train_labels[i]",
             semantics="losses[i], accuracies[i] = model.train_on_batch(x_i, y_i): the batch's loss and accuracy"
                       " with the weights before step i's update (metrics are reset on every call)"))
    model.save_weights(out_path(f"{name}_trained.weights.h5"))
    dump_weights_file(f"{name}_trained.weights.h5")
    if name not in TRAINED_WEIGHTS_KEPT:
        os.remove(out_path(f"{name}_trained.weights.h5"))
    return losses


def write_bad_files():
    with open(out_path("cnn.keras"), "rb") as f:
        data = f.read()
    with open(out_path("bad_truncated.keras"), "wb") as f:
        f.write(data[:len(data) // 2])

    with zipfile.ZipFile(out_path("mlp.keras")) as source, \
            zipfile.ZipFile(out_path("bad_missing_weights.keras"), "w") as target:
        for member in ("metadata.json", "config.json"):
            target.writestr(member, source.read(member))

    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)
    model = keras.Sequential([keras.Input((4,)), Scale(), layers.Dense(2)])
    compile_model(model)
    model.save(out_path("bad_unknown_layer.keras"))
    with zipfile.ZipFile(out_path("bad_unknown_layer.keras")) as zf:
        write_text("bad_unknown_layer.config.json", json.dumps(json.loads(zf.read("config.json")), indent=2) + "\n")

    with h5py.File(out_path("bad_not_keras.h5"), "w") as f:
        f.create_dataset("images", data=np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4))
        f.create_dataset("labels", data=np.array([3, 7], np.int64))
        f.create_group("meta").attrs["source"] = "not a Keras file"

    shutil.copyfile(out_path("mlp.weights.h5"), out_path("bad_wrong_shape.weights.h5"))
    with h5py.File(out_path("bad_wrong_shape.weights.h5"), "r+") as f:
        kernel = f["layers/dense_1/vars/0"][()]
        del f["layers/dense_1/vars/0"]
        f["layers/dense_1/vars/0"] = np.ascontiguousarray(kernel.T)


def check_round_trip(name, model, test_pixels):
    """The files load back in Keras and give the same forward pass."""
    x = as_input(model, test_pixels[:FORWARD_IMAGES])
    y = model(x, training=False).numpy()
    loaded = keras.models.load_model(out_path(f"{name}.keras"))
    np.testing.assert_allclose(loaded(x, training=False).numpy(), y, atol=1e-6)
    other = fresh_model(name)
    other.load_weights(out_path(f"{name}.weights.h5"))
    np.testing.assert_allclose(other(x, training=False).numpy(), y, atol=1e-6)


def main():
    tf.config.experimental.enable_op_determinism()
    os.makedirs(OUT_DIR, exist_ok=True)
    train_x, train_y, test_x, _ = load_fashion_mnist(DATA_DIR)
    train_pixels = np.ascontiguousarray(train_x[:TRAIN_STEPS * BATCH].reshape(TRAIN_STEPS, BATCH, 28, 28))
    train_labels = train_y[:TRAIN_STEPS * BATCH].astype(np.int32).reshape(TRAIN_STEPS, BATCH)
    safetensors_numpy.write_file(out_path("train_batches.safetensors"),
                                 {"train_pixels": train_pixels, "train_labels": train_labels},
                                 dict(versions(), source="Fashion-MNIST training images and labels 0..319, in order",
                                      input="float32 pixels / 255; cnn adds a trailing channel dim of 1"))
    summary = []
    for name in BUILDERS:
        model = fresh_model(name)
        save_model_files(name, model)
        write_forward(name, model, test_x)
        check_round_trip(name, model, test_x)
        model = fresh_model(name)  # check_round_trip built others; names must be the saved ones
        model.load_weights(out_path(f"{name}.weights.h5"))
        listing = "# before training\n" + variable_listing(model)
        if name in TRAINED_MODELS:
            losses = train(name, model, train_pixels, train_labels)
            listing += "\n# after the training steps (the optimizer is built)\n" + variable_listing(model)
            summary.append(f"{name}: losses {losses[0]:.6f} -> {losses[-1]:.6f}")
        write_text(f"{name}.variables.txt", listing)
        if name not in WEIGHTS_FILES_KEPT:
            os.remove(out_path(f"{name}.weights.h5"))
    write_bad_files()

    total = 0
    for filename in sorted(os.listdir(OUT_DIR)):
        size = os.path.getsize(out_path(filename))
        total += size
        print(f"{size:>9}  {filename}")
    print(f"{total:>9}  total")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
