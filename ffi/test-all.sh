#!/usr/bin/env bash
# Builds the host cdylib of netron-ocr-ffi, generates the Python, Kotlin and Swift bindings from it, and runs
# the three binding test suites. Each suite ends with a line `<suite>: N passed, N failed`; the script exits
# non-zero when any suite failed or could not run. Timings of each part are printed at the end.
#
# Environment (all optional):
#   CARGO_TARGET_DIR            main workspace target dir   (default /root/.cache/netron-ocr/target)
#   NETRON_BINDGEN_TARGET_DIR   uniffi-bindgen's own one    (default /root/.cache/netron-ocr/target-bindgen)
#   NETRON_PYTHON               python with pytest + numpy  (default: the project venv, else python3)
#   NETRON_SUITES               subset to run, e.g. "python kotlin" (default "python kotlin swift")
#   NETRON_FFI_BUILD=package    build only the ffi crate (`cargo build -p`) instead of the workspace tests
# Needs on a fresh machine: Rust, a JDK 17 + Maven (installed with apt-get if missing), network access to
# Maven Central (first run) and Debian's mirror (first run: ios/setup-chroot.sh builds the Swift chroot), root.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/root/.cache/netron-ocr/target}"
bindgen_target="${NETRON_BINDGEN_TARGET_DIR:-/root/.cache/netron-ocr/target-bindgen}"
suites="${NETRON_SUITES:-python kotlin swift}"
nice_cmd=(nice -n 10)

# The cdylib as cargo wrote it. `cargo test --no-run` leaves it in deps/ only: it does not copy ("uplift") it to
# release/, so release/libnetron_ocr_ffi.so may be a stale copy from an earlier `cargo build`. `cargo build`
# writes deps/ too, so deps/ is right for both build modes.
lib="$CARGO_TARGET_DIR/release/deps/libnetron_ocr_ffi.so"
bindgen="$bindgen_target/release/uniffi-bindgen"
py_out="$repo/bindings/python/netron_ocr_ffi"
kt_out="$repo/android/jvm-test/target/generated/uniffi"
swift_out="$repo/ios/Sources/NetronOCR/Generated"
swift_ffi="$repo/ios/Sources/NetronOCRFFI"

timings=()
failed=0
step_start=0
begin() { echo "=== $1"; step_start=$(date +%s); }
end() { timings+=("$(printf '%-22s %4ds' "$1" $(($(date +%s) - step_start)))"); }
die() { echo "test-all: $*" >&2; exit 1; }

# --- native library and bindgen -----------------------------------------------------------------------------
begin "cargo build (cdylib)"
if [[ "${NETRON_FFI_BUILD:-workspace}" == package ]]; then
  (cd "$repo" && "${nice_cmd[@]}" cargo build --release -p netron-ocr-ffi --lib) || die "cdylib build failed"
else
  # `cargo test --no-run` over the workspace: the same feature unification as `cargo test --release --workspace`
  # (which CI runs first), so no dependency is compiled a second time with other features (a `-p` build of the
  # ffi crate alone would rebuild tract). ffi/tests/cdylib.rs makes cargo emit the cdylib.
  (cd "$repo" && "${nice_cmd[@]}" cargo test --release --workspace --no-run) || die "cdylib build failed"
fi
[[ -f "$lib" ]] || die "no $lib after the build"
end "cargo build (cdylib)"

begin "uniffi-bindgen build"
(cd "$repo/ffi/bindgen" && CARGO_TARGET_DIR="$bindgen_target" "${nice_cmd[@]}" cargo build --release --locked) \
  || die "uniffi-bindgen build failed"
end "uniffi-bindgen build"

begin "generate bindings"
gen() { "$bindgen" generate --library "$lib" --language "$1" --out-dir "$2" --no-format >/dev/null; }
rm -rf "$py_out" "$kt_out" "$swift_out"
mkdir -p "$py_out" "$kt_out" "$swift_out"
gen python "$py_out" && cp "$lib" "$py_out/" || die "python bindings"
gen kotlin "$kt_out" || die "kotlin bindings"
tmp_swift="$(mktemp -d)"
gen swift "$tmp_swift" || die "swift bindings"
mv "$tmp_swift"/*.swift "$swift_out/"
mv "$tmp_swift/NetronOCRFFI.h" "$swift_ffi/"
rm -rf "$tmp_swift"
end "generate bindings"

# --- suites ---------------------------------------------------------------------------------------------------
report() { # report <suite> <passed> <failed>  (printed alone on its own line: tools print without a final newline)
  printf '\n%s: %s passed, %s failed\n' "$1" "$2" "$3"
  if [[ "$3" != 0 || "$2" == 0 ]]; then failed=1; fi
}

# A python with pytest and numpy: $NETRON_PYTHON, else the project venv, else a small venv of our own with the
# versions pinned in models/requirements.txt.
python_for_tests() {
  if [[ -n "${NETRON_PYTHON:-}" ]]; then echo "$NETRON_PYTHON"; return; fi
  local py=/root/.cache/netron-ocr/venv/bin/python
  if [[ -x "$py" ]] && "$py" -c 'import numpy, pytest' 2>/dev/null; then echo "$py"; return; fi
  local own=/root/.cache/netron-ocr/venv-bindings
  if ! "$own/bin/python" -c 'import numpy, pytest' 2>/dev/null; then
    python3 -m venv "$own" >&2
    "$own/bin/pip" install -q $(grep -iE '^(numpy|pytest)==' "$repo/models/requirements.txt") >&2
  fi
  echo "$own/bin/python"
}

run_python() {
  begin "python (pytest)"
  local py
  py="$(python_for_tests)"
  local log="$CARGO_TARGET_DIR/test-all-pytest.log"
  (cd "$repo/bindings/python" && "${nice_cmd[@]}" "$py" -m pytest -q) 2>&1 | tee "$log"
  local summary passed failed_n
  summary="$(tail -n 1 "$log")"
  passed="$(grep -o '[0-9]\+ passed' <<<"$summary" | cut -d' ' -f1)"
  failed_n=$(($(grep -o '[0-9]\+ failed' <<<"$summary" | cut -d' ' -f1 || echo 0) + \
    $(grep -o '[0-9]\+ error' <<<"$summary" | cut -d' ' -f1 || echo 0)))
  end "python (pytest)"
  report python "${passed:-0}" "$failed_n"
}

run_kotlin() {
  begin "kotlin (maven, JUnit)"
  if ! command -v mvn >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven openjdk-17-jdk-headless
  fi
  local reports="$repo/android/jvm-test/target/surefire-reports"
  rm -rf "$reports"
  (cd "$repo/android/jvm-test" && "${nice_cmd[@]}" mvn -B -q -Dstyle.color=never test \
    -Duniffi.dir="$kt_out" -Dnative.dir="$(dirname "$lib")" -Drepo.root="$repo")
  local counts
  counts="$(cat "$reports"/TEST-*.xml 2>/dev/null | python3 -c '
import re, sys
t = f = 0
for m in re.finditer(r"<testsuite\b[^>]*>", sys.stdin.read()):
    a = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(0)))
    t += int(a.get("tests", 0)); f += int(a.get("failures", 0)) + int(a.get("errors", 0))
    t -= int(a.get("skipped", 0))
print(t - f, f)')"
  end "kotlin (maven, JUnit)"
  report kotlin ${counts:-0 1}
}

run_swift() {
  begin "swift (chroot, XCTest)"
  local log="$CARGO_TARGET_DIR/test-all-swift.log"
  "${nice_cmd[@]}" "$repo/ios/swift-test.sh" "$(dirname "$lib")" 2>&1 | tee "$log"
  # XCTest on Linux: "Executed 12 tests, with 0 failures (0 unexpected) in ..." (the last one is the total).
  local line total fails
  line="$(grep -E 'Executed [0-9]+ tests?, with [0-9]+ failures?' "$log" | tail -n 1)"
  total="$(sed -E 's/.*Executed ([0-9]+) tests?.*/\1/' <<<"$line")"
  fails="$(sed -E 's/.*with ([0-9]+) failures?.*/\1/' <<<"$line")"
  end "swift (chroot, XCTest)"
  if [[ -z "$line" ]]; then report swift 0 1; else report swift $((total - fails)) "$fails"; fi
}

for s in $suites; do
  case "$s" in
    python) run_python ;;
    kotlin) run_kotlin ;;
    swift) run_swift ;;
    *) die "unknown suite $s" ;;
  esac
done

echo "=== timings"
printf '%s\n' "${timings[@]}"
exit "$failed"
