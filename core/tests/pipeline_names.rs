//! Node cards whose title names no operator (`ScanParams::name_titles_min_reading`), on the committed names-mode
//! fixture (`tests/fixtures/names`): such cards fall back on their header's category, which changes operators and
//! their confidences and nothing else, and leaves fewer wrong operators than the classifier's guesses.

mod fixture_support;

use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::eval::evaluate;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};
use netron_ocr_core::vocab::Vocab;

/// Without the confidence calibration, so that a node's confidence is the prediction's own.
fn scanner(models: &ModelSet, name_titles_min_reading: Option<f32>) -> Scanner {
    let params = ScanParams {
        name_titles_min_reading,
        calibration: CalibrationParams::none(),
        ..ScanParams::default()
    };
    Scanner::with_params(models, params).expect("scanner")
}

#[test]
fn titles_naming_no_operator_fall_back_on_the_header_category_and_guess_less() {
    let models = ModelSet::bundled().expect("bundled models load");
    let vocab = Vocab::bundled().expect("vocabulary");
    let share = vocab.within_category();
    let (off, on) = (
        scanner(&models, None),
        scanner(&models, ScanParams::default().name_titles_min_reading),
    );
    let (mut changed, mut wrong_off, mut wrong_on) = (0, 0, 0);
    for scene in fixture_support::names_scenes() {
        let before = off.scan_file(&scene.image_path).expect("scan").graph;
        let after = on.scan_file(&scene.image_path).expect("scan").graph;
        assert_eq!(before.nodes.len(), after.nodes.len(), "{}", scene.name);
        for (a, b) in before.nodes.iter().zip(&after.nodes) {
            // Only the operator and its confidence may change.
            let mut b_as_a = b.clone();
            b_as_a.op = a.op.clone();
            b_as_a.op_confidence = a.op_confidence;
            assert_eq!(&b_as_a, a, "{}", scene.name);
            if (a.op.as_deref(), a.op_confidence) == (b.op.as_deref(), b.op_confidence) {
                continue;
            }
            changed += 1;
            // The fallback never names an operator more surely than its share of its category.
            let conf = b.op_confidence;
            let most = share.iter().copied().fold(0.0f32, f32::max);
            assert!(conf <= most + 1e-6, "{}: {conf}", scene.name);
            if let Some(op) = b.op.as_deref() {
                let i = vocab.index_of(op).expect("a vocabulary op");
                assert!(conf <= share[i] + 1e-6, "{}: {op} at {conf}", scene.name);
            }
        }
        assert_eq!(before.edges, after.edges, "{}", scene.name);
        assert_eq!(before.tensors, after.tensors, "{}", scene.name);
        let truth = scene.truth();
        let wrong = |g| {
            let m = evaluate(g, &truth);
            m.op_accuracy.total - m.op_accuracy.hit - m.op_marked.hit
        };
        wrong_off += wrong(&before);
        wrong_on += wrong(&after);
    }
    assert!(changed >= 2, "the rule changed {changed} nodes");
    assert!(
        wrong_on < wrong_off,
        "wrong operators {wrong_off} without the rule, {wrong_on} with it"
    );
}
