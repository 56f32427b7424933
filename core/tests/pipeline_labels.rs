//! Tensor-label boxes the OCR reads as noise are dropped (`ScanParams::min_label_confidence`), on the committed
//! fixture scenes (`tests/fixtures/scenes`).

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
