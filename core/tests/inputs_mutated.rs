//! Seeded mutations of valid inputs: corrupted image files and camera frames with random geometry must give a
//! typed error or an image, never a panic, a huge allocation or a hang; a corrupted photo that still decodes
//! scans to a valid graph or a typed error.
//!
//! Each case is derived from one `u64` seed, and a failure names the seed. `NETRON_MUTATIONS=N` runs `N` cases
//! per test instead of the default (a longer search; CI runs the default).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use netron_ocr_core::frame::{
    decode_bytes, frame_to_rgb, frame_to_rgb_planes, FrameError, FrameInfo, PixelFormat, Rotation,
    MAX_PIXELS,
};
use netron_ocr_core::quality::{FrameGate, QualityParams};
use netron_ocr_core::scanner::Scanner;

fn cases(default: u64) -> u64 {
    std::env::var("NETRON_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// SplitMix64: a small deterministic generator, so that one seed reproduces one case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/scenes")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `data` with one to eight random edits: bit flips, bytes set to 0x00 or 0xFF, a run of random bytes, a
/// truncation, a duplicated span, or a deleted span. Edits land in the first 4 KiB half of the time, where the
/// headers and the first chunks or segments are.
fn mutate(data: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = data.to_vec();
    for _ in 0..1 + rng.below(8) {
        if out.is_empty() {
            break;
        }
        let len = out.len() as u64;
        let at = if rng.below(2) == 0 {
            rng.below(len.min(4096))
        } else {
            rng.below(len)
        } as usize;
        match rng.below(6) {
            0 => out[at] ^= 1 << rng.below(8),
            1 => out[at] = if rng.below(2) == 0 { 0x00 } else { 0xFF },
            2 => {
                let end = (at + 1 + rng.below(16) as usize).min(out.len());
                for b in &mut out[at..end] {
                    *b = rng.next() as u8;
                }
            }
            3 => out.truncate(at),
            4 => {
                let end = (at + 1 + rng.below(64) as usize).min(out.len());
                let span = out[at..end].to_vec();
                out.splice(at..at, span);
            }
            _ => {
                let end = (at + 1 + rng.below(64) as usize).min(out.len());
                out.drain(at..end);
            }
        }
    }
    out
}

/// `data` with the CRC of every chunk recomputed, as far as the chunk structure holds, so that a mutated PNG
/// reaches the decoder's header and pixel checks instead of failing its checksums.
fn with_png_crcs(mut data: Vec<u8>) -> Vec<u8> {
    let mut at = 8;
    while at + 12 <= data.len() {
        let len = u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]) as usize;
        let Some(end) = (at + 8)
            .checked_add(len)
            .filter(|&end| end + 4 <= data.len())
        else {
            break;
        };
        let crc = crc32fast::hash(&data[at + 4..end]);
        data[end..end + 4].copy_from_slice(&crc.to_be_bytes());
        at = end + 4;
    }
    data
}

/// Runs `f(seed)` for `n` seeds starting at `first`, and names every seed that panicked.
fn no_panics(first: u64, n: u64, f: impl Fn(u64)) {
    let panicked: Vec<u64> = (first..first + n)
        .filter(|&seed| catch_unwind(AssertUnwindSafe(|| f(seed))).is_err())
        .collect();
    assert!(panicked.is_empty(), "panicked on seeds {panicked:?}");
}

/// Whether `result` is an image; an image must be non-empty and within [`MAX_PIXELS`].
fn check_decoded(result: Result<image::RgbImage, FrameError>) -> bool {
    let Ok(img) = result else { return false };
    assert!(img.width() > 0 && img.height() > 0);
    assert!(u64::from(img.width()) * u64::from(img.height()) <= MAX_PIXELS);
    true
}

#[test]
fn mutated_png_files_decode_or_give_typed_errors() {
    let png = fixture("000000.shot.png");
    let (decoded, n) = (Cell::new(0u64), cases(120));
    no_panics(1, n, |seed| {
        let ok = check_decoded(decode_bytes(&with_png_crcs(mutate(&png, &mut Rng(seed)))));
        decoded.set(decoded.get() + ok as u64);
    });
    // Some mutations leave a decodable file, others not: both paths ran.
    assert!(
        decoded.get() > 0 && decoded.get() < n,
        "{} of {n} decoded",
        decoded.get()
    );
}

#[test]
fn mutated_jpeg_files_decode_or_give_typed_errors() {
    let jpeg = fixture("000000.photo.jpg");
    let (decoded, n) = (Cell::new(0u64), cases(120));
    no_panics(10_001, n, |seed| {
        let ok = check_decoded(decode_bytes(&mutate(&jpeg, &mut Rng(seed))));
        decoded.set(decoded.get() + ok as u64);
    });
    // Some mutations leave a decodable file, others not: both paths ran.
    assert!(
        decoded.get() > 0 && decoded.get() < n,
        "{} of {n} decoded",
        decoded.get()
    );
}

/// A dimension: mostly small, sometimes 0, sometimes near the `u32` limit.
fn dim(rng: &mut Rng) -> u32 {
    match rng.below(10) {
        0 => 0,
        1 => u32::MAX - rng.below(4) as u32,
        2 => 1 << (12 + rng.below(19)),
        _ => 1 + rng.below(40) as u32,
    }
}

/// A frame geometry near the tight one for a random format and size, with some strides perturbed, and a
/// buffer whose length is near what that geometry needs (or arbitrary when it cannot be computed).
fn random_frame(rng: &mut Rng) -> (FrameInfo, Vec<u8>) {
    let format = PixelFormat::ALL[rng.below(PixelFormat::ALL.len() as u64) as usize];
    let rotation = Rotation::from_degrees(90 * rng.below(4) as u32).unwrap_or_default();
    let mut info = FrameInfo::tight(format, dim(rng), dim(rng), rotation);
    for stride in &mut info.row_strides {
        match rng.below(6) {
            0 => *stride = stride.saturating_sub(1 + rng.below(3) as u32),
            1 => *stride = stride.saturating_add(rng.below(64) as u32),
            2 => *stride = rng.next() as u32,
            _ => {}
        }
    }
    match rng.below(6) {
        0 => info.pixel_stride = rng.below(9) as u32,
        1 => info.pixel_stride = rng.next() as u32,
        _ => {}
    }
    match rng.below(8) {
        0 => info.row_strides.pop().map(|_| ()).unwrap_or(()),
        1 => info.row_strides.push(rng.below(128) as u32),
        _ => {}
    }
    let needed = info.required_len().unwrap_or(rng.below(4096) as usize);
    // Buffers beyond 64 MiB are not allocated: the geometry is what is being tested.
    let len = match rng.below(4) {
        0 => needed.saturating_sub(1 + rng.below(8) as usize),
        1 => needed.saturating_add(rng.below(16) as usize),
        _ => needed,
    }
    .min(64 << 20);
    let data = (0..len).map(|_| rng.next() as u8).collect();
    (info, data)
}

#[test]
fn frames_with_random_geometry_convert_or_give_typed_errors() {
    let converted = Cell::new(0u64);
    let n = cases(400);
    no_panics(20_001, n, |seed| {
        let mut rng = Rng(seed);
        let (info, data) = random_frame(&mut rng);
        let whole = frame_to_rgb(&data, &info);
        converted.set(converted.get() + whole.is_ok() as u64);
        if let Ok(img) = &whole {
            assert_eq!((img.width(), img.height()), info.upright_size());
        }
        // The same frame given plane by plane converts to the same image, or fails too.
        if let Ok(planes) = info.split_planes(&data) {
            let split = frame_to_rgb_planes(&planes, &info);
            assert_eq!(split.as_ref().ok(), whole.as_ref().ok(), "{info:?}");
        }
    });
    // Both outcomes are exercised: the geometry is neither always valid nor always refused.
    let ok = converted.get();
    assert!(
        ok > n / 10 && ok < n - n / 10,
        "{ok} of {n} frames converted"
    );
}

#[test]
fn the_quality_gate_takes_frames_with_random_geometry() {
    no_panics(30_001, cases(400), |seed| {
        let mut rng = Rng(seed);
        let mut gate = FrameGate::new(QualityParams::default());
        for _ in 0..3 {
            let (info, data) = random_frame(&mut rng);
            if let Ok(q) = gate.push_frame(&data, &info) {
                assert!((0.0..=1.0).contains(&q.score), "{q:?}");
            }
        }
    });
}

#[test]
fn mutated_photos_that_decode_scan_to_valid_graphs() {
    let jpeg = fixture("000000.photo.jpg");
    let scanner = Scanner::new().unwrap();
    // A scan costs far more than a decode: at most 100 even in a long search.
    let n = cases(6).min(100);
    let (mut scanned, mut seed) = (0, 40_001);
    while scanned < n {
        if let Ok(image) = decode_bytes(&mutate(&jpeg, &mut Rng(seed))) {
            no_panics(seed, 1, |_| {
                if let Ok(result) = scanner.scan_rgb(&image) {
                    let problems = result.graph.check();
                    assert!(problems.is_empty(), "{problems:?}");
                }
            });
            scanned += 1;
        }
        seed += 1;
    }
}
