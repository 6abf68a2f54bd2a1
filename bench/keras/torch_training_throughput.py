#!/usr/bin/python3
"""PyTorch peer of bench_training_throughput: the Keras tutorial CNN / MLP and
a small ResNet, trained the way Model.fit trains them, samples/s on the CPU
or (--device cuda) the GPU.

    /usr/bin/python3 bench/keras/torch_training_throughput.py --model cnn --batch 32 --threads 2
    python3 bench/keras/torch_training_throughput.py --model resnet --batch 256 --device cuda

Same model (CNN: Conv2d(1, 32, 3) relu -> MaxPool2d(2) -> flatten ->
Linear(5408, 10) softmax; MLP: flatten -> Linear(784, 128) relu ->
Linear(128, 10) softmax; ResNet: see Resnet below), same weights' shapes
(the RESULT lines' trainable_params agree), same optimizer (Adam with
Keras's defaults: lr 1e-3, betas 0.9 / 0.999, eps 1e-7), same loss as
Keras's sparse_categorical_crossentropy on a softmax output (log of the
probabilities clipped to [1e-7, 1 - 1e-7], then softmax cross-entropy), and
the same per-step bookkeeping as Keras's fit: a shuffled batch gathered from
the whole training set every step, the running loss (one host read per step,
.item()) and the running accuracy. The input is [N, 1, 28, 28]: for one
channel that is the same bytes as Keras's NHWC [N, 28, 28, 1].

On the GPU the data stays on the host, as accel's fit keeps it: each step
gathers its batch there and copies it to the GPU. Precision: float32 with
TF32 off for matmuls and cuDNN convolutions (accel's default on the GPU).

Timing: `warmup` + `windows` windows of `steps` steps, each window closed by
torch.cuda.synchronize() on the GPU; the warm-up windows are dropped and the
median window is printed as a RESULT line, as the C++ bench. CPU figures:
Debian's python3-torch (bench/keras/setup_bench.sh), run with
/usr/bin/python3, not a pyenv python.

--compile runs the model through torch.compile(mode="reduce-overhead"): the
forward and backward passes compiled and replayed as CUDA graphs on the GPU,
the peer of accel's compiled steps (PyTorch 2 only; the first steps, in the
warm-up windows, compile).
"""
import argparse
import os
import re
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from training_peer import add_run_arguments, read_training_files

EPSILON = 1e-7  # keras.backend.epsilon()


def load_data(samples):
    files = read_training_files(samples)
    if files is not None:
        pixels, labels, count, rows, cols = files
        x = torch.frombuffer(pixels, dtype=torch.uint8).reshape(count, 1, rows, cols).float() / 255.0
        y = torch.frombuffer(labels, dtype=torch.uint8).long()
        return x, y, "fashion_mnist"
    generator = torch.Generator().manual_seed(7)
    x = torch.rand(samples, 1, 28, 28, generator=generator)
    y = (torch.arange(samples) * 7919) % 10
    return x, y, "random"


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 32, 3)
        self.dense = nn.Linear(32 * 13 * 13, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return F.softmax(self.dense(torch.flatten(x, 1)), dim=1)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(28 * 28, 128)
        self.dense = nn.Linear(128, 10)

    def forward(self, x):
        return F.softmax(self.dense(F.relu(self.hidden(torch.flatten(x, 1)))), dim=1)


def keras_batch_norm(channels):
    # Keras's defaults: epsilon 1e-3, moving average momentum 0.99 (PyTorch
    # counts momentum the other way round: 1 - 0.99).
    return nn.BatchNorm2d(channels, eps=1e-3, momentum=0.01)


class ResidualBlock(nn.Module):
    """The C++ bench's ResidualBlock: relu(bn(conv3x3(relu(bn(conv3x3(x))))) + shortcut),
    bias-free convolutions, the stride on the first, shortcut = x or bn(conv1x1(x)).
    Keras's "same" padding pads a stride-2 3x3 convolution of an even size by
    0 before and 1 after; PyTorch's padding=1 pads 1 on both sides: the same
    output shape and work, a one-pixel shift of the sampling grid."""

    def __init__(self, in_channels, filters, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, filters, 3, stride=stride, padding=1, bias=False)
        self.bn1 = keras_batch_norm(filters)
        self.conv2 = nn.Conv2d(filters, filters, 3, padding=1, bias=False)
        self.bn2 = keras_batch_norm(filters)
        self.shortcut = nn.Identity()
        if stride != 1 or in_channels != filters:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, filters, 1, stride=stride, bias=False),
                                          keras_batch_norm(filters))

    def forward(self, x):
        residual = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(residual + self.shortcut(x))


class Resnet(nn.Module):
    """Conv stem (32 filters 3x3, batch norm, relu), residual blocks of 32
    (stride 1), 64 (stride 2) and 128 (stride 2) filters, global average
    pooling, Linear(128, 10) softmax: 28x28 -> 28x28 -> 14x14 -> 7x7."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 32, 3, padding=1, bias=False)
        self.stem_bn = keras_batch_norm(32)
        self.blocks = nn.Sequential(ResidualBlock(32, 32, 1), ResidualBlock(32, 64, 2), ResidualBlock(64, 128, 2))
        self.dense = nn.Linear(128, 10)

    def forward(self, x):
        x = self.blocks(F.relu(self.stem_bn(self.stem(x))))
        return F.softmax(self.dense(torch.mean(x, dim=(2, 3))), dim=1)


MODELS = {"cnn": Cnn, "mlp": Mlp, "resnet": Resnet}


def keras_sparse_categorical_crossentropy(probabilities, labels):
    logits = torch.log(torch.clamp(probabilities, EPSILON, 1.0 - EPSILON))
    return F.cross_entropy(logits, labels)


def disable_tf32():
    """Exact float32 matmuls and convolutions, whichever API this PyTorch has
    (2.9 and later: fp32_precision; before: allow_tf32). Returns how it is set."""
    matmul, conv = torch.backends.cuda.matmul, torch.backends.cudnn
    # A version test, not hasattr: older PyTorch answers an unknown
    # torch.backends.cuda.matmul attribute with AssertionError.
    major, minor = (int(part) for part in re.findall(r"\d+", torch.__version__)[:2])
    if (major, minor) >= (2, 9):
        matmul.fp32_precision = "ieee"
        conv.conv.fp32_precision = "ieee"
        return f"matmul:{matmul.fp32_precision},conv:{conv.conv.fp32_precision}"
    matmul.allow_tf32 = False
    conv.allow_tf32 = False
    return f"matmul_allow_tf32:{matmul.allow_tf32},cudnn_allow_tf32:{conv.allow_tf32}"


def train_step(model, optimizer, x, y, device):
    """One step on a batch on the host: (loss, correct predictions, batch size)."""
    xb, yb = x.to(device), y.to(device)
    optimizer.zero_grad(set_to_none=True)
    probabilities = model(xb)
    loss = keras_sparse_categorical_crossentropy(probabilities, yb)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        correct = int((probabilities.argmax(dim=1) == yb).sum())
    return loss.item(), correct, yb.shape[0]


def print_profile(model, optimizer, x, y, args, device):
    """--profile: args.steps more steps under torch.profiler, the kernels and
    ops that took the most time on the device (or the host), per step."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profile:
        for step in range(args.steps):
            index = torch.arange(step * args.batch, (step + 1) * args.batch) % x.shape[0]
            train_step(model, optimizer, x[index], y[index], device)
        if args.device == "cuda":
            torch.cuda.synchronize()
    events = profile.key_averages()
    key = "self_device_time_total" if args.device == "cuda" else "self_cpu_time_total"
    print(f"profile torch {args.model} batch {args.batch}: {args.steps} steps, sorted by {key}")
    print(events.table(sort_by=key, row_limit=30, max_name_column_width=70))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(parser, sorted(MODELS))
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--compile", action="store_true", help='torch.compile(mode="reduce-overhead")')
    parser.add_argument("--profile", action="store_true",
                        help="after the timed windows, --steps steps under torch.profiler; prints the top ops")
    args = parser.parse_args()
    if args.compile and not hasattr(torch, "compile"):
        print(f"skipped: torch {torch.__version__} has no torch.compile")
        return

    if args.device == "cuda" and not torch.cuda.is_available():
        print("skipped: no GPU: torch.cuda.is_available() is False")
        return
    precision = disable_tf32()
    device = torch.device(args.device)
    synchronize = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x, y, data_name = load_data(args.samples)
    model = MODELS[args.model]().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=EPSILON)
    model.train()
    trainable_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if args.compile:
        model = torch.compile(model, mode="reduce-overhead")

    n = x.shape[0]
    batches_per_pass = (n + args.batch - 1) // args.batch
    order = torch.randperm(n)
    position = 0
    loss_sum = 0.0
    correct = 0
    seen = 0
    times = []
    for _ in range(args.warmup + args.windows):
        loss_sum, correct, seen = 0.0, 0, 0  # Keras resets the metrics each epoch
        synchronize()
        start = time.perf_counter()
        for _ in range(args.steps):
            if position == batches_per_pass:  # next shuffled pass, as fit with steps_per_epoch
                order = torch.randperm(n)
                position = 0
            index = order[position * args.batch:(position + 1) * args.batch]
            position += 1
            loss, step_correct, batch = train_step(model, optimizer, x[index], y[index], device)
            loss_sum += loss * batch
            correct += step_correct
            seen += batch
        synchronize()  # the window's last update may still be queued on the GPU
        times.append(time.perf_counter() - start)
    if args.profile:
        print_profile(model, optimizer, x, y, args, device)

    rates = [args.steps * args.batch / t for t in times[args.warmup:]]
    rate = statistics.median(rates)
    print("windows (samples/s): " + " ".join(f"{r:.0f}" for r in rates))
    gpu = f" gpu={torch.cuda.get_device_name(device).replace(' ', '_')}" if args.device == "cuda" else ""
    print(f"RESULT framework=torch model={args.model} batch={args.batch} samples_per_s={rate:.1f} "
          f"step_ms={1e3 * args.batch / rate:.3f} device={args.device}{gpu} trainable_params={trainable_params} "
          f"tf32_settings={precision} threads={torch.get_num_threads()} "
          f"omp_wait_policy={os.environ.get('OMP_WAIT_POLICY', 'default')} data={data_name} "
          f"final_loss={loss_sum / max(seen, 1):.4f} torch={torch.__version__} compiled={int(args.compile)}")


if __name__ == "__main__":
    main()
