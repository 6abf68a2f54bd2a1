#!/usr/bin/env bash
# accel's compiled steps vs TensorFlow 2.21 (CPU, PyPI) training throughput,
# side by side in one invocation (docs/PERFORMANCE.md, "### Compiled steps vs
# TensorFlow"; the compiled-steps targets: CNN batch 256 >= 2.0x the best
# TensorFlow configuration, CNN batch 32 >= 3x, MLP batch 256 >= 2.5x, and
# compiled never slower than eager).
#
#   bench/keras/compare_tensorflow.sh [BUILD_DIR] [ROUNDS]
#
# Makes TensorFlow's virtual environment first if it is missing
# (setup_tensorflow.sh). Every round runs each case in every configuration,
# in an order that rotates from round to round, so all see the same load:
#   accel eager, accel compiled (--jit),
#   TensorFlow as installed and with TF_ENABLE_ONEDNN_OPTS=1, each with
#   steps_per_execution 1 and 10 (jit_compile "auto", Keras's default).
# The table shows per case the median over rounds of each, TensorFlow's best
# configuration, and the ratios. Environment: STEPS (default 30), WINDOWS
# (5), WARMUP (1), THREADS (2), CASES (default "cnn@32 cnn@256 mlp@256").
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=training_comparison.sh
source "$here/training_comparison.sh"
comparison_settings 3 30 5 1 2 "$@"  # rounds, steps, windows, warm-up windows, threads
cases="${CASES:-cnn@32 cnn@256 mlp@256}"
use_tensorflow

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tensorflow: $("$tf_python" -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null); threads $threads"

# One configuration of one case; prints its RESULT line with a config= field.
run_config() {  # config model batch
  local output extra=() environment=(TF_CPP_MIN_LOG_LEVEL=2)
  case "$1" in
    accel_eager|accel_jit)
      [[ "$1" == accel_jit ]] && extra=(--jit)
      output="$(env ACCEL_CPU_THREADS="$threads" "$accel_bin" --model "$2" --batch "$3" --steps "$steps" \
        --windows "$windows" --warmup "$warmup" "${extra[@]}")" ;;
    tf_*)
      [[ "$1" == tf_onednn1_* ]] && environment+=(TF_ENABLE_ONEDNN_OPTS=1)
      output="$(env "${environment[@]}" "$tf_python" "$here/tf_training_throughput.py" --model "$2" \
        --batch "$3" --steps "$steps" --windows "$windows" --warmup "$warmup" --threads "$threads" \
        --steps-per-execution "${1##*_spe}" 2>/dev/null)" ;;
  esac
  echo "config=$1 $(result_line "$1" "$output" | grep -v '^RESULT compiled')"
}

configs=(accel_eager accel_jit tf_as_installed_spe1 tf_as_installed_spe10 tf_onednn1_spe1 tf_onednn1_spe10)
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
run_rotating_configs "$results"

/usr/bin/python3 - "$results" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    key = (fields["model"], int(fields["batch"]))
    runs.setdefault(key, {}).setdefault(fields["config"], []).append(float(fields["samples_per_s"]))
targets = {("cnn", 256): 2.0, ("cnn", 32): 3.0, ("mlp", 256): 2.5}
spread = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
print()
print("| model | batch | accel compiled | accel eager | best TensorFlow (config) | compiled / TF | target | met | compiled / eager |")
print("|---|---|---|---|---|---|---|---|---|")
for (model, batch), by in sorted(runs.items()):
    tf = {k: v for k, v in by.items() if k.startswith("tf_")}
    best = max(tf, key=lambda k: statistics.median(tf[k]))
    jit, eager, peer = (statistics.median(by[k]) for k in ("accel_jit", "accel_eager", best))
    target = targets.get((model, batch))
    met = "" if target is None else ("yes" if jit / peer >= target else "NO")
    print(f"| {model.upper()} | {batch} | {spread(by['accel_jit'])} | {spread(by['accel_eager'])} | "
          f"{spread(tf[best])} ({best[3:]}) | {jit / peer:.2f} | {'' if target is None else f'>= {target}'} | {met} | "
          f"{jit / eager:.2f} |")
print()
print("every TensorFlow configuration (median samples/s):")
for (model, batch), by in sorted(runs.items()):
    print(f"  {model} b{batch}: " + ", ".join(f"{k[3:]} {statistics.median(v):,.0f}" for k, v in sorted(by.items()) if k.startswith("tf_")))
EOF
