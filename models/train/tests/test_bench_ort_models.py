"""train.bench_ort_models: every case runs on the committed models."""

from train import bench_ort_models


def test_bench_ort_models_times_every_case(capsys):
    """The model-only onnxruntime timing runs each committed model once per case and prints a positive time."""
    bench_ort_models.main(["--repeat", "1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(bench_ort_models.CASES)
    for line, (name, _) in zip(lines, bench_ort_models.CASES):
        assert line.startswith(name + " ")
        assert float(line.split(": ")[1].split(" ms")[0]) > 0
