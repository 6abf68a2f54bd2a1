#!/usr/bin/env python3
"""Trains one zoo model on its Fashion-MNIST task in Keras and prints the test
accuracy after each epoch: the reference for what the C++ zoo should reach.

    CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 bench/.venv-tensorflow/bin/python \\
        tools/keras_goldens/train_zoo_check.py --model resnet_small_28x28 --epochs 3 --threads 2

Models: resnet_small_28x28 and vit_fashion_mnist_p4/p7 (images scaled to
[0, 1], shape (28, 28, 1)); transformer_encoder_classifier (the token task,
zoo_models.fashion_mnist_tokens). Adam (Keras defaults, lr 1e-3), batch 128,
sparse categorical cross-entropy, a seeded shuffle. --decay-epoch E divides the
learning rate by 10 from epoch E on (a step schedule, as a
LearningRateScheduler would). --train-limit trains on the first N training
images only, for a quick look.
"""
import argparse
import gzip
import os
import sys
import time

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_fashion_mnist(directory):
    def find(stem):
        for name in (stem, stem + ".gz"):
            if os.path.exists(os.path.join(directory, name)):
                return os.path.join(directory, name)
        raise FileNotFoundError(f"{stem}[.gz] not in {directory}")
    return (read_idx(find("train-images-idx3-ubyte")), read_idx(find("train-labels-idx1-ubyte")),
            read_idx(find("t10k-images-idx3-ubyte")), read_idx(find("t10k-labels-idx1-ubyte")))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train-limit", type=int, default=0)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--decay-epoch", type=int, default=0, help="learning rate / 10 from this epoch on (0: never)")
    parser.add_argument("--data",
                        default=os.environ.get("ACCEL_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"))
    args = parser.parse_args()

    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    import keras
    import zoo_models

    train_x, train_y, test_x, test_y = load_fashion_mnist(args.data)
    if args.train_limit:
        train_x, train_y = train_x[:args.train_limit], train_y[:args.train_limit]
    if args.model == "transformer_encoder_classifier":
        train_x, test_x = zoo_models.fashion_mnist_tokens(train_x), zoo_models.fashion_mnist_tokens(test_x)
    else:
        train_x = (train_x.astype(np.float32) / 255.0)[..., None]
        test_x = (test_x.astype(np.float32) / 255.0)[..., None]
    train_y, test_y = train_y.astype(np.int32), test_y.astype(np.int32)

    keras.utils.set_random_seed(42)
    model = zoo_models.build(args.model)
    model.compile(optimizer=keras.optimizers.Adam(args.learning_rate), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    print(f"{args.model}: {model.count_params()} parameters, {len(train_x)} training samples")
    for epoch in range(1, args.epochs + 1):
        learning_rate = args.learning_rate / (10 if args.decay_epoch and epoch >= args.decay_epoch else 1)
        model.optimizer.learning_rate.assign(learning_rate)
        start = time.perf_counter()
        history = model.fit(train_x, train_y, batch_size=args.batch, epochs=1, shuffle=True, verbose=0)
        seconds = time.perf_counter() - start
        _, accuracy = model.evaluate(test_x, test_y, batch_size=512, verbose=0)
        print(f"epoch {epoch} (lr {learning_rate:g}): loss {history.history['loss'][0]:.4f} train accuracy "
              f"{history.history['accuracy'][0]:.4f} test accuracy {accuracy:.4f} ({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
