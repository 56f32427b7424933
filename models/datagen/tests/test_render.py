"""Tests for datagen.render: Netron in headless Chromium, ground truth read from the live page.

The browser tests need Debian's /usr/bin/chromium and are skipped with a message without it. Expected values come
from the ONNX models built here (shape inference, graph structure), never from the renderer itself.
"""

from __future__ import annotations

import json
import math
import random
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from datagen.render import (
    CHROMIUM,
    RenderError,
    RenderOptions,
    Renderer,
    clip_box,
    parse_dims,
    sample_options,
    sample_path,
    truth_json,
)

REPO = Path(__file__).resolve().parents[3]
SCHEMA = REPO / "schema" / "graph-v1.schema.json"
FIXTURES = REPO / "tests" / "fixtures" / "scenes"

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium fonts-wqy-microhei)")


# ---------------------------------------------------------------------------------------------------------------
# Small synthetic models


def _init(rng: np.random.Generator, name: str, shape) -> onnx.TensorProto:
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def _finish(nodes, inputs, outputs, inits, name) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(model)


def conv_branch_model() -> onnx.ModelProto:
    """image[N,3,32,32] -> Conv -> Relu -> {MaxPool, Conv} -> Add -> GlobalAveragePool -> Flatten -> Gemm -> logits."""
    rng = np.random.default_rng(0)
    inits = [_init(rng, "c1.w", (16, 3, 3, 3)), _init(rng, "c1.b", (16,)), _init(rng, "c2.w", (16, 16, 3, 3)),
             _init(rng, "fc.w", (10, 16)), _init(rng, "fc.b", (10,))]
    nodes = [
        helper.make_node("Conv", ["image", "c1.w", "c1.b"], ["c1"], name="conv1", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["r1", "c2.w"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["p1", "c2"], ["s"], name="add"),
        helper.make_node("GlobalAveragePool", ["s"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    ]
    return _finish(nodes, [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)], inits, "conv_branch")


def matmul_model() -> onnx.ModelProto:
    """Two inputs, two outputs, a scalar initializer (drawn as a value row `B = 0.5`)."""
    rng = np.random.default_rng(1)
    inits = [_init(rng, "bias", (8,)), numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")]
    nodes = [
        helper.make_node("MatMul", ["x", "y"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "bias"], ["biased"], name="add_bias"),
        helper.make_node("Relu", ["biased"], ["act"], name="relu"),
        helper.make_node("Mul", ["act", "half"], ["scaled"], name="scale"),
        helper.make_node("Softmax", ["act"], ["probs"], name="softmax", axis=-1),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16]),
              helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 8])]
    outputs = [helper.make_tensor_value_info("scaled", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("probs", TensorProto.FLOAT, None)]
    return _finish(nodes, inputs, outputs, inits, "matmul")


def chain_model(blocks: int = 10) -> onnx.ModelProto:
    """A long Conv/Relu chain with a skip connection: taller than any viewport at zoom >= 1."""
    rng = np.random.default_rng(2)
    nodes, inits, prev, channels = [], [], "input", 3
    for i in range(blocks):
        inits.append(_init(rng, f"w{i}", (8, channels, 3, 3)))
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], name=f"conv{i}", kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        prev, channels = f"r{i}", 8
    nodes.append(helper.make_node("Add", [prev, "r0"], ["out"], name="add"))
    return _finish(nodes, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                   [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits, "chain")


def expected_label(model: onnx.ModelProto, name: str) -> str:
    """The shape label Netron draws for tensor `name` (independent re-statement of its rule)."""
    infos = list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output)
    for info in infos:
        if info.name == name and info.type.tensor_type.HasField("shape"):
            dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                    for d in info.type.tensor_type.shape.dim]
            text = "\u00d7".join(dims)
            return text if dims and len(text) <= 16 else ""
    return ""


def expected_edges(model: onnx.ModelProto) -> set[tuple[str, str, str]]:
    """(producer, consumer, tensor) with producer/consumer named 'node:<name>', 'input:<name>' or 'output:<name>'."""
    initializers = {t.name for t in model.graph.initializer}
    producer = {i.name: f"input:{i.name}" for i in model.graph.input if i.name not in initializers}
    for node in model.graph.node:
        for out in node.output:
            producer[out] = f"node:{node.name}"
    edges = set()
    for node in model.graph.node:
        for inp in node.input:
            if inp in producer:
                edges.add((producer[inp], f"node:{node.name}", inp))
    for out in model.graph.output:
        edges.add((producer[out.name], f"output:{out.name}", out.name))
    return edges


# ---------------------------------------------------------------------------------------------------------------
# Helpers over truth


def all_boxes(truth: dict) -> list[tuple[str, list[float]]]:
    boxes = [("canvas", truth["canvas"]["box"])]
    for n in truth["nodes"]:
        boxes.append((n["id"], n["box"]))
        if "title_box" in n:
            boxes.append((n["id"] + ".title", n["title_box"]))
        for row in n["weights"] + n["attributes"]:
            boxes.append((n["id"] + "." + row["name"], row["box"]))
    for p in truth["inputs"] + truth["outputs"] + truth["tensors"]:
        boxes.append((p["id"], p["box"]))
    return boxes


def dist_to_box(p, box) -> float:
    dx = max(box[0] - p[0], 0.0, p[0] - box[2])
    dy = max(box[1] - p[1], 0.0, p[1] - box[3])
    return math.hypot(dx, dy)


def dist_to_border(p, box) -> float:
    inside = box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]
    if not inside:
        return dist_to_box(p, box)
    return min(p[0] - box[0], box[2] - p[0], p[1] - box[1], box[3] - p[1])


def elements_by_id(truth: dict) -> dict[str, dict]:
    return {e["id"]: e for e in truth["nodes"] + truth["inputs"] + truth["outputs"]}


def label_of(element: dict) -> str:
    if element["id"].startswith("n"):
        return f"node:{element['name']}"
    kind = "input" if element["id"].startswith("i") else "output"
    return f"{kind}:{element['name']}"


def check_common(truth: dict, image, options: RenderOptions) -> None:
    w, h = image.size
    assert image.mode == "RGB"
    assert (truth["image"]["width"], truth["image"]["height"]) == (w, h)
    assert abs(w - options.viewport[0] * options.device_scale) <= 1
    assert abs(h - options.viewport[1] * options.device_scale) <= 1
    for name, b in all_boxes(truth):
        assert 0 <= b[0] <= b[2] <= w and 0 <= b[1] <= b[3] <= h, f"{name} box {b} outside {w}x{h}"
    ids = [e["id"] for e in truth["nodes"] + truth["inputs"] + truth["outputs"] + truth["tensors"]]
    assert len(ids) == len(set(ids))
    elements = elements_by_id(truth)
    tensor_ids = {t["id"] for t in truth["tensors"]}
    for e in truth["edges"]:
        assert e["from"] in elements and e["to"] in elements
        assert e["tensor"] is None or e["tensor"] in tensor_ids
        assert len(e["points"]) >= 2
    for n in truth["nodes"]:
        assert n["op_confidence"] == 1.0 and n["quad"][0] == [n["box"][0], n["box"][1]]
    assert truth["scene"]["device_scale"] == options.device_scale


def check_edge_endpoints(truth: dict, tolerance: float = 3.0) -> int:
    """Edge endpoints lie on their element's box border (when that element is not truncated). Returns #checked."""
    elements = elements_by_id(truth)
    checked = 0
    for e in truth["edges"]:
        for point, end in ((e["points"][0], e["from"]), (e["points"][-1], e["to"])):
            element = elements[end]
            if element["truncated"]:
                continue
            d = dist_to_border(point, element["box"])
            assert d <= tolerance, f"edge {e['name']} endpoint {point} is {d:.1f} px from {end} {element['box']}"
            checked += 1
    return checked


# Netron's light-theme header fills (grapher.css), by category as the truth reports it.
HEADER_RGB = {"layer": (51, 85, 136), "activation": (112, 41, 33), "pool": (51, 85, 51), "none": (51, 51, 51),
              "shape": (108, 79, 71), "normalization": (51, 85, 68), "transform": (51, 85, 68)}


def check_pixels_light(image, truth: dict) -> None:
    """Truth geometry matches the screenshot content (catches devicePixelRatio / scroll offset bugs):
    header fills have their category colour just inside the title box's left edge, pills are #eee there,
    shape labels contain dark text, edge polylines run over dark stroke pixels."""
    px = np.asarray(image.convert("RGB")).astype(int)
    s = truth["scene"]["device_scale"]

    def at(x: float, y: float):
        return px[int(y), int(x)]

    for n in truth["nodes"]:
        x0, y0, x1, y1 = n["title_box"]
        ym = (y0 + y1) / 2
        want = HEADER_RGB[n["category"]]
        # inside the header, clear of its text (7 CSS px padding): the category colour, at both sides and the top
        for x, y in ((x0 + 3 * s, ym), (x1 - 3 * s, ym), (x0 + 3 * s, y0 + 3 * s)):
            got = at(x, y)
            assert np.abs(got - want).max() <= 12, f"{n['op']} header pixel {got} != {want} at {(x, y)}"
        if n["category"] != "none":  # (#333 is also the border colour)
            for x, y in ((x0 - 2 * s, ym), (x1 + 2 * s, ym), (x0 + 6 * s, y0 - 2 * s)):
                got = at(x, y)
                assert np.abs(got - want).max() > 12, f"{n['op']} header colour outside its box at {(x, y)}"
    for p in truth["inputs"] + truth["outputs"]:
        b = p["box"]
        for x in (b[0] + 4 * s, b[2] - 4 * s):
            got = at(x, (b[1] + b[3]) / 2)
            assert np.abs(got - 238).max() <= 6, f"pill {p['name']} pixel {got}"
    for t in truth["tensors"]:
        x0, y0, x1, y1 = (int(v) for v in t["box"])
        assert px[y0:y1 + 1, x0:x1 + 1].min() < 100, f"no text pixels in label box {t['box']}"
    hits = total = 0
    for e in truth["edges"]:
        for x, y in e["points"][1:-1]:
            window = px[max(0, int(y) - 2):int(y) + 3, max(0, int(x) - 2):int(x) + 3]
            hits += int(window.min() < 140)
            total += 1
    assert total > 0 and hits / total >= 0.95, f"only {hits}/{total} edge points on a drawn stroke"


def validate_schema(truth: dict) -> None:
    if not SCHEMA.exists():
        pytest.skip(f"{SCHEMA} missing: schema assertion skipped (tell the lead)")
    import jsonschema

    jsonschema.validate(truth, json.loads(SCHEMA.read_text()))


# ---------------------------------------------------------------------------------------------------------------
# Pure functions


def test_parse_dims():
    assert parse_dims("1\u00d764\u00d756\u00d756") == [1, 64, 56, 56]
    assert parse_dims("batch\u00d73\u00d7?\u00d7?") == ["batch", 3, "?", "?"]
    assert parse_dims("") is None
    assert parse_dims("1\u00d7\u00d72") is None


def test_sample_path_line_and_curve():
    # identity CTM, scale 2: a 40-unit vertical line becomes 80 image px, sampled every <= 8 px.
    pts = sample_path("M10,0L10,40", [1, 0, 0, 1, 0, 0], 2.0)
    assert pts[0] == [20.0, 0.0] and pts[-1] == [20.0, 80.0]
    assert all(abs(b[1] - a[1]) <= 8.0 + 1e-6 for a, b in zip(pts, pts[1:]))
    # a translated cubic keeps its exact endpoints and stays inside its control hull
    pts = sample_path("M0,0C0,10,20,10,20,20", [1, 0, 0, 1, 100, 50], 1.0)
    assert pts[0] == [100.0, 50.0] and pts[-1] == [120.0, 70.0]
    assert all(100 <= x <= 120 and 50 <= y <= 70 for x, y in pts)
    with pytest.raises(RenderError):
        sample_path("M0,0Q1,1,2,2", [1, 0, 0, 1, 0, 0], 1.0)


def test_clip_box():
    assert clip_box([10, 10, 20, 20], [0, 0, 100, 100]) == ([10, 10, 20, 20], False)
    box, truncated = clip_box([-5, 10, 15, 20], [0, 0, 100, 100])
    assert box == [0, 10, 15, 20] and truncated
    assert clip_box([-15, 10, 5, 20], [0, 0, 100, 100]) is None  # 25% visible


def test_sample_options_distribution():
    rng = random.Random(0)
    samples = [sample_options(rng) for _ in range(3000)]
    for o in samples:
        o.validate()
        assert 1000 <= o.viewport[0] <= 1920 and 700 <= o.viewport[1] <= 1200
        assert o.device_scale in (1.0, 1.25, 1.5, 2.0)
        assert 0.15 <= o.zoom <= 1.4
    readable = sum(o.label_font_px() >= 7.0 for o in samples) / len(samples)
    tiny = sum(o.label_font_px() < 4.5 for o in samples) / len(samples)
    assert 0.7 <= readable <= 0.9, readable
    assert 0.03 <= tiny <= 0.15, tiny
    assert sum(o.theme == "light" for o in samples) / len(samples) > 0.6
    assert sum(o.direction == "vertical" for o in samples) / len(samples) > 0.75
    assert sum(o.weights and not o.attributes and not o.names for o in samples) / len(samples) > 0.5
    assert len({o.viewport for o in samples}) > 100


# ---------------------------------------------------------------------------------------------------------------
# Browser


@pytest.fixture(scope="module")
def renderer(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed")
    with Renderer(tmp_path_factory.mktemp("render")) as r:
        yield r


@needs_chromium
def test_index_served_without_date_meta(renderer):
    raw = urllib.request.urlopen(renderer.origin + "/index.html", timeout=10).read().decode("utf-8")
    assert '<meta name="date"' in raw, "netron's own index.html should carry the date meta (else this test is moot)"
    assert renderer.page.evaluate("() => document.querySelector('meta[name=date]') === null")
    assert renderer.page.evaluate("() => document.querySelector('meta[name=version]').content") == "9.3.3"
    assert renderer.page.evaluate("() => typeof window.eval('1 + 1')") == "number"


@needs_chromium
def test_foreign_requests_are_blocked(renderer):
    outcome = renderer.page.evaluate(
        "() => fetch('https://example.com/beacon').then(() => 'reached', () => 'failed')")
    assert outcome == "failed"
    assert "https://example.com/beacon" in renderer.blocked_requests
    assert all(not url.startswith(renderer.origin + "/") for url in renderer.blocked_requests)


FULL_VIEW_CASES = [
    ("conv_branch", conv_branch_model, RenderOptions(viewport=(1600, 1000), device_scale=1.0, zoom=1.0)),
    ("matmul_dark_hidpi", matmul_model, RenderOptions(theme="dark", viewport=(1280, 800), device_scale=2.0, zoom=1.0)),
    ("conv_branch_horizontal_attrs", conv_branch_model,
     RenderOptions(direction="horizontal", attributes=True, viewport=(1920, 1080), device_scale=1.25, zoom=0.8,
                   pan=(0.0, 0.5))),
]


@needs_chromium
@pytest.mark.parametrize("name,make,options", FULL_VIEW_CASES, ids=[c[0] for c in FULL_VIEW_CASES])
def test_full_view_truth_matches_model(renderer, name, make, options):
    model = make()
    image, truth = renderer.render(model, options, name)
    check_common(truth, image, options)
    validate_schema(truth)
    if options.theme == "light":
        check_pixels_light(image, truth)
    # The whole graph is visible: every ONNX node, input and output is there, nothing truncated.
    assert Counter(n["op"] for n in truth["nodes"]) == Counter(n.op_type for n in model.graph.node)
    assert sorted(p["name"] for p in truth["inputs"]) == sorted(i.name for i in model.graph.input)
    assert sorted(p["name"] for p in truth["outputs"]) == sorted(o.name for o in model.graph.output)
    assert not any(e["truncated"] for e in truth["nodes"] + truth["inputs"] + truth["outputs"] + truth["tensors"])
    # Connectivity from Netron's object model equals the ONNX graph's.
    elements = elements_by_id(truth)
    got = {(label_of(elements[e["from"]]), label_of(elements[e["to"]]), e["name"]) for e in truth["edges"]}
    assert got == expected_edges(model)
    # Shape labels: exactly Netron's rule applied to the inferred shapes; one label per labelled edge.
    for t in truth["tensors"]:
        assert t["text"] == expected_label(model, t["name"]), t
        assert t["shape"] == parse_dims(t["text"])
    labelled = [e for e in truth["edges"] if expected_label(model, e["name"])]
    assert len(truth["tensors"]) == len(labelled)
    assert all(e["tensor"] is not None for e in labelled)
    assert check_edge_endpoints(truth) == 2 * len(truth["edges"])
    # Weight rows: one per initializer input (weights on), with the initializer's shape.
    inits = {t.name: list(t.dims) for t in model.graph.initializer}
    for n in truth["nodes"]:
        onnx_node = next(x for x in model.graph.node if x.name == n["name"])
        expected = [i for i in onnx_node.input if i in inits]
        assert [w["tensor"] for w in n["weights"]] == expected
        for w in n["weights"]:
            if inits[w["tensor"]]:
                assert w["shape"] == inits[w["tensor"]] and w["text"] == "\u00d7".join(map(str, inits[w["tensor"]]))
            else:  # scalar: Netron shows the value
                assert w["shape"] is None and float(w["text"]) == pytest.approx(0.5)
        if options.attributes:
            assert {a["name"] for a in n["attributes"]} == {a.name for a in onnx_node.attribute}
        else:
            assert n["attributes"] == []
        assert n["title_text"] == n["op"]
    # canvas = union of the element boxes
    boxes = [b for _, b in all_boxes(truth)[1:]]
    union = [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]
    assert truth["canvas"]["box"][0] <= union[0] and truth["canvas"]["box"][2] >= union[2]
    assert truth["canvas"]["box"][1] <= union[1] and truth["canvas"]["box"][3] >= union[3]


@needs_chromium
def test_names_mode(renderer):
    model = matmul_model()
    options = RenderOptions(names=True, viewport=(1200, 900), device_scale=1.5)
    image, truth = renderer.render(model, options, "names")
    check_common(truth, image, options)
    validate_schema(truth)
    assert truth["tensors"] and all(t["shape"] is None and t["text"] == t["name"] for t in truth["tensors"])
    assert all(n["title_text"] == n["name"] for n in truth["nodes"])  # titles show node names, not ops


@needs_chromium
def test_partial_view_clips_and_flags(renderer):
    model = chain_model(10)
    options = RenderOptions(viewport=(1000, 700), device_scale=1.5, zoom=1.4, pan=(0.5, 0.37))
    image, truth = renderer.render(model, options, "partial")
    check_common(truth, image, options)
    validate_schema(truth)
    assert 0 < len(truth["nodes"]) < len(model.graph.node)  # the view cuts the graph
    assert any(e["truncated"] for e in truth["nodes"] + truth["tensors"])
    # labels can be present without their edge; edges only between present elements
    present = set(elements_by_id(truth))
    assert all(e["from"] in present and e["to"] in present for e in truth["edges"])
    check_edge_endpoints(truth)
    check_pixels_light(image, truth)
    # a truncated element touches the image border
    w, h = image.size
    for e in truth["nodes"] + truth["tensors"]:
        if e["truncated"]:
            b = e["box"]
            assert min(b[0], b[1], w - b[2], h - b[3]) <= 0.5


@needs_chromium
def test_same_input_gives_identical_json(renderer):
    model = conv_branch_model()
    options = sample_options(random.Random(7))
    first_image, first = renderer.render(model, options, "det")
    renderer.render(matmul_model(), RenderOptions(theme="dark", device_scale=2.0), "in-between")
    second_image, second = renderer.render(model, options, "det")
    assert truth_json(first) == truth_json(second)
    assert first_image.tobytes() == second_image.tobytes()


@needs_chromium
def test_failures_raise_render_error_and_renderer_survives(renderer):
    model = matmul_model()
    options = RenderOptions()
    saved = renderer.timeout_s
    renderer.timeout_s = 0.001
    try:
        with pytest.raises(RenderError, match="timeout"):
            renderer.render(model, options, "too-slow")
    finally:
        renderer.timeout_s = saved
    _, truth = renderer.render(model, options, "after-timeout")
    assert len(truth["nodes"]) == len(model.graph.node)

    saved_max = renderer.max_nodes
    renderer.max_nodes = 2
    try:
        with pytest.raises(RenderError, match="max_nodes"):
            renderer.render(model, options, "too-big")
    finally:
        renderer.max_nodes = saved_max

    # A Netron error dialog (here: a model file that does not exist) is detected quickly, not waited out.
    args = {"file": "missing.onnx", "weights": True, "attributes": False, "names": False,
            "direction": "vertical", "zoom": 1.0, "pan": [0.5, 0.0], "timeoutMs": 20000}
    with pytest.raises(Exception, match="netron error"):
        renderer.page.evaluate("args => window.__netronOcr.render(args)", args)
    renderer._recover()

    # The browser dies: one scene fails, the next one works again on a fresh browser.
    restarts = renderer.restarts
    renderer._browser.close()
    with pytest.raises(RenderError):
        renderer.render(model, options, "crashed")
    assert renderer.restarts == restarts + 1
    _, truth = renderer.render(model, options, "after-crash")
    assert len(truth["nodes"]) == len(model.graph.node)


def test_scene_fixtures_are_valid():
    pngs = sorted(FIXTURES.glob("render_*.png"))
    if not pngs:
        pytest.skip(f"no render fixtures in {FIXTURES}")
    from PIL import Image

    for png in pngs:
        truth = json.loads(png.with_suffix(".json").read_text())
        with Image.open(png) as image:
            assert (truth["image"]["width"], truth["image"]["height"]) == image.size
        assert png.stat().st_size <= 300 * 1024
        validate_schema(truth)


@needs_chromium
def test_focus_centres_the_named_element(renderer):
    # `focus=` (used only by train/render_real.py) centres a named node, shifted by a fraction of the view; without
    # it, rendering is unchanged.
    model = chain_model(10)
    target = model.graph.node[len(model.graph.node) // 2].name
    options = RenderOptions(viewport=(800, 600), device_scale=1.5, zoom=1.4, pan=(0.0, 0.0))
    _, plain = renderer.render(model, options, "plain")
    assert "focus" not in plain["scene"]
    for shift in ((0.0, 0.0), (0.2, -0.1)):
        image, truth = renderer.render(model, options, "focus", focus=target, focus_shift=shift)
        validate_schema(truth)
        assert truth["scene"]["focus"] == {"name": target, "shift": [shift[0], shift[1]]}
        node = next(n for n in truth["nodes"] if n["name"] == target)
        cy = (node["box"][1] + node["box"][3]) / 2
        assert abs(cy - image.size[1] * (0.5 + shift[1])) < 2, (cy, image.size)
        assert truth["scene"]["pan"][1] > 0.05 and truth["scene"]["scroll"][1] > 0
    with pytest.raises(RenderError, match="not found"):
        renderer.render(model, options, "missing", focus="no-such-node")
    _, again = renderer.render(model, options, "plain")
    assert again == plain
