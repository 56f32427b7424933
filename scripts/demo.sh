#!/usr/bin/env bash
# The main job on the bundled models: builds the CLI and runs it on a committed fixture photo.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh >/dev/null
source scripts/env.sh
cargo build --release -q -p netron-ocr-cli
BIN="$CARGO_TARGET_DIR/release/netron-ocr"
IMG="${1:-tests/fixtures/scenes/000000.photo.jpg}"
"$BIN" quality --pretty "$IMG"
