#!/usr/bin/env bash
# `accel tpu estimate`'s options (the op estimates: gemm, conv2d, vector,
# allreduce, collective, with --preset, --set, --array, --dataflow and the
# flags) under libFuzzer + ASan + UBSan (tests/fuzz/run_libfuzzer.sh),
# seeded with estimate_options_corpus/. The --model options run whole models
# through the runtime and are covered by tests/experiment/cli_hostile_input_test.cpp.
#   run_estimate_options_fuzzer.sh SOURCE_DIR WORK_DIR SECONDS
# Exit 0: no finding. Exit 77: clang++ or libFuzzer missing (ctest: skipped).
set -euo pipefail
source_dir=$1 work_dir=$2 seconds=${3:-25}
timing="$source_dir/plugins/tpu_sim/timing"
sources=("$timing"/*.cpp "$source_dir/tools/accel/tpu_estimate_command.cpp"
         "$source_dir/tests/tpu_sim/fuzz_tpu_estimate_options.cpp")
exec "$source_dir/tests/fuzz/run_libfuzzer.sh" "$work_dir" fuzz_tpu_estimate_options "$seconds" \
  --watch "${sources[@]}" "$timing"/*.hpp "$source_dir/tools/accel/tpu_estimate_command.hpp" \
  --build -I"$source_dir/plugins/tpu_sim" -I"$source_dir/core/include" -I"$source_dir/tools/accel" \
    -DACCEL_CONFIG_DIR="\"$source_dir/configs\"" \
    "${sources[@]}" -lyaml-cpp -lfmt \
  --seeds "$source_dir/tests/tpu_sim/estimate_options_corpus"
