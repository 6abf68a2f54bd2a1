#!/usr/bin/env bash
# Builds one libFuzzer target with clang++ (-fsanitize=fuzzer,address,undefined)
# and runs it for a bounded time. Each loader's fuzz test calls it with its
# own sources, flags and seeds:
#   run_libfuzzer.sh WORK_DIR NAME SECONDS --watch FILE... --build CLANG_ARG... --seeds DIR...
# --watch: files whose change rebuilds the target; --build: sources, include
# and define flags and libraries, as clang++ takes them; --seeds: corpus
# folders read, not written (new inputs go to WORK_DIR/corpus).
# Exit 0: no finding. Exit 77: clang++ or libFuzzer missing (ctest: skipped). A finding
# exits 1 (-error_exitcode): libFuzzer's own default, 77, would read as "skipped".
# Anything else: the fuzzer found a crash (the reproducer is in WORK_DIR).
set -euo pipefail
work_dir=$1 name=$2 seconds=$3
shift 3
watch=() build=() seeds=() list=
for arg in "$@"; do
  case "$arg" in
    --watch|--build|--seeds) list=${arg#--} ;;
    *)
      case "$list" in
        watch) watch+=("$arg") ;;
        build) build+=("$arg") ;;
        seeds) seeds+=("$arg") ;;
        *) echo "run_libfuzzer.sh: '$arg' before --watch/--build/--seeds" >&2; exit 2 ;;
      esac ;;
  esac
done
mkdir -p "$work_dir/corpus"

if ! command -v clang++ >/dev/null; then
  echo "clang++ not found: install clang and libclang-rt-dev (tools/setup.sh)"; exit 77
fi
probe="$work_dir/probe.cpp"
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' > "$probe"
if ! clang++ -fsanitize=fuzzer "$probe" -o "$work_dir/probe" 2>/dev/null; then
  echo "clang++ has no libFuzzer: install libclang-rt-dev (tools/setup.sh)"; exit 77
fi

fuzzer="$work_dir/$name"
newest=$(ls -t "${watch[@]}" | head -1)
if [[ ! -x "$fuzzer" || "$newest" -nt "$fuzzer" ]]; then
  echo "building $fuzzer"
  # Built aside and moved: an interrupted build never leaves a stale binary newer than the sources.
  clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${build[@]}" -o "$fuzzer.new"
  mv "$fuzzer.new" "$fuzzer"
fi

for i in "${!seeds[@]}"; do seeds[$i]=$(realpath "${seeds[$i]}"); done  # read from inside WORK_DIR
cd "$work_dir"
"$fuzzer" -error_exitcode=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  corpus "${seeds[@]}"
