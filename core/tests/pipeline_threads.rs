//! One scanner shared by 8 threads gives every thread the same graph as a single-threaded scan, and a scan's
//! own threads (`ScanParams::set_threads`) do not change its graph.

mod fixture_support;

use std::sync::Arc;

use netron_ocr_core::frame;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};

#[test]
fn eight_threads_share_one_scanner() {
    let scanner = Arc::new(Scanner::new().expect("bundled models load"));
    let scenes = fixture_support::scenes_dir();
    let images: Vec<_> = ["000000.shot.png", "000002.photo.jpg"]
        .iter()
        .map(|n| Arc::new(frame::decode_file(&scenes.join(n)).unwrap()))
        .collect();
    let reference: Vec<String> = images
        .iter()
        .map(|img| scanner.scan_rgb(img).unwrap().graph.to_json().unwrap())
        .collect();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let scanner = Arc::clone(&scanner);
            let img = Arc::clone(&images[t % images.len()]);
            std::thread::spawn(move || scanner.scan_rgb(&img).map(|r| r.graph.to_json().unwrap()))
        })
        .collect();
    for (t, h) in handles.into_iter().enumerate() {
        let got = h
            .join()
            .expect("thread did not panic")
            .expect("scan succeeds");
        assert_eq!(got, reference[t % images.len()], "thread {t}");
    }
}

/// Spreading one scan's tiles, titles and texts over threads (`ScanParams::set_threads`) changes nothing in the
/// graph: the fixture scenes and the dense view (whose detector takes the zoomed second pass, many tiles) scan
/// to the same JSON on one thread and on three.
#[test]
fn a_scan_is_the_same_on_one_thread_and_on_three() {
    let at = |threads| {
        let mut params = ScanParams::default();
        params.set_threads(threads);
        Scanner::with_params(&ModelSet::bundled().unwrap(), params).unwrap()
    };
    let (one, three) = (at(1), at(3));
    let scenes = fixture_support::scenes();
    let dense = fixture_support::dense_scenes();
    for scene in scenes.iter().take(2).chain(&dense) {
        let image = scene.image();
        let a = one.scan_rgb(&image).unwrap();
        let b = three.scan_rgb(&image).unwrap();
        assert!(!a.graph.nodes.is_empty(), "{}", scene.name);
        assert_eq!(
            a.graph.to_json().unwrap(),
            b.graph.to_json().unwrap(),
            "{}",
            scene.name
        );
    }
}
