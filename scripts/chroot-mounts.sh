# Sourced by the scripts that run commands in a chroot made by scripts/debian-chroot.sh (ios/swift-test.sh,
# ffi/arm64-check.sh), after they set `root` to the chroot directory:
#   chroot_proc                 mounts /proc inside it;
#   chroot_bind SRC DEST        bind-mounts SRC at DEST inside it;
#   chroot_unmount_all          undoes every mount made so, newest first (call it from an EXIT trap).
# shellcheck shell=bash
chroot_mounted=()
chroot_proc() {
  mount -t proc proc "$root/proc"
  chroot_mounted+=("$root/proc")
}
chroot_bind() {
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  chroot_mounted+=("$root$2")
}
chroot_unmount_all() {
  local i
  for ((i = ${#chroot_mounted[@]} - 1; i >= 0; i--)); do umount -l "${chroot_mounted[$i]}" 2>/dev/null || true; done
}
