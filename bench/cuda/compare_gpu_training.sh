#!/usr/bin/env bash
# accel vs PyTorch eager training throughput on the GPU, side by side in one
# invocation (docs/PERFORMANCE.md, "## CUDA plugin (GPU)"; issue 7's target:
# accel at least 1.0x PyTorch on the same GPU, same model, optimizer and
# precision, for the tutorial CNN at batch 256 and 1024 and a small ResNet).
#
#   bench/cuda/compare_gpu_training.sh [BUILD_DIR] [ROUNDS]
#
# BUILD_DIR (default build) must hold bin/bench_training_throughput and the
# CUDA plugin. accel trains on /GPU:0 (bench_training_throughput --device
# /GPU:0), PyTorch on cuda (torch_training_throughput.py --device cuda), both
# float32 with TF32 off (accel's default; the PyTorch script turns it off),
# Adam, Keras's loss, the data on the host and each batch copied to the GPU.
# ROUNDS rounds (default 2) run each case once in each framework, in
# alternating order (bench/keras/training_comparison.sh, shared with the CPU
# comparison); the table shows the median over rounds and accel / PyTorch.
# A GPU varies less from run to run than the shared CPU machines, and the
# defaults keep the whole comparison to about 2 minutes (tools/gpu_check.sh
# gives it 200 s); each run's figures are printed as it ends (stderr).
# Without a GPU it prints "skipped: no GPU: <reason>" and exits 0.
# Environment: PYTHON (the interpreter with CUDA PyTorch, default python3),
# CASES (default "cnn@256 cnn@1024 resnet@256"), STEPS (steps per window,
# default 100), WINDOWS (default 3), WARMUP (warm-up windows, default 1: the
# first steps pick cuDNN algorithms and fill the allocators' caches), THREADS
# (host threads of each framework, default all CPUs), COMPILED (1: also the
# compiled steps against torch.compile, below).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=../keras/training_comparison.sh
source "$here/../keras/training_comparison.sh"
comparison_settings 2 100 3 1 "$(nproc)" "$@"  # rounds, steps, windows, warm-up windows, threads
cases="${CASES:-cnn@256 cnn@1024 resnet@256}"
policies="default"  # OMP_WAIT_POLICY left alone: the host threads mostly wait for the GPU
python="${PYTHON:-python3}"

gpu="$("$accel_bin" --check-device --device /GPU:0)"
if [[ "$gpu" == skipped:* ]]; then
  echo "$gpu"
  exit 0
fi
# accel sees a GPU: a PyTorch that cannot use it is an error, not a skip.
"$python" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null ||
  { echo "$python: no PyTorch with CUDA (set PYTHON to an interpreter that has it)" >&2; exit 2; }

echo "$gpu; host: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "torch: $("$python" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())');" \
     "host threads $threads"

accel_env=(ACCEL_CPU_THREADS="$threads")
accel_args=(--device /GPU:0)
torch_args=(--device cuda --threads "$threads")
targets="*=1.0"
run_training_comparison

# Compiled steps, with COMPILED=1: accel --jit (runs of each step replayed as
# CUDA graphs, docs/compiled-steps.md) against torch.compile(mode=
# "reduce-overhead"), PyTorch's CUDA-graph mode. Opt-in: torch.compile's first
# steps compile for tens of seconds per model and round.
if [[ "${COMPILED:-0}" == 1 ]]; then
  if "$python" -c "import torch; assert hasattr(torch, 'compile')" 2>/dev/null; then
    echo
    echo "compiled steps: accel --jit (CUDA graphs) vs torch.compile(mode=\"reduce-overhead\")"
    accel_args=(--device /GPU:0 --jit)
    torch_args+=(--compile)
    run_training_comparison
  else
    echo "compiled comparison skipped: $("$python" -c 'import torch; print(torch.__version__)') has no torch.compile"
  fi
fi
