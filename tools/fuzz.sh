#!/usr/bin/env bash
# Fuzzes each way into pelab with libFuzzer: the config loader, the override parser, the
# dataset reader, the checkpoint reader, `pelab eval` of a checkpoint and the command
# line's arguments (tests/fuzz/).
# Installs clang from Debian's packages if it is missing, builds the targets with
# AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/ (or $PELAB_FUZZ_BUILD_DIR),
# then runs each target for SECONDS (default 30) on a copy of its seed corpus
# (tests/fuzz/corpus/<target>/).
# A crash, a sanitizer report or a timeout fails the script; the input that caused it is
# left in the build directory (crash-*, timeout-*, oom-*) to reproduce with
#   build-fuzz/tests/fuzz/fuzz_<target> <file>
#   tools/fuzz.sh [seconds] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${1:-30}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(config overrides dataset safetensors eval_checkpoint cli_args suite)

PACKAGES=(clang libclang-rt-14-dev libomp-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pelab fuzz: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${PELAB_FUZZ_BUILD_DIR:-build-fuzz}
# PELAB_FUZZ_TESTS=ON also configures the test suite in the same build (CI runs the fast tests
# from it under the same sanitizers). -O1 with line tables: fast to build, readable reports.
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DPELAB_FUZZ=ON \
    -DPELAB_BUILD_TESTS="${PELAB_FUZZ_TESTS:-OFF}" -DPELAB_WERROR=OFF -DPELAB_NATIVE=OFF >/dev/null
fi
ninja -C "$BUILD_DIR" -j"$(nproc)" $(printf 'fuzz_%s ' "${TARGETS[@]}")

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${TARGETS[@]}"; do
  work="$BUILD_DIR/fuzz-$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp -n tests/fuzz/corpus/"$t"/* "$work/corpus/" 2>/dev/null || true
  echo "== fuzz_$t for ${SECONDS_EACH}s"
  # -timeout: an input that takes this long is a hang; -rss_limit_mb: memory a bad input
  # could make pelab take (the parameter budget allows about 1 GiB). PELAB_FUZZ_SEED: a target
  # that makes its own input at start-up (fuzz_eval_checkpoint: a checkpoint of this build)
  # adds it to the working corpus.
  if ! PELAB_FUZZ_SEED="$work/corpus/seed-of-this-build" \
      "$BUILD_DIR/tests/fuzz/fuzz_$t" "$work/corpus" tests/fuzz/corpus/"$t" \
      -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
      -artifact_prefix="$work/artifacts/" -print_final_stats=1 </dev/null 2>"$work/log.txt"; then
    status=1
    tail -n 40 "$work/log.txt"
    echo "fuzz_$t FAILED; the input is in $work/artifacts/"
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" "$work/log.txt" || true
  fi
done
exit $status
