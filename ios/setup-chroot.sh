#!/usr/bin/env bash
# Build (once) a Debian trixie chroot with Swift for running the NetronOCR package tests on Linux.
#
# Prints the chroot directory as its last stdout line. The chroot is cached outside the repo in
# ${NETRON_SWIFT_CHROOT_ROOT:-/root/.cache/netron-ocr}/swift-chroot-<hash of chroot-packages.txt and the suite>;
# see scripts/debian-chroot.sh for the contract (reuse, rebuild of a half-built one, flock).
# Cost on a fresh machine: roughly 2.3 GB on disk; the download dominates (minutes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(NETRON_CHROOT_ROOT="${NETRON_SWIFT_CHROOT_ROOT:-/root/.cache/netron-ocr}" \
  "$here/../scripts/debian-chroot.sh" swift-chroot "${NETRON_SWIFT_SUITE:-trixie}" "$here/chroot-packages.txt" \
  | tail -n 1)"
echo "$dir"
