//! Promotion of input/output boxes that read as operators to node cards
//! (`ScanParams::port_as_node_confidence`), on the committed fixture scenes (`tests/fixtures/scenes`).

mod fixture_support;

use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::graph::{parse_shape_text, GraphJson};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

/// Without the confidence calibration, so that a promoted port keeps the classifier's op
/// (`tests/pipeline_calibration.rs` covers the marks calibration adds).
fn scanner(models: &ModelSet, port_as_node_confidence: Option<f32>) -> Scanner {
    let params = ScanParams {
        port_as_node_confidence,
        calibration: CalibrationParams::none(),
        ..ScanParams::default()
    };
    Scanner::with_params(models, params).expect("scanner")
}

fn ports(g: &GraphJson) -> usize {
    g.inputs.len() + g.outputs.len()
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
fn ports_read_as_shapes_become_labels_and_none_is_lost() {
    let models = ModelSet::bundled().expect("bundled models load");
    let with = |relabel: bool| {
        let params = ScanParams {
            shape_text_ports_are_labels: relabel,
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
