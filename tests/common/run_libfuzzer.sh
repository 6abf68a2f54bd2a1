#!/usr/bin/env bash
# Builds one libFuzzer target with clang++ under ASan + UBSan and runs it for a
# bounded time; any crash, leak, timeout or sanitizer report fails.
#   run_libfuzzer.sh WORK_DIR NAME SECONDS --sources FILE... [--watch FILE...]
#                    [--flags FLAG...] [--seeds DIR...]
# --sources are compiled into the fuzzer; it is rebuilt when a source or a
# --watch file (headers) is newer than the binary. --flags go to clang++
# (include dirs, defines, libraries); --seeds are read-only seed corpora.
# Exit 0: no finding. Exit 77: clang++ or libFuzzer missing (ctest: skipped).
# Anything else: a finding; the reproducer is in WORK_DIR.
set -euo pipefail
work_dir=$1 name=$2 seconds=$3
shift 3
sources=() watched=() flags=() seeds=()
target=sources
for arg in "$@"; do
  case "$arg" in
    --sources) target=sources ;;
    --watch) target=watched ;;
    --flags) target=flags ;;
    --seeds) target=seeds ;;
    *) eval "$target+=(\"\$arg\")" ;;
  esac
done
[[ ${#sources[@]} -gt 0 ]] || { echo "run_libfuzzer.sh: no --sources for $name"; exit 2; }
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
newest=$(ls -t "${sources[@]}" "${watched[@]}" | head -1)
if [[ ! -x "$fuzzer" || "$newest" -nt "$fuzzer" ]]; then
  echo "building $fuzzer"
  clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${sources[@]}" "${flags[@]}" -o "$fuzzer.new"
  mv "$fuzzer.new" "$fuzzer"
fi

for i in "${!seeds[@]}"; do seeds[$i]=$(realpath "${seeds[$i]}"); done  # read from inside WORK_DIR
cd "$work_dir"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  corpus "${seeds[@]}"
