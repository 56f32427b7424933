#!/usr/bin/env bash
# Runs every test suite: Rust (fmt, clippy, tests), Python (data generator, training smoke tests, model checks),
# and the bindings (Python, Kotlin on the JVM, Swift on Linux). Each suite prints its own pass/fail count; the
# last line counts the suites.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh || exit 1
source scripts/env.sh

passed=0; failed=0; failed_names=(); advisory_failed=()
suite() {
  local name="$1"; shift
  echo "=== suite $name"
  local t0=$SECONDS
  if "$@"; then passed=$((passed + 1)); echo "=== suite $name: ok ($((SECONDS - t0)) s)"
  else failed=$((failed + 1)); failed_names+=("$name"); echo "=== suite $name: FAILED ($((SECONDS - t0)) s)"; fi
}

# Advisory suites: run and reported, but not yet gating (see issues 2 and 7: lints and the bindings suites are
# being brought to green; make them gating by moving them to `suite`).
advisory() {
  local name="$1"; shift
  echo "=== advisory suite $name"
  if "$@"; then echo "=== advisory suite $name: ok"; else advisory_failed+=("$name"); echo "=== advisory suite $name: FAILED (not gating)"; fi
}

suite rust-test cargo test --release --workspace --no-fail-fast
suite python bash -c "cd models && '$NETRON_OCR_PY' -m pytest -q -p no:cacheprovider"
advisory rust-fmt cargo fmt --all -- --check
advisory rust-clippy cargo clippy --release --workspace --all-targets -- -D warnings
if [ -x ffi/test-all.sh ]; then advisory bindings ffi/test-all.sh; fi

((failed)) && echo "failed suites: ${failed_names[*]}"
((${#advisory_failed[@]})) && echo "advisory suites that failed (not gating): ${advisory_failed[*]}"
echo "suites: $passed passed, $failed failed"
((failed == 0))
