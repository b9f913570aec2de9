#!/usr/bin/env bash
# Installs pelab's build dependencies from Debian's packages (only those missing), then
# configures and builds into build/ (or $PELAB_BUILD_DIR). Idempotent, and quick when
# nothing changed: no apt call when every package is present, ninja rebuilds only what changed.
#   tools/setup.sh [extra cmake -D options]
# PELAB_BUILD_TARGETS (default: every target) names the ninja targets to build, so that a job
# that runs only the pelab command does not build the test suite first.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ git pkg-config
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers   # oneDNN (its CMake config needs OpenCL)
  libopenblas-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libbenchmark-dev
  gnuplot-nox                                       # plots
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pelab setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${PELAB_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
fi
read -r -a targets <<<"${PELAB_BUILD_TARGETS:-}"
ninja -C "$BUILD_DIR" --quiet "${targets[@]}" 2>/dev/null || ninja -C "$BUILD_DIR" "${targets[@]}"
