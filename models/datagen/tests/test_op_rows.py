"""`models/op_rows.json`: what onnx's schemas give, and the names the committed fixture cards show."""

from __future__ import annotations

import json
from pathlib import Path

from datagen.op_rows import OP_ROWS_PATH, op_rows, render
from datagen.vocab import load_vocab

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures"


def test_committed_file_is_what_the_schemas_give():
    assert OP_ROWS_PATH.read_text(encoding="utf-8") == render(op_rows()), "run: python -m datagen op-rows --write"


def test_every_operator_of_the_vocabulary_has_its_rows():
    doc = json.loads(OP_ROWS_PATH.read_text(encoding="utf-8"))
    assert list(doc["operators"]) == list(load_vocab().ops)
    assert doc["operators"]["Conv"]["inputs"][:3] == ["X", "W", "B"]
    # Older versions' names are kept: Netron names a model's rows by its own opset.
    assert {"input_mean", "mean"} <= set(doc["operators"]["BatchNormalization"]["inputs"])


def test_fixture_cards_show_only_these_names():
    ops = json.loads(OP_ROWS_PATH.read_text(encoding="utf-8"))["operators"]
    seen = 0
    for truth in sorted(FIXTURES.glob("*/*.shot.json")):
        for node in json.loads(truth.read_text(encoding="utf-8")).get("nodes", []):
            rows = ops[node["op"]]
            for weight in node.get("weights", []):
                assert weight["name"] in rows["inputs"], (truth.name, node["op"], weight["name"])
                seen += 1
            for attribute in node.get("attributes") or []:
                # Variadic inputs show as one `〈…〉` row.
                assert attribute["name"] in rows["attributes"] + ["〈…〉"], (truth.name, node["op"], attribute["name"])
    assert seen > 20
