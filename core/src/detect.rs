//! Detector stage: operator cards, tensor labels, graph inputs and outputs (`models/detector.MODEL.md`; Python
//! reference `models/train/detector.py`: `letterbox`, `to_detector_tensor`, `tiles_for_crop`, `postprocess`,
//! `merge_tiles`).
//!
//! 1. Tiling: an elongated crop is split along its long axis into overlapping tiles ([`tiles_for_crop`]) so
//!    small text is not shrunk away by the letterbox; a compact crop is one tile.
//! 2. Letterbox per tile (box `[x0, y0, x1, y1]`, `cw × ch` source px): `s = min(512/cw, 512/ch)`,
//!    `tw = clamp(round_half_even(cw·s), 1, 512)`, `th` likewise; the fractional box of the 8-bit source is
//!    resized to `tw × th` with antialiased bilinear (Pillow `BILINEAR` with `box=`, reproduced bit for bit by
//!    [`crate::resample`]), placed top-left, normalised `(p/255 − MEAN)/STD`; the rest of the float32
//!    `[1, 3, H, W]` NCHW tensor is 0.0, with the input trimmed to the content plus a margin:
//!    `H = min(512, ceil32(th + 32))`, `W = min(512, ceil32(tw + 32))` ([`input_side`]; multiples of 32, the
//!    net's total stride; the long side is always 512). Issue #6: a 16:9 tile used to be padded to 512 × 512,
//!    almost half of it padding; now 512 × 320. The 32–63 px of padding kept beyond the content keep the
//!    detections near the content's edge as the model was trained (with no margin, `ceil32(th)`, held-out mean F1
//!    on photos fell from 0.948 to 0.938, through extra and lost input/output pills within ~70 px of the trimmed
//!    edge; with it, 0.947). [`DetectParams::pad_to_max`] restores the square input (for comparison only).
//! 3. Outputs, stride 4 (cell `(j, i)` covers input pixels `[4i, 4i+4) × [4j, 4j+4)`), on an `H/4 × W/4` grid:
//!    `heatmap [1,4,H/4,W/4]` centre logits (0 node, 1 tensor, 2 input, 3 output), `size [1,2,H/4,W/4]` ln(w),
//!    ln(h) in input px, `offset [1,2,H/4,W/4]` sub-cell centre. The detector runs on a tract plan per input
//!    shape ([`Model::run_any_size`]); a tile taller than wide runs on the transposed input through the
//!    transposed graph ([`Model::run_transposed`], [`DetectParams::transpose_tall`]), which tract runs faster.
//! 4. Post-processing ([`postprocess`]): sigmoid, 3×3 max-pool peaks ≥ threshold, top-k by score (ties by flat
//!    index `c·rows·cols + j·cols + i`), box decode, back to source pixels clipped to the tile, class-wise greedy
//!    NMS. The content and its mapping `(u, v) ↔ (x0 + u·cw/tw, y0 + v·ch/th)` do not depend on the padding, so
//!    decode and back-projection are the same as with the square input; only the outputs near the trimmed edge
//!    change (the network's zero padding at every stride now starts there).
//! 5. Tiles merged ([`merge_tiles`]): each tile keeps detections centred in its core, then NMS again.
//! 6. Zoom ([`ZoomParams`], on by default): when the merged node boxes came out smaller in the input than the
//!    detector was trained to see them (a large graph filling the window), steps 2–5 run again over a grid of
//!    square tiles at the scale that brings them back ([`zoom_scale`], [`zoomed_tiles`]), and that pass's
//!    detections replace the first's.
//! 7. Cross-class NMS ([`cross_class_nms`], [`DetectParams::cross_class_iou`]): of two boxes of different classes
//!    on the same place, the lower-scored one goes.

use image::RgbImage;
use thiserror::Error;
use tract_nnef::prelude::*;

use crate::crop::normalise_into;
use crate::error::ScanError;
use crate::graph::BBox;
use crate::models::{Model, ModelKind};
use crate::resample;
use crate::threads;

/// Largest side of the detector input, pixels (the letterbox's long side).
pub const INPUT_SIZE: usize = 512;
/// Input height and width are multiples of this ([`crate::models::HW_MULTIPLE`], the net's total stride).
pub const INPUT_MULTIPLE: usize = crate::models::HW_MULTIPLE;
/// At least this much padding (px) is kept beyond the content on a trimmed side (when the side stays under 512).
pub const INPUT_MARGIN: usize = 32;
/// Output stride, input pixels per cell.
pub const STRIDE: usize = 4;

/// The input side for `content` px (`tw` or `th`): `min(512, ceil32(content + 32))`, i.e. `content` plus
/// [`INPUT_MARGIN`] rounded up to a multiple of [`INPUT_MULTIPLE`], at most [`INPUT_SIZE`].
pub fn input_side(content: usize) -> usize {
    content
        .saturating_add(INPUT_MARGIN)
        .div_ceil(INPUT_MULTIPLE)
        .saturating_mul(INPUT_MULTIPLE)
        .clamp(INPUT_MULTIPLE, INPUT_SIZE)
}

/// Why the detector stage failed (besides a failed model run, which is [`ScanError::Inference`]).
#[derive(Debug, Error, PartialEq)]
pub enum DetectError {
    /// The crop box is not finite, or does not overlap the image by at least one pixel each way.
    #[error("crop box {0:?} is not a finite box inside the image")]
    BadCrop([f32; 4]),
    /// The model returned tensors of unexpected shapes.
    #[error("unexpected output: {0}")]
    Output(String),
    /// The letterbox resize failed.
    #[error("resize: {0}")]
    Resize(String),
}

/// Detected element class (heatmap channel order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DetClass {
    /// Operator card.
    Node,
    /// Tensor-shape label on an edge.
    Tensor,
    /// Graph input pill.
    Input,
    /// Graph output pill.
    Output,
}

impl DetClass {
    /// All classes in heatmap channel order.
    pub const ALL: [DetClass; 4] = [
        DetClass::Node,
        DetClass::Tensor,
        DetClass::Input,
        DetClass::Output,
    ];

    /// Heatmap channel of this class.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Class of heatmap channel `c` (0..4).
    pub fn from_index(c: usize) -> Option<DetClass> {
        DetClass::ALL.get(c).copied()
    }

    /// Lowercase name (`node`, `tensor`, `input`, `output`).
    pub fn name(self) -> &'static str {
        match self {
            DetClass::Node => "node",
            DetClass::Tensor => "tensor",
            DetClass::Input => "input",
            DetClass::Output => "output",
        }
    }
}

/// One detection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    pub class: DetClass,
    /// Source-image pixels, inside the crop.
    pub bbox: BBox,
    /// Peak sigmoid in `[0, 1]`.
    pub score: f32,
}

/// Post-processing and tiling parameters (defaults: the contract of `detector.MODEL.md` / `detector.py`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectParams {
    /// Minimum peak sigmoid.
    pub score_threshold: f32,
    /// At most this many peaks per tile (all classes together), before NMS.
    pub top_k: usize,
    /// Same-class boxes overlapping a kept box by more than this IoU are dropped.
    pub nms_iou: f64,
    /// After the tiles are merged, a box overlapping a higher-scored box of *another* class by more than this
    /// IoU is dropped too ([`cross_class_nms`]): one place on the canvas is one thing (a node card is not also
    /// a graph output). `> 1` disables it.
    pub cross_class_iou: f64,
    /// Split elongated crops into tiles (as the Python evaluation and pipeline do).
    pub tiles: bool,
    /// Tile length floor, source px.
    pub tile_min: f64,
    /// Tile length is at least this × the crop's short side.
    pub tile_aspect: f64,
    /// Overlap between neighbouring tiles, as a fraction of the tile length.
    pub tile_overlap: f64,
    /// At most this many tiles.
    pub tile_max: usize,
    /// Pad every tile to the full `512 × 512` input, as before issue #6, instead of trimming it to
    /// [`input_side`]`(tw) × `[`input_side`]`(th)`. Slower (up to 8× the work for a thin tile, 1.6× for
    /// 16:9); kept to compare.
    pub pad_to_max: bool,
    /// Run a tile whose input is taller than wide through the detector with its spatial axes exchanged, on the
    /// transposed input ([`Model::run_transposed`]): the same detections up to float rounding, for less time,
    /// because tract's depthwise convolutions reach their vector kernel only along the wider axis
    /// (`BENCHMARKS.md`, session 42). On arm64 tract runs them channels last instead, and the tile runs as it is
    /// ([`Model::runs_transposed`]). Default true.
    pub transpose_tall: bool,
    /// A second pass over a finer grid of tiles when the first pass found the cards smaller than the detector
    /// was trained to see them ([`ZoomParams`]); `None`: one pass.
    pub zoom: Option<ZoomParams>,
    /// Threads the tiles of one pass run on ([`crate::threads::map_in_order`]; the detections are the same at any
    /// count). `0`: [`crate::threads::auto_threads`]. Default 0.
    pub threads: usize,
}

/// The detector's second look at a view whose cards came out small in its input.
///
/// The tiling above scales a crop by its size, not by its content: the training scenes (graphs of 1–60 nodes,
/// usually smaller than the window) reach the detector at scale ≥ 1, but a large graph filling the window is
/// shrunk about 2× with the same text on screen, and the detector then misses cards and labels it finds at the
/// trained scale (`models/METRICS.md`, session 23). So when the lower quartile of the first pass's node-box
/// heights, in input px, is under [`ZoomParams::min_px`], the crop is cut again into a grid of square tiles whose
/// scale puts that quartile at [`ZoomParams::target_px`] ([`zoomed_tiles`]), and the second pass's detections
/// replace the first's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoomParams {
    /// Zoom when the lower-quartile node height of the first pass, input px, is below this.
    pub min_px: f64,
    /// The second pass's scale puts that height at this many input px.
    pub target_px: f64,
    /// At most this many tiles in the second pass; the grid's tiles grow until they fit.
    pub max_tiles: usize,
    /// Fewer node boxes than this in the first pass: no estimate, no second pass.
    pub min_nodes: usize,
    /// Largest scale of the second pass, input px per source px.
    pub max_scale: f64,
    /// Overlap between neighbouring tiles of the grid, as a fraction of the tile side.
    pub overlap: f64,
}

impl Default for ZoomParams {
    fn default() -> Self {
        ZoomParams {
            min_px: 12.0,
            target_px: 17.0,
            max_tiles: 12,
            min_nodes: 4,
            max_scale: 2.0,
            overlap: 0.25,
        }
    }
}

impl Default for DetectParams {
    fn default() -> Self {
        DetectParams {
            score_threshold: 0.3,
            top_k: 300,
            nms_iou: 0.5,
            cross_class_iou: 0.5,
            tiles: true,
            tile_min: 512.0,
            tile_aspect: 1.5,
            tile_overlap: 0.25,
            tile_max: 8,
            pad_to_max: false,
            transpose_tall: true,
            zoom: Some(ZoomParams::default()),
            threads: 0,
        }
    }
}

/// Where a tile went in the detector input: box in source px, the resized size `tw × th` at the top-left, and the
/// input size `input_w × input_h` (the rest is padding). Input pixel `(u, v)` ↔ source
/// `(x0 + u·cw/tw, y0 + v·ch/th)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Letterbox {
    pub crop: [f64; 4],
    pub tw: usize,
    pub th: usize,
    /// Input tensor width, px: `min(512, ceil32(tw + 32))` ([`input_side`]), or 512 when padded to the maximum.
    pub input_w: usize,
    /// Input tensor height, px: [`input_side`]`(th)`, or 512 when padded to the maximum.
    pub input_h: usize,
}

impl Letterbox {
    /// The letterbox of `crop` (`tw`, `th` as in the module doc), its input trimmed to
    /// [`input_side`]`(tw) × `[`input_side`]`(th)`.
    pub fn for_crop(crop: [f64; 4]) -> Letterbox {
        let (cw, ch) = (crop[2] - crop[0], crop[3] - crop[1]);
        let s = (INPUT_SIZE as f64 / cw).min(INPUT_SIZE as f64 / ch);
        let side = |v: f64| (v * s).round_ties_even().clamp(1.0, INPUT_SIZE as f64) as usize;
        let (tw, th) = (side(cw), side(ch));
        Letterbox {
            crop,
            tw,
            th,
            input_w: input_side(tw),
            input_h: input_side(th),
        }
    }

    /// The same letterbox in the full `512 × 512` input (the contract before issue #6).
    pub fn padded_to_max(self) -> Letterbox {
        Letterbox {
            input_w: INPUT_SIZE,
            input_h: INPUT_SIZE,
            ..self
        }
    }

    /// Output grid `(rows, cols)` = `(input_h / 4, input_w / 4)`.
    pub fn grid(&self) -> (usize, usize) {
        (self.input_h / STRIDE, self.input_w / STRIDE)
    }

    /// Source px per input px, x and y.
    pub fn scale(&self) -> (f64, f64) {
        (
            (self.crop[2] - self.crop[0]) / self.tw as f64,
            (self.crop[3] - self.crop[1]) / self.th as f64,
        )
    }
}

/// One detector input cut from a crop: `bbox` is letterboxed; its detections are kept only when their centre is
/// in `core` (half-open, closed at the crop's far edges).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tile {
    pub bbox: [f64; 4],
    pub core: [f64; 4],
}

/// Splits an elongated crop along its long axis (`detector.tiles_for_crop`): with `short`, `long` the crop's
/// sides, tile length `L = min(long, max(tile_min, tile_aspect·short))`; one tile if `long ≤ L`, else
/// `n = min(tile_max, ceil((long − L)/(L·(1 − overlap))) + 1)` evenly spaced tiles (if `n` hit the cap,
/// `L = long / (1 + (n − 1)(1 − overlap))`), cores split at the midpoints of the overlaps.
pub fn tiles_for_crop(crop: [f64; 4], params: &DetectParams) -> Vec<Tile> {
    let [x0, y0, x1, y1] = crop;
    let (cw, ch) = (x1 - x0, y1 - y0);
    let vertical = ch >= cw;
    let (short, long) = if vertical { (cw, ch) } else { (ch, cw) };
    let mut tl = long.min(params.tile_min.max(params.tile_aspect * short));
    if !params.tiles || long <= tl + 1e-6 {
        return vec![Tile {
            bbox: crop,
            core: crop,
        }];
    }
    let mut n = span_count(long, tl, params.tile_overlap);
    let cap = params.tile_max.max(2);
    if n > cap {
        n = cap;
        tl = long / (1.0 + (n - 1) as f64 * (1.0 - params.tile_overlap));
    }
    let lo = if vertical { y0 } else { x0 };
    even_spans(lo, long, tl, n)
        .into_iter()
        .map(|(a0, a1, c0, c1)| {
            if vertical {
                Tile {
                    bbox: [x0, a0, x1, a1],
                    core: [x0, c0, x1, c1],
                }
            } else {
                Tile {
                    bbox: [a0, y0, a1, y1],
                    core: [c0, y0, c1, y1],
                }
            }
        })
        .collect()
}

/// How many spans of length `tl` overlapping by at least `overlap · tl` cover a length `len > tl`.
fn span_count(len: f64, tl: f64, overlap: f64) -> usize {
    ((len - tl) / (tl * (1.0 - overlap))).ceil() as usize + 1
}

/// `n ≥ 2` evenly spaced spans of length `tl` over `[lo, lo + len)`, each with its core: from the middle of the
/// overlap with the previous span (`lo` for the first) to the middle of the overlap with the next (`lo + len` for
/// the last). Returns `(start, end, core start, core end)`.
fn even_spans(lo: f64, len: f64, tl: f64, n: usize) -> Vec<(f64, f64, f64, f64)> {
    let starts: Vec<f64> = (0..n)
        .map(|k| k as f64 * (len - tl) / (n - 1) as f64)
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &a)| {
            let c0 = if k == 0 {
                0.0
            } else {
                (a + starts[k - 1] + tl) / 2.0
            };
            let c1 = if k == n - 1 {
                len
            } else {
                (starts[k + 1] + a + tl) / 2.0
            };
            (lo + a, lo + a + tl, lo + c0, lo + c1)
        })
        .collect()
}

/// `[lo, lo + len)` cut into spans of length `tl` overlapping by at least `overlap · tl` ([`even_spans`]), or
/// one span when `len ≤ tl`.
fn spans(lo: f64, len: f64, tl: f64, overlap: f64) -> Vec<(f64, f64, f64, f64)> {
    if len <= tl + 1e-6 {
        return vec![(lo, lo + len, lo, lo + len)];
    }
    even_spans(lo, len, tl, span_count(len, tl, overlap))
}

/// The second pass's tiles ([`ZoomParams`]): a grid over `crop` of square tiles `512 / scale` source px on a
/// side (cut to the crop where it is smaller), overlapping by `overlap`, with cores as in [`tiles_for_crop`]. When
/// the grid would hold more than `max_tiles`, the side grows by 5% steps until it fits (so the scale drops).
pub fn zoomed_tiles(crop: [f64; 4], scale: f64, overlap: f64, max_tiles: usize) -> Vec<Tile> {
    let [x0, y0, x1, y1] = crop;
    let (cw, ch) = (x1 - x0, y1 - y0);
    let mut side = INPUT_SIZE as f64 / scale.max(1e-6);
    let (mut xs, mut ys) = (spans(x0, cw, side, overlap), spans(y0, ch, side, overlap));
    while xs.len() * ys.len() > max_tiles.max(1) {
        side *= 1.05;
        xs = spans(x0, cw, side, overlap);
        ys = spans(y0, ch, side, overlap);
    }
    ys.iter()
        .flat_map(|&(ty0, ty1, cy0, cy1)| {
            xs.iter().map(move |&(tx0, tx1, cx0, cx1)| Tile {
                bbox: [tx0, ty0, tx1, ty1],
                core: [cx0, cy0, cx1, cy1],
            })
        })
        .collect()
}

/// The scale (input px per source px) for the second pass over `dets`, the first pass's detections at
/// `scale` input px per source px, or `None` when the first pass saw the cards large enough (or too few of them).
pub fn zoom_scale(dets: &[RawDetection], scale: f64, zoom: &ZoomParams) -> Option<f64> {
    let mut heights: Vec<f64> = dets
        .iter()
        .filter(|d| d.class == DetClass::Node.index())
        .map(|d| d.bbox[3] - d.bbox[1])
        .collect();
    if heights.len() < zoom.min_nodes.max(1) {
        return None;
    }
    heights.sort_by(f64::total_cmp);
    let quartile = heights[heights.len() / 4];
    if quartile <= 0.0 || quartile * scale >= zoom.min_px {
        return None;
    }
    let target = (zoom.target_px / quartile).min(zoom.max_scale);
    (target > scale * 1.1).then_some(target)
}

/// Resizes the fractional region `bbox` (source px) of `image` to `width × height` with antialiased bilinear,
/// bit-exact with Pillow `resize((width, height), BILINEAR, box=bbox)` ([`crate::resample`]; the box is
/// rounded to `f32` as Pillow does).
pub fn resize_region(
    image: &RgbImage,
    bbox: [f64; 4],
    width: u32,
    height: u32,
) -> Result<RgbImage, DetectError> {
    // Tile arithmetic can overshoot the image edge by a rounding error.
    let (w, h) = (image.width() as f32, image.height() as f32);
    let b = bbox.map(|v| v as f32);
    let region = [
        b[0].clamp(0.0, w),
        b[1].clamp(0.0, h),
        b[2].clamp(0.0, w),
        b[3].clamp(0.0, h),
    ];
    let pixels = resample::resize_rgb_box(image, region, width, height).ok_or_else(|| {
        DetectError::Resize(format!(
            "region {bbox:?} → {width}x{height} is not resizable"
        ))
    })?;
    RgbImage::from_raw(width, height, pixels)
        .ok_or_else(|| DetectError::Resize("buffer size".into()))
}

/// The detector's input tensor `[1, 3, input_side(th), input_side(tw)]` for one tile box, with its letterbox
/// ([`Letterbox::for_crop`]).
pub fn preprocess(image: &RgbImage, bbox: [f64; 4]) -> Result<(Tensor, Letterbox), DetectError> {
    let lb = Letterbox::for_crop(bbox);
    Ok((preprocess_letterbox(image, &lb)?, lb))
}

/// The detector's input tensor `[1, 3, input_h, input_w]` for the letterbox `lb`: `lb.crop` resized to
/// `tw × th` at the top-left, 0.0 elsewhere. A letterbox whose content does not fit its input is
/// [`DetectError::Resize`].
pub fn preprocess_letterbox(image: &RgbImage, lb: &Letterbox) -> Result<Tensor, DetectError> {
    let (w, h) = (lb.input_w, lb.input_h);
    if lb.tw == 0 || lb.th == 0 || lb.tw > w || lb.th > h || w > INPUT_SIZE || h > INPUT_SIZE {
        return Err(DetectError::Resize(format!(
            "{}x{} content in a {w}x{h} input",
            lb.tw, lb.th
        )));
    }
    let small = resize_region(image, lb.crop, lb.tw as u32, lb.th as u32)?;
    let mut data = vec![0f32; 3 * w * h];
    normalise_into(small.as_raw(), lb.tw, lb.th, &mut data, w, h);
    Tensor::from_shape(&[1, 3, h, w], &data).map_err(|e| DetectError::Resize(e.to_string()))
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Intersection over union of two `[x0, y0, x1, y1]` boxes (0 when they do not overlap).
pub fn iou(a: &[f64; 4], b: &[f64; 4]) -> f64 {
    let iw = a[2].min(b[2]) - a[0].max(b[0]);
    let ih = a[3].min(b[3]) - a[1].max(b[1]);
    if iw <= 0.0 || ih <= 0.0 {
        return 0.0;
    }
    let inter = iw * ih;
    let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    if union > 0.0 {
        inter / union
    } else {
        0.0
    }
}

/// A detection in float64 source px, before conversion to [`Detection`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawDetection {
    pub class: usize,
    pub bbox: [f64; 4],
    pub score: f32,
}

/// Class-wise greedy NMS over detections sorted by descending score; returns the kept ones in order.
pub fn nms(dets: &[RawDetection], iou_max: f64) -> Vec<RawDetection> {
    greedy_nms(dets, iou_max, true)
}

/// Greedy NMS across classes over detections sorted by descending score: a box is dropped when it overlaps a
/// kept box of another class by more than `iou_max` (same-class overlaps are [`nms`]'s business and are kept
/// here). Returns the kept ones in order.
pub fn cross_class_nms(dets: &[RawDetection], iou_max: f64) -> Vec<RawDetection> {
    greedy_nms(dets, iou_max, false)
}

/// Keeps a detection unless it overlaps (IoU > `iou_max`) a kept one of the same class (`same_class`) or of
/// another class (`!same_class`).
fn greedy_nms(dets: &[RawDetection], iou_max: f64, same_class: bool) -> Vec<RawDetection> {
    let mut keep: Vec<RawDetection> = Vec::new();
    for d in dets {
        if !keep
            .iter()
            .any(|k| (k.class == d.class) == same_class && iou(&k.bbox, &d.bbox) > iou_max)
        {
            keep.push(*d);
        }
    }
    keep
}

/// One tile's raw outputs as flat C-order slices over a `rows × cols` grid (`rows = H/4`, `cols = W/4` of the
/// input): `heatmap [4, rows, cols]`, `size [2, rows, cols]`, `offset [2, rows, cols]`.
#[derive(Debug, Clone, Copy)]
pub struct HeadMaps<'a> {
    heatmap: &'a [f32],
    size: &'a [f32],
    offset: &'a [f32],
    rows: usize,
    cols: usize,
}

impl<'a> HeadMaps<'a> {
    /// Checks the slice lengths against the grid; a mismatch is [`DetectError::Output`].
    pub fn new(
        heatmap: &'a [f32],
        size: &'a [f32],
        offset: &'a [f32],
        rows: usize,
        cols: usize,
    ) -> Result<HeadMaps<'a>, DetectError> {
        let cells = rows.checked_mul(cols).filter(|&n| n > 0);
        let ok = cells.is_some_and(|n| {
            heatmap.len() == 4 * n && size.len() == 2 * n && offset.len() == 2 * n
        });
        if !ok {
            return Err(DetectError::Output(format!(
                "{} / {} / {} values for a {rows}x{cols} grid (expected 4, 2, 2 planes)",
                heatmap.len(),
                size.len(),
                offset.len()
            )));
        }
        Ok(HeadMaps {
            heatmap,
            size,
            offset,
            rows,
            cols,
        })
    }

    /// Grid `(rows, cols)`.
    pub fn grid(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
}

/// One tile's outputs → detections in source pixels (when `lb` is given; input pixels otherwise),
/// `detector.postprocess`. The grid is the outputs' own (`H/4 × W/4`).
pub fn postprocess(
    maps: &HeadMaps<'_>,
    lb: Option<&Letterbox>,
    params: &DetectParams,
) -> Vec<RawDetection> {
    let (rows, cols) = (maps.rows, maps.cols);
    let n = rows * cols;
    let (size, offset) = (maps.size, maps.offset);
    let p: Vec<f32> = maps.heatmap.iter().map(|&v| sigmoid(v)).collect();
    let mut peaks: Vec<(f32, usize)> = Vec::new();
    for c in 0..4 {
        let plane = &p[c * n..(c + 1) * n];
        for j in 0..rows {
            for i in 0..cols {
                let v = plane[j * cols + i];
                if v < params.score_threshold {
                    continue;
                }
                let mut is_peak = true;
                'win: for jj in j.saturating_sub(1)..(j + 2).min(rows) {
                    for ii in i.saturating_sub(1)..(i + 2).min(cols) {
                        if plane[jj * cols + ii] > v {
                            is_peak = false;
                            break 'win;
                        }
                    }
                }
                if is_peak {
                    peaks.push((v, c * n + j * cols + i));
                }
            }
        }
    }
    peaks.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    peaks.truncate(params.top_k);
    let dets: Vec<RawDetection> = peaks
        .iter()
        .filter_map(|&(score, flat)| {
            let (c, cell) = (flat / n, flat % n);
            let (j, i) = (cell / cols, cell % cols);
            let s = STRIDE as f64;
            let cx = (i as f64 + f64::from(offset[cell])) * s;
            let cy = (j as f64 + f64::from(offset[n + cell])) * s;
            let bw = f64::from(size[cell].exp());
            let bh = f64::from(size[n + cell].exp());
            let mut b = [cx - bw / 2.0, cy - bh / 2.0, cx + bw / 2.0, cy + bh / 2.0];
            if let Some(lb) = lb {
                let (sx, sy) = lb.scale();
                let [x0, y0, x1, y1] = lb.crop;
                b = [
                    (x0 + b[0] * sx).clamp(x0, x1),
                    (y0 + b[1] * sy).clamp(y0, y1),
                    (x0 + b[2] * sx).clamp(x0, x1),
                    (y0 + b[3] * sy).clamp(y0, y1),
                ];
            }
            // A peak in the padding beyond the crop clips to an empty box: nothing to read there.
            (b[2] > b[0] && b[3] > b[1]).then_some(RawDetection {
                class: c,
                bbox: b,
                score,
            })
        })
        .collect();
    nms(&dets, params.nms_iou)
}

/// Whether the centre of `b` lies in the tile's core (half-open; closed on the crop's far edges).
fn in_core(b: &[f64; 4], tile: &Tile, crop: &[f64; 4]) -> bool {
    let cx = (b[0] + b[2]) / 2.0;
    let cy = (b[1] + b[3]) / 2.0;
    let c = &tile.core;
    let okx = cx >= c[0] && (cx < c[2] || (c[2] >= crop[2] && cx <= c[2]));
    let oky = cy >= c[1] && (cy < c[3] || (c[3] >= crop[3] && cy <= c[3]));
    okx && oky
}

/// Combines per-tile detections (source px) of one crop (`detector.merge_tiles`): keep each tile's detections
/// centred in its core, stable-sort all by descending score, class-wise NMS again.
pub fn merge_tiles(
    per_tile: &[Vec<RawDetection>],
    tiles: &[Tile],
    crop: &[f64; 4],
    nms_iou: f64,
) -> Vec<RawDetection> {
    let mut all: Vec<RawDetection> = per_tile
        .iter()
        .zip(tiles)
        .flat_map(|(dets, t)| {
            dets.iter()
                .filter(move |d| in_core(&d.bbox, t, crop))
                .copied()
        })
        .collect();
    all.sort_by(|a, b| b.score.total_cmp(&a.score));
    nms(&all, nms_iou)
}

/// What happened in one tile (debug output).
#[derive(Debug, Clone, PartialEq)]
pub struct TileDebug {
    pub tile: Tile,
    pub letterbox: Letterbox,
    /// Detections of this tile after its own NMS, before the merge.
    pub detections: usize,
}

/// Debug output of one [`Detector::run_debug`] call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DetectDebug {
    /// The tiles whose detections were kept: the second pass's when it ran ([`ZoomParams`]).
    pub tiles: Vec<TileDebug>,
    /// The first pass's tiles when a second pass replaced them; empty otherwise.
    pub first_pass_tiles: Vec<TileDebug>,
}

/// The detector: model plus post-processing parameters. `Send + Sync`; one instance serves many threads.
#[derive(Debug, Clone)]
pub struct Detector {
    model: Model,
    pub params: DetectParams,
}

fn plane<'a>(
    t: &'a Tensor,
    channels: usize,
    (rows, cols): (usize, usize),
    name: &str,
) -> Result<tract_ndarray::ArrayViewD<'a, f32>, DetectError> {
    if t.shape() != [1, channels, rows, cols] {
        return Err(DetectError::Output(format!(
            "{name} has shape {:?}, expected [1, {channels}, {rows}, {cols}]",
            t.shape()
        )));
    }
    t.to_plain_array_view::<f32>()
        .map_err(|e| DetectError::Output(format!("{name}: {e}")))
}

impl Detector {
    /// A detector over the detector model with default parameters.
    pub fn new(model: &Model) -> Result<Detector, ScanError> {
        Detector::with_params(model, DetectParams::default())
    }

    /// A detector with explicit parameters. `model` must be the detector.
    pub fn with_params(model: &Model, params: DetectParams) -> Result<Detector, ScanError> {
        if model.kind() != ModelKind::Detector {
            return Err(ScanError::Input {
                stage: "detect",
                message: format!("expected the detector model, got {}", model.kind()),
            });
        }
        Ok(Detector {
            model: model.clone(),
            params,
        })
    }

    /// Detects elements inside `crop` (source px, the cropper's padded crop) of `image`. Detections are sorted
    /// by descending score.
    pub fn run(&self, image: &RgbImage, crop: BBox) -> Result<Vec<Detection>, ScanError> {
        self.run_debug(image, crop).map(|(d, _)| d)
    }

    /// Runs one tile through the model: raw detections in source px. The input is trimmed to the letterboxed
    /// content, or `512 × 512` with [`DetectParams::pad_to_max`].
    pub fn run_tile(
        &self,
        image: &RgbImage,
        bbox: [f64; 4],
    ) -> Result<(Vec<RawDetection>, Letterbox), ScanError> {
        let mut lb = Letterbox::for_crop(bbox);
        if self.params.pad_to_max {
            lb = lb.padded_to_max();
        }
        let input = preprocess_letterbox(image, &lb)?;
        let outputs = match *input.shape() {
            [_, _, h, w] if self.params.transpose_tall && h > w => {
                self.model.run_transposed(input)?
            }
            _ => self.model.run_any_size(input)?,
        };
        let [h, s, o] = outputs.as_slice() else {
            return Err(
                DetectError::Output(format!("{} outputs, expected 3", outputs.len())).into(),
            );
        };
        let grid = lb.grid();
        let (h, s, o) = (
            plane(h, 4, grid, "heatmap")?,
            plane(s, 2, grid, "size")?,
            plane(o, 2, grid, "offset")?,
        );
        let (Some(h), Some(s), Some(o)) = (h.as_slice(), s.as_slice(), o.as_slice()) else {
            return Err(DetectError::Output("outputs are not contiguous".into()).into());
        };
        let maps = HeadMaps::new(h, s, o, grid.0, grid.1)?;
        Ok((postprocess(&maps, Some(&lb), &self.params), lb))
    }

    /// Runs `tiles` of the crop `c` ([`DetectParams::threads`] at a time) and merges their detections
    /// ([`merge_tiles`]), recording each tile in `debug`.
    fn run_tiles(
        &self,
        image: &RgbImage,
        tiles: &[Tile],
        c: &[f64; 4],
        debug: &mut DetectDebug,
    ) -> Result<Vec<RawDetection>, ScanError> {
        let runs = threads::map_in_order(self.params.threads, tiles, |tile| {
            self.run_tile(image, tile.bbox)
        })?;
        let mut per_tile = Vec::with_capacity(tiles.len());
        for (tile, (dets, letterbox)) in tiles.iter().zip(runs) {
            debug.tiles.push(TileDebug {
                tile: *tile,
                letterbox,
                detections: dets.len(),
            });
            per_tile.push(dets);
        }
        Ok(if tiles.len() == 1 {
            per_tile.pop().unwrap_or_default()
        } else {
            merge_tiles(&per_tile, tiles, c, self.params.nms_iou)
        })
    }

    /// [`Detector::run`] plus per-tile debug output.
    pub fn run_debug(
        &self,
        image: &RgbImage,
        crop: BBox,
    ) -> Result<(Vec<Detection>, DetectDebug), ScanError> {
        let (w, h) = (f64::from(image.width()), f64::from(image.height()));
        let c = [crop.x0, crop.y0, crop.x1, crop.y1].map(f64::from);
        let c = [c[0].max(0.0), c[1].max(0.0), c[2].min(w), c[3].min(h)];
        if !c.iter().all(|v| v.is_finite()) || c[2] - c[0] < 1.0 || c[3] - c[1] < 1.0 {
            return Err(DetectError::BadCrop([crop.x0, crop.y0, crop.x1, crop.y1]).into());
        }
        let tiles = tiles_for_crop(c, &self.params);
        let mut debug = DetectDebug::default();
        let mut merged = self.run_tiles(image, &tiles, &c, &mut debug)?;
        if let Some(zoom) = &self.params.zoom {
            let first_scale = debug
                .tiles
                .iter()
                .map(|t| 1.0 / t.letterbox.scale().0.max(t.letterbox.scale().1))
                .fold(f64::INFINITY, f64::min);
            if let Some(scale) = zoom_scale(&merged, first_scale, zoom) {
                let tiles = zoomed_tiles(c, scale, zoom.overlap, zoom.max_tiles);
                debug.first_pass_tiles = std::mem::take(&mut debug.tiles);
                merged = self.run_tiles(image, &tiles, &c, &mut debug)?;
            }
        }
        let merged = cross_class_nms(&merged, self.params.cross_class_iou);
        let out = merged
            .iter()
            .filter_map(|d| {
                Some(Detection {
                    class: DetClass::from_index(d.class)?,
                    bbox: BBox {
                        x0: d.bbox[0] as f32,
                        y0: d.bbox[1] as f32,
                        x1: d.bbox[2] as f32,
                        y1: d.bbox[3] as f32,
                    },
                    score: d.score,
                })
            })
            .collect();
        Ok((out, debug))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Empty outputs on a `rows × cols` grid: no peak, size 1 px, centred offsets.
    fn grids(rows: usize, cols: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let n = rows * cols;
        (vec![-10.0; 4 * n], vec![0.0; 2 * n], vec![0.5; 2 * n])
    }

    fn maps<'a>(g: &'a (Vec<f32>, Vec<f32>, Vec<f32>), rows: usize, cols: usize) -> HeadMaps<'a> {
        HeadMaps::new(&g.0, &g.1, &g.2, rows, cols).unwrap()
    }

    #[test]
    fn letterbox_rounds_half_to_even() {
        let lb = Letterbox::for_crop([0.0, 0.0, 1000.0, 500.0]);
        assert_eq!((lb.tw, lb.th), (512, 256));
        // 2 wide, 3 tall: s = 512/3, tw = round(341.33) = 341.
        let lb = Letterbox::for_crop([0.0, 0.0, 2.0, 3.0]);
        assert_eq!((lb.tw, lb.th), (341, 512));
    }

    #[test]
    fn input_is_trimmed_to_multiples_of_32() {
        // content + 32, rounded up to a multiple of 32, at most 512.
        assert_eq!(
            [1, 31, 32, 33, 288, 341, 479, 480, 481, 511, 512].map(input_side),
            [64, 64, 64, 96, 320, 384, 512, 512, 512, 512, 512]
        );
        // 16:9: content 512 × 288, input 512 × 320 (was 512 × 512).
        let lb = Letterbox::for_crop([0.0, 0.0, 1920.0, 1080.0]);
        assert_eq!((lb.tw, lb.th, lb.input_w, lb.input_h), (512, 288, 512, 320));
        assert_eq!(lb.grid(), (80, 128));
        let lb = Letterbox::for_crop([0.0, 0.0, 2.0, 3.0]);
        assert_eq!((lb.input_w, lb.input_h), (384, 512));
        // A very thin tile: one row of content, 64 px of input.
        let lb = Letterbox::for_crop([0.0, 0.0, 5000.0, 3.0]);
        assert_eq!((lb.tw, lb.th, lb.input_w, lb.input_h), (512, 1, 512, 64));
        let sq = lb.padded_to_max();
        assert_eq!((sq.tw, sq.th, sq.input_w, sq.input_h), (512, 1, 512, 512));
        assert_eq!(sq.scale(), lb.scale());
    }

    #[test]
    fn trimmed_input_is_the_top_left_of_the_square_one() {
        let image = RgbImage::from_fn(300, 170, |x, y| {
            image::Rgb([
                (x % 251) as u8,
                (y * 3 % 256) as u8,
                ((x + y) % 7 * 30) as u8,
            ])
        });
        let crop = [10.5, 4.25, 290.0, 160.0];
        let (t, lb) = preprocess(&image, crop).unwrap();
        assert_eq!((lb.tw, lb.th), (512, 285));
        assert_eq!(t.shape(), [1, 3, 320, 512]);
        let sq = preprocess_letterbox(&image, &lb.padded_to_max()).unwrap();
        assert_eq!(sq.shape(), [1, 3, 512, 512]);
        let (t, sq) = (
            t.to_plain_array_view::<f32>().unwrap(),
            sq.to_plain_array_view::<f32>().unwrap(),
        );
        for c in 0..3 {
            for y in 0..512 {
                for x in 0..512 {
                    let want = sq[[0, c, y, x]];
                    if y < 320 {
                        assert_eq!(t[[0, c, y, x]], want, "({c}, {y}, {x})");
                    }
                    if y >= lb.th {
                        assert_eq!(want, 0.0, "padding ({c}, {y}, {x})");
                    }
                }
            }
        }
        // Content at the last content row is not padding.
        assert!((0..512).any(|x| t[[0, 0, lb.th - 1, x]] != 0.0));
    }

    #[test]
    fn a_letterbox_that_does_not_fit_its_input_is_an_error() {
        let image = RgbImage::new(64, 64);
        let mut lb = Letterbox::for_crop([0.0, 0.0, 64.0, 64.0]);
        lb.input_w = 480; // content is 512 wide
        assert!(matches!(
            preprocess_letterbox(&image, &lb),
            Err(DetectError::Resize(_))
        ));
    }

    #[test]
    fn head_maps_check_their_lengths() {
        let g = grids(8, 24);
        assert!(HeadMaps::new(&g.0, &g.1, &g.2, 8, 24).is_ok());
        assert!(HeadMaps::new(&g.0, &g.1, &g.2, 24, 8).is_ok()); // same cell count
        assert!(HeadMaps::new(&g.0, &g.1, &g.2, 8, 25).is_err());
        assert!(HeadMaps::new(&g.0, &g.1, &g.2[1..], 8, 24).is_err());
        assert!(HeadMaps::new(&[], &[], &[], 0, 24).is_err());
        assert!(HeadMaps::new(&g.0, &g.1, &g.2, usize::MAX, 2).is_err());
    }

    #[test]
    fn peak_box_decodes_to_source_pixels() {
        // A 512 × 288 letterbox (16:9) in a 512 × 320 input: grid 80 rows × 128 columns.
        let lb = Letterbox::for_crop([100.0, 200.0, 1124.0, 776.0]);
        assert_eq!((lb.tw, lb.th, lb.grid()), (512, 288, (80, 128)));
        let (rows, cols) = lb.grid();
        let n = rows * cols;
        let mut g = grids(rows, cols);
        let cell = 70 * cols + 20; // tensor class, j = 70 (row-major on the real width), i = 20
        g.0[n + cell] = 3.0;
        g.1[cell] = (40f32).ln();
        g.1[n + cell] = (8f32).ln();
        let d = postprocess(&maps(&g, rows, cols), Some(&lb), &DetectParams::default());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].class, 1);
        // centre (20.5·4, 70.5·4) = (82, 282) input px → source ×2 + crop origin.
        let want = [
            100.0 + 2.0 * 62.0,
            200.0 + 2.0 * 278.0,
            100.0 + 2.0 * 102.0,
            200.0 + 2.0 * 286.0,
        ];
        for (a, b) in d[0].bbox.iter().zip(want) {
            assert!((a - b).abs() < 1e-3, "{:?}", d[0].bbox);
        }
    }

    #[test]
    fn a_peak_in_the_padding_beyond_the_crop_is_dropped() {
        // Content 512 × 288 of a 512 × 320 input: rows 72..80 are padding. A small box centred at row 78 lies
        // wholly below the crop and would clip to zero height; one straddling the edge is kept, clipped.
        let lb = Letterbox::for_crop([100.0, 200.0, 1124.0, 776.0]);
        let (rows, cols) = lb.grid();
        let n = rows * cols;
        let mut g = grids(rows, cols);
        for (j, i, h) in [(78, 20, 8f32), (72, 60, 12f32)] {
            let cell = j * cols + i;
            g.0[cell] = 3.0;
            g.1[cell] = (20f32).ln();
            g.1[n + cell] = h.ln();
        }
        let d = postprocess(&maps(&g, rows, cols), Some(&lb), &DetectParams::default());
        assert_eq!(d.len(), 1, "{d:?}");
        let b = d[0].bbox;
        assert!(b[3] == 776.0 && b[1] < b[3] && b[0] > 200.0, "{b:?}");
    }

    #[test]
    fn trimmed_and_square_grids_decode_alike() {
        // The same peaks at the same cells of the trimmed grid and of the square one give the same detections
        // (the padding only adds cells to the right and below).
        let lb = Letterbox::for_crop([0.0, 0.0, 900.0, 500.0]); // 512 × 284 → input 512 × 320
        let sq = lb.padded_to_max();
        let (rows, cols) = lb.grid();
        let (srows, scols) = sq.grid();
        assert_eq!(((rows, cols), (srows, scols)), ((80, 128), (128, 128)));
        let mut t = grids(rows, cols);
        let mut s = grids(srows, scols);
        let peaks = [
            (0, 5, 7, 2.0),
            (2, 79, 127, 1.0),
            (3, 40, 0, 0.5),
            (1, 70, 64, 4.0),
        ];
        for (k, &(c, j, i, v)) in peaks.iter().enumerate() {
            let (a, b) = (j * cols + i, j * scols + i);
            t.0[c * rows * cols + a] = v;
            s.0[c * srows * scols + b] = v;
            let w = (10.0 + 7.0 * k as f32).ln();
            t.1[a] = w;
            s.1[b] = w;
            t.2[rows * cols + a] = 0.25;
            s.2[srows * scols + b] = 0.25;
        }
        let p = DetectParams::default();
        let dt = postprocess(&maps(&t, rows, cols), Some(&lb), &p);
        let ds = postprocess(&maps(&s, srows, scols), Some(&sq), &p);
        // The peak at row 79 lies in the padding below the 284 content rows' 71 cells, 1 px tall: dropped.
        assert_eq!(dt.len(), 3);
        assert_eq!(dt, ds);
    }

    #[test]
    fn neighbours_suppress_but_ties_do_not() {
        let (rows, cols) = (8, 24);
        let mut g = grids(rows, cols);
        g.0[5 * cols + 5] = 2.0;
        g.0[5 * cols + 6] = 1.0; // lower neighbour: suppressed
        g.0[6 * cols + 4] = 1.0; // lower diagonal neighbour (next row): suppressed
        g.0[7 * cols + 22] = 1.5;
        g.0[7 * cols + 23] = 1.5; // equal neighbour at the grid corner: both are peaks
        g.0[23] = 1.2; // last column of row 0: not a neighbour of row 1's first cell
        g.0[cols] = 1.1;
        let d = postprocess(&maps(&g, rows, cols), None, &DetectParams::default());
        assert_eq!(d.len(), 5, "{d:?}");
        assert!(d[0].score > d[1].score);
        // Ties keep flat-index order: (7, 22) before (7, 23).
        assert_eq!(d[1].bbox[0], 4.0 * 22.5 - 0.5);
        assert_eq!(d[2].bbox[0], 4.0 * 23.5 - 0.5);
    }

    #[test]
    fn nms_is_class_wise() {
        let a = RawDetection {
            class: 0,
            bbox: [0.0, 0.0, 10.0, 10.0],
            score: 0.9,
        };
        let b = RawDetection {
            class: 0,
            bbox: [1.0, 0.0, 11.0, 10.0],
            score: 0.8,
        };
        let c = RawDetection {
            class: 1,
            bbox: [1.0, 0.0, 11.0, 10.0],
            score: 0.7,
        };
        assert_eq!(nms(&[a, b, c], 0.5), vec![a, c]);
    }

    #[test]
    fn cross_class_nms_drops_the_weaker_of_two_classes_in_one_place() {
        let node = RawDetection {
            class: 0,
            bbox: [0.0, 0.0, 10.0, 10.0],
            score: 0.9,
        };
        let same_class = RawDetection {
            class: 0,
            bbox: [1.0, 0.0, 11.0, 10.0],
            score: 0.85,
        };
        let output_on_it = RawDetection {
            class: 3,
            bbox: [1.0, 0.0, 11.0, 10.0],
            score: 0.8,
        };
        let output_apart = RawDetection {
            class: 3,
            bbox: [6.0, 0.0, 16.0, 10.0],
            score: 0.7,
        };
        assert_eq!(
            cross_class_nms(&[node, same_class, output_on_it, output_apart], 0.5),
            vec![node, same_class, output_apart]
        );
        assert_eq!(
            cross_class_nms(&[node, output_on_it], 1.5),
            vec![node, output_on_it]
        );
    }

    #[test]
    fn compact_crops_are_one_tile_and_long_ones_overlap() {
        let p = DetectParams::default();
        assert_eq!(tiles_for_crop([0.0, 0.0, 800.0, 900.0], &p).len(), 1);
        let t = tiles_for_crop([0.0, 0.0, 400.0, 3000.0], &p);
        assert!(t.len() > 1 && t.len() <= p.tile_max);
        assert_eq!(t[0].core[1], 0.0);
        assert_eq!(t.last().map(|t| t.core[3]), Some(3000.0));
        for w in t.windows(2) {
            assert_eq!(w[0].core[3], w[1].core[1], "cores tile the crop");
            assert!(w[0].bbox[3] > w[1].bbox[1], "tiles overlap");
        }
    }

    fn node(h: f64) -> RawDetection {
        RawDetection {
            class: DetClass::Node.index(),
            bbox: [10.0, 10.0, 60.0, 10.0 + h],
            score: 0.9,
        }
    }

    #[test]
    fn zoom_needs_small_cards_and_enough_of_them() {
        let z = ZoomParams::default();
        // Lower quartile of 10, 10, 30, 30, 30 source px is 10; at scale 0.5 that is 5 input px (< 12).
        let small: Vec<RawDetection> = [10.0, 10.0, 30.0, 30.0, 30.0].map(node).to_vec();
        let scale = zoom_scale(&small, 0.5, &z).unwrap();
        assert!((scale - z.target_px / 10.0).abs() < 1e-9, "{scale}");
        // The same cards at scale 2 are 20 input px: no second pass.
        assert_eq!(zoom_scale(&small, 2.0, &z), None);
        // Too few cards to estimate from.
        assert_eq!(zoom_scale(&small[..3], 0.5, &z), None);
        // Labels do not count as cards.
        let labels: Vec<RawDetection> = small
            .iter()
            .map(|d| RawDetection { class: 1, ..*d })
            .collect();
        assert_eq!(zoom_scale(&labels, 0.5, &z), None);
        // Tiny cards: the scale stops at max_scale.
        let tiny: Vec<RawDetection> = [2.0; 6].map(node).to_vec();
        assert_eq!(zoom_scale(&tiny, 0.5, &z), Some(z.max_scale));
    }

    #[test]
    fn zoomed_tiles_form_a_grid_whose_cores_cover_the_crop_once() {
        let crop = [100.0, 50.0, 1700.0, 930.0];
        // Scale 1: 512-px tiles over 1600 × 880 → 4 × 2 tiles at 25% overlap.
        let t = zoomed_tiles(crop, 1.0, 0.25, 12);
        assert_eq!(t.len(), 8);
        for tile in &t {
            assert!((tile.bbox[2] - tile.bbox[0] - 512.0).abs() < 1e-9);
            assert!((tile.bbox[3] - tile.bbox[1] - 512.0).abs() < 1e-9);
        }
        let core_area: f64 = t
            .iter()
            .map(|t| (t.core[2] - t.core[0]) * (t.core[3] - t.core[1]))
            .sum();
        assert!((core_area - 1600.0 * 880.0).abs() < 1e-6, "{core_area}");
        // Every point of the crop lies in exactly one core.
        for &(x, y) in &[
            (100.0, 50.0),
            (900.0, 500.0),
            (1699.0, 929.0),
            (613.0, 437.0),
        ] {
            let b = [x, y, x, y];
            assert_eq!(t.iter().filter(|tile| in_core(&b, tile, &crop)).count(), 1);
        }
        // A finer scale asks for more tiles than allowed: the tiles grow to fit.
        let capped = zoomed_tiles(crop, 3.0, 0.25, 12);
        assert!(capped.len() <= 12 && capped.len() >= 8, "{}", capped.len());
        // A crop smaller than one tile is one tile.
        assert_eq!(
            zoomed_tiles([0.0, 0.0, 300.0, 200.0], 1.0, 0.25, 12).len(),
            1
        );
    }
}
