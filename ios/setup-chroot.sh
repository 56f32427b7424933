#!/usr/bin/env bash
# Build (once) a Debian trixie chroot with Swift for running the NetronOCR package tests on Linux.
#
# Contract:
#   - Prints the chroot directory as its last stdout line and exits 0 when the chroot is ready.
#   - Idempotent and cache-aware: the chroot lives OUTSIDE the repo, in
#     ${NETRON_SWIFT_CHROOT_ROOT:-/root/.cache/netron-ocr}/swift-chroot-<hash>, where <hash> is the first 12 hex
#     digits of sha256(ios/chroot-packages.txt + suite). A directory with a matching `.netron-ready` marker is reused
#     as is; a half-built one (no marker) is deleted and rebuilt.
#   - Concurrent callers serialize on a flock; the second one waits and then reuses the first one's result.
#   - Needs root (debootstrap, chroot) and Debian's package mirror; it installs `debootstrap` on the host if missing.
# Cost on a fresh machine: roughly 2.3 GB on disk; the download dominates (minutes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
suite="${NETRON_SWIFT_SUITE:-trixie}"
mirror="${NETRON_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
root_dir="${NETRON_SWIFT_CHROOT_ROOT:-/root/.cache/netron-ocr}"
pkg_file="$here/chroot-packages.txt"

hash="$( (cat "$pkg_file"; echo "suite=$suite") | sha256sum | cut -c1-12)"
dir="$root_dir/swift-chroot-$hash"
marker="$dir/.netron-ready"

if [[ -f "$marker" ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$root_dir"
exec 9>"$root_dir/swift-chroot-$hash.lock"
flock 9
if [[ -f "$marker" ]]; then  # built by a concurrent caller while we waited
  echo "$dir"
  exit 0
fi

log() { echo "[setup-chroot] $*" >&2; }

if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap on the host"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
fi

# Any leftover mounts from an interrupted run must go before the directory does.
for m in dev/pts dev proc sys; do
  if mountpoint -q "$dir/$m" 2>/dev/null; then umount -l "$dir/$m"; fi
done
if [[ -d "$dir" ]]; then
  log "removing half-built $dir"
  rm -rf --one-file-system "$dir"
fi

log "debootstrap $suite into $dir"
debootstrap --variant=minbase "$suite" "$dir" "$mirror" >&2

packages="$(sed -e 's/#.*//' "$pkg_file" | tr -s ' \n' ' ')"
log "installing in chroot: $packages"
mount -t proc proc "$dir/proc"
trap 'umount -l "$dir/proc" 2>/dev/null || true' EXIT
# shellcheck disable=SC2086
chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c "apt-get update -qq && apt-get install -y -qq $packages && apt-get clean" >&2
chroot "$dir" swift --version >&2

date -u +%FT%TZ >"$marker"
log "ready"
echo "$dir"
