//! The detector on inputs trimmed to the letterboxed content (issue #6): plans per input shape, shape checks,
//! threads, and agreement with the 512 × 512 input it replaced.

use std::sync::Arc;

use netron_ocr_core::detect::{self, DetectDebug, DetectParams, Detection, Detector, Letterbox};
use netron_ocr_core::frame;
use netron_ocr_core::models::{Model, ModelKind, ModelSet, HW_MULTIPLE, MAX_SHAPE_PLANS};
use netron_ocr_core::ScanError;
use tract_onnx::prelude::*;

mod fixture_support;

fn detector_model() -> Model {
    fixture_support::model(ModelKind::Detector)
}

/// A deterministic input `[1, 3, h, w]`, values in [-2, 2].
fn input(h: usize, w: usize, seed: usize) -> Tensor {
    let data: Vec<f32> = (0..3 * h * w)
        .map(|i| ((i * 7919 + seed * 104_729) % 401) as f32 / 100.0 - 2.0)
        .collect();
    Tensor::from_shape(&[1, 3, h, w], &data).unwrap()
}

fn shapes(outputs: &[Tensor]) -> Vec<Vec<usize>> {
    outputs.iter().map(|t| t.shape().to_vec()).collect()
}

/// The largest absolute difference between the elements of two runs' outputs (same shapes, float).
fn max_abs_difference(a: &[Tensor], b: &[Tensor]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(a, b)| fixture_support::max_abs_diff(a, b))
        .fold(0.0, f32::max)
}

#[test]
fn outputs_follow_the_input_size() {
    let det = detector_model();
    for (h, w) in [(512, 512), (64, 512), (320, 512), (512, 384), (512, 32)] {
        let out = det.run_any_size(input(h, w, 0)).unwrap();
        assert_eq!(
            shapes(&out),
            [
                vec![1, 4, h / 4, w / 4],
                vec![1, 2, h / 4, w / 4],
                vec![1, 2, h / 4, w / 4]
            ],
            "{h}x{w}"
        );
    }
    // The nominal size runs on the load-time plan, the same one `run` uses, and is not cached again.
    let x = input(512, 512, 1);
    let a = det.run_any_size(x.clone()).unwrap();
    let b = det.run(x).unwrap();
    assert_eq!(a, b);
    assert!(!det.cached_shapes().contains(&(512, 512)));
    assert!(Arc::ptr_eq(&det.plan_for(512, 512).unwrap(), det.plan()));
}

#[test]
fn bad_shapes_are_typed_errors() {
    let set = ModelSet::bundled().unwrap();
    let det = &set.detector;
    for shape in [
        vec![1usize, 3, 100, 512],
        vec![1, 3, 512, 100],
        vec![1, 3, 544, 512],
        vec![1, 3, 0, 512],
        vec![2, 3, 512, 512],
        vec![1, 1, 512, 512],
        vec![1, 3, 512],
        vec![],
    ] {
        let x = Tensor::zero::<f32>(&shape).unwrap();
        match det.run_any_size(x) {
            Err(ScanError::Inference { stage, .. }) => assert_eq!(stage, "detector", "{shape:?}"),
            other => panic!("{shape:?}: {other:?}"),
        }
    }
    assert!(det.plan_for(0, 512).is_err());
    assert!(det.plan_for(512, 512 + HW_MULTIPLE).is_err());
    // The fixed-size models have no per-shape plans.
    assert!(set.cropper.plan_for(256, 512).is_err());
    assert!(set
        .classifier
        .run_any_size(Tensor::zero::<f32>(&[1, 3, 96, 160]).unwrap())
        .is_err());
    // `run` keeps its fixed 512 × 512 contract.
    assert!(det.run(input(320, 512, 0)).is_err());
}

#[test]
fn plans_are_cached_and_capped_least_recently_used_first() {
    let det = detector_model();
    let shapes: Vec<(usize, usize)> = (1..=MAX_SHAPE_PLANS + 2).map(|k| (32 * k, 512)).collect();
    for &(h, w) in &shapes[..MAX_SHAPE_PLANS] {
        det.plan_for(h, w).unwrap();
    }
    assert_eq!(det.cached_shapes(), shapes[..MAX_SHAPE_PLANS].to_vec());
    // A hit returns the same plan and makes it the most recent.
    let first = det.plan_for(shapes[0].0, shapes[0].1).unwrap();
    assert!(Arc::ptr_eq(
        &first,
        &det.plan_for(shapes[0].0, shapes[0].1).unwrap()
    ));
    for &(h, w) in &shapes[MAX_SHAPE_PLANS..] {
        det.plan_for(h, w).unwrap();
    }
    let cached = det.cached_shapes();
    assert_eq!(cached.len(), MAX_SHAPE_PLANS);
    assert!(
        cached.contains(&shapes[0]),
        "recently used kept: {cached:?}"
    );
    assert!(!cached.contains(&shapes[1]) && !cached.contains(&shapes[2]));
    // Clones share the cache.
    assert_eq!(det.clone().cached_shapes(), cached);
}

#[test]
fn threads_share_the_plans() {
    let det = detector_model();
    let jobs: Vec<(usize, usize, usize)> = (0..8)
        .map(|k| [(320, 512), (512, 384), (128, 512)][k % 3])
        .enumerate()
        .map(|(k, (h, w))| (h, w, k))
        .collect();
    let reference: Vec<Vec<Tensor>> = jobs
        .iter()
        .map(|&(h, w, k)| det.run_any_size(input(h, w, k)).unwrap())
        .collect();
    // A fresh model, so the threads also race to build the plans.
    let det = Arc::new(detector_model());
    let handles: Vec<_> = jobs
        .iter()
        .map(|&(h, w, k)| {
            let det = Arc::clone(&det);
            std::thread::spawn(move || det.run_any_size(input(h, w, k)))
        })
        .collect();
    for (k, h) in handles.into_iter().enumerate() {
        let got = h.join().expect("no panic").expect("runs");
        assert_eq!(got, reference[k], "job {k}");
    }
    let mut cached = det.cached_shapes();
    cached.sort_unstable();
    assert_eq!(cached, [(128, 512), (320, 512), (512, 384)]);
}

/// Far from the trimmed edge the trimmed input gives the 512 × 512 input's heatmap. The network's receptive field
/// is wide (dilated stride-32 layers), so the change fades over ~50 cells: measured on this tile, max |Δp| 0.32
/// within 10 cells of the content edge, 0.013 at 32–40 cells from the input edge, 0.003 beyond 48.
#[test]
fn trimmed_heatmap_matches_the_square_one_far_from_the_edge() {
    let det = detector_model();
    let image = frame::decode_file(&fixture_support::scenes_dir().join("000001.shot.png")).unwrap();
    let (w, h) = (image.width() as f64, image.height() as f64);
    // A landscape tile: content 512 × ~300.
    let lb = Letterbox::for_crop([0.0, h * 0.2, w, h * 0.2 + w * 0.58]);
    assert!(lb.input_h < 512 && lb.input_w == 512, "{lb:?}");
    let run = |lb: &Letterbox| {
        let out = det
            .run_any_size(detect::preprocess_letterbox(&image, lb).unwrap())
            .unwrap();
        out[0]
            .to_plain_array_view::<f32>()
            .unwrap()
            .mapv(|v| 1.0 / (1.0 + (-v).exp()))
    };
    let (trimmed, square) = (run(&lb), run(&lb.padded_to_max()));
    let rows = lb.input_h / 4;
    assert_eq!(trimmed.shape(), [1, 4, rows, 128]);
    // Cells at least 48 cells (192 input px) above the trimmed input's edge.
    let far = rows - 48;
    let mut worst = 0f32;
    for c in 0..4 {
        for j in 0..far {
            for i in 0..128 {
                worst = worst.max((trimmed[[0, c, j, i]] - square[[0, c, j, i]]).abs());
            }
        }
    }
    println!("max |Δ sigmoid(heatmap)| on rows < {far} of {rows}: {worst:.2e}");
    assert!(worst < 0.01, "{worst}");
}

/// One fixture scene run by the default detector and by a variant, on the truth canvas padded by 4%.
struct FixtureRuns {
    scene: String,
    default: Vec<Detection>,
    debug: DetectDebug,
    variant: Vec<Detection>,
}

/// [`FixtureRuns`] of every fixture scene, the variant with `params`.
fn default_and_variant_on_fixtures(params: DetectParams) -> Vec<FixtureRuns> {
    let model = detector_model();
    let default = Detector::new(&model).unwrap();
    let variant = Detector::with_params(&model, params).unwrap();
    fixture_support::scenes()
        .into_iter()
        .map(|scene| {
            let image = scene.image();
            let crop = scene.truth().padded_canvas(0.04);
            let (detections, debug) = default.run_debug(&image, crop).unwrap();
            FixtureRuns {
                default: detections,
                debug,
                variant: variant.run(&image, crop).unwrap(),
                scene: scene.name,
            }
        })
        .collect()
}

/// On every fixture scene, the trimmed detector finds what the 512 × 512 one found.
#[test]
fn trimmed_detections_agree_with_the_square_input() {
    let square = DetectParams {
        pad_to_max: true,
        ..DetectParams::default()
    };
    let (mut total, mut matched, mut extra) = (0usize, 0usize, 0usize);
    for FixtureRuns {
        default: a,
        debug: dbg,
        variant: b,
        ..
    } in default_and_variant_on_fixtures(square)
    {
        assert!(dbg
            .tiles
            .iter()
            .all(|t| t.letterbox.input_w % 32 == 0 && t.letterbox.input_h % 32 == 0));
        let found = |xs: &[Detection], d: &Detection| {
            xs.iter()
                .any(|x| x.class == d.class && x.bbox.iou(&d.bbox) >= 0.5)
        };
        total += b.len();
        matched += b.iter().filter(|d| found(&a, d)).count();
        extra += a.iter().filter(|d| !found(&b, d)).count();
    }
    println!(
        "square detections {total}: {matched} found by the trimmed input, {extra} trimmed-only"
    );
    assert!(total > 100);
    assert!(matched as f64 >= 0.97 * total as f64, "{matched}/{total}");
    assert!(extra as f64 <= 0.03 * total as f64, "{extra}/{total}");
}

/// The FPN's ×2 upsamplings, transposed convolutions of ones in `detector.onnx`, run as tract's nearest
/// upsampling in the library's plans (`models::upsample_copying_deconvs`), with the same outputs, bit for bit, as
/// tract's own plan of the file on x86-64. On arm64, where the library's other rewrites change the rounding
/// (`models::unstride_depthwise_columns`), within 1e-4.
#[test]
fn upsampling_deconvolutions_run_as_nearest_upsampling() {
    let det = detector_model();
    for (h, w) in [(512, 512), (352, 512), (512, 160)] {
        fixture_support::assert_upsamplings_are_nearest(
            &det.plan_for(h, w).unwrap(),
            &format!("{h}x{w}"),
        );

        let x = input(h, w, 2);
        let plain = fixture_support::onnx_outputs(ModelKind::Detector, &x);
        let ours = det.run_any_size(x).unwrap();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(ours, plain, "{h}x{w}");
            continue;
        }
        assert_eq!(shapes(&ours), shapes(&plain), "{h}x{w}");
        let worst = max_abs_difference(&ours, &plain);
        println!("{h}x{w}: max abs difference {worst:e}");
        assert!(worst <= 1e-4, "{h}x{w}: {worst}");
    }
}

/// The detector run through its transposed graph (`Model::run_transposed`, what `DetectParams::transpose_tall`
/// uses for tall tiles) gives the plain run's outputs up to float rounding, at tall, wide and square sizes, and
/// keeps its transposed plans apart from the plain ones.
#[test]
fn transposed_runs_give_the_plain_outputs() {
    let det = detector_model();
    // A transposed run builds no plain plan, neither for its own shape nor for the transposed one. Where tract
    // lays the graph out channels last (arm64), a transposed run is the plain run.
    det.run_transposed(input(512, 288, 3)).unwrap();
    let plain_plans = if det.runs_transposed() {
        vec![]
    } else {
        vec![(512, 288)]
    };
    assert_eq!(det.cached_shapes(), plain_plans);
    #[cfg(target_arch = "x86_64")]
    assert!(det.runs_transposed());
    for (h, w) in [(512, 288), (512, 32), (352, 160), (512, 512), (160, 512)] {
        let x = input(h, w, 3);
        let transposed = det.run_transposed(x.clone()).unwrap();
        let plain = det.run_any_size(x).unwrap();
        assert_eq!(shapes(&transposed), shapes(&plain), "{h}x{w}");
        let worst = max_abs_difference(&plain, &transposed);
        println!("{h}x{w}: max abs difference {worst:e}");
        assert!(worst <= 1e-4, "{h}x{w}: {worst}");
    }
}

#[test]
fn transposed_runs_check_their_input() {
    let set = ModelSet::bundled().unwrap();
    for shape in [
        vec![1usize, 3, 100, 512],
        vec![1, 3, 544, 512],
        vec![1, 1, 512, 288],
        vec![1, 3, 512],
    ] {
        let x = Tensor::zero::<f32>(&shape).unwrap();
        match set.detector.run_transposed(x) {
            Err(ScanError::Inference { stage, .. }) => assert_eq!(stage, "detector", "{shape:?}"),
            other => panic!("{shape:?}: {other:?}"),
        }
    }
    // Only the detector has two variable sides.
    assert!(set
        .ocr
        .run_transposed(Tensor::zero::<f32>(&[1, 1, 48, 160]).unwrap())
        .is_err());
    assert!(set
        .classifier
        .run_transposed(Tensor::zero::<f32>(&[1, 3, 96, 160]).unwrap())
        .is_err());
}

/// Tall tiles (`DetectParams::transpose_tall`, the default) give the detections of the plain runs on the fixture
/// scenes: the same boxes up to float rounding.
#[test]
fn transposed_tall_tiles_give_the_same_detections() {
    let plain = DetectParams {
        transpose_tall: false,
        ..DetectParams::default()
    };
    let (mut tall, mut total, mut same) = (0usize, 0usize, 0usize);
    for FixtureRuns {
        scene,
        default: a,
        debug: dbg,
        variant: b,
    } in default_and_variant_on_fixtures(plain)
    {
        tall += dbg
            .tiles
            .iter()
            .filter(|t| t.letterbox.input_h > t.letterbox.input_w)
            .count();
        total += b.len();
        same += b
            .iter()
            .filter(|d| {
                a.iter().any(|x| {
                    x.class == d.class
                        && x.bbox.iou(&d.bbox) > 0.99
                        && (x.score - d.score).abs() < 1e-3
                })
            })
            .count();
        assert!(
            (a.len() as i64 - b.len() as i64).abs() <= 1,
            "{scene}: {} against {}",
            a.len(),
            b.len()
        );
    }
    println!("tall tiles {tall}; plain detections {total}, {same} the same");
    assert!(
        tall > 0,
        "no tall tile in the fixtures: the test tests nothing"
    );
    assert!(same as f64 >= 0.995 * total as f64, "{same}/{total}");
}
