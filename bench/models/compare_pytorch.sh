#!/usr/bin/env bash
# The model zoo's training speed, accel vs PyTorch CPU, side by side in one
# invocation (docs/PERFORMANCE.md, "## Model zoo training vs PyTorch CPU";
# the target: accel at least 1.5x PyTorch's samples/s for both models).
#
#   bench/models/compare_pytorch.sh [BUILD_DIR] [ROUNDS]
#
# BUILD_DIR (default build) must hold bin/bench_zoo_training; PyTorch is
# Debian's python3-torch (bench/keras/setup_bench.sh), run by /usr/bin/python3.
# Models: resnet_small_28x28 and vit_fashion_mnist (4x4 patches), the same
# model on both sides (check_torch_models.py checks the PyTorch ones against
# Keras; the parameter counts are printed). ROUNDS rounds (default 3) run
# each model once in accel (bench_zoo_training: eager and compiled,
# alternating windows in one process) and once in PyTorch
# (torch_zoo_training.py), accel first in even rounds and PyTorch first in
# odd ones, so both see the same machine load. Each run reports the median of
# its timed windows; the table shows the median over rounds (range in
# brackets) and the ratios accel / PyTorch.
# Environment: STEPS (steps per window, default 10), WINDOWS (timed windows,
# default 5), WARMUP (warm-up windows, default 1), THREADS (default 2), BATCH
# (default 128), MODELS, WAIT_POLICY (OMP_WAIT_POLICY of both sides, default
# passive; "default" leaves it unset).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# result_line and samples_per_s, shared with the Keras training comparisons.
# shellcheck source-path=SCRIPTDIR source=../keras/training_comparison.sh
source "$here/../keras/training_comparison.sh"
build="${1:-build}"
rounds="${2:-3}"
steps="${STEPS:-10}"
windows="${WINDOWS:-5}"
warmup="${WARMUP:-1}"
threads="${THREADS:-2}"
batch="${BATCH:-128}"
models="${MODELS:-resnet_small_28x28 vit_fashion_mnist}"
policy="${WAIT_POLICY:-passive}"
accel_bin="$build/bin/bench_zoo_training"
python=/usr/bin/python3
[[ -x "$accel_bin" ]] || { echo "missing $accel_bin: cmake --build --preset default --target bench_zoo_training" >&2; exit 2; }
"$python" -c "import torch" 2>/dev/null || { echo "PyTorch missing: bench/keras/setup_bench.sh" >&2; exit 2; }

# OPENBLAS_CORETYPE=Haswell (set on some of these machines) would hold
# PyTorch's OpenBLAS GEMMs to AVX2; unset, it picks its AVX-512 kernels.
unset OPENBLAS_CORETYPE
if [[ "$policy" == default ]]; then unset OMP_WAIT_POLICY; else export OMP_WAIT_POLICY="$policy"; fi
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "command: $0 $*  (STEPS=$steps WINDOWS=$windows WARMUP=$warmup THREADS=$threads BATCH=$batch WAIT_POLICY=$policy)"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average at start: $(load)"
echo "torch: $("$python" -c 'import torch; print(torch.__version__)'); threads $threads; batch $batch;" \
  "$steps steps x ($warmup warm-up + $windows timed) windows per run; $rounds rounds"

run_accel() {  # model: two RESULT lines, eager and jit
  local output
  output="$(env ACCEL_CPU_THREADS="$threads" "$accel_bin" --model "$1" --batch "$batch" --steps "$steps" \
    --windows "$windows" --warmup "$warmup")"
  result_line accel "$output"
}

run_torch() {  # model
  local output
  output="$("$python" "$here/torch_zoo_training.py" --model "$1" --batch "$batch" --steps "$steps" \
    --windows "$windows" --warmup "$warmup" --threads "$threads")"
  result_line torch "$output"
}

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for ((round = 0; round < rounds; ++round)); do
  for model in $models; do
    before="$(load)"
    if ((round % 2 == 0)); then
      a="$(run_accel "$model")"; t="$(run_torch "$model")"
    else
      t="$(run_torch "$model")"; a="$(run_accel "$model")"
    fi
    while read -r line; do echo "round=$round $line" >> "$results"; done <<< "$a"$'\n'"$t"
    eager="$(samples_per_s "$(grep 'mode=eager' <<< "$a")")"
    jit="$(samples_per_s "$(grep 'mode=jit' <<< "$a")")"
    echo "  [round $round] $model b$batch: accel eager $eager, accel jit $jit, torch $(samples_per_s "$t") samples/s" \
      "(load $before -> $(load))" >&2
  done
done
echo "load average at end: $(load)"

"$python" - "$results" <<'EOF'
import statistics, sys
runs, params, compiled = {}, {}, {}
for line in open(sys.argv[1]):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    side = f"{fields['framework']}_{fields['mode']}"
    runs.setdefault(fields["model"], {}).setdefault(side, []).append(float(fields["samples_per_s"]))
    params.setdefault(fields["model"], {})[fields["framework"]] = (fields["trainable_params"], fields["non_trainable_params"])
    if side == "accel_jit":
        compiled[fields["model"]] = " ".join(f"{k}={fields[k]}" for k in ("traced_ops", "compiled_ops", "fusions", "eager_calls", "eager_reason") if k in fields)
TARGET = 1.5
spread = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
print()
print("| model | accel eager | accel jit_compile | PyTorch | eager / PyTorch | jit / PyTorch | target | met |")
print("|---|---|---|---|---|---|---|---|")
for model, by in runs.items():
    eager, jit, torch = (statistics.median(by[k]) for k in ("accel_eager", "accel_jit", "torch_eager"))
    best = max(eager, jit) / torch
    print(f"| {model} | {spread(by['accel_eager'])} | {spread(by['accel_jit'])} | {spread(by['torch_eager'])} | "
          f"{eager / torch:.2f} | {jit / torch:.2f} | >= {TARGET} | {'yes' if best >= TARGET else 'NO'} |")
print("(samples/s, median over rounds (range); met: the faster accel mode against the target)")
print()
for model, by in params.items():
    same = by.get("accel") == by.get("torch")
    print(f"parameters, {model} (trainable, non-trainable): accel {by.get('accel')}, PyTorch {by.get('torch')}"
          f"{'' if same else '  <- DIFFERENT MODELS'}")
for model, stats in compiled.items():
    print(f"accel jit_compile, {model}: {stats}")
EOF
