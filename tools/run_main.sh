#!/usr/bin/env bash
# The main job: sets up and builds (tools/setup.sh), then runs the default comparison of
# positional schemes (configs/default.yaml): every scheme × the seeds × the learning rates
# of its sweep, trained on short sequences and tested on sequences up to 4× longer; prints
# the table and writes the plots into runs/default/. Re-running skips the runs already
# finished. It builds only the pelab command, not the test suite.
#   tools/run_main.sh [extra key=value overrides or pelab sweep options]
set -euo pipefail
cd "$(dirname "$0")/.."
PELAB_BUILD_TARGETS=pelab tools/setup.sh
BUILD_DIR=${PELAB_BUILD_DIR:-build}
exec "$BUILD_DIR/pelab" sweep configs/default.yaml "$@"
