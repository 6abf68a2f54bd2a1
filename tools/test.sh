#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite:
#   1. the release build (plugins, CUDA when nvcc is present) and every test;
#   2. the suite again under AddressSanitizer + UndefinedBehaviorSanitizer (slow tests excluded,
#      and the fuzz test, which already runs under clang's ASan + UBSan in step 1);
#   3. the tests labelled "tsan" (the input pipeline, SPMD programs) under ThreadSanitizer.
# Steps 2 and 3 build with clang (CMakePresets.json): it compiles the
# instrumented code about a third faster than g++ (docs/PERFORMANCE.md).
# Set ACCEL_TEST_QUICK=1 to run step 1 only.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/tools/setup.sh"
jobs=$(nproc)
# oneDNN runs on OpenMP; with tests running side by side on few cores, spinning
# OpenMP workers steal the cores their peers need (steps 5x slower measured).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

# Each phase prints its duration: on 2 cores the whole run must stay well
# under CI's 90 minutes, and the builds are most of it when ccache is cold.
run_suite() {
  local preset=$1 started=$SECONDS
  echo "=== ${preset}: configure and build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "=== ${preset}: built in $((SECONDS - started)) s; test"
  started=$SECONDS
  ctest --preset "$preset" -j "$jobs"
  echo "=== ${preset}: tested in $((SECONDS - started)) s"
}

run_suite default
if [[ "${ACCEL_TEST_QUICK:-0}" != 1 ]]; then
  # Leak detection off: LeakSanitizer's tracer crashes ("Tracer caught signal 11")
  # at exit on the idle worker threads of libgomp (oneDNN) and oneTBB, failing
  # tests that passed. Address and undefined-behaviour errors still abort.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 run_suite asan
  TSAN_OPTIONS=halt_on_error=1 run_suite tsan
fi
