"""Random ONNX graph generator: validity, shape inference, vocabulary, coverage, size, determinism."""

from __future__ import annotations

import collections
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from datagen import graphgen
from datagen.vocab import load_vocab

SEEDS = range(200)
MODELS_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def models() -> dict[int, onnx.ModelProto]:
    return {seed: graphgen.random_model(seed) for seed in SEEDS}


def _dims(vi: onnx.ValueInfoProto) -> list:
    out = []
    for d in vi.type.tensor_type.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None)
    return out


def test_models_are_valid_and_shape_inferred(models):
    for seed, model in models.items():
        onnx.checker.check_model(model, full_check=True)
        for data_prop in (False, True):
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=data_prop)
            assert len(inferred.graph.node) == len(model.graph.node)
        # the returned model already carries the inferred value_info: one entry per intermediate tensor
        outputs = {o.name for o in model.graph.output}
        intermediate = {o for n in model.graph.node for o in n.output if o and o not in outputs}
        assert intermediate <= {vi.name for vi in model.graph.value_info}, seed
        for vi in list(model.graph.output) + list(model.graph.input):
            assert vi.type.tensor_type.elem_type != 0, (seed, vi.name)
            assert vi.type.tensor_type.HasField("shape"), (seed, vi.name)


def test_only_vocabulary_ops_and_no_constant_nodes(models):
    vocab = set(load_vocab().ops)
    for seed, model in models.items():
        for node in model.graph.node:
            assert node.op_type in vocab, (seed, node.op_type)
            assert node.domain in ("", "ai.onnx"), (seed, node.domain)
        assert model.opset_import[0].version == load_vocab().opset


def test_names_are_unique_and_inputs_consumed(models):
    for seed, model in models.items():
        g = model.graph
        node_names = [n.name for n in g.node]
        assert all(node_names) and len(set(node_names)) == len(node_names), seed
        produced = [o for n in g.node for o in n.output if o]
        sources = [vi.name for vi in g.input] + [t.name for t in g.initializer]
        assert len(set(produced + sources)) == len(produced) + len(sources), seed
        consumed = {i for n in g.node for i in n.input if i}
        assert {vi.name for vi in g.input} <= consumed, seed
        assert {t.name for t in g.initializer} <= consumed, seed


def test_node_count_range_and_skew(models):
    sizes = [len(m.graph.node) for m in models.values()]
    assert min(sizes) >= 1 and max(sizes) <= 60
    mid = sum(5 <= n <= 30 for n in sizes) / len(sizes)
    assert mid >= 0.7, mid
    assert 8 <= statistics.median(sizes) <= 25
    assert any(n < 5 for n in sizes) and any(n > 30 for n in sizes)
    for seed in range(30):
        n = len(graphgen.random_model(seed, min_nodes=10, max_nodes=12).graph.node)
        assert 10 <= n <= 12
    assert len(graphgen.random_model(3, min_nodes=1, max_nodes=1).graph.node) == 1
    with pytest.raises(ValueError):
        graphgen.random_model(0, min_nodes=5, max_nodes=4)
    with pytest.raises(ValueError):
        graphgen.random_model(0, min_nodes=0)


def test_every_vocab_op_is_covered(models):
    graphs_with = collections.Counter()
    for model in models.values():
        graphs_with.update({n.op_type for n in model.graph.node})
    ops = load_vocab().ops
    missing = [op for op in ops if graphs_with[op] == 0]
    assert not missing, missing
    rare = {op: graphs_with[op] for op in ops if graphs_with[op] < 4}
    assert not rare, rare


def test_shapes_have_variety(models):
    ranks, symbolic, unknown, values, labels = set(), 0, 0, set(), set()
    for model in models.values():
        g = model.graph
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            dims = _dims(vi)
            ranks.add(len(dims))
            labels.add("×".join("?" if d is None else str(d) for d in dims))  # the edge label Netron draws
            symbolic += sum(isinstance(d, str) for d in dims)
            unknown += sum(d is None for d in dims)
            values.update(d for d in dims if isinstance(d, int))
    assert {1, 2, 3, 4, 5} <= ranks
    assert symbolic > 100 and unknown > 100
    assert {1, 3, 7, 64, 224, 1000} <= values
    assert len(values) >= 250
    assert len(labels) >= 800


def test_initializers_have_shapes_and_files_stay_small(models):
    with_weights = 0
    for seed, model in models.items():
        size = len(model.SerializeToString())
        assert size < 4_000_000, (seed, size)
        if any(len(t.dims) >= 2 for t in model.graph.initializer):
            with_weights += 1
    assert with_weights > len(models) // 2


def test_summary_is_json_and_consistent(models):
    for seed in list(models)[:40]:
        model = models[seed]
        summary = graphgen.summarize(model)
        round_trip = json.loads(json.dumps(summary))
        assert round_trip == summary
        assert summary["ops"] == [n.op_type for n in model.graph.node]
        assert summary["node_names"] == [n.name for n in model.graph.node]
        assert summary["num_nodes"] == len(model.graph.node)
        assert sum(summary["op_counts"].values()) == len(model.graph.node)
        assert [i["name"] for i in summary["inputs"]] == [vi.name for vi in model.graph.input]
        assert [o["name"] for o in summary["outputs"]] == [vi.name for vi in model.graph.output]
        assert set(summary["tensor_names"]) >= {o for n in model.graph.node for o in n.output if o}
        for io in summary["inputs"] + summary["outputs"]:
            assert all(d is None or isinstance(d, (int, str)) for d in io["shape"])


def test_deterministic_in_process(models):
    for seed in (0, 7, 123):
        assert graphgen.random_model(seed).SerializeToString() == models[seed].SerializeToString()
    assert models[1].SerializeToString() != models[2].SerializeToString()


def test_deterministic_across_processes(models):
    """Byte-identical output under a different hash seed (catches set/dict-order dependence)."""
    seeds = [0, 5, 42, 99, 150]
    script = ("import hashlib,sys\nfrom datagen import graphgen\n"
              f"print(' '.join(hashlib.sha256(graphgen.random_model(s).SerializeToString()).hexdigest() "
              f"for s in {seeds}))")
    here = " ".join(hashlib.sha256(models[s].SerializeToString()).hexdigest() for s in seeds)
    for hash_seed in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        out = subprocess.run([sys.executable, "-c", script], cwd=MODELS_DIR, env=env, capture_output=True, text=True,
                             check=True, timeout=120)
        assert out.stdout.strip() == here


def _feeds(model: onnx.ModelProto, unknown: int) -> dict | None:
    """Zero/one inputs for a model, every symbolic or unknown input dim set to `unknown` (None if too big)."""
    import numpy as np
    from onnx import helper

    feeds = {}
    for vi in model.graph.input:
        shape = [d if isinstance(d, int) else unknown for d in _dims(vi)]
        if math.prod(shape) > 2_000_000:
            return None
        dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
        if dtype == np.bool_:
            feeds[vi.name] = np.ones(shape, dtype)
        elif dtype == np.int64:
            feeds[vi.name] = np.full(shape, 5 if not shape else 2, dtype)  # Range limits, shapes, token ids
        else:
            feeds[vi.name] = np.zeros(shape, dtype)
    return feeds


def _activation_elements(model: onnx.ModelProto, unknown: int) -> int:
    vis = list(model.graph.value_info) + list(model.graph.output)
    return max((math.prod(d if isinstance(d, int) else unknown for d in _dims(vi)) for vi in vis), default=0)


def test_models_run_in_onnxruntime_with_the_declared_shapes(models):
    """The tracked shapes are the true runtime shapes: small models run and give the declared output shapes."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    ran = 0
    for seed, model in models.items():
        ops = {n.op_type for n in model.graph.node}
        if ops & {"NonMaxSuppression"} or _activation_elements(model, 64) > 4_000_000:
            continue  # data-dependent output sizes / too much memory for a unit test
        feeds = _feeds(model, 64)
        if feeds is None:
            continue
        # expose every intermediate tensor too, so that all value_info shapes are checked
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        probe.graph.output.extend(model.graph.value_info)
        session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
        outputs = session.run(None, feeds)
        for vi, value in zip(probe.graph.output, outputs):
            declared = _dims(vi)
            assert len(declared) == value.ndim, (seed, vi.name)
            for d, n in zip(declared, value.shape):
                assert not isinstance(d, int) or d == n, (seed, vi.name, declared, value.shape)
        ran += 1
    assert ran >= 40, ran


def test_lifted_weights_become_constant_of_shape_cards_with_the_same_shapes(models):
    import random

    lifted_total = 0
    for seed in list(SEEDS)[:40]:
        model = models[seed]
        same = graphgen.lift_weights(model, random.Random(seed), 0.0)
        assert same.SerializeToString() == model.SerializeToString()
        lifted = graphgen.lift_weights(model, random.Random(seed), 1.0)
        onnx.checker.check_model(lifted, full_check=True)
        new = [n for n in lifted.graph.node if n.op_type == "ConstantOfShape" and not n.name]
        lifted_total += len(new)
        assert list(lifted.graph.node)[len(new):] == list(model.graph.node)
        inits = {t.name: t for t in model.graph.initializer}
        readers = {i for n in model.graph.node if n.op_type in ("Resize", "Range") for i in n.input}
        weights = [t.name for t in model.graph.initializer
                   if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) >= 1 and t.name not in readers]
        assert sorted(n.output[0] for n in new) == sorted(weights)
        kept = {t.name for t in lifted.graph.initializer}
        shapes = {t.name: onnx.numpy_helper.to_array(t) for t in lifted.graph.initializer}
        for n in new:
            assert n.output[0] not in kept
            assert list(shapes[n.input[0]]) == list(inits[n.output[0]].dims)
        # The graph's tensors keep their shapes: every value_info of the original is inferred again.
        before = {v.name: _dims(v) for v in model.graph.value_info}
        after = {v.name: _dims(v) for v in lifted.graph.value_info}
        assert all(after.get(name) == dims for name, dims in before.items())
        assert [_dims(o) for o in lifted.graph.output] == [_dims(o) for o in model.graph.output]
    assert lifted_total > 100
    with pytest.raises(ValueError):
        graphgen.lift_weights(models[0], random.Random(0), 1.5)
