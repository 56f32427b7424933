//! Pipeline benchmarks (criterion). Every stage and scan runs on one thread (`threads: 1`; tract itself is
//! single-threaded), so these are one-core figures, except `end_to_end/<n>_nodes_<k>_threads`.
//!
//!     CARGO_TARGET_DIR=/root/.cache/netron-ocr/target nice -n 10 cargo bench -p netron-ocr-core --bench pipeline
//!
//! Scenes: from `$NETRON_OCR_BENCH_SCENES` (default `/root/.cache/netron-ocr/data/v1-s1/scenes`), photos of scene
//! index < 1000 whose short side is 1080 px; for each target node count (5, 20, 60) the photo whose truth has the
//! closest node count (ties: first by name). Without that directory, the committed fixture scenes are used (any
//! size). `models/train/bench_ort.py` applies the same rule, so both measure the same images.
//!
//! Groups:
//! - `load`: `ModelSet::bundled()` (hash check, parse, optimize; all four models);
//! - `stage/*` on the ~20-node photo: `crop` (preprocess + model + decode), `detect` (tiles, letterbox, model,
//!   post-processing) on the truth canvas padded by 4%, `classify` on the truth title boxes, `read` on the truth
//!   tensor/input/output boxes — the same work `bench_ort.py` times with onnxruntime;
//! - `end_to_end/<n>_nodes`: `Scanner::scan_rgb` on the 5-, 20- and 60-node photos (decode excluded);
//! - `stage/detect_square`, `end_to_end/20_nodes_square`: the same with every detector tile padded to
//!   512 × 512 (`DetectParams::pad_to_max`, the input before issue #6), to compare with the trimmed default;
//! - `stage/detect_untransposed`, `end_to_end/<n>_nodes_untransposed`: the same as `stage/detect` and
//!   `end_to_end/<n>_nodes` with tall tiles run as they are (`DetectParams::transpose_tall` off, the behaviour
//!   before session 42);
//! - `end_to_end/<n>_nodes_<k>_threads`: the same scans with the default thread count, `k` =
//!   `threads::auto_threads()` (absent on one core): tiles, titles and texts spread over `k` threads.
//!
//! The mean per-stage timings of the end-to-end scans (`StageTimings`, includes quality and assembly) are printed
//! too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use image::RgbImage;
use netron_ocr_core::classify::{Classifier, ClassifyParams};
use netron_ocr_core::crop::Cropper;
use netron_ocr_core::detect::{DetectParams, Detector};
use netron_ocr_core::frame;
use netron_ocr_core::graph::{BBox, GraphJson};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::read::{ReadParams, TextReader};
use netron_ocr_core::scanner::{ScanParams, Scanner, StageTimings};
use netron_ocr_core::threads::auto_threads;

const TARGETS: [usize; 3] = [5, 20, 60];

struct Scene {
    path: PathBuf,
    image: RgbImage,
    truth: GraphJson,
}

fn scenes_dir() -> (PathBuf, bool) {
    let dir = std::env::var_os("NETRON_OCR_BENCH_SCENES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root/.cache/netron-ocr/data/v1-s1/scenes"));
    if dir.is_dir() {
        (dir, true)
    } else {
        (
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scenes"),
            false,
        )
    }
}

/// The bench scenes, one per target node count (see the module doc).
fn pick_scenes() -> Vec<(usize, Scene)> {
    let (dir, dataset) = scenes_dir();
    let mut truths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenes directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".photo.json"))
        .filter(|p| {
            !dataset
                || p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split('.').next())
                    .and_then(|k| k.parse::<usize>().ok())
                    .is_some_and(|k| k < 1000)
        })
        .collect();
    truths.sort();
    let candidates: Vec<(PathBuf, GraphJson)> = truths
        .into_iter()
        .filter_map(|p| {
            let g = GraphJson::from_json(&std::fs::read_to_string(&p).ok()?).ok()?;
            (!dataset || g.image.width.min(g.image.height) == 1080).then_some((p, g))
        })
        .collect();
    TARGETS
        .iter()
        .map(|&target| {
            let (p, g) = candidates
                .iter()
                .min_by_key(|(_, g)| g.nodes.len().abs_diff(target))
                .expect("at least one candidate scene");
            let path = PathBuf::from(p.to_string_lossy().replace(".photo.json", ".photo.jpg"));
            let image = frame::decode_file(&path).expect("bench photo decodes");
            println!(
                "bench scene for {target} nodes: {} ({}x{}, {} nodes, {} tensors)",
                path.display(),
                image.width(),
                image.height(),
                g.nodes.len(),
                g.tensors.len()
            );
            (
                target,
                Scene {
                    path,
                    image,
                    truth: g.clone(),
                },
            )
        })
        .collect()
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

fn benches(c: &mut Criterion) {
    let mut load = c.benchmark_group("load");
    load.sample_size(10);
    load.bench_function("bundled_models", |b| {
        b.iter(|| ModelSet::bundled().unwrap())
    });
    load.finish();

    let models = ModelSet::bundled().unwrap();
    let scenes = pick_scenes();
    let (_, mid) = scenes
        .iter()
        .find(|(t, _)| *t == 20)
        .expect("20-node scene");

    let cropper = Cropper::new(&models.cropper).unwrap();
    let one_thread = DetectParams {
        threads: 1,
        ..DetectParams::default()
    };
    let detector = Detector::with_params(&models.detector, one_thread).unwrap();
    let square = DetectParams {
        pad_to_max: true,
        ..one_thread
    };
    let detector_square = Detector::with_params(&models.detector, square).unwrap();
    let untransposed = DetectParams {
        transpose_tall: false,
        ..one_thread
    };
    let detector_untransposed = Detector::with_params(&models.detector, untransposed).unwrap();
    let classifier = Classifier::new(
        models.classifier.clone(),
        models.vocab.clone(),
        ClassifyParams {
            threads: 1,
            ..ClassifyParams::default()
        },
    );
    let reader = TextReader::new(
        models.ocr.clone(),
        models.alphabet.clone(),
        ReadParams {
            threads: 1,
            ..ReadParams::default()
        },
    );
    let titles: Vec<BBox> = mid.truth.nodes.iter().filter_map(|n| n.title_box).collect();
    let texts: Vec<BBox> = mid
        .truth
        .tensors
        .iter()
        .map(|t| t.bbox)
        .chain(
            mid.truth
                .inputs
                .iter()
                .chain(&mid.truth.outputs)
                .map(|p| p.bbox),
        )
        .collect();
    let crop = mid.truth.padded_canvas(0.04);
    println!(
        "stage inputs ({}): {} title boxes, {} text boxes, crop {:?}",
        mid.path.display(),
        titles.len(),
        texts.len(),
        crop
    );

    let mut stage = c.benchmark_group("stage");
    stage.bench_function("crop", |b| b.iter(|| cropper.run(&mid.image).unwrap()));
    stage.bench_function("detect", |b| {
        b.iter(|| detector.run(&mid.image, crop).unwrap())
    });
    stage.bench_function("detect_untransposed", |b| {
        b.iter(|| detector_untransposed.run(&mid.image, crop).unwrap())
    });
    stage.bench_function("detect_square", |b| {
        b.iter(|| detector_square.run(&mid.image, crop).unwrap())
    });
    stage.bench_function("classify", |b| {
        b.iter(|| classifier.classify(&mid.image, &titles).unwrap())
    });
    let skew = reader.estimate_skew(&mid.image, &crop);
    stage.bench_function("skew", |b| {
        b.iter(|| reader.estimate_skew(&mid.image, &crop))
    });
    stage.bench_function("read", |b| {
        b.iter(|| reader.read(&mid.image, &texts, skew).unwrap())
    });
    stage.finish();

    let mut single = ScanParams::default();
    single.set_threads(1);
    let scanner = Scanner::with_params(&models, single.clone()).unwrap();
    let scanner_square = Scanner::with_params(
        &models,
        ScanParams {
            detect: square,
            ..single.clone()
        },
    )
    .unwrap();
    let scanner_untransposed = Scanner::with_params(
        &models,
        ScanParams {
            detect: DetectParams {
                transpose_tall: false,
                ..single.detect
            },
            ..single.clone()
        },
    )
    .unwrap();
    let threads = auto_threads();
    let scanner_threads = Scanner::with_params(&models, ScanParams::default()).unwrap();
    let mut e2e = c.benchmark_group("end_to_end");
    let runs_of = scenes
        .iter()
        .map(|(t, s)| (format!("{t}_nodes"), s, &scanner))
        .chain(
            scenes
                .iter()
                .filter(|(t, _)| *t == 20)
                .map(|(t, s)| (format!("{t}_nodes_square"), s, &scanner_square)),
        )
        .chain(
            scenes
                .iter()
                .map(|(t, s)| (format!("{t}_nodes_untransposed"), s, &scanner_untransposed)),
        )
        .chain(
            scenes
                .iter()
                .filter(|_| threads > 1)
                .map(|(t, s)| (format!("{t}_nodes_{threads}_threads"), s, &scanner_threads)),
        );
    for (name, scene, scanner) in runs_of {
        let mut sum = StageTimings::default();
        let mut runs = 0.0;
        e2e.bench_function(&name, |b| {
            b.iter(|| {
                let r = scanner.scan_rgb(&scene.image).unwrap();
                let t = r.timings;
                sum.quality += t.quality;
                sum.crop += t.crop;
                sum.detect += t.detect;
                sum.classify += t.classify;
                sum.read += t.read;
                sum.assemble += t.assemble;
                runs += 1.0;
                r
            })
        });
        if runs > 0.0 {
            println!(
                "end_to_end/{name} mean per stage (ms): quality {:.1} crop {:.1} detect {:.1} classify {:.1} \
                 read {:.1} assemble {:.1}",
                sum.quality / runs,
                sum.crop / runs,
                sum.detect / runs,
                sum.classify / runs,
                sum.read / runs,
                sum.assemble / runs
            );
        }
    }
    e2e.finish();
}

criterion_group! {
    name = pipeline;
    config = config();
    targets = benches
}
criterion_main!(pipeline);
