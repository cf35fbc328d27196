#!/usr/bin/env bash
# Lint the native sources: every C/C++ file builds without a warning (-Werror) and
# matches the .clang-format of its library (the recorder and the allocator each have
# their own style). CI runs this before the tests; run it before you commit C code.
#   LINT_BUILD_DIR  where the -Werror build goes (default build-lint)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${LINT_BUILD_DIR:-build-lint}
echo "lint: building with -Werror into $build"
cmake -S . -B "$build" -G Ninja -DHEAPSCOPE_WERROR=ON >/dev/null
cmake --build "$build" >/dev/null || { cmake --build "$build" 2>&1 | grep -E "error|warning" | head -20; exit 1; }

if ! command -v clang-format >/dev/null; then
  echo "lint: clang-format is not installed: run scripts/setup.sh" >&2
  exit 1
fi
# Only the folders that carry a style of their own are checked against it.
mapfile -t files < <(for dir in $(git ls-files '*.clang-format' | xargs -r -n1 dirname); do
  git ls-files "$dir" | grep -E '\.(c|h|cc|cpp)$'
done | sort -u)
if [ ${#files[@]} -gt 0 ] && ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/heapscope-lint.$$; then
  head -20 /tmp/heapscope-lint.$$ >&2
  n=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' /tmp/heapscope-lint.$$ | cut -d: -f1 | sort -u | wc -l)
  rm -f /tmp/heapscope-lint.$$
  echo "lint: $n files differ from their .clang-format: run clang-format -i on them" >&2
  exit 1
fi
rm -f /tmp/heapscope-lint.$$
echo "lint: ${#files[@]} files formatted as their .clang-format says; no warnings"
