#!/usr/bin/env bash
# Size of the host cdylib: stripped size, gzip -9 size, and the crates that dominate it (by symbol size).
#
# Usage: ffi/size-report.sh [release|release-small] [--no-models] [--nnef] [--icf] [--outline]
#   release        the normal release build (reuses CARGO_TARGET_DIR, default /root/.cache/netron-ocr/target)
#   release-small  opt-level "z", fat LTO, 1 codegen unit, panic = "unwind" kept (the FFI boundary catches
#                  panics), stripped; the cdylib built alone (`cargo rustc --crate-type cdylib`: with the
#                  crate's three crate types together the fat LTO is not applied, 2.7 MB more) and linked with
#                  packed relative relocations (`-z pack-relative-relocs`, DT_RELR: GNU ld >= 2.38, glibc >=
#                  2.36; 0.8 MB less). (Built with symbols and stripped by this script, which gives the same bytes
#                  as `strip = true` and lets it attribute the size to crates first.) Defined here with
#                  --config so the root Cargo.toml needs no extra profile; built in its own target dir
#                  (${NETRON_SMALL_TARGET_DIR:-/root/.cache/netron-ocr/target-small}) because it rebuilds every
#                  dependency. SLOW (fat LTO over tract): build it once per change.
#   --no-models    without the bundled models: the library the goal is about.
#   --nnef         models read as NNEF (feature `nnef` without `onnx`): no ONNX parser in the library.
#   --icf          release-small only: also link with identical code folding (`-Wl,--icf=all`, LLD, which rustc
#                  uses by default on x86_64 Linux since 1.90 and the NDK's clang uses on Android), which merges
#                  functions whose machine code is the same (session 37: 90 KB less, docs/mobile.md).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
profile="${1:-release}"
format=onnx
models=bundled-models,
link_args=(-C link-arg=-Wl,-z,pack-relative-relocs)
for arg in "${@:2}"; do
  case "$arg" in
    --no-models) models= ;;
    --nnef) format=nnef ;;
    --icf) link_args+=(-C link-arg=-Wl,--icf=all) ;;
    --outline) link_args+=(-C llvm-args=-enable-machine-outliner=always) ;;
    *) echo "unknown option $arg" >&2; exit 2 ;;
  esac
done
features=(--no-default-features --features "${models}${format}")
cd "$repo"
case "$profile" in
  release)
    target="${CARGO_TARGET_DIR:-/root/.cache/netron-ocr/target}"
    CARGO_TARGET_DIR="$target" nice -n 10 cargo build --release -p netron-ocr-ffi --lib "${features[@]}" >&2
    ;;
  release-small)
    target="${NETRON_SMALL_TARGET_DIR:-/root/.cache/netron-ocr/target-small}"
    CARGO_TARGET_DIR="$target" nice -n 10 cargo rustc -p netron-ocr-ffi --lib --crate-type cdylib "${features[@]}" \
      --profile release-small \
      --config 'profile.release-small.inherits="release"' \
      --config 'profile.release-small.opt-level="z"' \
      --config 'profile.release-small.lto="fat"' \
      --config 'profile.release-small.codegen-units=1' \
      -- "${link_args[@]}" >&2
    ;;
  *) echo "usage: $0 [release|release-small] [--no-models] [--nnef] [--icf] [--outline]" >&2; exit 2 ;;
esac

lib="$target/$profile/libnetron_ocr_ffi.so"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$lib" "$tmp/full.so"
strip -o "$tmp/stripped.so" "$tmp/full.so"
echo "profile:            $profile"
echo "cdylib as built:    $(stat -c %s "$lib") bytes"
echo "stripped:           $(stat -c %s "$tmp/stripped.so") bytes"
echo "stripped, gzip -9:  $(gzip -9 -c "$tmp/stripped.so" | wc -c) bytes"
if nm "$tmp/full.so" >/dev/null 2>&1 && [[ -n "$(nm "$tmp/full.so" 2>/dev/null | head -n 1)" ]]; then
  echo "largest crates by symbol size:"
  nm -C --size-sort -S "$tmp/full.so" | python3 -c '
import collections, re, sys
total = collections.Counter()
for line in sys.stdin:
    parts = line.split(None, 3)
    if len(parts) < 4:
        continue
    name = re.sub(r"^(<|impl |dyn )+", "", parts[3].strip())
    total[re.split(r"::|<| ", name)[0]] += int(parts[1], 16)
for crate, size in total.most_common(10):
    print(f"  {size / 1e6:6.2f} MB  {crate}")'
else
  echo "(no symbols left to attribute: the profile strips them)"
fi
