//! `GraphJson::check`: semantic validation beyond the schema.

use std::path::Path;

use netron_ocr_core::graph::{
    BBox, Dim, ElementKind, GraphError, GraphIssue, GraphJson, IssueKind, Point,
};

fn minimal() -> GraphJson {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/graphs/minimal.json");
    GraphJson::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn paths(issues: &[GraphIssue]) -> Vec<&str> {
    issues.iter().map(|i| i.path.as_str()).collect()
}

#[test]
fn minimal_graph_is_clean_and_ids_resolve() {
    let g = minimal();
    assert_eq!(g.check(), vec![]);
    assert_eq!(g.kind_of("n0"), Some(ElementKind::Node));
    assert_eq!(g.kind_of("i0"), Some(ElementKind::Input));
    assert_eq!(g.kind_of("o0"), Some(ElementKind::Output));
    assert_eq!(g.kind_of("t0"), Some(ElementKind::Tensor));
    assert_eq!(g.kind_of("n1"), None);
}

#[test]
fn header_values_and_image_size() {
    let mut g = minimal();
    g.format = "other".into();
    g.version = 2;
    g.image.height = 0;
    let issues = g.check();
    assert_eq!(paths(&issues), ["/format", "/version", "/image"]);
    assert_eq!(issues[1].kind, IssueKind::WrongVersion { found: 2 });
    assert_eq!(
        issues[2].kind,
        IssueKind::EmptyImage {
            width: 640,
            height: 0
        }
    );
}

#[test]
fn non_finite_values_are_reported() {
    let mut g = minimal();
    g.nodes[0].bbox.x1 = f32::INFINITY;
    g.nodes[0].quad = Some([Point::new(0.0, f32::NAN); 4]);
    g.inputs[0].confidence = f32::NAN;
    g.edges[0].points = Some(vec![
        Point::new(1.0, 1.0),
        Point::new(f32::NEG_INFINITY, 2.0),
    ]);
    let issues = g.check();
    assert_eq!(
        paths(&issues),
        [
            "/nodes/0/box",
            "/nodes/0/quad/0",
            "/nodes/0/quad/1",
            "/nodes/0/quad/2",
            "/nodes/0/quad/3",
            "/inputs/0/confidence",
            "/edges/0/points/1",
        ]
    );
    assert_eq!(issues[0].kind, IssueKind::NonFinite);
    assert!(matches!(issues[5].kind, IssueKind::ConfidenceOutOfRange(v) if v.is_nan()));
}

#[test]
fn a_number_beyond_f32_range_is_a_reader_error() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/graphs/minimal.json");
    let text = std::fs::read_to_string(path).unwrap().replacen(
        "[100.0, 20.0, 300.0, 260.0]",
        "[100.0, 20.0, 1e39, 260.0]",
        1,
    );
    let err = GraphJson::from_json(&text).unwrap_err();
    assert!(matches!(err, GraphError::Schema(_)), "{err:?}");
    assert!(err.to_string().contains("out of range"), "{err}");
}

#[test]
fn every_box_and_confidence_is_checked() {
    let mut g = minimal();
    let bad = BBox::new(5.0, 5.0, 4.0, 6.0);
    g.canvas.confidence = -0.01;
    g.nodes[0].op_confidence = 1.01;
    g.nodes[0].title_box = Some(bad);
    g.nodes[0].weights.push(netron_ocr_core::graph::Weight {
        name: "W".into(),
        shape: Some(vec![Dim::Int(3), Dim::Sym(String::new())]),
        text: "3×".into(),
        bbox: Some(bad),
    });
    g.outputs[0].bbox = bad;
    g.tensors[0].confidence = 2.0;
    let issues = g.check();
    assert_eq!(
        paths(&issues),
        [
            "/canvas/confidence",
            "/nodes/0/op_confidence",
            "/nodes/0/weights/0/shape/1",
            "/nodes/0/weights/0/box",
            "/nodes/0/title_box",
            "/outputs/0/box",
            "/tensors/0/confidence",
        ]
    );
    assert_eq!(issues[2].kind, IssueKind::EmptyText { what: "dim" });
    assert_eq!(
        issues[3].kind,
        IssueKind::UnorderedBox([5.0, 5.0, 4.0, 6.0])
    );
    // Boundaries are legal.
    let mut g = minimal();
    g.canvas.confidence = 0.0;
    g.nodes[0].confidence = 1.0;
    g.nodes[0].bbox = BBox::new(3.0, 3.0, 3.0, 3.0);
    assert_eq!(g.check(), vec![]);
}

#[test]
fn ids_must_be_non_empty_and_unique_across_kinds() {
    let mut g = minimal();
    g.inputs[0].id = String::new();
    g.outputs[0].id = "t0".into();
    g.nodes[0].op = Some(String::new());
    let issues = g.check();
    assert_eq!(
        paths(&issues),
        [
            "/inputs/0/id",
            "/tensors/0/id",
            "/nodes/0/op",
            "/edges/0/from",
            "/edges/0/tensor",
            "/edges/1/to",
        ]
    );
    assert_eq!(issues[0].kind, IssueKind::EmptyId);
    // Ids are registered nodes, inputs, outputs, tensors in that order: the output claims "t0" first.
    assert_eq!(
        issues[1].kind,
        IssueKind::DuplicateId {
            id: "t0".into(),
            first: "/outputs/0/id".into()
        }
    );
    assert_eq!(issues[2].kind, IssueKind::EmptyText { what: "op" });
    // "i0" and "o0" are gone, and "t0" now names the output.
    assert_eq!(issues[3].kind, IssueKind::UnknownId { id: "i0".into() });
    assert_eq!(
        issues[4].kind,
        IssueKind::WrongKind {
            id: "t0".into(),
            found: ElementKind::Output,
            expected: "a tensor"
        }
    );
    assert_eq!(issues[5].kind, IssueKind::UnknownId { id: "o0".into() });
}

#[test]
fn edge_endpoint_kinds() {
    let mut g = minimal();
    g.edges[0].from = "t0".into(); // a tensor cannot be a source
    g.edges[0].to = "i0".into(); // an input cannot be a target
    g.edges[1].tensor = Some("o0".into());
    let issues = g.check();
    assert_eq!(
        paths(&issues),
        ["/edges/0/from", "/edges/0/to", "/edges/1/tensor"]
    );
    assert_eq!(
        issues[0].kind,
        IssueKind::WrongKind {
            id: "t0".into(),
            found: ElementKind::Tensor,
            expected: "a node or input"
        }
    );
    assert_eq!(
        issues[1].to_string(),
        "/edges/0/to: id \"i0\" is an input, expected a node or output"
    );
    // Node to node and input straight to output are both legal.
    let mut g = minimal();
    g.edges[1].from = "i0".into();
    g.edges[0].to = "n0".into();
    assert_eq!(g.check(), vec![]);
}

#[test]
fn scene_must_be_an_object() {
    let mut g = minimal();
    g.scene = Some(serde_json::json!([1, 2]));
    assert_eq!(paths(&g.check()), ["/scene"]);
    g.scene = Some(serde_json::json!({"seed": 1}));
    assert_eq!(g.check(), vec![]);
}
