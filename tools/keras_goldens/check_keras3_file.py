#!/usr/bin/env python3
"""Loads a `.keras` file with Keras 3 (keras.models.load_model) and prints its
summary; with --forward, runs the model on that safetensors file's `x` and
compares with its `y`. For C++ tests to check, where TensorFlow is installed,
that a file accel wrote is one Keras reads and computes the same thing from.

    bench/.venv-tensorflow/bin/python tools/keras_goldens/check_keras3_file.py MODEL.keras \\
        [--forward tests/keras/golden/keras3/mlp_forward.safetensors] [--out REPORT.txt]

Exit status: 0 when the file loads (and the outputs agree within --tolerance,
max abs diff, default 1e-5), 1 when they disagree, 2 when the file does not
load or the forward file does not fit the model. --out writes the same report
that is printed.
"""
import argparse
import os
import sys
import traceback

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import keras  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_numpy  # noqa: E402
import zoo_models  # noqa: E402,F401 -- registers accel's own layer (accel>PositionEmbedding)


def check(args, report):
    try:
        model = keras.models.load_model(args.path, compile=not args.no_compile)
    except Exception:  # noqa: BLE001 -- any failure to load is the answer
        report.append(f"LOAD FAILED: {args.path}")
        report.append(traceback.format_exc())
        return 2
    report.append(f"loaded {args.path} with Keras {keras.__version__}: {type(model).__name__} {model.name!r}")
    model.summary(print_fn=lambda line, **_: report.append(line))
    if getattr(model, "optimizer", None) is not None and model.compiled:
        report.append(f"compiled: optimizer {type(model.optimizer).__name__}, loss {model.loss!r}")
    if not args.forward:
        return 0
    tensors, _ = safetensors_numpy.read_file(args.forward)
    x, expected = tensors["x"], tensors["y"]
    try:
        actual = np.asarray(model(x, training=False))
    except Exception:  # noqa: BLE001
        report.append(f"FORWARD FAILED on x {x.shape} from {args.forward}")
        report.append(traceback.format_exc())
        return 2
    if actual.shape != expected.shape:
        report.append(f"FORWARD SHAPE MISMATCH: model gives {actual.shape}, {args.forward} has y {expected.shape}")
        return 2
    diff = float(np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64))))
    verdict = "OK" if diff <= args.tolerance else "MISMATCH"
    report.append(f"forward {verdict}: max |model(x) - y| = {diff:.3g} (tolerance {args.tolerance:g}) over y {expected.shape}")
    return 0 if diff <= args.tolerance else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a .keras file")
    parser.add_argument("--forward", help="a safetensors file holding x and y = model(x, training=False)")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--no-compile", action="store_true", help="load without restoring the compile config")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args()
    report = []
    status = check(args, report)
    text = "\n".join(report) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
