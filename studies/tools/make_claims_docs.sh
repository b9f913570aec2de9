#!/usr/bin/env bash
# Regenerates studies/docs/claims/: runs `pelab reproduce` (the full settings; finished
# training runs under runs/claims are reused) and copies its report, claims.json and the
# figures the report shows into studies/docs/claims/, without the training runs themselves,
# and refreshes the table of verdicts in studies/README.md from the report. The
# reproductions' (R1–R3) finished runs are kept in studies/results/claims/
# (studies/tools/claim_runs.sh), so that a clone continues from them.
#   studies/tools/make_claims_docs.sh [extra pelab reproduce options, e.g. --jobs 2 or --only C4]
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh
PELAB=${PELAB_BUILD_DIR:-build}/pelab
OUT=${PELAB_CLAIMS_OUT:-runs/claims}
DOCS=studies/docs/claims

# The reproductions' runs recorded in studies/results/claims serve as finished runs (runs already
# under $OUT stay as they are); then results first: a failed run stops the script before
# the docs are touched; then the record takes the reproductions' runs this one finished.
PELAB_CLAIMS_OUT=$OUT studies/tools/claim_runs.sh restore
status=0
"$PELAB" reproduce --out "$OUT" "$@" || status=$?
PELAB_CLAIMS_OUT=$OUT studies/tools/claim_runs.sh save  # what finished, even if the run stopped
[ "$status" -eq 0 ] || exit "$status"

rm -rf "$DOCS.new"
mkdir -p "$DOCS.new"
cp "$OUT/report.md" "$OUT/claims.json" "$DOCS.new/"
# Every image the report links to, at the same relative path.
grep -o '](\([^)]*\.png\))' "$OUT/report.md" | sed 's/^](\(.*\))$/\1/' | sort -u |
  while read -r figure; do
    mkdir -p "$DOCS.new/$(dirname "$figure")"
    cp "$OUT/$figure" "$DOCS.new/$figure"
  done
rm -rf "$DOCS"
mv "$DOCS.new" "$DOCS"

# studies/README.md's table of verdicts, between its claims-table markers: the report's own
# summary rows, linked to the report.
{
  echo "| claim | verdict | what was measured |"
  echo "|---|---|---|"
  grep '^| \[[CR][0-9]*\](#[cr][0-9]*) |' "$DOCS/report.md" |
    sed 's|](#\([cr]\)|](docs/claims/report.md#\1|'
} > "$DOCS.table"
awk -v table="$DOCS.table" '
  /<!-- claims-table:end -->/ { while ((getline line < table) > 0) print line; skip = 0 }
  !skip { print }
  /<!-- claims-table:begin -->/ { skip = 1 }
' studies/README.md > studies/README.md.new
mv studies/README.md.new studies/README.md
rm -f "$DOCS.table"
echo "wrote $DOCS/report.md, $DOCS/claims.json and $(find "$DOCS" -name '*.png' | wc -l) figures"
