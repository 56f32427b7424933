//! Zero-copy `&[u8]` frame input against a copying `Vec<u8>` one, on a 1920×1080 NV21 frame (3.1 MB).
//!
//! * `borrowed`: what a `&[u8]` argument costs in uniffi 0.32: the foreign buffer is viewed in place, so the call
//!   is just `assess`.
//! * `vec_roundtrip`: what a `Vec<u8>` argument would cost: the bytes are lowered into a `RustBuffer` (the copy
//!   the foreign side makes when it serialises the argument) and lifted back into a `Vec<u8>` (the copy Rust
//!   makes when it reads it), using uniffi's own converters, then `assess`.
//!
//! Run: `cargo bench -p netron-ocr-ffi --bench assess_copy` (CARGO_TARGET_DIR as in the README).

use criterion::{criterion_group, criterion_main, Criterion};
use netron_ocr_ffi::{assess, FrameInfo, PixelFormat, Rotation, UniFfiTag};
use uniffi::{Lift, Lower};

const W: u32 = 1920;
const H: u32 = 1080;

/// A light background with dark-framed "cards" and text-like stripes, as NV21 (tight strides).
fn nv21_frame() -> Vec<u8> {
    let (w, h) = (W as usize, H as usize);
    let mut y = vec![235u8; w * h];
    for card in 0..12 {
        let (x0, y0) = (100 + (card % 4) * 430, 120 + (card / 4) * 300);
        for r in y0..y0 + 180 {
            for c in x0..x0 + 320 {
                let border = r < y0 + 4 || r >= y0 + 176 || c < x0 + 4 || c >= x0 + 316;
                let stripe = (r - y0) % 24 < 6 && (c - x0) % 9 < 6 && r > y0 + 20;
                y[r * w + c] = if border {
                    40
                } else if stripe {
                    70
                } else {
                    250
                };
            }
        }
    }
    let chroma = vec![128u8; w * h.div_ceil(2)];
    [y, chroma].concat()
}

fn info() -> FrameInfo {
    FrameInfo {
        format: PixelFormat::Nv21,
        width: W,
        height: H,
        row_strides: vec![W, W],
        pixel_stride: 2,
        rotation: Rotation::R0,
    }
}

fn bench(c: &mut Criterion) {
    let frame = nv21_frame();
    let mut group = c.benchmark_group("assess_1080p_nv21");
    group.bench_function("borrowed", |b| {
        b.iter(|| assess(std::hint::black_box(&frame), info()).unwrap())
    });
    group.bench_function("vec_roundtrip", |b| {
        b.iter(|| {
            let buffer = <Vec<u8> as Lower<UniFfiTag>>::lower(std::hint::black_box(&frame).clone());
            let owned = <Vec<u8> as Lift<UniFfiTag>>::try_lift(buffer).unwrap();
            assess(&owned, info()).unwrap()
        })
    });
    group.bench_function("vec_roundtrip_only", |b| {
        b.iter(|| {
            let buffer = <Vec<u8> as Lower<UniFfiTag>>::lower(std::hint::black_box(&frame).clone());
            <Vec<u8> as Lift<UniFfiTag>>::try_lift(buffer).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
