#!/usr/bin/env bash
# Regenerates docs/tasks.md: the reference of every task (from `pelab tasks --markdown`, so the
# text lives in one place, the task's code) and the measured results of the task survey
# (configs/tasks/*.yaml, each the seven main schemes × 2 learning rates × 3 seeds, trained to
# the criterion), plus the default comparison (configs/default.yaml, shift). Runs already
# finished under runs/ are reused.
#   tools/make_task_docs.sh [--allow-dirty] [extra pelab sweep options, e.g. --jobs 2]
#   tools/make_task_docs.sh --reference   only rewrites the Reference section (seconds)
# TASKS="copy parity" limits the survey to those tasks (TASKS="" runs only the default).
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
if [ "${1:-}" = --reference ]; then
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

ALL_TASKS=$(for c in configs/tasks/*.yaml; do basename "$c" .yaml; done)
if [ -z "${TASKS+set}" ]; then
  TASKS=$ALL_TASKS
fi
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

# The tables of a compare.md, each followed by a blank line, without its captions and plots.
compare_tables() {
  awk '/^\|/ { print; table = 1; next } table { print ""; table = 0 }' "$1"
}

# The survey's rule for a task no scheme learns, fixed before any of its runs: when no scheme's
# runs all meet the criterion at the survey's model, the task is run again with a larger one
# (the same criterion, learning rates, lr rule and seeds; only the model and the step cap
# grow). Where no scheme learns it there either, the page says so: not learned within that
# budget.
# Revised before any larger-model run had finished, for its cost alone: all seven schemes at
# the larger model are 42 runs of about 6 minutes of a core each, some 9 hours of the two
# cores for the four tasks concerned. So the larger model first probes the one scheme with
# the best in-distribution score at the survey's model (both learning rates, all seeds, the
# lr rule: 6 runs); only when that scheme learns the task are the other six swept at the
# larger model too, for the page's comparison. A task the probe does not learn is not
# learned within the budget.
LARGER=(model.d_model=128 model.layers=4 training.steps=6000)  # every survey config: 4 heads
LARGER_TEXT="d_model 128 with 4 heads of width 32 and 4 layers, trained for at most 6000 steps"
learned_schemes() { tools/learned_summary.py --count "$1/compare.json"; }
probe_scheme() { tools/learned_summary.py --best "runs/tasks/$1/compare.json"; }

# Results first: a failed sweep stops the script before docs/tasks.md is touched.
"$PELAB" sweep configs/default.yaml --out runs/default --no-progress "$@" >/dev/null
for name in $TASKS; do
  config=configs/tasks/$name.yaml
  "$PELAB" sweep "$config" --out "runs/tasks/$name" --no-progress "$@" >/dev/null
  learned=$(learned_schemes "runs/tasks/$name")  # an assignment, so that set -e sees a failure
  if [ "$learned" = 0 ]; then
    larger=runs/tasks-larger/$name
    probe=$(probe_scheme "$name")
    "$PELAB" sweep "$config" "${LARGER[@]}" "sweep.positional=[$probe]" --out "$larger" \
      --no-progress "$@" >/dev/null
    learned=$(learned_schemes "$larger")
    if [ "$learned" != 0 ]; then  # the same directory: the probe's runs are reused
      "$PELAB" sweep "$config" "${LARGER[@]}" --out "$larger" --no-progress "$@" >/dev/null
    fi
  fi
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
- **appended queries** — the input, then blank query tokens `?` whose outputs are the
  answer; only the queries are scored. pelab's own tasks put a separator `|` before the
  queries; the tasks of Delétang et al. 2023 (named after theirs, with the suffix
  `_deletang` where pelab already had the name) are laid out as their code lays them out,
  with no separator, and where their answer ends with the terminator `$` the queries after
  it are not scored (their accuracy mask). Their parity_check and cycle_navigation are
  pelab's parity and cycle_navigation;
- **classification** — one label, read at one designated token (a final `?`, or a marker).
- **lm** (`task.layout: lm`, a run's choice for an appended-queries task and a causal model,
  not a task's own layout) — the decoder layout of Kazemnejad et al. 2023: the input, the
  separator, then the answer itself, each target the next answer token and `<end>` after the
  last; evaluated by greedy generation, sequence accuracy being exact match.

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
- **relative** (Shaw, `max_distance: 8`, below the longest training length so that every
  row is trained) — offsets beyond 8 are clipped together. Tasks whose answer sits at an
  offset that grows with n (copy: n + 1; reverse; duplicate: up to 3n; missing_duplicate: n;
  even_pairs: the first token) cannot be represented once that offset passes 8 — already
  inside the training range, so relative may fail these in distribution for that reason
  alone; nor can long_range with `task.distance` above 8 (its survey config uses 8).
- **t5** (`num_buckets: 32`, `max_distance: 128`) — offsets below 8 (each sign) have their
  own bucket, larger ones share logarithmically wider buckets, and everything beyond 128
  shares one: exact long offsets are not representable, only their rough size. Causal
  training on sizes up to 16 reaches buckets 0–9 only; longer evaluations also use buckets
  that training never updated (configs/default.yaml names them).
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
  for name in $TASKS; do
    dirs="$dirs runs/tasks/$name"
    learned=$(learned_schemes "runs/tasks/$name")
    [ "$learned" != 0 ] || dirs="$dirs runs/tasks-larger/$name"
  done
  # shellcheck disable=SC2086
  commits=$(find $dirs -name environment.json -exec grep -ho '"git_commit": *"[^"]*"' {} + |
    sed 's/.*"\([^"]*\)"$/\1/' | sort -u | tr '\n' ' ')
  echo "Every experiment follows one protocol, fixed before the runs (the comments of"
  echo "\`configs/default.yaml\` give the reasons): the model is d_model 64 with 4 heads of width 16"
  echo "and 3 layers; each run trains until its validation sequence accuracy on the training sizes"
  echo "is ≥ 0.95 at two checks in a row (\`training.stop_when\`, checked every 100 steps), or for"
  echo "at most 3000 steps; two learning rates (1e-3, 3e-3) are run and \`pelab compare\` keeps,"
  echo "per scheme, the one with the best in-distribution validation score. The default job has 5"
  echo "seeds; each survey task has 3, to keep the survey within a few core-hours."
  echo
  echo "Each task shows three tables from \`pelab compare\`: sequence accuracy by problem size n"
  echo "(mean over seeds with a nominal 95% bootstrap interval, which with 3 seeds is their range:"
  echo "see the README's \"How far the intervals go\"; sizes marked * were in the training range),"
  echo "the same per seed with its median and max (papers report the max) and the mean training"
  echo "steps a run took (a run stops when it meets the criterion, so the schemes' extrapolation is"
  echo "measured at different points of training), and the learning rate chosen per scheme. A"
  echo "run *learned* the task when it met the criterion; † marks the"
  echo "extrapolation of a scheme whose runs did not all learn: it is not comparable with the"
  echo "others'. The sentence under the tables names who learned."
  echo
  echo "A task that no scheme learns (no scheme whose runs all met the criterion) is run again,"
  echo "by a rule fixed before the runs, with a larger model: $LARGER_TEXT, the"
  echo "same learning rates, lr rule and seeds. For its cost (about 6 core-minutes a run), the"
  echo "larger model first runs only the scheme with the best in-distribution score at the"
  echo "survey's model; the other schemes follow only if it learns the task. Its tables follow"
  echo "the first ones. Where the larger model does not learn it either, it is not learned within"
  echo "that budget, and its sentence says so."
  echo
  echo "Made by \`tools/make_task_docs.sh\` with $PROVENANCE. The runs record pelab commit(s)"
  echo "${commits% }; each run's directory under \`runs/\` holds its full config."
  echo
  echo "### shift (the default experiment, configs/default.yaml)"
  echo
  echo "Every scheme but \`none\` must learn this task in distribution before its extrapolation"
  echo "means anything. It is causal because shift looks backwards (bidirectional ALiBi is blind"
  echo "to direction); 5 seeds."
  echo
  compare_tables runs/default/compare.md
  tools/learned_summary.py runs/default/compare.json
  echo
  for name in $TASKS; do
    echo "### $name (configs/tasks/$name.yaml)"
    echo
    compare_tables "runs/tasks/$name/compare.md"
    tools/learned_summary.py "runs/tasks/$name/compare.json"
    echo
    learned=$(learned_schemes "runs/tasks/$name")
    if [ "$learned" = 0 ]; then
      echo "No scheme learned $name at the survey's model, so it ran again with the larger one,"
      echo "first for \`$(probe_scheme "$name")\`, the best in distribution above"
      echo "(\`pelab sweep configs/tasks/$name.yaml ${LARGER[*]} sweep.positional=[$(probe_scheme "$name")]\`;"
      echo "without the last override for every scheme):"
      echo
      compare_tables "runs/tasks-larger/$name/compare.md"
      learned=$(learned_schemes "runs/tasks-larger/$name")
      if [ "$learned" = 0 ]; then
        echo "**Not learned within the survey's budget:** by no scheme at the survey's model, nor by"
        echo "\`$(probe_scheme "$name")\`, the best of them there, at the larger one."
      fi
      tools/learned_summary.py "runs/tasks-larger/$name/compare.json"
      echo
    fi
  done
  missing=""
  for name in $ALL_TASKS; do
    case " $(echo $TASKS) " in *" $name "*) ;; *) missing="$missing $name" ;; esac
  done
  if [ -n "$missing" ]; then
    echo "Not on this page yet (their survey runs, or the larger model's runs that the rule above"
    echo "calls for, have not all finished):$(echo "$missing" | sed 's/ /, /g; s/^, / /')."
    echo "\`pelab sweep configs/tasks/NAME.yaml\` runs one; \`tools/make_task_docs.sh\` runs them all."
    echo
  fi
  reference_section
} >"$TMP"
cat "$TMP" >"$OUT"  # the file keeps its mode; the trap removes the temporary
echo "wrote $OUT"
