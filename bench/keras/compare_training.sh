#!/usr/bin/env bash
# accel vs PyTorch training throughput, side by side in one invocation
# (docs/PERFORMANCE.md, "## Keras training"; issue 4's targets: accel at least
# 1.5x PyTorch at batch 32 and 1.2x at batch 256, 2 threads each).
#
#   bench/keras/compare_training.sh [BUILD_DIR] [ROUNDS]
#
# BUILD_DIR (default build) must hold bin/bench_training_throughput; PyTorch
# is Debian's python3-torch (bench/keras/setup_bench.sh), run by /usr/bin/python3.
# For every OpenMP wait policy in WAIT_POLICIES (default "passive default";
# "default" leaves OMP_WAIT_POLICY unset, libgomp's own spin-then-sleep), ROUNDS
# rounds (default 3) run each (model, batch) once in accel and once in PyTorch,
# in alternating order, so both see the same machine load (the loop and the
# table: training_comparison.sh, shared with bench/cuda/compare_gpu_training.sh).
# Each run reports the median of its timed windows; the table shows the median
# over rounds and the ratio accel / PyTorch.
# Environment: STEPS (steps per window, default 40), WINDOWS (default 5),
# WARMUP (warm-up windows, default 1), THREADS (default 2), MODELS, BATCHES.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=training_comparison.sh
source "$here/training_comparison.sh"
comparison_settings 3 40 5 1 2 "$@"  # rounds, steps, windows, warm-up windows, threads
models="${MODELS:-cnn mlp}"
batches="${BATCHES:-32 256}"
policies="${WAIT_POLICIES:-passive default}"
python=/usr/bin/python3

"$python" -c "import torch" 2>/dev/null || { echo "PyTorch missing: bench/keras/setup_bench.sh" >&2; exit 2; }

# OPENBLAS_CORETYPE=Haswell (set on some of these machines) would hold
# PyTorch's OpenBLAS GEMMs to AVX2; unset, it picks its AVX-512 kernels.
unset OPENBLAS_CORETYPE

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "torch: $("$python" -c 'import torch; print(torch.__version__)'); threads $threads"

accel_env=(ACCEL_CPU_THREADS="$threads")
accel_args=()
torch_args=(--threads "$threads")
cases=""
for model in $models; do
  for batch in $batches; do cases+="$model@$batch "; done
done
targets="cnn@32=1.5 cnn@256=1.2 mlp@32=1.5 mlp@256=1.2"  # issue 4: the tutorial models only
run_training_comparison
