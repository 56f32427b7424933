#!/usr/bin/env bash
# Runs `swift test` for the NetronOCR package inside the Debian trixie chroot made by setup-chroot.sh.
#
# Usage: ios/swift-test.sh <dir holding libnetron_ocr_ffi.so> [extra swift test args...]
# Needs: the generated Swift bindings and header in place (ffi/test-all.sh generates them), root (chroot, mounts).
# The repo is bind-mounted at /repo and the library directory at /netron-lib; SwiftPM's build directory lives
# outside the repo (${NETRON_SWIFT_SCRATCH:-/root/.cache/netron-ocr/swift-build}, mounted at /swift-build) so
# a fresh clone reuses it. Mounts are undone on exit, also on failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
libdir="$(cd "${1:?usage: swift-test.sh <dir with libnetron_ocr_ffi.so>}" && pwd)"
shift
scratch="${NETRON_SWIFT_SCRATCH:-/root/.cache/netron-ocr/swift-build}"
mkdir -p "$scratch"

root="$("$here/setup-chroot.sh" | tail -n 1)"

# shellcheck source=../scripts/chroot-mounts.sh
source "$repo/scripts/chroot-mounts.sh"
trap chroot_unmount_all EXIT
chroot_proc
chroot_bind /dev /dev
chroot_bind "$repo" /repo
chroot_bind "$libdir" /netron-lib
chroot_bind "$scratch" /swift-build

chroot "$root" /usr/bin/env -i \
  PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LD_LIBRARY_PATH=/netron-lib \
  sh -c 'cd /repo/ios && swift test --disable-swift-testing --scratch-path /swift-build -Xlinker -L/netron-lib "$@"' swift-test "$@"
