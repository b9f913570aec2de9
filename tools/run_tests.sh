#!/usr/bin/env bash
# The whole test suite: sets up and builds (tools/setup.sh), then runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
BUILD_DIR=${PELAB_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" -j"$(nproc)" --output-on-failure --timeout 900 "$@"
