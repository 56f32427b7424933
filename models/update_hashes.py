"""Write the SHA-256 of each exported model into its card: the line `SHA-256: <hex>` of models/<name>.MODEL.md.

    python models/update_hashes.py          # rewrite the lines from models/{cropper,detector,classifier,ocr}.onnx
    python models/update_hashes.py --check  # exit 1 if any line is missing or differs from its file

The Rust build (core/build.rs) reads these lines into the model manifest, and every model load (bundled or from
a directory) is refused when the file's hash differs (`ModelError::HashMismatch`). Run this after every export.
A card without the line gets it inserted right after its `# ` title (followed by a blank line).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

MODELS = ("cropper", "detector", "classifier", "ocr")
LINE = re.compile(r"^[ \t]*SHA-256:.*$", re.MULTILINE)


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rewrite(card_text: str, digest: str) -> str:
    """The card text with exactly one `SHA-256: <digest>` line (replacing any existing ones)."""
    new_line = f"SHA-256: {digest}"
    if LINE.search(card_text):
        first = True

        def sub(_m):
            nonlocal first
            out = new_line if first else ""
            first = False
            return out

        text = LINE.sub(sub, card_text)
        # Drop the blank lines left by removed duplicates.
        return re.sub(r"\n(?:[ \t]*\n){2,}", "\n\n", text)
    lines = card_text.split("\n")
    at = next((i + 1 for i, l in enumerate(lines) if l.startswith("# ")), 0)
    lines[at:at] = ["", new_line]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent, help="models directory")
    p.add_argument("--check", action="store_true", help="only check; exit 1 on a missing or stale line")
    args = p.parse_args(argv)
    stale = 0
    for name in MODELS:
        onnx, card = args.dir / f"{name}.onnx", args.dir / f"{name}.MODEL.md"
        if not onnx.is_file():
            print(f"{onnx}: missing", file=sys.stderr)
            return 2
        digest = file_hash(onnx)
        text = card.read_text(encoding="utf-8")
        new = rewrite(text, digest)
        if new == text:
            print(f"{name}: {digest} (up to date)")
            continue
        stale += 1
        if args.check:
            print(f"{name}: card out of date, file is {digest}", file=sys.stderr)
        else:
            card.write_text(new, encoding="utf-8")
            print(f"{name}: {digest} (written to {card.name})")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
