//! Edge recovery on the committed scene fixtures with their truth (oracle) element and label boxes.
//!
//! Floors measured when written (`cargo run --release -p netron-ocr-core --example edge_eval -- --data
//! tests/fixtures/scenes`): every fixture scored F1 1.0 with all labels right. The floors leave room for one
//! miss a scene, not more.

mod fixture_support;

use std::path::PathBuf;

use netron_ocr_core::assemble::{
    assemble, Detections, LabelDetection, NodeDetection, PortDetection,
};
use netron_ocr_core::edges::{
    recover_edges, EdgeParams, Element, ElementKind, Label, RecoveredEdge,
};
use netron_ocr_core::frame;
use netron_ocr_core::graph::{BBox, Canvas, Direction, GraphJson};

fn fixture(name: &str) -> PathBuf {
    fixture_support::scenes_dir().join(name)
}

fn elements(t: &GraphJson) -> Vec<Element> {
    let nodes = t.nodes.iter().map(|n| Element {
        id: n.id.clone(),
        kind: ElementKind::Node,
        bbox: n.bbox,
    });
    let inputs = t.inputs.iter().map(|p| Element {
        id: p.id.clone(),
        kind: ElementKind::Input,
        bbox: p.bbox,
    });
    let outputs = t.outputs.iter().map(|p| Element {
        id: p.id.clone(),
        kind: ElementKind::Output,
        bbox: p.bbox,
    });
    nodes.chain(inputs).chain(outputs).collect()
}

fn labels(t: &GraphJson) -> Vec<Label> {
    t.tensors
        .iter()
        .map(|l| Label {
            id: l.id.clone(),
            bbox: l.bbox,
        })
        .collect()
}

/// The truth canvas padded like the evaluation does (3 % of the longer side, at least 8 px).
fn region(t: &GraphJson) -> BBox {
    let c = t.canvas.bbox;
    let pad = (0.03 * c.width().max(c.height())).max(8.0);
    BBox::new(c.x0 - pad, c.y0 - pad, c.x1 + pad, c.y1 + pad)
}

/// Truth edges found (by (from, to), each predicted edge used once) and found with the right label.
fn counts(t: &GraphJson, edges: &[RecoveredEdge]) -> (usize, usize) {
    let mut used = vec![false; edges.len()];
    let (mut correct, mut labelled) = (0usize, 0usize);
    for te in &t.edges {
        if let Some(j) =
            (0..edges.len()).find(|&j| !used[j] && edges[j].from == te.from && edges[j].to == te.to)
        {
            used[j] = true;
            correct += 1;
            labelled += usize::from(edges[j].label == te.tensor);
        }
    }
    (correct, labelled)
}

/// F1 over (from, to) pairs: `2 correct / (truth + predicted)`.
fn f1(correct: usize, truth: usize, predicted: usize) -> f64 {
    2.0 * correct as f64 / (truth + predicted).max(1) as f64
}

/// (F1, share of truth edges found with the right label).
fn score(t: &GraphJson, edges: &[RecoveredEdge]) -> (f64, f64) {
    let (correct, labelled) = counts(t, edges);
    (
        f1(correct, t.edges.len(), edges.len()),
        labelled as f64 / t.edges.len().max(1) as f64,
    )
}

fn run(image: &str, truth_name: &str) -> (GraphJson, Vec<RecoveredEdge>) {
    let t = fixture_support::truth(truth_name);
    let img = frame::decode_file(&fixture(image)).expect("fixture image");
    let direction = t.direction.unwrap_or(Direction::Vertical);
    let r = recover_edges(
        &img,
        region(&t),
        &elements(&t),
        &labels(&t),
        direction,
        &EdgeParams::default(),
    )
    .expect("valid input");
    (t, r.edges)
}

#[test]
fn render_000_screenshot() {
    let (t, edges) = run("render_000.png", "render_000.json");
    let (f1, labelled) = score(&t, &edges);
    assert!(f1 >= 0.9, "F1 {f1}");
    assert!(labelled >= 0.9, "labelled {labelled}");
    // The fan-out Relu → {Conv, MaxPool} and its merge into Add are both there.
    for (from, to) in [("n1", "n2"), ("n1", "n3"), ("n2", "n4"), ("n3", "n4")] {
        assert!(
            edges.iter().any(|e| e.from == from && e.to == to),
            "{from} → {to} missing"
        );
    }
}

#[test]
fn photo_fixtures() {
    let (mut truth_edges, mut predicted, mut correct, mut labelled) = (0, 0, 0, 0);
    for k in 0..4 {
        let (t, edges) = run(
            &format!("00000{k}.photo.jpg"),
            &format!("00000{k}.photo.json"),
        );
        let (c, l) = counts(&t, &edges);
        let scene_f1 = f1(c, t.edges.len(), edges.len());
        assert!(scene_f1 >= 0.8, "scene {k}: F1 {scene_f1}");
        truth_edges += t.edges.len();
        predicted += edges.len();
        correct += c;
        labelled += l;
    }
    let pooled = f1(correct, truth_edges, predicted);
    assert!(pooled >= 0.9, "pooled F1 {pooled}");
    let share = labelled as f64 / truth_edges as f64;
    assert!(share >= 0.85, "labelled {share}");
}

#[test]
fn recovered_edges_assemble_into_valid_graph_json() {
    let (t, _) = run("000002.photo.jpg", "000002.photo.json");
    // Detections in truth order, so schema ids line up with the truth ids.
    let detections = Detections {
        nodes: t
            .nodes
            .iter()
            .map(|n| NodeDetection {
                bbox: n.bbox,
                confidence: 0.9,
                op: n.op.clone(),
                op_confidence: 0.8,
                weights: n.weights.clone(),
                truncated: None,
            })
            .collect(),
        inputs: t
            .inputs
            .iter()
            .map(|p| PortDetection {
                bbox: p.bbox,
                confidence: 0.9,
                name: p.name.clone(),
                truncated: None,
            })
            .collect(),
        outputs: t
            .outputs
            .iter()
            .map(|p| PortDetection {
                bbox: p.bbox,
                confidence: 0.9,
                name: p.name.clone(),
                truncated: None,
            })
            .collect(),
        labels: t
            .tensors
            .iter()
            .map(|l| LabelDetection {
                bbox: l.bbox,
                confidence: 0.9,
                text: l.text.clone(),
            })
            .collect(),
    };
    let img = frame::decode_file(&fixture("000002.photo.jpg")).unwrap();
    let r = recover_edges(
        &img,
        region(&t),
        &detections.edge_elements(),
        &detections.edge_labels(),
        Direction::Vertical,
        &EdgeParams::default(),
    )
    .unwrap();
    let g = assemble(
        t.image,
        Canvas {
            bbox: region(&t),
            confidence: 0.9,
        },
        &detections,
        &r.edges,
        t.direction,
    )
    .expect("assembles");
    assert!(g.check().is_empty(), "{:?}", g.check());
    let (f1, labelled) = score(&t, &r.edges);
    assert!(f1 >= 0.8 && labelled >= 0.8, "F1 {f1}, labelled {labelled}");
    // Every edge's tensor is the truth label of that connection.
    for e in &g.edges {
        let te = t
            .edges
            .iter()
            .find(|te| te.from == e.from && te.to == e.to)
            .expect("a truth edge");
        assert_eq!(e.tensor, te.tensor);
    }
    // It round-trips through JSON.
    let back = GraphJson::from_json(&g.to_json().unwrap()).unwrap();
    assert_eq!(back, g);
}
