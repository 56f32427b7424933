//! Pictures without a Netron graph (`tests/fixtures/non_netron/`: a text page, a desktop screenshot, noise, a
//! photo-like scene, a web app's page of coloured buttons and tags) must give an empty graph at the default
//! parameters, with a canvas confidence below the scanner's threshold: nothing invented. The app page is the hard
//! one: a solid rounded box with a word in it is also how Netron draws a node without parameters, and the cropper
//! takes the page for a canvas (0.93), so only the detector's graph evidence can refuse it.
//!
//! Two more are screens of `models/train/render_negatives.py` (never trained on: its training seed is 606):
//! `forms_photo.jpg` is view 40 of the evaluation set NEG (`--seed 707`, the simulated photo) and `forms.png` view 12
//! of NEG2 (`--seed 808`, the screenshot). Their form fields and numbers read as cards and tensor labels, and
//! the labels bridge a few of those cards (`edges::bridge_labels`): before `ScanParams::min_bridged_share` both
//! came back as graphs of 21 and 10 cards.
//!
//! Two more are not refused at the default parameters (an open problem, `models/METRICS.md`, session 36): their
//! strokes are traced as edges. `panels.png` (view 59 of NEG2, the screenshot) has a panel's border running from
//! one field taken for a card into another, and `chips_photo.jpg` (view 54 of NEG4, `--seed 1010`, the photo) has
//! outlined rounded chips whose outlines curve from chip to chip. Neither stroke ends in an arrowhead, as all of
//! Netron's edges do: with the option `ScanParams::traced_needs_arrowhead` both give no graph; without it, graphs
//! of 7 and 13 cards.

use std::path::Path;

use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

#[test]
fn non_netron_images_give_no_nodes() {
    let scanner = Scanner::new().expect("bundled models load");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/non_netron");
    let mut invented = Vec::new();
    for name in [
        "document.png",
        "desktop.png",
        "noise.jpg",
        "scene.jpg",
        "app.png",
        "forms_photo.jpg",
        "forms.png",
    ] {
        let r = scanner.scan_file(&dir.join(name)).expect("scan succeeds");
        let g = &r.graph;
        eprintln!(
            "{name}: canvas confidence {:.3}, {} nodes, {} tensors, {} inputs, {} outputs, {} edges",
            g.canvas.confidence,
            g.nodes.len(),
            g.tensors.len(),
            g.inputs.len(),
            g.outputs.len(),
            g.edges.len()
        );
        for n in &g.nodes {
            eprintln!(
                "  node score {:.3} op {:?} ({:.3})",
                n.confidence, n.op, n.op_confidence
            );
        }
        assert!(g.check().is_empty());
        if !g.nodes.is_empty()
            || !g.edges.is_empty()
            || g.canvas.confidence >= ScanParams::default().min_canvas_confidence
        {
            invented.push(name);
        }
    }
    assert!(
        invented.is_empty(),
        "graph (or a confident canvas) invented on {invented:?}"
    );
}

#[test]
fn strokes_without_arrowheads_are_no_evidence_of_a_graph_with_the_option() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/non_netron");
    let models = ModelSet::bundled().expect("bundled models load");
    let scanner = |traced_needs_arrowhead| {
        Scanner::with_params(
            &models,
            ScanParams {
                traced_needs_arrowhead,
                ..ScanParams::default()
            },
        )
        .expect("scanner")
    };
    let (on, off) = (scanner(true), scanner(false));
    for name in ["panels.png", "chips_photo.jpg"] {
        let path = dir.join(name);
        let with = on.scan_file(&path).expect("scan succeeds").graph;
        assert!(
            g_is_empty(&with),
            "{name}: {} nodes, {} edges",
            with.nodes.len(),
            with.edges.len()
        );
        // The option is what refuses them: with every traced edge counted their strokes join enough cards.
        let without = off.scan_file(&path).expect("scan succeeds").graph;
        eprintln!(
            "{name} without the option: {} nodes, {} edges",
            without.nodes.len(),
            without.edges.len()
        );
        assert!(
            !without.nodes.is_empty() && !without.edges.is_empty(),
            "{name}"
        );
    }
}

fn g_is_empty(g: &netron_ocr_core::graph::GraphJson) -> bool {
    g.nodes.is_empty() && g.edges.is_empty() && g.inputs.is_empty() && g.outputs.is_empty()
}
