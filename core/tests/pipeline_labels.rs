//! Tensor-label boxes the OCR reads as noise are dropped (`ScanParams::min_label_confidence`), on the committed
//! fixture scenes (`tests/fixtures/scenes`); labels away from the graph that no edge carries are dropped
//! (`ScanParams::far_uncarried_labels`, `tests/fixtures/sidebar`).

mod fixture_support;

use netron_ocr_core::graph::{BBox, GraphJson};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

fn scanner(models: &ModelSet, min_label_confidence: f32) -> Scanner {
    let params = ScanParams {
        min_label_confidence,
        ..ScanParams::default()
    };
    Scanner::with_params(models, params).expect("scanner")
}

fn label_boxes(g: &GraphJson) -> Vec<BBox> {
    g.tensors.iter().map(|t| t.bbox).collect()
}

#[test]
fn only_unsure_labels_that_are_no_shape_are_dropped() {
    let models = ModelSet::bundled().expect("bundled models load");
    let (keep_all, strict, default) = (
        scanner(&models, 0.0),
        // No reading is this sure: every label that does not read as a shape goes.
        scanner(&models, 1.5),
        scanner(&models, ScanParams::default().min_label_confidence),
    );
    let mut dropped_strict = 0;
    for scene in fixture_support::scenes() {
        let scan = |s: &Scanner| s.scan_file(&scene.image_path).expect("scan succeeds").graph;
        let (all, few, d) = (scan(&keep_all), scan(&strict), scan(&default));
        let all_boxes = label_boxes(&all);
        for g in [&few, &d] {
            // The filter removes labels and nothing else.
            assert_eq!(g.nodes, all.nodes, "{}", scene.name);
            assert_eq!(g.inputs, all.inputs, "{}", scene.name);
            assert_eq!(g.outputs, all.outputs, "{}", scene.name);
            for b in label_boxes(g) {
                assert!(
                    all_boxes.contains(&b),
                    "{}: a label appeared: {b:?}",
                    scene.name
                );
            }
            assert!(g.check().is_empty(), "{:?}", g.check());
        }
        assert!(few.tensors.len() <= d.tensors.len() && d.tensors.len() <= all.tensors.len());
        // What the strict scanner keeps reads as a shape with at least two dims.
        for t in &few.tensors {
            assert!(
                t.text.contains('×') && t.shape.is_some(),
                "{}: {:?}",
                scene.name,
                t.text
            );
        }
        dropped_strict += all.tensors.len() - few.tensors.len();
    }
    // Single-dim labels (`64`) and names read as no shape: the strict threshold must have had something to drop.
    assert!(dropped_strict > 0);
}

#[test]
fn labels_away_from_the_graph_that_no_edge_carries_are_dropped() {
    let models = ModelSet::bundled().expect("bundled models load");
    let scene = fixture_support::sidebar_scene();
    let truth = scene.truth();
    let scan = |far: Option<f32>, min_column: usize| {
        let params = ScanParams {
            far_uncarried_labels: far,
            far_uncarried_min_column: min_column,
            ..ScanParams::default()
        };
        let scanner = Scanner::with_params(&models, params).expect("scanner");
        scanner.scan_file(&scene.image_path).expect("scan").graph
    };
    // The rule is on by default at the 1.0 title heights it was measured at, where two such labels or more stand
    // in a column; the sidebar's words do.
    let defaults = ScanParams::default();
    assert_eq!(defaults.far_uncarried_labels, Some(1.0));
    assert_eq!(defaults.far_uncarried_min_column, 2);
    let (kept, dropped) = (scan(None, 0), scan(Some(1.0), 0));
    assert_eq!(
        label_boxes(&scan(Some(1.0), defaults.far_uncarried_min_column)),
        label_boxes(&dropped)
    );
    let is_true = |b: &BBox| truth.tensors.iter().any(|t| t.bbox.iou(b) >= 0.5);
    let after = label_boxes(&dropped);
    let gone: Vec<&str> = (kept.tensors.iter())
        .filter(|t| !after.contains(&t.bbox))
        .map(|t| t.text.as_str())
        .collect();
    // The sidebar's words go, and no true label with them; the rest of the graph stays.
    assert!(gone.len() >= 5, "{gone:?}");
    for t in kept.tensors.iter().filter(|t| !after.contains(&t.bbox)) {
        assert!(!is_true(&t.bbox), "{t:?} is a true label");
        assert!(!kept
            .edges
            .iter()
            .any(|e| e.tensor.as_deref() == Some(t.id.as_str())));
    }
    assert_eq!(after.len() + gone.len(), kept.tensors.len());
    // Where fewer of them stand in a column than the minimum, the rule drops none of them; here all of them do.
    let fewer = scan(Some(1.0), gone.len() + 1);
    assert_eq!(label_boxes(&fewer), label_boxes(&kept));
    assert_eq!(label_boxes(&scan(Some(1.0), gone.len())), after);
    assert_eq!(dropped.nodes, kept.nodes);
    assert_eq!(dropped.edges.len(), kept.edges.len());
    assert!(dropped.check().is_empty(), "{:?}", dropped.check());
}
