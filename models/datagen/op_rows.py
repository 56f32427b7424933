"""The rows a Netron card can show under its title, per operator of the vocabulary: `models/op_rows.json`.

A card lists its initializer inputs by the ONNX input name (`W〈64×3×7×7〉`, `B = 0.5`) and, when attributes are
shown, its attributes (`kernel_shape = 3, 3`) in the same `name = value` form as scalar inputs. The Rust scanner
tells the two apart, and mends misread names, with the operator's names: a row whose name is nearest an attribute
is not a weight.

Names come from ONNX's own operator schemas (`onnx.defs`), every version of the operator up to the vocabulary's
opset, because Netron names a model's rows by the version of its opset import (`BatchNormalization` shows `mean`
and `var` before opset 14, `input_mean` and `input_var` from it). Layout:
`{"version": 1, "onnx": "1.x", "opset": N, "operators": {op: {"inputs": [...], "attributes": [...]}}}`; inputs in
the newest version's order followed by names only older versions have, attributes sorted.
"""

from __future__ import annotations

import json
from pathlib import Path

from .vocab import load_vocab

OP_ROWS_PATH = Path(__file__).resolve().parents[1] / "op_rows.json"


def op_rows() -> dict:
    """The document `models/op_rows.json` holds, computed from the installed onnx package and the vocabulary."""
    import onnx
    from onnx import defs

    vocab = load_vocab()
    history: dict[str, list] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain == "" and schema.since_version <= vocab.opset:
            history.setdefault(schema.name, []).append(schema)
    operators = {}
    for op in vocab.ops:
        versions = sorted(history[op], key=lambda s: s.since_version, reverse=True)
        inputs: list[str] = []
        attributes: set[str] = set()
        for schema in versions:
            inputs += [i.name for i in schema.inputs if i.name not in inputs]
            attributes |= set(schema.attributes)
        operators[op] = {"inputs": inputs, "attributes": sorted(attributes)}
    return {"version": 1, "onnx": onnx.__version__, "opset": vocab.opset, "operators": operators}


def render(doc: dict) -> str:
    """`doc` as JSON text, one operator per line."""
    head = {k: v for k, v in doc.items() if k != "operators"}
    lines = [f"  {json.dumps(op)}: {json.dumps(rows)}" for op, rows in doc["operators"].items()]
    return json.dumps(head)[:-1] + ', "operators": {\n' + ",\n".join(lines) + "\n}}\n"


def write(path: Path = OP_ROWS_PATH) -> None:
    path.write_text(render(op_rows()), encoding="utf-8")
