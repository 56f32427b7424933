"""Smoke and unit tests for the operator classifier and the OCR (run from models/: `python -m pytest train/tests`).

A tiny synthetic dataset in the docs/dataset.md layout (PIL-drawn cards with coloured op titles and shape labels,
20 scenes so that the k % 10 == 8 / 9 splits exist) stands in for rendered data.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw

from datagen.vocab import load_vocab
from train import classifier, common, eval_classifier, eval_ocr, export_cls_ocr, ocr, pack, text_synth

VOCAB = load_vocab()
OPS = ["Conv", "Relu", "Add", "MaxPool", "Gemm", "Concat"]
COLOURS = {"layer": (51, 85, 136), "activation": (112, 41, 33), "pool": (51, 85, 51), "tensor": (89, 66, 59),
           "none": (51, 51, 51)}


def _draw_scene(k: int, rng: np.random.Generator, path_png, path_json) -> None:
    w, h = 640, 400
    dark = k % 4 == 3
    img = Image.new("RGB", (w, h), (30, 30, 30) if dark else (255, 255, 255))
    d = ImageDraw.Draw(img)
    font = text_synth._font(text_synth.available_fonts()[0][0], 12)
    nodes, tensors = [], []
    for j in range(4):
        x0, y0 = 30 + 150 * j + int(rng.integers(0, 20)), 40 + int(rng.integers(0, 60))
        op = OPS[int(rng.integers(0, len(OPS)))]
        cat = VOCAB.category_of(op)
        tw = int(font.getlength(op)) + 16
        d.rectangle([x0, y0, x0 + tw, y0 + 20], fill=COLOURS.get(cat, (51, 51, 51)))
        d.text((x0 + 8, y0 + 3), op, fill=(255, 255, 255), font=font)
        nodes.append({"id": f"n{j}", "op": op, "op_confidence": 1.0, "box": [x0, y0, x0 + tw, y0 + 20],
                      "title_box": [x0, y0, x0 + tw, y0 + 20], "confidence": 1.0, "weights": []})
        text = "×".join(str(int(rng.integers(1, 300))) for _ in range(int(rng.integers(2, 5))))
        lx, ly = x0, y0 + 60
        d.text((lx, ly), text, fill=(220, 220, 220) if dark else (0, 0, 0), font=font)
        asc, desc = font.getmetrics()
        tensors.append({"id": f"t{j}", "text": text, "shape": [int(v) for v in text.split("×")],
                        "box": [lx, ly, lx + font.getlength(text), ly + asc + desc], "confidence": 1.0})
    img.save(path_png)
    truth = {"format": "netron-ocr.graph", "version": 1, "image": {"width": w, "height": h},
             "canvas": {"box": [0, 0, w, h], "confidence": 1.0}, "nodes": nodes, "inputs": [], "outputs": [],
             "tensors": tensors, "edges": [],
             "scene": {"index": k, "kind": "screenshot", "theme": "dark" if dark else "light", "names": False,
                       "label_font_px": 12.0}}
    path_json.write_text(json.dumps(truth))


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("clsocr-data")
    scenes = root / "scenes"
    scenes.mkdir()
    rng = np.random.default_rng(5)
    for k in range(20):
        _draw_scene(k, rng, scenes / f"{k:06d}.shot.png", scenes / f"{k:06d}.shot.json")
    return root


@pytest.fixture(scope="module")
def alphabet():
    return ocr.load_alphabet()


# ----------------------------------------------------------------------------------------------------------------
# Contracts: alphabet, decoding, budgets


def test_alphabet_file_round_trip(alphabet):
    doc = json.loads(ocr.ALPHABET_PATH.read_text(encoding="utf-8"))
    assert doc["blank"] == 0 and doc["num_classes"] == len(doc["symbols"]) + 1 == alphabet.num_classes
    assert doc["time_steps"] == ocr.TIME_STEPS and doc["max_length"] == ocr.MAX_LEN
    inp = doc["input"]
    assert (inp["height"], inp["width"], inp["channels"]) == (ocr.OCR_H, ocr.OCR_W, 1)
    assert inp["crop_pad_fraction_of_height"] == ocr.INFER_PAD_FRAC
    assert doc["output"]["shape"][1:] == [ocr.TIME_STEPS, alphabet.num_classes]
    for needed in "0123456789×?,_./:-〈〉 =azAZ":
        assert needed in alphabet.symbols
    for text in ["1×8×56×56", "batch×3×224×224", "/layer1/conv/Conv_output_0", "onnx::Add_12", "input.1",
                 "〈64×3×7×7〉", "?×-1", "kernel_shape = 3, 3"]:
        ids = alphabet.encode(text)
        assert 0 not in ids
        assert alphabet.decode(ids) == text
    with pytest.raises(KeyError):
        alphabet.encode("é")


def test_ctc_greedy_decoder(alphabet):
    c = alphabet.num_classes
    one, five, six = alphabet.index["1"], alphabet.index["5"], alphabet.index["6"]
    path = [0, one, one, 0, one, five, five, 0, 0, six]  # 1 1 5 6: repeats collapse, blanks split them
    logits = np.full((len(path), c), -5.0, np.float32)
    logits[np.arange(len(path)), path] = 5.0
    assert ocr.ctc_greedy_ids(logits) == [[one, one, five, six]]
    assert ocr.ctc_greedy_decode(logits[None], alphabet) == ["1156"]
    assert ocr.ctc_greedy_decode(np.zeros((2, 4, c)) + np.eye(c)[0], alphabet) == ["", ""]  # all blank
    assert ocr.ctc_feasible([1, 1, 2], 4) and not ocr.ctc_feasible([1, 1, 2], 3) and not ocr.ctc_feasible([], 5)


def test_reread_takes_the_reading_likeliest_over_both_crops(alphabet):
    c = alphabet.num_classes
    one, two = alphabet.index["1"], alphabet.index["2"]

    def crop(path, sure):
        logits = np.zeros((len(path), c), np.float32)
        logits[np.arange(len(path)), path] = sure
        return logits[None]

    # The first crop hesitates between "1" and "12"; the second reads "12" clearly.
    unsure_first = crop([0, one, 0, 0, 0, 0], 2.0)
    unsure_first[0, 3, two] = 1.9
    second = crop([0, one, 0, two, 0, 0], 8.0)
    assert eval_ocr.reread_decode(unsure_first, [second], alphabet, below=0.5) == ["12"]
    assert eval_ocr.reread_decode(unsure_first, [second], alphabet, below=0.0) == ["1"]  # nothing re-read
    assert eval_ocr.reread_decode(unsure_first, [], alphabet, below=0.5) == ["1"]
    # Two crops that agree keep their reading.
    assert eval_ocr.reread_decode(second, [second], alphabet, below=1.1) == ["12"]


def _labelings_by_enumeration(lp: np.ndarray) -> dict[tuple[int, ...], float]:
    """Every labeling of a tiny [T, C] log-softmax and its probability summed over all C^T alignments."""
    import itertools

    totals: dict[tuple[int, ...], float] = {}
    steps, classes = lp.shape
    for path in itertools.product(range(classes), repeat=steps):
        ids, prev = [], 0
        for k in path:
            if k != prev and k != 0:
                ids.append(k)
            prev = k
        p = math.exp(sum(lp[t, k] for t, k in enumerate(path)))
        totals[tuple(ids)] = totals.get(tuple(ids), 0.0) + p
    return totals


def test_ctc_beam_without_pruning_finds_the_likeliest_labelings():
    rng = np.random.default_rng(3)
    for _ in range(20):
        logits = rng.normal(0, 2, (5, 4))
        lp = torch.log_softmax(torch.from_numpy(logits), -1).numpy()
        exact = _labelings_by_enumeration(lp)
        # A beam wide enough for every prefix is exact.
        found = ocr.ctc_beam_ids(lp, beam=len(exact) * 4, prune=-math.inf)
        assert len(found) == len(exact)
        for ids, logp in found:
            assert logp == pytest.approx(math.log(exact[tuple(ids)]), abs=1e-9)
        best = max(exact.values())
        assert math.exp(found[0][1]) == pytest.approx(best, rel=1e-9)
        # The scores it reports also match the CTC forward algorithm.
        for ids, logp in found[:3]:
            if ids:
                assert logp == pytest.approx(eval_ocr.log_likelihoods(torch.from_numpy(lp), [ids])[0].item(), abs=1e-6)


def test_ctc_beam_keeps_a_character_greedy_decoding_drops(alphabet):
    c = alphabet.num_classes
    one = alphabet.index["1"]
    # Two steps where "1" has 0.45 and the blank 0.55: the greedy path is all blank, but "1" is likelier (0.70).
    probs = np.full((4, c), 1e-6)
    probs[:, 0] = 1.0
    probs[1:3, 0], probs[1:3, one] = 0.55, 0.45
    probs /= probs.sum(-1, keepdims=True)
    lp = np.log(probs)
    assert ocr.ctc_greedy_ids(lp) == [[]]
    found = ocr.ctc_beam_ids(lp, beam=4)
    assert found[0][0] == [one] and found[1][0] == []
    assert math.exp(found[0][1]) == pytest.approx(1 - 0.55 ** 2, rel=1e-3)
    assert eval_ocr.reread_decode(lp[None], [], alphabet, below=0.0, beam=4) == ["1"]
    assert eval_ocr.reread_decode(lp[None], [], alphabet, below=0.0, beam=1) == [""]


def test_param_budgets_and_shapes(alphabet):
    cls = classifier.build_model(dict(classifier.DEFAULT_CONFIG, num_classes=len(VOCAB)))
    rec = ocr.build_model(dict(ocr.DEFAULT_CONFIG, num_classes=alphabet.num_classes))
    assert common.count_params(cls) <= classifier.PARAM_BUDGET == 2_710_000
    assert common.count_params(rec) <= ocr.PARAM_BUDGET == 1_260_000
    cls.eval()
    rec.eval()
    with torch.no_grad():
        assert tuple(cls(torch.zeros(2, 3, 96, 160)).shape) == (2, 72)
        assert tuple(rec(torch.zeros(3, 1, 48, 160)).shape) == (3, 40, alphabet.num_classes)


def test_edit_ops_and_text_metrics():
    dist, ops = ocr.edit_ops("1×8×56×56", "1×8×56×55")
    assert dist == 1 and ops == [("6", "5")]
    assert ocr.edit_ops("abc", "ac") == (1, [("b", "")])
    m = ocr.text_metrics(["12", "34"], ["12", "3"], ["shape", "name"], [10.0, 3.0])
    assert m["exact"] == 0.5 and math.isclose(m["char_acc"], 0.75)
    assert m["per_kind"]["name"]["exact"] == 0.0 and m["per_height"]["<6px"]["n"] == 1
    assert "per_source" not in m
    m = ocr.text_metrics(["12", "34", "5"], ["12", "3", "5"], None, [10.0, 3.0, 4.0],
                         sources=["photo", "screenshot", "screenshot"])
    assert m["per_source"]["photo"]["exact"] == 1.0 and m["per_source"]["screenshot"]["exact"] == 0.5
    assert m["per_source"]["screenshot"]["per_height"]["<6px"]["n"] == 2


def test_temperature_fit_recovers_scale():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 4000)
    base = rng.normal(0, 1, (4000, 10))
    base[np.arange(4000), labels] += 2.0
    # draw labels from softmax(base), then report logits 3× too confident
    p = classifier.softmax(base)
    labels = np.array([rng.choice(10, p=row) for row in p])
    t = classifier.fit_temperature(base * 3.0, labels)
    assert 2.6 < t < 3.4
    assert classifier.expected_calibration_error(classifier.softmax(base * 3.0 / t), labels) < \
        classifier.expected_calibration_error(classifier.softmax(base * 3.0), labels)


# ----------------------------------------------------------------------------------------------------------------
# Preprocessing


def test_ocr_padding_uses_border_mean():
    crop = np.full((48, 100), 200, np.uint8)
    crop[10:38, 10:90] = 0
    x = ocr.to_ocr_tensor([crop]).numpy()
    assert x.shape == (1, 1, ocr.OCR_H, ocr.OCR_W)
    assert np.allclose(x[0, 0, :, 100:], 200 / 127.5 - 1.0)
    assert np.allclose(x[0, 0, 20, 20], -1.0)
    assert ocr.output_width(1000, 10) == ocr.OCR_W and ocr.output_width(10, 48) == 10 and ocr.output_width(0.1, 48) == 1
    with pytest.raises(ValueError):
        ocr.to_ocr_tensor([np.zeros((40, 10), np.uint8)])


def test_cached_cuts_match_exact_preprocessing(dataset, tmp_path, alphabet):
    """The training path (cache + warp) must show the same pixels as the inference path (PIL from source)."""
    crops = classifier.collect_title_crops(dataset, VOCAB)[:12]
    cache = classifier.TitleCache(crops, tmp_path / "cls", progress=False)
    exact = eval_classifier.cut_crops(crops, [classifier.INFER_PAD] * len(crops))
    for i, want in enumerate(exact):
        got = classifier.eval_sample(cache, i, (classifier.INFER_PAD,) * 4)
        assert got.shape == want.shape == (96, 160, 3)
        assert np.abs(got.astype(float) - want).mean() < 2.0
    tcrops, _ = ocr.collect_text_crops(dataset, alphabet)
    tcrops = tcrops[:12]
    tcache = ocr.TextCache(tcrops, tmp_path / "ocr", progress=False)
    exact = eval_ocr.cut_crops(tcrops)
    for i, want in enumerate(exact):
        got = ocr.cached_sample(tcache, i, (ocr.INFER_PAD_FRAC,) * 4)
        assert got.shape == want.shape and got.shape[0] == 48
        assert np.abs(got.astype(float) - want).mean() < 2.0
    # a shifted cut must look different: the test can fail
    shifted = ocr.cached_sample(tcache, 0, (ocr.INFER_PAD_FRAC + 0.6, ocr.INFER_PAD_FRAC, 0.0, ocr.INFER_PAD_FRAC))
    if shifted.shape == exact[0].shape:
        assert np.abs(shifted.astype(float) - exact[0]).mean() > 8.0


def test_synthetic_text_renders_every_kind():
    rng = np.random.default_rng(1)
    for _ in range(10):
        img, text, kind = ocr.synthetic_sample(rng, ["1×8×56×56"])
        assert img.dtype == np.uint8 and img.shape[0] == 48 and 1 <= img.shape[1] <= ocr.OCR_W
        assert ocr.load_alphabet().covers(text) and 0 < len(text) <= 32 and kind in ocr.KINDS
    assert all(len(text_synth.random_shape(rng)) <= 16 for _ in range(200))
    # One digit changed, inserted or deleted (a deletion that would empty a dim leaves the text as it is).
    base = "1×8×56×56"
    mutated = [text_synth.mutate_digits(base, np.random.default_rng(k)) for k in range(20)]
    assert sum(m != base for m in mutated) >= 10
    for m in mutated:
        assert abs(len(m) - len(base)) <= 1 and m.split("×")[0] and m.count("×") == base.count("×")
        assert len(m) != len(base) or sum(a != b for a, b in zip(m, base)) <= 1


# ----------------------------------------------------------------------------------------------------------------
# Train step, export, ORT, warm start


def _check_export_and_warm_start(kind: str, ckpt, tmp_path, expect_temperature: float):
    out = tmp_path / f"{kind}.onnx"
    summary = export_cls_ocr.export(kind, ckpt, out)
    assert summary["opset"] == 17 and summary["max_abs_diff_ort_torch"] <= 1e-4
    assert set(summary["ops"]) <= export_cls_ocr.TRACT_OPS
    runner = common.OrtRunner(out)
    for n in (1, 3):  # dynamic batch
        y = runner(export_cls_ocr.example_input(kind, n))["logits"]
        assert y.shape[0] == n and np.isfinite(y).all()
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    fresh = export_cls_ocr.build(kind, state["config"])
    info = export_cls_ocr.warm_start(fresh, out, kind)
    assert math.isclose(info["temperature"], expect_temperature, rel_tol=1e-6)
    x = export_cls_ocr.example_input(kind, 4)
    fresh.eval()
    with torch.no_grad():
        torch_out = fresh(x).numpy() / expect_temperature
    assert np.abs(torch_out - runner(x)["logits"]).max() <= 1e-4
    other = "ocr" if kind == "classifier" else "classifier"
    with pytest.raises(common.WarmStartError):
        export_cls_ocr.warm_start(export_cls_ocr.build(kind, state["config"]), out, other)
    return out


def test_classifier_train_export_resume(dataset, tmp_path):
    out = tmp_path / "ckpt"
    base = ["--data", str(dataset), "--out", str(out), "--cache", str(tmp_path / "cache"), "--batch", "8",
            "--warmup", "1"]
    assert classifier.main(base + ["--steps", "2", "--eval-every", "2"]) == 0
    state = torch.load(out / "best.pt", map_location="cpu", weights_only=False)
    assert state["step"] == 2 and state["temperature"] > 0
    assert np.isfinite(json.loads((out / "calibration.json").read_text())["val_ece_after"])
    onnx_path = _check_export_and_warm_start("classifier", out / "best.pt", tmp_path, state["temperature"])
    # resume: one more step continues from step 2
    assert classifier.main(base + ["--steps", "3", "--eval-every", "3", "--no-calibrate"]) == 0
    assert torch.load(out / "last.pt", map_location="cpu", weights_only=False)["step"] == 3
    # warm start a new run from the export
    assert classifier.main(["--data", str(dataset), "--out", str(tmp_path / "ws"), "--cache", str(tmp_path / "cache"),
                            "--steps", "1", "--batch", "8", "--warm-start", str(onnx_path), "--no-calibrate"]) == 0
    rep = tmp_path / "rep.json"
    assert eval_classifier.main(["--data", str(dataset), "--ckpt", str(out / "best.pt"), "--onnx", str(onnx_path),
                                 "--variants", "fp32,int8", "--json", str(rep)]) == 0
    report = json.loads(rep.read_text())
    assert report["n"] > 0 and 0.0 <= report["onnx_int8_pad7"]["top1"] <= 1.0


def test_ocr_train_export(dataset, tmp_path):
    out = tmp_path / "ckpt"
    args = ["--data", str(dataset), "--out", str(out), "--cache", str(tmp_path / "cache"), "--steps", "2",
            "--batch", "8", "--eval-every", "2", "--warmup", "1", "--synth-frac", "0.5"]
    assert ocr.main(args) == 0
    state = torch.load(out / "best.pt", map_location="cpu", weights_only=False)
    assert state["step"] == 2
    onnx_path = _check_export_and_warm_start("ocr", out / "best.pt", tmp_path, 1.0)
    rep = tmp_path / "rep.json"
    assert eval_ocr.main(["--data", str(dataset), "--onnx", str(onnx_path), "--variants", "fp32,fp16",
                          "--reread-below", "1.01", "--json", str(rep)]) == 0
    report = json.loads(rep.read_text())
    assert report["n"] > 0 and set(report["onnx_fp16"]["per_kind"]) == {"shape"}
    assert report["onnx_reread_1.01_0.3"]["n"] == report["n"]


def test_run_start_resumes_then_inits_then_starts_new(tmp_path):
    ckpt = tmp_path / "init.pt"
    torch.save({"config": {"hidden": 1}, "model": {"w": torch.ones(2)}, "step": 5}, ckpt)
    new = lambda: {"hidden": 3}  # noqa: E731
    assert common.run_start({"config": {"hidden": 2}}, ckpt, new) == ({"hidden": 2}, None)
    config, weights = common.run_start(None, ckpt, new)
    assert config == {"hidden": 1} and list(weights) == ["w"] and torch.equal(weights["w"], torch.ones(2))
    assert common.run_start(None, None, new) == ({"hidden": 3}, None)


@pytest.mark.parametrize("at_start", [False, True], ids=["plain", "eval_at_start"])
def test_eval_at_start_scores_the_start_and_keeps_it_unless_beaten(tmp_path, at_start):
    """A run that starts at the held-out optimum and trains away from it: with `eval_at_start` its step-0 score is
    logged and `best.pt` stays the start; without, `best.pt` is a trained state."""
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(1.0)
    target = torch.ones(1, 1)
    evaluate = lambda m: (-float((m.weight - 1.0).abs().sum()), {})  # noqa: E731
    loss_fn = lambda m, batch: (((m(target) + 1.0) ** 2).mean(), {})  # noqa: E731, trains towards w = -1
    cfg = common.LoopConfig(total_steps=6, lr=0.1, warmup_steps=1, eval_every=3)
    ckpts = common.Checkpoints(tmp_path / "run")
    common.train_loop(model, cfg, ckpts, lambda rng: None, loss_fn, evaluate, {}, eval_at_start=at_start)
    log = [json.loads(line) for line in ckpts.log.read_text().splitlines()]
    assert [r["step"] for r in log] == ([0, 3, 6] if at_start else [3, 6])
    best = torch.load(ckpts.best, map_location="cpu", weights_only=False)
    assert (best["step"] == 0) == at_start
    assert torch.equal(best["model"]["weight"], torch.ones(1, 1)) == at_start


def test_weight_ema_is_what_is_evaluated_and_saved_and_resumes(tmp_path):
    """With `weight_ema` = d, evaluation sees and checkpoints store as `model` the average d·avg + (1 − d)·w over
    the steps, started from the initial weights; the raw weights are `train_model`, and a run interrupted and
    resumed ends where an uninterrupted one does."""
    target = torch.ones(1, 1)
    loss_fn = lambda m, batch: (((m(target) + 1.0) ** 2).mean(), {})  # noqa: E731, trains towards w = -1

    def run(out, steps, stop_after=None):
        model = torch.nn.Linear(1, 1, bias=False)
        with torch.no_grad():
            model.weight.fill_(1.0)
        seen, drawn = [], []

        def next_batch(rng):
            if stop_after is not None and len(drawn) == stop_after:
                raise KeyboardInterrupt
            drawn.append(1)

        evaluate = lambda m: (seen.append(float(m.weight)) or 0.0, {})  # noqa: E731
        cfg = common.LoopConfig(total_steps=steps, lr=0.1, warmup_steps=1, eval_every=2, save_every=1,
                                weight_ema=0.5)
        ckpts = common.Checkpoints(out)
        try:
            common.train_loop(model, cfg, ckpts, next_batch, loss_fn, evaluate, {})
        except KeyboardInterrupt:
            pass
        return model, seen, torch.load(ckpts.last, map_location="cpu", weights_only=False)

    model, seen, last = run(tmp_path / "a", 4)
    # The raw weights after each step, replayed with plain AdamW on the same schedule.
    replay = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        replay.weight.fill_(1.0)
    opt = torch.optim.AdamW(replay.parameters(), lr=0.1, weight_decay=1e-4)
    avg, averages = 1.0, []
    cfg = common.LoopConfig(total_steps=4, lr=0.1, warmup_steps=1)
    for step in range(4):
        for g in opt.param_groups:
            g["lr"] = common.lr_at(step, cfg, 0.0)
        loss, _ = loss_fn(replay, None)
        opt.zero_grad()
        loss.backward()
        opt.step()
        avg = 0.5 * avg + 0.5 * float(replay.weight.detach())
        averages.append(avg)
    assert seen == pytest.approx([averages[1], averages[3]], abs=1e-6)
    assert float(last["model"]["weight"]) == pytest.approx(averages[3], abs=1e-6)
    assert torch.equal(last["train_model"]["weight"], model.weight.detach())
    assert float(model.weight.detach()) == pytest.approx(float(replay.weight.detach()), abs=1e-6)
    assert float(model.weight.detach()) < averages[3] < 1.0  # the average lags the raw weights
    # Interrupted while drawing its fourth batch (its last checkpoint: step 3, between evaluations), then resumed.
    _, _, stopped = run(tmp_path / "b", 4, stop_after=3)
    assert stopped["step"] == 3
    _, _, resumed = run(tmp_path / "b", 4)
    assert resumed["step"] == 4
    assert torch.allclose(resumed["model"]["weight"], last["model"]["weight"], atol=1e-6)
    assert torch.allclose(resumed["train_model"]["weight"], last["train_model"]["weight"], atol=1e-6)


@pytest.mark.parametrize("trainer", [classifier, ocr], ids=["classifier", "ocr"])
def test_init_starts_a_new_run_from_a_checkpoint(trainer, dataset, tmp_path):
    """--init takes the checkpoint's config (not the flags') and weights, with a fresh optimizer at step 0."""
    base = ["--data", str(dataset), "--cache", str(tmp_path / "cache"), "--batch", "4", "--warmup", "1"]
    if trainer is classifier:
        base.append("--no-calibrate")
    first, second = tmp_path / "a", tmp_path / "b"
    assert trainer.main(base + ["--out", str(first), "--steps", "1", "--eval-every", "1", "--hidden", "24"]) == 0
    assert trainer.main(base + ["--out", str(second), "--init", str(first / "last.pt"), "--max-minutes", "0"]) == 0
    a = torch.load(first / "last.pt", map_location="cpu", weights_only=False)
    b = torch.load(second / "last.pt", map_location="cpu", weights_only=False)
    assert a["step"] == 1 and b["step"] == 0 and not b["optimizer"]["state"]
    assert b["config"] == a["config"] and b["config"]["hidden"] == 24
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k


def synthetic_text_batch(alphabet, n: int, seed: int = 0):
    """`n` crops of `ocr.synthetic_sample` as one batch: (samples, x [n, 1, 48, 320], targets concatenated,
    lengths), the trainer's target layout."""
    rng = np.random.default_rng(seed)
    samples = [ocr.synthetic_sample(rng, []) for _ in range(n)]
    targets = [alphabet.encode(s[1]) for s in samples]
    return (samples, ocr.to_ocr_tensor([s[0] for s in samples]), torch.tensor([k for t in targets for k in t]),
            torch.tensor([len(t) for t in targets]))


def test_one_ocr_step_lowers_loss_on_a_fixed_batch(alphabet):
    """A few optimizer steps on one fixed batch must reduce the CTC loss (the loss is wired to the model)."""
    torch.manual_seed(0)
    model = ocr.build_model(dict(ocr.DEFAULT_CONFIG, num_classes=alphabet.num_classes))
    _, x, flat, lengths = synthetic_text_batch(alphabet, 8)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(6):
        lp = model(x).log_softmax(2).transpose(0, 1)
        loss = torch.nn.functional.ctc_loss(lp, flat, torch.full((8,), ocr.TIME_STEPS), lengths, zero_infinity=True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0]


def test_widened_recurrent_head_reads_the_same_and_learns(alphabet):
    """`widen_recurrent` keeps the logits of the model it widens, and the added units take gradient."""
    torch.manual_seed(0)
    narrow = ocr.build_model(dict(ocr.DEFAULT_CONFIG, num_classes=alphabet.num_classes, hidden=24))
    narrow.eval()
    wide = ocr.widen_recurrent(narrow, 40)
    wide.eval()
    assert wide.rnn.hidden_size == 40 and wide.fc.in_features == 80
    x = torch.randn(3, 1, 48, 160)
    with torch.no_grad():
        torch.testing.assert_close(wide(x), narrow(x), rtol=0, atol=1e-5)
    with pytest.raises(ValueError):
        ocr.widen_recurrent(narrow, 16)
    # Only the classifier's new columns see a gradient at first; once they move, the new units' weights do.
    opt = torch.optim.SGD(wide.parameters(), lr=0.1)
    for step in range(2):
        opt.zero_grad()
        wide(x).log_softmax(2)[..., 1].sum().backward()
        if step == 0:
            assert float(wide.fc.weight.grad[:, 24:40].abs().sum()) > 0
        opt.step()
    assert float(wide.rnn.weight_ih_l1.grad[24:40].abs().sum()) > 0
    assert float(wide.rnn.weight_hh_l0_reverse.grad[24:40].abs().sum()) > 0


def test_titles_are_text_crops_only_on_request(dataset, alphabet):
    plain, _ = ocr.collect_text_crops(dataset, alphabet)
    both, _ = ocr.collect_text_crops(dataset, alphabet, titles=True)
    titles = [c for c in both if c.kind == "title"]
    assert not any(c.kind == "title" for c in plain) and titles
    assert len(both) == len(plain) + len(titles)
    for c in titles:
        truth = common.load_truth(c.image.truth_path)
        assert c.text in {n.get("title_text") or n["op"] for n in truth["nodes"]}


def test_skew_settings_match_the_alphabet_file():
    skew = json.loads(ocr.ALPHABET_PATH.read_text(encoding="utf-8"))["input"]["skew"]
    assert (skew["min_deg"], skew["max_deg"]) == (ocr.SKEW_MIN_DEG, ocr.SKEW_MAX_DEG)
    assert (skew["max_side"], skew["max_samples"]) == (ocr.SKEW_MAX_SIDE, ocr.SKEW_MAX_SS)


def turned_bars(deg: float, w: int = 400, h: int = 300) -> np.ndarray:
    """Grey image of dark text-like bars 6 px thick every 30 px (and 3 px cross rules every 60 px) turned by `deg`
    about the centre, edges antialiased over one pixel (hard edges would add the staircase's own 0°/90°)."""
    t = math.radians(deg)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    dx, dy = x - w / 2, y - h / 2
    u, v = dx * math.cos(t) + dy * math.sin(t), -dx * math.sin(t) + dy * math.cos(t)
    bars = np.clip(3.5 - np.abs(np.mod(v, 30.0) - 15.0), 0, 1) * np.clip(150.5 - np.abs(u), 0, 1)
    rules = np.clip(2.0 - np.abs(np.mod(u, 60.0) - 30.0), 0, 1)
    return np.round(240 - 220 * np.maximum(bars, rules)).astype(np.uint8)


def test_skew_estimate_recovers_turned_lines_and_refuses_odd_regions():
    for deg in (-12.0, -4.0, 0.0, 3.0, 9.0):
        got = ocr.estimate_skew(turned_bars(deg), (0, 0, 400, 300))
        assert abs(got - deg) < 0.6, (deg, got)
    assert ocr.estimate_skew(np.full((200, 200), 128, np.uint8), (0, 0, 200, 200)) == 0.0
    assert ocr.estimate_skew(turned_bars(5.0), (10, 10, 30, 300)) == 0.0  # under 32 px wide
    assert ocr.estimate_skew(turned_bars(5.0), (float("nan"), 0, 400, 300)) == 0.0
    assert ocr.estimate_skew(turned_bars(30.0), (0, 0, 400, 300)) == 0.0  # beyond SKEW_MAX_DEG


def test_rotated_crop_straightens_a_turned_line():
    """A dark 120×14 bar turned by 8° and cut along the skew comes out as a level band: the rows of its middle are
    dark across the crop, the rows near top and bottom light; the axis-aligned crop of the same box is not."""
    t = math.radians(8.0)
    y, x = np.mgrid[0:200, 0:300].astype(np.float64)
    dx, dy = x - 150, y - 100
    u, v = dx * math.cos(t) + dy * math.sin(t), -dx * math.sin(t) + dy * math.cos(t)
    grey = np.where((np.abs(u) < 60) & (np.abs(v) < 7), 10, 245).astype(np.uint8)
    bw, bh = 120 * math.cos(t) + 14 * math.sin(t), 120 * math.sin(t) + 14 * math.cos(t)
    box = (150 - bw / 2, 100 - bh / 2, 150 + bw / 2, 100 + bh / 2)
    crop = ocr.preprocess_text(Image.fromarray(grey), box, skew_deg=8.0)
    assert crop.shape[0] == ocr.OCR_H
    mid, edge = crop[18:30, 8:-8].mean(), np.r_[crop[:3, 8:-8].ravel(), crop[-3:, 8:-8].ravel()].mean()
    assert mid < 40 and edge > 200, (mid, edge)
    flat = ocr.preprocess_text(Image.fromarray(grey), box)

    def band_rows(c):  # centre row of the dark band in the left and the right quarter
        q = c.shape[1] // 4
        return [float(np.mean(np.nonzero(c[:, a:b].mean(axis=1) < 128)[0])) for a, b in ((8, q), (3 * q, -8))]

    left, right = band_rows(crop)
    assert abs(left - right) < 2, (left, right)
    left, right = band_rows(flat)
    assert abs(left - right) > 8, (left, right)  # axis-aligned: the band climbs across the crop


def test_run_width_matches_the_rust_reader():
    # The cases of core/tests/read_ctc.rs::run_width_adds_the_margin_in_steps_of_32_up_to_the_input_width.
    cases = [(1, 32, 64), (32, 32, 64), (33, 32, 96), (152, 32, 192), (288, 32, 320), (320, 32, 320),
             (100, 0, 128), (100, None, 320)]
    for w, margin, want in cases:
        assert ocr.run_width(w, margin) == want, (w, margin)


def test_title_pack_keeps_the_crops_and_trains(dataset, tmp_path):
    vocab = classifier.load_vocab(classifier.VOCAB_PATH)
    splits = {"train", "val"}
    shards = pack.build_pack(dataset, tmp_path / "pack", splits, shard_mb=1e-3, cache_dir=tmp_path / "cache",
                             progress=False)
    assert len(shards) > 1 and sum(n for _, n, _ in shards) > 0
    packed = pack.PackedTitles(tmp_path / "pack")
    crops = [c for c in classifier.collect_title_crops(dataset, vocab) if classifier.split_of(c.image.index) in splits]
    assert [(c.image.index, c.image.kind, c.box, c.label) for c in packed.crops] == \
        [(c.image.index, c.image.kind, c.box, c.label) for c in crops]
    cache = classifier.TitleCache(crops, tmp_path / "cache", progress=False)
    for i in range(len(crops)):  # screenshots travel losslessly
        got, want = packed.get(i), cache.get(i)
        assert np.array_equal(got[0], want[0]) and got[1:] == want[1:]
    # photos travel as JPEG: close, not equal
    rng = np.random.default_rng(3)
    ramp = np.linspace(40, 220, 90)[None, :, None] + np.linspace(0, 20, 40)[:, None, None]
    region = np.clip(ramp + rng.normal(0, 3, size=(40, 90, 3)), 0, 255).astype(np.uint8)
    data, fmt = pack.encode_region(region, "photo", 90)
    back = pack.decode_region(np.frombuffer(data, np.uint8))
    assert fmt == "jpg" and back.shape == region.shape and 0 < np.abs(back.astype(int) - region).mean() < 4
    # the batch pool draws the same batches for the same seed
    by_class = {}
    for i, c in enumerate(packed.crops):
        by_class.setdefault(c.label, []).append(i)
    classes = sorted(by_class)
    batches = []
    for _ in range(2):
        pool = common.BatchPool(lambda n, r: classifier.draw_batch(packed, by_class, classes, n, r), batch=10,
                                workers=2, depth=2, chunk=4)
        try:
            batches.append(pool.next(np.random.default_rng(7)))
        finally:
            pool.close()
    assert batches[0][0].shape == (10, 96, 160, 3) and np.array_equal(batches[0][0], batches[1][0])
    assert np.array_equal(batches[0][1], batches[1][1])
    out = tmp_path / "ckpt"
    assert classifier.main(["--pack", str(tmp_path / "pack"), "--out", str(out), "--batch", "8", "--warmup", "1",
                            "--steps", "2", "--eval-every", "2", "--workers", "2", "--no-calibrate"]) == 0
    assert torch.load(out / "best.pt", map_location="cpu", weights_only=False)["step"] == 2


def test_text_pack_keeps_the_crops_and_trains(dataset, tmp_path):
    alphabet = ocr.load_alphabet()
    splits = {"train", "val"}
    shards = pack.build_text_pack(dataset, tmp_path / "pack", splits, shard_mb=1e-3, cache_dir=tmp_path / "cache",
                                  progress=False, max_val=3)
    assert len(shards) > 1 and sum(n for _, n, _ in shards) > 0
    packed = pack.PackedTexts(tmp_path / "pack")
    crops, _ = ocr.collect_text_crops(dataset, alphabet, titles=True)
    crops = [c for c in crops if ocr.split_of(c.image.index) in splits]
    kept = [c for c in crops if ocr.split_of(c.image.index) == "train"]
    assert sum(ocr.split_of(c.image.index) == "val" for c in crops) > 3  # so that --max-val dropped some
    got = [(c.image.index, c.image.kind, c.box, c.text, c.kind) for c in packed.crops]
    assert [g for g in got if ocr.split_of(g[0]) == "train"] == \
        [(c.image.index, c.image.kind, c.box, c.text, c.kind) for c in kept]
    assert sum(ocr.split_of(g[0]) == "val" for g in got) == 3
    cache = ocr.TextCache(crops, tmp_path / "cache", progress=False)
    skews = ocr.image_skews([c.image for c in crops], tmp_path / "cache", progress=False)
    where = {(c.image.index, c.box, c.text): i for i, c in enumerate(crops)}
    for j, c in enumerate(packed.crops):  # screenshots travel losslessly, grey, with their image's skew
        got, want = packed.get(j), cache.get(where[(c.image.index, c.box, c.text)])
        assert got[0].ndim == 2 and np.array_equal(got[0], want[0]) and got[1:] == want[1:]
        assert packed.skews[j] == skews[c.image.key]
    out = tmp_path / "ckpt"
    assert ocr.main(["--pack", str(tmp_path / "pack"), "--titles", "--out", str(out), "--batch", "8",
                     "--warmup", "1", "--steps", "2", "--eval-every", "2", "--workers", "2", "--synth-frac", "0"]) == 0
    assert torch.load(out / "best.pt", map_location="cpu", weights_only=False)["step"] == 2


def test_blended_export_runs_from_the_base_to_the_checkpoint(tmp_path, alphabet):
    config = dict(ocr.DEFAULT_CONFIG, channels=[4, 8, 8, 8], hidden=8, num_classes=alphabet.num_classes,
                  symbols=alphabet.symbols)
    torch.manual_seed(0)
    model = ocr.build_model(config)
    torch.save({"config": config, "model": model.state_dict(), "step": 1}, tmp_path / "base.pt")
    base = tmp_path / "base.onnx"
    export_cls_ocr.export("ocr", tmp_path / "base.pt", base)
    with torch.no_grad():
        for name, w in model.named_parameters():
            if "cnn" in name and name.endswith("conv.weight") or name.startswith("rnn.weight"):
                w.add_(0.2 * torch.randn_like(w))
    torch.save({"config": config, "model": model.state_dict(), "step": 2}, tmp_path / "moved.pt")
    x = export_cls_ocr.example_input("ocr", 2)
    logits = {}
    for t in (0.0, 0.5, 1.0):
        out = tmp_path / f"blend{t}.onnx"
        export_cls_ocr.export("ocr", tmp_path / "moved.pt", out, blend_onnx=base, blend=t)
        logits[t] = common.OrtRunner(out)(x)["logits"]
    plain = tmp_path / "moved.onnx"
    export_cls_ocr.export("ocr", tmp_path / "moved.pt", plain)
    assert np.abs(logits[0.0] - common.OrtRunner(base)(x)["logits"]).max() < 1e-5
    assert np.abs(logits[1.0] - common.OrtRunner(plain)(x)["logits"]).max() < 1e-5
    assert np.abs(logits[0.5] - logits[0.0]).max() > 1e-3 and np.abs(logits[0.5] - logits[1.0]).max() > 1e-3
