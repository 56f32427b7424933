//! Image files: JPEG/PNG decoding, EXIF orientation, size limits, corrupt data.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::{ImageEncoder, Rgb, RgbImage};
use netron_ocr_core::frame::{decode_bytes, decode_file, FrameError, MAX_PIXELS};

fn two_tone(w: u32, h: u32) -> RgbImage {
    // Left half red, right half blue, a green top-left quadrant marker row.
    RgbImage::from_fn(w, h, |x, y| {
        if y < h / 4 && x < w / 2 {
            Rgb([0, 200, 0])
        } else if x < w / 2 {
            Rgb([220, 0, 0])
        } else {
            Rgb([0, 0, 220])
        }
    })
}

fn png(img: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    PngEncoder::new(&mut out)
        .write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            image::ExtendedColorType::Rgb8,
        )
        .unwrap();
    out
}

fn jpeg(img: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(Cursor::new(&mut out), 95)
        .write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            image::ExtendedColorType::Rgb8,
        )
        .unwrap();
    out
}

fn close(a: [u8; 3], b: [u8; 3], tol: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tol)
}

#[test]
fn png_round_trips_exactly() {
    let img = two_tone(31, 17);
    assert_eq!(decode_bytes(&png(&img)).unwrap(), img);
}

#[test]
fn jpeg_decodes_close() {
    let img = two_tone(64, 32);
    let out = decode_bytes(&jpeg(&img)).unwrap();
    assert_eq!(out.dimensions(), (64, 32));
    assert!(close(out.get_pixel(48, 16).0, [0, 0, 220], 12));
    assert!(close(out.get_pixel(8, 24).0, [220, 0, 0], 12));
}

/// A JPEG APP1 segment holding a big-endian TIFF header with a single Orientation (0x0112) entry.
fn exif_app1(orientation: u16) -> Vec<u8> {
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\0\x2a");
    tiff.extend_from_slice(&8u32.to_be_bytes()); // IFD0 offset
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // count
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]); // value padding
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut payload = b"Exif\0\0".to_vec();
    payload.extend_from_slice(&tiff);
    let mut seg = vec![0xFF, 0xE1];
    seg.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    seg.extend_from_slice(&payload);
    seg
}

fn with_exif(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    assert_eq!(&jpeg[..2], &[0xFF, 0xD8]);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&exif_app1(orientation));
    out.extend_from_slice(&jpeg[2..]);
    out
}

#[test]
fn exif_orientation_is_applied() {
    // 40×20: green block top-left, red left half, blue right half.
    let img = two_tone(40, 20);
    let plain = jpeg(&img);
    let green = [0, 200, 0];
    let red = [220, 0, 0];
    let blue = [0, 0, 220];
    let tol = 20;

    let o1 = decode_bytes(&with_exif(&plain, 1)).unwrap();
    assert_eq!(o1.dimensions(), (40, 20));
    assert!(close(o1.get_pixel(2, 1).0, green, tol));

    // 6: the stored image must be turned 90° clockwise: the left half ends up on top.
    let o6 = decode_bytes(&with_exif(&plain, 6)).unwrap();
    assert_eq!(o6.dimensions(), (20, 40));
    assert!(
        close(o6.get_pixel(17, 2).0, green, tol),
        "{:?}",
        o6.get_pixel(17, 2)
    );
    assert!(close(o6.get_pixel(5, 12).0, red, tol));
    assert!(close(o6.get_pixel(10, 35).0, blue, tol));

    // 3: 180°: the green block ends up bottom-right.
    let o3 = decode_bytes(&with_exif(&plain, 3)).unwrap();
    assert_eq!(o3.dimensions(), (40, 20));
    assert!(close(o3.get_pixel(37, 18).0, green, tol));
    assert!(close(o3.get_pixel(5, 10).0, blue, tol));

    // 8: 90° counter-clockwise: the left half ends up at the bottom, green bottom-left.
    let o8 = decode_bytes(&with_exif(&plain, 8)).unwrap();
    assert_eq!(o8.dimensions(), (20, 40));
    assert!(close(o8.get_pixel(2, 37).0, green, tol));
    assert!(close(o8.get_pixel(10, 5).0, blue, tol));
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    let mut typed = kind.to_vec();
    typed.extend_from_slice(body);
    out.extend_from_slice(&typed);
    out.extend_from_slice(&crc32(&typed).to_be_bytes());
    out
}

/// A PNG whose header claims `w × h` RGB, followed by a tiny (useless) IDAT.
fn png_header_only(w: u32, h: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(
        b"IDAT",
        &[0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    out.extend(chunk(b"IEND", &[]));
    out
}

#[test]
fn oversized_headers_are_rejected_before_decoding() {
    // Sanity: the hand-made PNG is well formed (a real 2×2 header just fails on the empty data).
    assert!(matches!(
        decode_bytes(&png_header_only(2, 2)),
        Err(FrameError::Decode(_))
    ));
    match decode_bytes(&png_header_only(8000, 7000)) {
        Err(FrameError::TooLarge {
            width: 8000,
            height: 7000,
            max_pixels,
        }) => assert_eq!(max_pixels, MAX_PIXELS),
        other => panic!("{other:?}"),
    }
    // Beyond the per-side limit of image::Limits.
    assert!(decode_bytes(&png_header_only(1_000_000, 10)).is_err());

    // A real JPEG with its SOF0 dimensions patched to 10000×6000.
    let mut j = jpeg(&two_tone(16, 16));
    let sof = j
        .windows(2)
        .position(|w| w == [0xFF, 0xC0])
        .expect("baseline SOF0");
    j[sof + 5..sof + 7].copy_from_slice(&6000u16.to_be_bytes());
    j[sof + 7..sof + 9].copy_from_slice(&10000u16.to_be_bytes());
    match decode_bytes(&j) {
        Err(FrameError::TooLarge {
            width: 10000,
            height: 6000,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn corrupt_and_truncated_data_give_typed_errors() {
    let p = png(&two_tone(64, 64));
    for cut in [p.len() / 2, 40, 20] {
        assert!(
            matches!(decode_bytes(&p[..cut]), Err(FrameError::Decode(_))),
            "png cut at {cut}"
        );
    }
    // Corrupt JPEG: SOI followed by garbage, and a JPEG whose SOF marker is destroyed.
    let garbage: Vec<u8> = [0xFF, 0xD8, 0xFF, 0xE0]
        .into_iter()
        .chain((0..500u32).map(|i| (i * 7 + 3) as u8))
        .collect();
    let r = decode_bytes(&garbage);
    assert!(matches!(r, Err(FrameError::Decode(_))), "{r:?}");
    let mut j = jpeg(&two_tone(16, 16));
    let sof = j.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    j[sof + 1] = 0x00;
    let r = decode_bytes(&j);
    assert!(matches!(r, Err(FrameError::Decode(_))), "{r:?}");
    // A JPEG cut inside its header.
    let j = jpeg(&two_tone(16, 16));
    assert!(matches!(
        decode_bytes(&j[..sof + 4]),
        Err(FrameError::Decode(_))
    ));
    // Not an image at all, and an empty buffer.
    assert!(matches!(
        decode_bytes(b"GIF89a not supported here"),
        Err(FrameError::UnsupportedFormat(_))
    ));
    assert!(matches!(
        decode_bytes(b"hello world, no image"),
        Err(FrameError::UnsupportedFormat(_))
    ));
    assert!(matches!(
        decode_bytes(&[]),
        Err(FrameError::UnsupportedFormat(_))
    ));
}

#[test]
fn decode_file_reads_and_reports_io_errors() {
    let dir = std::env::temp_dir().join(format!("netron-ocr-frame-decode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.png");
    let img = two_tone(9, 5);
    std::fs::write(&path, png(&img)).unwrap();
    assert_eq!(decode_file(&path).unwrap(), img);
    let jpath = dir.join("b.jpg");
    std::fs::write(&jpath, with_exif(&jpeg(&two_tone(40, 20)), 6)).unwrap();
    assert_eq!(decode_file(&jpath).unwrap().dimensions(), (20, 40));
    assert!(matches!(
        decode_file(&dir.join("missing.png")),
        Err(FrameError::Io(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}
