#!/usr/bin/env bash
# mixed_bfloat16 against float32 on the CPU, and against TensorFlow 2.21 (CPU,
# PyPI) under the same policy, side by side in one invocation
# (docs/PERFORMANCE.md, "### Mixed precision on the CPU"). The targets, on a
# CPU with bf16 instructions (avx512_bf16 or amx_bf16 in /proc/cpuinfo):
# accel's compiled mixed_bfloat16 step at least 1.3x its own float32 one and
# at least 1.5x TensorFlow's best configuration under mixed_bfloat16. On a
# CPU without them the table says what bf16 costs there.
#
#   bench/keras/compare_mixed_precision.sh [BUILD_DIR] [ROUNDS]
#
# Makes TensorFlow's virtual environment first if it is missing
# (setup_tensorflow.sh). Every round runs each case in every configuration,
# in an order that rotates from round to round, so all see the same load:
#   accel compiled float32, accel compiled mixed_bfloat16,
#   TensorFlow mixed_bfloat16 as installed and with TF_ENABLE_ONEDNN_OPTS=1,
#   each with steps_per_execution 1 and 40.
# The table shows per case the median over rounds of each and the ratios.
# Environment: STEPS (default 40: a window holds one execution of 40 steps),
# WINDOWS (5), WARMUP (1), THREADS (2), CASES (default "cnn@256 resnet@256"),
# TF_CONFIGS (default all four; on a CPU without bf16 instructions
# TensorFlow's bf16 ResNet step takes seconds, so "tf_as_installed_spe1
# tf_onednn1_spe1" with a few STEPS keeps a run to minutes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=training_comparison.sh
source "$here/training_comparison.sh"
comparison_settings 3 40 5 1 2 "$@"  # rounds, steps, windows, warm-up windows, threads
cases="${CASES:-cnn@256 resnet@256}"
use_tensorflow

bf16_flags="$( (grep -o -w -E 'avx512_bf16|amx_bf16' /proc/cpuinfo || true) | sort -u | tr '\n' ' ')"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; bf16 instructions: ${bf16_flags:-none}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tensorflow: $("$tf_python" -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null); threads $threads"

# One configuration of one case; prints its RESULT line with a config= field.
run_config() {  # config model batch
  local output environment=(TF_CPP_MIN_LOG_LEVEL=2)
  case "$1" in
    accel_float32|accel_mixed_bfloat16)
      output="$(env ACCEL_CPU_THREADS="$threads" "$accel_bin" --model "$2" --batch "$3" --steps "$steps" \
        --windows "$windows" --warmup "$warmup" --jit --policy "${1#accel_}")" ;;
    tf_*)
      [[ "$1" == tf_onednn1_* ]] && environment+=(TF_ENABLE_ONEDNN_OPTS=1)
      output="$(env "${environment[@]}" "$tf_python" "$here/tf_training_throughput.py" --model "$2" \
        --batch "$3" --steps "$steps" --windows "$windows" --warmup "$warmup" --threads "$threads" \
        --policy mixed_bfloat16 --steps-per-execution "${1##*_spe}" 2>/dev/null)" ;;
  esac
  echo "config=$1 $(result_line "$1" "$output" | grep -v '^RESULT compiled')"
}

read -r -a tf_configs <<< "${TF_CONFIGS:-tf_as_installed_spe1 tf_as_installed_spe40 tf_onednn1_spe1 tf_onednn1_spe40}"
configs=(accel_float32 accel_mixed_bfloat16 "${tf_configs[@]}")
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
run_rotating_configs "$results"

/usr/bin/python3 - "$results" "${bf16_flags:-none}" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    key = (fields["model"], int(fields["batch"]))
    runs.setdefault(key, {}).setdefault(fields["config"], []).append(float(fields["samples_per_s"]))
has_bf16 = sys.argv[2] != "none"
spread = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
print()
print("| model | batch | accel float32 | accel mixed_bfloat16 | bf16 / float32 | best TensorFlow mixed_bfloat16 (config) "
      "| accel / TF, bf16 | targets (bf16 CPUs) |")
print("|---|---|---|---|---|---|---|---|")
for (model, batch), configs in runs.items():
    f32 = statistics.median(configs["accel_float32"])
    bf16 = statistics.median(configs["accel_mixed_bfloat16"])
    tf = {name: statistics.median(v) for name, v in configs.items() if name.startswith("tf_")}
    best = max(tf, key=tf.get)
    met = "met" if bf16 / f32 >= 1.3 and bf16 / tf[best] >= 1.5 else "not met"
    print(f"| {model} | {batch} | {spread(configs['accel_float32'])} | {spread(configs['accel_mixed_bfloat16'])} "
          f"| {bf16 / f32:.2f} | {tf[best]:,.0f} ({best[3:]}) | {bf16 / tf[best]:.2f} "
          f"| >= 1.3 and >= 1.5: {met if has_bf16 else 'n/a (no bf16 instructions)'} |")
EOF
