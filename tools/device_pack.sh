#!/usr/bin/env bash
# Packs a finished local build for a GPU machine that has the CUDA driver but not
# the build's packages, so that it runs the tests, the benchmarks and `accel run`
# there without building anything (docs/gpu-testing.md; tools/gpu_check.sh
# unpacks and runs it).
#
#   tools/device_pack.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, .device)
#
# Writes OUT_DIR/accel-device-pack.tar.xz, which extracts to build/ in the repo
# copy on the device:
#   build/bin/, build/lib/*.so*, build/lib/accel/plugins/   stripped copies
#   build/tests/runtime/fault_plugins/, naive_broadcast_plugin/   the loader's and the
#                                  conformance checks' broken test plugins
#   build/**/CTestTestfile.cmake, *_include.cmake, *_tests.cmake   what `ctest` reads
#   build/.device-pack/lib/        every shared library the binaries and plugins need
#                                  that is not glibc, libstdc++, libgcc or CUDA's own
#                                  (cudart, cuBLAS, cuDNN, NCCL come from the device)
#   build/.device-pack/GoogleTestAddTests.cmake   the CMake module the gtest
#                                  discovery files call (re-discovery on the device
#                                  lists the GPU's conformance cases)
#   build/.device-pack/data/fashion-mnist/        the dataset, when installed here
#   build/.device-pack/pack.env    where the build was (absolute paths baked into the
#                                  CTest files and the test binaries), commit, date
#   build/.device-pack/MANIFEST    the packed files and the libraries left out, and why
# OpenBLAS (and its libgfortran / libquadmath) is left out: only bench_cpu_gemm
# (the CPU GEMM comparison bench) needs it; that bench does not start on the device.
#
# Run after a normal build (cmake --build --preset default); builds nothing.
# Environment: ACCEL_PACK_DATA=0 leaves the dataset out (the quickstart, the
# tutorial_* tests and experiment_run_end_to_end then skip or fail on the device);
# ACCEL_PACK_SKIP_LIBS (regex on library names, default '^libopenblas') libraries
# to leave out, with what only they need; ACCEL_PACK_XZ (xz options, default -9 -T0: the copy is what is scarce).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out_dir=${2:-$root/.device}
pack_name=accel-device-pack.tar.xz
skip_libs=${ACCEL_PACK_SKIP_LIBS:-^libopenblas}
data_src=${ACCEL_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}

die() { echo "device_pack: $*" >&2; exit 1; }
[[ -x $build/bin/accel && -f $build/CTestTestfile.cmake ]] ||
  die "$build is not a finished build (no bin/accel or CTestTestfile.cmake): cmake --build --preset default"
command -v strip >/dev/null || die "strip (binutils) is missing"

# Where the build tree was configured from: the CTest files and the test binaries
# hold absolute paths under these two folders.
orig_build=$(sed -n 's/^# Build directory: //p' "$build/CTestTestfile.cmake")
orig_src=$(sed -n 's/^# Source directory: //p' "$build/CTestTestfile.cmake")
[[ -n $orig_build && -n $orig_src ]] || die "cannot read the source and build folders from $build/CTestTestfile.cmake"

# Keep .device/ out of git: it is copied to the GPU machine beside the tree, not committed.
if [[ $out_dir == "$root/.device" || $out_dir == .device ]]; then
  exclude=$(git -C "$root" rev-parse --git-path info/exclude 2>/dev/null || true)
  if [[ -n $exclude ]]; then
    [[ $exclude == /* ]] || exclude=$root/$exclude
    mkdir -p "$(dirname "$exclude")"
    grep -qxF '/.device/' "$exclude" 2>/dev/null || echo '/.device/' >>"$exclude"
  fi
fi
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

# Read a build that nobody is changing: hold the build lock the project's
# builds take (flock /tmp/accel-build.lock ninja ...) until the copies are made.
lock=${ACCEL_BUILD_LOCK:-/tmp/accel-build.lock}
if command -v flock >/dev/null; then
  exec 9>>"$lock"
  flock -n 9 || { echo "device_pack: waiting for $lock (a build is running)"; flock 9; }
fi

# Refresh the gtest discovery files (*_tests.cmake) so they match the binaries;
# `ctest -N` runs the PRE_TEST discovery of every stale test binary.
echo "device_pack: refreshing the test lists (ctest -N)"
if ! ctest_listing=$(ctest --test-dir "$build" -N 2>&1); then
  tail -5 <<<"$ctest_listing" >&2
  die "ctest -N failed in $build: a configure that did not finish? (cmake --preset default, then again)"
fi

stage=$(mktemp -d /tmp/accel-device-pack.XXXXXX)
trap 'rm -rf "$stage"' EXIT
dst=$stage/build
meta=$dst/.device-pack
mkdir -p "$dst/bin" "$dst/lib" "$meta/lib"

is_elf() { [[ $(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ') == '177ELF' ]]; }

# Stripped copies with the original's mode and time (the time keeps the gtest
# discovery files "newer than the binary" until gpu_check.sh decides otherwise).
copy_stripped() {
  local from=$1 to=$2
  mkdir -p "$(dirname "$to")"
  if [[ -L $from ]]; then cp -P "$from" "$to"; return; fi
  cp -p "$from" "$to"
  if is_elf "$from"; then
    strip --strip-unneeded "$to" 2>/dev/null || echo "device_pack: warning: could not strip $from" >&2
    touch -r "$from" "$to"
  fi
}

elf_files=()
for f in "$build"/bin/*; do
  [[ -f $f ]] || continue
  copy_stripped "$f" "$dst/bin/${f##*/}"
  is_elf "$f" && elf_files+=("$f")
done
for f in "$build"/lib/*.so "$build"/lib/*.so.*; do
  [[ -e $f ]] || continue
  copy_stripped "$f" "$dst/lib/${f##*/}"
  [[ -L $f ]] || elf_files+=("$f")
done
while IFS= read -r -d '' f; do
  rel=${f#"$build"/}
  copy_stripped "$f" "$dst/$rel"
  [[ -L $f ]] || ! is_elf "$f" || elf_files+=("$f")
done < <(find "$build/lib/accel" "$build/tests/runtime/fault_plugins" "$build/tests/runtime/naive_broadcast_plugin" \
  -type f -print0 2>/dev/null)

# What ctest reads.
(cd "$build" && find . \( -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name '*_tests.cmake' \) \
  -not -path './tests/sdk/work/*' -print0 | xargs -0 cp -p --parents -t "$dst")
[[ -f $build/Testing/Temporary/CTestCostData.txt ]] &&
  install -D -m 644 "$build/Testing/Temporary/CTestCostData.txt" "$dst/Testing/Temporary/CTestCostData.txt"
gtest_module=$(grep -rhoE 'include\("[^"]*GoogleTestAddTests\.cmake"\)' "$build/tests" 2>/dev/null | head -1 |
  sed -E 's/^include\("(.*)"\)$/\1/')
if [[ -n $gtest_module ]]; then
  [[ -f $gtest_module ]] || die "the gtest discovery files call $gtest_module, which is missing"
  cp "$gtest_module" "$meta/GoogleTestAddTests.cmake"
fi

# Shared libraries: everything ldd resolves outside the build tree, except the
# base system (glibc, libstdc++, libgcc) and CUDA's own (from the device's toolkit
# or the Python wheels there), and except ACCEL_PACK_SKIP_LIBS and what only they pull in.
base_re='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libmvec|libanl|libnsl|libstdc\+\+|libgcc_s)\.so'
cuda_re='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn|libnccl|libnvrtc|libnvJitLink|libcufft|libcurand|libcusolver|libcusparse|libcupti|libnvToolsExt|libnvidia-)'
declare -A needed=() skipped_by=() skip_closure=()
lib_deps() { ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'; }
# (fault_missing_dependency's library is missing on purpose: the loader test needs it so.)
missing=$(for f in "${elf_files[@]}"; do ldd "$f" 2>/dev/null | awk -v f="$f" '/not found/ {print f ": " $1}'; done |
          grep -vE ": ($cuda_re|libaccel_test_missing_dependency\.so)" || true)
[[ -z $missing ]] || die "unresolved libraries here (fix the build first):"$'\n'"$missing"
for f in "${elf_files[@]}"; do
  deps=$(lib_deps "$f")
  if grep -qE "$skip_libs" <<<"$deps"; then
    while read -r name path; do
      if [[ $name =~ $skip_libs ]]; then
        skipped_by[$name]+=" ${f##*/}"
        skip_closure[$name]=1
        while read -r sub _; do skip_closure[$sub]=1; done < <(lib_deps "$(readlink -f "$path")")
      fi
    done <<<"$deps"
  fi
done
for f in "${elf_files[@]}"; do
  deps=$(lib_deps "$f")
  uses_skipped=0
  grep -qE "$skip_libs" <<<"$deps" && uses_skipped=1
  while read -r name path; do
    [[ -n $name ]] || continue
    [[ $name =~ $base_re || $name =~ $cuda_re ]] && continue
    [[ $path == "$build"/* || $path == "$orig_build"/* ]] && continue
    ((uses_skipped)) && [[ -n ${skip_closure[$name]:-} ]] && continue
    needed[$name]=$path
  done <<<"$deps"
done
for name in "${!skip_closure[@]}"; do   # report only what is really left out
  if [[ -n ${needed[$name]:-} || $name =~ $base_re || $name =~ $cuda_re ]]; then unset "skip_closure[$name]"; fi
done
for name in "${!needed[@]}"; do
  cp -L "${needed[$name]}" "$meta/lib/$name"
  strip --strip-unneeded "$meta/lib/$name" 2>/dev/null || true
done

# The dataset, unzipped: the loader reads raw idx files too, and the pack's xz
# makes them 4 MiB smaller than their gzip files are.
data_note="not packed"
if [[ ${ACCEL_PACK_DATA:-1} != 0 && -f $data_src/train-images-idx3-ubyte.gz ]]; then
  mkdir -p "$meta/data/fashion-mnist"
  for f in "$data_src"/*-ubyte.gz; do
    gzip -dc "$f" >"$meta/data/fashion-mnist/$(basename "$f" .gz)"
  done
  data_note="packed from $data_src"
fi

{
  printf 'ACCEL_PACK_ORIG_SRC=%q\n' "$orig_src"
  printf 'ACCEL_PACK_ORIG_BUILD=%q\n' "$orig_build"
  printf 'ACCEL_PACK_GTEST_MODULE=%q\n' "$gtest_module"
  printf 'ACCEL_PACK_COMMIT=%q\n' "$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  printf 'ACCEL_PACK_DIRTY=%q\n' "$(git -C "$root" status --porcelain 2>/dev/null | wc -l | tr -d ' ')"
  printf 'ACCEL_PACK_DATE=%q\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf 'ACCEL_PACK_HOST=%q\n' "$(uname -n) $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"')"
} >"$meta/pack.env"
{
  echo "# accel device pack: $(date -u +%Y-%m-%dT%H:%M:%SZ), build $orig_build, source $orig_src"
  echo "# packed libraries (build/.device-pack/lib):"
  for name in $(printf '%s\n' "${!needed[@]}" | sort); do echo "lib $name <- ${needed[$name]}"; done
  echo "# left out: base system (glibc, libstdc++, libgcc) and CUDA's own libraries (the device has them)"
  for name in $(printf '%s\n' "${!skip_closure[@]}" | sort); do
    echo "left-out $name (ACCEL_PACK_SKIP_LIBS; needed only by:${skipped_by[$name]:- the skipped libraries})"
  done
  echo "# dataset: $data_note"
  echo "# files:"
  (cd "$stage" && find build -type f -o -type l | sort)
} >"$meta/MANIFEST"

command -v flock >/dev/null && flock -u 9

pack=$out_dir/$pack_name
echo "device_pack: compressing $(du -sh "$stage" | cut -f1) into $pack"
# shellcheck disable=SC2086  # ACCEL_PACK_XZ: several options
tar -C "$stage" -cf - build | xz ${ACCEL_PACK_XZ:--9 -T0} >"$pack.tmp"
mv "$pack.tmp" "$pack"
size=$(du -m "$pack" | cut -f1)
echo "device_pack: $pack: $(du -h "$pack" | cut -f1) ($(grep -c '^lib ' "$meta/MANIFEST") libraries packed; dataset $data_note)"
for name in $(printf '%s\n' "${!skip_closure[@]}" | sort); do
  echo "device_pack: left out $name (needed only by:${skipped_by[$name]:- the skipped libraries})"
done
echo "device_pack: next, copy the repo with .device/ to the GPU machine and run there (docs/gpu-testing.md):"
echo "  bash tools/gpu_check.sh unpack info test"
echo "  bash tools/gpu_check.sh unpack quickstart sanitize bench"
echo "(ACCEL_PACK_DATA=0 leaves the 26 MiB dataset out where the copy must be small.)"
