//! Operator classification of node cards: title crops → `models/classifier.onnx` → one of the 72 operators.
//!
//! Contract (`models/classifier.MODEL.md`, reference `train/classifier.py::preprocess_title`):
//! - crop: the node's **title** box grown by [`TITLE_PAD`] (7) source pixels on every side, clipped to the
//!   image, cut from the full-resolution upright RGB source image;
//! - resize: stretched to [`INPUT_W`] × [`INPUT_H`] (160 × 96) with Pillow's antialiased bilinear filter over
//!   the fractional box ([`crate::resample`], bit-exact);
//! - normalise: float32 NCHW, RGB, `(v / 255 − MEAN[c]) / STD[c]` with the ImageNet constants;
//! - output: `logits [N, 72]` with the calibration temperature folded in: `softmax` gives calibrated
//!   probabilities, class `i` is `vocab.ops[i]`.
//!
//! The detector finds whole node cards, while the classifier was trained on the coloured header at the top of
//! a card: [`estimate_title_boxes`] derives title boxes from card and tensor-label boxes.
//!
//! [`Classifier::classify`] pads by [`ClassifyParams::pads`] (the contract's 7 px by default), capped at
//! [`ClassifyParams::max_pad_per_height`] × the title's height (half of it by default), so a title under 14 px
//! is cut with less padding than the contract's.

use image::RgbImage;
use tract_nnef::prelude::Tensor;

use crate::error::ScanError;
use crate::graph::{BBox, Direction};
use crate::models::Model;
use crate::resample;
use crate::threads;
use crate::vocab::Vocab;

/// Model input width in pixels.
pub const INPUT_W: u32 = 160;
/// Model input height in pixels.
pub const INPUT_H: u32 = 96;
/// Padding added to the title box on every side before cropping, in source pixels.
pub const TITLE_PAD: f32 = 7.0;
/// Smallest padding [`ClassifyParams::max_pad_per_height`] leaves, source px.
const MIN_CAPPED_PAD: f32 = 1.0;
/// Per-channel (R, G, B) mean of the input normalisation (ImageNet; `train/common.py`).
pub const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
/// Per-channel (R, G, B) standard deviation of the input normalisation.
pub const STD: [f32; 3] = [0.229, 0.224, 0.225];

const STAGE: &str = "classifier";

/// Tuning of [`Classifier`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassifyParams {
    /// Below this top probability the node is *marked*, not guessed: [`OpPrediction::op`] is `None`
    /// (the graph JSON's `op: null`; `op_confidence` still carries the top probability). Default 0.5: "more
    /// likely wrong than right". The scanner applies it again to the confidence it recalibrates by title height
    /// ([`crate::calibrate`]), the one the graph reports.
    pub min_confidence: f32,
    /// Paddings of a title's crops, source px on every side: the prediction averages the softmax probabilities
    /// of one crop per padding. Empty: [`TITLE_PAD`] alone. Default `[TITLE_PAD]` (the MODEL.md preprocessing).
    pub pads: &'static [f32],
    /// Caps each padding at this × the box's height (but not under 1 px), so that a small title fills more of
    /// its crop. `None`: no cap. Default 0.5 (titles under 14 px get less than [`TITLE_PAD`]): in the pipeline
    /// (`netron-ocr eval`, photos / screenshots) op accuracy went from 0.886 / 0.960 to 0.899 / 0.963 on the
    /// dense views, 0.905 / 0.961 to 0.909 / 0.965 on the lifted-weight views and 0.986 / 0.985 to 0.984 / 0.984
    /// on the development split, whose stated ops were right more often (0.995 / 0.997 to 0.995 / 0.999; the
    /// rest marked); averaging the crops of pads 7 and 4 instead gave 0.889 / 0.959 and 0.984 / 0.984 for twice
    /// the classifier's time (`models/METRICS.md`, session 30).
    pub max_pad_per_height: Option<f32>,
    /// Threads the title crops of one call run on ([`crate::threads::map_in_order`]; the predictions are the same
    /// at any count). `0`: [`crate::threads::auto_threads`]. Default 0.
    pub threads: usize,
}

impl Default for ClassifyParams {
    fn default() -> Self {
        ClassifyParams {
            min_confidence: 0.5,
            pads: &[TITLE_PAD],
            max_pad_per_height: Some(0.5),
            threads: 0,
        }
    }
}

/// The classifier's answer for one title box.
#[derive(Debug, Clone, PartialEq)]
pub struct OpPrediction {
    /// The operator, or `None` when `confidence < min_confidence`.
    pub op: Option<String>,
    /// The top class index (into the vocabulary), whatever the confidence.
    pub index: usize,
    /// Top softmax probability, in `[0, 1]`.
    pub confidence: f32,
    /// The three most probable operators with their probabilities, most probable first.
    pub top: Vec<(String, f32)>,
    /// The probability of every operator, indexed like the vocabulary (sums to 1).
    pub probs: Vec<f32>,
}

/// The operator classifier: a loaded `classifier.onnx` plan plus its vocabulary. `Send + Sync`; one instance
/// serves many threads.
#[derive(Debug, Clone)]
pub struct Classifier {
    model: Model,
    vocab: Vocab,
    params: ClassifyParams,
}

impl Classifier {
    /// Wraps a loaded classifier model. Its output width is checked against `vocab` on every run.
    pub fn new(model: Model, vocab: Vocab, params: ClassifyParams) -> Classifier {
        Classifier {
            model,
            vocab,
            params,
        }
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The parameters.
    pub fn params(&self) -> &ClassifyParams {
        &self.params
    }

    /// Classifies every title box (source-image pixels of `image`, the full-resolution upright frame).
    /// Returns one prediction per box, in order. Errors: a box that is not finite and ordered or that lies
    /// outside the image ([`ScanError::Input`]); a failed model run or a crop's logits not shaped
    /// `[1, vocab.len()]` ([`ScanError::Inference`]).
    pub fn classify(
        &self,
        image: &RgbImage,
        title_boxes: &[BBox],
    ) -> Result<Vec<OpPrediction>, ScanError> {
        let classes = self.vocab.len();
        let pads: &[f32] = if self.params.pads.is_empty() {
            &[TITLE_PAD]
        } else {
            self.params.pads
        };
        let share = 1.0 / pads.len() as f32;
        let classify_one = |b: &BBox| -> Result<OpPrediction, ScanError> {
            let mut probs = vec![0.0f32; classes];
            for &pad in pads {
                // Never under 1 px, so that a box of no height still cuts a crop, as it did uncapped.
                let pad = self
                    .params
                    .max_pad_per_height
                    .map_or(pad, |k| pad.min((k * b.height()).max(MIN_CAPPED_PAD)));
                let input = title_input_with_pad(image, b, pad)?;
                let logits = self.model.run_single(input)?;
                let view = logits
                    .to_plain_array_view::<f32>()
                    .map_err(|e| ScanError::inference(STAGE, e))?;
                match view.as_slice() {
                    Some(row) if view.shape() == [1, classes] => {
                        for (s, p) in probs.iter_mut().zip(softmax(row)) {
                            *s += p * share;
                        }
                    }
                    _ => {
                        return Err(ScanError::Inference {
                            stage: STAGE,
                            message: format!(
                                "logits shape {:?}, expected [1, {classes}]",
                                view.shape()
                            ),
                        })
                    }
                }
            }
            Ok(OpPrediction::from_probs(
                probs,
                &self.vocab,
                self.params.min_confidence,
            ))
        };
        threads::map_in_order(self.params.threads, title_boxes, classify_one)
    }
}

impl OpPrediction {
    /// The prediction of `probs` (one probability per operator of `vocab`, not empty): the most probable
    /// operator (the lowest index among ties), marked (`op: None`) under `min_confidence`, and the three most
    /// probable.
    pub fn from_probs(probs: Vec<f32>, vocab: &Vocab, min_confidence: f32) -> OpPrediction {
        let mut order: Vec<usize> = (0..probs.len()).collect();
        order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]).then(a.cmp(&b)));
        let index = order[0];
        let confidence = probs[index];
        let name = |i: usize| vocab.ops[i].clone();
        OpPrediction {
            op: (confidence >= min_confidence).then(|| name(index)),
            index,
            confidence,
            top: order.iter().take(3).map(|&i| (name(i), probs[i])).collect(),
            probs,
        }
    }
}

/// Numerically stable softmax (NaN logits give NaN probabilities).
pub fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = logits.iter().map(|&v| (v - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

/// The source region cut for a title box: the box grown by [`TITLE_PAD`] on every side and clipped to
/// `[0, width] × [0, height]`, as the single-precision box Pillow receives (computed in f64 like the Python
/// reference, then rounded). `None` when the box is not finite and ordered or the clipped region is empty.
pub fn title_region(width: u32, height: u32, title: &BBox) -> Option<[f32; 4]> {
    title_region_with_pad(width, height, title, TITLE_PAD)
}

/// [`title_region`] with the box grown by `pad` source px instead of [`TITLE_PAD`].
pub fn title_region_with_pad(width: u32, height: u32, title: &BBox, pad: f32) -> Option<[f32; 4]> {
    if !title.is_finite() || !title.is_ordered() || !pad.is_finite() {
        return None;
    }
    let pad = f64::from(pad);
    let x0 = (f64::from(title.x0) - pad).max(0.0);
    let y0 = (f64::from(title.y0) - pad).max(0.0);
    let x1 = (f64::from(title.x1) + pad).min(f64::from(width));
    let y1 = (f64::from(title.y1) + pad).min(f64::from(height));
    let r = [x0 as f32, y0 as f32, x1 as f32, y1 as f32];
    (r[0] < r[2] && r[1] < r[3]).then_some(r)
}

/// One title crop as the model sees it before normalisation: 8-bit RGB, [`INPUT_W`] × [`INPUT_H`]
/// (`train/classifier.py::preprocess_title`). Error: see [`title_region`].
pub fn title_crop(image: &RgbImage, title: &BBox) -> Result<RgbImage, ScanError> {
    title_crop_with_pad(image, title, TITLE_PAD)
}

/// [`title_crop`] of the box grown by `pad` source px instead of [`TITLE_PAD`].
pub fn title_crop_with_pad(
    image: &RgbImage,
    title: &BBox,
    pad: f32,
) -> Result<RgbImage, ScanError> {
    let region = title_region_with_pad(image.width(), image.height(), title, pad)
        .ok_or_else(|| bad_box(image, title))?;
    let pixels = resample::resize_rgb_box(image, region, INPUT_W, INPUT_H)
        .ok_or_else(|| bad_box(image, title))?;
    RgbImage::from_raw(INPUT_W, INPUT_H, pixels).ok_or_else(|| bad_box(image, title))
}

fn bad_box(image: &RgbImage, b: &BBox) -> ScanError {
    ScanError::Input {
        stage: STAGE,
        message: format!(
            "title box [{}, {}, {}, {}] is not a finite, ordered box overlapping the {}×{} image",
            b.x0,
            b.y0,
            b.x1,
            b.y1,
            image.width(),
            image.height()
        ),
    }
}

/// Writes one crop into `out` (length `3 · INPUT_H · INPUT_W`) as normalised CHW float32, computed exactly as
/// the PyTorch reference: `((v as f32) / 255 − MEAN[c]) / STD[c]` in single precision.
pub fn normalise_into(crop: &RgbImage, out: &mut [f32]) {
    let plane = (INPUT_W * INPUT_H) as usize;
    for (i, p) in crop.pixels().enumerate().take(plane) {
        for c in 0..3 {
            out[c * plane + i] = (f32::from(p.0[c]) / 255.0 - MEAN[c]) / STD[c];
        }
    }
}

/// The classifier input for one title box, as [`Classifier::classify`] runs it: float32 `[1, 3, 96, 160]`.
/// Errors: see [`title_crop`].
pub fn title_input(image: &RgbImage, title: &BBox) -> Result<Tensor, ScanError> {
    title_input_with_pad(image, title, TITLE_PAD)
}

/// [`title_input`] of the box grown by `pad` source px instead of [`TITLE_PAD`].
pub fn title_input_with_pad(image: &RgbImage, title: &BBox, pad: f32) -> Result<Tensor, ScanError> {
    stacked_input(image, std::slice::from_ref(title), pad)
}

/// The classifier input for `boxes` stacked: float32 `[N, 3, 96, 160]` (N = `boxes.len()`, which must be ≥ 1 for
/// [`Model::run`] to accept it), item `i` equal to [`title_input`] of `boxes[i]`. Errors: see [`title_crop`].
pub fn classifier_input(image: &RgbImage, boxes: &[BBox]) -> Result<Tensor, ScanError> {
    stacked_input(image, boxes, TITLE_PAD)
}

/// [`classifier_input`] with each box grown by `pad` source px.
fn stacked_input(image: &RgbImage, boxes: &[BBox], pad: f32) -> Result<Tensor, ScanError> {
    let per = (3 * INPUT_W * INPUT_H) as usize;
    let shape = [boxes.len(), 3, INPUT_H as usize, INPUT_W as usize];
    let tract = |e| ScanError::inference(STAGE, e);
    let mut t = Tensor::zero::<f32>(&shape).map_err(tract)?;
    {
        let mut plain = t.try_as_plain_ram_mut().map_err(tract)?;
        let data = plain.as_slice_mut::<f32>().map_err(tract)?;
        for (b, out) in boxes.iter().zip(data.chunks_exact_mut(per)) {
            normalise_into(&title_crop_with_pad(image, b, pad)?, out);
        }
    }
    Ok(t)
}

// ------------------------------------------------------------------------------------------------------------
// Title boxes from card boxes

/// Tensor-label height / header height in Netron (11 / 20 CSS px).
pub const LABEL_TO_HEADER: f64 = 0.55;
/// Card height / header height for a card with `k ≥ 1` rows is `ROW_BASE + ROW_PITCH · k` (6 px bottom
/// padding + 12 px per row, over the 20 px header); a card without rows is exactly its header.
pub const ROW_BASE: f64 = 1.3;
/// See [`ROW_BASE`].
pub const ROW_PITCH: f64 = 0.6;

/// Roll slopes tried (|tan θ| from 0 to 0.3, i.e. up to 16.7°, in steps of 0.005).
const SLOPE_STEPS: usize = 60;
const SLOPE_STEP: f64 = 0.005;
/// Neighbours used for the local scale (perspective makes the header height vary across a photo).
const NEIGHBOURS: usize = 5;
/// Robust cost: squared errors are capped at this value squared.
const COST_CLIP: f64 = 0.3;
/// Prior against roll: `PRIOR · items · t²` is added to the cost.
const PRIOR: f64 = 0.05;
/// A card whose height is under this many header heights has no rows: it is all header.
const NO_ROW_RATIO: f64 = 1.45;
/// A card within this relative distance of a row-lattice height takes its header height from it.
const LATTICE_TOLERANCE: f64 = 0.08;

/// Estimates the title (header) box of every node card from the card boxes and the tensor-label boxes of the
/// same image (detector output, source pixels). Returns one box per card, in order: the top part of the card,
/// `[x0, y0, x1, y0 + min(card height, title height)]`.
///
/// Netron geometry, measured: a header is 20 CSS px × zoom tall, a tensor label 11 px ([`LABEL_TO_HEADER`]),
/// a card with `k ≥ 1` weight/attribute rows `20 + 6 + 12k` px, a card without rows exactly its header.
/// In a photo the camera may roll the screen by a few degrees (axis-aligned boxes of rotated rectangles are
/// taller by `width · sin θ`) and perspective makes the scale vary across the image. The estimate:
/// 1. roll: for each slope `t = |tan θ|` on a grid, de-rotate every card and label box to its true height
///    (`(h cos θ − w sin θ) / cos 2θ`); score how well labels agree with their neighbours and how well each
///    card height is a lattice multiple (`1`, `1.3 + 0.6k`) of the local header height given by its
///    `NEIGHBOURS` nearest labels (capped squared errors, plus a small prior towards no roll); keep the best;
/// 2. header height per card: its own de-rotated height when it is under `NO_ROW_RATIO` local header heights
///    (no rows), its height over the nearest lattice multiple when within `LATTICE_TOLERANCE`, else the
///    local estimate from labels. Without labels the local height is the lowest cluster of card heights;
/// 3. title box: the header's axis-aligned extent, `H cos θ + W sin θ` (W the de-rotated card width).
///
/// `direction` does not change the card layout and is not used; it is part of the signature so that a layout-
/// aware estimate can replace this one without touching callers. Boxes that are not finite or ordered are
/// returned unchanged. Measured on ground truth: see `core/tests/classify_title_boxes.rs`.
pub fn estimate_title_boxes(cards: &[BBox], labels: &[BBox], direction: Direction) -> Vec<BBox> {
    let _ = direction;
    let cards_ok: Vec<usize> = (0..cards.len()).filter(|&i| usable(&cards[i])).collect();
    let labels_ok: Vec<BBox> = labels.iter().copied().filter(usable).collect();
    let mut out = cards.to_vec();
    if cards_ok.is_empty() {
        return out;
    }
    let card_boxes: Vec<BBox> = cards_ok.iter().map(|&i| cards[i]).collect();
    let scene = Scene::new(&card_boxes, &labels_ok);
    let mut best: Option<(f64, Fit)> = None;
    for step in 0..=SLOPE_STEPS {
        let t = step as f64 * SLOPE_STEP;
        let fit = scene.fit(t);
        let items = (card_boxes.len() + labels_ok.len()) as f64;
        let cost = fit.cost + PRIOR * items * t * t;
        if best.as_ref().is_none_or(|(c, _)| cost < *c - 1e-12) {
            best = Some((cost, fit));
        }
    }
    let Some((_, fit)) = best else { return out };
    for (j, &i) in cards_ok.iter().enumerate() {
        let c = &cards[i];
        let title_h = fit.title_height(j);
        out[i] = BBox::new(c.x0, c.y0, c.x1, c.y1.min(c.y0 + title_h as f32));
    }
    out
}

/// Smallest mean-grey step (0–255) between a card's header and its body for [`snap_title_boxes`] to use it.
const HEADER_MIN_STEP: f64 = 30.0;
/// Rows either side of a header edge must be flat: standard deviation of grey across the card at most this.
const HEADER_MAX_ROW_STD: f64 = 16.0;
/// [`snap_title_boxes`] moves a title box only when the edge it finds is this far (relative) from the estimate.
const HEADER_MIN_CHANGE: f64 = 0.15;
/// ... and when the step there beats the one at the estimated height by this factor.
const HEADER_STEP_RATIO: f64 = 1.5;

/// Moves the lower edge of each title box ([`estimate_title_boxes`]) to the card's header edge seen in the image,
/// when the image shows one clearly. Netron draws the header in the operator's category colour over a body of
/// another shade, so below a header of height `h` the mean grey across the card steps sharply, with flat rows of
/// background on either side (the title text sits in the middle of the header, the first row's text `0.2 h`
/// below it). For each row-lattice height `h = H / (ROW_BASE + ROW_PITCH · k)` of the card (`H` its height
/// without the roll `skew_deg`, rows sampled along the roll), the step is the difference of the mean grey of the
/// rows `0.15 h` above and below the edge, counted only when those rows are flat (`HEADER_MAX_ROW_STD`). The
/// strongest step replaces the estimate when it is at least `HEADER_MIN_STEP`, at least
/// `HEADER_MIN_CHANGE` away from the estimated header, and `HEADER_STEP_RATIO` times the step at the
/// estimated height (a card without rows shows its strongest step at its own bottom edge, against the canvas).
/// Returns one box per card; cards or titles that are not usable boxes keep their title box.
pub fn snap_title_boxes(
    image: &RgbImage,
    cards: &[BBox],
    titles: &[BBox],
    skew_deg: f64,
) -> Vec<BBox> {
    let tan = if skew_deg.is_finite() {
        skew_deg.to_radians().tan()
    } else {
        0.0
    };
    cards
        .iter()
        .zip(titles)
        .map(|(c, t)| snap_title_box(image, c, t, tan).unwrap_or(*t))
        .collect()
}

fn snap_title_box(image: &RgbImage, card: &BBox, title: &BBox, tan: f64) -> Option<BBox> {
    if !usable(card) || !usable(title) || image.width() == 0 || image.height() == 0 {
        return None;
    }
    let [x0, y0, x1, y1] = [card.x0, card.y0, card.x1, card.y1].map(f64::from);
    let w = x1 - x0;
    let roll = w * tan.abs();
    let height = (y1 - y0) - roll;
    if height < 10.0 {
        return None;
    }
    // The card's top edge at column x, falling or rising with the roll from its highest corner.
    let top = |x: f64| {
        if tan >= 0.0 {
            y0 + (x - x0) * tan
        } else {
            y0 + (x - x1) * tan
        }
    };
    let n_cols = (0.6 * w).round().clamp(1.0, 64.0) as usize;
    let cols: Vec<f64> = (0..n_cols)
        .map(|i| x0 + 0.2 * w + 0.6 * w * (i as f64 + 0.5) / n_cols as f64)
        .collect();
    let (iw, ih) = (image.width() as f64, image.height() as f64);
    // (mean, standard deviation) of grey along the row `d` px below the top edge.
    let row = |d: f64| -> (f64, f64) {
        let vals: Vec<f64> = cols
            .iter()
            .map(|&x| {
                let (px, py) = (x.clamp(0.0, iw - 1.0), (top(x) + d).clamp(0.0, ih - 1.0));
                f64::from(resample::luma(image.get_pixel(px as u32, py as u32).0))
            })
            .collect();
        let mean = vals.iter().sum::<f64>() / vals.len() as f64;
        let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / vals.len() as f64;
        (mean, var.sqrt())
    };
    let step = |h: f64| -> Option<f64> {
        let a = (0.15 * h).floor().max(1.0) as usize;
        let side = |ds: Vec<f64>| -> Option<f64> {
            let mut sum = 0.0;
            for &d in &ds {
                let (m, sd) = row(d);
                if sd > HEADER_MAX_ROW_STD {
                    return None;
                }
                sum += m;
            }
            Some(sum / ds.len() as f64)
        };
        let above = side((1..=a).map(|k| h - 1.0 - k as f64).collect())?;
        let below = side((1..=a).map(|k| h + k as f64).collect())?;
        Some((above - below).abs())
    };
    let mut best: Option<(f64, f64)> = None;
    for k in 1.. {
        let h = height / (ROW_BASE + ROW_PITCH * k as f64);
        if h < 6.0 {
            break;
        }
        if let Some(s) = step(h) {
            if best.is_none_or(|(_, bs)| s > bs) {
                best = Some((h, s));
            }
        }
    }
    let (h, s) = best?;
    let estimate = f64::from(title.height()) - roll;
    if s < HEADER_MIN_STEP || (h / estimate.max(1e-6) - 1.0).abs() < HEADER_MIN_CHANGE {
        return None;
    }
    if step(estimate).is_some_and(|se| se * HEADER_STEP_RATIO > s) {
        return None;
    }
    Some(BBox::new(
        card.x0,
        card.y0,
        card.x1,
        card.y1.min((y0 + h + roll) as f32),
    ))
}

fn usable(b: &BBox) -> bool {
    b.is_finite() && b.width() > 0.0 && b.height() > 0.0
}

/// Box sizes and anchor points of one image, in f64.
struct Scene {
    /// Cards: (width, height, anchor x = centre, anchor y = top).
    cards: Vec<[f64; 4]>,
    /// Labels: (width, height, centre x, centre y).
    labels: Vec<[f64; 4]>,
    /// For each card, its label indices by increasing distance (at most NEIGHBOURS).
    card_neighbours: Vec<Vec<usize>>,
    /// For each label, the other labels by increasing distance (at most NEIGHBOURS).
    label_neighbours: Vec<Vec<usize>>,
}

/// The outcome of one roll slope.
struct Fit {
    cost: f64,
    cos: f64,
    sin: f64,
    /// Per card: de-rotated height and width (None when the slope makes it non-positive).
    card_dims: Vec<Option<(f64, f64)>>,
    /// Per card: local header height from labels (or the card fallback).
    local: Vec<f64>,
}

impl Scene {
    fn new(cards: &[BBox], labels: &[BBox]) -> Scene {
        let card_pts: Vec<[f64; 4]> = cards
            .iter()
            .map(|b| {
                let (w, h) = (f64::from(b.width()), f64::from(b.height()));
                [w, h, f64::from(b.x0) + w / 2.0, f64::from(b.y0)]
            })
            .collect();
        let label_pts: Vec<[f64; 4]> = labels
            .iter()
            .map(|b| {
                let (w, h) = (f64::from(b.width()), f64::from(b.height()));
                [w, h, f64::from(b.x0) + w / 2.0, f64::from(b.y0) + h / 2.0]
            })
            .collect();
        let nearest = |x: f64, y: f64, skip: Option<usize>| -> Vec<usize> {
            let mut d: Vec<(f64, usize)> = label_pts
                .iter()
                .enumerate()
                .filter(|(j, _)| Some(*j) != skip)
                .map(|(j, l)| ((l[2] - x).hypot(l[3] - y), j))
                .collect();
            d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            d.into_iter().take(NEIGHBOURS).map(|(_, j)| j).collect()
        };
        let card_neighbours = card_pts.iter().map(|c| nearest(c[2], c[3], None)).collect();
        let label_neighbours = label_pts
            .iter()
            .enumerate()
            .map(|(i, l)| nearest(l[2], l[3], Some(i)))
            .collect();
        Scene {
            cards: card_pts,
            labels: label_pts,
            card_neighbours,
            label_neighbours,
        }
    }

    fn fit(&self, t: f64) -> Fit {
        let theta = t.atan();
        let (sin, cos) = theta.sin_cos();
        let cos2 = cos * cos - sin * sin;
        let derotate = |w: f64, h: f64| -> Option<(f64, f64)> {
            let hh = (h * cos - w * sin) / cos2;
            let ww = (w * cos - h * sin) / cos2;
            (hh > 0.0).then_some((hh, ww.max(0.0)))
        };
        let clip2 = COST_CLIP * COST_CLIP;
        let mut cost = 0.0;
        // Header height implied by each label.
        let label_h: Vec<Option<f64>> = self
            .labels
            .iter()
            .map(|l| derotate(l[0], l[1]).map(|(h, _)| h / LABEL_TO_HEADER))
            .collect();
        for (i, h) in label_h.iter().enumerate() {
            let near: Vec<f64> = self.label_neighbours[i]
                .iter()
                .filter_map(|&j| label_h[j])
                .collect();
            match (h, median(near)) {
                (Some(h), Some(m)) => cost += (h / m).ln().powi(2).min(clip2),
                (None, _) => cost += clip2,
                (Some(_), None) => {}
            }
        }
        let card_dims: Vec<Option<(f64, f64)>> =
            self.cards.iter().map(|c| derotate(c[0], c[1])).collect();
        let fallback = lowest_cluster(card_dims.iter().flatten().map(|d| d.0));
        let mut local = Vec::with_capacity(self.cards.len());
        for (i, dims) in card_dims.iter().enumerate() {
            let near: Vec<f64> = self.card_neighbours[i]
                .iter()
                .filter_map(|&j| label_h[j])
                .collect();
            let hl = median(near).or(fallback).unwrap_or(1.0).max(1e-3);
            local.push(hl);
            match dims {
                Some((h, _)) => {
                    let r = h / hl;
                    let e = r - nearest_lattice(r.max(1.0));
                    cost += (e * e).min(clip2);
                }
                None => cost += clip2,
            }
        }
        Fit {
            cost,
            cos,
            sin,
            card_dims,
            local,
        }
    }
}

impl Fit {
    /// Axis-aligned height of card `j`'s header.
    fn title_height(&self, j: usize) -> f64 {
        let Some((hc, wc)) = self.card_dims[j] else {
            return f64::INFINITY; // the whole card
        };
        let hl = self.local[j];
        let r = hc / hl;
        let header = if r < NO_ROW_RATIO {
            hc
        } else {
            let m = nearest_lattice(r);
            if (r / m - 1.0).abs() < LATTICE_TOLERANCE {
                hc / m
            } else {
                hl
            }
        };
        header * self.cos + wc * self.sin
    }
}

/// The card-height / header-height ratio nearest to `r` among `1` and `ROW_BASE + ROW_PITCH · k`, `k ≥ 1`.
fn nearest_lattice(r: f64) -> f64 {
    let first = ROW_BASE + ROW_PITCH;
    if r <= (1.0 + first) / 2.0 {
        return 1.0;
    }
    let k = ((r - ROW_BASE) / ROW_PITCH).round().max(1.0);
    ROW_BASE + ROW_PITCH * k
}

/// The median of `v` (the mean of the middle two for an even count); `None` when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Median of the values within 20% of the smallest: the header height when every card could have rows.
fn lowest_cluster(values: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.filter(|v| *v > 0.0).collect();
    let min = v.iter().copied().reduce(f64::min)?;
    median(v.into_iter().filter(|&x| x <= min * 1.2).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 200×120 white canvas with one card at x 40..160, y 20..(20 + 20z + 6z + 12z·rows): a dark header of
    /// 20z px with a light bar of "text" in its middle, a white body with grey rows, a grey border.
    fn card_image(z: f64, rows: usize) -> (RgbImage, BBox) {
        let header = 20.0 * z;
        let height = if rows == 0 {
            header
        } else {
            header + (6.0 + 12.0 * rows as f64) * z
        };
        let card = BBox::new(40.0, 20.0, 160.0, (20.0 + height) as f32);
        let img = RgbImage::from_fn(200, 120, |x, y| {
            let (x, y) = (x as f64 + 0.5, y as f64 + 0.5);
            let inside = (40.0..160.0).contains(&x) && (20.0..20.0 + height).contains(&y);
            if !inside {
                return image::Rgb([255, 255, 255]);
            }
            let d = y - 20.0;
            let v = if d < header {
                let text = d > 0.3 * header && d < 0.7 * header && (60.0..140.0).contains(&x);
                if text {
                    230
                } else {
                    50
                }
            } else {
                let r = (d - header) / z;
                let in_row =
                    (0..rows).any(|i| r > 4.0 + 12.0 * i as f64 && r < 12.0 + 12.0 * i as f64);
                if in_row && (50.0..120.0).contains(&x) {
                    90
                } else {
                    250
                }
            };
            image::Rgb([v, v, v])
        });
        (img, card)
    }

    #[test]
    fn a_title_box_covering_the_rows_snaps_to_the_header() {
        let (img, card) = card_image(1.5, 1);
        let whole = card;
        let snapped = snap_title_boxes(&img, &[card], &[whole], 0.0)[0];
        assert!((snapped.y1 - 50.0).abs() <= 1.5, "{snapped:?}");
    }

    #[test]
    fn a_correct_title_box_and_a_card_without_rows_stay() {
        let (img, card) = card_image(1.5, 2);
        let right = BBox::new(card.x0, card.y0, card.x1, 50.0);
        assert_eq!(snap_title_boxes(&img, &[card], &[right], 0.0)[0], right);
        let (img, card) = card_image(1.5, 0);
        assert_eq!(snap_title_boxes(&img, &[card], &[card], 0.0)[0], card);
    }

    #[test]
    fn flat_or_degenerate_cards_keep_their_estimate() {
        let blank = RgbImage::from_pixel(200, 120, image::Rgb([200, 200, 200]));
        let card = BBox::new(40.0, 20.0, 160.0, 77.0);
        let title = BBox::new(40.0, 20.0, 160.0, 77.0);
        assert_eq!(snap_title_boxes(&blank, &[card], &[title], 0.0)[0], title);
        let bad = BBox::new(f32::NAN, 0.0, 1.0, 1.0);
        assert_eq!(snap_title_boxes(&blank, &[bad], &[bad], 0.0)[0].x1, 1.0);
        let tiny = BBox::new(10.0, 10.0, 12.0, 12.0);
        assert_eq!(
            snap_title_boxes(&blank, &[tiny], &[tiny], f64::NAN)[0],
            tiny
        );
    }
}
