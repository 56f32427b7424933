//! Bad input gives typed errors, never a panic.

use std::path::Path;

use image::RgbImage;
use netron_ocr_core::frame::{FrameError, FrameInfo, PixelFormat, Rotation};
use netron_ocr_core::scanner::Scanner;
use netron_ocr_core::ScanError;

#[test]
fn wrong_buffer_size_is_a_frame_error() {
    let scanner = Scanner::new().unwrap();
    let info = FrameInfo::tight(PixelFormat::Rgba8, 64, 48, Rotation::R0);
    let short = vec![0u8; 64 * 48 * 4 - 1];
    let err = scanner.scan_frame(&short, &info).unwrap_err();
    assert!(
        matches!(err, ScanError::Frame(FrameError::BufferTooShort { .. })),
        "{err:?}"
    );
}

#[test]
fn a_raw_frame_scans() {
    // A flat grey frame: decodes, passes through the pipeline, gives an empty or valid graph.
    let scanner = Scanner::new().unwrap();
    let info = FrameInfo::tight(PixelFormat::Rgba8, 64, 48, Rotation::R90);
    let data = vec![128u8; 64 * 48 * 4];
    let r = scanner.scan_frame(&data, &info).unwrap();
    assert_eq!(
        (r.graph.image.width, r.graph.image.height),
        (48, 64),
        "rotation applied"
    );
    assert!(r.graph.check().is_empty());
}

#[test]
fn an_empty_image_is_an_input_error() {
    let scanner = Scanner::new().unwrap();
    let err = scanner.scan_rgb(&RgbImage::new(0, 0)).unwrap_err();
    assert!(matches!(err, ScanError::Input { .. }), "{err:?}");
}

#[test]
fn a_missing_or_bad_file_is_a_frame_error() {
    let scanner = Scanner::new().unwrap();
    let err = scanner
        .scan_file(Path::new("/nonexistent/netron.png"))
        .unwrap_err();
    assert!(
        matches!(err, ScanError::Frame(FrameError::Io(_))),
        "{err:?}"
    );
    let err = scanner.scan_bytes(b"GIF89a not an image").unwrap_err();
    assert!(matches!(err, ScanError::Frame(_)), "{err:?}");
}

#[test]
fn tiny_images_do_not_panic() {
    let scanner = Scanner::new().unwrap();
    for (w, h) in [(1, 1), (1, 300), (300, 1), (7, 5)] {
        let r = scanner
            .scan_rgb(&RgbImage::from_pixel(w, h, image::Rgb([255, 255, 255])))
            .unwrap();
        assert!(r.graph.check().is_empty(), "{w}x{h}");
    }
}
