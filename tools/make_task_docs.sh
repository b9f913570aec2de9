#!/usr/bin/env bash
# Rewrites the Reference section of docs/tasks.md: every task's description, from `pelab tasks
# --markdown`, so the text lives in one place, the task's code (seconds). The measured results
# are the suites' (docs/suites/, `pelab suite docs NAME`), no longer this page's.
#   tools/make_task_docs.sh [--reference]
set -euo pipefail
cd "$(dirname "$0")/.."
PELAB_BUILD_TARGETS=pelab tools/setup.sh
PELAB=${PELAB_BUILD_DIR:-build}/pelab
OUT=docs/tasks.md

# The Reference section is the page's last: everything from its heading on is the tasks' own
# text, so a new task needs no survey run to be documented.
reference_section() {
  echo "## Reference"
  echo
  "$PELAB" tasks --markdown
}
if [ $# -eq 0 ] || [ "$1" = --reference ]; then
  TMP=$(mktemp)
  trap 'rm -f "$TMP"' EXIT
  {
    sed '/^## Reference$/,$d' "$OUT"
    reference_section
  } >"$TMP"
  cat "$TMP" >"$OUT"  # the file keeps its mode
  echo "wrote the Reference section of $OUT"
  exit 0
fi

echo "usage: tools/make_task_docs.sh [--reference] (the survey is the pelab suite now)" >&2
exit 2
