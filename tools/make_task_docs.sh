#!/usr/bin/env bash
# Regenerates docs/tasks.md: the reference of every task (from `pelab tasks --markdown`, so the
# text lives in one place, the task's code) and the measured results of the task survey
# (configs/tasks/*.yaml, each the seven main schemes × 3 seeds), plus the default comparison
# (configs/default.yaml, shift). Runs already finished under runs/ are reused.
#   tools/make_task_docs.sh [--allow-dirty] [extra pelab sweep options, e.g. --jobs 2]
# TASKS="copy parity" limits the survey to those tasks (TASKS="" runs only the default).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
PELAB=${PELAB_BUILD_DIR:-build}/pelab
ALL_TASKS=$(for c in configs/tasks/*.yaml; do basename "$c" .yaml; done)
if [ -z "${TASKS+set}" ]; then
  TASKS=$ALL_TASKS
fi
OUT=docs/tasks.md
# Results committed under docs/ come from one clean commit: --allow-dirty (recorded on the
# page) is the only way past that.
ALLOW_DIRTY=()
SWEEP_ARGS=()
for arg in "$@"; do
  if [ "$arg" = --allow-dirty ]; then ALLOW_DIRTY=(--allow-dirty); else SWEEP_ARGS+=("$arg"); fi
done
set -- "${SWEEP_ARGS[@]+"${SWEEP_ARGS[@]}"}"
PROVENANCE=$("$PELAB" provenance --configs configs "${ALLOW_DIRTY[@]+"${ALLOW_DIRTY[@]}"}")
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT

# Results first: a failed sweep stops the script before docs/tasks.md is touched.
"$PELAB" sweep configs/default.yaml --out runs/default --no-progress "$@" >/dev/null
for name in $TASKS; do
  config=configs/tasks/$name.yaml
  "$PELAB" sweep "$config" --out "runs/tasks/$name" --no-progress "$@" >/dev/null
done

{
  cat <<'EOF'
# Tasks

Every task is a seeded generator (`pelab tasks` lists them, `pelab tasks NAME` describes one,
`pelab gen NAME` writes examples to a file). A task is drawn at a *problem size* n; the
sequence the encoder reads may be longer (a separator, appended query tokens). Training
samples n uniformly from `task.min_length..task.max_length`; evaluation sets depend only on
the task, n and `evaluation.seed`, so every scheme and seed is judged on the same sequences.

Three layouts:

- **tagging** — a target at every input position (shift, local_sum);
- **appended queries** — the input, a separator `|`, then blank query tokens `?` whose
  outputs are the answer (as in Delétang et al. 2022); only the queries are scored;
- **classification** — one label, read at one designated token (a final `?`, or a marker).

*Sequence accuracy* counts an example right only when every scored token is right.

## What a scheme can represent at the shipped settings

Some failures are not about learning but about what a scheme can express at its settings.
With the shipped groups (`configs/positional/`):

- **none** — with causal attention a model can still count (the attention window grows
  with the position), so order is not entirely lost; bidirectional and without positions
  the encoder is exactly permutation-equivariant and can solve only order-free tasks
  (parity and cycle_navigation ignore order; associative_recall needs to know which value
  follows which key).
- **learned** — rows past the longest *training* length are never updated: they keep their
  initial random values, so extrapolation beyond `task.max_length` (in tokens) is not
  expected to work by construction.
- **relative** (Shaw, `max_distance: 16`) — offsets beyond 16 are clipped together. Tasks
  whose answer sits at an offset that grows with n (copy: n + 1; reverse; duplicate: up to
  3n; missing_duplicate: n; even_pairs: the first token) cannot be represented once that
  offset passes 16 — already at the top of the training range; nor can long_range with
  `task.distance` above 16 (its survey config uses 8).
- **t5** (`num_buckets: 32`, `max_distance: 128`) — offsets below 8 (each sign) have their
  own bucket, larger ones share logarithmically wider buckets, and everything beyond 128
  shares one: exact long offsets are not representable, only their rough size.
- **alibi** (symmetric −m·|Δ| in bidirectional encoders, −m·Δ over past keys in causal
  ones) — in a bidirectional encoder it cannot tell left from right (the model is exactly
  equivariant to reversing the sequence), so it cannot do shift; local_sum's weights are
  symmetric and survive this. Its fixed slopes favour near keys: reading far tokens (copy at
  large n) needs the content to outweigh a bias that grows with distance.
- **rotary, sinusoidal** — can express any fixed offset; whether the learned pattern holds
  at unseen positions or angles is what the measurements show.

The default experiment (`configs/default.yaml`, shift by 2) is causal because shift looks
backwards only; local_sum's survey config is bidirectional because it reads both
neighbours; every other survey config is causal (its answer tokens come after what they
read).

## Measured

EOF
  dirs="runs/default"
  for name in $TASKS; do dirs="$dirs runs/tasks/$name"; done
  # shellcheck disable=SC2086
  commits=$(find $dirs -name environment.json -exec grep -ho '"git_commit": *"[^"]*"' {} + |
    sed 's/.*"\([^"]*\)"$/\1/' | sort -u | tr '\n' ' ')
  echo "Each table: sequence accuracy (mean ± sample std over seeds 0, 1, 2) by problem size n;"
  echo "sizes marked * were in the training range. Under each table, the schemes that learned the"
  echo "task in distribution (mean over the training sizes ≥ 0.90): only their extrapolation"
  echo "columns say something about position. The survey configs are small on purpose (d_model 64,"
  echo "2 layers, 1000 steps unless the config says otherwise) so that the whole survey stays cheap;"
  echo "a task that no scheme learns at them needs a larger model or longer training"
  echo "before it can compare schemes, and the sentence under its table says so."
  echo
  echo "Made by \`tools/make_task_docs.sh\` with $PROVENANCE. The runs record pelab commit(s)"
  echo "${commits% }; each run's directory under \`runs/\` holds its full config."
  echo
  echo "### shift (the default experiment, configs/default.yaml)"
  echo
  echo "Every scheme but \`none\` must learn this task in distribution (≥ 0.95) before its"
  echo "extrapolation means anything. What it took: causal attention (shift looks backwards),"
  echo "8 heads and 3 layers (ALiBi's fixed slopes blur the nearest offsets: with 4 heads and 2"
  echo "layers it stays near 0.55), and 1500 steps."
  echo
  sed -n '/^|/p' runs/default/compare.md
  echo
  awk -f tools/learned_summary.awk runs/default/compare.csv
  echo
  for name in $TASKS; do
    echo "### $name (configs/tasks/$name.yaml)"
    echo
    sed -n '/^|/p' "runs/tasks/$name/compare.md"
    echo
    awk -f tools/learned_summary.awk "runs/tasks/$name/compare.csv"
    echo
  done
  missing=""
  for name in $ALL_TASKS; do
    case " $(echo $TASKS) " in *" $name "*) ;; *) missing="$missing $name" ;; esac
  done
  if [ -n "$missing" ]; then
    echo "Not measured on this page yet:$(echo "$missing" | sed 's/ /, /g; s/^, / /')."
    echo "\`pelab sweep configs/tasks/NAME.yaml\` runs one; \`tools/make_task_docs.sh\` runs them all."
    echo
  fi
  echo "## Reference"
  echo
  "$PELAB" tasks --markdown
} >"$TMP"
mv "$TMP" "$OUT"
trap - EXIT
echo "wrote $OUT"
