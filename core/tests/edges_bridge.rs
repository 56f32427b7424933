//! Label bridging (`edges::bridge_labels`): a tensor label whose stroke is invisible still gives the edge it sits
//! on, and only that edge.

use image::{Rgb, RgbImage};
use netron_ocr_core::edges::{
    recover_edges, EdgeParams, Element, ElementKind, Label, RecoveredEdge, Side,
};
use netron_ocr_core::graph::{BBox, Direction};

/// A white screen with dark filled boxes for the elements and nothing else: no strokes to trace.
fn blank_scene(elements: &[Element], labels: &[Label]) -> RgbImage {
    let mut img = RgbImage::from_pixel(320, 320, Rgb([255, 255, 255]));
    for b in elements
        .iter()
        .map(|e| &e.bbox)
        .chain(labels.iter().map(|l| &l.bbox))
    {
        for y in b.y0 as u32..b.y1 as u32 {
            for x in b.x0 as u32..b.x1 as u32 {
                img.put_pixel(x, y, Rgb([60, 60, 60]));
            }
        }
    }
    img
}

fn element(id: &str, kind: ElementKind, b: [f32; 4]) -> Element {
    Element {
        id: id.into(),
        kind,
        bbox: BBox::new(b[0], b[1], b[2], b[3]),
    }
}

fn label(id: &str, b: [f32; 4]) -> Label {
    Label {
        id: id.into(),
        bbox: BBox::new(b[0], b[1], b[2], b[3]),
    }
}

fn run(
    elements: &[Element],
    labels: &[Label],
    direction: Direction,
    params: &EdgeParams,
) -> Vec<RecoveredEdge> {
    let img = blank_scene(elements, labels);
    recover_edges(
        &img,
        BBox::new(0.0, 0.0, 320.0, 320.0),
        elements,
        labels,
        direction,
        params,
    )
    .expect("valid input")
    .edges
}

/// A vertical chain a → b → c; the labels sit right of the (undrawn) centre line, as Netron draws them.
fn chain() -> (Vec<Element>, Vec<Label>) {
    let elements = vec![
        element("a", ElementKind::Node, [100.0, 20.0, 180.0, 50.0]),
        element("b", ElementKind::Node, [100.0, 90.0, 180.0, 120.0]),
        element("c", ElementKind::Output, [110.0, 160.0, 170.0, 180.0]),
    ];
    let labels = vec![
        label("t0", [146.0, 64.0, 200.0, 75.0]),
        label("t1", [146.0, 134.0, 200.0, 145.0]),
    ];
    (elements, labels)
}

#[test]
fn labels_without_strokes_bridge_their_ends() {
    let (elements, labels) = chain();
    let params = EdgeParams::default();
    let edges = run(&elements, &labels, Direction::Vertical, &params);
    let got: Vec<(&str, &str, Option<&str>)> = edges
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str(), e.label.as_deref()))
        .collect();
    assert_eq!(got, vec![("a", "b", Some("t0")), ("b", "c", Some("t1"))]);
    for e in &edges {
        assert_eq!(e.confidence, params.bridge_confidence);
        assert_eq!((e.from_side, e.to_side), (Side::Bottom, Side::Top));
        assert_eq!(e.points.len(), 2);
        assert!(e.points[0].y <= e.points[1].y);
    }
}

#[test]
fn bridging_can_be_switched_off() {
    let (elements, labels) = chain();
    let params = EdgeParams {
        bridge_labels: false,
        ..EdgeParams::default()
    };
    assert!(run(&elements, &labels, Direction::Vertical, &params).is_empty());
}

#[test]
fn no_bridge_without_a_valid_source_and_target() {
    let params = EdgeParams::default();
    // An output above and an input below: neither can play its role.
    let elements = vec![
        element("o", ElementKind::Output, [100.0, 20.0, 180.0, 50.0]),
        element("i", ElementKind::Input, [100.0, 90.0, 180.0, 120.0]),
    ];
    let labels = vec![label("t", [146.0, 64.0, 200.0, 75.0])];
    assert!(run(&elements, &labels, Direction::Vertical, &params).is_empty());
    // Ends too far away (more than `bridge_max_gap` label heights).
    let elements = vec![
        element("a", ElementKind::Node, [100.0, 20.0, 180.0, 50.0]),
        element("b", ElementKind::Node, [100.0, 250.0, 180.0, 280.0]),
    ];
    let labels = vec![label("t", [146.0, 64.0, 200.0, 75.0])];
    assert!(run(&elements, &labels, Direction::Vertical, &params).is_empty());
    // A label far to the side of both boxes.
    let elements = vec![
        element("a", ElementKind::Node, [100.0, 20.0, 180.0, 50.0]),
        element("b", ElementKind::Node, [100.0, 90.0, 180.0, 120.0]),
    ];
    let labels = vec![label("t", [230.0, 64.0, 290.0, 75.0])];
    assert!(run(&elements, &labels, Direction::Vertical, &params).is_empty());
}

#[test]
fn horizontal_layouts_bridge_left_to_right() {
    // The chain above, transposed: edges flow to the right and labels sit below them.
    let (elements, _) = chain();
    let t = |b: &BBox| BBox::new(b.y0, b.x0, b.y1, b.x1);
    let elements: Vec<Element> = elements
        .into_iter()
        .map(|e| Element {
            bbox: t(&e.bbox),
            ..e
        })
        .collect();
    // Labels keep horizontal text: 11 px tall, below the edge line.
    let labels = vec![
        label("t0", [55.0, 146.0, 84.0, 157.0]),
        label("t1", [125.0, 146.0, 154.0, 157.0]),
    ];
    let edges = run(
        &elements,
        &labels,
        Direction::Horizontal,
        &EdgeParams::default(),
    );
    let got: Vec<(&str, &str, Option<&str>)> = edges
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str(), e.label.as_deref()))
        .collect();
    assert_eq!(got, vec![("a", "b", Some("t0")), ("b", "c", Some("t1"))]);
    assert!(edges
        .iter()
        .all(|e| (e.from_side, e.to_side) == (Side::Right, Side::Left)));
}
