#!/usr/bin/python3
"""PyTorch peer of bench_zoo_training: the model zoo's resnet_small_28x28 and
vit_fashion_mnist (4x4 patches), written to match examples/model_zoo and
tools/keras_goldens/zoo_models.py layer by layer, trained the way Model.fit
trains them, samples/s on the CPU.

    /usr/bin/python3 bench/models/torch_zoo_training.py --model vit_fashion_mnist --batch 128 --threads 2

The same models (the RESULT line's trainable_params and
non_trainable_params equal accel's):

- resnet_small_28x28: Conv2d(1, 32, 3, same, bias) + BN + ReLU, then one
  basic block per stage (32 filters stride 1 with an identity shortcut, 64
  and 128 filters stride 2 with a 1x1 convolution + BN shortcut), global
  average pooling, Linear(128, 10). Every convolution has a bias, as
  keras.applications' ResNets. BatchNorm2d with Keras's semantics: epsilon
  1.001e-5, moving averages with Keras momentum 0.99 (PyTorch's momentum
  counts the other way: 0.01). Keras's "same" padding of a stride-2 3x3
  convolution on an even size pads 0 rows / columns before and 1 after
  (TensorFlow's SAME); it is written as that explicit F.pad, not PyTorch's
  symmetric padding=1 (same shapes and work, a shifted grid).
- vit_fashion_mnist: Conv2d(1, 64, 4, stride 4) patch embedding, the 7x7
  patches read row-major as Keras's Reshape((49, 64)) of NHWC reads them, a
  learned (49, 64) position embedding, 4 pre-norm blocks
  (LayerNorm(eps 1e-6) -> 4-head self-attention, key_dim 16, with biases on
  the query, key, value and output projections -> residual; LayerNorm(eps
  1e-6) -> Linear(64, 128) -> exact (erf) GELU -> Linear(128, 64) ->
  residual), a final LayerNorm(eps 1e-6), the mean over the 49 patches,
  Linear(64, 10). Attention is nn.MultiheadAttention(64, 4, batch_first=True)
  called (x, x, x, need_weights=False): the same function and the same
  16,640 weights as Keras's MultiHeadAttention(4, 16) (PyTorch packs the
  query, key and value kernels into one in_proj_weight), no dropout.

Both models end in softmax in Keras, trained with
sparse_categorical_crossentropy: the negative log-likelihood of the softmax.
Here the models return the logits and the loss is nn.CrossEntropyLoss on
them (log-softmax + NLL in one op), which is that same loss (Keras 2 itself
takes the logits under a softmax output for this loss). Optimizer: Adam, lr
1e-3, betas 0.9 / 0.999, eps 1e-7 (Keras's epsilon; PyTorch adds it to
sqrt(v_hat), Keras to sqrt(v) before the bias correction of the step size: a
rounding-level difference that costs the same). The weights are initialized
as Keras does where the shapes map one to one (glorot_uniform kernels, zero
biases, the position embedding uniform in [-0.05, 0.05]); attention keeps
PyTorch's own initialization. Initialization does not change the step time.

The per-step bookkeeping is Keras fit's (as bench/keras/torch_training_throughput.py):
a shuffled batch gathered from the whole training set every step, the
running loss (one .item() per step) and the running accuracy. The data are
loaded before any timing (bench/keras/training_peer.py: Fashion-MNIST, the
same files and order as accel). Timing: `warmup` + `windows` windows of
`steps` steps, the warm-up windows dropped, the median window printed on a
RESULT line. --profile: after the warm-up windows, `steps` steps under
torch.profiler, self CPU time per op (the top --top rows).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "keras"))
from training_peer import add_run_arguments  # noqa: E402
from torch_training_throughput import EPSILON, load_data  # noqa: E402

BN_EPSILON = 1.001e-5  # keras.applications' ResNet value
BN_MOMENTUM = 1.0 - 0.99  # Keras's momentum 0.99 in PyTorch's convention
LN_EPSILON = 1e-6


def batch_norm(channels):
    return nn.BatchNorm2d(channels, eps=BN_EPSILON, momentum=BN_MOMENTUM)


class KerasSameConv2d(nn.Conv2d):
    """Conv2d with TensorFlow's SAME padding: (total // 2) before and the rest
    after, per spatial axis; symmetric padding when the total is even."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=0)

    def forward(self, x):
        pads = []
        for size, kernel, stride in reversed(list(zip(x.shape[2:], self.kernel_size, self.stride))):
            output = (size + stride - 1) // stride
            total = max((output - 1) * stride + kernel - size, 0)
            pads += [total // 2, total - total // 2]
        if pads[0] == pads[1] and pads[2] == pads[3]:
            return F.conv2d(x, self.weight, self.bias, self.stride, (pads[2], pads[0]))
        return super().forward(F.pad(x, pads))


class BasicBlock(nn.Module):
    """zoo basic_block: shortcut (identity, or 1x1 conv stride + BN when the
    shape changes) + BN(conv3x3(ReLU(BN(conv3x3 stride(x))))), then ReLU."""

    def __init__(self, in_channels, filters, stride):
        super().__init__()
        self.shortcut = nn.Identity()
        if stride != 1 or in_channels != filters:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, filters, 1, stride=stride), batch_norm(filters))
        self.conv1 = KerasSameConv2d(in_channels, filters, 3, stride)
        self.bn1 = batch_norm(filters)
        self.conv2 = KerasSameConv2d(filters, filters, 3)
        self.bn2 = batch_norm(filters)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.shortcut(x) + self.bn2(self.conv2(y)))


class ResnetSmall28x28(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = KerasSameConv2d(1, 32, 3)
        self.bn1 = batch_norm(32)
        self.stages = nn.Sequential(BasicBlock(32, 32, 1), BasicBlock(32, 64, 2), BasicBlock(64, 128, 2))
        self.predictions = nn.Linear(128, classes)

    def forward(self, x):  # logits
        x = self.stages(F.relu(self.bn1(self.conv1(x))))
        return self.predictions(torch.mean(x, dim=(2, 3)))


class EncoderBlock(nn.Module):
    """Pre-norm: x + MHA(LN(x)), then x + Dense(GELU(Dense(LN(x))))."""

    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim, eps=LN_EPSILON)
        self.mha = nn.MultiheadAttention(dim, heads, bias=True, batch_first=True)
        self.ln2 = nn.LayerNorm(dim, eps=LN_EPSILON)
        self.mlp_dense1 = nn.Linear(dim, mlp)
        self.mlp_dense2 = nn.Linear(mlp, dim)

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.mha(y, y, y, need_weights=False)[0]
        y = self.mlp_dense2(F.gelu(self.mlp_dense1(self.ln2(x)), approximate="none"))
        return x + y


class VitFashionMnist(nn.Module):
    def __init__(self, patch_size=4, image_size=28, channels=1, classes=10, dim=64, heads=4, mlp=128, blocks=4):
        super().__init__()
        patches = (image_size // patch_size) ** 2
        self.patch_embedding = nn.Conv2d(channels, dim, patch_size, stride=patch_size)
        self.position_embedding = nn.Parameter(torch.empty(patches, dim).uniform_(-0.05, 0.05))
        self.blocks = nn.Sequential(*(EncoderBlock(dim, heads, mlp) for _ in range(blocks)))
        self.final_ln = nn.LayerNorm(dim, eps=LN_EPSILON)
        self.predictions = nn.Linear(dim, classes)

    def forward(self, x):  # logits
        x = self.patch_embedding(x).flatten(2).transpose(1, 2)  # (N, dim, 7, 7) -> (N, 49, dim), NHWC's order
        x = self.final_ln(self.blocks(x + self.position_embedding))
        return self.predictions(torch.mean(x, dim=1))


MODELS = {"resnet_small_28x28": ResnetSmall28x28, "vit_fashion_mnist": VitFashionMnist}


def keras_initialization(model):
    """glorot_uniform kernels and zero biases; attention (its in_proj and its
    out_proj, a Linear subclass) keeps PyTorch's own initialization."""
    attention_projections = {id(m.out_proj) for m in model.modules() if isinstance(m, nn.MultiheadAttention)}
    for module in model.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)) and id(module) not in attention_projections:
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(parser, sorted(MODELS))
    parser.add_argument("--profile", action="store_true",
                        help="after the warm-up windows, `steps` steps under torch.profiler: self CPU time per op")
    parser.add_argument("--top", type=int, default=15)
    parser.set_defaults(model="resnet_small_28x28", batch=128, steps=10, windows=5, warmup=1)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x, y, data_name = load_data(args.samples)  # before any timing
    model = MODELS[args.model]()
    keras_initialization(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=EPSILON)
    loss_function = nn.CrossEntropyLoss()
    model.train()

    n = x.shape[0]
    batches_per_pass = (n + args.batch - 1) // args.batch
    order = torch.randperm(n)
    position = 0
    loss_sum, correct, seen = 0.0, 0, 0
    times = []
    profiler = None
    for window in range(args.warmup + args.windows):
        if args.profile and window == args.warmup:
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            profiler.__enter__()
        loss_sum, correct, seen = 0.0, 0, 0  # Keras resets the metrics each epoch
        start = time.perf_counter()
        for _ in range(args.steps):
            if position == batches_per_pass:  # next shuffled pass, as fit with steps_per_epoch
                order = torch.randperm(n)
                position = 0
            index = order[position * args.batch:(position + 1) * args.batch]
            position += 1
            xb, yb = x[index], y[index]
            optimizer.zero_grad(set_to_none=True)
            logits = model(xb)
            loss = loss_function(logits, yb)
            loss.backward()
            optimizer.step()
            batch = yb.shape[0]
            loss_sum += loss.item() * batch
            with torch.no_grad():
                correct += int((logits.argmax(dim=1) == yb).sum())
            seen += batch
        times.append(time.perf_counter() - start)
        if profiler is not None:
            profiler.__exit__(None, None, None)
            print(f"profile {args.model} batch {args.batch}: {1e3 * times[-1] / args.steps:.2f} ms/step wall "
                  f"(under the profiler)")
            print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.top))
            return

    rates = [args.steps * args.batch / t for t in times[args.warmup:]]
    rate = statistics.median(rates)
    print("windows (samples/s): " + " ".join(f"{r:.0f}" for r in rates))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    # Keras's non-trainable weights: BatchNormalization's moving mean and variance.
    non_trainable = sum(b.numel() for name, b in model.named_buffers() if name.endswith(("running_mean", "running_var")))
    print(f"RESULT framework=torch mode=eager model={args.model} batch={args.batch} samples_per_s={rate:.1f} "
          f"step_ms={1e3 * args.batch / rate:.3f} trainable_params={trainable} non_trainable_params={non_trainable} "
          f"threads={torch.get_num_threads()} omp_wait_policy={os.environ.get('OMP_WAIT_POLICY', 'default')} "
          f"data={data_name} final_loss={loss_sum / max(seen, 1):.4f} torch={torch.__version__}")


if __name__ == "__main__":
    main()
