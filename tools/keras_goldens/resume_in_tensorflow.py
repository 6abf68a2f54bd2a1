#!/usr/bin/env python3
"""Resumes training of a .keras file in TensorFlow 2.21 (Keras 3.15): loads it
compiled, with its optimizer's state (keras.models.load_model), runs
train_on_batch on each batch of a safetensors file (x [steps, batch, ...],
y [steps, batch]) and writes what happened, for C++ tests to compare with
accel resuming the same file:

    bench/.venv-tensorflow/bin/python tools/keras_goldens/resume_in_tensorflow.py MODEL.keras BATCHES.safetensors OUT.safetensors

OUT holds iterations_before (the optimizer's step count as loaded), losses
(train_on_batch's, per batch), iterations_after and weight_<i> (model.weights
after the batches). Exit status 2 when the file does not load compiled.
"""
import os
import sys

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import keras  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_numpy  # noqa: E402
import zoo_models  # noqa: E402,F401 -- registers accel's own layer (accel>PositionEmbedding)


def main():
    model_path, batches_path, out_path = sys.argv[1:4]
    model = keras.models.load_model(model_path)
    if not model.compiled or model.optimizer is None:
        print(f"{model_path}: loaded uncompiled")
        return 2
    batches, _ = safetensors_numpy.read_file(batches_path)
    before = int(model.optimizer.iterations.numpy())
    losses = []
    for step in range(batches["x"].shape[0]):
        result = model.train_on_batch(batches["x"][step], batches["y"][step])
        losses.append(float(result[0] if isinstance(result, (list, tuple)) else result))
    tensors = {"iterations_before": np.array(before, np.int64), "losses": np.array(losses, np.float32),
               "iterations_after": np.array(int(model.optimizer.iterations.numpy()), np.int64)}
    for index, weight in enumerate(model.weights):
        tensors[f"weight_{index}"] = np.asarray(weight.numpy(), np.float32)
    safetensors_numpy.write_file(out_path, tensors, {"keras_version": keras.__version__})
    print(f"resumed {model_path} at iteration {before}: losses {losses}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
