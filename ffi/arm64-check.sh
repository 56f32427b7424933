#!/usr/bin/env bash
# The library built for arm64, the phones' instruction set, and checked there: its size, and what it reads from
# the fixture scenes under user-mode emulation compared with the host build's reading.
#
#   ffi/arm64-check.sh [size] [scan] [convert] [tests] [nnef]      (default: size scan convert)
#
#   size   the FFI cdylib for aarch64-unknown-linux-gnu the way ffi/size-report.sh builds `release-small
#          --no-models --nnef` (opt-level "z", fat LTO, one codegen unit, the cdylib alone, packed relative
#          relocations); prints its stripped and gzip -9 sizes and its sections.
#   scan   the CLI for aarch64 (release, the bundled ONNX models), `eval` on tests/fixtures/scenes under
#          qemu-aarch64, and the host CLI's `eval` on the same images; prints every image whose figures or graph
#          differ, then the count. Exits non-zero if any differs.
#   convert  netron-ocr-convert built for aarch64 and run under qemu-aarch64 on models/, and the host's
#          converter on the same files; compares the NNEF files byte for byte (a file converted on one kind of
#          host must pass the manifest of a library built on the other). Exits non-zero if any differs.
#   tests  core's unit tests and the integration tests that run the models (detect_input_sizes, classify_model,
#          models_integrity, pipeline_fixtures, pipeline_non_netron), built for aarch64 and run under qemu-aarch64.
#          (The whole suite takes over an hour emulated.)
#   nnef   the NNEF build's models_nnef (the phones' build), likewise.
#
# Why a chroot: rustup cannot fetch other targets' standard libraries here, and this Debian's rustc is older than
# tract needs. Debian forky packages rustc with an arm64 standard library, the cross gcc and qemu-user
# (ffi/arm64-chroot-packages.txt); scripts/debian-chroot.sh builds that chroot once, outside the repo. The
# compiler is therefore Debian's (its version is printed), not the host's rustup one. The crates come from the
# host's cargo registry (bind-mounted; run a host build first), the aarch64 build goes to
# ${NETRON_ARM64_TARGET_DIR:-/root/.cache/netron-ocr/target-arm64}.
#
# Not part of scripts/test.sh: a fresh run costs the chroot (about 2.9 GB, minutes of download) and two builds of
# tract for arm64 (6 and 4 minutes on two cores in session 47: the fat-LTO library and the release CLI; the tests
# add 2 minutes of build and about 30 of emulation). Needs root. NETRON_ARM64_OUT=DIR keeps the eval reports
# and graphs of `scan` in DIR.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps=("$@")
((${#steps[@]})) || steps=(size scan convert)
target_dir="${NETRON_ARM64_TARGET_DIR:-/root/.cache/netron-ocr/target-arm64}"
registry="${CARGO_HOME:-/root/.cargo}/registry"
host_target="${CARGO_TARGET_DIR:-/root/.cache/netron-ocr/target}"
keep="${NETRON_ARM64_OUT:-}"  # set: the eval reports and graphs stay there
out="${keep:-$(mktemp -d)}"
mkdir -p "$target_dir" "$registry" "$out"

root="$("$repo/scripts/debian-chroot.sh" arm64-chroot forky "$repo/ffi/arm64-chroot-packages.txt" arm64 | tail -n 1)"

# shellcheck source=../scripts/chroot-mounts.sh
source "$repo/scripts/chroot-mounts.sh"
cleanup() {
  chroot_unmount_all
  [[ -n "$keep" ]] || rm -rf "$out"
}
trap cleanup EXIT
chroot_proc
chroot_bind /dev /dev
chroot_bind "$repo" /repo
chroot_bind "$registry" /root/.cargo/registry
chroot_bind "$target_dir" /target
chroot_bind "$out" /out

# in_chroot <command>: runs it in /repo with the cross toolchain's environment.
in_chroot() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    CARGO_TARGET_DIR=/target \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
    CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar \
    sh -c "cd /repo && $1"
}
in_chroot "rustc --version" >&2
cross=(--offline --target aarch64-unknown-linux-gnu)

for step in "${steps[@]}"; do
  case "$step" in
    size)
      in_chroot "nice -n 10 cargo rustc ${cross[*]} -p netron-ocr-ffi --lib --crate-type cdylib \
        --no-default-features --features nnef --profile release-small \
        --config 'profile.release-small.inherits=\"release\"' --config 'profile.release-small.opt-level=\"z\"' \
        --config 'profile.release-small.lto=\"fat\"' --config 'profile.release-small.codegen-units=1' \
        -- -C link-arg=-Wl,-z,pack-relative-relocs" >&2
      in_chroot "aarch64-linux-gnu-strip -o /out/stripped.so \
        /target/aarch64-unknown-linux-gnu/release-small/libnetron_ocr_ffi.so"
      echo "arm64 cdylib (release-small, --no-models, --nnef)"
      echo "stripped:           $(stat -c %s "$out/stripped.so") bytes"
      echo "stripped, gzip -9:  $(gzip -9 -c "$out/stripped.so" | wc -c) bytes"
      in_chroot "aarch64-linux-gnu-size -A /out/stripped.so" | awk '$2 ~ /^[0-9]+$/ && $2 > 50000 {print "  " $1, $2}'
      ;;
    scan)
      in_chroot "nice -n 10 cargo build ${cross[*]} --release -p netron-ocr-cli" >&2
      scenes=tests/fixtures/scenes
      in_chroot "qemu-aarch64 -L /usr/aarch64-linux-gnu /target/aarch64-unknown-linux-gnu/release/netron-ocr \
        eval --images $scenes --truth $scenes --threads 1 --json /out/arm64.json --graphs /out/arm64-graphs" \
        >"$out/arm64.log"
      (cd "$repo" && CARGO_TARGET_DIR="$host_target" nice -n 10 cargo build --release -p netron-ocr-cli >&2)
      "$host_target/release/netron-ocr" eval --images "$repo/$scenes" --truth "$repo/$scenes" --threads 1 \
        --json "$out/host.json" --graphs "$out/host-graphs" >"$out/host.log"
      python3 "$repo/ffi/arm64_compare.py" "$out/host.json" "$out/arm64.json" "$out/host-graphs" "$out/arm64-graphs"
      ;;
    convert)
      in_chroot "nice -n 10 cargo build ${cross[*]} --release -p netron-ocr-convert" >&2
      mkdir -p "$out/arm64-nnef" "$out/host-nnef"
      in_chroot "qemu-aarch64 -L /usr/aarch64-linux-gnu /target/aarch64-unknown-linux-gnu/release/netron-ocr-convert \
        models /out/arm64-nnef" >&2
      (cd "$repo" && CARGO_TARGET_DIR="$host_target" nice -n 10 cargo build --release -p netron-ocr-convert >&2)
      "$host_target/release/netron-ocr-convert" "$repo/models" "$out/host-nnef" >&2
      differ=0
      for file in "$out"/host-nnef/*.nnef.tar; do
        name="$(basename "$file")"
        if cmp -s "$file" "$out/arm64-nnef/$name"; then
          echo "same bytes on arm64 and the host: $name $(sha256sum <"$file" | cut -c1-16)"
        else
          echo "DIFFERENT on arm64 and the host: $name"
          differ=$((differ + 1))
        fi
      done
      echo "$differ NNEF files differ"
      ((differ == 0))
      ;;
    tests)
      in_chroot "nice -n 10 cargo test ${cross[*]} --release -p netron-ocr-core --no-fail-fast --lib \
        --test detect_input_sizes --test classify_model --test models_integrity --test pipeline_fixtures \
        --test pipeline_non_netron"
      ;;
    nnef)
      in_chroot "nice -n 10 cargo test ${cross[*]} --release -p netron-ocr-core --no-default-features \
        --features nnef,bundled-models --test models_nnef"
      ;;
    *) echo "unknown step $step (size, scan, convert, tests, nnef)" >&2; exit 2 ;;
  esac
done
