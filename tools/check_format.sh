#!/usr/bin/env bash
# Checks that every C++ file git tracks is formatted as .clang-format says (clang-format 14,
# Debian's; installed if missing). Lists the files that are not and exits 1; to fix them:
#   clang-format -i $(git ls-files '*.cpp' '*.h')
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format >/dev/null; then
  echo "pelab format check: installing clang-format"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-format >/dev/null
fi

mapfile -t files < <(git ls-files '*.cpp' '*.h')
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "not formatted as .clang-format says (clang-format -i FILE fixes it):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "${#files[@]} C++ files formatted as .clang-format says"
