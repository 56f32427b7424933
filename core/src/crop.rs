//! Cropper stage: where on the photo is the graph (`models/cropper.MODEL.md`; Python reference
//! `models/train/cropper.py` `preprocess` and `decode`).
//!
//! Input tensor `image`: float32 `[1, 3, 512, 512]`, NCHW, RGB: the whole source image **stretched** to 512 × 512
//! with bilinear interpolation without antialiasing, exactly OpenCV `cv2.resize(..., INTER_LINEAR)` on uint8
//! (what training used; [`resize_linear_cv`] reproduces its fixed-point arithmetic bit for bit, where
//! fast_image_resize's `Interpolation(Bilinear)` differs by one grey level on about a fifth of the pixels), then
//! `(p / 255 − MEAN[c]) / STD[c]` per channel.
//!
//! Outputs: `proj_x [1,128]`, `proj_y [1,128]` logits (bin `i` covers `[i/128, (i+1)/128)` of the width /
//! height; logit ≥ 0 ⇔ the content overlaps the bin) and `margins [1,4]` in `[0, 0.25]` (left, top, right,
//! bottom expansion as fractions of the decoded box's size).
//!
//! Decoding (float64, normalised coordinates): outermost on-bins per axis (none → `[0, 1]`), expand by the
//! margins, pad by [`CropParams::pad`] (4%) of the expanded size, clip to `[0, 1]`, scale to source pixels.

use image::RgbImage;
use thiserror::Error;
use tract_nnef::prelude::*;

use crate::error::ScanError;
use crate::graph::BBox;
use crate::models::{Model, ModelKind};

/// Side of the square cropper input, pixels.
pub const INPUT_SIZE: u32 = 512;
/// Projection bins per axis.
pub const BINS: usize = 128;
/// ImageNet channel means (RGB), shared by the cropper, detector and classifier.
pub const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
/// ImageNet channel standard deviations (RGB).
pub const STD: [f32; 3] = [0.229, 0.224, 0.225];

/// Why the cropper stage failed (besides a failed model run, which is [`ScanError::Inference`]).
#[derive(Debug, Error, PartialEq)]
pub enum CropError {
    /// The source image has no pixels.
    #[error("empty image {width}x{height}")]
    EmptyImage { width: u32, height: u32 },
    /// The model returned tensors of unexpected shapes.
    #[error("unexpected output: {0}")]
    Output(String),
    /// The input tensor could not be built.
    #[error("input tensor: {0}")]
    Tensor(String),
}

/// Decoding parameters (the defaults are the contract of `cropper.MODEL.md`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CropParams {
    /// A bin is "on" when its sigmoid is ≥ this (0.5: logit ≥ 0).
    pub threshold: f32,
    /// Padding added on each side after the margins, as a fraction of the expanded box's width / height.
    pub pad: f64,
}

impl Default for CropParams {
    fn default() -> Self {
        CropParams {
            threshold: 0.5,
            pad: 0.04,
        }
    }
}

/// What the cropper found.
#[derive(Debug, Clone, PartialEq)]
pub struct CropResult {
    /// The padded crop in source pixels, inside the image. When the decoded crop is under 1 px wide or tall the
    /// whole image is used (as the Python evaluation does).
    pub bbox: BBox,
    /// In `[0, 1]`: how sure the cropper is that a graph is there. For each axis, the mean sigmoid of the bins
    /// from the first to the last on-bin (an axis without on-bins scores its highest sigmoid, < threshold); the
    /// confidence is the smaller of the two axes. A photo without a graph scores low.
    pub confidence: f32,
    /// Raw `proj_x` logits (128 column bins).
    pub proj_x: Vec<f32>,
    /// Raw `proj_y` logits (128 row bins).
    pub proj_y: Vec<f32>,
    /// Margins as output by the model (left, top, right, bottom), fractions in `[0, 0.25]`.
    pub margins: [f32; 4],
    /// The decoded box before the 1-px fallback, normalised `[x0, y0, x1, y1]` in `[0, 1]`.
    pub normalised: [f64; 4],
}

/// The cropper: model plus decoding parameters. `Send + Sync`; one instance serves many threads.
#[derive(Debug, Clone)]
pub struct Cropper {
    model: Model,
    pub params: CropParams,
}

/// Normalises 8-bit RGB (HWC, `width × height`) into `out` (CHW planes of `plane_w × plane_h`, top-left
/// aligned) with the ImageNet mean/std: `(p / 255 − MEAN[c]) / STD[c]`. Elements outside `width × height`
/// are left as they are.
pub fn normalise_into(
    rgb: &[u8],
    width: usize,
    height: usize,
    out: &mut [f32],
    plane_w: usize,
    plane_h: usize,
) {
    let mut lut = [[0f32; 256]; 3];
    for (c, table) in lut.iter_mut().enumerate() {
        for (v, slot) in table.iter_mut().enumerate() {
            *slot = (v as f32 / 255.0 - MEAN[c]) / STD[c];
        }
    }
    let plane = plane_w * plane_h;
    for y in 0..height.min(plane_h) {
        let row = &rgb[y * width * 3..(y + 1) * width * 3];
        for (c, table) in lut.iter().enumerate() {
            let dst =
                &mut out[c * plane + y * plane_w..c * plane + y * plane_w + width.min(plane_w)];
            for (x, d) in dst.iter_mut().enumerate() {
                *d = table[row[x * 3 + c] as usize];
            }
        }
    }
}

/// Source taps of OpenCV's `INTER_LINEAR`: for each output index, two source indices and 11-bit weights.
struct LinearTaps {
    s0: Vec<usize>,
    s1: Vec<usize>,
    w0: Vec<i32>,
    w1: Vec<i32>,
}

/// OpenCV `resize` coefficients (`imgproc/src/resize.cpp`): `f = (float)((d + 0.5)·scale − 0.5)`, `s = ⌊f⌋`,
/// `f −= s`; along x an outside tap is clamped with `f = 0`, along y it is not (the rows are clamped instead);
/// weights `round((1 − f)·2048)`, `round(f·2048)` (half to even).
fn linear_taps(ssize: usize, dsize: usize, clamp: bool) -> LinearTaps {
    let scale = ssize as f64 / dsize as f64;
    let last = ssize as i64 - 1;
    let mut t = LinearTaps {
        s0: Vec::with_capacity(dsize),
        s1: Vec::with_capacity(dsize),
        w0: Vec::with_capacity(dsize),
        w1: Vec::with_capacity(dsize),
    };
    for d in 0..dsize {
        let mut f = ((d as f64 + 0.5) * scale - 0.5) as f32;
        let mut s = f.floor() as i64;
        f -= s as f32;
        if clamp {
            if s < 0 {
                f = 0.0;
                s = 0;
            }
            if s >= last {
                f = 0.0;
                s = last;
            }
        }
        t.s0.push(s.clamp(0, last) as usize);
        t.s1.push((s + 1).clamp(0, last) as usize);
        t.w0.push(((1.0f32 - f) * 2048.0).round_ties_even() as i32);
        t.w1.push((f * 2048.0).round_ties_even() as i32);
    }
    t
}

/// Stretches 8-bit RGB to `width × height` (interleaved RGB bytes) exactly as OpenCV 4/5
/// `cv2.resize(img, (width, height), interpolation=cv2.INTER_LINEAR)` does on x86: horizontal pass to integers
/// with 11-bit weights, then the SIMD vertical pass `((S0>>4)·b0 >> 16) + ((S1>>4)·b1 >> 16) + 2 >> 2`.
/// Checked bit for bit against OpenCV on the fixture scenes and on random images of many sizes (up- and
/// downscaling, 1-pixel sides, exact 2×). An empty source gives an all-zero result.
pub fn resize_linear_cv(src: &RgbImage, width: usize, height: usize) -> Vec<u8> {
    let (sw, sh) = (src.width() as usize, src.height() as usize);
    let mut out = vec![0u8; width * height * 3];
    if sw == 0 || sh == 0 || width == 0 || height == 0 {
        return out;
    }
    let xt = linear_taps(sw, width, true);
    let yt = linear_taps(sh, height, false);
    let raw = src.as_raw();
    let row_len = width * 3;
    // Horizontal pass of one source row.
    let hpass = |y: usize, dst: &mut Vec<i32>| {
        dst.clear();
        let row = &raw[y * sw * 3..(y + 1) * sw * 3];
        for x in 0..width {
            let (a, b) = (xt.s0[x] * 3, xt.s1[x] * 3);
            for c in 0..3 {
                dst.push(i32::from(row[a + c]) * xt.w0[x] + i32::from(row[b + c]) * xt.w1[x]);
            }
        }
    };
    // Horizontal results of the two source rows in use; rows only move down as y grows.
    let (mut row0, mut buf0) = (usize::MAX, Vec::with_capacity(row_len));
    let (mut row1, mut buf1) = (usize::MAX, Vec::with_capacity(row_len));
    for y in 0..height {
        let (r0, r1) = (yt.s0[y], yt.s1[y]);
        if row0 != r0 {
            if row1 == r0 {
                std::mem::swap(&mut buf0, &mut buf1);
                (row0, row1) = (row1, usize::MAX);
            } else {
                hpass(r0, &mut buf0);
                row0 = r0;
            }
        }
        if row1 != r1 {
            hpass(r1, &mut buf1);
            row1 = r1;
        }
        let (s0, s1) = (&buf0, &buf1);
        let (b0, b1) = (yt.w0[y], yt.w1[y]);
        let dst = &mut out[y * row_len..(y + 1) * row_len];
        for ((d, &p), &q) in dst.iter_mut().zip(s0.iter()).zip(s1.iter()) {
            let v = ((((p >> 4) * b0) >> 16) + (((q >> 4) * b1) >> 16) + 2) >> 2;
            *d = v.clamp(0, 255) as u8;
        }
    }
    out
}

/// The cropper's input tensor `[1, 3, 512, 512]` for `image` (see the module doc).
pub fn preprocess(image: &RgbImage) -> Result<Tensor, CropError> {
    if image.width() == 0 || image.height() == 0 {
        return Err(CropError::EmptyImage {
            width: image.width(),
            height: image.height(),
        });
    }
    let s = INPUT_SIZE as usize;
    let small = resize_linear_cv(image, s, s);
    let mut data = vec![0f32; 3 * s * s];
    normalise_into(&small, s, s, &mut data, s, s);
    Tensor::from_shape(&[1, 3, s, s], &data).map_err(|e| CropError::Tensor(e.to_string()))
}

/// Outermost bins with logit ≥ `logit_t` → `(a0, a1)` normalised; none → `(0, 1)`.
fn axis_span(logits: &[f32], logit_t: f32) -> (f64, f64, Option<(usize, usize)>) {
    let first = logits.iter().position(|&l| l >= logit_t);
    let last = logits.iter().rposition(|&l| l >= logit_t);
    match (first, last) {
        (Some(f), Some(l)) => (
            f as f64 / logits.len() as f64,
            (l + 1) as f64 / logits.len() as f64,
            Some((f, l)),
        ),
        _ => (0.0, 1.0, None),
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn axis_confidence(logits: &[f32], span: Option<(usize, usize)>) -> f32 {
    match span {
        Some((f, l)) => logits[f..=l].iter().map(|&v| sigmoid(v)).sum::<f32>() / (l - f + 1) as f32,
        None => logits.iter().map(|&v| sigmoid(v)).fold(0.0, f32::max),
    }
}

/// Decodes one image's outputs into the padded crop, normalised `[x0, y0, x1, y1]` (multiply by the width /
/// height), exactly as `cropper.decode`. Also returns the confidence (see [`CropResult::confidence`]).
pub fn decode(
    proj_x: &[f32],
    proj_y: &[f32],
    margins: [f32; 4],
    params: &CropParams,
) -> ([f64; 4], f32) {
    let t = params.threshold.clamp(1e-6, 1.0 - 1e-6);
    let logit_t = (t / (1.0 - t)).ln();
    let (ax0, ax1, sx) = axis_span(proj_x, logit_t);
    let (ay0, ay1, sy) = axis_span(proj_y, logit_t);
    let mut b = [ax0, ay0, ax1, ay1];
    let m = margins.map(f64::from);
    let (w, h) = (b[2] - b[0], b[3] - b[1]);
    b = [
        b[0] - m[0] * w,
        b[1] - m[1] * h,
        b[2] + m[2] * w,
        b[3] + m[3] * h,
    ];
    let (w, h) = (b[2] - b[0], b[3] - b[1]);
    let p = params.pad;
    b = [b[0] - p * w, b[1] - p * h, b[2] + p * w, b[3] + p * h];
    let b = b.map(|v| v.clamp(0.0, 1.0));
    let confidence = axis_confidence(proj_x, sx).min(axis_confidence(proj_y, sy));
    (b, confidence.clamp(0.0, 1.0))
}

fn flat_output(t: &Tensor, len: usize, name: &str) -> Result<Vec<f32>, CropError> {
    if t.shape().iter().product::<usize>() != len || t.shape().first() != Some(&1) {
        return Err(CropError::Output(format!(
            "{name} has shape {:?}, expected [1, {len}]",
            t.shape()
        )));
    }
    let view = t
        .to_plain_array_view::<f32>()
        .map_err(|e| CropError::Output(format!("{name}: {e}")))?;
    Ok(view.iter().copied().collect())
}

impl Cropper {
    /// A cropper over the cropper model with default parameters.
    pub fn new(model: &Model) -> Result<Cropper, ScanError> {
        Cropper::with_params(model, CropParams::default())
    }

    /// A cropper with explicit parameters. `model` must be the cropper.
    pub fn with_params(model: &Model, params: CropParams) -> Result<Cropper, ScanError> {
        if model.kind() != ModelKind::Cropper {
            return Err(ScanError::Input {
                stage: "crop",
                message: format!("expected the cropper model, got {}", model.kind()),
            });
        }
        Ok(Cropper {
            model: model.clone(),
            params,
        })
    }

    /// Runs the cropper on `image` (upright 8-bit RGB) and decodes the crop in source pixels.
    pub fn run(&self, image: &RgbImage) -> Result<CropResult, ScanError> {
        let input = preprocess(image)?;
        let outputs = self.model.run(input)?;
        let [px, py, pm] = outputs.as_slice() else {
            return Err(CropError::Output(format!("{} outputs, expected 3", outputs.len())).into());
        };
        let proj_x = flat_output(px, BINS, "proj_x")?;
        let proj_y = flat_output(py, BINS, "proj_y")?;
        let m = flat_output(pm, 4, "margins")?;
        let margins = [m[0], m[1], m[2], m[3]];
        let (normalised, confidence) = decode(&proj_x, &proj_y, margins, &self.params);
        let (w, h) = (f64::from(image.width()), f64::from(image.height()));
        let mut b = [
            normalised[0] * w,
            normalised[1] * h,
            normalised[2] * w,
            normalised[3] * h,
        ];
        if b[2] - b[0] < 1.0 || b[3] - b[1] < 1.0 {
            b = [0.0, 0.0, w, h];
        }
        Ok(CropResult {
            bbox: BBox {
                x0: b[0] as f32,
                y0: b[1] as f32,
                x1: b[2] as f32,
                y1: b[3] as f32,
            },
            confidence,
            proj_x,
            proj_y,
            margins,
            normalised,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logits(on: std::ops::RangeInclusive<usize>) -> Vec<f32> {
        (0..BINS)
            .map(|i| if on.contains(&i) { 4.0 } else { -4.0 })
            .collect()
    }

    #[test]
    fn decode_follows_the_contract() {
        // Bins 32..=95 on both axes: [0.25, 0.75]; margins 0.1 each → [0.2, 0.8]; pad 4% of 0.6 = 0.024.
        let (b, conf) = decode(
            &logits(32..=95),
            &logits(32..=95),
            [0.1; 4],
            &CropParams::default(),
        );
        for (got, want) in b.iter().zip([0.176, 0.176, 0.824, 0.824]) {
            assert!((got - want).abs() < 1e-9, "{b:?}");
        }
        assert!(conf > 0.98);
    }

    #[test]
    fn empty_axis_is_whole_and_low_confidence() {
        let off = vec![-3.0; BINS];
        let (b, conf) = decode(&off, &off, [0.0; 4], &CropParams::default());
        assert_eq!(b, [0.0, 0.0, 1.0, 1.0]);
        assert!(conf < 0.5);
    }

    #[test]
    fn decode_clips_to_the_image() {
        let (b, _) = decode(
            &logits(0..=127),
            &logits(0..=10),
            [0.25; 4],
            &CropParams::default(),
        );
        assert_eq!(b[0], 0.0);
        assert_eq!(b[2], 1.0);
        assert_eq!(b[1], 0.0);
        assert!(b[3] > 11.0 / 128.0 && b[3] < 1.0);
    }

    #[test]
    fn linear_resize_keeps_flat_images_and_identity() {
        let flat = RgbImage::from_pixel(37, 23, image::Rgb([10, 200, 255]));
        let out = resize_linear_cv(&flat, 512, 512);
        assert!(out.chunks_exact(3).all(|p| p == [10, 200, 255]));
        let img = RgbImage::from_fn(16, 16, |x, y| {
            image::Rgb([(x * 16) as u8, (y * 16) as u8, (x ^ y) as u8])
        });
        assert_eq!(resize_linear_cv(&img, 16, 16), img.as_raw().clone());
    }

    #[test]
    fn linear_resize_interpolates_between_pixel_centres() {
        // 2 → 4 pixels: output centres at source x = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
        let img = RgbImage::from_fn(2, 1, |x, _| image::Rgb([if x == 0 { 0 } else { 200 }; 3]));
        let out = resize_linear_cv(&img, 4, 1);
        let r: Vec<u8> = out.chunks_exact(3).map(|p| p[0]).collect();
        assert_eq!(r, vec![0, 50, 150, 200]);
    }

    #[test]
    fn normalise_uses_imagenet_constants() {
        let rgb = [255u8, 0, 128];
        let mut out = vec![9.0f32; 3 * 4];
        normalise_into(&rgb, 1, 1, &mut out, 2, 2);
        assert!((out[0] - (1.0 - 0.485) / 0.229).abs() < 1e-6);
        assert!((out[4] - (0.0 - 0.456) / 0.224).abs() < 1e-6);
        assert!((out[8] - (128.0 / 255.0 - 0.406) / 0.225).abs() < 1e-6);
        assert_eq!(out[1], 9.0, "outside the image is untouched");
    }
}
