"""The attention OCR kept for comparison with the CTC OCR (`train.ocr_attn`): contracts, training wiring, export."""

from __future__ import annotations

import torch

from train import common, ocr, ocr_attn
from train.tests.test_classifier_ocr import alphabet, dataset, synthetic_text_batch  # noqa: F401  (fixtures)


def _model(alphabet):  # noqa: F811
    torch.manual_seed(0)
    return ocr.build_model(dict(ocr_attn.DEFAULT_CONFIG, num_classes=alphabet.num_classes, symbols=alphabet.symbols))


def test_attention_model_fits_the_ocr_budget_and_shapes(alphabet):  # noqa: F811
    model = _model(alphabet)
    assert isinstance(model, ocr_attn.AttnOcrNet)
    assert common.count_params(model) <= ocr.PARAM_BUDGET
    x = torch.zeros(3, 1, ocr.OCR_H, ocr.OCR_W)
    memory = model.encode(x)
    assert memory.shape == (3, ocr_attn.TOKENS, ocr_attn.DEFAULT_CONFIG["dim"])
    logits, hidden = model.step(memory, torch.zeros(3, alphabet.num_classes), torch.zeros(2, 3, model.hidden))
    assert logits.shape == (3, alphabet.num_classes) and hidden.shape == (2, 3, model.hidden)


def test_teacher_targets_start_with_class_0_and_end_with_it():
    targets = torch.tensor([5, 6, 7, 9])
    inputs, labels = ocr_attn.teacher_targets(targets, torch.tensor([3, 1]))
    assert inputs.tolist() == [[0, 5, 6, 7], [0, 9, 0, 0]]
    assert labels.tolist() == [[5, 6, 7, 0], [9, 0, -100, -100]]


def test_attention_steps_lower_the_loss_and_learn_to_stop(alphabet):  # noqa: F811
    """Steps on one fixed batch reduce the loss, and the greedy reading of a memorised crop is its text."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: more threads only contend with other jobs
    model = _model(alphabet)
    samples, x, flat, lengths = synthetic_text_batch(alphabet, 2)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    losses = []
    try:
        for _ in range(100):
            loss = ocr_attn.loss(model, x, flat, lengths)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
    finally:
        torch.set_num_threads(threads)
    assert losses[-1] < 0.2 * losses[0]
    assert ocr.predict(model, [s[0] for s in samples[:1]], alphabet) == [samples[0][1]]


def test_attention_training_runs_and_the_two_graphs_read_like_pytorch(dataset, tmp_path, alphabet):  # noqa: F811
    out = tmp_path / "ckpt"
    args = ["--data", str(dataset), "--out", str(out), "--cache", str(tmp_path / "cache"), "--steps", "2",
            "--batch", "4", "--eval-every", "2", "--warmup", "1", "--arch", "attention", "--max-val", "8"]
    assert ocr.main(args) == 0
    state = torch.load(out / "best.pt", map_location="cpu", weights_only=False)
    assert state["config"]["arch"] == "attention" and state["step"] == 2
    model = ocr.build_model(state["config"])
    model.load_state_dict(state["model"])
    with torch.no_grad():
        model.out.bias[0] -= 4.0  # long readings, so that many decoder steps are compared
    enc, dec = ocr_attn.export(model, tmp_path / "onnx")
    x = torch.rand(3, 1, ocr.OCR_H, ocr.OCR_W) * 2 - 1
    with torch.no_grad():
        want = model.eval().greedy(x)
    assert ocr_attn.OrtAttnReader(enc, dec).read(x.numpy()) == want
    assert all(len(ids) == ocr.MAX_LEN for ids in want)
