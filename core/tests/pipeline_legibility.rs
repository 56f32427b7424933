//! The scan's text height (`ScanResult::text_height`) and its advisory `ZoomIn` hint
//! (`ScanParams::min_text_height`) on committed fixtures whose text is drawn at 5–35 source px.

mod fixture_support;

use netron_ocr_core::graph::{BBox, GraphJson};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::quality::Hint;
use netron_ocr_core::scanner::{text_height, ScanParams, Scanner};

/// Median height of the truth's tensor-label boxes, source px.
fn true_label_height(truth: &GraphJson) -> f32 {
    let mut h: Vec<f32> = truth
        .tensors
        .iter()
        .map(|t| t.bbox.y1 - t.bbox.y0)
        .collect();
    h.sort_by(f32::total_cmp);
    assert!(h.len() >= 3, "fixture has too few labels");
    h[h.len() / 2]
}

#[test]
fn text_height_is_the_label_share_of_the_median_title() {
    let b = |h: f32| BBox::new(10.0, 100.0, 90.0, 100.0 + h);
    assert_eq!(text_height(&[]), None);
    let h = text_height(&[b(20.0), b(40.0), b(18.0)]).expect("height");
    assert!((h - 0.55 * 20.0).abs() < 1e-4, "{h}");
    // Even counts take the mean of the middle two.
    let h = text_height(&[b(10.0), b(30.0), b(20.0), b(100.0)]).expect("height");
    assert!((h - 0.55 * 25.0).abs() < 1e-4, "{h}");
}

#[test]
fn small_text_gets_the_zoom_in_hint_and_large_text_does_not() {
    let models = ModelSet::bundled().expect("bundled models load");
    let scanner = Scanner::with_params(&models, ScanParams::default()).expect("scanner");
    let never = Scanner::with_params(
        &models,
        ScanParams {
            min_text_height: None,
            ..ScanParams::default()
        },
    )
    .expect("scanner");
    let repo = fixture_support::repo();
    // (image, truth); the truth's median label heights are 7.0, 5.3, 7.4, 14.9, 14.6 and 34.6 px.
    let cases = [
        (
            "tests/fixtures/dense/000104.photo.jpg",
            "tests/fixtures/dense/000104.photo.json",
        ),
        (
            "tests/fixtures/dense/000104.shot.png",
            "tests/fixtures/dense/000104.shot.json",
        ),
        (
            "tests/fixtures/scenes/000001.photo.jpg",
            "tests/fixtures/scenes/000001.photo.json",
        ),
        (
            "tests/fixtures/scenes/000000.photo.jpg",
            "tests/fixtures/scenes/000000.photo.json",
        ),
        (
            "tests/fixtures/scenes/000000.shot.png",
            "tests/fixtures/scenes/000000.shot.json",
        ),
        (
            "tests/fixtures/scenes/000002.photo.jpg",
            "tests/fixtures/scenes/000002.photo.json",
        ),
    ];
    for (image, truth) in cases {
        let truth =
            GraphJson::from_json(&std::fs::read_to_string(repo.join(truth)).expect("truth"))
                .expect("truth parses");
        let expected = true_label_height(&truth);
        let r = scanner.scan_file(&repo.join(image)).expect("scan");
        let h = r.text_height.expect("a graph was found, so a text height");
        eprintln!(
            "{image}: text height {h:.1} px, truth {expected:.1}; hints {:?}",
            r.quality.hints
        );
        assert!(
            (h / expected - 1.0).abs() < 0.2,
            "{image}: text height {h:.1} px, truth labels {expected:.1} px"
        );
        let zoom_in = r.quality.hints.contains(&Hint::ZoomIn);
        assert_eq!(
            zoom_in,
            expected < 9.0,
            "{image}: {h:.1} px, hints {:?}",
            r.quality.hints
        );
        // The hint is advice: the graph and the gate's verdict are the same without it.
        let plain = never.scan_file(&repo.join(image)).expect("scan");
        assert!(!plain.quality.hints.contains(&Hint::ZoomIn));
        assert_eq!(plain.quality.accept, r.quality.accept);
        assert_eq!(plain.graph.to_json().unwrap(), r.graph.to_json().unwrap());
        let mut hints = r.quality.hints.clone();
        hints.retain(|h| *h != Hint::ZoomIn);
        assert_eq!(hints, plain.quality.hints);
    }
}

#[test]
fn an_image_without_a_graph_has_no_text_height() {
    let scanner = Scanner::new().expect("scanner");
    let r = scanner
        .scan_file(&fixture_support::repo().join("tests/fixtures/non_netron/noise.jpg"))
        .expect("scan");
    assert!(r.graph.nodes.is_empty());
    assert_eq!(r.text_height, None);
    assert!(!r.quality.hints.contains(&Hint::ZoomIn));
}
