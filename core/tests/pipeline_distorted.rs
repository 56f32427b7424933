//! Distorted views of real fixture scenes (scaled far down or up, stretched, rotated, mirrored, inverted, tiled,
//! cut to slivers, thresholded, blurred, salted, scribbled over, blanked) go through the whole pipeline without a
//! panic, and every answer is a valid graph; a blank frame gets no graph. `examples/stress_sweep.rs` runs the same
//! distortions over every fixture and reports what each scan found.

mod distortions;

use std::path::Path;

use distortions::{distort, Rng, DISTORTIONS};
use netron_ocr_core::frame;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};
use netron_ocr_core::ScanError;

#[test]
fn distorted_views_give_valid_graphs_or_input_errors() {
    let models = ModelSet::bundled().expect("bundled models load");
    let scanner = Scanner::with_params(&models, ScanParams::default()).expect("scanner");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scenes");
    let mut rng = Rng::new(0x5eed_2026_1206);
    for name in ["000003.photo.jpg", "000001.shot.png"] {
        let img = frame::decode_file(&dir.join(name)).expect("fixture decodes");
        for distortion in DISTORTIONS {
            let input = distort(&img, distortion, &mut rng);
            let what = format!("{name} {distortion} {}x{}", input.width(), input.height());
            match scanner.scan_rgb(&input) {
                Ok(r) => {
                    assert!(r.graph.check().is_empty(), "{what}: {:?}", r.graph.check());
                    if *distortion == "identity" {
                        assert!(
                            !r.graph.nodes.is_empty(),
                            "{what}: the undistorted scene has nodes"
                        );
                    }
                    if *distortion == "flat_black" {
                        assert!(
                            r.graph.nodes.is_empty() && r.graph.edges.is_empty(),
                            "{what}"
                        );
                    }
                }
                Err(ScanError::Input { .. }) => {}
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
}
