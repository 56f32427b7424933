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
use crate::threads;

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
    /// Also run the model on the left-right mirrored input and keep the union of the two decoded crops
    /// (the mirrored one mapped back). The cropper's misses are projection failures on one side of the image,
    /// and the mirrored reading often does not share them; the cost is one more model run and a looser crop.
    /// The confidence stays the plain reading's. Python reference: `cropper.decode_mirrored`.
    pub mirror: bool,
    /// Threads the two readings of [`CropParams::mirror`] run on ([`crate::threads::map_in_order`]). `0`:
    /// [`crate::threads::auto_threads`]. Default 0.
    pub threads: usize,
}

impl Default for CropParams {
    fn default() -> Self {
        CropParams {
            threshold: 0.5,
            pad: 0.04,
            mirror: false,
            threads: 0,
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
    /// The decoded box before the 1-px fallback, normalised `[x0, y0, x1, y1]` in `[0, 1]` (with
    /// [`CropParams::mirror`], the union of the plain and the mirrored readings' boxes).
    pub normalised: [f64; 4],
    /// With [`CropParams::mirror`]: the mirrored reading's decoded box, mapped back onto the image, normalised.
    pub mirrored: Option<[f64; 4]>,
}

/// One run of the model: `proj_x`, `proj_y` logits and the margins.
struct Reading {
    proj_x: Vec<f32>,
    proj_y: Vec<f32>,
    margins: [f32; 4],
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

/// The input tensor `[1, 3, H, W]` mirrored left to right (each row reversed).
pub fn mirror_input(input: &Tensor) -> Result<Tensor, CropError> {
    let view = input
        .to_plain_array_view::<f32>()
        .map_err(|e| CropError::Tensor(e.to_string()))?;
    Ok(view
        .slice(tract_ndarray::s![.., .., .., ..;-1])
        .to_owned()
        .into_tensor())
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

/// The logit of probability `p`, clamped to `[1e-6, 1 − 1e-6]` first.
fn logit(p: f32) -> f32 {
    let p = p.clamp(1e-6, 1.0 - 1e-6);
    (p / (1.0 - p)).ln()
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
    let logit_t = logit(params.threshold);
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

    /// The model's outputs for one input.
    fn read(&self, input: Tensor) -> Result<Reading, ScanError> {
        let outputs = self.model.run(input)?;
        let [px, py, pm] = outputs.as_slice() else {
            return Err(CropError::Output(format!("{} outputs, expected 3", outputs.len())).into());
        };
        let proj_x = flat_output(px, BINS, "proj_x")?;
        let proj_y = flat_output(py, BINS, "proj_y")?;
        let m = flat_output(pm, 4, "margins")?;
        Ok(Reading {
            proj_x,
            proj_y,
            margins: [m[0], m[1], m[2], m[3]],
        })
    }

    /// Runs the cropper on `image` (upright 8-bit RGB) and decodes the crop in source pixels.
    pub fn run(&self, image: &RgbImage) -> Result<CropResult, ScanError> {
        let input = preprocess(image)?;
        let (plain, flipped) = if self.params.mirror {
            let mirrored_input = mirror_input(&input)?;
            let inputs = [input, mirrored_input];
            let mut readings =
                threads::map_in_order(self.params.threads, &inputs, |t| self.read(t.clone()))?
                    .into_iter();
            (readings.next(), readings.next())
        } else {
            (Some(self.read(input)?), None)
        };
        let Some(Reading {
            proj_x,
            proj_y,
            margins,
        }) = plain
        else {
            return Err(CropError::Output("no reading".into()).into());
        };
        let (mut normalised, confidence) = decode(&proj_x, &proj_y, margins, &self.params);
        let mut mirrored = None;
        if let Some(flipped) = flipped {
            let (b, _) = decode(
                &flipped.proj_x,
                &flipped.proj_y,
                flipped.margins,
                &self.params,
            );
            let back = [1.0 - b[2], b[1], 1.0 - b[0], b[3]];
            normalised = [
                normalised[0].min(back[0]),
                normalised[1].min(back[1]),
                normalised[2].max(back[2]),
                normalised[3].max(back[3]),
            ];
            mirrored = Some(back);
        }
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
            mirrored,
        })
    }
}

/// Growing the crop over content the cropper cut off: a pipeline step after the model, outside its contract
/// (`ScanParams::grow_crop`, off by default).
///
/// A correct crop ends in background: the model's margins plus the 4% padding leave an empty strip along each
/// side. A side that a detection touches ([`touched_sides`]) and whose outermost band holds ink on a canvas
/// background (a graph larger than the window, zoomed so that cards reach the screen's edges) moves out one
/// band at a time while the band beyond it is canvas of the same grey and the side's band still holds ink
/// ([`grow_to_content`]). It stops at the image border, at a band that is not canvas (a bezel, a window frame,
/// clutter), or when the side's band is empty. Only the bands are read (block-averaged luma,
/// [`crate::resample::luma`]), so the cost is a few source rows and columns, not the image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrowParams {
    /// Source pixels are averaged in blocks of `ceil(longer side / max_side)` (1024).
    pub max_side: u32,
    /// Width of a band as a share of the crop's extent across it (0.02), at least 2 block pixels.
    pub band: f64,
    /// Bands are judged in segments of this many block pixels along the side (64), so that glare and
    /// vignetting, which change the background along a side, do not count as ink.
    pub segment: u32,
    /// A pixel is ink when it departs from its segment's median grey by more than this (28 levels).
    pub ink_delta: u8,
    /// A band holds content when at least this share of its canvas pixels (0.002), and at least 3, are ink.
    pub min_ink: f64,
    /// A segment is canvas when at least this share of its pixels lie within `ink_delta` of its median (0.5: a
    /// card crossing the band still leaves it canvas).
    pub canvas_share: f64,
    /// A band beyond a side is canvas when at least this share of its segments are (0.8) and their medians
    /// are within `max_step` of the medians of the side's band (24 levels).
    pub canvas_segments: f64,
    pub max_step: u8,
    /// Only sides that a detection touches grow ([`touched_sides`]): a box edge within this share of the
    /// crop's extent, and at least 2 px, of a side that is not the image border (0: flush, the detector's box
    /// cut by the crop).
    pub touch: f64,
    /// With `Some(t)`, a side grows only as far as the cropper's own projection still sees some content beyond
    /// its on-bins: the run of bins of sigmoid ≥ `t` that continues the on-bins outward ([`projection_limits`]).
    /// A side whose run ends inside the crop does not grow. `None`: up to the image border. Default 0.05: on the
    /// development split the unlimited growth cost photo node F1 0.989 → 0.979, this one nothing
    /// (`models/METRICS.md`, session 46).
    pub min_projection: Option<f32>,
}

impl Default for GrowParams {
    fn default() -> Self {
        GrowParams {
            max_side: 1024,
            band: 0.02,
            segment: 64,
            ink_delta: 28,
            min_ink: 0.002,
            canvas_share: 0.5,
            canvas_segments: 0.8,
            max_step: 24,
            touch: 0.0,
            min_projection: Some(0.05),
        }
    }
}

/// What [`grow_to_content`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    /// The grown crop, source pixels, inside the image (the input box when nothing grew).
    pub bbox: BBox,
    /// Source pixels added on each side (left, top, right, bottom).
    pub added: [f32; 4],
}

/// How far each side of a crop may grow by the cropper's projections, source pixels `[x0, y0, x1, y1]`: from the
/// outermost bins with sigmoid ≥ `on` (as [`decode`] finds them: the box before margins and padding), outward
/// over the bins with sigmoid ≥ `weak`. A side's limit is the outer edge of its last such bin, so where the
/// first bin beyond the on-bins is under `weak` the limit lies inside the padded crop. An axis without on-bins
/// or with the wrong number of bins is not limited (`0` and the image's extent).
pub fn projection_limits(
    crop: &CropResult,
    width: u32,
    height: u32,
    on: f32,
    weak: f32,
) -> [f32; 4] {
    let (logit_on, logit_weak) = (logit(on), logit(weak));
    let axis = |logits: &[f32], extent: f32| -> (f32, f32) {
        if logits.len() != BINS {
            return (0.0, extent);
        }
        let (_, _, Some((first, last))) = axis_span(logits, logit_on) else {
            return (0.0, extent);
        };
        let mut lo = first;
        while lo > 0 && logits[lo - 1] >= logit_weak {
            lo -= 1;
        }
        let mut hi = last;
        while hi + 1 < BINS && logits[hi + 1] >= logit_weak {
            hi += 1;
        }
        let bin = extent / BINS as f32;
        (lo as f32 * bin, (hi + 1) as f32 * bin)
    };
    let (x0, x1) = axis(&crop.proj_x, width as f32);
    let (y0, y1) = axis(&crop.proj_y, height as f32);
    [x0, y0, x1, y1]
}

/// Statistics of one band, per segment along it.
struct Band {
    /// Per segment: median grey, canvas (share within `ink_delta` of the median ≥ `canvas_share`).
    segments: Vec<(u8, bool)>,
    /// Ink pixels in canvas segments, and pixels of canvas segments.
    ink: usize,
    canvas_pixels: usize,
}

/// Statistics of the block rectangle `[bx0, bx1) × [by0, by1)` (block coordinates, block size `f`, each block
/// the rounded mean luma of its source pixels), per segment of `segment` blocks along the x axis (`along_x`)
/// or the y axis.
fn band_stats(image: &RgbImage, f: u32, rect: [u32; 4], along_x: bool, p: &GrowParams) -> Band {
    let [bx0, by0, bx1, by1] = rect;
    let (w, h) = image.dimensions();
    let block = |bx: u32, by: u32| -> u8 {
        let (x0, y0) = (bx * f, by * f);
        let (x1, y1) = ((x0 + f).min(w), (y0 + f).min(h));
        let mut sum = 0u32;
        for y in y0..y1 {
            for x in x0..x1 {
                sum += u32::from(crate::resample::luma(image.get_pixel(x, y).0));
            }
        }
        let n = (x1 - x0) * (y1 - y0);
        ((sum + n / 2) / n.max(1)) as u8
    };
    let (len, across) = if along_x {
        (bx1 - bx0, by1 - by0)
    } else {
        (by1 - by0, bx1 - bx0)
    };
    let seg = p.segment.max(1);
    let mut band = Band {
        segments: Vec::new(),
        ink: 0,
        canvas_pixels: 0,
    };
    let mut s0 = 0;
    while s0 < len {
        // A short remainder joins the previous segment.
        let s1 = if len - s0 < 2 * seg { len } else { s0 + seg };
        let mut values = Vec::with_capacity(((s1 - s0) * across) as usize);
        for a in s0..s1 {
            for c in 0..across {
                values.push(if along_x {
                    block(bx0 + a, by0 + c)
                } else {
                    block(bx0 + c, by0 + a)
                });
            }
        }
        let mut hist = [0usize; 256];
        for &v in &values {
            hist[v as usize] += 1;
        }
        let (mut acc, mut median) = (0, 0u8);
        for (g, &n) in hist.iter().enumerate() {
            acc += n;
            if 2 * acc >= values.len() {
                median = g as u8;
                break;
            }
        }
        let ink = values
            .iter()
            .filter(|&&v| v.abs_diff(median) > p.ink_delta)
            .count();
        let canvas = (values.len() - ink) as f64 >= p.canvas_share * values.len() as f64;
        if canvas {
            band.ink += ink;
            band.canvas_pixels += values.len();
        }
        band.segments.push((median, canvas));
        s0 = s1;
    }
    band
}

/// The sides of `crop` (left, top, right, bottom) that one of `boxes` touches (see [`GrowParams::touch`]),
/// leaving out sides on the border of the `width × height` image. A correct crop ends in background, so a box
/// at its edge is most likely content the cropper cut.
pub fn touched_sides(
    crop: BBox,
    width: u32,
    height: u32,
    boxes: &[BBox],
    p: &GrowParams,
) -> [bool; 4] {
    let (w, h) = (width as f32, height as f32);
    let dx = ((p.touch * f64::from(crop.x1 - crop.x0)) as f32).max(2.0);
    let dy = ((p.touch * f64::from(crop.y1 - crop.y0)) as f32).max(2.0);
    let open = [
        crop.x0 > 0.5,
        crop.y0 > 0.5,
        crop.x1 < w - 0.5,
        crop.y1 < h - 0.5,
    ];
    let mut sides = [false; 4];
    for b in boxes {
        sides[0] |= open[0] && b.x0 <= crop.x0 + dx;
        sides[1] |= open[1] && b.y0 <= crop.y0 + dy;
        sides[2] |= open[2] && b.x1 >= crop.x1 - dx;
        sides[3] |= open[3] && b.y1 >= crop.y1 - dy;
    }
    sides
}

/// Grows the sides of `crop` (source pixels) flagged in `sides` (left, top, right, bottom) over content it cut
/// off; see [`GrowParams`]. Never shrinks it; a crop under 2 blocks on a side, or an empty image, comes back
/// unchanged.
pub fn grow_to_content(image: &RgbImage, crop: BBox, sides: [bool; 4], p: &GrowParams) -> Growth {
    let (w, h) = image.dimensions();
    grow_within(image, crop, sides, [0.0, 0.0, w as f32, h as f32], p)
}

/// [`grow_to_content`] with each side's growth stopped before it passes `limit` (source pixels `[x0, y0, x1,
/// y1]`, e.g. [`projection_limits`]); a side already at or beyond its limit does not grow.
pub fn grow_within(
    image: &RgbImage,
    crop: BBox,
    sides: [bool; 4],
    limit: [f32; 4],
    p: &GrowParams,
) -> Growth {
    let unchanged = Growth {
        bbox: crop,
        added: [0.0; 4],
    };
    let (w, h) = image.dimensions();
    if w == 0
        || h == 0
        || ![crop.x0, crop.y0, crop.x1, crop.y1]
            .iter()
            .all(|v| v.is_finite())
    {
        return unchanged;
    }
    let f = w.max(h).div_ceil(p.max_side.max(1)).max(1);
    let (bw, bh) = (w.div_ceil(f), h.div_ceil(f));
    let to_block = |v: f32, max: u32, up: bool| -> u32 {
        let b = f64::from(v) / f64::from(f);
        let b = if up { b.ceil() } else { b.floor() };
        (b.max(0.0) as u32).min(max)
    };
    // Block rectangle [x0, y0, x1, y1), half-open.
    let mut r = [
        to_block(crop.x0, bw, false),
        to_block(crop.y0, bh, false),
        to_block(crop.x1, bw, true),
        to_block(crop.y1, bh, true),
    ];
    if r[2] < r[0] + 2 || r[3] < r[1] + 2 {
        return unchanged;
    }
    let start = r;
    let width = |r: &[u32; 4], side: usize| -> u32 {
        let extent = if side.is_multiple_of(2) {
            r[2] - r[0]
        } else {
            r[3] - r[1]
        };
        ((p.band * f64::from(extent)).round() as u32).max(2)
    };
    // The band inside side `side` of `r` and the band of the same width beyond it (None at the border).
    let bands = |r: &[u32; 4], side: usize| -> ([u32; 4], Option<[u32; 4]>) {
        let d = width(r, side);
        let [x0, y0, x1, y1] = *r;
        match side {
            0 => (
                [x0, y0, (x0 + d).min(x1), y1],
                (x0 > 0).then(|| [x0.saturating_sub(d), y0, x0, y1]),
            ),
            1 => (
                [x0, y0, x1, (y0 + d).min(y1)],
                (y0 > 0).then(|| [x0, y0.saturating_sub(d), x1, y0]),
            ),
            2 => (
                [x1.saturating_sub(d).max(x0), y0, x1, y1],
                (x1 < bw).then(|| [x1, y0, (x1 + d).min(bw), y1]),
            ),
            _ => (
                [x0, y1.saturating_sub(d).max(y0), x1, y1],
                (y1 < bh).then(|| [x0, y1, x1, (y1 + d).min(bh)]),
            ),
        }
    };
    let mut open = sides;
    while open.iter().any(|&o| o) {
        for side in 0..4 {
            if !open[side] {
                continue;
            }
            let along_x = !side.is_multiple_of(2);
            let (inner, outer) = bands(&r, side);
            let Some(outer) = outer else {
                open[side] = false;
                continue;
            };
            let inside = band_stats(image, f, inner, along_x, p);
            let min_ink = (p.min_ink * inside.canvas_pixels as f64).max(3.0);
            if (inside.ink as f64) < min_ink {
                open[side] = false;
                continue;
            }
            let beyond = band_stats(image, f, outer, along_x, p);
            let continuous = beyond
                .segments
                .iter()
                .zip(&inside.segments)
                .filter(|((m_out, c_out), (m_in, _))| *c_out && m_out.abs_diff(*m_in) <= p.max_step)
                .count();
            if (continuous as f64) < p.canvas_segments * beyond.segments.len() as f64 {
                open[side] = false;
                continue;
            }
            let moved = (outer[side] * f) as f32;
            let inside_limit = if side < 2 {
                moved >= limit[side]
            } else {
                moved.min(if side == 2 { w } else { h } as f32) <= limit[side]
            };
            if !inside_limit {
                open[side] = false;
                continue;
            }
            // The band beyond shares three coordinates with `r`; its fourth is the moved side.
            r[side] = outer[side];
        }
    }
    if r == start {
        return unchanged;
    }
    let px = |b: u32, max: u32| (b * f).min(max) as f32;
    let bbox = BBox {
        x0: if r[0] < start[0] {
            px(r[0], w)
        } else {
            crop.x0
        },
        y0: if r[1] < start[1] {
            px(r[1], h)
        } else {
            crop.y0
        },
        x1: if r[2] > start[2] {
            px(r[2], w)
        } else {
            crop.x1
        },
        y1: if r[3] > start[3] {
            px(r[3], h)
        } else {
            crop.y1
        },
    };
    Growth {
        bbox,
        added: [
            crop.x0 - bbox.x0,
            crop.y0 - bbox.y0,
            bbox.x1 - crop.x1,
            bbox.y1 - crop.y1,
        ],
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

    /// A white 480×320 canvas with a "graph" in `content` (dark cards joined by a line), and `bezel`: columns
    /// left of it painted dark grey (a monitor frame).
    fn canvas_with(content: [u32; 4], bezel: u32) -> RgbImage {
        let [x0, y0, x1, y1] = content;
        RgbImage::from_fn(480, 320, |x, y| {
            let card = |cx: u32| x >= cx && x < cx + 40 && (y0..y0 + 20).contains(&y);
            let line = y == (y0 + y1) / 2 && (x0..x1).contains(&x);
            if x < bezel {
                image::Rgb([40, 40, 40])
            } else if card(x0)
                || card(x1 - 40)
                || line
                || (x % 50 == 25 && (y0..y1).contains(&y) && (x0..x1).contains(&x))
            {
                image::Rgb([30, 30, 30])
            } else {
                image::Rgb([245, 245, 245])
            }
        })
    }

    fn bbox(b: [f32; 4]) -> BBox {
        BBox {
            x0: b[0],
            y0: b[1],
            x1: b[2],
            y1: b[3],
        }
    }

    #[test]
    fn a_crop_ending_in_background_stays() {
        let img = canvas_with([100, 80, 300, 220], 0);
        let crop = bbox([90.0, 70.0, 310.0, 230.0]);
        let g = grow_to_content(&img, crop, [true; 4], &GrowParams::default());
        assert_eq!(g.bbox, crop);
        assert_eq!(g.added, [0.0; 4]);
    }

    #[test]
    fn a_cut_side_grows_over_the_content() {
        let img = canvas_with([20, 80, 300, 220], 0);
        let crop = bbox([90.0, 70.0, 310.0, 230.0]);
        let g = grow_to_content(&img, crop, [true; 4], &GrowParams::default());
        assert!(g.bbox.x0 <= 20.0 && g.bbox.x0 >= 8.0, "{g:?}");
        assert_eq!([g.bbox.y0, g.bbox.x1, g.bbox.y1], [70.0, 310.0, 230.0]);
        assert_eq!(g.added[0], 90.0 - g.bbox.x0);
    }

    #[test]
    fn growth_stops_at_a_bezel() {
        let img = canvas_with([56, 80, 300, 220], 54);
        let crop = bbox([90.0, 70.0, 310.0, 230.0]);
        let g = grow_to_content(&img, crop, [true; 4], &GrowParams::default());
        assert!(g.bbox.x0 <= 56.0 && g.bbox.x0 >= 50.0, "{g:?}");
    }

    #[test]
    fn content_up_to_the_border_takes_the_border() {
        let img = canvas_with([0, 80, 300, 220], 0);
        let g = grow_to_content(
            &img,
            bbox([90.0, 70.0, 310.0, 230.0]),
            [true; 4],
            &GrowParams::default(),
        );
        assert_eq!(g.bbox.x0, 0.0);
    }

    #[test]
    fn only_sides_a_box_touches_count() {
        let p = GrowParams::default();
        let crop = bbox([100.0, 100.0, 300.0, 200.0]);
        let inner = bbox([150.0, 120.0, 250.0, 180.0]);
        assert_eq!(touched_sides(crop, 400, 300, &[inner], &p), [false; 4]);
        let at_left = bbox([101.5, 150.0, 130.0, 160.0]);
        let at_bottom = bbox([200.0, 180.0, 220.0, 198.5]);
        let near_top = bbox([200.0, 104.0, 220.0, 110.0]);
        assert_eq!(
            touched_sides(crop, 400, 300, &[inner, at_left, at_bottom, near_top], &p),
            [true, false, false, true]
        );
        // A side on the image border never grows.
        let whole = bbox([0.0, 0.0, 400.0, 300.0]);
        assert_eq!(touched_sides(whole, 400, 300, &[whole], &p), [false; 4]);
        // Growing only the flagged side.
        let img = canvas_with([20, 80, 300, 220], 0);
        let g = grow_to_content(
            &img,
            bbox([90.0, 70.0, 310.0, 230.0]),
            [false, true, true, true],
            &p,
        );
        assert_eq!(g.added, [0.0; 4]);
    }

    #[test]
    fn projection_limits_follow_the_weak_bins_beyond_the_on_bins() {
        // On: 32..=95; weak (sigmoid 0.12): 28..=31 and 96..=100; the rest 0.018.
        let x: Vec<f32> = (0..BINS)
            .map(|i| match i {
                32..=95 => 4.0,
                28..=31 | 96..=100 => -2.0,
                _ => -4.0,
            })
            .collect();
        let crop = CropResult {
            bbox: bbox([0.0; 4]),
            confidence: 1.0,
            proj_x: x.clone(),
            proj_y: logits(32..=95),
            margins: [0.0; 4],
            normalised: [0.0; 4],
            mirrored: None,
        };
        let l = projection_limits(&crop, 1280, 640, 0.5, 0.05);
        assert_eq!(l, [280.0, 160.0, 1010.0, 480.0]);
        // Above the weak bins' sigmoid, the limits are the on-bins' own edges.
        assert_eq!(
            projection_limits(&crop, 1280, 640, 0.5, 0.2)[..3],
            [320.0, 160.0, 960.0]
        );
        // An axis without on-bins, or with the wrong number of bins, is not limited.
        let free = CropResult {
            proj_x: vec![-4.0; BINS],
            proj_y: vec![4.0; 7],
            ..crop
        };
        assert_eq!(
            projection_limits(&free, 1280, 640, 0.5, 0.05),
            [0.0, 0.0, 1280.0, 640.0]
        );
    }

    #[test]
    fn growth_stops_at_its_limit() {
        let img = canvas_with([20, 80, 300, 220], 0);
        let crop = bbox([90.0, 70.0, 310.0, 230.0]);
        let p = GrowParams::default();
        let free = grow_within(&img, crop, [true; 4], [0.0, 0.0, 480.0, 320.0], &p);
        assert_eq!(free, grow_to_content(&img, crop, [true; 4], &p));
        assert!(free.bbox.x0 <= 20.0, "{free:?}");
        let held = grow_within(&img, crop, [true; 4], [60.0, 0.0, 480.0, 320.0], &p);
        assert!(held.bbox.x0 >= 60.0 && held.bbox.x0 < 90.0, "{held:?}");
        let none = grow_within(&img, crop, [true; 4], [95.0, 0.0, 480.0, 320.0], &p);
        assert_eq!(none.bbox, crop);
    }

    #[test]
    fn noise_and_degenerate_crops_do_not_grow() {
        let mut state = 12345u32;
        let noise = RgbImage::from_fn(300, 200, |_, _| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            image::Rgb([(state >> 16) as u8; 3])
        });
        let crop = bbox([100.0, 50.0, 200.0, 150.0]);
        let p = GrowParams::default();
        assert_eq!(grow_to_content(&noise, crop, [true; 4], &p).bbox, crop);
        let img = canvas_with([20, 80, 300, 220], 0);
        for b in [
            [100.0, 100.0, 100.5, 100.5],
            [f32::NAN, 0.0, 10.0, 10.0],
            [300.0, 10.0, 200.0, 20.0],
        ] {
            assert_eq!(
                grow_to_content(&img, bbox(b), [true; 4], &p).added,
                [0.0; 4]
            );
        }
        let empty = RgbImage::new(0, 0);
        assert_eq!(grow_to_content(&empty, crop, [true; 4], &p).bbox, crop);
    }
}
