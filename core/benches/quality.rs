//! `FrameGate::push_frame` on a 1920×1080 NV21 frame (target: at most 1 ms on one core).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use netron_ocr_core::frame::{FrameInfo, PixelFormat, Rotation};
use netron_ocr_core::quality::{FrameGate, QualityParams};

/// A screen-like NV21 frame: white background, dark cards with bright 2-pixel strokes, neutral chroma.
fn nv21_frame(w: usize, h: usize) -> Vec<u8> {
    let mut data = vec![128u8; w * h + w.div_ceil(2) * h.div_ceil(2) * 2];
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for y in 0..h {
        for x in 0..w {
            let in_card = (x % 480) > 140 && (x % 480) < 340 && (y % 180) > 40;
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state % 5) as u8;
            data[y * w + x] = if !in_card {
                212 + noise
            } else if (x / 2 + y / 3) % 5 == 0 && (y % 180) % 20 < 12 {
                230 + noise
            } else {
                60 + noise
            };
        }
    }
    data
}

fn bench(c: &mut Criterion) {
    let (w, h) = (1920, 1080);
    let frame = nv21_frame(w, h);
    let info = FrameInfo::tight(PixelFormat::Nv21, w as u32, h as u32, Rotation::R90);
    let mut gate = FrameGate::new(QualityParams::default());
    c.bench_function("push_frame nv21 1920x1080", |b| {
        b.iter(|| {
            gate.push_frame(black_box(&frame), black_box(&info))
                .unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
