//! Edge recovery on small drawn scenes with exactly known edges: straight and curved strokes, fan-out, a
//! crossing, the dark theme, a horizontal layout, thick strokes, a degraded "photo", labels on the curve, and
//! things that must not become edges.

mod edges_support;

use edges_support::{bezier, expect, s_curve, s_curve_h, triples, Scene, DARK, LIGHT};
use image::RgbImage;
use netron_ocr_core::edges::{
    estimate_unit, recover_edges, work_frame, EdgeError, EdgeParams, Element, ElementKind, Label,
    Side,
};
use netron_ocr_core::graph::{BBox, Direction, Point};

use ElementKind::{Constant, Input, Node, Output};

/// x of a y-monotone polyline at height `y`.
fn x_at(points: &[Point], y: f32) -> f32 {
    for s in points.windows(2) {
        let (a, b) = (s[0], s[1]);
        if (a.y <= y && y <= b.y) || (b.y <= y && y <= a.y) {
            let t = if b.y != a.y {
                (y - a.y) / (b.y - a.y)
            } else {
                0.0
            };
            return a.x + t * (b.x - a.x);
        }
    }
    panic!("y {y} outside the curve");
}

/// y of an x-monotone polyline at `x`.
fn y_at(points: &[Point], x: f32) -> f32 {
    let swapped: Vec<Point> = points.iter().map(|p| Point::new(p.y, p.x)).collect();
    x_at(&swapped, x)
}

/// A label of height `h` sitting right of the curve at height `y` (Netron: left side half a height away).
fn label_right_of(scene: &mut Scene, id: &str, curve: &[Point], y: f32, h: f32) {
    let x = x_at(curve, y) + 0.5 * h;
    scene.label(id, BBox::new(x, y - 0.5 * h, x + 5.0 * h, y + 0.5 * h));
}

fn run(scene: &Scene, direction: Direction) -> Vec<(String, String, Option<String>)> {
    let result = scene.recover(direction).expect("valid input");
    for e in &result.edges {
        assert!(e.confidence > 0.5 && e.confidence <= 1.0, "{e:?}");
        assert!(e.points.len() >= 2);
    }
    triples(&result.edges)
}

/// A source card n0 above two target cards, n1 below it and n2 to the right, at unit `unit`; no strokes.
fn three_cards(theme: edges_support::Theme, unit: f32) -> Scene {
    let s = |v: f32| v * unit;
    let mut sc = Scene::new(s(400.0) as u32, s(220.0) as u32, theme);
    sc.element("n0", Node, BBox::new(s(100.0), s(20.0), s(180.0), s(50.0)));
    sc.element(
        "n1",
        Node,
        BBox::new(s(100.0), s(150.0), s(180.0), s(180.0)),
    );
    sc.element(
        "n2",
        Node,
        BBox::new(s(280.0), s(150.0), s(360.0), s(180.0)),
    );
    sc
}

/// Straight and curved edges from one node, unit 1 or 2 (stroke width and label height scale together).
fn straight_and_curved(theme: edges_support::Theme, unit: f32) -> Scene {
    let s = |v: f32| v * unit;
    let mut sc = three_cards(theme, unit);
    let straight = vec![
        Point::new(s(140.0), s(50.0)),
        Point::new(s(140.0), s(150.0)),
    ];
    let curved = s_curve(
        Point::new(s(160.0), s(50.0)),
        Point::new(s(320.0), s(150.0)),
    );
    sc.edge(&straight, unit);
    sc.edge(&curved, unit);
    label_right_of(&mut sc, "t0", &straight, s(100.0), s(11.0));
    label_right_of(&mut sc, "t1", &curved, s(100.0), s(11.0));
    sc
}

#[test]
fn straight_and_curved_edges_with_labels() {
    let sc = straight_and_curved(LIGHT, 1.0);
    assert_eq!(
        run(&sc, Direction::Vertical),
        expect(&[("n0", "n1", Some("t0")), ("n0", "n2", Some("t1"))])
    );
}

#[test]
fn traced_points_run_from_source_to_target() {
    let sc = straight_and_curved(LIGHT, 1.0);
    let r = sc.recover(Direction::Vertical).unwrap();
    let e = r.edges.iter().find(|e| e.to == "n2").expect("n0 → n2");
    let (first, last) = (e.points[0], e.points[e.points.len() - 1]);
    // The source box ends at y 50, the target box starts at y 150; masks and the band keep the ends a few px off.
    assert!(
        first.y > 48.0 && first.y < 60.0 && (first.x - 160.0).abs() < 6.0,
        "{first:?}"
    );
    assert!(
        last.y > 135.0 && last.y < 152.0 && (last.x - 320.0).abs() < 6.0,
        "{last:?}"
    );
    assert_eq!((e.from_side, e.to_side), (Side::Bottom, Side::Top));
    // Every traced point outside the label boxes (which the trace jumps across) lies on the drawn curve.
    let curve = s_curve(Point::new(160.0, 50.0), Point::new(320.0, 150.0));
    let near_label = |p: &Point| {
        sc.labels.iter().any(|l| {
            let b = l.bbox;
            p.x > b.x0 - 2.0 && p.x < b.x1 + 2.0 && p.y > b.y0 - 2.0 && p.y < b.y1 + 2.0
        })
    };
    for p in e.points.iter().filter(|p| !near_label(p)) {
        let d = curve
            .iter()
            .map(|c| ((c.x - p.x).powi(2) + (c.y - p.y).powi(2)).sqrt())
            .fold(f32::MAX, f32::min);
        assert!(d < 2.5, "point {p:?} is {d} px off the curve");
    }
    // The overlay covers the region at working resolution.
    assert_eq!(r.debug.overlay.dimensions(), (400, 220));
}

#[test]
fn thick_strokes_are_downsampled() {
    let sc = straight_and_curved(LIGHT, 2.0);
    let r = sc.recover(Direction::Vertical).unwrap();
    assert!(
        (r.debug.frame.unit_px - 2.0).abs() < 0.2,
        "unit {}",
        r.debug.frame.unit_px
    );
    assert!(r.debug.frame.scale < 0.8);
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n1", Some("t0")), ("n0", "n2", Some("t1"))])
    );
}

#[test]
fn thin_strokes_are_upsampled() {
    // A zoomed-out view: strokes 0.45 px wide, cards 36 × 13.5 px, labels 5 px tall.
    let sc = straight_and_curved(LIGHT, 0.45);
    let not_upsampled = EdgeParams {
        max_upsample: 1.0,
        ..EdgeParams::default()
    };
    let r = sc
        .recover_with(Direction::Vertical, &not_upsampled)
        .unwrap();
    assert_eq!(r.debug.frame.scale, 1.0);
    let r = sc.recover(Direction::Vertical).unwrap();
    assert!(r.debug.frame.scale > 2.0, "scale {}", r.debug.frame.scale);
    assert!(
        (r.debug.frame.unit() - 1.25).abs() < 0.2,
        "{}",
        r.debug.frame.unit()
    );
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n1", Some("t0")), ("n0", "n2", Some("t1"))])
    );
    // The traced points come back in source pixels, on the drawn curve.
    let e = r.edges.iter().find(|e| e.to == "n2").expect("n0 → n2");
    let curve = s_curve(Point::new(72.0, 22.5), Point::new(144.0, 67.5));
    for p in &e.points {
        let d = curve
            .iter()
            .map(|c| ((c.x - p.x).powi(2) + (c.y - p.y).powi(2)).sqrt())
            .fold(f32::MAX, f32::min);
        assert!(d < 6.0, "point {p:?} is {d} px off the curve");
    }
}

#[test]
fn dark_theme() {
    let sc = straight_and_curved(DARK, 1.0);
    let r = sc.recover(Direction::Vertical).unwrap();
    assert_eq!(r.debug.polarity, netron_ocr_core::edges::Polarity::LightInk);
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n1", Some("t0")), ("n0", "n2", Some("t1"))])
    );
}

#[test]
fn fan_out_from_one_start_point() {
    let mut sc = Scene::new(360, 230, LIGHT);
    sc.element("i0", Input, BBox::new(150.0, 20.0, 200.0, 40.0));
    let targets = [("n0", 40.0), ("n1", 145.0), ("n2", 250.0)];
    let start = Point::new(175.0, 40.0);
    for (k, (id, x0)) in targets.iter().enumerate() {
        sc.element(id, Node, BBox::new(*x0, 170.0, x0 + 70.0, 200.0));
        let curve = s_curve(start, Point::new(x0 + 35.0, 170.0));
        sc.edge(&curve, 1.0);
        // Labels at different heights so they do not overlap each other.
        label_right_of(
            &mut sc,
            &format!("t{k}"),
            &curve,
            95.0 + 14.0 * k as f32,
            11.0,
        );
    }
    assert_eq!(
        run(&sc, Direction::Vertical),
        expect(&[
            ("i0", "n0", Some("t0")),
            ("i0", "n1", Some("t1")),
            ("i0", "n2", Some("t2"))
        ])
    );
}

/// Four sources feeding one narrow card (a `BatchNormalization` and its constants), drawn at `scale` (stroke
/// width and geometry): every curve aims at the card's centre, so their arrowheads overlap in one blob on its top.
fn fan_in_into_a_narrow_card(scale: f32) -> Scene {
    let s = |v: f32| v * scale;
    let mut sc = Scene::new(s(380.0) as u32, s(240.0) as u32, LIGHT);
    let tip = Point::new(s(185.0), s(200.0));
    sc.element(
        "n4",
        Node,
        BBox::new(s(170.0), s(200.0), s(200.0), s(216.0)),
    );
    for (k, sx) in [50.0f32, 140.0, 230.0, 320.0].iter().enumerate() {
        let b = BBox::new(s(sx - 30.0), s(20.0), s(sx + 30.0), s(50.0));
        sc.element(&format!("n{k}"), Node, b);
        let curve = bezier(
            Point::new(s(*sx), s(50.0)),
            Point::new(s(*sx), s(110.0)),
            Point::new(tip.x + (s(*sx) - tip.x) * 0.35, s(160.0)),
            tip,
            64,
        );
        sc.edge(&curve, scale);
    }
    sc
}

#[test]
fn converging_arrowheads_are_split_into_their_strokes() {
    let all = expect(&[
        ("n0", "n4", None),
        ("n1", "n4", None),
        ("n2", "n4", None),
        ("n3", "n4", None),
    ]);
    let one = EdgeParams {
        fan_in_probe: None,
        ..EdgeParams::default()
    };
    // Scale 0.6: strokes thinner than a pixel, as in a screenshot of a large graph at a small zoom.
    for scale in [1.0, 0.6] {
        let sc = fan_in_into_a_narrow_card(scale);
        assert_eq!(run(&sc, Direction::Vertical), all, "scale {scale}");
        // Without the split the blob is one terminal and at most one of the four edges is found.
        let found = triples(&sc.recover_with(Direction::Vertical, &one).unwrap().edges);
        assert!(found.len() <= 1, "scale {scale}: {found:?}");
    }
}

#[test]
fn crossing_curves_keep_their_own_source() {
    let mut sc = Scene::new(340, 260, LIGHT);
    sc.element("n0", Node, BBox::new(40.0, 20.0, 120.0, 50.0));
    sc.element("n1", Node, BBox::new(220.0, 20.0, 300.0, 50.0));
    sc.element("n2", Node, BBox::new(40.0, 210.0, 120.0, 240.0));
    sc.element("n3", Node, BBox::new(220.0, 210.0, 300.0, 240.0));
    let a = s_curve(Point::new(80.0, 50.0), Point::new(260.0, 210.0));
    let b = s_curve(Point::new(260.0, 50.0), Point::new(80.0, 210.0));
    sc.edge(&a, 1.0);
    sc.edge(&b, 1.0);
    assert_eq!(
        run(&sc, Direction::Vertical),
        expect(&[("n0", "n3", None), ("n1", "n2", None)])
    );
}

#[test]
fn horizontal_layout() {
    let mut sc = Scene::new(300, 170, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 60.0, 80.0, 90.0));
    sc.element("n1", Node, BBox::new(210.0, 15.0, 270.0, 45.0));
    sc.element("n2", Node, BBox::new(210.0, 110.0, 270.0, 140.0));
    let up = s_curve_h(Point::new(80.0, 70.0), Point::new(210.0, 30.0));
    let down = s_curve_h(Point::new(80.0, 80.0), Point::new(210.0, 125.0));
    sc.edge(&up, 1.0);
    sc.edge(&down, 1.0);
    // In a horizontal layout labels sit below their edge, their top half a height away.
    for (id, curve, x) in [("t0", &up, 130.0), ("t1", &down, 160.0)] {
        let y = y_at(curve, x) + 5.5;
        sc.label(id, BBox::new(x - 25.0, y, x + 25.0, y + 11.0));
    }
    let r = sc.recover(Direction::Horizontal).unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n1", Some("t0")), ("n0", "n2", Some("t1"))])
    );
    for e in &r.edges {
        assert_eq!((e.from_side, e.to_side), (Side::Right, Side::Left), "{e:?}");
        assert!(e.points[0].x < e.points[e.points.len() - 1].x);
    }
    // Read as a vertical layout, the curve rising to n1 is impossible (edges only go down).
    assert!(!run(&sc, Direction::Vertical)
        .iter()
        .any(|(_, to, _)| to == "n1"));
}

#[test]
fn label_on_the_curve_is_crossed() {
    // The curve runs through the lower left part of its label box (as Netron draws bent edges).
    let mut sc = Scene::new(260, 230, LIGHT);
    sc.element("n0", Node, BBox::new(30.0, 20.0, 110.0, 50.0));
    sc.element("n1", Node, BBox::new(150.0, 180.0, 230.0, 210.0));
    let curve = s_curve(Point::new(70.0, 50.0), Point::new(190.0, 180.0));
    sc.edge(&curve, 1.0);
    let x = x_at(&curve, 110.0);
    sc.label("t0", BBox::new(x - 6.0, 100.0, x + 50.0, 111.0));
    assert_eq!(
        run(&sc, Direction::Vertical),
        expect(&[("n0", "n1", Some("t0"))])
    );
}

#[test]
fn degraded_photo_like_image() {
    let mut sc = straight_and_curved(LIGHT, 1.0);
    // Blur (3×3 box), an exposure gradient and deterministic noise of about ±8 levels.
    let src = sc.image.clone();
    let (w, h) = src.dimensions();
    let mut seed = 12345u32;
    let mut out = RgbImage::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0.0f32; 3];
            let mut n = 0.0;
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let (xx, yy) = (x as i64 + dx, y as i64 + dy);
                    if xx >= 0 && yy >= 0 && xx < w as i64 && yy < h as i64 {
                        let p = src.get_pixel(xx as u32, yy as u32);
                        for (a, v) in acc.iter_mut().zip(p.0) {
                            *a += f32::from(v);
                        }
                        n += 1.0;
                    }
                }
            }
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let noise = ((seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * 16.0;
            let gain = 0.75 + 0.2 * x as f32 / w as f32;
            let px = out.get_pixel_mut(x, y);
            for (v, a) in px.0.iter_mut().zip(acc) {
                *v = (a / n * gain + noise).clamp(0.0, 255.0) as u8;
            }
        }
    }
    sc.image = out;
    assert_eq!(
        run(&sc, Direction::Vertical),
        expect(&[("n0", "n1", Some("t0")), ("n0", "n2", Some("t1"))])
    );
}

#[test]
fn no_edge_without_a_connecting_stroke() {
    let mut sc = Scene::new(360, 240, LIGHT);
    sc.element("n0", Node, BBox::new(40.0, 20.0, 120.0, 50.0));
    // Directly below n0, but nothing drawn between them.
    sc.element("n1", Node, BBox::new(40.0, 150.0, 120.0, 180.0));
    // An output pill cannot start an edge, even with a stroke from it into a node.
    sc.element("o0", Output, BBox::new(180.0, 20.0, 240.0, 40.0));
    sc.element("n2", Node, BBox::new(170.0, 150.0, 250.0, 180.0));
    sc.edge(&[Point::new(210.0, 40.0), Point::new(210.0, 150.0)], 1.0);
    // A stroke coming from outside the region (its source is out of view).
    sc.element("n3", Node, BBox::new(280.0, 205.0, 350.0, 235.0));
    sc.edge(
        &s_curve(Point::new(359.0, 90.0), Point::new(315.0, 205.0)),
        1.0,
    );
    assert_eq!(run(&sc, Direction::Vertical), expect(&[]));
}

#[test]
fn side_entry_at_a_shallow_angle() {
    // A wide fan-out into a small target: the curve meets the target's left side (Netron's intersectRect).
    let mut sc = Scene::new(320, 200, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 20.0, 100.0, 50.0));
    sc.element("n1", Node, BBox::new(250.0, 110.0, 280.0, 128.0));
    let curve = bezier(
        Point::new(60.0, 50.0),
        Point::new(60.0, 100.0),
        Point::new(160.0, 112.0),
        Point::new(250.0, 115.0),
        64,
    );
    sc.edge(&curve, 1.0);
    let r = sc.recover(Direction::Vertical).unwrap();
    assert_eq!(triples(&r.edges), expect(&[("n0", "n1", None)]));
    assert_eq!(r.edges[0].to_side, Side::Left);
}

#[test]
fn arrowheads_stacked_on_a_side_are_each_a_terminal() {
    // Two edges arrive at the left side of a small card 6 units apart, both aimed at its centre (Netron's
    // intersectRect): the lower arrowhead is ink below the upper one, which is no curve passing the side.
    let mut sc = Scene::new(320, 200, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 10.0, 100.0, 40.0));
    sc.element("n1", Node, BBox::new(120.0, 10.0, 200.0, 40.0));
    sc.element("n2", Node, BBox::new(250.0, 110.0, 280.0, 128.0));
    let upper = bezier(
        Point::new(60.0, 40.0),
        Point::new(60.0, 80.0),
        Point::new(200.0, 93.0),
        Point::new(250.0, 113.0),
        64,
    );
    let level = bezier(
        Point::new(160.0, 40.0),
        Point::new(160.0, 119.0),
        Point::new(200.0, 119.0),
        Point::new(250.0, 119.0),
        64,
    );
    sc.edge(&upper, 1.0);
    sc.edge(&level, 1.0);
    // Without the fan-in split, which can find the upper stroke from the lower terminal, each arrowhead must be a
    // terminal of its own.
    let no_split = EdgeParams {
        fan_in_probe: None,
        ..EdgeParams::default()
    };
    for params in [EdgeParams::default(), no_split] {
        let r = sc.recover_with(Direction::Vertical, &params).unwrap();
        assert_eq!(
            triples(&r.edges),
            expect(&[("n0", "n2", None), ("n1", "n2", None)]),
            "{params:?}"
        );
        assert!(
            r.edges.iter().all(|e| e.to_side == Side::Left),
            "{:?}",
            r.edges
        );
    }
}

#[test]
fn arrowheads_run_together_on_a_side_are_a_terminal() {
    // Two edges arrive at the left side of a wide card 5.5 px apart, both aimed at its centre: their arrowheads
    // (6 px wide) make one run along the side, and the lower one is ink below the run's centre, which is no curve
    // passing the side. Without the rule neither edge is found.
    let mut sc = Scene::new(350, 150, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 10.0, 100.0, 40.0));
    sc.element("n1", Node, BBox::new(120.0, 10.0, 200.0, 40.0));
    sc.element("n2", Node, BBox::new(250.0, 106.0, 330.0, 132.0));
    let upper = bezier(
        Point::new(60.0, 40.0),
        Point::new(60.0, 100.0),
        Point::new(210.0, 109.0),
        Point::new(250.0, 114.0),
        64,
    );
    let lower = bezier(
        Point::new(160.0, 40.0),
        Point::new(160.0, 95.0),
        Point::new(210.0, 120.0),
        Point::new(250.0, 119.5),
        64,
    );
    sc.edge(&upper, 1.0);
    sc.edge(&lower, 1.0);
    // One terminal for both: the fan-in split does not part strokes this close (a known miss), and the trace
    // follows the lower one.
    let r = sc.recover(Direction::Vertical).unwrap();
    assert_eq!(triples(&r.edges), expect(&[("n1", "n2", None)]));
}

/// A scene `width` px wide with n0 at the top left and its edge drawn low along the row y ≈ 119 to x = 250, where
/// the tests put a card over the stroke (n1) and its target (n2).
fn edge_along_the_row(width: u32) -> Scene {
    let mut sc = Scene::new(width, 170, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 10.0, 100.0, 40.0));
    let under = bezier(
        Point::new(60.0, 40.0),
        Point::new(60.0, 100.0),
        Point::new(110.0, 119.0),
        Point::new(250.0, 119.0),
        64,
    );
    sc.edge(&under, 1.0);
    sc
}

#[test]
fn a_stroke_passing_under_a_card_is_followed_through_it() {
    // Netron draws edges beneath the cards: the edge n0 → n2 runs under n1, a card on n2's rank fed by n3, and
    // comes out at n1's left side, where it looks like a sideways arrival at n1.
    let mut sc = edge_along_the_row(320);
    sc.element("n3", Node, BBox::new(140.0, 10.0, 220.0, 40.0));
    sc.edge(&[Point::new(180.0, 40.0), Point::new(180.0, 105.0)], 1.0);
    sc.element("n1", Node, BBox::new(140.0, 105.0, 210.0, 133.0));
    sc.element("n2", Node, BBox::new(250.0, 110.0, 280.0, 128.0));
    let r = sc.recover(Direction::Vertical).unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n3", "n1", None), ("n0", "n2", None)])
    );
    let stopped = EdgeParams {
        pass_under: false,
        ..EdgeParams::default()
    };
    // Without the rule the stroke coming out of n1 also reads as an arrival at n1.
    let r = sc.recover_with(Direction::Vertical, &stopped).unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n1", None), ("n0", "n2", None), ("n3", "n1", None)])
    );
}

#[test]
fn a_stroke_widening_into_a_neighbouring_card_ends_there() {
    // n0's edge passes under n1 and ends, across a short gap, in an arrowhead at the left side of n2, a card of
    // the same rank that n3 feeds from above. The stroke in the gap touches n1's right side too, but it widens
    // towards n2: the arrowhead is there.
    let mut sc = edge_along_the_row(340);
    sc.element("n3", Node, BBox::new(250.0, 10.0, 330.0, 40.0));
    let down = bezier(
        Point::new(290.0, 40.0),
        Point::new(290.0, 80.0),
        Point::new(280.0, 95.0),
        Point::new(267.0, 110.0),
        64,
    );
    sc.edge(&down, 1.0);
    sc.element("n1", Node, BBox::new(140.0, 105.0, 226.0, 133.0));
    sc.element("n2", Node, BBox::new(250.0, 110.0, 280.0, 128.0));
    let r = sc.recover(Direction::Vertical).unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n2", None), ("n3", "n2", None)])
    );
    let both_ways = EdgeParams {
        neighbour_arrowheads: false,
        ..EdgeParams::default()
    };
    // Without the rule n1's right side takes the stroke for an arrival, traced across n2 to n3's edge.
    let r = sc.recover_with(Direction::Vertical, &both_ways).unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n3", "n1", None), ("n0", "n2", None), ("n3", "n2", None)])
    );
}

/// Two cards on top (n0, n1) whose edges run down into the left side of n3, passing under n2, a card of
/// `kind` beside n3 on its rank: they go in through n2's top side and come out at its right, 24 px from n3.
fn fan_in_beside(kind: ElementKind) -> Scene {
    let mut sc = Scene::new(350, 150, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 10.0, 100.0, 40.0));
    sc.element("n1", Node, BBox::new(120.0, 10.0, 200.0, 40.0));
    let from_n0 = bezier(
        Point::new(60.0, 40.0),
        Point::new(60.0, 100.0),
        Point::new(210.0, 104.0),
        Point::new(250.0, 111.0),
        64,
    );
    let from_n1 = bezier(
        Point::new(160.0, 40.0),
        Point::new(160.0, 95.0),
        Point::new(210.0, 122.0),
        Point::new(250.0, 121.0),
        64,
    );
    sc.edge(&from_n0, 1.0);
    sc.edge(&from_n1, 1.0);
    sc.element("n2", kind, BBox::new(140.0, 100.0, 226.0, 128.0));
    sc.element("n3", Node, BBox::new(250.0, 106.0, 330.0, 132.0));
    sc
}

#[test]
fn a_constant_card_takes_no_edge() {
    // A `ConstantOfShape` whose input is a row inside its card takes no edge (ElementKind::Constant): the strokes
    // crossing it are followed through to n3.
    let r = fan_in_beside(Constant)
        .recover(Direction::Vertical)
        .unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n3", None), ("n1", "n3", None)])
    );
    // As a node, n2 takes n1's stroke, which goes in through its top side, for an arrival.
    let r = fan_in_beside(Node).recover(Direction::Vertical).unwrap();
    assert_eq!(
        triples(&r.edges),
        expect(&[("n0", "n3", None), ("n1", "n2", None), ("n1", "n3", None)])
    );
}

#[test]
fn bad_input_is_a_typed_error() {
    let sc = straight_and_curved(LIGHT, 1.0);
    let p = EdgeParams::default();
    let v = Direction::Vertical;
    let nan = BBox::new(f32::NAN, 0.0, 10.0, 10.0);
    assert!(matches!(
        recover_edges(&sc.image, nan, &sc.elements, &sc.labels, v, &p),
        Err(EdgeError::BadRegion(_))
    ));
    let outside = BBox::new(1000.0, 1000.0, 2000.0, 2000.0);
    assert!(matches!(
        recover_edges(&sc.image, outside, &sc.elements, &sc.labels, v, &p),
        Err(EdgeError::BadRegion(_))
    ));
    let mut elements = sc.elements.clone();
    elements.push(Element {
        id: "n0".into(),
        kind: Node,
        bbox: BBox::new(0.0, 0.0, 5.0, 5.0),
    });
    assert_eq!(
        recover_edges(&sc.image, sc.region(), &elements, &sc.labels, v, &p).unwrap_err(),
        EdgeError::DuplicateId { id: "n0".into() }
    );
    let labels = vec![Label {
        id: "t9".into(),
        bbox: BBox::new(10.0, 10.0, 5.0, 20.0),
    }];
    assert_eq!(
        recover_edges(&sc.image, sc.region(), &sc.elements, &labels, v, &p).unwrap_err(),
        EdgeError::BadBox { id: "t9".into() }
    );
    // No elements at all: no edges, no error.
    let r = recover_edges(&sc.image, sc.region(), &[], &[], v, &p).unwrap();
    assert!(r.edges.is_empty());
    // A region partly outside the image is clipped.
    let big = BBox::new(-50.0, -50.0, 1000.0, 1000.0);
    let r = recover_edges(&sc.image, big, &sc.elements, &sc.labels, v, &p).unwrap();
    assert_eq!(r.edges.len(), 2);
}

#[test]
fn work_frame_maps_both_ways() {
    let p = EdgeParams::default();
    let region = BBox::new(100.0, 50.0, 900.0, 650.0);
    for direction in [Direction::Vertical, Direction::Horizontal] {
        let f = work_frame(1000, 800, region, 2.5, direction, &p).unwrap();
        assert!((f.scale - 0.5).abs() < 1e-6, "1.25 / 2.5");
        assert!((f.unit() - 1.25).abs() < 1e-6);
        let (w, h) = if direction == Direction::Horizontal {
            (300, 400)
        } else {
            (400, 300)
        };
        assert_eq!((f.width, f.height), (w, h));
        let q = Point::new(345.5, 222.25);
        let back = f.to_source(f.to_work(q));
        assert!((back.x - q.x).abs() < 1e-3 && (back.y - q.y).abs() < 1e-3);
        let b = f.box_to_work(&BBox::new(200.0, 100.0, 300.0, 140.0));
        assert!(b.is_ordered());
    }
    // Never upsampled with `max_upsample` 1; the pixel cap wins over the unit.
    let never = EdgeParams {
        max_upsample: 1.0,
        ..EdgeParams::default()
    };
    let f = work_frame(1000, 800, region, 0.5, Direction::Vertical, &never).unwrap();
    assert_eq!(f.scale, 1.0);
    assert_eq!(f.magnification(), 1.0);
    // By default upsampled from `min_upsample` (2) up to `max_upsample` (3).
    let up = EdgeParams::default();
    let f = work_frame(1000, 800, region, 0.5, Direction::Vertical, &up).unwrap();
    assert!((f.scale - 2.5).abs() < 1e-6 && f.magnification() == f.scale);
    assert_eq!((f.width, f.height), (2000, 1500));
    let q = Point::new(345.5, 222.25);
    let back = f.to_source(f.to_work(q));
    assert!((back.x - q.x).abs() < 1e-3 && (back.y - q.y).abs() < 1e-3);
    let f = work_frame(1000, 800, region, 0.3, Direction::Vertical, &up).unwrap();
    assert_eq!(f.scale, 3.0, "capped at max_upsample");
    let f = work_frame(1000, 800, region, 0.8, Direction::Vertical, &up).unwrap();
    assert_eq!(f.scale, 1.0, "1.56 needed, under min_upsample");
    let capped = EdgeParams {
        max_work_pixels: 10_000,
        ..EdgeParams::default()
    };
    let f = work_frame(1000, 800, region, 0.5, Direction::Vertical, &capped).unwrap();
    assert!(u64::from(f.width) * u64::from(f.height) <= 10_000);
}

#[test]
fn unit_from_boxes() {
    let label = |h: f32| Label {
        id: String::new(),
        bbox: BBox::new(0.0, 0.0, 50.0, h),
    };
    let el = |h: f32| Element {
        id: String::new(),
        kind: Node,
        bbox: BBox::new(0.0, 0.0, 50.0, h),
    };
    assert_eq!(
        estimate_unit(&[], &[label(22.0), label(22.0), label(33.0)]),
        Some(2.0)
    );
    assert_eq!(
        estimate_unit(&[el(40.0), el(80.0), el(90.0), el(100.0)], &[]),
        Some(4.0)
    );
    assert_eq!(estimate_unit(&[], &[]), None);
}

#[test]
fn a_box_on_the_targets_rank_is_no_source() {
    // n1 and n2 share a rank (one centre line), as Netron's layout draws the boxes of one rank. A curve
    // (another edge's, drawn with no end of its own here) runs from n1's entry side up and over into n2's left
    // side: followed upstream from n1 it enters n2 sideways. n2 is no more upstream of n1 than n1 is of n2.
    let mut sc = Scene::new(360, 220, LIGHT);
    sc.element("n0", Node, BBox::new(220.0, 20.0, 300.0, 50.0));
    sc.element("n1", Node, BBox::new(40.0, 140.0, 120.0, 170.0));
    sc.element("n2", Node, BBox::new(200.0, 140.0, 280.0, 170.0));
    sc.edge(
        &s_curve(Point::new(260.0, 50.0), Point::new(240.0, 140.0)),
        1.0,
    );
    let stray = bezier(
        Point::new(80.0, 139.0),
        Point::new(80.0, 100.0),
        Point::new(150.0, 95.0),
        Point::new(199.0, 150.0),
        64,
    );
    sc.stroke(&stray, 1.0);
    sc.arrowhead(Point::new(80.0, 139.5), Point::new(0.0, 1.0), 1.0);
    let found = |min_rank_offset: f32| {
        let params = EdgeParams {
            min_rank_offset,
            ..EdgeParams::default()
        };
        triples(&sc.recover_with(Direction::Vertical, &params).unwrap().edges)
    };
    assert_eq!(found(0.5), expect(&[("n0", "n2", None)]));
    // Without the check the stray curve joins the two boxes of one rank.
    assert_eq!(
        found(f32::NEG_INFINITY),
        expect(&[("n0", "n2", None), ("n2", "n1", None)])
    );
    // The default is the check.
    assert_eq!(EdgeParams::default().min_rank_offset, 0.5);
}

#[test]
fn upstream_is_measured_between_centres_in_box_heights() {
    use netron_ocr_core::edges::is_upstream;
    let target = BBox::new(0.0, 100.0, 80.0, 130.0);
    // One rank apart: centres 60 apart, boxes 30 tall.
    assert!(is_upstream(&BBox::new(0.0, 40.0, 80.0, 70.0), &target, 0.5));
    // The same rank, a taller box: one centre line.
    assert!(!is_upstream(
        &BBox::new(100.0, 95.0, 180.0, 135.0),
        &target,
        0.5
    ));
    // Below the target.
    assert!(!is_upstream(
        &BBox::new(0.0, 160.0, 80.0, 190.0),
        &target,
        0.5
    ));
    // Offset by 15, less than half the taller box (40 tall: needs 20).
    assert!(!is_upstream(
        &BBox::new(100.0, 80.0, 180.0, 120.0),
        &target,
        0.5
    ));
    assert!(is_upstream(
        &BBox::new(100.0, 80.0, 180.0, 120.0),
        &target,
        0.25
    ));
    assert!(is_upstream(
        &BBox::new(0.0, 160.0, 80.0, 190.0),
        &target,
        f32::NEG_INFINITY
    ));
}

#[test]
fn a_curve_clipping_a_corner_does_not_end_there() {
    // The edge n0 → n3 sweeps right over n2's top-right corner. It crosses n2's entry band heading sideways,
    // aimed beside n2: no arrowhead of n2's.
    let mut sc = Scene::new(380, 260, LIGHT);
    sc.element("n0", Node, BBox::new(20.0, 20.0, 100.0, 50.0));
    sc.element("n2", Node, BBox::new(100.0, 142.0, 180.0, 172.0));
    sc.element("n3", Node, BBox::new(290.0, 200.0, 350.0, 230.0));
    let curve = bezier(
        Point::new(60.0, 50.0),
        Point::new(60.0, 130.0),
        Point::new(140.0, 120.0),
        Point::new(320.0, 200.0),
        64,
    );
    sc.edge(&curve, 1.0);
    let found = |aimed_terminals: bool| {
        let params = EdgeParams {
            aimed_terminals,
            ..EdgeParams::default()
        };
        triples(&sc.recover_with(Direction::Vertical, &params).unwrap().edges)
    };
    assert_eq!(found(true), expect(&[("n0", "n3", None)]));
    assert_eq!(
        found(false),
        expect(&[("n0", "n2", None), ("n0", "n3", None)])
    );
    assert!(EdgeParams::default().aimed_terminals);
}

#[test]
fn an_arrowhead_is_aimed_into_its_box() {
    use netron_ocr_core::edges::aims_into;
    let b = BBox::new(100.0, 100.0, 160.0, 130.0);
    let up = |x: f32, y: f32| {
        let l = (x * x + y * y).sqrt();
        Point::new(x / l, y / l)
    };
    // Straight down at the middle, and from the upper left near the left corner.
    assert!(aims_into(&b, Point::new(130.0, 99.5), up(0.0, -1.0)));
    assert!(aims_into(&b, Point::new(110.0, 99.5), up(-1.0, -1.0)));
    // Sideways past the right corner, and a stroke heading up out of the box.
    assert!(!aims_into(&b, Point::new(155.0, 99.5), up(-1.0, -0.3)));
    assert!(!aims_into(&b, Point::new(130.0, 99.5), up(0.0, 1.0)));
}

/// A horizontal layout whose targets stand in one column (one rank), as Netron draws a node's inputs of one rank:
/// the node centres spread more along y than along x.
fn column_of_targets(transpose: bool) -> Scene {
    let (w, h) = (300u32, 260u32);
    let at = |x: f32, y: f32| {
        if transpose {
            Point::new(y, x)
        } else {
            Point::new(x, y)
        }
    };
    let bbox = |x0: f32, y0: f32, x1: f32, y1: f32| {
        if transpose {
            BBox::new(y0, x0, y1, x1)
        } else {
            BBox::new(x0, y0, x1, y1)
        }
    };
    let mut sc = if transpose {
        Scene::new(h, w, LIGHT)
    } else {
        Scene::new(w, h, LIGHT)
    };
    sc.element("n0", Node, bbox(20.0, 115.0, 80.0, 145.0));
    for (k, y) in [20.0f32, 80.0, 140.0, 200.0].into_iter().enumerate() {
        sc.element(
            &format!("n{}", k + 1),
            Node,
            bbox(210.0, y, 270.0, y + 30.0),
        );
        let curve = s_curve_h(Point::new(80.0, 130.0), Point::new(210.0, y + 15.0));
        let curve: Vec<Point> = curve.iter().map(|p| at(p.x, p.y)).collect();
        sc.edge(&curve, 1.0);
    }
    sc
}

#[test]
fn crossed_sides_show_the_layout_direction() {
    use netron_ocr_core::scanner::{direction_from_crossings, estimate_direction};

    for (transpose, direction) in [(false, Direction::Horizontal), (true, Direction::Vertical)] {
        let sc = column_of_targets(transpose);
        let c = sc.side_crossings();
        // Four edges leave n0 through one side and enter the four targets through theirs.
        let (along, across) = if transpose {
            (c.vertical, c.horizontal)
        } else {
            (c.horizontal, c.vertical)
        };
        assert_eq!((along, across), (5, 0), "{c:?}");
        assert_eq!(direction_from_crossings(c), Some(direction));
        // The boxes alone point the other way: the targets' column is the larger spread.
        let boxes: Vec<BBox> = sc.elements.iter().map(|e| e.bbox).collect();
        assert_ne!(estimate_direction(&boxes, &[], &[]), direction);
    }
}

#[test]
fn a_stroke_along_a_side_is_no_crossing() {
    // A stroke passing 4.5 px above a box and one running 4.5 px beside it, inside the bands, crossing neither.
    let mut sc = Scene::new(240, 160, LIGHT);
    sc.element("n0", Node, BBox::new(80.0, 60.0, 160.0, 90.0));
    sc.stroke(&[Point::new(10.0, 55.5), Point::new(230.0, 55.5)], 1.0);
    sc.stroke(&[Point::new(164.5, 5.0), Point::new(164.5, 155.0)], 1.0);
    let c = sc.side_crossings();
    assert_eq!((c.vertical, c.horizontal), (0, 0), "{c:?}");
    // An edge leaving the box's bottom does cross.
    sc.edge(
        &s_curve(Point::new(120.0, 90.0), Point::new(60.0, 150.0)),
        1.0,
    );
    let c = sc.side_crossings();
    assert_eq!((c.vertical, c.horizontal), (1, 0), "{c:?}");
}

#[test]
fn an_edge_ends_in_an_arrowhead_and_a_plain_line_does_not() {
    for (theme, unit) in [(LIGHT, 1.0f32), (LIGHT, 2.0), (DARK, 1.0)] {
        let s = |v: f32| v * unit;
        let mut sc = three_cards(theme, unit);
        // A drawn edge, and a curve of the same width without an arrowhead (an outline).
        sc.edge(
            &[
                Point::new(s(140.0), s(50.0)),
                Point::new(s(140.0), s(150.0)),
            ],
            unit,
        );
        sc.stroke(
            &s_curve(
                Point::new(s(160.0), s(50.0)),
                Point::new(s(320.0), s(150.0)),
            ),
            unit,
        );
        let r = sc.recover(Direction::Vertical).unwrap();
        let arrow = |to: &str| {
            r.edges
                .iter()
                .find(|e| e.to == to)
                .unwrap_or_else(|| panic!("an edge into {to} at unit {unit}: {:?}", r.edges))
                .arrowhead
        };
        assert_eq!(arrow("n1"), Some(true), "unit {unit}");
        assert_eq!(arrow("n2"), Some(false), "unit {unit}");
    }
}
