#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine: system packages, the pinned Python venv, Rust components.
# Heavy installs are cached outside the clone under $NETRON_OCR_CACHE, keyed by the hash of their requirements.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${NETRON_OCR_CACHE:-$HOME/.cache/netron-ocr}"
mkdir -p "$CACHE"

APT_PKGS=(chromium fonts-wqy-microhei maven debootstrap pkg-config)
missing=()
for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

HASH="$(sha256sum "$ROOT/models/requirements.txt" | cut -c1-12)"
VENV="$CACHE/venv-$HASH"
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$VENV/.complete" ]; then
  echo "setup: creating Python venv $VENV (torch is large: a few minutes)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -r "$ROOT/models/requirements.txt"
  touch "$VENV/.complete"
fi
ln -sfn "$VENV" "$CACHE/venv"

rustup component add rustfmt clippy >/dev/null 2>&1 || true
echo "setup: ok (venv $VENV, cargo target ${CARGO_TARGET_DIR:-$CACHE/target})"
