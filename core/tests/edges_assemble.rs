//! Graph assembly: detections + recovered edges → schema-v1 graph JSON.

use netron_ocr_core::assemble::{
    assemble, AssembleError, Detections, LabelDetection, NodeDetection, PortDetection,
};
use netron_ocr_core::edges::{ElementKind, RecoveredEdge, Side};
use netron_ocr_core::graph::{BBox, Canvas, Dim, Direction, GraphJson, ImageSize, Point};

fn detections() -> Detections {
    let node = |y: f32, op: Option<&str>| NodeDetection {
        bbox: BBox::new(100.0, y, 180.0, y + 30.0),
        confidence: 0.95,
        op: op.map(str::to_owned),
        op_confidence: 0.7,
        weights: Vec::new(),
        truncated: None,
    };
    Detections {
        nodes: vec![node(100.0, Some("Conv")), node(200.0, None)],
        inputs: vec![PortDetection {
            bbox: BBox::new(110.0, 20.0, 170.0, 40.0),
            confidence: 0.9,
            name: "data".into(),
            truncated: Some(false),
        }],
        outputs: vec![PortDetection {
            bbox: BBox::new(110.0, 300.0, 170.0, 320.0),
            confidence: 0.9,
            name: "out".into(),
            truncated: None,
        }],
        labels: vec![
            LabelDetection {
                bbox: BBox::new(146.0, 60.0, 200.0, 71.0),
                confidence: 0.8,
                text: "1×3×224×224".into(),
            },
            LabelDetection {
                bbox: BBox::new(146.0, 160.0, 200.0, 171.0),
                confidence: 0.8,
                text: "conv_out".into(),
            },
        ],
    }
}

fn edge(from: &str, to: &str, label: Option<&str>, confidence: f32) -> RecoveredEdge {
    RecoveredEdge {
        from: from.into(),
        to: to.into(),
        label: label.map(str::to_owned),
        confidence,
        points: vec![Point::new(140.0, 40.0), Point::new(140.0, 100.0)],
        from_side: Side::Bottom,
        to_side: Side::Top,
        arrowhead: Some(true),
    }
}

/// Each edge's (from, to).
fn ends(edges: &[RecoveredEdge]) -> Vec<(&str, &str)> {
    edges
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str()))
        .collect()
}

fn canvas() -> Canvas {
    Canvas {
        bbox: BBox::new(90.0, 10.0, 210.0, 330.0),
        confidence: 0.9,
    }
}

const IMAGE: ImageSize = ImageSize {
    width: 400,
    height: 400,
};

#[test]
fn ids_elements_and_edges() {
    let d = detections();
    let ids: Vec<(String, ElementKind)> = d
        .edge_elements()
        .into_iter()
        .map(|e| (e.id, e.kind))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("n0".into(), ElementKind::Node),
            ("n1".into(), ElementKind::Node),
            ("i0".into(), ElementKind::Input),
            ("o0".into(), ElementKind::Output)
        ]
    );
    let label_ids: Vec<String> = d.edge_labels().into_iter().map(|l| l.id).collect();
    assert_eq!(label_ids, vec!["t0", "t1"]);

    let edges = vec![
        edge("i0", "n0", Some("t0"), 0.9),
        edge("n0", "n1", Some("t1"), 1.3),
        edge("n1", "o0", None, 0.7),
    ];
    let g = assemble(IMAGE, canvas(), &d, &edges, Some(Direction::Vertical)).unwrap();
    assert!(g.check().is_empty(), "{:?}", g.check());
    assert_eq!(g.format, GraphJson::FORMAT);
    assert_eq!(g.direction, Some(Direction::Vertical));
    assert_eq!(g.nodes[0].op.as_deref(), Some("Conv"));
    assert_eq!(g.nodes[1].op, None);
    assert_eq!(g.inputs[0].name, "data");
    assert_eq!(
        g.tensors[0].shape,
        Some(vec![Dim::Int(1), Dim::Int(3), Dim::Int(224), Dim::Int(224)])
    );
    assert_eq!(g.tensors[1].shape, None, "a tensor name is not a shape");
    assert_eq!(g.edges.len(), 3);
    assert_eq!(g.edges[0].tensor.as_deref(), Some("t0"));
    assert_eq!(g.edges[1].confidence, 1.0, "clamped");
    assert_eq!(g.edges[2].tensor, None);
    assert_eq!(g.edges[0].points.as_ref().map(Vec::len), Some(2));
    // Written and read back unchanged.
    assert_eq!(GraphJson::from_json(&g.to_json().unwrap()).unwrap(), g);
}

#[test]
fn duplicate_edges_keep_the_most_confident() {
    let edges = vec![
        edge("i0", "n0", Some("t0"), 0.6),
        edge("i0", "n0", Some("t0"), 0.9),
    ];
    let g = assemble(IMAGE, canvas(), &detections(), &edges, None).unwrap();
    assert_eq!(g.edges.len(), 1);
    assert_eq!(g.edges[0].confidence, 0.9);
}

#[test]
fn bad_references_and_values_are_errors() {
    let d = detections();
    let cases = [
        (
            edge("o0", "n0", None, 0.9),
            "an output cannot start an edge",
        ),
        (edge("i0", "i0", None, 0.9), "an input cannot end an edge"),
        (edge("n7", "n0", None, 0.9), "unknown id"),
    ];
    for (e, why) in cases {
        assert!(
            matches!(
                assemble(IMAGE, canvas(), &d, &[e], None),
                Err(AssembleError::BadEdge { .. })
            ),
            "{why}"
        );
    }
    assert!(matches!(
        assemble(
            IMAGE,
            canvas(),
            &d,
            &[edge("i0", "n0", Some("t5"), 0.9)],
            None
        ),
        Err(AssembleError::BadLabel { .. })
    ));
    assert!(matches!(
        assemble(
            IMAGE,
            canvas(),
            &d,
            &[edge("i0", "n0", None, f32::NAN)],
            None
        ),
        Err(AssembleError::BadConfidence { .. })
    ));
    let mut bad = d.clone();
    bad.nodes[1].bbox = BBox::new(10.0, 10.0, 5.0, 20.0);
    assert_eq!(
        assemble(IMAGE, canvas(), &bad, &[], None).unwrap_err(),
        AssembleError::BadBox { what: "n1".into() }
    );
}

#[test]
fn ports_without_an_edge_are_dropped_unless_kept_and_the_rest_renumbered() {
    let mut d = detections();
    let pill = |x: f32, name: &str| PortDetection {
        bbox: BBox::new(x, 20.0, x + 40.0, 40.0),
        confidence: 0.9,
        name: name.into(),
        truncated: None,
    };
    // i0 "data" (no edge), i1 "mask" (feeds n1), i2 "extra" (no edge), i3 "sure" (no edge, kept); o0 "out"
    // (fed by n1).
    d.inputs.push(pill(200.0, "mask"));
    d.inputs.push(pill(260.0, "extra"));
    d.inputs.push(pill(320.0, "sure"));
    let mut edges = vec![
        edge("n0", "n1", Some("t1"), 0.8),
        edge("i1", "n1", None, 0.7),
        edge("n1", "o0", None, 0.9),
    ];
    assert_eq!(
        d.drop_unconnected_ports(&mut edges, |p| p.name == "sure"),
        2
    );
    let names: Vec<&str> = d.inputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["mask", "sure"]);
    assert_eq!(d.outputs.len(), 1);
    assert_eq!(ends(&edges), [("n0", "n1"), ("i0", "n1"), ("n1", "o0")]);
    let g = assemble(IMAGE, canvas(), &d, &edges, None).unwrap();
    assert_eq!(g.inputs[0].id, "i0");
    assert_eq!(g.inputs[0].name, "mask");
    assert!(g.check().is_empty());

    // Without edges every port `keep` rejects goes; nodes and labels stay.
    let mut d = detections();
    assert_eq!(d.drop_unconnected_ports(&mut [], |_| false), 2);
    assert!(d.inputs.is_empty() && d.outputs.is_empty());
    assert_eq!((d.nodes.len(), d.labels.len()), (2, 2));
}

#[test]
fn nodes_made_outputs_take_the_next_output_ids_and_the_other_nodes_close_up() {
    let mut d = detections();
    let card = |y: f32| NodeDetection {
        bbox: BBox::new(100.0, y, 180.0, y + 30.0),
        confidence: 0.9,
        op: None,
        op_confidence: 0.1,
        weights: Vec::new(),
        truncated: None,
    };
    // n0 Conv → n1 (unsure) → n2 (unsure, a pill) and n1 → n3 (a pill); o0 "out" fed by n1.
    d.nodes.push(card(250.0));
    d.nodes.push(card(400.0));
    let pill = |name: &str| PortDetection {
        bbox: BBox::new(100.0, 250.0, 180.0, 280.0),
        confidence: 0.5,
        name: name.into(),
        truncated: None,
    };
    let mut edges = vec![
        edge("i0", "n0", Some("t0"), 0.9),
        edge("n0", "n1", Some("t1"), 0.8),
        edge("n1", "n2", None, 0.7),
        edge("n1", "n3", None, 0.7),
        edge("n1", "o0", None, 0.9),
    ];
    // Given out of order, one index twice and one out of range: n3 becomes o1, n2 o2.
    d.nodes_to_outputs(
        &mut edges,
        vec![
            (3, pill("prob")),
            (2, pill("y")),
            (3, pill("again")),
            (9, pill("none")),
        ],
    );
    let names: Vec<&str> = d.outputs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["out", "prob", "y"]);
    assert_eq!(d.nodes.len(), 2);
    assert_eq!(
        ends(&edges),
        [
            ("i0", "n0"),
            ("n0", "n1"),
            ("n1", "o2"),
            ("n1", "o1"),
            ("n1", "o0")
        ]
    );
    let g = assemble(IMAGE, canvas(), &d, &edges, None).unwrap();
    assert!(g.check().is_empty());
    assert_eq!(g.outputs[1].name, "prob");

    // A node before the moved one keeps its id; one after it closes up.
    let mut d = detections();
    let mut edges = vec![edge("n0", "n1", None, 0.8), edge("n1", "o0", None, 0.9)];
    d.nodes_to_outputs(&mut edges, vec![(0, pill("x"))]);
    assert_eq!(ends(&edges), [("o1", "n0"), ("n0", "o0")]);
    assert_eq!(d.nodes[0].op, None);
}

#[test]
fn uncarried_labels_are_dropped_unless_kept_and_the_rest_renumbered() {
    let mut d = detections();
    let label = |x: f32, text: &str| LabelDetection {
        bbox: BBox::new(x, 500.0, x + 40.0, 511.0),
        confidence: 0.9,
        text: text.into(),
    };
    // t0 "1×3×224×224" (no edge), t1 "conv_out" (carried), t2 "pads" (no edge), t3 "version" (carried).
    d.labels.push(label(300.0, "pads"));
    d.labels.push(label(400.0, "version"));
    let mut edges = vec![
        edge("i0", "n0", Some("t1"), 0.9),
        edge("n0", "n1", Some("t3"), 0.8),
        edge("n1", "o0", None, 0.9),
    ];
    let kept = d.drop_uncarried_labels(&mut edges, |k, l, _| k == 0 || l.text == "keep");
    assert_eq!(kept, [true, true, false, true]);
    let texts: Vec<&str> = d.labels.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts, ["1×3×224×224", "conv_out", "version"]);
    let labels: Vec<Option<&str>> = edges.iter().map(|e| e.label.as_deref()).collect();
    assert_eq!(labels, [Some("t1"), Some("t2"), None]);
    let g = assemble(IMAGE, canvas(), &d, &edges, None).unwrap();
    assert!(g.check().is_empty());
    assert_eq!(g.tensors[2].text, "version");

    // Without edges, every label `keep` rejects goes.
    let mut d = detections();
    assert_eq!(
        d.drop_uncarried_labels(&mut [], |_, _, _| false),
        [false, false]
    );
    assert!(d.labels.is_empty());
}
