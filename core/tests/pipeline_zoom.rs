//! The detector's second, zoomed pass (`DetectParams::zoom`) on a committed dense view (`tests/fixtures/dense`): a
//! large random graph filling the window, whose cards the first pass sees at about 10 input px.

mod fixture_support;

use netron_ocr_core::eval::{evaluate, Metrics};
use netron_ocr_core::graph::GraphJson;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

fn true_boxes(m: &Metrics) -> usize {
    m.boxes.iter().map(|c| c.tp).sum()
}

#[test]
fn the_zoomed_pass_runs_on_a_dense_view_and_finds_more_of_it() {
    let models = ModelSet::bundled().expect("bundled models load");
    let debug = ScanParams {
        debug: true,
        ..ScanParams::default()
    };
    let mut one_pass = debug.clone();
    one_pass.detect.zoom = None;
    let (zoomed, single) = (
        Scanner::with_params(&models, debug).expect("scanner"),
        Scanner::with_params(&models, one_pass).expect("scanner"),
    );
    let dir = fixture_support::repo().join("tests/fixtures/dense");
    for (image, truth) in [
        ("000104.shot.png", "000104.shot.json"),
        ("000104.photo.jpg", "000104.photo.json"),
    ] {
        let text = std::fs::read_to_string(dir.join(truth)).expect("truth");
        let truth = GraphJson::from_json(&text).expect("truth parses");
        let (a, b) = (
            zoomed.scan_file(&dir.join(image)).expect("scan"),
            single.scan_file(&dir.join(image)).expect("scan"),
        );
        let (da, db) = (a.debug.expect("debug"), b.debug.expect("debug"));
        assert!(
            !da.detect.first_pass_tiles.is_empty(),
            "{image}: no second pass"
        );
        assert!(db.detect.first_pass_tiles.is_empty());
        // The second pass cuts finer tiles than the first.
        assert!(da.detect.tiles.len() > da.detect.first_pass_tiles.len());
        let (ma, mb) = (evaluate(&a.graph, &truth), evaluate(&b.graph, &truth));
        eprintln!(
            "{image}: true boxes {} → {}, labels {:?} → {:?}, edges {:?} → {:?}",
            true_boxes(&mb),
            true_boxes(&ma),
            mb.boxes[1],
            ma.boxes[1],
            mb.edges,
            ma.edges
        );
        // Session 32's detector finds more in the first pass (51 of the screenshot's true boxes, against 60
        // zoomed), and the zoomed screenshot misses one edge of 32 that the single pass found.
        assert!(
            true_boxes(&ma) >= true_boxes(&mb) + 5,
            "{image}: {} true boxes zoomed, {} in one pass",
            true_boxes(&ma),
            true_boxes(&mb)
        );
        assert!(ma.edges.tp + 1 >= mb.edges.tp, "{image}");
        assert!(a.graph.check().is_empty(), "{:?}", a.graph.check());
    }
}
