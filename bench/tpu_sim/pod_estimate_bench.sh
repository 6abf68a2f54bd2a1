#!/usr/bin/env bash
# `accel tpu estimate --mesh` against its target: MaxText's 64B decoder over
# a v5e-256 (fsdp=256, full remat, 2 sequences of 2048 per chip) estimated
# in under 60 s of wall time on a 2-core machine; the 16B and 32B beside it.
# Prints each model's wall time (best of the rounds), its simulated step and
# model TFLOP/s per chip against the published figure, and the ratio.
#   bench/tpu_sim/pod_estimate_bench.sh [build/bin/accel] [rounds]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
accel=${1:-$root/build/bin/accel}
rounds=${2:-3}
output=$(mktemp)
trap 'rm -f "$output"' EXIT

printf '%-6s %10s %10s %14s %10s %8s\n' model "wall s" "step s" "TFLOP/s/chip" published ratio
for row in 16b:1536:120 32b:1024:132 64b:512:118; do
  IFS=: read -r size batch published <<< "$row"
  best=999
  for ((i = 0; i < rounds; i++)); do
    start=$(date +%s.%N)
    "$accel" tpu estimate --model "$root/configs/models/maxtext/$size.yaml" --slice v5e-256 --mesh fsdp=256 \
      --remat full --batch "$batch" --json > "$output"
    end=$(date +%s.%N)
    best=$(echo "t = $end - $start; if (t < $best) t else $best" | bc -l)
  done
  python3 - "$output" "$size" "$best" "$published" <<'PY'
import json, sys
estimate = json.load(open(sys.argv[1]))
tflops = estimate["model_tflops_per_chip"]
print(f"{sys.argv[2]:<6} {float(sys.argv[3]):10.3f} {estimate['step_seconds']:10.3f} {tflops:14.1f} "
      f"{float(sys.argv[4]):10.0f} {tflops / float(sys.argv[4]):8.3f}")
PY
done
