//! The scan's confidence calibration by text height (`ScanParams::calibration`, `netron_ocr_core::calibrate`)
//! on the committed fixture scenes: it changes confidences and marks and nothing else, and the calibrated
//! confidences of the tensor labels are nearer the share of them read exactly than the models' own.

mod fixture_support;

use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::eval::{evaluate, Metrics};
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
