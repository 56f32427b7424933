//! Node cards whose title names no operator (`ScanParams::name_titles_min_reading`,
//! `ScanParams::names_view_min_titles`), on the committed names-mode fixture (`tests/fixtures/names`): such cards
//! fall back on their header's category, which changes operators and their confidences and nothing else, and
//! leaves fewer wrong operators than the classifier's guesses.

mod fixture_support;

use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::eval::{evaluate, match_boxes};
use netron_ocr_core::graph::Node;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};
use netron_ocr_core::vocab::Vocab;

/// Without the confidence calibration, so that a node's confidence is the prediction's own.
fn scanner(
    models: &ModelSet,
    name_titles_min_reading: Option<f32>,
    names_view_min_titles: Option<usize>,
) -> Scanner {
    let params = ScanParams {
        name_titles_min_reading,
        names_view_min_titles,
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
    let defaults = ScanParams::default();
    let (off, unsure_only, on) = (
        scanner(&models, None, defaults.names_view_min_titles),
        scanner(&models, defaults.name_titles_min_reading, None),
        scanner(
            &models,
            defaults.name_titles_min_reading,
            defaults.names_view_min_titles,
        ),
    );
    let bounded = |op: Option<&str>, conf: f32| {
        // The fallback never names an operator more surely than its share of its category.
        let most = share.iter().copied().fold(0.0f32, f32::max);
        conf <= most + 1e-6
            && op.is_none_or(|o| conf <= share[vocab.index_of(o).expect("a vocabulary op")] + 1e-6)
    };
    let (mut fallbacks, mut view_reads) = (0, 0);
    let (mut wrong_off, mut wrong_unsure_only, mut wrong_on) = (0, 0, 0);
    for scene in fixture_support::names_scenes() {
        let before = off.scan_file(&scene.image_path).expect("scan").graph;
        let partial = unsure_only
            .scan_file(&scene.image_path)
            .expect("scan")
            .graph;
        let after = on.scan_file(&scene.image_path).expect("scan").graph;
        let truth = scene.truth();
        let (to_truth, _) = match_boxes(
            &after
                .nodes
                .iter()
                .map(|n| (n.bbox, n.confidence))
                .collect::<Vec<_>>(),
            &truth.nodes.iter().map(|n| n.bbox).collect::<Vec<_>>(),
            0.5,
        );
        assert_eq!(before.nodes.len(), after.nodes.len(), "{}", scene.name);
        assert_eq!(partial.nodes.len(), after.nodes.len(), "{}", scene.name);
        for (i, ((a, p), b)) in before
            .nodes
            .iter()
            .zip(&partial.nodes)
            .zip(&after.nodes)
            .enumerate()
        {
            // Only the operator and its confidence may change.
            let mut b_as_a = b.clone();
            b_as_a.op = a.op.clone();
            b_as_a.op_confidence = a.op_confidence;
            assert_eq!(&b_as_a, a, "{}", scene.name);
            let key = |n: &Node| (n.op.clone(), n.op_confidence);
            if key(a) != key(p) {
                // A title read because the classifier was unsure, named no operator: the header's category.
                fallbacks += 1;
                assert!(
                    bounded(p.op.as_deref(), p.op_confidence),
                    "{}: {p:?}",
                    scene.name
                );
                assert_eq!(key(p), key(b), "{}: read once", scene.name);
            } else if key(p) != key(b) {
                // A title read because the view is in names mode: the category's fallback, or an operator its
                // name spells out, which must then be right.
                view_reads += 1;
                let right = to_truth[i].is_some_and(|t| truth.nodes[t].op == b.op);
                assert!(
                    bounded(b.op.as_deref(), b.op_confidence) || right,
                    "{}: {b:?}",
                    scene.name
                );
            }
        }
        assert_eq!(before.edges, after.edges, "{}", scene.name);
        assert_eq!(before.tensors, after.tensors, "{}", scene.name);
        let wrong = |g| {
            let m = evaluate(g, &truth);
            m.op_accuracy.total - m.op_accuracy.hit - m.op_marked.hit
        };
        wrong_off += wrong(&before);
        wrong_unsure_only += wrong(&partial);
        wrong_on += wrong(&after);
    }
    assert!(fallbacks >= 2, "the fallback changed {fallbacks} nodes");
    assert!(
        view_reads >= 1,
        "reading the whole view changed {view_reads} nodes"
    );
    assert!(
        wrong_unsure_only < wrong_off && wrong_on <= wrong_unsure_only,
        "wrong operators: {wrong_off} without the rules, {wrong_unsure_only} with the fallback, {wrong_on} \
         reading the whole view"
    );
}
