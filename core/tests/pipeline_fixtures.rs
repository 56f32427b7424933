//! End to end on the committed fixture scenes (`tests/fixtures/scenes/0000*.{photo.jpg,shot.png}` with their
//! truth): every image is scanned with the bundled models and scored with `netron_ocr_core::eval`; the summed
//! metrics must reach the floors below.
//!
//! The floors sit about 10–15% below what the session-2 models (`models/METRICS.md`, 2026-11-30) measured here:
//! crop containment 0.995, node F1 0.969, tensor F1 0.955, input/output F1 0.951, op accuracy 1.000, shape exact
//! 0.863, edge F1 0.947. After each retraining, run
//! `cargo test --release --workspace --test pipeline_fixtures -- --nocapture`, read the printed metrics and move
//! the floors to a little below the new values.

mod fixture_support;

use netron_ocr_core::eval::{self, Metrics, Summary};
use netron_ocr_core::scanner::Scanner;

/// Share of truth element boxes inside the predicted canvas.
const MIN_CROP_CONTAINMENT: f64 = 0.95;
/// Box F1 at IoU ≥ 0.5.
const MIN_NODE_F1: f64 = 0.85;
const MIN_TENSOR_F1: f64 = 0.85;
/// Inputs and outputs together.
const MIN_PORT_F1: f64 = 0.80;
/// Matched nodes with the right op.
const MIN_OP_ACCURACY: f64 = 0.90;
/// Matched tensor labels with the exact shape.
const MIN_SHAPE_EXACT: f64 = 0.75;
const MIN_EDGE_F1: f64 = 0.80;

#[test]
fn fixture_scenes_reach_the_metric_floors() {
    let scanner = Scanner::new().expect("bundled models load");
    let mut total = Metrics::default();
    for scene in fixture_support::scenes() {
        let (image, truth) = (&scene.image_path, scene.truth());
        let result = scanner.scan_file(image).expect("scan succeeds");
        let g = &result.graph;
        // Whatever the models, the output is a valid graph of this image.
        assert!(g.check().is_empty(), "{}: {:?}", image.display(), g.check());
        assert_eq!(g.image, truth.image);
        let c = g.canvas.bbox;
        assert!(
            c.x0 >= 0.0
                && c.y0 >= 0.0
                && c.x1 <= g.image.width as f32
                && c.y1 <= g.image.height as f32
        );
        let m = eval::evaluate(g, &truth);
        let s = Summary::from(&m);
        eprintln!(
            "{}: {} nodes ({} truth), {} tensors ({}), {} edges ({}); crop {:.2} nodeF1 {:.2} tensorF1 {:.2} \
             op {:.2} shape {:.2} edgeF1 {:.2}; {:.0} ms",
            image.file_name().unwrap().to_string_lossy(),
            g.nodes.len(),
            truth.nodes.len(),
            g.tensors.len(),
            truth.tensors.len(),
            g.edges.len(),
            truth.edges.len(),
            s.crop_containment,
            s.node_f1,
            s.tensor_f1,
            s.op_accuracy,
            s.shape_exact,
            s.edge_f1,
            result.timings.total()
        );
        for n in &g.nodes {
            eprintln!(
                "  node score {:.3} op {:?} ({:.3})",
                n.confidence, n.op, n.op_confidence
            );
        }
        total.add(&m);
    }
    let s = Summary::from(&total);
    eprintln!("all fixtures: {s:?}");
    assert_eq!(s.schema_valid, 1.0);
    for (name, got, floor) in [
        ("crop containment", s.crop_containment, MIN_CROP_CONTAINMENT),
        ("node F1", s.node_f1, MIN_NODE_F1),
        ("tensor F1", s.tensor_f1, MIN_TENSOR_F1),
        ("input/output F1", s.port_f1, MIN_PORT_F1),
        ("op accuracy", s.op_accuracy, MIN_OP_ACCURACY),
        ("shape exact match", s.shape_exact, MIN_SHAPE_EXACT),
        ("edge F1", s.edge_f1, MIN_EDGE_F1),
    ] {
        assert!(got >= floor, "{name}: {got:.3} is below the floor {floor}");
    }
}

#[test]
fn truth_scored_against_itself_is_perfect() {
    // The metric code on the real fixture truth: a sanity check that the floors above measure something.
    for scene in fixture_support::scenes() {
        let truth = scene.truth();
        let s = Summary::from(&eval::evaluate(&truth, &truth));
        assert_eq!(s.node_f1, 1.0);
        assert_eq!(s.tensor_f1, 1.0);
        assert_eq!(s.op_accuracy, 1.0);
        assert_eq!(s.shape_exact, 1.0);
        assert_eq!(s.edge_f1, 1.0, "{}", scene.name);
        assert!(s.crop_containment > 0.99);
    }
}
