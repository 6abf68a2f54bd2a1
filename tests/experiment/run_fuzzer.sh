#!/usr/bin/env bash
# The experiment loader under libFuzzer + ASan + UBSan (tests/fuzz/run_libfuzzer.sh),
# seeded with the malformed corpus and configs/.
#   run_fuzzer.sh SOURCE_DIR WORK_DIR LIBACCEL_SO SECONDS
# Exit 0: no finding. Exit 77: clang++ or libFuzzer missing (ctest: skipped).
set -euo pipefail
source_dir=$1 work_dir=$2 libaccel=$3 seconds=${4:-30}
# The loader checks a simple resolver's addresses and a TPU strategy's slice name
# with the distribute library's own parsers.
sources=("$source_dir"/core/experiment/*.cpp "$source_dir/core/distribute/cluster_spec.cpp"
         "$source_dir/core/distribute/tpu_cluster_resolver.cpp" "$source_dir/core/distribute/cluster_resolver.cpp"
         "$source_dir/tests/experiment/fuzz_experiment_loader.cpp")
exec "$source_dir/tests/fuzz/run_libfuzzer.sh" "$work_dir" fuzz_experiment_loader "$seconds" \
  --watch "${sources[@]}" "$source_dir"/core/experiment/*.hpp "$source_dir"/core/include/accel/experiment/*.hpp \
  --build -I"$source_dir/core/include" -I"$source_dir/core/experiment" \
    -DACCEL_EXPERIMENT_CONFIG_DIR="\"$source_dir/configs\"" \
    "${sources[@]}" "$libaccel" -Wl,-rpath,"$(dirname "$libaccel")" -lyaml-cpp -lfmt \
  --seeds "$source_dir/tests/experiment/malformed" "$source_dir/configs"
