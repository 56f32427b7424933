//! Input and output boxes on the committed fixture scenes (`tests/fixtures/scenes`): promotion of those that read
//! as operators to node cards (`ScanParams::port_as_node_confidence`, `ScanParams::op_named_ports_are_nodes`),
//! relabelling of those that read as shapes
//! (`ScanParams::shape_text_ports_are_labels`), and dropping those that no edge joins
//! (`ScanParams::unconnected_port_min_confidence`, `ScanParams::drop_unconnected_glyph_ports`), and cards that are
//! output pills (`ScanParams::named_sinks_are_outputs`).

mod fixture_support;

use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::graph::{parse_shape_text, BBox, GraphJson, Port};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

/// Without the confidence calibration, so that a promoted port keeps the classifier's op
/// (`tests/pipeline_calibration.rs` covers the marks calibration adds), nor the header-only fallback for titles
/// that name no operator (a pill's tensor name, read as a promoted card's title, names none;
/// `tests/pipeline_names.rs`), and keeping unconnected ports and those that read as rows, so that every port
/// either stays one or becomes a node, and promoting by the classifier alone.
fn scanner(models: &ModelSet, port_as_node_confidence: Option<f32>) -> Scanner {
    let params = ScanParams {
        port_as_node_confidence,
        op_named_ports_are_nodes: false,
        name_titles_min_reading: None,
        calibration: CalibrationParams::none(),
        unconnected_port_min_confidence: None,
        drop_row_text_ports: false,
        ..ScanParams::default()
    };
    Scanner::with_params(models, params).expect("scanner")
}

fn ports(g: &GraphJson) -> usize {
    g.inputs.len() + g.outputs.len()
}

/// A name of one character or only digits (`ScanParams::drop_unconnected_glyph_ports`).
fn is_glyph(name: &str) -> bool {
    name.chars().count() <= 1 || name.chars().all(|c| c.is_ascii_digit())
}

fn joined(p: &Port, g: &GraphJson) -> bool {
    g.edges.iter().any(|e| e.from == p.id || e.to == p.id)
}

#[test]
fn ports_are_promoted_only_above_the_threshold_and_none_is_lost() {
    let models = ModelSet::bundled().expect("bundled models load");
    let (never, unreachable, always, default) = (
        scanner(&models, None),
        scanner(&models, Some(1.5)),
        scanner(&models, Some(0.0)),
        scanner(&models, ScanParams::default().port_as_node_confidence),
    );
    let (mut ports_seen, mut promoted_at_zero) = (0, 0);
    for scene in fixture_support::scenes() {
        let scan = |s: &Scanner| s.scan_file(&scene.image_path).expect("scan succeeds").graph;
        let kept = scan(&never);
        ports_seen += ports(&kept);

        // A threshold no probability reaches changes nothing.
        assert_eq!(scan(&unreachable), kept);

        // At 0 every port the classifier names (probability >= its min_confidence) becomes a node, appended
        // after the detected cards with its op; nothing else changes in number.
        let all = scan(&always);
        let promoted = all.nodes.len() - kept.nodes.len();
        promoted_at_zero += promoted;
        assert_eq!(promoted, ports(&kept) - ports(&all));
        assert_eq!(all.nodes[..kept.nodes.len()], kept.nodes[..]);
        assert!(all.nodes[kept.nodes.len()..].iter().all(|n| n.op.is_some()));
        assert!(all.check().is_empty(), "{:?}", all.check());

        // The default promotes at most as many.
        let d = scan(&default);
        assert!(d.nodes.len() >= kept.nodes.len() && d.nodes.len() <= all.nodes.len());
        eprintln!(
            "{}: {} ports; promoted at threshold 0: {promoted}, at the default: {}",
            scene.image_path.display(),
            ports(&kept),
            d.nodes.len() - kept.nodes.len()
        );
    }
    assert!(
        ports_seen >= 10,
        "the fixtures' ports are detected ({ports_seen})"
    );
    assert!(
        promoted_at_zero > 0,
        "threshold 0 promotes some port on the fixtures"
    );
}

#[test]
fn ports_named_as_operators_become_nodes_and_none_is_lost() {
    let models = ModelSet::bundled().expect("bundled models load");
    let vocab = netron_ocr_core::vocab::Vocab::bundled().expect("vocabulary");
    let with = |by_name: bool| {
        let params = ScanParams {
            port_as_node_confidence: None,
            op_named_ports_are_nodes: by_name,
            unconnected_port_min_confidence: None,
            calibration: CalibrationParams::none(),
            ..ScanParams::default()
        };
        Scanner::with_params(&models, params).expect("scanner")
    };
    let (off, on) = (with(false), with(true));
    let mut total = 0;
    let scenes = fixture_support::scenes();
    for scene in scenes.iter().chain(&fixture_support::port_scenes()) {
        let a = off.scan_file(&scene.image_path).expect("scan").graph;
        let b = on.scan_file(&scene.image_path).expect("scan").graph;
        let what = scene.image_path.display();
        let named = |p: &&netron_ocr_core::graph::Port| vocab.index_of(&p.name).is_some();
        let promoted = a.inputs.iter().chain(&a.outputs).filter(named).count();
        total += promoted;
        assert_eq!(b.nodes.len(), a.nodes.len() + promoted, "{what}");
        assert_eq!(b.nodes[..a.nodes.len()], a.nodes[..], "{what}");
        assert_eq!(ports(&b), ports(&a) - promoted, "{what}");
        assert!(
            !b.inputs.iter().chain(&b.outputs).any(|p| named(&p)),
            "{what}"
        );
        let moved: Vec<_> = a
            .inputs
            .iter()
            .chain(&a.outputs)
            .filter(named)
            .map(|p| p.bbox)
            .collect();
        let added: Vec<_> = b.nodes[a.nodes.len()..].iter().map(|n| n.bbox).collect();
        assert_eq!(added, moved, "{what}");
        assert!(b.check().is_empty(), "{what}: {:?}", b.check());
    }
    // The session-31 detector takes fewer cards for pills than the one the fixtures were chosen with (2): one
    // case is left, enough for the rule to be exercised.
    assert!(
        total >= 1,
        "the port fixtures' cards read as pills are named ({total})"
    );
}

#[test]
fn ports_read_as_shapes_become_labels_and_none_is_lost() {
    let models = ModelSet::bundled().expect("bundled models load");
    let with = |relabel: bool| {
        let params = ScanParams {
            shape_text_ports_are_labels: relabel,
            unconnected_port_min_confidence: None,
            op_named_ports_are_nodes: false,
            drop_row_text_ports: false,
            ..ScanParams::default()
        };
        Scanner::with_params(&models, params).expect("scanner")
    };
    let (kept, relabelled) = (with(false), with(true));
    for scene in fixture_support::scenes() {
        let a = kept.scan_file(&scene.image_path).expect("scan").graph;
        let b = relabelled.scan_file(&scene.image_path).expect("scan").graph;
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(
            a.tensors.len() + ports(&a),
            b.tensors.len() + ports(&b),
            "{}",
            scene.image_path.display()
        );
        for port in b.inputs.iter().chain(&b.outputs) {
            let name = &port.name;
            assert!(
                !(name.contains('×') && parse_shape_text(name).is_some()),
                "{name}"
            );
        }
    }
}

#[test]
fn ports_without_an_edge_are_dropped_unless_sure_and_nothing_else_changes() {
    let models = ModelSet::bundled().expect("bundled models load");
    let with = |min: Option<f32>| {
        let params = ScanParams {
            unconnected_port_min_confidence: min,
            ..ScanParams::default()
        };
        Scanner::with_params(&models, params).expect("scanner")
    };
    // Kept all, dropped all (no confidence reaches 1.01) and the default.
    let (keep, drop, default) = (
        with(None),
        with(Some(1.01)),
        with(ScanParams::default().unconnected_port_min_confidence),
    );
    let mut dropped = 0;
    for scene in fixture_support::scenes() {
        let a = keep.scan_file(&scene.image_path).expect("scan").graph;
        let b = drop.scan_file(&scene.image_path).expect("scan").graph;
        let c = default.scan_file(&scene.image_path).expect("scan").graph;
        let what = scene.image_path.display();
        assert_eq!(a.nodes, b.nodes, "{what}");
        assert_eq!(a.tensors, b.tensors, "{what}");
        assert_eq!(a.edges.len(), b.edges.len(), "{what}");
        assert!(b.check().is_empty(), "{what}: {:?}", b.check());
        for (kept, sure, all) in [
            (&b.inputs, &c.inputs, &a.inputs),
            (&b.outputs, &c.outputs, &a.outputs),
        ] {
            // Dropping all: the ports of `a` with an edge, in order, under new ids.
            let with_edge: Vec<_> = all
                .iter()
                .filter(|p| joined(p, &a))
                .map(|p| (&p.name, p.bbox))
                .collect();
            let names: Vec<_> = kept.iter().map(|p| (&p.name, p.bbox)).collect();
            assert_eq!(names, with_edge, "{what}");
            assert!(kept.iter().all(|p| joined(p, &b)), "{what}");
            // The default keeps those and the unconnected ones that read surely, unless their name is one
            // character or only digits.
            let expected: Vec<_> = all
                .iter()
                .filter(|p| joined(p, &a) || (p.confidence >= 0.95 && !is_glyph(&p.name)))
                .map(|p| (&p.name, p.bbox))
                .collect();
            let names: Vec<_> = sure.iter().map(|p| (&p.name, p.bbox)).collect();
            assert_eq!(names, expected, "{what}");
            dropped += all.len() - kept.len();
        }
        // The same edges, their port ends renamed.
        for (ea, eb) in a.edges.iter().zip(&b.edges) {
            assert_eq!(ea.tensor, eb.tensor, "{what}");
            assert_eq!(ea.points, eb.points, "{what}");
        }
    }
    eprintln!("ports without an edge on the fixtures: {dropped}");
}

#[test]
fn a_toolbar_button_taken_for_a_pill_is_dropped() {
    let models = ModelSet::bundled().expect("bundled models load");
    // The button pill `C` reads at a calibrated confidence of about 0.95, the default
    // `unconnected_port_min_confidence`: over it on the machines of sessions 30–34, 0.9489 on session 35's (the
    // float kernels differ between CPUs). At 0.9 it is sure on any of them, so that the glyph rule alone decides.
    let scan = |drop_glyphs: bool| {
        let params = ScanParams {
            drop_unconnected_glyph_ports: drop_glyphs,
            unconnected_port_min_confidence: Some(0.9),
            ..ScanParams::default()
        };
        let scanner = Scanner::with_params(&models, params).expect("scanner");
        let scene = fixture_support::toolbar_scene();
        scanner.scan_file(&scene.image_path).expect("scan").graph
    };
    let truth = fixture_support::toolbar_scene().truth();
    let (kept, dropped) = (scan(false), scan(true));
    let strays = |g: &GraphJson| -> Vec<Port> {
        (g.inputs.iter().chain(&g.outputs))
            .filter(|p| !joined(p, g) && is_glyph(&p.name))
            .cloned()
            .collect()
    };
    // Without the rule, a button of the toolbar at the lower left stays a sure, unconnected pill that matches no
    // true input or output.
    let found = strays(&kept);
    assert!(!found.is_empty(), "no stray pill: {:?}", kept.outputs);
    for p in &found {
        let matched =
            (truth.inputs.iter().chain(&truth.outputs)).any(|t| t.bbox.iou(&p.bbox) >= 0.5);
        assert!(!matched, "{p:?} is a true port");
        assert!(
            p.bbox.y0 > 0.8 * kept.image.height as f32,
            "{p:?} is not in the toolbar"
        );
    }
    // With it, only those pills go.
    assert!(strays(&dropped).is_empty(), "{:?}", strays(&dropped));
    assert_eq!(dropped.nodes, kept.nodes);
    assert_eq!(dropped.tensors, kept.tensors);
    assert_eq!(dropped.edges.len(), kept.edges.len());
    assert_eq!(ports(&dropped) + found.len(), ports(&kept));
    assert!(dropped.check().is_empty(), "{:?}", dropped.check());
}

/// The committed image, then copies of it shifted by one or two pixels (the first columns or rows dropped): what
/// a view gives moves with the pixel grid (`models/METRICS.md`, session 48), so bounds are held over all of them.
const SHIFTS: [(u32, u32); 6] = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)];

#[test]
fn output_pills_taken_for_cards_become_outputs_with_their_edges() {
    let models = ModelSet::bundled().expect("bundled models load");
    let scanner = |sinks: Option<f32>| {
        let params = ScanParams {
            named_sinks_are_outputs: sinks,
            debug: true,
            ..ScanParams::default()
        };
        Scanner::with_params(&models, params).expect("scanner")
    };
    let (without, with) = (
        scanner(None),
        scanner(ScanParams::default().named_sinks_are_outputs),
    );
    for scene in fixture_support::sink_scenes() {
        let truth = scene.truth();
        assert_eq!(truth.outputs.len(), 5);
        let image = scene.image();
        let (mut found_with, mut found_without, mut exact_names) = (0, 0, 0);
        for (dx, dy) in SHIFTS {
            let what = format!("{} shifted by ({dx}, {dy})", scene.name);
            let shifted =
                image::imageops::crop_imm(&image, dx, dy, image.width() - dx, image.height() - dy)
                    .to_image();
            let scan = |s: &Scanner| s.scan_rgb(&shifted).expect("scan");
            let (kept, with_result) = (scan(&without).graph, scan(&with));
            // The debug output's titles follow the nodes that stay cards.
            let debug = with_result.debug.expect("debug output");
            let moved = with_result.graph;
            assert_eq!(debug.title_boxes.len(), moved.nodes.len(), "{what}");
            assert_eq!(debug.titles.reads.len(), moved.nodes.len(), "{what}");
            assert_eq!(debug.titles.names.len(), moved.nodes.len(), "{what}");
            let true_output = |p: &Port| {
                let (dx, dy) = (dx as f32, dy as f32);
                let b = &p.bbox;
                let b = BBox::new(b.x0 + dx, b.y0 + dy, b.x1 + dx, b.y1 + dy);
                truth.outputs.iter().find(|t| t.bbox.iou(&b) >= 0.5)
            };
            let found = |g: &GraphJson| {
                g.outputs
                    .iter()
                    .filter(|p| true_output(p).is_some())
                    .count()
            };
            // The rule never loses an output the detector found as one.
            assert!(found(&moved) >= found(&kept), "{what}: {:?}", moved.outputs);
            // With it no output is false, each is fed by an edge, and the cards that became outputs leave the
            // nodes.
            assert_eq!(
                found(&moved),
                moved.outputs.len(),
                "{what}: {:?}",
                moved.outputs
            );
            assert!(moved.outputs.iter().all(|p| joined(p, &moved)), "{what}");
            let turned = moved.outputs.len() - kept.outputs.len();
            assert_eq!(moved.nodes.len() + turned, kept.nodes.len(), "{what}");
            assert_eq!(moved.edges.len(), kept.edges.len(), "{what}");
            assert!(moved.check().is_empty(), "{:?}", moved.check());
            found_with += found(&moved);
            found_without += found(&kept);
            exact_names += (moved.outputs.iter())
                .filter(|p| true_output(p).is_some_and(|t| t.name == p.name))
                .count();
            eprintln!(
                "{what}: {} of 5 outputs with the rule, {} without",
                found(&moved),
                found(&kept)
            );
        }
        // Without the rule the detector's cards stay cards: at most two of the five outputs are found on average
        // over the shifts. With it, at least four are; on the screenshot most names read exactly.
        let views = SHIFTS.len();
        assert!(
            found_without <= 2 * views,
            "{}: {found_without} outputs in {views} views",
            scene.name
        );
        assert!(
            found_with >= 4 * views,
            "{}: {found_with} outputs in {views} views",
            scene.name
        );
        if scene.kind == "shot" {
            assert!(
                exact_names >= 4 * views,
                "{}: {exact_names} names exact",
                scene.name
            );
        }
    }
}
