# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the sourcing script
# accel vs PyTorch training throughput, side by side: the loop and the table
# shared by bench/keras/compare_training.sh (CPU) and
# bench/cuda/compare_gpu_training.sh (GPU). Source it, set the variables
# below (comparison_settings sets the common ones), then call
# run_training_comparison.
#
# For every OpenMP wait policy in `policies` ("default" leaves
# OMP_WAIT_POLICY unset), `rounds` rounds run each case once in accel
# (bench_training_throughput) and once in PyTorch (torch_training_throughput.py),
# in alternating order (accel first in even rounds, PyTorch first in odd
# ones), so both see the same machine load. Each run reports the median of
# its timed windows; the table shows the median over rounds (range in
# brackets), the ratio accel / PyTorch and the target.
#
#   accel_bin, python        the accel bench; the interpreter that imports torch
#   cases                    "model@batch ..." in run order, e.g. "cnn@32 mlp@256"
#   rounds, steps, windows, warmup
#   policies                 e.g. "passive default"
#   accel_env                array: environment of the accel runs (ACCEL_CPU_THREADS=2)
#   accel_args, torch_args   arrays: extra arguments (--device, --threads)
#   targets                  "KEY=RATIO ...": a row's target is the entry for
#                            its model@batch, else its batch, else "*"

training_comparison_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The settings both scripts take: [BUILD_DIR] [ROUNDS] on their command line,
# STEPS, WINDOWS, WARMUP and THREADS from the environment, else each script's
# defaults. Sets build, rounds, steps, windows, warmup, threads and accel_bin.
#   comparison_settings DEFAULT_ROUNDS DEFAULT_STEPS DEFAULT_WINDOWS DEFAULT_WARMUP DEFAULT_THREADS "$@"
comparison_settings() {
  build="${6:-build}"
  rounds="${7:-$1}"
  steps="${STEPS:-$2}"
  windows="${WINDOWS:-$3}"
  warmup="${WARMUP:-$4}"
  threads="${THREADS:-$5}"
  accel_bin="$build/bin/bench_training_throughput"
  [[ -x "$accel_bin" ]] || { echo "missing $accel_bin: ninja -C $build bench_training_throughput" >&2; exit 2; }
}

# TensorFlow's virtual environment, made by setup_tensorflow.sh if missing:
# sets tf_python; OpenMP workers wait passively, and OpenBLAS picks its own
# kernels (OPENBLAS_CORETYPE=Haswell, set on some machines, holds it to AVX2).
use_tensorflow() {
  local venv="$training_comparison_dir/../.venv-tensorflow"
  [[ -x "$venv/bin/python" ]] || "$training_comparison_dir/setup_tensorflow.sh" "$venv"
  tf_python="$venv/bin/python"
  export OMP_WAIT_POLICY=passive
  unset OPENBLAS_CORETYPE
}

# The RESULT line of a run's output, or the whole output on stderr and failure.
result_line() {  # framework output
  grep '^RESULT' <<< "$2" && return 0
  echo "$1 printed no RESULT line:" >&2
  echo "$2" >&2
  return 1
}

run_accel() {  # policy model batch
  local output
  output="$(env ${1:+OMP_WAIT_POLICY=$1} "${accel_env[@]}" "$accel_bin" --model "$2" --batch "$3" \
    --steps "$steps" --windows "$windows" --warmup "$warmup" "${accel_args[@]}")"
  result_line accel "$output"
}

run_torch() {  # policy model batch
  local output
  output="$(env ${1:+OMP_WAIT_POLICY=$1} "$python" "$training_comparison_dir/torch_training_throughput.py" \
    --model "$2" --batch "$3" --steps "$steps" --windows "$windows" --warmup "$warmup" "${torch_args[@]}")"
  result_line torch "$output"
}

samples_per_s() { local tail="${1#*samples_per_s=}"; echo "${tail%% *}"; }

# Every round runs each of `cases` in every one of `configs` (an array) by
# the sourcing script's `run_config CONFIG MODEL BATCH`, in an order that
# rotates from round to round so all see the same load; appends each RESULT
# line, with round=, to FILE.
run_rotating_configs() {  # file
  local round case model batch count i config line
  for ((round = 0; round < rounds; ++round)); do
    for case in $cases; do
      model="${case%@*}"
      batch="${case#*@}"
      count=${#configs[@]}
      for ((i = 0; i < count; ++i)); do
        config="${configs[$(((i + round) % count))]}"
        line="$(run_config "$config" "$model" "$batch")"
        echo "round=$round $line" >> "$1"
        echo "  [round $round] $model b$batch $config: $(samples_per_s "$line") samples/s" >&2
      done
    done
  done
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

run_training_comparison() {
  comparison_results="$(mktemp)"
  trap 'rm -f "$comparison_results"' EXIT
  local policy env_policy round case model batch a t
  echo "accel: $accel_bin; $steps steps x ($warmup warm-up + $windows timed) windows per run; $rounds rounds"
  for policy in $policies; do
    env_policy="$policy"
    [[ "$policy" == default ]] && env_policy=""
    for ((round = 0; round < rounds; ++round)); do
      for case in $cases; do
        model="${case%@*}"
        batch="${case#*@}"
        if ((round % 2 == 0)); then
          a="$(run_accel "$env_policy" "$model" "$batch")"; t="$(run_torch "$env_policy" "$model" "$batch")"
        else
          t="$(run_torch "$env_policy" "$model" "$batch")"; a="$(run_accel "$env_policy" "$model" "$batch")"
        fi
        echo "policy=$policy round=$round $a" >> "$comparison_results"
        echo "policy=$policy round=$round $t" >> "$comparison_results"
        echo "  [$policy round $round] $model b$batch: accel $(samples_per_s "$a"), torch $(samples_per_s "$t") samples/s" >&2
      done
    done
  done
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

  "$python" - "$comparison_results" "$targets" <<'EOF'
import statistics, sys
rows, params = {}, {}
for line in open(sys.argv[1]):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    key = (fields["policy"], fields["model"], int(fields["batch"]))
    rows.setdefault(key, {}).setdefault(fields["framework"], []).append(float(fields["samples_per_s"]))
    params.setdefault(fields["model"], {})[fields["framework"]] = fields.get("trainable_params")
targets = dict(entry.split("=", 1) for entry in sys.argv[2].split())

def target_of(model, batch):
    for key in (f"{model}@{batch}", str(batch), "*"):
        if key in targets:
            return float(targets[key])
    return None

# One policy column only when the runs differ in it (the CPU comparison).
show_policy = any(policy != "default" for policy, _, _ in rows)
policy_head = ("| OMP_WAIT_POLICY ", "|---") if show_policy else ("", "")
print()
print(f"{policy_head[0]}| model | batch | accel samples/s | PyTorch samples/s | accel / PyTorch | target | met |")
print(f"{policy_head[1]}|---|---|---|---|---|---|---|")
for (policy, model, batch), by in sorted(rows.items()):
    a, t = statistics.median(by["accel"]), statistics.median(by["torch"])
    ratio = a / t
    target = target_of(model, batch)
    met = "" if target is None else ("yes" if ratio >= target else "NO")
    spread = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
    print(f"{f'| {policy} ' if show_policy else ''}| {model.upper()} | {batch} | {spread(by['accel'])} | "
          f"{spread(by['torch'])} | {ratio:.2f} | {'' if target is None else f'>= {target}'} | {met} |")
# The same model on both sides has the same number of trainable parameters.
print()
for model, by in sorted(params.items()):
    same = by.get("accel") == by.get("torch")
    print(f"trainable parameters, {model}: accel {by.get('accel')}, PyTorch {by.get('torch')}"
          f"{'' if same else '  <- DIFFERENT MODELS'}")
EOF
}
