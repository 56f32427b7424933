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
//!    `[1, 3, 512, 512]` NCHW tensor is 0.0.
//! 3. Outputs, stride 4 (cell `(j, i)` covers input pixels `[4i, 4i+4) × [4j, 4j+4)`): `heatmap [1,4,128,128]`
//!    centre logits (0 node, 1 tensor, 2 input, 3 output), `size [1,2,128,128]` ln(w), ln(h) in input px,
//!    `offset [1,2,128,128]` sub-cell centre.
//! 4. Post-processing ([`postprocess`]): sigmoid, 3×3 max-pool peaks ≥ threshold, top-k by score (ties by flat
//!    index), box decode, back to source pixels clipped to the tile, class-wise greedy NMS.
//! 5. Tiles merged ([`merge_tiles`]): each tile keeps detections centred in its core, then NMS again.

use image::RgbImage;
use thiserror::Error;
use tract_onnx::prelude::*;

use crate::crop::normalise_into;
use crate::error::ScanError;
use crate::graph::BBox;
use crate::models::{Model, ModelKind};
use crate::resample;

/// Side of the square detector input, pixels.
pub const INPUT_SIZE: usize = 512;
/// Output stride, input pixels per cell.
pub const STRIDE: usize = 4;
/// Output grid side, cells.
pub const GRID: usize = INPUT_SIZE / STRIDE;

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
}

impl Default for DetectParams {
    fn default() -> Self {
        DetectParams {
            score_threshold: 0.3,
            top_k: 300,
            nms_iou: 0.5,
            tiles: true,
            tile_min: 512.0,
            tile_aspect: 1.5,
            tile_overlap: 0.25,
            tile_max: 8,
        }
    }
}

/// Where a tile went in the 512² input: box in source px and the resized size `tw × th` at the top-left.
/// Input pixel `(u, v)` ↔ source `(x0 + u·cw/tw, y0 + v·ch/th)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Letterbox {
    pub crop: [f64; 4],
    pub tw: usize,
    pub th: usize,
}

impl Letterbox {
    /// The letterbox of `crop` (`tw`, `th` as in the module doc).
    pub fn for_crop(crop: [f64; 4]) -> Letterbox {
        let (cw, ch) = (crop[2] - crop[0], crop[3] - crop[1]);
        let s = (INPUT_SIZE as f64 / cw).min(INPUT_SIZE as f64 / ch);
        let side = |v: f64| (v * s).round_ties_even().clamp(1.0, INPUT_SIZE as f64) as usize;
        Letterbox {
            crop,
            tw: side(cw),
            th: side(ch),
        }
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
    let mut n = ((long - tl) / (tl * (1.0 - params.tile_overlap))).ceil() as usize + 1;
    let cap = params.tile_max.max(2);
    if n > cap {
        n = cap;
        tl = long / (1.0 + (n - 1) as f64 * (1.0 - params.tile_overlap));
    }
    let starts: Vec<f64> = (0..n)
        .map(|k| k as f64 * (long - tl) / (n - 1) as f64)
        .collect();
    let lo = if vertical { y0 } else { x0 };
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
                long
            } else {
                (starts[k + 1] + a + tl) / 2.0
            };
            if vertical {
                Tile {
                    bbox: [x0, lo + a, x1, lo + a + tl],
                    core: [x0, lo + c0, x1, lo + c1],
                }
            } else {
                Tile {
                    bbox: [lo + a, y0, lo + a + tl, y1],
                    core: [lo + c0, y0, lo + c1, y1],
                }
            }
        })
        .collect()
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

/// The detector's input tensor `[1, 3, 512, 512]` for one tile box, with its letterbox.
pub fn preprocess(image: &RgbImage, bbox: [f64; 4]) -> Result<(Tensor, Letterbox), DetectError> {
    let lb = Letterbox::for_crop(bbox);
    let small = resize_region(image, bbox, lb.tw as u32, lb.th as u32)?;
    let mut data = vec![0f32; 3 * INPUT_SIZE * INPUT_SIZE];
    normalise_into(
        small.as_raw(),
        lb.tw,
        lb.th,
        &mut data,
        INPUT_SIZE,
        INPUT_SIZE,
    );
    let t = Tensor::from_shape(&[1, 3, INPUT_SIZE, INPUT_SIZE], &data)
        .map_err(|e| DetectError::Resize(e.to_string()))?;
    Ok((t, lb))
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
    let mut keep: Vec<RawDetection> = Vec::new();
    for d in dets {
        if !keep
            .iter()
            .any(|k| k.class == d.class && iou(&k.bbox, &d.bbox) > iou_max)
        {
            keep.push(*d);
        }
    }
    keep
}

/// One tile's outputs (`heatmap [4,G,G]`, `size [2,G,G]`, `offset [2,G,G]`, flattened C order, `G` = 128) →
/// detections in source pixels (when `lb` is given; input pixels otherwise), `detector.postprocess`.
pub fn postprocess(
    heatmap: &[f32],
    size: &[f32],
    offset: &[f32],
    lb: Option<&Letterbox>,
    params: &DetectParams,
) -> Vec<RawDetection> {
    let g = GRID;
    let p: Vec<f32> = heatmap.iter().map(|&v| sigmoid(v)).collect();
    let mut peaks: Vec<(f32, usize)> = Vec::new();
    for c in 0..4 {
        let plane = &p[c * g * g..(c + 1) * g * g];
        for j in 0..g {
            for i in 0..g {
                let v = plane[j * g + i];
                if v < params.score_threshold {
                    continue;
                }
                let mut is_peak = true;
                'win: for jj in j.saturating_sub(1)..(j + 2).min(g) {
                    for ii in i.saturating_sub(1)..(i + 2).min(g) {
                        if plane[jj * g + ii] > v {
                            is_peak = false;
                            break 'win;
                        }
                    }
                }
                if is_peak {
                    peaks.push((v, c * g * g + j * g + i));
                }
            }
        }
    }
    peaks.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    peaks.truncate(params.top_k);
    let dets: Vec<RawDetection> = peaks
        .iter()
        .map(|&(score, flat)| {
            let (c, rem) = (flat / (g * g), flat % (g * g));
            let (j, i) = (rem / g, rem % g);
            let s = STRIDE as f64;
            let cx = (i as f64 + f64::from(offset[j * g + i])) * s;
            let cy = (j as f64 + f64::from(offset[g * g + j * g + i])) * s;
            let bw = f64::from(size[j * g + i].exp());
            let bh = f64::from(size[g * g + j * g + i].exp());
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
            RawDetection {
                class: c,
                bbox: b,
                score,
            }
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
    pub tiles: Vec<TileDebug>,
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
    name: &str,
) -> Result<tract_ndarray::ArrayViewD<'a, f32>, DetectError> {
    if t.shape() != [1, channels, GRID, GRID] {
        return Err(DetectError::Output(format!(
            "{name} has shape {:?}, expected [1, {channels}, {GRID}, {GRID}]",
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

    /// Runs one tile through the model: raw detections in source px.
    pub fn run_tile(
        &self,
        image: &RgbImage,
        bbox: [f64; 4],
    ) -> Result<(Vec<RawDetection>, Letterbox), ScanError> {
        let (input, lb) = preprocess(image, bbox)?;
        let outputs = self.model.run(input)?;
        let [h, s, o] = outputs.as_slice() else {
            return Err(
                DetectError::Output(format!("{} outputs, expected 3", outputs.len())).into(),
            );
        };
        let (h, s, o) = (
            plane(h, 4, "heatmap")?,
            plane(s, 2, "size")?,
            plane(o, 2, "offset")?,
        );
        let (Some(h), Some(s), Some(o)) = (h.as_slice(), s.as_slice(), o.as_slice()) else {
            return Err(DetectError::Output("outputs are not contiguous".into()).into());
        };
        Ok((postprocess(h, s, o, Some(&lb), &self.params), lb))
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
        let mut per_tile = Vec::with_capacity(tiles.len());
        let mut debug = DetectDebug::default();
        for tile in &tiles {
            let (dets, letterbox) = self.run_tile(image, tile.bbox)?;
            debug.tiles.push(TileDebug {
                tile: *tile,
                letterbox,
                detections: dets.len(),
            });
            per_tile.push(dets);
        }
        let merged = if tiles.len() == 1 {
            per_tile.pop().unwrap_or_default()
        } else {
            merge_tiles(&per_tile, &tiles, &c, self.params.nms_iou)
        };
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

    fn grids() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            vec![-10.0; 4 * GRID * GRID],
            vec![0.0; 2 * GRID * GRID],
            vec![0.5; 2 * GRID * GRID],
        )
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
    fn peak_box_decodes_to_source_pixels() {
        let (mut h, mut s, o) = grids();
        let g = GRID;
        h[g * g + 10 * g + 20] = 3.0; // tensor class, j = 10, i = 20
        s[10 * g + 20] = (40f32).ln();
        s[g * g + 10 * g + 20] = (8f32).ln();
        let lb = Letterbox {
            crop: [100.0, 200.0, 1124.0, 1224.0],
            tw: 512,
            th: 512,
        };
        let d = postprocess(&h, &s, &o, Some(&lb), &DetectParams::default());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].class, 1);
        // centre (20.5·4, 10.5·4) = (82, 42) input px → source ×2 + offset.
        let want = [
            100.0 + 2.0 * 62.0,
            200.0 + 2.0 * 38.0,
            100.0 + 2.0 * 102.0,
            200.0 + 2.0 * 46.0,
        ];
        for (a, b) in d[0].bbox.iter().zip(want) {
            assert!((a - b).abs() < 1e-3, "{:?}", d[0].bbox);
        }
    }

    #[test]
    fn neighbours_suppress_but_ties_do_not() {
        let (mut h, s, o) = grids();
        let g = GRID;
        h[5 * g + 5] = 2.0;
        h[5 * g + 6] = 1.0; // lower neighbour: suppressed
        h[50 * g + 50] = 1.5;
        h[50 * g + 51] = 1.5; // equal neighbour: both are peaks (1-px boxes, so NMS keeps both)
        let d = postprocess(&h, &s, &o, None, &DetectParams::default());
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].score > d[1].score);
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
}
