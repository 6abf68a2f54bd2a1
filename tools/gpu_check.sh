#!/usr/bin/env bash
# Runs every GPU check of accel on a GPU machine without building there, from the
# pack that tools/device_pack.sh made where the build is (docs/gpu-testing.md).
#
#   tools/gpu_check.sh STAGE...        stages run in the order given:
#     unpack      extract .device/accel-device-pack.tar.xz into build/, make the
#                 build's absolute paths work here, find the CUDA libraries (toolkit
#                 or PyTorch's wheels), re-list the tests (the conformance suite
#                 lists the GPU's cases only where a GPU is), check every library resolves
#     info        nvidia-smi, `accel devices`, which CUDA library files load
#     test        the whole ctest suite: first the CUDA plugin's tests, the GPU's
#                 conformance cases and every test named Gpu/GPU/Cuda/CUDA, then the rest
#     sanitize    compute-sanitizer memcheck on the GPU's conformance cases
#                 (bin/conformance_tests), then on the CUDA plugin's GPU tests
#                 (the NCCL ones without API-error reports: see stage_sanitize)
#     bench       bench/cuda/gpu_startup.sh, build/bin/bench_cuda_matmul and
#                 bench/cuda/compare_gpu_training.sh, each when present
#     profile     where the GPU training steps go: bench_training_throughput
#                 --profile beside torch_training_throughput.py --profile
#                 (ACCEL_GPU_CHECK_PROFILE_CASES, default "resnet@256 cnn@1024")
#     quickstart  the main job (tools/run.sh): `accel devices`, then
#                 `accel run configs/quickstart.yaml` (CPU, emulated TPU v4, GPU)
# Each stage writes OUT_DIR/<stage>.log and prints one summary line (also in
# OUT_DIR/summary.txt); details (JUnit XML, ctest's log, the quickstart report,
# `accel devices --json`, the bench outputs) go into OUT_DIR/artifacts.tar.gz, so
# that what to copy back is a handful of files. A failing stage does not stop the
# next; the exit status is 1 when any stage failed.
#
# The workflow (docs/gpu-testing.md): build and run tools/device_pack.sh on a
# machine with the build's packages; copy the repo with .device/ to the GPU
# machine (it needs the CUDA driver, the CUDA libraries, CMake's ctest and, for
# the bench, PyTorch; none of the build's packages); there, for example
#   bash tools/gpu_check.sh unpack info test
#   bash tools/gpu_check.sh unpack quickstart sanitize bench
# then copy OUT_DIR back. unpack is skipped when the same pack is already
# unpacked. Where a session on the GPU machine is time-limited, set
# ACCEL_GPU_CHECK_DEADLINE: no stage starts past it and running stages are cut
# at it, so the logs always come back; a stage cut short says so ("not started"
# / "stopped") and a later call runs what is left, e.g. `gpu_check.sh unpack bench`.
#
# Environment: ACCEL_GPU_CHECK_OUT (OUT_DIR; default /tmp/accel-gpu-check),
# ACCEL_DEVICE_PACK (the pack; default .device/accel-device-pack.tar.xz),
# ACCEL_CUDA_LIB_DIRS (':'-separated folders with libcudart / cuBLAS / cuDNN / NCCL,
# searched before the wheels' and the toolkit's), ACCEL_GPU_CHECK_DEADLINE (seconds
# from the start; default none),
# ACCEL_GPU_CHECK_REST=0 (the test stage runs the GPU passes only: the rest is what
# CI runs too), ACCEL_GPU_CHECK_TEST_TIMEOUT (per test, default 300 s; tests with their own TIMEOUT
# keep it), ACCEL_GPU_CHECK_JOBS (ctest -j, default nproc; the GPU-first pass uses
# at most 8), ACCEL_GPU_CHECK_BUDGET_<STAGE> (seconds a stage may take: TEST 480,
# of which the GPU-first pass half; SANITIZE 300; BENCH 240; PROFILE 120; QUICKSTART 180).
#
# Not `set -e`: a failing check is recorded and the next one runs.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
meta=$build/.device-pack
pack=${ACCEL_DEVICE_PACK:-$root/.device/accel-device-pack.tar.xz}
out=${ACCEL_GPU_CHECK_OUT:-/tmp/accel-gpu-check}
work=/tmp/accel-gpu-check-work
jobs=${ACCEL_GPU_CHECK_JOBS:-$(nproc)}
deadline=${ACCEL_GPU_CHECK_DEADLINE:-0}
((deadline > 0)) || deadline=$((10 ** 9))   # none
test_timeout=${ACCEL_GPU_CHECK_TEST_TIMEOUT:-300}
started=$SECONDS

usage() {
  sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 2
}
(($# > 0)) || usage

# ------------------------------------------------------------------ helpers

failed_stages=()
summary() {   # summary STATUS TEXT: the stage's one line
  stage_status=$1
  stage_line="$current_stage: $1${2:+: $2}"
}
# A stage's time: ACCEL_GPU_CHECK_BUDGET_<STAGE> seconds (or DEFAULT) from its
# start, never past the deadline; time_left: the seconds of it still unused.
stage_end=0
begin_budget() {
  local name=${current_stage^^} budget
  local var=ACCEL_GPU_CHECK_BUDGET_$name
  budget=${!var:-$1}
  stage_end=$((SECONDS + budget))
  ((stage_end > started + deadline)) && stage_end=$((started + deadline))
}
time_left() { local left=$((stage_end - SECONDS)); echo $((left > 0 ? left : 0)); }
# The driver's tools and libraries (libcuda) may sit in /usr/local/nvidia.
if ! command -v nvidia-smi >/dev/null && [[ -x /usr/local/nvidia/bin/nvidia-smi ]]; then
  PATH=$PATH:/usr/local/nvidia/bin
fi
gpu_present=$(command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
have_gpu() { ((${gpu_present:-0} > 0)); }
gpu_names() { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | paste -sd';'; }
section() { printf '\n=== %s\n' "$*"; }
pack_artifacts() {   # the details, one file
  [[ -n $(ls -A "$work" 2>/dev/null) ]] && tar -C "$work" -czf "$out/artifacts.tar.gz" . 2>/dev/null
}
load_env() {   # what unpack worked out, for every later stage and call
  [[ -f $meta/env.sh && -f $meta/pack.env ]] || return 1
  # shellcheck source=/dev/null
  source "$meta/env.sh"
  # shellcheck source=/dev/null
  source "$meta/pack.env"
  # A fresh machine, or another mount namespace, since the unpack: link again.
  [[ -e $ACCEL_PACK_ORIG_SRC && -e $ACCEL_PACK_ORIG_BUILD ]] || map_build_paths
}

# ------------------------------------------------------------------ unpack

# Folders holding the CUDA libraries: ACCEL_CUDA_LIB_DIRS, the pip wheels
# (site-packages/nvidia/<part>/lib, PyTorch's), then the toolkit.
cuda_lib_dirs() {
  local dirs=() d p
  IFS=: read -ra dirs <<<"${ACCEL_CUDA_LIB_DIRS:-}"
  local roots
  roots=$(python3 -c 'import nvidia, sys; print("\n".join(nvidia.__path__))' 2>/dev/null || true)
  [[ -n $roots ]] || roots=$(ls -d /usr/lib/python3*/*-packages/nvidia /usr/local/lib/python3*/*-packages/nvidia \
                               /opt/*/.venv/lib/python3*/site-packages/nvidia 2>/dev/null || true)
  while IFS= read -r p; do
    [[ -n $p ]] || continue
    for d in "$p"/*/lib "$p"/*/lib64; do
      compgen -G "$d/lib*.so*" >/dev/null && dirs+=("$d")
    done
  done <<<"$roots"
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    [[ -d $d ]] && dirs+=("$(readlink -f "$d")")
  done
  printf '%s\n' "${dirs[@]}" | awk 'NF && !seen[$0]++' | paste -sd:
}

# Where a soname would load from: LD_LIBRARY_PATH first, then the system's cache.
which_lib() {
  local d dirs
  IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
  for d in "${dirs[@]}"; do [[ -n $d && -e $d/$1 ]] && { readlink -f "$d/$1"; return 0; }; done
  ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n {print $NF; found=1; exit} END {exit !found}'
}

regex_quote() { sed 's/[][\.*^$|/]/\\&/g' <<<"$1"; }

# Rewrites the CTest files' absolute paths: the build's folder to build/ here and
# the source folder to this tree (through placeholders: a new path may start with
# the old one).
rewrite_ctest_paths() {
  local old_build old_src
  old_build=$(regex_quote "$ACCEL_PACK_ORIG_BUILD")
  old_src=$(regex_quote "$ACCEL_PACK_ORIG_SRC")
  find "$build" \( -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name '*_tests.cmake' \) -print0 |
    xargs -0 sed -i -e "s|$old_build|@ACCEL_PACK_BUILD@|g" -e "s|$old_src|@ACCEL_PACK_SRC@|g" \
      -e "s|@ACCEL_PACK_BUILD@|$build|g" -e "s|@ACCEL_PACK_SRC@|$root|g"
}

# Makes ORIGINAL (an absolute path baked into the build) lead to HERE: nothing
# when it already is HERE, else a symlink when nothing is there; prints "rewrite"
# when something else is there (the CTest files are then rewritten instead, and the
# binaries' own baked-in paths keep pointing into that other tree).
map_path() {
  local original=$1 here=$2
  if [[ -e $original && $(readlink -f "$original") == $(readlink -f "$here") ]]; then
    echo "  $original is this tree: nothing to do"
  elif [[ ! -e $original && ! -L $original ]]; then
    if mkdir -p "$(dirname "$original")" && ln -s "$here" "$original"; then
      echo "  $original -> $here (symlink made)"
    else
      echo "  could not link $original: rewriting the CTest files instead"; echo rewrite
    fi
  else
    echo "  $original exists and is another tree: left alone; the CTest files are rewritten to $here;"
    echo "  the binaries' baked-in paths (ACCEL_TEST_CLI, fault plugins, configs/, tests/keras/golden) still read $original"
    echo rewrite
  fi
}

# The build's absolute paths (ACCEL_PACK_ORIG_SRC / _BUILD, from pack.env) made to
# lead here: symlinks where nothing is, else the CTest files rewritten. Idempotent.
map_build_paths() {
  local rewrite=0 result
  result=$(map_path "$ACCEL_PACK_ORIG_SRC" "$root"); echo "${result%$'\n'rewrite}"
  [[ $result == *rewrite ]] && rewrite=1
  if [[ $ACCEL_PACK_ORIG_BUILD != "$ACCEL_PACK_ORIG_SRC/build" ]]; then
    result=$(map_path "$ACCEL_PACK_ORIG_BUILD" "$build"); echo "${result%$'\n'rewrite}"
    [[ $result == *rewrite ]] && rewrite=1
  fi
  if ((rewrite)); then rewrite_ctest_paths; fi
}

stage_unpack() {
  if [[ ! -f $pack ]]; then
    summary FAIL "no pack at $pack (run tools/device_pack.sh where the build is; carry .device)"; return
  fi
  if [[ -f $build/CMakeCache.txt ]]; then
    summary FAIL "$build is a real build tree (CMakeCache.txt): not overwritten; unpack into a copy of the repo"; return
  fi
  local stamp
  stamp=$(cksum <"$pack" | cut -d' ' -f1,2)
  if [[ -f $meta/unpacked && $(cat "$meta/unpacked") == "$stamp" ]] && load_env; then
    echo "already unpacked from this pack ($stamp)"
    map_build_paths
    summary OK "already unpacked ($(wc -l <"$meta/tests.txt" 2>/dev/null || echo ?) tests listed)"
    return
  fi

  section "extract $pack ($(du -h "$pack" | cut -f1))"
  rm -rf "$build"
  if ! tar -xJf "$pack" -C "$root"; then summary FAIL "tar could not extract $pack"; return; fi
  # shellcheck source=/dev/null
  source "$meta/pack.env"
  echo "packed $ACCEL_PACK_DATE on $ACCEL_PACK_HOST, commit $ACCEL_PACK_COMMIT ($ACCEL_PACK_DIRTY changed files)"
  local head
  head=$(git -C "$root" rev-parse HEAD 2>/dev/null) && [[ $head != "$ACCEL_PACK_COMMIT" ]] &&
    echo "note: this tree is at ${head:0:7}, the pack was built at ${ACCEL_PACK_COMMIT:0:7}"

  section "absolute paths of the build ($ACCEL_PACK_ORIG_SRC, $ACCEL_PACK_ORIG_BUILD)"
  map_build_paths
  # The gtest discovery files call CMake's GoogleTestAddTests.cmake of the packing
  # machine (packed); a longer discovery timeout (listing loads every plugin, CUDA
  # included); and, being rewritten, they are newer than the lists: ctest re-lists.
  if [[ -n $ACCEL_PACK_GTEST_MODULE ]]; then
    find "$build" -name '*_include.cmake' -print0 | xargs -0 sed -i \
      -e "s|$(regex_quote "$ACCEL_PACK_GTEST_MODULE")|$meta/GoogleTestAddTests.cmake|g" \
      -e 's|TEST_DISCOVERY_TIMEOUT \[==\[[0-9]*\]==\]|TEST_DISCOVERY_TIMEOUT [==[120]==]|'
  fi

  section "environment"
  local cuda_dirs data_dir=""
  cuda_dirs=$(cuda_lib_dirs)
  [[ -f $meta/data/fashion-mnist/train-images-idx3-ubyte.gz || -f $meta/data/fashion-mnist/train-images-idx3-ubyte ]] && data_dir=$meta/data/fashion-mnist
  # shellcheck disable=SC2016  # expanded when env.sh is sourced
  {
    echo "# written by tools/gpu_check.sh unpack; sourced by every stage"
    echo 'if [[ -z ${ACCEL_GPU_CHECK_ENV:-} ]]; then'
    echo '  export ACCEL_GPU_CHECK_ENV=1'
    printf '  export LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' "$meta/lib:$build/lib${cuda_dirs:+:$cuda_dirs}"
    printf '  export PATH=%q:$PATH:/usr/local/cuda/bin\n' "$build/bin"
    [[ -n $data_dir ]] && printf '  export ACCEL_FASHION_MNIST_DIR=${ACCEL_FASHION_MNIST_DIR:-%q}\n' "$data_dir"
    echo '  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}'
    echo 'fi'
  } >"$meta/env.sh"
  cat "$meta/env.sh"
  load_env

  section "libraries"
  local problems=() f missing
  while IFS= read -r -d '' f; do
    [[ $(head -c4 "$f" | od -An -c | tr -d ' ') == '177ELF' ]] || continue
    # (fault_missing_dependency's library is missing on purpose: the loader test needs it so.)
    missing=$(ldd "$f" 2>/dev/null | awk '/not found/ && $1 != "libaccel_test_missing_dependency.so" {print $1}' | paste -sd' ')
    [[ -z $missing ]] || problems+=("${f#"$build"/}: $missing")
  done < <(find "$build/bin" "$build/lib" "$build/tests/runtime/fault_plugins" -type f -print0)
  printf '  unresolved: %s\n' "${problems[@]:-none}"
  # The majors the plugin was built against (cudart: its NEEDED entry; cuBLAS 13,
  # cuDNN 9, NCCL 2: what it dlopens) and the driver's libcuda.
  local soname cuda_missing=()
  for soname in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2 libcuda.so.1; do
    if f=$(which_lib "$soname"); then
      echo "  $soname -> $f"
    else
      echo "  $soname: NOT FOUND"
      [[ $soname == libcuda.so.1 ]] && ! have_gpu || cuda_missing+=("$soname")
    fi
  done

  section "test lists (ctest -N: re-runs the gtest discovery)"
  command -v ctest >/dev/null || { summary FAIL "no ctest on this machine (CMake)"; return; }
  if ! ctest --test-dir "$build" -N >"$work/ctest-N.txt" 2>&1; then
    tail -30 "$work/ctest-N.txt"
    summary FAIL "ctest could not read the tests (see unpack.log)"; return
  fi
  sed -nE 's/^ *Test +#[0-9]+: //p' "$work/ctest-N.txt" >"$meta/tests.txt"
  local total gpu_cases
  total=$(wc -l <"$meta/tests.txt")
  gpu_cases=$(grep -c '^AllDevices/ConformanceTest\.MatchesTheCpuPlugin/GPU_' "$meta/tests.txt")
  echo "  $total tests, $gpu_cases GPU conformance cases; ctest $(ctest --version | head -1)"
  echo "$stamp" >"$meta/unpacked"

  local text="$total tests ($gpu_cases GPU conformance cases)"
  [[ -n $data_dir ]] || text+=", no dataset"
  if ((${#problems[@]})); then
    summary FAIL "$text; unresolved libraries: ${problems[*]:0:3}"
  elif ((${#cuda_missing[@]})); then
    summary FAIL "$text; CUDA libraries not found: ${cuda_missing[*]}"
  elif have_gpu && ((gpu_cases == 0)); then
    summary FAIL "$text; a GPU is here but the conformance suite lists no GPU case"
  else
    summary OK "$text"
  fi
}

# ------------------------------------------------------------------ info

stage_info() {
  load_env || { summary FAIL "not unpacked (run the unpack stage first)"; return; }
  section "nvidia-smi"
  nvidia-smi 2>&1 || echo "(no nvidia-smi or no GPU)"
  section "accel devices"
  "$build/bin/accel" devices 2>&1 | tee "$work/accel-devices.txt"
  local rc=${PIPESTATUS[0]}
  "$build/bin/accel" devices --json >"$work/accel-devices.json" 2>&1
  section "the CUDA plugin's libraries"
  ldd "$build/lib/accel/plugins/libaccel-plugin-cuda.so" 2>&1
  local soname f
  for soname in libcublas.so.13 libcudnn.so.9 libnccl.so.2; do
    f=$(which_lib "$soname") && echo "  dlopen($soname) -> $f" || echo "  dlopen($soname): not found"
  done
  section "tools"
  nvcc --version 2>/dev/null | tail -1; ctest --version | head -1; python3 --version 2>&1
  command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || echo "no compute-sanitizer"

  local gpus skipped
  gpus=$(grep -c '/physical_device:GPU:' "$work/accel-devices.txt")
  skipped=$(grep 'libaccel-plugin-cuda.so (' "$work/accel-devices.txt" | tail -1 | sed 's/^.*): //')
  if ((rc != 0)); then
    summary FAIL "accel devices exited with $rc"
  elif have_gpu && ((gpus == 0)); then
    summary FAIL "nvidia-smi sees $(gpu_names) but accel sees no GPU: ${skipped:-the CUDA plugin did not load}"
  elif ((gpus == 0)); then
    summary OK "no GPU here (CUDA plugin: ${skipped:-not listed})"
  else
    summary OK "accel sees $gpus GPU(s): $(gpu_names)"
  fi
}

# ------------------------------------------------------------------ test

# ctest over REGEX-selected tests (-R or -E), into the log and a JUnit file.
run_ctest() {
  local name=$1 seconds=$2; shift 2
  section "ctest $name ($seconds s at most): $*"
  timeout -k 15 "$seconds" ctest --test-dir "$build" -j "$ctest_jobs" --timeout "$test_timeout" --output-on-failure \
    --output-junit "$work/junit-$name.xml" "$@" 2>&1 | tee "$work/ctest-$name.txt"
  local rc=${PIPESTATUS[0]}
  ((rc == 124 || rc == 137)) && echo "ctest $name: STOPPED after $seconds s (budget)"
  cp "$build/Testing/Temporary/LastTest.log" "$work/LastTest-$name.log" 2>/dev/null
  return "$rc"
}
# "N passed, N failed, N skipped" from ctest's output (+ "stopped" when cut off).
ctest_counts() {
  local file=$1 total passed skipped
  total=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#' "$file")
  passed=$(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$file" | grep -cE ' Passed +[0-9.]+ sec$')
  skipped=$(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$file" | grep -cE '\*\*\*Skipped +[0-9.]+ sec$')
  echo "$passed passed, $((total - passed - skipped)) failed, $skipped skipped of $total run"
}

stage_test() {
  load_env || { summary FAIL "not unpacked (run the unpack stage first)"; return; }
  local cuda_suites first exclude budget rc1 rc2 c1 c2
  cuda_suites=$(sed -nE 's/^add_test\(\[=\[([A-Za-z0-9_]+)\..*/\1/p' "$build"/tests/cuda/*_tests.cmake 2>/dev/null |
                sort -u | paste -sd'|')
  first="^AllDevices/ConformanceTest\.MatchesTheCpuPlugin/GPU_|^ConformanceCoverage\.|Gpu|GPU|Cuda|CUDA"
  [[ -n $cuda_suites ]] && first="^($cuda_suites)\.|$first"
  # Need a compiler and the build's dev packages, or only fuzz the YAML loader: not for this machine.
  exclude="^sdk_install$|^experiment_loader_fuzz$"
  if have_gpu; then export ACCEL_CONFORMANCE_REQUIRE_DEVICE=GPU; fi

  begin_budget 480
  # Every test process opens the GPU: with TensorFlow's default (reserve ~90% of
  # what is free) the processes run side by side would starve each other, so
  # growth is on wherever a test did not set it (the memory tests set it).
  export ACCEL_FORCE_GPU_ALLOW_GROWTH=1
  # The runtime's GPU memory tests read the driver's free memory: alone, first.
  local serial="^(GpuTraining|GpuMemory)\\."
  local ctest_jobs=1
  run_ctest gpu-memory 150 -R "$serial"; rc1=$?
  budget=$(time_left)
  # Fewer at a time on the one GPU (each test process makes its own CUDA context).
  ctest_jobs=$((jobs < 8 ? jobs : 8))
  # (Half the budget, the rest keeping the other half, unless the rest is not run.)
  [[ ${ACCEL_GPU_CHECK_REST:-1} == 0 ]] || budget=$((budget / 2 > 60 ? budget / 2 : budget))
  run_ctest gpu "$budget" -R "$first" -E "$serial|$exclude" || rc1=$?
  unset ACCEL_CONFORMANCE_REQUIRE_DEVICE
  c1="memory tests: $(ctest_counts "$work/ctest-gpu-memory.txt"); others: $(ctest_counts "$work/ctest-gpu.txt")"
  budget=$(time_left)
  if [[ ${ACCEL_GPU_CHECK_REST:-1} == 0 ]]; then
    c2="not run (ACCEL_GPU_CHECK_REST=0)"; rc2=0
  elif ((budget < 30)); then
    c2="not run (no time left)"; rc2=1
  else
    ctest_jobs=$jobs
    run_ctest rest "$budget" -E "$first|$exclude"; rc2=$?
    c2=$(ctest_counts "$work/ctest-rest.txt")
  fi
  section "failed"
  grep -hE '^[[:space:]]*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess|Exception|Not Run|Child|ILLEGAL|BUS|OTHER|NUMERICAL|INTERRUPT)' \
    "$work/ctest-gpu-memory.txt" "$work/ctest-gpu.txt" "$work/ctest-rest.txt" 2>/dev/null | tee "$work/failed.txt"
  local gpu_skips optional
  # Skips by design: the two-GPU tests on one GPU, and the conformance cases of
  # optional kernels the GPU does not claim (a fused op only the TPU emulator has).
  optional=$(cat "$work"/LastTest-gpu*.log 2>/dev/null | grep -A1 'does not claim this optional kernel' |
             sed -nE 's/^\[  SKIPPED \] ([^ ]+).*/\1/p' | sort -u)
  gpu_skips=$(cat "$work/ctest-gpu-memory.txt" "$work/ctest-gpu.txt" |
              sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+).*\*\*\*Skipped +[0-9.]+ sec$/\1/p' |
              grep -v 'TwoGpus' | grep -cvxF -f <(echo "${optional:-none}"))
  section "why the GPU tests skipped (LastTest-gpu.log)"
  grep -ohE '(no GPU|GTEST_SKIP|Skipped)[^"]{0,160}' "$work/LastTest-gpu.log" 2>/dev/null | sort | uniq -c | head -20
  local text="GPU first: $c1; the rest: $c2"
  if [[ $c1 == *" of 0 run" || $c2 == *" of 0 run" ]]; then
    summary FAIL "$text: ctest ran nothing (see test.log)"
  elif ((rc1 != 0 || rc2 != 0)); then
    summary FAIL "$text (excluded: sdk_install, experiment_loader_fuzz)"
  elif have_gpu && ((gpu_skips > 0)); then
    summary FAIL "$text: a GPU is here but $gpu_skips GPU tests skipped"
  else
    summary OK "$text"
  fi
}

# ------------------------------------------------------------------ sanitize

find_sanitizer() {
  command -v compute-sanitizer 2>/dev/null && return
  ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer \
     /usr/local/cuda*/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1
}

# memcheck NAME BINARY FILTER [SANITIZER OPTION...]: one run; echoes "NAME: <result>"
# into $sanitize_results.
memcheck() {
  local name=$1 binary=$2 filter=$3 seconds rc errors ran
  shift 3
  seconds=$(time_left)
  if ((seconds < 20)); then sanitize_results+=("$name not run (no time left)"); sanitize_failed=1; return; fi
  section "memcheck $name: $binary --gtest_filter=$filter ($seconds s at most)"
  timeout -k 15 "$seconds" "$sanitizer" --tool memcheck --error-exitcode 86 --print-limit 100 "$@" \
    "$binary" --gtest_filter="$filter" 2>&1 | tee "$work/memcheck-$name.txt" |
    grep -vE '^\[ +(RUN|OK) +\]'
  rc=${PIPESTATUS[0]}
  errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' "$work/memcheck-$name.txt" | tail -1)
  ran=$(grep -cE '^\[ +OK +\]' "$work/memcheck-$name.txt")
  if ((rc == 124 || rc == 137)); then
    sanitize_results+=("$name stopped after $seconds s ($ran cases passed, ${errors:-?} errors so far)"); sanitize_failed=1
  elif ((rc != 0)); then
    sanitize_results+=("$name exit $rc, ${errors:-?} memcheck errors, $ran cases passed"); sanitize_failed=1
  elif ((ran == 0)); then
    sanitize_results+=("$name: no case ran (filter $filter)"); sanitize_failed=1
  else
    sanitize_results+=("$name ${errors:-0} errors, $ran cases")
  fi
}

stage_sanitize() {
  load_env || { summary FAIL "not unpacked (run the unpack stage first)"; return; }
  if ! have_gpu; then summary SKIP "no GPU here"; return; fi
  sanitizer=$(find_sanitizer)
  [[ -n $sanitizer ]] || { summary FAIL "compute-sanitizer not found"; return; }
  echo "sanitizer: $sanitizer"
  begin_budget 300
  sanitize_results=() sanitize_failed=0
  # The conformance cases take cuDNN's heuristic convolution algorithms here: a timed
  # search runs every algorithm of every shape, which under memcheck would take the
  # stage's budget. The cuda_plugin pass below memchecks the timed search itself.
  ACCEL_CUDA_CUDNN_AUTOTUNE=0 \
    memcheck conformance "$build/bin/conformance_tests" 'AllDevices/ConformanceTest.MatchesTheCpuPlugin/GPU_*'
  # CudaMathLibraries.* are death tests: gtest forks a child to load the libraries, and
  # a child forked under compute-sanitizer crashes (SIGSEGV) and leaves memcheck waiting
  # until the budget runs out. They launch no kernel, so memcheck has nothing to check.
  memcheck cuda_plugin "$build/bin/cuda_plugin_tests" 'CudaGpuTest.*-CudaGpuTest.Nccl*'
  # NCCL's communicator set-up asks cudaFuncGetAttributes about each of its kernels,
  # some of which have no image for this GPU, and clears the error itself: memcheck
  # would count those API errors (ncclInitKernelsForDevice) as the plugin's.
  # Memory errors are still reported; the plugin checks every CUDA call it makes.
  memcheck nccl "$build/bin/cuda_plugin_tests" 'CudaGpuTest.Nccl*' --report-api-errors no
  local text
  text=$(printf '%s; ' "${sanitize_results[@]}")
  if ((sanitize_failed)); then summary FAIL "${text%; }"; else summary OK "${text%; }"; fi
}

# ------------------------------------------------------------------ bench

# run_bench NAME NEEDED COMMAND...: one benchmark, when NEEDED (the file it
# runs) is in the pack or the tree, into $work/NAME.txt; adds NAME to `ran`, or
# NAME and why to `failed` (an exit code, or "skipped: no GPU" where one is).
run_bench() {
  local name=$1 needed=$2 seconds rc
  shift 2
  if [[ ! -e $needed ]]; then echo "no $needed here"; return; fi
  seconds=$(time_left)
  section "$name ($seconds s at most)"
  timeout -k 10 "$seconds" "$@" 2>&1 | tee "$work/$name.txt"
  rc=${PIPESTATUS[0]}
  if ((rc != 0)); then failed+=("$name (exit $rc)")
  elif grep -q '^skipped: no GPU' "$work/$name.txt"; then failed+=("$name (no GPU for it)")
  else ran+=("$name"); fi
}

stage_bench() {
  load_env || { summary FAIL "not unpacked (run the unpack stage first)"; return; }
  if ! have_gpu; then summary SKIP "no GPU here"; return; fi
  local ran=() failed=()
  begin_budget 240
  run_bench gpu_startup "$build/bin/cuda_startup_floor" bash "$root/bench/cuda/gpu_startup.sh" "$build"
  run_bench bench_cuda_matmul "$build/bin/bench_cuda_matmul" "$build/bin/bench_cuda_matmul"
  run_bench compare_gpu_training "$root/bench/cuda/compare_gpu_training.sh" \
    bash "$root/bench/cuda/compare_gpu_training.sh" "$build"
  if ((${#failed[@]})); then
    summary FAIL "failed: ${failed[*]}${ran[*]:+; ran: ${ran[*]}}"
  elif ((${#ran[@]} == 0)); then
    summary SKIP "no CUDA bench in the pack or the tree"
  else
    summary OK "ran ${ran[*]} (results in bench.log)"
  fi
}

# ------------------------------------------------------------------ profile

# Where the GPU training steps go, op by op, beside PyTorch's kernels: accel's
# profiler (device time per op from the plugin's CUDA events) and
# torch.profiler, for the cases compare_gpu_training.sh times
# (ACCEL_GPU_CHECK_PROFILE_CASES, default "resnet@256 cnn@1024").
stage_profile() {
  load_env || { summary FAIL "not unpacked (run the unpack stage first)"; return; }
  if ! have_gpu; then summary SKIP "no GPU here"; return; fi
  begin_budget 120
  local case model batch seconds rc failed=() ran=()
  for case in ${ACCEL_GPU_CHECK_PROFILE_CASES:-resnet@256 cnn@1024}; do
    model=${case%@*} batch=${case#*@}
    seconds=$(time_left)
    if ((seconds < 10)); then failed+=("$case (no time left)"); continue; fi
    section "accel $model batch $batch ($seconds s at most)"
    timeout -k 5 "$seconds" "$build/bin/bench_training_throughput" --device /GPU:0 --profile --model "$model" \
      --batch "$batch" --steps 20 2>&1 | tee "$work/profile-accel-$model-$batch.txt"
    rc=${PIPESTATUS[0]}
    seconds=$(time_left)
    section "PyTorch $model batch $batch ($seconds s at most)"
    PYTHONUNBUFFERED=1 timeout -k 5 "$seconds" python3 "$root/bench/keras/torch_training_throughput.py" \
      --device cuda --model "$model" --batch "$batch" --steps 20 --windows 1 --warmup 1 --profile 2>&1 |
      tee "$work/profile-torch-$model-$batch.txt"
    ((rc == 0 && PIPESTATUS[0] == 0)) && ran+=("$case") || failed+=("$case")
  done
  if ((${#failed[@]})); then
    summary FAIL "failed or cut: ${failed[*]}${ran[*]:+; ran: ${ran[*]}}"
  else
    summary OK "profiled ${ran[*]} (per-op tables in profile.log)"
  fi
}

# ------------------------------------------------------------------ quickstart

stage_quickstart() {
  load_env || { summary FAIL "not unpacked (run the unpack stage first)"; return; }
  local seconds rc run_dir=$work/quickstart
  begin_budget 180
  rm -rf "$run_dir"
  section "accel devices"
  "$build/bin/accel" devices 2>&1
  seconds=$(time_left)
  section "accel run configs/quickstart.yaml --out $run_dir ($seconds s at most)"
  (cd "$root" && timeout -k 10 "$seconds" "$build/bin/accel" run configs/quickstart.yaml --out "$run_dir") 2>&1
  rc=$?
  local runs=""
  if [[ -f $run_dir/results.json ]]; then
    runs=$(python3 - "$run_dir/results.json" <<'EOF' 2>/dev/null
import json, sys
results = json.load(open(sys.argv[1]))
rows = []
for run in results.get("runs", []):
    text = f"{run.get('name')} {run.get('status')}"
    step = ((run.get("headline") or {}).get("step_time") or {}).get("value")
    accuracy = ((run.get("headline") or {}).get("final_accuracy") or {}).get("value")
    if step is not None: text += f" {step * 1000:.2f} ms/step"
    if accuracy is not None: text += f" acc {accuracy:.3f}"
    reason = run.get("reason") or ""
    if run.get("status") != "completed" and reason:
        text += f" ({reason[:70]}...)" if len(reason) > 70 else f" ({reason})"
    rows.append(text)
print("; ".join(rows))
EOF
)
  fi
  local gpu_status
  gpu_status=$(grep -oE '^gpu [a-z_]+' <<<"${runs//; /$'\n'}" | cut -d' ' -f2)
  if ((rc != 0)); then
    summary FAIL "accel run exited with $rc${runs:+: $runs}"
  elif [[ -z $runs ]]; then
    summary FAIL "no results.json in $run_dir"
  elif have_gpu && [[ $gpu_status != completed ]]; then
    summary FAIL "the GPU run did not complete: $runs"
  else
    summary OK "$runs"
  fi
}

# ------------------------------------------------------------------ main

for stage in "$@"; do
  case $stage in
    unpack | info | test | sanitize | bench | profile | quickstart) ;;
    *) echo "gpu_check: unknown stage '$stage'" >&2; usage ;;
  esac
done
rm -rf "$work"   # this call's details only (a warm machine keeps /tmp)
mkdir -p "$out" "$work"
: >"$out/summary.txt"
load_env 2>/dev/null
echo "gpu_check: stages $*; logs in $out; $(have_gpu && gpu_names || echo 'no GPU here')"
for stage in "$@"; do
  current_stage=$stage stage_status=FAIL stage_line="$stage: FAIL: did not report"
  stage_started=$SECONDS
  if ((SECONDS - started >= deadline)); then
    summary NOT-RUN "not started: past the ${deadline} s deadline (run it in another call)"
  else
    "stage_$stage" >"$out/$stage.log" 2>&1
  fi
  stage_line+=" [$((SECONDS - stage_started)) s]"
  echo "$stage_line" | tee -a "$out/summary.txt"
  [[ $stage_status == FAIL || $stage_status == NOT-RUN ]] && failed_stages+=("$stage")
  # Failures in full for the reply's tail (the logs have the rest).
  if [[ $stage == test && -s $work/failed.txt ]]; then sed 's/^/    /' "$work/failed.txt" | head -40; fi
  pack_artifacts
done
if ((${#failed_stages[@]})); then
  echo "gpu_check: FAILED or not run: ${failed_stages[*]} (logs: $out)" | tee -a "$out/summary.txt"
  exit 1
fi
echo "gpu_check: all stages OK or skipped (logs: $out)" | tee -a "$out/summary.txt"
