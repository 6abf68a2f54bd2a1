#!/usr/bin/env bash
# Cold-process start-up of `accel devices` on a GPU machine, beside the floor
# that CUDA itself sets (docs/PERFORMANCE.md, "## CUDA plugin (GPU)"; target:
# `accel devices` with the CUDA plugin under 300 ms).
#
#   bench/cuda/gpu_startup.sh [BUILD_DIR] [RUNS]
#
# Three commands, run RUNS times each (default 21) in interleaved order so
# that a busy moment hits all three alike; median, min and max of each:
#   accel devices                  every plugin discovered, the GPU's included
#   cuda_startup_floor init        the CUDA runtime's start and the device
#                                  properties alone (what discovery cannot avoid)
#   cuda_startup_floor context     the same plus the primary context (what the
#                                  first op on /GPU:0 adds; `accel devices`
#                                  does not pay it)
# and accel's time over the init floor (what accel itself adds).
# Without a GPU it prints "skipped: no GPU: <reason>" and exits 0.
set -euo pipefail
build=${1:-build}
runs=${2:-21}
accel="$build/bin/accel"
floor="$build/bin/cuda_startup_floor"
[[ -x $accel && -x $floor ]] || { echo "gpu_startup: need $accel and $floor (build bench targets)" >&2; exit 2; }
if ! "$floor" init >/dev/null 2>&1 || [[ $("$floor" init) == "0 device(s)"* ]]; then
  echo "skipped: no GPU: $("$floor" init 2>&1 | head -1)"
  exit 0
fi

now_us() { local t; t=$(date +%s%N); echo $((t / 1000)); }
declare -A samples=()
names=("accel devices" "floor: init" "floor: context")
run_one() {
  case $1 in
    0) "$accel" devices >/dev/null ;;
    1) "$floor" init >/dev/null ;;
    2) "$floor" context >/dev/null ;;
  esac
}
for ((i = 0; i < 3; ++i)); do run_one "$i"; done   # warm the page cache
for ((round = 0; round < runs; ++round)); do
  for ((k = 0; k < 3; ++k)); do
    i=$(((round + k) % 3))   # rotate who goes first
    start=$(now_us); run_one "$i"; end=$(now_us)
    samples[$i]+="$((end - start)) "
  done
done

median_of() { printf '%s\n' $1 | sort -n | awk '{v[NR]=$1} END {printf "%d %d %d", v[int((NR+1)/2)], v[1], v[NR]}'; }
ms() { awk -v us="$1" 'BEGIN {printf "%.1f", us / 1000}'; }
echo "cold process, $runs runs each, interleaved; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "| command | median ms | min ms | max ms |"
echo "|---|---|---|---|"
declare -a medians
for i in 0 1 2; do
  read -r median low high <<<"$(median_of "${samples[$i]}")"
  medians[$i]=$median
  echo "| ${names[$i]} | $(ms "$median") | $(ms "$low") | $(ms "$high") |"
done
verdict=$([[ ${medians[0]} -lt 300000 ]] && echo met || echo "NOT met")
echo "accel devices: $(ms "${medians[0]}") ms (target < 300 ms: $verdict); over the CUDA init floor: $(ms $((medians[0] - medians[1]))) ms; a context would add $(ms $((medians[2] - medians[1]))) ms more"
"$accel" devices | sed -n '/Plugins:/,$p'
