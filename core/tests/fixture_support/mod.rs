//! The committed files the model and pipeline tests run on: the repository's `models/` and the fixture scenes
//! `tests/fixtures/scenes/00000k.{shot.png,photo.jpg}` (k = 0..3) with their truth `00000k.{shot,photo}.json`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use image::RgbImage;
use netron_ocr_core::frame;
use netron_ocr_core::graph::GraphJson;
use netron_ocr_core::models::{Model, ModelKind};
use tract_onnx::prelude::*;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The committed models, `models/`.
pub fn models_dir() -> PathBuf {
    repo().join("models")
}

/// The committed `models/<kind>.onnx`, checked against the manifest.
pub fn model(kind: ModelKind) -> Model {
    Model::from_dir(kind, &models_dir()).unwrap_or_else(|e| panic!("{}: {e}", kind.file_name()))
}

/// `tests/fixtures/scenes/`.
pub fn scenes_dir() -> PathBuf {
    repo().join("tests/fixtures/scenes")
}

/// The truth graph of the file `name` in [`scenes_dir`] (e.g. `000001.photo.json`).
pub fn truth(name: &str) -> GraphJson {
    read_truth(&scenes_dir().join(name))
}

fn read_truth(path: &Path) -> GraphJson {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    GraphJson::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One fixture scene image with its truth.
pub struct FixtureScene {
    /// `00000k.shot` or `00000k.photo`.
    pub name: String,
    /// `shot` (a screenshot, PNG) or `photo` (a simulated camera photo, JPEG).
    pub kind: &'static str,
    pub image_path: PathBuf,
    pub truth_path: PathBuf,
}

impl FixtureScene {
    /// The truth graph.
    pub fn truth(&self) -> GraphJson {
        read_truth(&self.truth_path)
    }

    /// The decoded, upright image.
    pub fn image(&self) -> RgbImage {
        frame::decode_file(&self.image_path)
            .unwrap_or_else(|e| panic!("{}: {e}", self.image_path.display()))
    }
}

/// The 8 fixture scenes: for k = 0..3 the screenshot, then the photo. Panics when a file is missing.
pub fn scenes() -> Vec<FixtureScene> {
    scenes_in(&scenes_dir(), 0..4)
}

/// The dense view `tests/fixtures/dense/000104`: its screenshot, then its photo (text about 7 px high).
pub fn dense_scenes() -> Vec<FixtureScene> {
    scenes_in(&repo().join("tests/fixtures/dense"), [104])
}

/// The scenes of `tests/fixtures/ports` (1459, 1609), each screenshot then photo: views where the detector takes a
/// card for a graph output pill.
pub fn port_scenes() -> Vec<FixtureScene> {
    scenes_in(&repo().join("tests/fixtures/ports"), [1459, 1609])
}

/// The scene 1629 of `tests/fixtures/ports`, screenshot then photo: a horizontal view where the detector takes
/// output pills for cards.
pub fn sink_scenes() -> Vec<FixtureScene> {
    scenes_in(&repo().join("tests/fixtures/ports"), [1629])
}

/// The scene of `tests/fixtures/names` (1659), screenshot then photo: a view in Netron's names mode whose
/// titles mostly name no operator.
pub fn names_scenes() -> Vec<FixtureScene> {
    scenes_in(&repo().join("tests/fixtures/names"), [1659])
}

/// The screenshot of `tests/fixtures/toolbar` (view 67 of the lifted-weight set LIFT): a graph filling the window,
/// whose crop takes in Netron's toolbar.
pub fn toolbar_scene() -> FixtureScene {
    scene_in(&repo().join("tests/fixtures/toolbar"), 67, "shot", "png")
}

/// The photo of `tests/fixtures/sidebar` (scene 1019 of `v1-s1`): its crop takes in part of Netron's sidebar.
pub fn sidebar_scene() -> FixtureScene {
    scene_in(&repo().join("tests/fixtures/sidebar"), 1019, "photo", "jpg")
}

/// Scenes `indices` of `dir`, each screenshot then photo. Panics when a file is missing.
fn scenes_in(dir: &Path, indices: impl IntoIterator<Item = usize>) -> Vec<FixtureScene> {
    let mut out = Vec::new();
    for k in indices {
        out.push(scene_in(dir, k, "shot", "png"));
        out.push(scene_in(dir, k, "photo", "jpg"));
    }
    out
}

/// Scene `k` of `dir` of one kind. Panics when a file is missing.
fn scene_in(dir: &Path, k: usize, kind: &'static str, ext: &str) -> FixtureScene {
    let name = format!("{k:06}.{kind}");
    let scene = FixtureScene {
        image_path: dir.join(format!("{name}.{ext}")),
        truth_path: dir.join(format!("{name}.json")),
        name,
        kind,
    };
    assert!(
        scene.image_path.is_file() && scene.truth_path.is_file(),
        "missing fixture {}",
        scene.name
    );
    scene
}

/// Asserts that a detector plan runs the FPN's three ×2 upsamplings (transposed convolutions of ones in the file)
/// as tract's `NearestUpsample`, with no deconvolution left (`models::upsample_copying_deconvs`).
pub fn assert_upsamplings_are_nearest(plan: &TypedRunnableModel, what: &str) {
    let ops: Vec<String> = plan
        .model()
        .nodes()
        .iter()
        .map(|n| n.op.name().to_string())
        .collect();
    let upsamplings = ops.iter().filter(|o| *o == "NearestUpsample").count();
    assert_eq!(upsamplings, 3, "{what}: {ops:?}");
    assert!(!ops.iter().any(|o| o.contains("Deconv")), "{what}: {ops:?}");
}

/// The largest absolute difference between two float tensors of the same shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    let a = a.to_plain_array_view::<f32>().unwrap();
    let b = b.to_plain_array_view::<f32>().unwrap();
    a.iter()
        .zip(b.iter())
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f32::max)
}

/// The committed ONNX model run by tract-onnx on `x`, outputs in `kind.output_names()` order.
pub fn onnx_outputs(kind: ModelKind, x: &Tensor) -> Vec<Tensor> {
    let stem = kind.name();
    let model = tract_onnx::onnx()
        .model_for_path(models_dir().join(format!("{stem}.onnx")))
        .unwrap()
        .with_input_fact(0, f32::fact(x.shape()).into())
        .unwrap()
        .into_optimized()
        .unwrap();
    let names: Vec<String> = model
        .output_outlets()
        .unwrap()
        .iter()
        .map(|o| model.outlet_label(*o).unwrap().to_owned())
        .collect();
    let out = model
        .into_runnable()
        .unwrap()
        .run(tvec!(x.clone().into()))
        .unwrap();
    kind.output_names()
        .iter()
        .map(|want| {
            let i = names.iter().position(|n| n == want).unwrap();
            out[i].clone().into_tensor()
        })
        .collect()
}
