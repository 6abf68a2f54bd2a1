"""What the Python peers of bench_training_throughput
(torch_training_throughput.py, tf_training_throughput.py) share: the
command-line arguments of a run, as the C++ bench takes them, and the
Fashion-MNIST training files as raw bytes, the same images in the same order
as accel's load_fashion_mnist reads (gzip-compressed IDX files from Debian's
dataset-fashion-mnist, or $ACCEL_FASHION_MNIST_DIR)."""
import gzip
import os
import struct

DATA_DIR = os.environ.get("ACCEL_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def add_run_arguments(parser, models):
    """The arguments every peer takes: model, batch, timing windows, data size, threads."""
    parser.add_argument("--model", choices=models, default="cnn")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--windows", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--samples", type=int, default=60000)
    parser.add_argument("--threads", type=int, default=2)


def read_training_files(samples):
    """(pixels, labels, count, rows, cols) of the first `samples` training
    images (uint8 bytes, row-major), or None when the files are not there."""
    images_path = os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")
    labels_path = os.path.join(DATA_DIR, "train-labels-idx1-ubyte.gz")
    if not (os.path.exists(images_path) and os.path.exists(labels_path)):
        return None
    with gzip.open(images_path, "rb") as f:
        magic, count, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051, magic
        count = min(count, samples)
        pixels = bytearray(f.read(count * rows * cols))
    with gzip.open(labels_path, "rb") as f:
        magic, _ = struct.unpack(">II", f.read(8))
        assert magic == 2049, magic
        labels = bytearray(f.read(count))
    return pixels, labels, count, rows, cols
