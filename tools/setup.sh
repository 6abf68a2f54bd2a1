#!/usr/bin/env bash
# Installs every Debian package accel needs to build, test and run its main job.
# Idempotent: when everything is already installed it only checks and returns in seconds.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libyaml-cpp-dev libtbb-dev libboost-dev libboost-filesystem-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev zlib1g-dev libhdf5-dev libzip-dev
  libdnnl-dev libopenblas-dev libgloo-dev
  clang libclang-rt-14-dev chromium
  dataset-fashion-mnist
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
