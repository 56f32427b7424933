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
//! `panels.png` (view 59 of NEG2, the screenshot) has a panel's border running from one field taken for a card into
//! another. With the cropper before session 50 its strokes were traced as edges and a graph of 7 cards came back at
//! the default parameters; the session-46 cropper (shipped in session 50) gives it a canvas confidence of 0.1.
//!
//! Still an open problem (`models/METRICS.md`, session 50), so not asserted here: `chips_photo.jpg` (view 54 of
//! NEG4, `--seed 1010`, the photo), a page of outlined rounded chips beside a column of form fields, comes back as
//! a graph of 11 cards. Four tensor labels read in the fields bridge six of them (`edges::bridge_labels`), over
//! the share that `ScanParams::min_bridged_share` asks of bridged edges. With the earlier cropper its chips'
//! outlines were traced as edges without arrowheads, which `ScanParams::traced_needs_arrowhead` (off by default)
//! refused; bridged edges have no stroke for that option to look at.

use std::path::Path;

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
        "panels.png",
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
