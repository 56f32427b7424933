//! The scan's confidence calibration by text height (`ScanParams::calibration`, `netron_ocr_core::calibrate`)
//! on the committed fixture scenes: it changes confidences and marks and nothing else, and the calibrated
//! confidences of the tensor labels are nearer the share of them read exactly than the models' own; on the
//! same scenes seen from far away (text of 1–3 px), the operators it still gives are not reported surer than
//! they are right.

mod fixture_support;

use image::imageops::{self, FilterType};
use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::eval::{evaluate, Metrics};
use netron_ocr_core::graph::GraphJson;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

#[test]
fn calibration_changes_confidences_and_marks_only_and_brings_label_confidence_to_accuracy() {
    let models = ModelSet::bundled().expect("bundled models load");
    let params = ScanParams::default();
    let cal = params.calibration;
    let (op_cal, label_cal, port_cal) = (
        cal.op.expect("op calibration on by default"),
        cal.label.expect("label calibration on by default"),
        cal.port.expect("port calibration on by default"),
    );
    let min_op = params.classify.min_confidence;
    let calibrated = Scanner::with_params(&models, params).expect("scanner");
    let raw = Scanner::with_params(
        &models,
        ScanParams {
            calibration: CalibrationParams::none(),
            ..ScanParams::default()
        },
    )
    .expect("scanner");
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5;
    let (mut raw_metrics, mut cal_metrics) = (Metrics::default(), Metrics::default());
    let mut marked = 0;
    for scene in fixture_support::scenes()
        .into_iter()
        .chain(fixture_support::dense_scenes())
    {
        let image = &scene.name;
        let g = calibrated.scan_file(&scene.image_path).expect("scan").graph;
        let r = raw.scan_file(&scene.image_path).expect("scan").graph;
        assert!(g.check().is_empty(), "{image}: {:?}", g.check());
        assert_eq!(g.nodes.len(), r.nodes.len(), "{image}");
        assert_eq!(g.edges, r.edges, "{image}");
        for (a, b) in g.nodes.iter().zip(&r.nodes) {
            assert_eq!(
                (a.bbox, a.title_box, &a.weights),
                (b.bbox, b.title_box, &b.weights)
            );
            let title = b.title_box.expect("scanned nodes have a title box");
            let want = op_cal.apply(b.op_confidence, title.height());
            assert!(close(a.op_confidence, want), "{image} {}", a.id);
            if want < min_op {
                assert_eq!(a.op, None, "{image} {}", a.id);
                marked += usize::from(b.op.is_some());
            } else {
                assert_eq!(a.op, b.op, "{image} {}", a.id);
            }
        }
        assert_eq!(g.tensors.len(), r.tensors.len(), "{image}");
        for (a, b) in g.tensors.iter().zip(&r.tensors) {
            assert_eq!((&a.text, &a.shape, a.bbox), (&b.text, &b.shape, b.bbox));
            let want = label_cal.apply(b.confidence, b.bbox.height());
            assert!(close(a.confidence, want), "{image} {}", a.id);
        }
        for (a, b) in g
            .inputs
            .iter()
            .chain(&g.outputs)
            .zip(r.inputs.iter().chain(&r.outputs))
        {
            assert_eq!((&a.name, a.bbox), (&b.name, b.bbox));
            let want = port_cal.apply(b.confidence, b.bbox.height());
            assert!(close(a.confidence, want), "{image} {}", a.id);
        }
        let truth = scene.truth();
        raw_metrics.add(&evaluate(&r, &truth));
        cal_metrics.add(&evaluate(&g, &truth));
    }
    let (before, after) = (
        raw_metrics.shape_reliability.overconfidence(),
        cal_metrics.shape_reliability.overconfidence(),
    );
    eprintln!(
        "labels: {} matched, exact {:.3}; mean confidence − accuracy {before:.3} → {after:.3}; ops marked by \
         calibration: {marked}",
        cal_metrics.shape_reliability.total(),
        cal_metrics.shape_exact.value(),
    );
    assert!(cal_metrics.shape_reliability.total() >= 50);
    assert!(after.abs() < before.abs(), "{before} → {after}");
    assert!(after.abs() < 0.15, "{after}");
}

/// `truth` with every coordinate multiplied by `s` (boxes, point lists, the image size; what
/// `models/train/zoom_set.py` does to a truth file).
fn scaled_truth(truth: &GraphJson, s: f64, width: u32, height: u32) -> GraphJson {
    fn walk(v: &mut serde_json::Value, s: f64) {
        let scale = |v: &mut serde_json::Value| {
            if let Some(nums) = v.as_array_mut() {
                for n in nums {
                    *n = (n.as_f64().expect("a coordinate") * s).into();
                }
            }
        };
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    match k.as_str() {
                        "box" | "title_box" | "value_box" => scale(x),
                        "quad" | "title_quad" | "points" => {
                            x.as_array_mut().into_iter().flatten().for_each(scale)
                        }
                        "scene" => {}
                        _ => walk(x, s),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|x| walk(x, s)),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(truth).expect("truth serialises");
    walk(&mut v, s);
    v["image"] = serde_json::json!({"width": width, "height": height});
    serde_json::from_value(v).expect("scaled truth parses")
}

#[test]
fn zoomed_out_views_are_not_reported_surer_than_they_are_right() {
    let models = ModelSet::bundled().expect("bundled models load");
    let scanner = Scanner::with_params(&models, ScanParams::default()).expect("scanner");
    let mut sum = Metrics::default();
    for scene in fixture_support::scenes()
        .into_iter()
        .chain(fixture_support::dense_scenes())
    {
        let image = scene.image();
        let (w, h) = image.dimensions();
        let nw = ((f64::from(w) * 0.15).round() as u32).max(1);
        let nh = ((f64::from(h) * 0.15).round() as u32).max(1);
        let small = imageops::resize(&image, nw, nh, FilterType::Triangle);
        let truth = scaled_truth(&scene.truth(), f64::from(nw) / f64::from(w), nw, nh);
        let r = scanner.scan_rgb(&small).expect("scan");
        assert!(
            r.graph.check().is_empty(),
            "{}: {:?}",
            scene.name,
            r.graph.check()
        );
        sum.add(&evaluate(&r.graph, &truth));
    }
    let ops = &sum.op_reliability;
    eprintln!(
        "views at 0.15 of their size: {} matched nodes, {} given an operator, {:.3} of those right; mean \
         confidence − accuracy {:.3}, ECE {:.3}",
        sum.op_accuracy.total,
        ops.total(),
        ops.hit.iter().sum::<usize>() as f64 / ops.total().max(1) as f64,
        ops.overconfidence(),
        ops.ece()
    );
    assert!(ops.total() >= 30, "{} operators given", ops.total());
    assert!(ops.overconfidence() < 0.08, "{}", ops.overconfidence());
}
