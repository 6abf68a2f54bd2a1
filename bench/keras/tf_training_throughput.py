"""TensorFlow peer of bench_training_throughput: the Keras tutorial CNN and
MLP and the small ResNet trained by TensorFlow's own Keras (TensorFlow 2.21
CPU from PyPI, in the virtual environment bench/keras/setup_tensorflow.sh
makes), samples/s, under a mixed-precision policy if asked (--policy).

    bench/.venv-tensorflow/bin/python bench/keras/tf_training_throughput.py --model cnn --batch 256 --threads 2
    TF_ENABLE_ONEDNN_OPTS=1 ... --jit-compile true --steps-per-execution 10

Same model (CNN: Conv2D(32, 3x3, relu) -> MaxPooling2D(2) -> Flatten ->
Dense(10, softmax), 54,410 parameters; MLP: Flatten -> Dense(128, relu) ->
Dense(10, softmax); the small ResNet: Conv2D(32, 3x3, same, no bias) -> BN ->
ReLU -> residual blocks of 32, 64 (stride 2) and 128 (stride 2) filters ->
global average pooling -> Dense(10, softmax)), same optimizer (Adam, Keras's defaults), loss
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
    add_run_arguments(parser, ["cnn", "mlp", "resnet"])
    parser.add_argument("--policy", default="float32", help="keras.mixed_precision global policy, e.g. mixed_bfloat16")
    parser.add_argument("--jit-compile", choices=["auto", "true", "false"], default="auto")
    parser.add_argument("--steps-per-execution", type=int, default=1)
    args = parser.parse_args()

    import tensorflow as tf  # after argparse: --help needs no TensorFlow

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(1)
    x, y, data_name = load_data(args.samples)
    layers = tf.keras.layers
    tf.keras.mixed_precision.set_global_policy(args.policy)

    def residual_block(x, filters, stride):
        """bench_training_throughput's ResidualBlock: He et al.'s basic block."""
        y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
        y = layers.ReLU()(layers.BatchNormalization()(y))
        y = layers.BatchNormalization()(layers.Conv2D(filters, 3, padding="same", use_bias=False)(y))
        shortcut = x
        if stride != 1 or x.shape[-1] != filters:
            shortcut = layers.Conv2D(filters, 1, strides=stride, padding="valid", use_bias=False)(x)
            shortcut = layers.BatchNormalization()(shortcut)
        return layers.ReLU()(layers.Add()([y, shortcut]))

    if args.model == "resnet":
        x = x.reshape(-1, 28, 28, 1)
        inputs = layers.Input((28, 28, 1))
        h = layers.Conv2D(32, 3, padding="same", use_bias=False)(inputs)
        h = layers.Activation("relu")(layers.BatchNormalization()(h))
        for filters, stride in ((32, 1), (64, 2), (128, 2)):
            h = residual_block(h, filters, stride)
        h = layers.GlobalAveragePooling2D()(h)
        model = tf.keras.Model(inputs, layers.Dense(10, activation="softmax")(h))
    elif args.model == "cnn":
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
          f"jit_compile={args.jit_compile} steps_per_execution={args.steps_per_execution} policy={args.policy} "
          f"data={data_name} "
          f"final_loss={timer.losses[-1]:.4f} tensorflow={tf.__version__}")


if __name__ == "__main__":
    main()
