//! One scanner shared by 8 threads gives every thread the same graph as a single-threaded scan.

mod fixture_support;

use std::sync::Arc;

use netron_ocr_core::frame;
use netron_ocr_core::scanner::Scanner;

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
