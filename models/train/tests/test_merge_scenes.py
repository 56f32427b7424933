"""`python -m train.merge_scenes`: several scene folders as one training set, the held-out rule kept."""

from pathlib import Path

import pytest

from train import merge_scenes
from train.common import list_scene_images, split_scene_images


def fake_scenes(root: Path, indices, tag: str) -> Path:
    scenes = root / "scenes"
    scenes.mkdir(parents=True)
    for k in indices:
        for suffix in ("photo.jpg", "photo.json", "shot.png", "shot.json"):
            (scenes / f"{k:06d}.{suffix}").write_text(f"{tag}:{k}:{suffix}")
    return root


def origins(out: Path) -> dict[str, set[str]]:
    """Per merged image kind, the `source:index` of every linked file (its content)."""
    found: dict[str, set[str]] = {"train": set(), "held": set()}
    train, held = split_scene_images(list_scene_images(out))
    for part, images in (("train", train), ("held", held)):
        for im in images:
            assert im.image_path.is_symlink() and im.truth_path.is_symlink()
            found[part].add(":".join(im.truth_path.read_text().split(":")[:2]))
    return found


def test_a_dataset_keeps_its_split_and_views_are_held_out_by_share(tmp_path: Path):
    data = fake_scenes(tmp_path / "v1", range(40), "v1")
    views = fake_scenes(tmp_path / "dense", range(200), "dense")
    n_train, n_held = merge_scenes.merge(tmp_path / "out", [data], [views], seed=7, held_fraction=0.2)
    found = origins(tmp_path / "out")
    assert len(found["train"]) == n_train and len(found["held"]) == n_held
    assert n_train + n_held == 240
    assert {s for s in found["held"] if s.startswith("v1:")} == {f"v1:{k}" for k in range(9, 40, 10)}
    assert {s for s in found["train"] if s.startswith("v1:")} == {f"v1:{k}" for k in range(40) if k % 10 != 9}
    held_views = sum(s.startswith("dense:") for s in found["held"])
    assert 20 <= held_views <= 60  # 20% of 200, drawn
    assert not found["train"] & found["held"]


def test_the_merge_is_deterministic_and_replaces_the_previous_one(tmp_path: Path):
    data = fake_scenes(tmp_path / "v1", range(30), "v1")
    views = fake_scenes(tmp_path / "lift", range(30), "lift")
    out = tmp_path / "out" / "scenes"
    merge_scenes.merge(tmp_path / "out", [data], [views], seed=3)
    first = {p.name: p.read_text() for p in out.iterdir()}
    merge_scenes.merge(tmp_path / "out", [data], [views], seed=4)
    other = {p.name: p.read_text() for p in out.iterdir()}
    merge_scenes.merge(tmp_path / "out", [data], [views], seed=3)
    assert {p.name: p.read_text() for p in out.iterdir()} == first
    assert other != first and len(other) == len(first)


def test_the_cli_needs_a_source(tmp_path: Path):
    with pytest.raises(SystemExit) as e:
        merge_scenes.main(["--out", str(tmp_path)])
    assert e.value.code == 2
