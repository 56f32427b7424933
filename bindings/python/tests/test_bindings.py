"""The generated Python bindings against the real cdylib: frame assessment, scanning a committed fixture photo
through the real models, typed errors, the panic firewall, the capture state machine with fusion, logging and
sharing one Scanner across threads.

The models are still weak, so scan tests check structure only (the JSON contract, boxes inside the image, the
typed records agreeing with the JSON, timings), never how many nodes were found or which ops."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import netron_ocr_ffi as n
from frames import flat_nv21, netron_rgb, rgb_to_nv21

REPO = Path(__file__).resolve().parents[3]
W, H = 640, 480


def nv21_info(w=W, h=H):
    return n.tight_frame_info(n.PixelFormat.NV21, w, h, n.Rotation.R0)


def nv21(row_strides, pixel_stride=2):
    return n.FrameInfo(format=n.PixelFormat.NV21, width=W, height=H, row_strides=row_strides,
                       pixel_stride=pixel_stride, rotation=n.Rotation.R0)


@pytest.fixture(scope="module")
def scanner():
    return n.Scanner()


@pytest.fixture(scope="module")
def good_frame():
    return rgb_to_nv21(netron_rgb(W, H))


def test_tight_info_matches_the_layout_contract():
    info = nv21_info(64, 48)
    assert info.row_strides == [64, 64] and info.pixel_stride == 2
    assert n.tight_frame_info(n.PixelFormat.RGB8, 5, 3, n.Rotation.R90).row_strides == [15]


def test_assess_netron_like_nv21_frame(scanner, good_frame):
    q = scanner.assess(good_frame, nv21_info())
    assert q.accept, q.hints
    assert q.hints == []
    assert 0 < q.score <= 1 and q.content > 0 and q.sharpness > 0
    assert q.stability is None  # a single frame has nothing to compare with
    # The free function uses the same default thresholds.
    assert n.assess(good_frame, nv21_info()) == q


def test_nv21_and_rgb_of_the_same_image_agree(scanner, good_frame):
    rgb = netron_rgb(W, H)
    q_rgb = scanner.assess(rgb.tobytes(), n.tight_frame_info(n.PixelFormat.RGB8, W, H, n.Rotation.R0))
    q_nv21 = scanner.assess(good_frame, nv21_info())
    assert q_rgb.accept == q_nv21.accept and q_rgb.hints == q_nv21.hints
    assert q_rgb.content == pytest.approx(q_nv21.content, abs=0.02)


def test_per_plane_input_equals_one_buffer(scanner, good_frame):
    y, vu = good_frame[: W * H], good_frame[W * H :]
    assert scanner.assess_planes(y, vu, b"", nv21_info()) == scanner.assess(good_frame, nv21_info())


def test_flat_and_dark_frames_get_hints(scanner, good_frame):
    flat = scanner.assess(flat_nv21(W, H), nv21_info())
    assert not flat.accept and n.Hint.MOVE_CLOSER in flat.hints and flat.content == 0
    dark = rgb_to_nv21((netron_rgb(W, H) // 8).astype(np.uint8))
    q = scanner.assess(dark, nv21_info())
    assert not q.accept and q.hints[0] == n.Hint.TOO_DARK


def test_rotated_frame_is_assessed_upright(scanner, good_frame):
    info = n.FrameInfo(format=n.PixelFormat.NV21, width=W, height=H, row_strides=[W, W], pixel_stride=2,
                       rotation=n.rotation_from_degrees(180))
    assert scanner.assess(good_frame, info).accept


def test_short_buffer_is_a_typed_error(scanner, good_frame):
    with pytest.raises(n.NetronError.BufferTooShort) as e:
        scanner.assess(good_frame[: W * H], nv21_info())  # chroma plane missing
    assert "needs" in str(e.value)


def test_bad_stride_is_a_typed_error(scanner, good_frame):
    bad = nv21([W - 1, W])
    with pytest.raises(n.NetronError.InvalidStride):
        scanner.assess(good_frame, bad)
    with pytest.raises(n.NetronError.InvalidStride):
        scanner.assess(good_frame, nv21([W, W], pixel_stride=1))


def test_other_input_errors_are_typed(scanner, good_frame):
    with pytest.raises(n.NetronError.InvalidFrame):
        n.rotation_from_degrees(45)
    with pytest.raises(n.NetronError.InvalidFrame):  # wrong plane count for the format
        scanner.assess(good_frame, nv21([W]))
    with pytest.raises(n.NetronError.InvalidFrame):  # a third plane for a two-plane format
        scanner.assess_planes(good_frame[: W * H], good_frame[W * H :], b"x", nv21_info())
    with pytest.raises(n.NetronError.UnsupportedFormat):
        scanner.assess_image(b"GIF89a not supported")
    with pytest.raises(n.NetronError.ModelLoad):
        n.Scanner.from_model_dir("/nonexistent/netron-ocr-models")
    with pytest.raises(n.NetronError.InvalidArgument):
        n.CaptureSession(scanner, 0)


def test_encoded_image_fixture(scanner):
    png = (REPO / "tests/fixtures/scenes/render_000.png").read_bytes()
    q = scanner.assess_image(png)
    assert q.content > 0 and 0 <= q.score <= 1


PHOTO = REPO / "tests/fixtures/scenes/000000.photo.jpg"
PHOTO_SIZE = json.loads((REPO / "tests/fixtures/scenes/000000.photo.json").read_text())["image"]


def box_list(b):
    return [b.x0, b.y0, b.x1, b.y1]


def dims(shape):
    """Typed shape dims -> the JSON form (numbers and strings)."""
    if shape is None:
        return None
    return [d.value if isinstance(d, n.ShapeDim.FIXED) else d.name for d in shape]


def check_result(r, width, height):
    """Structural facts every scan result must satisfy, whatever the models found."""
    g = json.loads(r.graph_json)
    assert (g["format"], g["version"]) == ("netron-ocr.graph", 1)
    assert g["image"] == {"width": width, "height": height}
    assert n.normalize_graph_json(r.graph_json)  # passes the core reader and its semantic checks
    assert r.frames >= 1

    def inside(b):
        x0, y0, x1, y1 = b
        assert -1e-3 <= x0 <= x1 <= width + 1e-3 and -1e-3 <= y0 <= y1 <= height + 1e-3, (b, width, height)

    inside(g["canvas"]["box"])
    for key in ("nodes", "inputs", "outputs", "tensors"):
        for e in g[key]:
            inside(e["box"])
            assert 0 <= e["confidence"] <= 1
    for e in g["edges"]:
        for x, y in e.get("points", []):
            assert -1 <= x <= width + 1 and -1 <= y <= height + 1

    # The typed records say the same as the JSON.
    t = r.graph
    assert (t.format, t.version, t.image.width, t.image.height) == (g["format"], g["version"], width, height)
    assert box_list(t.canvas.bbox) == pytest.approx(g["canvas"]["box"])
    assert t.canvas.confidence == pytest.approx(g["canvas"]["confidence"])
    assert [(x.id, x.op) for x in t.nodes] == [(x["id"], x["op"]) for x in g["nodes"]]
    for a, b in zip(t.nodes, g["nodes"]):
        assert box_list(a.bbox) == pytest.approx(b["box"])
        assert (a.confidence, a.op_confidence) == pytest.approx((b["confidence"], b["op_confidence"]))
        assert len(a.weights) == len(b["weights"])
    for kind in ("inputs", "outputs"):
        assert [(x.id, x.name) for x in getattr(t, kind)] == [(x["id"], x["name"]) for x in g[kind]]
    assert [(x.id, x.text, dims(x.shape)) for x in t.tensors] == [(x["id"], x["text"], x["shape"])
                                                                  for x in g["tensors"]]
    assert [(e._from, e.to, e.tensor) for e in t.edges] == [(e["from"], e["to"], e["tensor"])
                                                          for e in g["edges"]]

    s = r.timings
    stages = [s.decode_ms, s.quality_ms, s.crop_ms, s.detect_ms, s.classify_ms, s.read_ms, s.assemble_ms]
    assert all(x >= 0 for x in stages) and s.total_ms == pytest.approx(sum(stages))
    assert s.crop_ms > 0  # the cropper always runs
    assert 0 <= r.quality.score <= 1
    return g


def test_scan_fixture_photo(scanner):
    r = scanner.scan_image(PHOTO.read_bytes())
    check_result(r, PHOTO_SIZE["width"], PHOTO_SIZE["height"])
    assert r.frames == 1 and r.timings.decode_ms > 0
    # The same file through the path entry point reads the same graph.
    assert scanner.scan_file(str(PHOTO)).graph_json == r.graph_json
    # Its text (labels 15 px high) is large enough: a text height and no zoom-in advice.
    assert r.text_height is not None and r.text_height >= 9 and n.Hint.ZOOM_IN not in r.quality.hints


def test_thread_count_changes_no_graph(scanner):
    one = scanner.with_threads(1).scan_image(PHOTO.read_bytes())
    two = scanner.with_threads(2).scan_image(PHOTO.read_bytes())
    assert one.graph_json == two.graph_json
    assert one.graph_json == scanner.scan_image(PHOTO.read_bytes()).graph_json


def test_small_text_crosses_the_boundary_as_a_zoom_in_hint(scanner):
    # A dense view whose labels are 7 px high.
    r = scanner.scan_file(str(REPO / "tests/fixtures/dense/000104.photo.jpg"))
    assert r.text_height is not None and r.text_height < 9
    assert n.Hint.ZOOM_IN in r.quality.hints


def test_scan_raw_frames(scanner, good_frame):
    r = scanner.scan(good_frame, nv21_info())
    check_result(r, W, H)
    y, vu = good_frame[: W * H], good_frame[W * H :]
    planes = scanner.scan_planes(y, vu, b"", nv21_info())
    assert planes.graph_json == r.graph_json  # same pixels, same graph


def test_scan_errors_are_typed(scanner, good_frame):
    with pytest.raises(n.NetronError.BufferTooShort):
        scanner.scan(good_frame[:100], nv21_info())
    jpeg = PHOTO.read_bytes()
    corrupt = jpeg[:4] + bytes(len(jpeg) - 4)  # a JPEG signature, then zeros
    with pytest.raises(n.NetronError.DecodeFailed):
        scanner.scan_image(corrupt)
    with pytest.raises(n.NetronError.UnsupportedFormat):
        scanner.scan_image(b"GIF89a not supported")
    with pytest.raises(n.NetronError.Io):
        scanner.scan_file("/nonexistent/photo.jpg")


def test_panic_becomes_internal_error_and_library_survives(scanner, good_frame):
    with pytest.raises(n.NetronError.Internal) as e:
        n.debug_panic("python-side")
    assert "python-side" in str(e.value)
    assert scanner.assess(good_frame, nv21_info()).accept


def test_capture_session_state_machine(scanner, good_frame):
    session = n.CaptureSession(scanner, 3)
    assert session.state() == n.CaptureState.SEARCHING
    u = session.push_frame(flat_nv21(W, H), nv21_info())
    assert u.state == n.CaptureState.SEARCHING and n.Hint.MOVE_CLOSER in u.hints

    states, counts = [], []
    for _ in range(4):
        u = session.push_frame(good_frame, nv21_info())
        states.append(u.state)
        counts.append(u.stable_frames)
    S, C = n.CaptureState.STEADYING, n.CaptureState.CAPTURED
    # The first good frame follows a flat one: it is compared with it and found to have moved a lot, so it
    # is rejected (HOLD_STEADY); from then on the frames are identical, so steady.
    assert states == [n.CaptureState.SEARCHING, S, S, C], (states, counts)
    assert counts == [0, 1, 2, 3]
    assert u.required_stable_frames == 3
    # The three steady frames were scanned and fused into one result.
    assert u.result is not None and u.result.frames == 3
    check_result(u.result, W, H)
    assert u.result.quality == u.quality

    # Captured is sticky until reset.
    assert session.push_frame(flat_nv21(W, H), nv21_info()).state == C
    # A bad frame is an error and changes nothing.
    with pytest.raises(n.NetronError.BufferTooShort):
        session.push_frame(b"", nv21_info())
    assert session.state() == C

    session.reset()
    u = session.push_frame(good_frame, nv21_info())
    assert (u.state, u.stable_frames, u.quality.stability, u.result) == (S, 0, None, None)


def test_capture_session_moving_camera_holds_steady(scanner):
    session = n.CaptureSession(scanner, 2)
    session.push_frame(rgb_to_nv21(netron_rgb(W, H)), nv21_info())
    u = session.push_frame(rgb_to_nv21(netron_rgb(W, H, shift=160)), nv21_info())
    assert u.state == n.CaptureState.SEARCHING
    assert n.Hint.HOLD_STEADY in u.hints


def test_capture_session_per_plane_push(scanner, good_frame):
    session = n.CaptureSession(scanner, 1)
    y, vu = good_frame[: W * H], good_frame[W * H :]
    assert session.push_planes(y, vu, b"", nv21_info()).state == n.CaptureState.STEADYING
    u = session.push_planes(y, vu, b"", nv21_info())
    assert u.state == n.CaptureState.CAPTURED and u.result.frames == 1
    # One frame "fused" is that frame's scan (ids may be renumbered by confidence).
    single = json.loads(scanner.scan(good_frame, nv21_info()).graph_json)
    fused = json.loads(u.result.graph_json)
    for kind, key in (("nodes", "op"), ("inputs", "name"), ("outputs", "name"), ("tensors", "text")):
        assert sorted(map(str, (x[key] for x in fused[kind]))) == sorted(map(str, (x[key] for x in single[kind])))
    assert len(fused["edges"]) <= len(single["edges"])  # fusion keeps one edge per (from, to) pair


def test_four_threads_share_one_scanner(scanner):
    frames = [rgb_to_nv21(netron_rgb(W, H, shift=8 * t)) for t in range(4)]
    expected = [scanner.assess(f, nv21_info()) for f in frames]
    barrier = threading.Barrier(4)

    def work(t):
        barrier.wait()
        return [scanner.assess(frames[t], nv21_info()) for _ in range(10)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    for t, rs in enumerate(results):
        assert all(r == expected[t] for r in rs)


def test_log_records_reach_a_python_sink():
    seen = []

    class Sink(n.LogSink):
        def log(self, record):
            seen.append(record)

    assert n.set_log_sink(Sink(), n.LogLevel.DEBUG)
    try:
        n.Scanner()
    finally:
        n.clear_log_sink()
    n.Scanner()  # after clearing: nothing more arrives
    hits = [r for r in seen if "bundled models" in r.message]
    assert len(hits) == 1 and hits[0].level == n.LogLevel.DEBUG and hits[0].target.startswith("netron_ocr_ffi")


def test_graph_json_through_the_core_reader():
    example = (REPO / "tests/fixtures/graphs/example.json").read_text()
    normalized = json.loads(n.normalize_graph_json(example))
    original = json.loads(example)
    assert [x["id"] for x in normalized["nodes"]] == [x["id"] for x in original["nodes"]]
    assert "scene" not in normalized or normalized["scene"] == original.get("scene")
    with pytest.raises(n.NetronError.UnsupportedGraphVersion):
        n.normalize_graph_json((REPO / "tests/fixtures/graphs/invalid/version-2.json").read_text())
    with pytest.raises(n.NetronError.InvalidGraph):
        n.normalize_graph_json((REPO / "tests/fixtures/graphs/invalid/dangling-edge.json").read_text())
