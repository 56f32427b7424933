//! Text reading (tensor-shape labels, graph input/output names, weight rows): text crops →
//! `models/ocr.onnx` → CTC decoding (greedy, and optionally a prefix beam search).
//!
//! Contract (`models/ocr.MODEL.md`, reference `train/ocr.py::preprocess_text` + `to_ocr_tensor` +
//! `ctc_greedy_ids`):
//! - grey: Pillow's `convert("L")` of the full-resolution upright RGB source ([`crate::resample::luma`]);
//! - crop: the text box grown by `crop_pad_fraction` (0.15) × box height on every side, clipped to the image;
//! - resize: to height `input_height` (48) keeping the aspect, width
//!   `w = clamp(round(crop_w · 48 / crop_h), 1, 320)` (round half to even, as Python), antialiased bilinear over
//!   the fractional box ([`crate::resample`], bit-exact with Pillow);
//! - skew: when the image's skew ([`crate::skew::estimate_skew`], once per image on the crop region) is at least
//!   `min_deg` (1.5°), the crop is instead the upright rectangle behind the box, sampled along the skew
//!   ([`crate::skew::rotated_text_crop`]; same padding and output height);
//! - pad: columns `w..320` take the mean grey of the resized crop's border (top row, bottom row, left column,
//!   right column, corners counted twice);
//! - normalise: `v / 127.5 − 1` (float32, `[−1, 1]`), layout `[N, 1, 48, 320]`;
//! - output `logits [N, T, C]` (T = 80 steps, C = blank + symbols); decoding: argmax per step, collapse
//!   repeats, drop the blank (class 0).
//!
//! Padding columns skipped ([`ReadParams::trim_margin`], on by default): each crop runs at [`run_width`] with a
//! margin of 48 through [`crate::models::Model::run_padded`], which runs the convolutional trunk on those columns
//! only and rebuilds the padding columns it leaves out, so the logits are those of the 320-column input (to float
//! rounding) for about 70% of the trunk's time. The crops of one call then run their recurrent heads in batches
//! ([`crate::models::Model::run_padded_heads`], the same logits bit for bit, about half the head's time per crop).
//!
//! Run width ([`ReadParams::width_margin`], off by default): the model is trained at 320 columns, but its layers
//! are convolutions and a recurrent layer over the columns, so [`TextReader::read`] can run each crop only as wide
//! as its text plus a margin of padding ([`run_width`]: `[1, 1, 48, W]`, `T = W / 4` steps), on the OCR plan for
//! that width. Its time is about proportional to the width (tract, one core: 5.2 ms at 320 columns, 2.9 at 192,
//! 1.0 at 64), and the crops of the validation split average 152 columns. The backward half of the recurrent
//! layer then starts over fewer padding columns, which changes some readings both ways (`models/METRICS.md`,
//! session 12).
//!
//! Re-reading ([`ReadParams::reread_below`]): a box whose greedy path probability is under the threshold (and
//! not under the floor [`ReadParams::reread_above`]) is cut again with each of [`ReadParams::reread_pads`] in
//! place of the 0.15 padding and read again. Every crop's greedy reading is a candidate; the text is the
//! candidate with the highest mean CTC log-likelihood over the box's crops ([`TextRead::log_likelihood`]), which
//! the label consensus and the title join then also use.
//! Padding moves the text against the model's 80 time steps and changes how much of the background and of the
//! neighbours the crop shows, so the crops' errors are partly independent; detector boxes and weight-row boxes
//! are often a little short of the text, so a wider second crop helps most (`models/METRICS.md`, session 11).
//!
//! Beam search ([`ReadParams::beam_width`]): the greedy reading follows the single likeliest alignment, so a
//! character whose probability is spread over two or three steps, each below the blank's, is dropped although
//! the labeling that contains it is the likelier one (dropped characters are the OCR's commonest error on small
//! photo text). With a beam width above 1, each crop's prefix beam search ([`ctc_beam`]) adds its best
//! labelings to the box's candidates, and the choice above (highest mean CTC log-likelihood over the box's
//! crops) runs for every box that has more than one candidate. A text found only by the beam search gets the
//! probability of its likeliest alignment ([`ctc_best_path_log_prob`]) as its confidence, the analogue of the
//! greedy path probability.

use image::RgbImage;
use tract_nnef::prelude::Tensor;

use crate::error::ScanError;
use crate::graph::BBox;
use crate::models::{Model, PaddedTrunk, HEAD_BATCH};
use crate::resample;
use crate::skew;
use crate::threads;
use crate::vocab::Alphabet;

const STAGE: &str = "ocr";

/// Tuning of [`TextReader`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadParams {
    /// Boxes whose greedy path probability ([`TextRead::confidence`] of the first crop) is under this are read
    /// again from the crops of [`ReadParams::reread_pads`] (module doc). `None`: one crop per box. Default
    /// `Some(0.5)` (about two thirds of the validation crops; the path probability is a product over 80 steps).
    pub reread_below: Option<f32>,
    /// ... and whose greedy path probability is at least this: a first reading that unsure is rarely rescued by a
    /// wider crop. `0.0`: every box under [`ReadParams::reread_below`]. Default 1e-3: on the development split and
    /// the dense synthetic views every count of `netron-ocr eval` stayed within 2 of re-reading every unsure box
    /// (at 0.01 photos lost 0.4 points of shapes), and the read stage of the three benchmark photos took 8–40%
    /// less time, most on the 60-node one (`models/METRICS.md`, session 24).
    pub reread_above: f32,
    /// Paddings of the extra crops, × box height on every side (the first crop uses the alphabet's
    /// `crop_pad_fraction`). Default `[0.3]`; an empty slice re-reads nothing.
    pub reread_pads: &'static [f64],
    /// Each crop runs at [`run_width`] with this margin: its resized width plus at least this many columns of
    /// padding, rounded up to a multiple of 32, at most the alphabet's `input_width` (module doc). `None`: every
    /// crop at `input_width`, as in training. Default `None`: on the development split a margin of 32 made the
    /// read stage about a quarter faster but lost up to 1.4 points on weight rows and port names, a margin of 64
    /// lost 1.1 points of weight-row recall on photos (`models/METRICS.md`, session 12); a speed option.
    pub width_margin: Option<u32>,
    /// Without a [`ReadParams::width_margin`], each crop's convolutional trunk runs only on its text plus at
    /// least this many columns of padding ([`run_width`]; at least [`MIN_TRIM_MARGIN`]), and the padding
    /// columns the trunk leaves out are rebuilt exactly ([`crate::models::Model::run_padded`]): the same logits
    /// as at `input_width`, for less trunk time. `None`: the trunk runs on every column. Default `Some(48)`.
    pub trim_margin: Option<u32>,
    /// Labelings kept by the prefix beam search of each crop ([`ctc_beam`]); they join the greedy readings as
    /// candidates for the box's text (module doc). `1` (or `0`): greedy decoding only. Default 1: on 6,000
    /// validation crops (truth boxes) a beam of 4 read 0.7957 exact against 0.7935 from one crop, but 0.8008
    /// against 0.8000 with re-reading; on the development split it moved op accuracy +0.002, weight-row recall
    /// −0.005 / −0.008 and precision +0.005 / +0.008 (photos / screenshots): no clear gain
    /// (`models/METRICS.md`, session 14).
    pub beam_width: usize,
    /// Threads the crops of one call run on ([`crate::threads::map_in_order`]; the readings are the same at any
    /// count). `0`: [`crate::threads::auto_threads`]. Default 0.
    pub threads: usize,
}

impl Default for ReadParams {
    fn default() -> Self {
        ReadParams {
            reread_below: Some(0.5),
            reread_above: 1e-3,
            reread_pads: &[0.3],
            width_margin: None,
            trim_margin: Some(48),
            beam_width: 1,
            threads: 0,
        }
    }
}

/// Fewest padding columns a crop keeps past its text when the trunk is trimmed ([`ReadParams::trim_margin`]): the
/// trunk's output column `k` sees input columns `4k − 15 ..= 4k + 17`, and the sixth column from a run's end must
/// see padding only (39 columns). In onnxruntime 40 gave the full width's logits bit for bit on 1,500 validation
/// crops, 32 did not (`models/METRICS.md`, session 17).
pub const MIN_TRIM_MARGIN: u32 = 40;

/// The text read from one box.
#[derive(Debug, Clone, PartialEq)]
pub struct TextRead {
    /// The decoded text (may be empty when the model emits only blanks).
    pub text: String,
    /// Probability of the greedy CTC path: the product over all time steps of the top softmax probability
    /// (blank steps included, so a confidently dropped or doubted character lowers it too). In `[0, 1]`.
    /// With re-reading, the highest such probability among the crops whose greedy reading is `text`; for a
    /// text that only the beam search found ([`ReadParams::beam_width`]), the probability of its likeliest
    /// alignment in the crop that found it.
    pub confidence: f32,
    /// The first crop's log-softmax per time step, `time_steps × classes` row-major: what rescoring another
    /// text against this crop needs ([`ctc_log_likelihood`]).
    pub log_probs: Vec<f32>,
    /// The same for each re-read crop ([`ReadParams::reread_pads`]); empty when the box was read once.
    pub reread_log_probs: Vec<Vec<f32>>,
}

impl TextRead {
    /// `log P(target | box)`: the mean over the box's crops ([`TextRead::log_probs`] and
    /// [`TextRead::reread_log_probs`]) of [`ctc_log_likelihood`]; `−∞` as there.
    pub fn log_likelihood(&self, classes: usize, target: &[usize]) -> f64 {
        let crops = std::iter::once(&self.log_probs).chain(&self.reread_log_probs);
        let n = 1 + self.reread_log_probs.len();
        crops
            .map(|lp| ctc_log_likelihood(lp, classes, target))
            .sum::<f64>()
            / n as f64
    }
}

/// The OCR reader: a loaded `ocr.onnx` plan plus its alphabet. `Send + Sync`.
#[derive(Debug, Clone)]
pub struct TextReader {
    model: Model,
    alphabet: Alphabet,
    params: ReadParams,
}

impl TextReader {
    /// Wraps a loaded OCR model. Its output shape is checked against `alphabet` on every run.
    pub fn new(model: Model, alphabet: Alphabet, params: ReadParams) -> TextReader {
        TextReader {
            model,
            alphabet,
            params,
        }
    }

    /// The alphabet.
    pub fn alphabet(&self) -> &Alphabet {
        &self.alphabet
    }

    /// The image's skew in degrees as the OCR expects it ([`Alphabet::estimate_skew`] on `region`, the padded
    /// crop in source pixels).
    pub fn estimate_skew(&self, image: &RgbImage, region: &BBox) -> f64 {
        let r = [region.x0, region.y0, region.x1, region.y1].map(f64::from);
        self.alphabet.estimate_skew(image, r)
    }

    /// Reads every text box (source-image pixels of `image`, the full-resolution upright frame) of an image
    /// with skew `skew_deg` ([`TextReader::estimate_skew`]). One result per box, in order. Errors: a box that
    /// is not finite and ordered or does not overlap the image ([`ScanError::Input`]); a failed run or a crop's
    /// logits not shaped `[1, time_steps, classes]` ([`ScanError::Inference`]).
    pub fn read(
        &self,
        image: &RgbImage,
        boxes: &[BBox],
        skew_deg: f64,
    ) -> Result<Vec<TextRead>, ScanError> {
        self.read_with_pads(image, boxes, skew_deg, self.params.reread_pads)
    }

    /// [`TextReader::read`] with `reread_pads` in place of [`ReadParams::reread_pads`] (the threshold stays
    /// [`ReadParams::reread_below`]).
    pub fn read_with_pads(
        &self,
        image: &RgbImage,
        boxes: &[BBox],
        skew_deg: f64,
        reread_pads: &[f64],
    ) -> Result<Vec<TextRead>, ScanError> {
        let classes = self.alphabet.classes();
        let first = self.read_crops(image, boxes, skew_deg, self.alphabet.crop_pad_fraction)?;
        let mut candidates: Vec<Vec<CtcPath>> = Vec::with_capacity(boxes.len());
        let mut out = Vec::with_capacity(boxes.len());
        for (path, log_probs) in first {
            out.push(TextRead {
                text: self.alphabet.decode(&path.classes),
                confidence: path.confidence,
                reread_log_probs: Vec::new(),
                log_probs,
            });
            let mut found = vec![path];
            self.add_beam(&mut found, &out[out.len() - 1].log_probs);
            candidates.push(found);
        }
        let unsure: Vec<usize> = match self.params.reread_below {
            Some(below) if !reread_pads.is_empty() => (0..out.len())
                .filter(|&i| {
                    out[i].confidence < below && out[i].confidence >= self.params.reread_above
                })
                .collect(),
            _ => Vec::new(),
        };
        if !unsure.is_empty() {
            let unsure_boxes: Vec<BBox> = unsure.iter().map(|&i| boxes[i]).collect();
            for &pad in reread_pads {
                let again = self.read_crops(image, &unsure_boxes, skew_deg, pad)?;
                for (&i, (path, log_probs)) in unsure.iter().zip(again) {
                    let mut found = vec![path];
                    self.add_beam(&mut found, &log_probs);
                    out[i].reread_log_probs.push(log_probs);
                    candidates[i].extend(found);
                }
            }
        }
        for (i, read) in out.iter_mut().enumerate() {
            if candidates[i].len() == 1 {
                continue;
            }
            let mut best: Option<(f64, &[usize])> = None;
            for path in &candidates[i] {
                if best.is_some_and(|(_, b)| b == path.classes.as_slice()) {
                    continue;
                }
                let ll = read.log_likelihood(classes, &path.classes);
                if best.is_none_or(|(bl, _)| ll > bl) {
                    best = Some((ll, &path.classes));
                }
            }
            let Some((_, text)) = best else { continue };
            let confidence = candidates[i]
                .iter()
                .filter(|p| p.classes == text)
                .map(|p| p.confidence)
                .fold(0f32, f32::max);
            read.text = self.alphabet.decode(text);
            read.confidence = confidence;
        }
        Ok(out)
    }

    /// Appends to `found` (one crop's greedy path first) the labelings of the crop's prefix beam search
    /// ([`ReadParams::beam_width`]) other than the greedy one, each with the probability of its likeliest
    /// alignment ([`ctc_best_path_log_prob`]) as its confidence.
    fn add_beam(&self, found: &mut Vec<CtcPath>, log_probs: &[f32]) {
        if self.params.beam_width <= 1 {
            return;
        }
        let classes = self.alphabet.classes();
        for beam in ctc_beam(log_probs, classes, self.params.beam_width, BEAM_PRUNE) {
            if beam.classes == found[0].classes {
                continue;
            }
            let best_path = ctc_best_path_log_prob(log_probs, classes, &beam.classes).exp() as f32;
            found.push(CtcPath {
                classes: beam.classes,
                confidence: if best_path.is_finite() {
                    best_path
                } else {
                    0.0
                },
            });
        }
    }

    /// One crop per box, padded by `pad_fraction` × its height ([`text_crop_padded`]), at its [`run_width`], run
    /// through the model on [`ReadParams::threads`] threads: per box its greedy path and its log-softmax rows. With
    /// a trimmed trunk ([`ReadParams::trim_margin`]) each crop's trunk runs alone and the recurrent heads in
    /// batches ([`Model::run_padded_heads`]; the same logits as alone).
    fn read_crops(
        &self,
        image: &RgbImage,
        boxes: &[BBox],
        skew_deg: f64,
        pad_fraction: f64,
    ) -> Result<Vec<(CtcPath, Vec<f32>)>, ScanError> {
        let classes = self.alphabet.classes();
        let (h, max_w) = (self.alphabet.input_height, self.alphabet.input_width);
        let trim = self.params.width_margin.is_none() && self.params.trim_margin.is_some();
        let margin =
            (self.params.width_margin).or(self.params.trim_margin.map(|m| m.max(MIN_TRIM_MARGIN)));
        let input = |b: &BBox| -> Result<Tensor, ScanError> {
            let (pixels, w) = text_crop_padded(image, b, &self.alphabet, skew_deg, pad_fraction)?;
            crop_input(&pixels, w, h, run_width(w, margin, max_w))
        };
        let decode = |logits: Tensor| -> Result<(CtcPath, Vec<f32>), ScanError> {
            let view = logits
                .to_plain_array_view::<f32>()
                .map_err(|e| ScanError::inference(STAGE, e))?;
            let shape = view.shape();
            let one_crop = matches!(*shape, [1, steps, c] if steps > 0 && c == classes);
            match view.as_slice() {
                Some(row) if one_crop => Ok(ctc_greedy_and_log_softmax(row, classes)),
                _ => Err(ScanError::Inference {
                    stage: STAGE,
                    message: format!("logits shape {shape:?}, expected [1, T, {classes}]"),
                }),
            }
        };
        let threads = self.params.threads;
        if !trim {
            return threads::map_in_order(threads, boxes, |b| {
                decode(self.model.run_single(input(b)?)?)
            });
        }
        let trunks =
            threads::map_in_order(threads, boxes, |b| self.model.run_padded_trunk(input(b)?))?;
        // As many batches as threads at least, so that a call's heads spread over its threads.
        let batch = trunks
            .len()
            .div_ceil(threads::resolve(threads))
            .clamp(1, HEAD_BATCH);
        let batches: Vec<&[PaddedTrunk]> = trunks.chunks(batch).collect();
        let logits = threads::map_in_order(threads, &batches, |t| self.model.run_padded_heads(t))?;
        logits.into_iter().flatten().map(decode).collect()
    }
}

/// The input width a crop of resized width `w` runs at: `min(max_w, ⌈(w + margin) / 32⌉ · 32)`, or `max_w`
/// without a margin ([`ReadParams::width_margin`]). Never below `w` when `w ≤ max_w`.
pub fn run_width(w: u32, margin: Option<u32>, max_w: u32) -> u32 {
    let Some(margin) = margin else {
        return max_w;
    };
    let step = crate::models::HW_MULTIPLE as u32;
    w.saturating_add(margin)
        .div_ceil(step)
        .saturating_mul(step)
        .min(max_w)
}

/// Greedy CTC decoding of one crop.
#[derive(Debug, Clone, PartialEq)]
pub struct CtcPath {
    /// Emitted classes (≥ 1) after collapsing repeats and dropping blanks.
    pub classes: Vec<usize>,
    /// Product over steps of the top softmax probability (see [`TextRead::confidence`]).
    pub confidence: f32,
}

/// Decodes one crop's logits, `T × classes` row-major (`logits.len()` a multiple of `classes`): at each step
/// the argmax class (the lowest index on ties), consecutive equal classes collapsed, class 0 (blank) dropped.
/// `classes == 0` or an empty input decodes to nothing with confidence 1.
pub fn ctc_greedy(logits: &[f32], classes: usize) -> CtcPath {
    greedy_path(&step_softmax(logits, classes))
}

/// Log-softmax of each `classes`-wide row of `logits` (computed in f64, stored as f32); an empty result when
/// `classes == 0`.
pub fn log_softmax_rows(logits: &[f32], classes: usize) -> Vec<f32> {
    log_softmax_of(logits, classes, &step_softmax(logits, classes))
}

/// [`ctc_greedy`] and [`log_softmax_rows`] of the same logits, bit for bit, with each step's exponentials
/// computed once for both (they are most of a crop's decoding time).
pub fn ctc_greedy_and_log_softmax(logits: &[f32], classes: usize) -> (CtcPath, Vec<f32>) {
    let steps = step_softmax(logits, classes);
    (greedy_path(&steps), log_softmax_of(logits, classes, &steps))
}

/// One step of a crop's logits: its argmax class (the lowest index on ties), that class's logit, and
/// `Σ exp(v − max)` over the step's classes in f64.
struct StepSoftmax {
    best: usize,
    max: f32,
    denom: f64,
}

fn step_softmax(logits: &[f32], classes: usize) -> Vec<StepSoftmax> {
    if classes == 0 {
        return Vec::new();
    }
    logits
        .chunks_exact(classes)
        .map(|step| {
            let (best, max) =
                step.iter()
                    .enumerate()
                    .fold((0usize, f32::NEG_INFINITY), |(bi, bv), (i, &v)| {
                        if v > bv {
                            (i, v)
                        } else {
                            (bi, bv)
                        }
                    });
            let denom: f64 = step.iter().map(|&v| f64::from(v - max).exp()).sum();
            StepSoftmax { best, max, denom }
        })
        .collect()
}

fn greedy_path(steps: &[StepSoftmax]) -> CtcPath {
    let mut out = Vec::new();
    // log softmax of the top class at each step: −log Σ exp(v − max).
    let mut log_conf = 0f64;
    let mut prev = 0usize;
    for step in steps {
        log_conf -= step.denom.ln();
        if step.best != prev && step.best != 0 {
            out.push(step.best);
        }
        prev = step.best;
    }
    let confidence = log_conf.exp() as f32;
    CtcPath {
        classes: out,
        confidence: if confidence.is_finite() {
            confidence
        } else {
            0.0
        },
    }
}

fn log_softmax_of(logits: &[f32], classes: usize, steps: &[StepSoftmax]) -> Vec<f32> {
    let mut out = Vec::with_capacity(logits.len());
    for (row, step) in logits.chunks_exact(classes.max(1)).zip(steps) {
        let lse = f64::from(step.max) + step.denom.ln();
        out.extend(row.iter().map(|&v| (f64::from(v) - lse) as f32));
    }
    out
}

/// `log P(target | crop)` under CTC: the log of the summed probability of every frame alignment that collapses
/// to `target` (classes ≥ 1, blank 0) given per-step log-probabilities `log_probs` (`T × classes` row-major,
/// [`TextRead::log_probs`]). Forward algorithm over the blank-interleaved target in f64. `−∞` when no
/// alignment fits in `T` steps, when a target class is 0 or not below `classes`, or when the input is empty.
///
/// The recursion runs on probabilities rescaled to sum 1 at every step (the log of the scales summed apart),
/// which needs one `exp` per step and distinct target class instead of an `exp` and a `ln` per cell: the
/// title join scores dozens of candidate titles per card this way. Where the probabilities underflow (a step's
/// all, or the end's: alignments e^−700 less likely than the best), it falls back on the log-space recursion,
/// so the two agree on which targets are possible; elsewhere they agree to rounding (tests below and in
/// `core/tests/read_ctc.rs`).
pub fn ctc_log_likelihood(log_probs: &[f32], classes: usize, target: &[usize]) -> f64 {
    ctc_scaled_forward(log_probs, classes, target)
        .unwrap_or_else(|| ctc_forward(log_probs, classes, target, log_add))
}

/// [`ctc_log_likelihood`] on rescaled probabilities; `None` where [`ctc_forward`] must decide (bad input, no
/// steps, or probabilities that underflow).
fn ctc_scaled_forward(log_probs: &[f32], classes: usize, target: &[usize]) -> Option<f64> {
    let ext = ctc_extended(classes, target)?;
    let steps = log_probs.len() / classes;
    if steps == 0 {
        return None;
    }
    // The distinct classes of `ext` (blank first) and each position's index among them.
    let mut distinct: Vec<usize> = vec![0];
    let slot: Vec<usize> = ext
        .iter()
        .map(|&c| match distinct.iter().position(|&d| d == c) {
            Some(i) => i,
            None => {
                distinct.push(c);
                distinct.len() - 1
            }
        })
        .collect();
    let mut p = vec![0f64; distinct.len()];
    let probs_at = |t: usize, p: &mut [f64]| {
        for (v, &c) in p.iter_mut().zip(&distinct) {
            *v = f64::from(log_probs[t * classes + c]).exp();
        }
    };
    let mut alpha = vec![0f64; ext.len()];
    let mut next = vec![0f64; ext.len()];
    probs_at(0, &mut p);
    alpha[0] = p[slot[0]];
    if ext.len() > 1 {
        alpha[1] = p[slot[1]];
    }
    let mut log_scale = 0f64;
    let rescale = |a: &mut [f64], log_scale: &mut f64| {
        let sum: f64 = a.iter().sum();
        if sum > 0.0 && sum.is_finite() {
            a.iter_mut().for_each(|v| *v /= sum);
            *log_scale += sum.ln();
            true
        } else {
            false
        }
    };
    if !rescale(&mut alpha, &mut log_scale) {
        return None;
    }
    for t in 1..steps {
        probs_at(t, &mut p);
        for s in 0..ext.len() {
            let mut a = alpha[s];
            if s >= 1 {
                a += alpha[s - 1];
            }
            if s >= 2 && ext[s] != 0 && ext[s] != ext[s - 2] {
                a += alpha[s - 2];
            }
            next[s] = a * p[slot[s]];
        }
        std::mem::swap(&mut alpha, &mut next);
        if !rescale(&mut alpha, &mut log_scale) {
            return None;
        }
    }
    let last = ext.len() - 1;
    let end = if last == 0 {
        alpha[0]
    } else {
        alpha[last] + alpha[last - 1]
    };
    (end > 0.0).then(|| log_scale + end.ln())
}

/// The log-probability of the likeliest single frame alignment that collapses to `target` (Viterbi; the same
/// recursion as [`ctc_log_likelihood`] with a max in place of the sum). For a crop's greedy reading it is the
/// greedy path's log-probability ([`CtcPath::confidence`]). `−∞` as there.
pub fn ctc_best_path_log_prob(log_probs: &[f32], classes: usize, target: &[usize]) -> f64 {
    ctc_forward(log_probs, classes, target, f64::max)
}

fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        b
    } else if b == f64::NEG_INFINITY {
        a
    } else {
        a.max(b) + (-(a - b).abs()).exp().ln_1p()
    }
}

/// The blank-interleaved target the CTC recursions run over: blank, t0, blank, t1, …, blank. `None` when a
/// target class is 0 or not below `classes`.
fn ctc_extended(classes: usize, target: &[usize]) -> Option<Vec<usize>> {
    if classes == 0 || target.iter().any(|&c| c == 0 || c >= classes) {
        return None;
    }
    Some(
        std::iter::once(0)
            .chain(target.iter().flat_map(|&c| [c, 0]))
            .collect(),
    )
}

fn ctc_forward(
    log_probs: &[f32],
    classes: usize,
    target: &[usize],
    add: fn(f64, f64) -> f64,
) -> f64 {
    let Some(ext) = ctc_extended(classes, target) else {
        return f64::NEG_INFINITY;
    };
    let steps = log_probs.len() / classes;
    if steps == 0 {
        return if target.is_empty() {
            0.0
        } else {
            f64::NEG_INFINITY
        };
    }
    let lp = |t: usize, k: usize| f64::from(log_probs[t * classes + k]);
    let mut alpha = vec![f64::NEG_INFINITY; ext.len()];
    alpha[0] = lp(0, ext[0]);
    if ext.len() > 1 {
        alpha[1] = lp(0, ext[1]);
    }
    let mut next = alpha.clone();
    for t in 1..steps {
        for s in 0..ext.len() {
            let mut a = alpha[s];
            if s >= 1 {
                a = add(a, alpha[s - 1]);
            }
            if s >= 2 && ext[s] != 0 && ext[s] != ext[s - 2] {
                a = add(a, alpha[s - 2]);
            }
            next[s] = if a == f64::NEG_INFINITY {
                a
            } else {
                a + lp(t, ext[s])
            };
        }
        std::mem::swap(&mut alpha, &mut next);
    }
    let last = ext.len() - 1;
    if last == 0 {
        alpha[0]
    } else {
        add(alpha[last], alpha[last - 1])
    }
}

/// Log-probability under which a class does not extend a prefix at a step of [`ctc_beam`] (e^−9 ≈ 1.2e-4).
pub const BEAM_PRUNE: f32 = -9.0;

/// One labeling kept by [`ctc_beam`].
#[derive(Debug, Clone, PartialEq)]
pub struct CtcBeam {
    /// Emitted classes (≥ 1), blanks and repeats already collapsed.
    pub classes: Vec<usize>,
    /// Log-probability of the labeling summed over the alignments the search kept (at most
    /// [`ctc_log_likelihood`]).
    pub log_prob: f64,
}

/// CTC prefix beam search over one crop's log-softmax rows `log_probs` (`T × classes` row-major, blank 0): the
/// `beam` (at least 1) likeliest labelings after the last step, best first, ties in the order they were first
/// reached. At each step a prefix is extended only by the `beam` likeliest non-blank classes whose
/// log-probability is above `prune`. Unlike [`ctc_greedy`], which follows the single likeliest alignment, it
/// sums a labeling over its alignments, so a character whose probability is spread over several steps (each
/// below the blank's) is kept. Reference twin: `train/ocr.py::ctc_beam_ids`. Empty input: the empty labeling with log-probability 0.
pub fn ctc_beam(log_probs: &[f32], classes: usize, beam: usize, prune: f32) -> Vec<CtcBeam> {
    // (prefix, log P(prefix, last step blank), log P(prefix, last step its last class))
    let mut beams: Vec<(Vec<usize>, f64, f64)> = vec![(Vec::new(), 0.0, f64::NEG_INFINITY)];
    if classes > 0 {
        for row in log_probs.chunks_exact(classes) {
            let lp = |k: usize| f64::from(row[k]);
            let mut extend: Vec<usize> = (1..classes).filter(|&k| row[k] > prune).collect();
            extend.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
            extend.truncate(beam.max(1));
            let mut next: Vec<(Vec<usize>, f64, f64)> = Vec::with_capacity(beams.len() * 2);
            let slot = |next: &mut Vec<(Vec<usize>, f64, f64)>, prefix: &[usize]| match next
                .iter()
                .position(|b| b.0 == prefix)
            {
                Some(i) => i,
                None => {
                    next.push((prefix.to_vec(), f64::NEG_INFINITY, f64::NEG_INFINITY));
                    next.len() - 1
                }
            };
            for (prefix, pb, pnb) in &beams {
                let total = log_add(*pb, *pnb);
                let i = slot(&mut next, prefix);
                next[i].1 = log_add(next[i].1, total + lp(0));
                if let Some(&last) = prefix.last() {
                    next[i].2 = log_add(next[i].2, pnb + lp(last));
                }
                for &c in &extend {
                    let mut longer = prefix.clone();
                    longer.push(c);
                    let from = if prefix.last() == Some(&c) {
                        *pb
                    } else {
                        total
                    };
                    let j = slot(&mut next, &longer);
                    next[j].2 = log_add(next[j].2, from + lp(c));
                }
            }
            next.retain(|b| b.1 > f64::NEG_INFINITY || b.2 > f64::NEG_INFINITY);
            // Stable: equal scores keep the order they were reached in, as in the Python twin.
            next.sort_by(|a, b| log_add(b.1, b.2).total_cmp(&log_add(a.1, a.2)));
            next.truncate(beam.max(1));
            beams = next;
        }
    }
    beams
        .into_iter()
        .map(|(classes, pb, pnb)| CtcBeam {
            classes,
            log_prob: log_add(pb, pnb),
        })
        .collect()
}

/// The source region cut for a text box: the box grown by `pad_fraction` × its height on every side, clipped to
/// `[0, width] × [0, height]`, in f64 as the Python reference computes it. `None` when the box is not finite
/// and ordered or the clipped region is empty.
pub fn text_region(width: u32, height: u32, text: &BBox, pad_fraction: f64) -> Option<[f64; 4]> {
    if !text.is_finite() || !text.is_ordered() {
        return None;
    }
    let (x0, y0, x1, y1) = (
        f64::from(text.x0),
        f64::from(text.y0),
        f64::from(text.x1),
        f64::from(text.y1),
    );
    let pad = (y1 - y0) * pad_fraction;
    let r = [
        (x0 - pad).max(0.0),
        (y0 - pad).max(0.0),
        (x1 + pad).min(f64::from(width)),
        (y1 + pad).min(f64::from(height)),
    ];
    // Pillow gets the region as f32: it must stay non-empty after that rounding.
    ((r[0] as f32) < (r[2] as f32) && (r[1] as f32) < (r[3] as f32)).then_some(r)
}

/// Resized width of a crop `crop_w × crop_h` scaled to height `out_h`: `clamp(round(crop_w · out_h / crop_h),
/// 1, max_w)` with Python's round half to even.
pub fn text_width(crop_w: f64, crop_h: f64, out_h: u32, max_w: u32) -> u32 {
    let w = (crop_w * f64::from(out_h) / crop_h.max(1e-6)).round_ties_even();
    w.clamp(1.0, f64::from(max_w)) as u32
}

/// One text crop before padding and normalisation: 8-bit grey, `input_height` rows × `w` columns
/// (`w ≤ input_width`), row-major; cut along the skew when `|skew_deg|` lies in the alphabet's
/// `[min_deg, max_deg]` ([`skew::rotated_text_crop`]), else axis-aligned (NaN included). Returns `(pixels, w)`.
/// Error: see [`text_region`].
pub fn text_crop(
    image: &RgbImage,
    text: &BBox,
    alphabet: &Alphabet,
    skew_deg: f64,
) -> Result<(Vec<u8>, u32), ScanError> {
    text_crop_padded(image, text, alphabet, skew_deg, alphabet.crop_pad_fraction)
}

/// [`text_crop`] with `pad_fraction` × box height of padding instead of the alphabet's `crop_pad_fraction`
/// (the re-read crops, [`ReadParams::reread_pads`]).
pub fn text_crop_padded(
    image: &RgbImage,
    text: &BBox,
    alphabet: &Alphabet,
    skew_deg: f64,
    pad_fraction: f64,
) -> Result<(Vec<u8>, u32), ScanError> {
    let bad = || ScanError::Input {
        stage: STAGE,
        message: format!(
            "text box [{}, {}, {}, {}] is not a finite, ordered box overlapping the {}×{} image",
            text.x0,
            text.y0,
            text.x1,
            text.y1,
            image.width(),
            image.height()
        ),
    };
    let r = text_region(image.width(), image.height(), text, pad_fraction).ok_or_else(bad)?;
    let turned = |p: &skew::SkewParams| (p.min_deg..=p.max_deg).contains(&skew_deg.abs());
    if let Some(params) = alphabet.skew.filter(turned) {
        let b = [text.x0, text.y0, text.x1, text.y1].map(f64::from);
        return Ok(skew::rotated_text_crop(
            image,
            b,
            skew_deg,
            pad_fraction,
            alphabet.input_height,
            alphabet.input_width,
            &params,
        ));
    }
    let w = text_width(
        r[2] - r[0],
        r[3] - r[1],
        alphabet.input_height,
        alphabet.input_width,
    );
    let region = [r[0] as f32, r[1] as f32, r[2] as f32, r[3] as f32];
    let pixels =
        resample::resize_luma_box(image, region, w, alphabet.input_height).ok_or_else(bad)?;
    Ok((pixels, w))
}

/// Mean of the border pixels of a `w`-wide grey crop (top row, bottom row, left column, right column; corners
/// counted twice), in f64 like numpy.
pub fn border_mean(pixels: &[u8], w: usize) -> f64 {
    if w == 0 || pixels.is_empty() {
        return 0.0;
    }
    let h = pixels.len() / w;
    let row = |y: usize| {
        pixels[y * w..(y + 1) * w]
            .iter()
            .map(|&v| u64::from(v))
            .sum::<u64>()
    };
    let col = |x: usize| (0..h).map(|y| u64::from(pixels[y * w + x])).sum::<u64>();
    let sum = row(0) + row(h - 1) + col(0) + col(w - 1);
    sum as f64 / (2 * w + 2 * h) as f64
}

/// Writes one crop (`pixels`, `w` columns) into `out` (`input_height × input_width` floats): `v / 127.5 − 1` in
/// float32 for columns `< w`, the border mean normalised the same way (in f64, then rounded) beyond.
pub fn normalise_into(pixels: &[u8], w: usize, input_width: usize, out: &mut [f32]) {
    let pad = (border_mean(pixels, w) / 127.5 - 1.0) as f32;
    for (src, dst) in pixels
        .chunks_exact(w)
        .zip(out.chunks_exact_mut(input_width))
    {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = f32::from(v) / 127.5 - 1.0;
        }
        dst[w..].fill(pad);
    }
}

/// The OCR input for one text box, as [`TextReader::read`] runs it: float32
/// `[1, 1, input_height, input_width]`. Errors: see [`text_crop`].
pub fn text_input(
    image: &RgbImage,
    text: &BBox,
    alphabet: &Alphabet,
    skew_deg: f64,
) -> Result<Tensor, ScanError> {
    ocr_input(image, std::slice::from_ref(text), alphabet, skew_deg)
}

/// The OCR input for `boxes` stacked: float32 `[N, 1, input_height, input_width]`, item `i` equal to
/// [`text_input`] of `boxes[i]`. Errors: see [`text_crop`].
pub fn ocr_input(
    image: &RgbImage,
    boxes: &[BBox],
    alphabet: &Alphabet,
    skew_deg: f64,
) -> Result<Tensor, ScanError> {
    let (h, w) = (
        alphabet.input_height as usize,
        alphabet.input_width as usize,
    );
    let tract = |e| ScanError::inference(STAGE, e);
    let mut t = Tensor::zero::<f32>(&[boxes.len(), 1, h, w]).map_err(tract)?;
    {
        let mut plain = t.try_as_plain_ram_mut().map_err(tract)?;
        let data = plain.as_slice_mut::<f32>().map_err(tract)?;
        for (b, out) in boxes.iter().zip(data.chunks_exact_mut(h * w)) {
            let (pixels, cw) = text_crop(image, b, alphabet, skew_deg)?;
            normalise_into(&pixels, cw as usize, w, out);
        }
    }
    Ok(t)
}

/// One crop (`pixels`, `w` columns of `height` rows) as the float32 input `[1, 1, height, width]`
/// ([`normalise_into`]; `width ≥ w`).
fn crop_input(pixels: &[u8], w: u32, height: u32, width: u32) -> Result<Tensor, ScanError> {
    let tract = |e| ScanError::inference(STAGE, e);
    let mut t = Tensor::zero::<f32>(&[1, 1, height as usize, width as usize]).map_err(tract)?;
    {
        let mut plain = t.try_as_plain_ram_mut().map_err(tract)?;
        let data = plain.as_slice_mut::<f32>().map_err(tract)?;
        normalise_into(pixels, w as usize, width as usize, data);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `steps × classes` pseudo-random logits (an LCG from `seed`), uniform in `[offset, offset + span)`.
    fn pseudo_random_logits(
        seed: u64,
        steps: usize,
        classes: usize,
        span: f32,
        offset: f32,
    ) -> Vec<f32> {
        let mut state = seed;
        (0..steps * classes)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * span + offset
            })
            .collect()
    }

    #[test]
    fn greedy_and_log_softmax_together_equal_them_apart_bit_for_bit() {
        let (steps, classes) = (80, 76);
        let mut logits = pseudo_random_logits(11, steps, classes, 30.0, -10.0);
        // A tie for the top class (the lower index wins), and a step whose top is the blank.
        logits[5 * classes + 3] = 40.0;
        logits[5 * classes + 9] = 40.0;
        logits[7 * classes] = 45.0;
        let (path, lp) = ctc_greedy_and_log_softmax(&logits, classes);
        assert_eq!(path, ctc_greedy(&logits, classes));
        assert_eq!(lp, log_softmax_rows(&logits, classes));
        assert!(path.classes.contains(&3) && !path.classes.contains(&9));
        // The log-softmax written out directly, as the reader computed it before the two shared their sums.
        for (row, got) in logits.chunks_exact(classes).zip(lp.chunks_exact(classes)) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
            let lse = f64::from(max) + sum.ln();
            let want: Vec<f32> = row.iter().map(|&v| (f64::from(v) - lse) as f32).collect();
            assert_eq!(got, want.as_slice());
        }
        assert_eq!(
            ctc_greedy_and_log_softmax(&[], 0),
            (ctc_greedy(&[], 0), vec![])
        );
        assert_eq!(ctc_greedy(&[], 0).confidence, 1.0);
    }

    #[test]
    fn rescaled_likelihood_agrees_with_the_log_space_recursion_on_long_crops() {
        // 80 steps over 76 classes, as the OCR's; pseudo-random logits, sharp enough that paths differ by
        // hundreds of nats, and targets from short to long, with repeats.
        let (steps, classes) = (80, 76);
        let logits = pseudo_random_logits(7, steps, classes, 24.0, 0.0);
        let lp = log_softmax_rows(&logits, classes);
        for target in [
            vec![5],
            vec![12, 12, 40],
            vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            (1..=30).map(|i| (i * 7) % 75 + 1).collect::<Vec<usize>>(),
        ] {
            let scaled = ctc_scaled_forward(&lp, classes, &target);
            let log_space = ctc_forward(&lp, classes, &target, log_add);
            let got = scaled.unwrap_or_else(|| panic!("{target:?}: fell back"));
            assert!(
                (got - log_space).abs() <= 1e-9 * log_space.abs().max(1.0),
                "{target:?}: {got} vs {log_space}"
            );
        }
    }
}
