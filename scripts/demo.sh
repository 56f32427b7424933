#!/usr/bin/env bash
# The main job on the bundled models: builds the CLI and scans a committed fixture photo of the Netron viewer.
# Prints the graph JSON (schema v1, docs/graph-json.md) and writes an overlay image next to it.
#
#   bash scripts/demo.sh [photo.jpg|png] [overlay.png]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh >/dev/null
source scripts/env.sh
# Same feature set as `cargo test --release --workspace` (scripts/test.sh), so tract is compiled only once.
cargo build --release -q --workspace --bins
BIN="$CARGO_TARGET_DIR/release/netron-ocr"
IMG="${1:-tests/fixtures/scenes/000001.photo.jpg}"
OVERLAY="${2:-${TMPDIR:-/tmp}/netron-ocr-overlay.png}"
"$BIN" scan --pretty --overlay "$OVERLAY" "$IMG"
echo "overlay: $OVERLAY" >&2
