//! Pillow-exact antialiased bilinear resampling of a fractional source box.
//!
//! The classifier and OCR models were trained on crops made with Pillow:
//! `Image.resize((w, h), Image.BILINEAR, box=(x0, y0, x1, y1))` on 8-bit RGB or `L` images. This module
//! re-implements that call (Pillow 13, `libImaging/Resample.c`) bit for bit:
//!
//! - the box coordinates are single-precision floats (Pillow converts them to C `float`);
//! - per output pixel, the triangle filter is centred at `in0 + (i + 0.5)·scale` with
//!   `scale = (in1 − in0) / out`, its support widened to `max(scale, 1)` (antialiased when downscaling);
//!   taps may reach outside the box (never outside the image) and are normalised to sum 1;
//! - weights become fixed point with 22 fractional bits (`(int)(0.5 + w·2²²)`), sums start at `2²¹` and are
//!   shifted right by 22 and clamped to `0..=255`;
//! - the horizontal pass runs first, over only the source rows the vertical pass needs, and is rounded to
//!   8 bits before the vertical pass.
//!
//! fast_image_resize's `Convolution(Bilinear)` computes the same filter but runs the vertical pass first and
//! quantises the weights to 16 bits, so its output differs from Pillow's by a grey level here and there;
//! hence this small, exact implementation for the crops the models see.
//!
//! Grey (`L`) input is converted on the fly with Pillow's `convert("L")` formula, [`luma`].

use image::RgbImage;

/// Fractional bits of the fixed-point weights (Pillow's `PRECISION_BITS`, `32 − 8 − 2`).
const PRECISION_BITS: u32 = 22;

/// Pillow's `convert("L")` on one 8-bit RGB pixel: `(R·19595 + G·38470 + B·7471 + 32768) >> 16`.
pub fn luma(rgb: [u8; 3]) -> u8 {
    let [r, g, b] = rgb.map(u32::from);
    ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16) as u8
}

/// Filter taps of one axis: for output pixel `i`, source pixels `start[i]..start[i] + len[i]` with the
/// fixed-point weights `weights[i·ksize..][..len[i]]`.
struct Taps {
    ksize: usize,
    start: Vec<usize>,
    len: Vec<usize>,
    weights: Vec<i32>,
}

impl Taps {
    /// Pillow's `precompute_coeffs` + `normalize_coeffs_8bpc` for the bilinear filter (support 1).
    fn new(in_size: u32, in0: f32, in1: f32, out_size: u32) -> Taps {
        let scale = f64::from(in1 - in0) / f64::from(out_size);
        let filterscale = scale.max(1.0);
        let support = filterscale;
        let ksize = support.ceil() as usize * 2 + 1;
        let ss = 1.0 / filterscale;
        let n = out_size as usize;
        let mut taps = Taps {
            ksize,
            start: Vec::with_capacity(n),
            len: Vec::with_capacity(n),
            weights: vec![0; n * ksize],
        };
        let mut k = vec![0f64; ksize];
        for xx in 0..n {
            let center = f64::from(in0) + (xx as f64 + 0.5) * scale;
            // C `(int)` conversions truncate toward zero; Rust `as` does the same.
            let xmin = ((center - support + 0.5) as i64).max(0);
            let xmax = ((center + support + 0.5) as i64).min(i64::from(in_size));
            let count = (xmax - xmin).clamp(0, ksize as i64) as usize;
            let mut ww = 0.0;
            for (x, kx) in k.iter_mut().enumerate().take(count) {
                let w = bilinear(((x as i64 + xmin) as f64 - center + 0.5) * ss);
                *kx = w;
                ww += w;
            }
            let row = &mut taps.weights[xx * ksize..xx * ksize + count];
            for (dst, &w) in row.iter_mut().zip(&k[..count]) {
                let w = if ww != 0.0 { w / ww } else { w };
                let scaled = w * f64::from(1u32 << PRECISION_BITS);
                *dst = if w < 0.0 {
                    (scaled - 0.5) as i32
                } else {
                    (scaled + 0.5) as i32
                };
            }
            taps.start.push(xmin as usize);
            taps.len.push(count);
        }
        taps
    }

    fn of(&self, i: usize) -> (usize, &[i32]) {
        let w = &self.weights[i * self.ksize..i * self.ksize + self.len[i]];
        (self.start[i], w)
    }
}

fn bilinear(x: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 {
        1.0 - x
    } else {
        0.0
    }
}

/// Pillow's `clip8`: the accumulated fixed-point sum to 8 bits.
fn clip8(sum: i32) -> u8 {
    (sum >> PRECISION_BITS).clamp(0, 255) as u8
}

const HALF: i32 = 1 << (PRECISION_BITS - 1);

/// Resamples the box `region = [x0, y0, x1, y1]` (source pixels; `0 ≤ x0 < x1 ≤ width`,
/// `0 ≤ y0 < y1 ≤ height`) of a `width × height` image with `C` 8-bit channels, read through `pixel(x, y)`,
/// to `out_w × out_h`. Returns the pixels row-major, channels interleaved (`out_h · out_w · C` bytes), or
/// `None` when the region or the sizes do not satisfy the preconditions.
pub fn resize_box<const C: usize>(
    width: u32,
    height: u32,
    pixel: impl Fn(u32, u32) -> [u8; C],
    region: [f32; 4],
    out_w: u32,
    out_h: u32,
) -> Option<Vec<u8>> {
    let [x0, y0, x1, y1] = region;
    let valid = region.iter().all(|v| v.is_finite())
        && 0.0 <= x0
        && x0 < x1
        && x1 <= width as f32
        && 0.0 <= y0
        && y0 < y1
        && y1 <= height as f32
        && out_w > 0
        && out_h > 0;
    if !valid {
        return None;
    }
    let horiz = Taps::new(width, x0, x1, out_w);
    let vert = Taps::new(height, y0, y1, out_h);
    // Source rows the vertical pass reads.
    let first = vert.start[0];
    let last = (0..out_h as usize)
        .map(|i| vert.start[i] + vert.len[i])
        .max()
        .unwrap_or(first);
    let (ow, oh) = (out_w as usize, out_h as usize);

    // Horizontal pass: rows first..last of the source → temp (last − first) × out_w, rounded to 8 bits.
    let temp_rows = last - first;
    let mut temp = vec![0u8; temp_rows * ow * C];
    for (ty, trow) in temp.chunks_exact_mut(ow * C).enumerate() {
        let y = (first + ty) as u32;
        for (xx, out) in trow.chunks_exact_mut(C).enumerate() {
            let (start, w) = horiz.of(xx);
            let mut acc = [HALF; C];
            for (i, &k) in w.iter().enumerate() {
                let p = pixel((start + i) as u32, y);
                for c in 0..C {
                    acc[c] += i32::from(p[c]) * k;
                }
            }
            for c in 0..C {
                out[c] = clip8(acc[c]);
            }
        }
    }

    // Vertical pass over the temp rows.
    let mut out = vec![0u8; oh * ow * C];
    for (yy, orow) in out.chunks_exact_mut(ow * C).enumerate() {
        let (start, w) = vert.of(yy);
        let start = start - first;
        for xx in 0..ow {
            let mut acc = [HALF; C];
            for (i, &k) in w.iter().enumerate() {
                let base = ((start + i) * ow + xx) * C;
                for c in 0..C {
                    acc[c] += i32::from(temp[base + c]) * k;
                }
            }
            for c in 0..C {
                orow[xx * C + c] = clip8(acc[c]);
            }
        }
    }
    Some(out)
}

/// [`resize_box`] on an RGB image: `Image.resize((out_w, out_h), Image.BILINEAR, box=region)`.
pub fn resize_rgb_box(src: &RgbImage, region: [f32; 4], out_w: u32, out_h: u32) -> Option<Vec<u8>> {
    resize_box::<3>(
        src.width(),
        src.height(),
        |x, y| src.get_pixel(x, y).0,
        region,
        out_w,
        out_h,
    )
}

/// [`resize_box`] on the grey version of an RGB image:
/// `img.convert("L").resize((out_w, out_h), Image.BILINEAR, box=region)`. Only the pixels the filter reads
/// are converted.
pub fn resize_luma_box(
    src: &RgbImage,
    region: [f32; 4],
    out_w: u32,
    out_h: u32,
) -> Option<Vec<u8>> {
    resize_box::<1>(
        src.width(),
        src.height(),
        |x, y| [luma(src.get_pixel(x, y).0)],
        region,
        out_w,
        out_h,
    )
}
