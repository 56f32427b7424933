# Sourced by the scripts: shared locations outside the clone.
export NETRON_OCR_CACHE="${NETRON_OCR_CACHE:-$HOME/.cache/netron-ocr}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$NETRON_OCR_CACHE/target}"
export NETRON_OCR_PY="$NETRON_OCR_CACHE/venv/bin/python"
