"""The operator vocabulary: the 72 ONNX operators the classifier can name.

`models/vocab.json` is the single source of truth (trainers, the dataset builder and the Rust core read it).
Its layout is `{"version": 1, "opset": N, "operators": [{"op", "category", "index", "train_nodes"}, ...]}` where

- `index` is the classifier class id; it equals the entry's position and the order is append-only forever;
- `category` is Netron's node-header category for that operator, lower-cased as in Netron's CSS class
  `node-item-type-<category>` (taken from the `onnx-metadata.json` shipped in the `netron` package), or
  `"none"` for operators without one (Add, MatMul, ...);
- `opset` is the default-domain opset the random graphs are generated for; every operator exists there;
- `train_nodes` (optional) is how many nodes of that operator the training split's random graphs hold
  (`python -m datagen priors`): the prior the Rust core falls back on where a card's header shows a node name
  that names no operator, so that only its colour, hence its category, is seen.

This module only needs the standard library so any Python tool can load the vocabulary.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

VOCAB_PATH = Path(__file__).resolve().parents[1] / "vocab.json"
NUM_CLASSES = 72
# Netron's header categories for ONNX (metadata names lower-cased) plus "none".
CATEGORIES = frozenset(
    {
        "layer",
        "activation",
        "pool",
        "normalization",
        "dropout",
        "shape",
        "tensor",
        "transform",
        "data",
        "attention",
        "none",
    }
)
# Netron folds single-use Constant nodes into their consumer, so they never get a card of their own.
EXCLUDED_OPS = frozenset({"Constant"})


class VocabError(ValueError):
    """The vocabulary file is missing, malformed or breaks one of the invariants above."""


@dataclass(frozen=True)
class Operator:
    op: str
    category: str
    index: int
    train_nodes: int | None = None


@dataclass(frozen=True)
class Vocab:
    version: int
    opset: int
    operators: tuple[Operator, ...]

    @property
    def ops(self) -> tuple[str, ...]:
        """Operator names in class-id order."""
        return tuple(o.op for o in self.operators)

    def index_of(self, op: str) -> int:
        """Class id of `op`; raises KeyError for operators outside the vocabulary."""
        for o in self.operators:
            if o.op == op:
                return o.index
        raise KeyError(op)

    def category_of(self, op: str) -> str:
        return self.operators[self.index_of(op)].category

    def __len__(self) -> int:
        return len(self.operators)

    def __contains__(self, op: object) -> bool:
        return any(o.op == op for o in self.operators)


def parse_vocab(doc: object) -> Vocab:
    """Validate a decoded vocab.json document and return it as a `Vocab`."""
    if not isinstance(doc, dict):
        raise VocabError("vocab must be a JSON object")
    version, opset, entries = doc.get("version"), doc.get("opset"), doc.get("operators")
    if version != 1:
        raise VocabError(f"unsupported vocab version {version!r}")
    if not isinstance(opset, int) or isinstance(opset, bool) or opset < 1:
        raise VocabError(f"opset must be a positive integer, got {opset!r}")
    if not isinstance(entries, list):
        raise VocabError("operators must be a list")
    if len(entries) != NUM_CLASSES:
        raise VocabError(f"expected exactly {NUM_CLASSES} operators, got {len(entries)}")
    operators = []
    seen: set[str] = set()
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) - {"train_nodes"} != {"op", "category", "index"}:
            raise VocabError(f"operator #{position} must have the keys op, category, index (and train_nodes)")
        op, category, index = entry["op"], entry["category"], entry["index"]
        train_nodes = entry.get("train_nodes")
        if train_nodes is not None and (not isinstance(train_nodes, int) or isinstance(train_nodes, bool)
                                        or train_nodes < 0):
            raise VocabError(f"{op}: train_nodes must be a non-negative integer, got {train_nodes!r}")
        if not isinstance(op, str) or not op.isidentifier():
            raise VocabError(f"operator #{position}: bad op name {op!r}")
        if op in seen:
            raise VocabError(f"duplicate operator {op}")
        if op in EXCLUDED_OPS:
            raise VocabError(f"{op} gets no node card in Netron and cannot be a class")
        if category not in CATEGORIES:
            raise VocabError(f"{op}: unknown category {category!r}")
        if index != position or isinstance(index, bool):
            raise VocabError(f"{op}: index {index!r} must equal its position {position}")
        seen.add(op)
        operators.append(Operator(op, category, index, train_nodes))
    return Vocab(version, opset, tuple(operators))


def load_vocab(path: Path | str = VOCAB_PATH) -> Vocab:
    """Read and validate `models/vocab.json` (or another file in the same format)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise VocabError(f"cannot read vocab {path}: {err}") from err
    return parse_vocab(doc)


def write_train_nodes(counts: dict[str, int], path: Path | str = VOCAB_PATH) -> None:
    """Stores `counts` (operator → nodes, every operator of the vocabulary) in the vocabulary file as each
    entry's `train_nodes`, one entry per line as before."""
    path = Path(path)
    vocab = load_vocab(path)
    missing = set(vocab.ops) - set(counts)
    if missing:
        raise VocabError(f"no count for {sorted(missing)}")
    lines = [
        "    " + json.dumps({"op": o.op, "category": o.category, "index": o.index, "train_nodes": int(counts[o.op])})
        for o in vocab.operators
    ]
    text = ('{\n  "version": %d,\n  "opset": %d,\n  "operators": [\n' % (vocab.version, vocab.opset)
            + ",\n".join(lines) + "\n  ]\n}\n")
    parse_vocab(json.loads(text))
    path.write_text(text, encoding="utf-8")


def netron_categories(metadata_path: Path | str | None = None) -> dict[str, str]:
    """Map every default-domain ONNX operator to Netron's header category (lower-cased, or "none").

    Reads `onnx-metadata.json` from the installed `netron` package unless a path is given.
    """
    if metadata_path is None:
        import netron  # only needed for this cross-check

        metadata_path = Path(netron.__file__).parent / "onnx-metadata.json"
    entries = json.loads(Path(metadata_path).read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for entry in entries:
        if entry.get("module", "ai.onnx") != "ai.onnx":
            continue
        category = (entry.get("category") or "none").lower()
        previous = out.setdefault(entry["name"], category)
        if previous != category:
            raise VocabError(f"netron metadata gives {entry['name']} two categories")
    return out
