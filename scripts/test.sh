#!/usr/bin/env bash
# Runs every test suite: Rust (fmt, clippy, docs, tests), Python (data generator, training smoke tests, model checks),
# and the bindings (Python, Kotlin on the JVM, Swift on Linux). Each suite prints its own pass/fail count; the
# last line counts the suites.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh || exit 1
source scripts/env.sh

passed=0; failed=0; failed_names=()
suite() {
  local name="$1"; shift
  echo "=== suite $name"
  local t0=$SECONDS
  if "$@"; then passed=$((passed + 1)); echo "=== suite $name: ok ($((SECONDS - t0)) s)"
  else failed=$((failed + 1)); failed_names+=("$name"); echo "=== suite $name: FAILED ($((SECONDS - t0)) s)"; fi
}

suite rust-fmt cargo fmt --all -- --check
suite rust-clippy cargo clippy --release --workspace --all-targets -- -D warnings
# Doc comments: broken or private intra-doc links fail.
suite rust-doc env RUSTDOCFLAGS="-D warnings" cargo doc --release --no-deps --workspace
suite rust-test cargo test --release --workspace --no-fail-fast
# The NNEF build (no ONNX parser linked; models converted at build time): lint, then compare with the ONNX models.
nnef=(-p netron-ocr-core --no-default-features --features nnef,bundled-models)
suite rust-nnef bash -c "cargo clippy --release ${nnef[*]} --lib --test models_nnef -- -D warnings \
  && cargo test --release ${nnef[*]} --test models_nnef"
suite python bash -c "cd models && '$NETRON_OCR_PY' -m pytest -q -p no:cacheprovider"
suite bindings ffi/test-all.sh

((failed)) && echo "failed suites: ${failed_names[*]}"
echo "suites: $passed passed, $failed failed"
((failed == 0))
