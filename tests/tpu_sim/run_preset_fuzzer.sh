#!/usr/bin/env bash
# The TPU preset loader (and the timing model on what it accepts) under
# libFuzzer + ASan + UBSan (tests/fuzz/run_libfuzzer.sh), seeded with configs/tpu.
#   run_preset_fuzzer.sh SOURCE_DIR WORK_DIR SECONDS
# Exit 0: no finding. Exit 77: clang++ or libFuzzer missing (ctest: skipped).
set -euo pipefail
source_dir=$1 work_dir=$2 seconds=${3:-25}
timing="$source_dir/plugins/tpu_sim/timing"
sources=("$timing"/*.cpp "$source_dir/tests/tpu_sim/fuzz_tpu_preset_loader.cpp")
exec "$source_dir/tests/fuzz/run_libfuzzer.sh" "$work_dir" fuzz_tpu_preset_loader "$seconds" \
  --watch "${sources[@]}" "$timing"/*.hpp \
  --build -I"$source_dir/plugins/tpu_sim" -I"$source_dir/core/include" \
    -DACCEL_CONFIG_DIR="\"$source_dir/configs\"" \
    "${sources[@]}" -lyaml-cpp -lfmt \
  --seeds "$source_dir/configs/tpu"
