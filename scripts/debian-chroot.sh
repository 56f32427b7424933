#!/usr/bin/env bash
# Build (once) a Debian chroot with the packages of a list, for tools this Debian host lacks.
#
#   scripts/debian-chroot.sh NAME SUITE PACKAGE_FILE [FOREIGN_ARCH]
#
# Used by ios/setup-chroot.sh (Swift, trixie) and ffi/arm64-check.sh (a Rust cross toolchain for arm64 and
# qemu-user, forky).
#
# Contract:
#   - Prints the chroot directory as its last stdout line and exits 0 when the chroot is ready.
#   - Idempotent and cache-aware: the chroot lives OUTSIDE the repo, in
#     ${NETRON_CHROOT_ROOT:-/root/.cache/netron-ocr}/NAME-<hash>, where <hash> is the first 12 hex digits of
#     sha256(PACKAGE_FILE + suite [+ foreign arch]). A directory with a matching `.netron-ready` marker is reused as
#     is; a half-built one (no marker) is deleted and rebuilt.
#   - PACKAGE_FILE: one package per line, '#' starts a comment; `pkg:arm64` names a foreign-architecture package,
#     which needs FOREIGN_ARCH (added with `dpkg --add-architecture`).
#   - Concurrent callers serialize on a flock; the second one waits and then reuses the first one's result.
#   - Needs root (debootstrap, chroot) and Debian's package mirror (${NETRON_DEBIAN_MIRROR}); it installs
#     `debootstrap` on the host if missing. The mirror's `Valid-Until` is not checked: a mirror snapshot older
#     than a week would otherwise be refused for testing and unstable suites.
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 NAME SUITE PACKAGE_FILE [FOREIGN_ARCH]" >&2
  exit 2
fi
name="$1" suite="$2" pkg_file="$3" foreign="${4:-}"
mirror="${NETRON_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
root_dir="${NETRON_CHROOT_ROOT:-/root/.cache/netron-ocr}"

hash="$( (cat "$pkg_file"; echo "suite=$suite"; [[ -z "$foreign" ]] || echo "foreign=$foreign") | sha256sum | cut -c1-12)"
dir="$root_dir/$name-$hash"
marker="$dir/.netron-ready"

if [[ -f "$marker" ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$root_dir"
exec 9>"$root_dir/$name-$hash.lock"
flock 9
if [[ -f "$marker" ]]; then  # built by a concurrent caller while we waited
  echo "$dir"
  exit 0
fi

log() { echo "[debian-chroot $name] $*" >&2; }

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
  if grep -q " $dir/" /proc/mounts; then
    log "$dir still has mounts under it; unmount them first" && exit 1
  fi
  log "removing half-built $dir"
  rm -rf --one-file-system "$dir"
fi

log "debootstrap $suite into $dir"
script=()  # a suite newer than the host's debootstrap uses the unstable suite's script, as trixie's does
[[ -e "/usr/share/debootstrap/scripts/$suite" ]] || script=(/usr/share/debootstrap/scripts/sid)
debootstrap --variant=minbase "$suite" "$dir" "$mirror" "${script[@]}" >&2

packages="$(sed -e 's/#.*//' "$pkg_file" | tr -s ' \n' ' ')"
log "installing in chroot: $packages"
root="$dir"
# shellcheck source=chroot-mounts.sh
source "$(dirname "${BASH_SOURCE[0]}")/chroot-mounts.sh"
trap chroot_unmount_all EXIT
chroot_proc
add_arch=""
[[ -z "$foreign" ]] || add_arch="dpkg --add-architecture $foreign && "
apt_opts="-o Acquire::Check-Valid-Until=false"
# shellcheck disable=SC2086
chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c "${add_arch}apt-get $apt_opts update -qq && apt-get $apt_opts install -y -qq $packages && apt-get clean" >&2

date -u +%FT%TZ >"$marker"
log "ready"
echo "$dir"
