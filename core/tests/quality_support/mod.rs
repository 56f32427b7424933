//! Synthetic Netron-like screens, the degradations the quality tests sweep over, and the glare sweep itself.
#![allow(dead_code)]

use image::{Rgb, RgbImage};
use netron_ocr_core::quality::{assess_rgb, FrameQuality, Hint, QualityParams};

/// Deterministic xorshift64* generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo)) as u32
    }
}

fn fill(img: &mut RgbImage, x: i64, y: i64, w: i64, h: i64, c: [u8; 3]) {
    let (iw, ih) = (i64::from(img.width()), i64::from(img.height()));
    for yy in y.max(0)..(y + h).min(ih) {
        for xx in x.max(0)..(x + w).min(iw) {
            img.put_pixel(xx as u32, yy as u32, Rgb(c));
        }
    }
}

/// Glyph height, stroke width and colour of a run of text.
#[derive(Clone, Copy)]
struct Font {
    height: i64,
    stroke: i64,
    colour: [u8; 3],
}

/// A run of text-like glyphs: each glyph is a few 1-stroke-wide bars in a `gw × gh` box.
fn text(img: &mut RgbImage, rng: &mut Rng, x: i64, y: i64, glyphs: u32, font: Font) {
    let Font {
        height: gh,
        stroke,
        colour: c,
    } = font;
    let gw = gh * 3 / 5;
    for g in 0..i64::from(glyphs) {
        let gx = x + g * (gw + stroke);
        if rng.range(0, 7) == 0 {
            continue; // a space
        }
        // Left or right stem, a top/middle/bottom bar, sometimes a diagonal-ish step.
        let bits = rng.range(1, 64);
        if bits & 1 != 0 {
            fill(img, gx, y, stroke, gh, c);
        }
        if bits & 2 != 0 {
            fill(img, gx + gw - stroke, y, stroke, gh, c);
        }
        if bits & 4 != 0 {
            fill(img, gx, y, gw, stroke, c);
        }
        if bits & 8 != 0 {
            fill(img, gx, y + gh / 2, gw, stroke, c);
        }
        if bits & 16 != 0 {
            fill(img, gx, y + gh - stroke, gw, stroke, c);
        }
        if bits & 32 != 0 {
            for k in 0..gh / stroke {
                fill(
                    img,
                    gx + k * (gw - stroke) / (gh / stroke).max(1),
                    y + k * stroke,
                    stroke,
                    stroke,
                    c,
                );
            }
        }
    }
}

/// Netron header colours (light theme).
const HEADERS: [[u8; 3]; 6] = [
    [51, 85, 136],
    [112, 41, 33],
    [51, 85, 51],
    [51, 85, 68],
    [108, 79, 71],
    [51, 51, 51],
];

/// A Netron-like screen of `w × h`: a background, a vertical chain of operator cards (coloured header with
/// white title strokes, light body with dark attribute rows), thin edges with shape labels, and input/output
/// pills. Sizes scale with `h / 1080` so a 1920×1080 screen looks like a full-HD Netron window.
pub fn netron_screen(w: u32, h: u32, dark: bool, seed: u64) -> RgbImage {
    let mut rng = Rng::new(seed);
    let s = f64::from(h) / 1080.0;
    let px = |v: f64| ((v * s).round() as i64).max(1);
    let bg = if dark { [30, 30, 30] } else { [255, 255, 255] };
    let body = if dark { [45, 45, 45] } else { [252, 252, 252] };
    let ink = if dark { [220, 220, 220] } else { [0, 0, 0] };
    let edge = if dark { [150, 150, 150] } else { [90, 90, 90] };
    let pill = if dark { [80, 80, 80] } else { [238, 238, 238] };
    let mut img = RgbImage::from_pixel(w, h, Rgb(bg));

    let (card_w, head_h, row_h, gap) = (px(190.0), px(26.0), px(20.0), px(60.0));
    let columns = 3;
    let col_x: Vec<i64> = (0..columns)
        .map(|c| i64::from(w) * (2 * c + 1) / (2 * columns) - card_w / 2)
        .collect();
    for (ci, &cx) in col_x.iter().enumerate() {
        let mut y = px(40.0) + px(30.0) * ci as i64;
        // Graph input pill.
        fill(&mut img, cx + card_w / 4, y, card_w / 2, px(24.0), pill);
        text(
            &mut img,
            &mut rng,
            cx + card_w / 4 + px(8.0),
            y + px(6.0),
            6,
            Font {
                height: px(12.0),
                stroke: px(1.5),
                colour: ink,
            },
        );
        y += px(24.0);
        while y + gap + head_h + 3 * row_h < i64::from(h) - px(40.0) {
            // Edge with an arrowhead and a shape label.
            let ex = cx + card_w / 2;
            fill(&mut img, ex, y, px(1.5), gap, edge);
            fill(
                &mut img,
                ex - px(4.0),
                y + gap - px(6.0),
                px(9.0),
                px(6.0),
                edge,
            );
            text(
                &mut img,
                &mut rng,
                ex + px(6.0),
                y + gap / 3,
                9,
                Font {
                    height: px(11.0),
                    stroke: px(1.2),
                    colour: ink,
                },
            );
            y += gap;
            // Card: header + rows, 1 px border.
            let rows = rng.range(0, 4) as i64;
            let ch = head_h + rows * row_h;
            fill(&mut img, cx - 1, y - 1, card_w + 2, ch + 2, edge);
            let header = HEADERS[rng.range(0, HEADERS.len() as u32) as usize];
            fill(&mut img, cx, y, card_w, head_h, header);
            let title = rng.range(3, 12);
            text(
                &mut img,
                &mut rng,
                cx + px(10.0),
                y + px(7.0),
                title,
                Font {
                    height: px(13.0),
                    stroke: px(2.0),
                    colour: [255, 255, 255],
                },
            );
            for r in 0..rows {
                let ry = y + head_h + r * row_h;
                fill(&mut img, cx, ry, card_w, row_h, body);
                let n = rng.range(8, 20);
                text(
                    &mut img,
                    &mut rng,
                    cx + px(8.0),
                    ry + px(5.0),
                    n,
                    Font {
                        height: px(11.0),
                        stroke: px(1.2),
                        colour: ink,
                    },
                );
            }
            y += ch;
        }
    }
    img
}

/// Per-channel `v * scale + offset`, clamped: a camera exposing the screen differently.
pub fn exposure(img: &RgbImage, scale: f32, offset: f32) -> RgbImage {
    let mut out = img.clone();
    for v in out.iter_mut() {
        *v = (f32::from(*v) * scale + offset).round().clamp(0.0, 255.0) as u8;
    }
    out
}

/// One horizontal and one vertical running-box pass of radius `r` (edges clamped).
fn box_pass(img: &RgbImage, r: usize) -> RgbImage {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let src = img.as_raw();
    let mut tmp = vec![0u8; src.len()];
    let n = (2 * r + 1) as u32;
    let clampi = |i: i64, len: usize| i.clamp(0, len as i64 - 1) as usize;
    for y in 0..h {
        for c in 0..3 {
            let at = |x: i64| u32::from(src[(y * w + clampi(x, w)) * 3 + c]);
            let mut sum: u32 = (-(r as i64)..=r as i64).map(at).sum();
            for x in 0..w {
                tmp[(y * w + x) * 3 + c] = ((sum + n / 2) / n) as u8;
                sum += at(x as i64 + r as i64 + 1);
                sum -= at(x as i64 - r as i64);
            }
        }
    }
    let mut out = vec![0u8; src.len()];
    for x in 0..w {
        for c in 0..3 {
            let at = |y: i64| u32::from(tmp[(clampi(y, h) * w + x) * 3 + c]);
            let mut sum: u32 = (-(r as i64)..=r as i64).map(at).sum();
            for y in 0..h {
                out[(y * w + x) * 3 + c] = ((sum + n / 2) / n) as u8;
                sum += at(y as i64 + r as i64 + 1);
                sum -= at(y as i64 - r as i64);
            }
        }
    }
    RgbImage::from_raw(w as u32, h as u32, out).unwrap()
}

/// Three box passes of radius `r`: close to a Gaussian of sigma `sqrt(r (r + 1))`.
pub fn blur(img: &RgbImage, r: usize) -> RgbImage {
    if r == 0 {
        return img.clone();
    }
    box_pass(&box_pass(&box_pass(img, r), r), r)
}

/// Adds a radial glare blob: `+ strength * 255 * exp(-d² / (2 sigma²))` on every channel, clamped.
pub fn glare(img: &RgbImage, cx: f32, cy: f32, sigma: f32, strength: f32) -> RgbImage {
    let mut out = img.clone();
    for (x, y, p) in out.enumerate_pixels_mut() {
        let d2 = (x as f32 - cx).powi(2) + (y as f32 - cy).powi(2);
        let add = strength * 255.0 * (-d2 / (2.0 * sigma * sigma)).exp();
        for v in p.0.iter_mut() {
            *v = (f32::from(*v) + add).round().clamp(0.0, 255.0) as u8;
        }
    }
    out
}

/// Prints one assessment to stderr (run with `--nocapture` to see the sweeps).
pub fn show(label: &str, q: &FrameQuality) {
    eprintln!(
        "{label:28} accept={:5} score={:.3} sharp={:.3} glare={:.4} content={:.3} low={:.3} high={:.3} mean={:.3} \
         clip_b={:.3} stab={:?} {:?}",
        q.accept, q.score, q.sharpness, q.glare, q.content, q.exposure.content_low, q.exposure.content_high,
        q.exposure.mean, q.exposure.clipped_bright, q.stability, q.hints
    );
}

/// Reflection sizes of [`glare_sweep`]: the Gaussian sigma in px, 0 for no reflection.
pub const GLARE_SIGMAS: [f32; 6] = [0.0, 40.0, 80.0, 120.0, 180.0, 260.0];

/// `img` under a growing reflection centred at `centre` ([`glare`] with each of [`GLARE_SIGMAS`] and `strength`):
/// per step the glare score and whether [`Hint::ReduceGlare`] is given. Asserts that the score never falls as the
/// reflection grows.
pub fn glare_sweep(
    name: &str,
    img: &RgbImage,
    centre: (f32, f32),
    strength: f32,
    p: &QualityParams,
) -> Vec<(f32, bool)> {
    let mut prev = -1.0f32;
    let mut out = Vec::new();
    for sigma in GLARE_SIGMAS {
        let g = if sigma == 0.0 {
            img.clone()
        } else {
            glare(img, centre.0, centre.1, sigma, strength)
        };
        let q = assess_rgb(&g, p);
        show(&format!("{name} glare sigma={sigma}"), &q);
        assert!(
            q.glare >= prev,
            "{name}: glare fell from {prev} to {} at sigma {sigma}",
            q.glare
        );
        prev = q.glare;
        out.push((q.glare, q.hints.contains(&Hint::ReduceGlare)));
    }
    out
}

/// Translates by `(dx, dy)`, repeating the edge pixels.
pub fn shift(img: &RgbImage, dx: i64, dy: i64) -> RgbImage {
    let (w, h) = (i64::from(img.width()), i64::from(img.height()));
    RgbImage::from_fn(img.width(), img.height(), |x, y| {
        let sx = (i64::from(x) - dx).clamp(0, w - 1);
        let sy = (i64::from(y) - dy).clamp(0, h - 1);
        *img.get_pixel(sx as u32, sy as u32)
    })
}

/// NV21 bytes (tight) of an RGB image: BT.601 full-range Y, V/U from 2×2 means.
pub fn to_nv21(img: &RgbImage) -> Vec<u8> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let mut out = vec![0u8; w * h + cw * ch * 2];
    for (x, y, p) in img.enumerate_pixels() {
        let [r, g, b] = p.0.map(f64::from);
        out[y as usize * w + x as usize] = (0.299 * r + 0.587 * g + 0.114 * b).round() as u8;
    }
    for cy in 0..ch {
        for cx in 0..cw {
            let (mut u, mut v, mut n) = (0.0, 0.0, 0.0);
            for y in 2 * cy..(2 * cy + 2).min(h) {
                for x in 2 * cx..(2 * cx + 2).min(w) {
                    let [r, g, b] = img.get_pixel(x as u32, y as u32).0.map(f64::from);
                    u += 128.0 - 0.168736 * r - 0.331264 * g + 0.5 * b;
                    v += 128.0 + 0.5 * r - 0.418688 * g - 0.081312 * b;
                    n += 1.0;
                }
            }
            let i = w * h + cy * cw * 2 + cx * 2;
            out[i] = (v / n).round().clamp(0.0, 255.0) as u8;
            out[i + 1] = (u / n).round().clamp(0.0, 255.0) as u8;
        }
    }
    out
}
