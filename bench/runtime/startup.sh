#!/usr/bin/env bash
# Cold-process start-up of `accel devices` (every plugin discovered and
# initialized), median of N runs, in three cases, interleaved:
#   warm   plugin probe verdicts cached (the usual start)        target < 50 ms
#   new    every plugin file new to the cache: each probed in a
#          child process first (docs/plugin-api.md)             target < 300 ms
#   off    ACCEL_PLUGIN_PROBE=off: plugins loaded in process only (the floor)
# usage: bench/runtime/startup.sh [build-dir] [runs]
set -euo pipefail
build=${1:-build}
runs=${2:-21}
accel="$build/bin/accel"
cache=$(mktemp -d)/plugin-probes.json
trap 'rm -rf "$(dirname "$cache")"' EXIT
now_us() { local t; t=$(date +%s%N); echo $((t / 1000)); }
declare -A samples=()
ACCEL_PLUGIN_PROBE_CACHE=$cache "$accel" devices >/dev/null  # fill the cache for "warm"
for ((run = 0; run < runs; ++run)); do
  for case in warm new off; do
    case $case in
      warm) start=$(now_us); ACCEL_PLUGIN_PROBE_CACHE=$cache "$accel" devices >/dev/null ;;
      new) rm -f "$cache.new"; start=$(now_us); ACCEL_PLUGIN_PROBE_CACHE=$cache.new "$accel" devices >/dev/null ;;
      off) start=$(now_us); ACCEL_PLUGIN_PROBE=off "$accel" devices >/dev/null ;;
    esac
    end=$(now_us)
    samples[$case]+="$((end - start)) "
  done
done
summary() {  # median min max, in ms with one decimal
  printf '%s\n' $1 | sort -n | awk '{v[NR]=$1} END {printf "median %.1f ms, min %.1f ms, max %.1f ms", v[int((NR+1)/2)]/1000, v[1]/1000, v[NR]/1000}'
}
echo "accel devices, cold process, ${runs} runs each, interleaved:"
echo "  warm (probe verdicts cached): $(summary "${samples[warm]}") (target < 50 ms)"
echo "  new plugin files (all probed): $(summary "${samples[new]}") (target < 300 ms)"
echo "  probing off (in process only): $(summary "${samples[off]}")"
"$accel" devices | sed -n '/Plugins:/,$p'
