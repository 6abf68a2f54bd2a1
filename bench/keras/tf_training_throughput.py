"""TensorFlow peer of bench_training_throughput: the Keras tutorial CNN and
MLP trained by TensorFlow's own Keras (TensorFlow 2.21 CPU from PyPI, in the
virtual environment bench/keras/setup_tensorflow.sh makes), samples/s.

    bench/.venv-tensorflow/bin/python bench/keras/tf_training_throughput.py --model cnn --batch 256 --threads 2
    TF_ENABLE_ONEDNN_OPTS=1 ... --jit-compile true --steps-per-execution 10

Same model (CNN: Conv2D(32, 3x3, relu) -> MaxPooling2D(2) -> Flatten ->
Dense(10, softmax), 54,410 parameters; MLP: Flatten -> Dense(128, relu) ->
Dense(10, softmax)), same optimizer (Adam, Keras's defaults), loss
(sparse_categorical_crossentropy), metric (accuracy), data (Fashion-MNIST
x / 255, or uniform random images when it is not installed) and thread count
(intra-op threads; inter-op 1). The batches come from a shuffled, repeated
tf.data pipeline, as a TensorFlow user feeds fit.

Timing: one fit of `warmup` + `windows` epochs of `steps` batches; a
callback times each epoch; the warm-up epochs are dropped and the median
window is printed as a RESULT line, as the C++ bench does.
"""
import argparse
import os
import statistics
import time

import numpy as np

from training_peer import add_run_arguments, read_training_files



def load_data(samples):
    files = read_training_files(samples)
    if files is not None:
        pixels, labels, count, rows, cols = files
        x = np.frombuffer(pixels, dtype=np.uint8).reshape(count, rows, cols).astype(np.float32) / 255.0
        return x, np.frombuffer(labels, dtype=np.uint8).astype(np.int32), "fashion_mnist"
    generator = np.random.default_rng(7)
    x = generator.random((samples, 28, 28), dtype=np.float32)
    y = ((np.arange(samples) * 7919) % 10).astype(np.int32)
    return x, y, "random"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(parser, ["cnn", "mlp"])
    parser.add_argument("--jit-compile", choices=["auto", "true", "false"], default="auto")
    parser.add_argument("--steps-per-execution", type=int, default=1)
    args = parser.parse_args()

    import tensorflow as tf  # after argparse: --help needs no TensorFlow

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(1)
    x, y, data_name = load_data(args.samples)
    layers = tf.keras.layers
    if args.model == "cnn":
        x = x.reshape(-1, 28, 28, 1)
        model = tf.keras.Sequential([
            layers.Input((28, 28, 1)),
            layers.Conv2D(32, (3, 3), activation="relu"),
            layers.MaxPooling2D((2, 2)),
            layers.Flatten(),
            layers.Dense(10, activation="softmax"),
        ])
    else:
        model = tf.keras.Sequential([
            layers.Input((28, 28)),
            layers.Flatten(),
            layers.Dense(128, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ])
    jit_compile = {"auto": "auto", "true": True, "false": False}[args.jit_compile]
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit_compile, steps_per_execution=args.steps_per_execution)
    dataset = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=1, reshuffle_each_iteration=True)
               .repeat().batch(args.batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE))

    class EpochTimer(tf.keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seconds, self.losses = [], []

        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append(time.perf_counter() - self.start)
            self.losses.append(logs["loss"])

    timer = EpochTimer()
    model.fit(dataset, epochs=args.warmup + args.windows, steps_per_epoch=args.steps, verbose=0, callbacks=[timer])
    rates = [args.steps * args.batch / s for s in timer.seconds[args.warmup:]]
    rate = statistics.median(rates)
    print("windows (samples/s): " + " ".join(f"{r:.0f}" for r in rates))
    print(f"RESULT framework=tensorflow model={args.model} batch={args.batch} samples_per_s={rate:.1f} "
          f"step_ms={1e3 * args.batch / rate:.3f} trainable_params={model.count_params()} "
          f"threads={args.threads} onednn={os.environ.get('TF_ENABLE_ONEDNN_OPTS', 'as_installed')} "
          f"jit_compile={args.jit_compile} steps_per_execution={args.steps_per_execution} data={data_name} "
          f"final_loss={timer.losses[-1]:.4f} tensorflow={tf.__version__}")


if __name__ == "__main__":
    main()
