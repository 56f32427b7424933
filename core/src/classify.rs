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

use image::RgbImage;
use tract_nnef::prelude::Tensor;

use crate::error::ScanError;
use crate::graph::{BBox, Direction};
use crate::models::Model;
use crate::resample;
use crate::vocab::Vocab;

/// Model input width in pixels.
pub const INPUT_W: u32 = 160;
/// Model input height in pixels.
pub const INPUT_H: u32 = 96;
/// Padding added to the title box on every side before cropping, in source pixels.
pub const TITLE_PAD: f32 = 7.0;
/// Per-channel (R, G, B) mean of the input normalisation (ImageNet; `train/common.py`).
pub const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
/// Per-channel (R, G, B) standard deviation of the input normalisation.
pub const STD: [f32; 3] = [0.229, 0.224, 0.225];

const STAGE: &str = "classifier";

/// Tuning of [`Classifier`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassifyParams {
    /// Below this top probability the node is *marked*, not guessed: [`OpPrediction::op`] is `None`
    /// (the graph JSON's `op: null`; `op_confidence` still carries the top probability). Default 0.5, a
    /// placeholder: to be calibrated on held-out synthetic data once the real model is trained (the
    /// probabilities are temperature-calibrated, so 0.5 means "more likely right than wrong").
    pub min_confidence: f32,
    /// Crops prepared at a time and handed to [`Model::run_each`], which runs them one by one on a batch-1 plan
    /// (faster in tract than a symbolic batch, see [`crate::models`]); this only bounds memory. Default 32.
    pub batch_size: usize,
}

impl Default for ClassifyParams {
    fn default() -> Self {
        ClassifyParams {
            min_confidence: 0.5,
            batch_size: 32,
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
        let mut out = Vec::with_capacity(title_boxes.len());
        let classes = self.vocab.len();
        for chunk in title_boxes.chunks(self.params.batch_size.max(1)) {
            let inputs = chunk
                .iter()
                .map(|b| title_input(image, b))
                .collect::<Result<Vec<_>, _>>()?;
            for logits in self.model.run_each_single(inputs)? {
                let view = logits
                    .to_plain_array_view::<f32>()
                    .map_err(|e| ScanError::inference(STAGE, e))?;
                match view.as_slice() {
                    Some(row) if view.shape() == [1, classes] => out.push(self.predict(row)),
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
        }
        Ok(out)
    }

    fn predict(&self, logits: &[f32]) -> OpPrediction {
        OpPrediction::from_probs(softmax(logits), &self.vocab, self.params.min_confidence)
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
    if !title.is_finite() || !title.is_ordered() {
        return None;
    }
    let pad = f64::from(TITLE_PAD);
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
    let region =
        title_region(image.width(), image.height(), title).ok_or_else(|| bad_box(image, title))?;
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
    classifier_input(image, std::slice::from_ref(title))
}

/// The classifier input for `boxes` stacked: float32 `[N, 3, 96, 160]` (N = `boxes.len()`, which must be ≥ 1 for
/// [`Model::run`] to accept it), item `i` equal to [`title_input`] of `boxes[i]`. Errors: see [`title_crop`].
pub fn classifier_input(image: &RgbImage, boxes: &[BBox]) -> Result<Tensor, ScanError> {
    let per = (3 * INPUT_W * INPUT_H) as usize;
    let shape = [boxes.len(), 3, INPUT_H as usize, INPUT_W as usize];
    let tract = |e| ScanError::inference(STAGE, e);
    let mut t = Tensor::zero::<f32>(&shape).map_err(tract)?;
    {
        let mut plain = t.try_as_plain_ram_mut().map_err(tract)?;
        let data = plain.as_slice_mut::<f32>().map_err(tract)?;
        for (b, out) in boxes.iter().zip(data.chunks_exact_mut(per)) {
            normalise_into(&title_crop(image, b)?, out);
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
///    [`NEIGHBOURS`] nearest labels (capped squared errors, plus a small prior towards no roll); keep the best;
/// 2. header height per card: its own de-rotated height when it is under [`NO_ROW_RATIO`] local header heights
///    (no rows), its height over the nearest lattice multiple when within [`LATTICE_TOLERANCE`], else the
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

fn median(mut v: Vec<f64>) -> Option<f64> {
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
