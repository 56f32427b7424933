//! The classifier's operator vocabulary (`models/vocab.json`) and the OCR alphabet
//! (`models/ocr_alphabet.json`), parsed from their JSON text and validated.
//!
//! Both loaders take the file contents as `&str` (the models module embeds the files, or reads them from a
//! model directory) and report problems as [`ModelError::Metadata`] naming the file.
//!
//! - [`Vocab`]: class index `i` of the classifier output is operator `ops[i]` (the entry whose `index` is `i`),
//!   with its Netron category. Indices must be exactly `0..len`, names distinct and non-empty.
//! - [`Alphabet`]: CTC class 0 is the blank, class `i ≥ 1` is `symbols[i − 1]` (single characters, distinct).
//!   It also carries the OCR model's `time_steps` and input geometry from the same file.

use image::RgbImage;
use serde::Deserialize;

use crate::models::{ModelError, ALPHABET_JSON, VOCAB_JSON};
use crate::skew::SkewParams;

/// Number of operators of the shipped vocabulary (`models/vocab.json`, ONNX opset 20 subset).
pub const VOCAB_OPS: usize = 72;

/// The operator vocabulary: classifier class `i` ↔ `ops[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocab {
    /// `ops[i]` is the ONNX operator of classifier class `i`.
    pub ops: Vec<String>,
    /// `categories[i]` is Netron's category of `ops[i]` (`"layer"`, `"activation"`, …, or `"none"`).
    pub categories: Vec<String>,
    /// `train_nodes[i]`: nodes of `ops[i]` in the training graphs (`python -m datagen priors`); all 1 when the
    /// file does not give them. The prior where only a card's category is seen ([`Vocab::within_category`]).
    pub train_nodes: Vec<u32>,
}

#[derive(Deserialize)]
struct VocabFile {
    version: u32,
    operators: Vec<VocabEntry>,
}

#[derive(Deserialize)]
struct VocabEntry {
    op: String,
    category: String,
    index: usize,
    #[serde(default)]
    train_nodes: Option<u32>,
}

fn metadata(file: &str, message: impl Into<String>) -> ModelError {
    ModelError::Metadata {
        file: file.to_owned(),
        message: message.into(),
    }
}

impl Vocab {
    /// Parses `vocab.json` (`{"version": 1, "opset": …, "operators": [{"op", "category", "index",
    /// "train_nodes"}, …]}`, `train_nodes` optional). Errors: malformed JSON, version ≠ 1, no operators, an
    /// index outside `0..len` or repeated, an empty or repeated op name, `train_nodes` given for some operators
    /// only.
    pub fn from_json(text: &str) -> Result<Vocab, ModelError> {
        const FILE: &str = "vocab.json";
        let file: VocabFile =
            serde_json::from_str(text).map_err(|e| metadata(FILE, e.to_string()))?;
        if file.version != 1 {
            return Err(metadata(
                FILE,
                format!("version {}, expected 1", file.version),
            ));
        }
        let n = file.operators.len();
        if n == 0 {
            return Err(metadata(FILE, "no operators"));
        }
        let counted = file
            .operators
            .iter()
            .filter(|e| e.train_nodes.is_some())
            .count();
        if counted != 0 && counted != n {
            return Err(metadata(
                FILE,
                format!("train_nodes given for {counted} of {n} operators"),
            ));
        }
        let mut slots: Vec<Option<(String, String, u32)>> = vec![None; n];
        for e in file.operators {
            if e.op.is_empty() {
                return Err(metadata(FILE, format!("index {}: empty op name", e.index)));
            }
            let slot = slots.get_mut(e.index).ok_or_else(|| {
                metadata(FILE, format!("{}: index {} outside 0..{n}", e.op, e.index))
            })?;
            if slot.is_some() {
                return Err(metadata(FILE, format!("index {} used twice", e.index)));
            }
            *slot = Some((e.op, e.category, e.train_nodes.unwrap_or(1)));
        }
        // n entries, n distinct indices in 0..n: every slot is filled.
        let mut ops = Vec::with_capacity(n);
        let mut categories = Vec::with_capacity(n);
        let mut train_nodes = Vec::with_capacity(n);
        for (op, category, count) in slots.into_iter().flatten() {
            ops.push(op);
            categories.push(category);
            train_nodes.push(count);
        }
        let mut sorted: Vec<&str> = ops.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(metadata(FILE, format!("op {:?} listed twice", w[0])));
        }
        Ok(Vocab {
            ops,
            categories,
            train_nodes,
        })
    }

    /// The vocabulary compiled into the library.
    pub fn bundled() -> Result<Vocab, ModelError> {
        Vocab::from_json(VOCAB_JSON)
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there are no classes (never true for a parsed vocabulary).
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operator of class `index`.
    pub fn op(&self, index: usize) -> Option<&str> {
        self.ops.get(index).map(String::as_str)
    }

    /// Netron's category of class `index`.
    pub fn category(&self, index: usize) -> Option<&str> {
        self.categories.get(index).map(String::as_str)
    }

    /// The class index of `op` (exact, case-sensitive name).
    pub fn index_of(&self, op: &str) -> Option<usize> {
        self.ops.iter().position(|o| o == op)
    }

    /// `P(op i | its category)` for every class: the share of `train_nodes[i]` among the training nodes of
    /// operators of the same category (uniform within a category whose operators all count 0).
    pub fn within_category(&self) -> Vec<f32> {
        let n = self.len();
        (0..n)
            .map(|i| {
                let same = (0..n).filter(|&j| self.categories[j] == self.categories[i]);
                let (count, total) = same.fold((0usize, 0u64), |(c, t), j| {
                    (c + 1, t + u64::from(self.train_nodes[j]))
                });
                if total == 0 {
                    1.0 / count as f32
                } else {
                    (f64::from(self.train_nodes[i]) / total as f64) as f32
                }
            })
            .collect()
    }
}

/// The OCR alphabet and the model interface described next to it in `ocr_alphabet.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Alphabet {
    /// CTC class `i ≥ 1` is `symbols[i − 1]`; each is exactly one `char`.
    pub symbols: Vec<String>,
    /// Output time steps of the OCR model (80).
    pub time_steps: usize,
    /// Longest text the model was trained on (32 characters).
    pub max_length: usize,
    /// Input height in pixels (48).
    pub input_height: u32,
    /// Input width in pixels (320).
    pub input_width: u32,
    /// Crop padding on every side, as a fraction of the text box height (0.15).
    pub crop_pad_fraction: f64,
    /// How crops follow a skewed photo (`input.skew`); `None` for a model trained on axis-aligned crops only.
    pub skew: Option<SkewParams>,
    chars: Vec<char>,
}

#[derive(Deserialize)]
struct AlphabetFile {
    format: String,
    version: u32,
    blank: usize,
    symbols: Vec<String>,
    num_classes: usize,
    time_steps: usize,
    max_length: usize,
    input: AlphabetInput,
}

#[derive(Deserialize)]
struct AlphabetInput {
    layout: String,
    channels: u32,
    height: u32,
    width: u32,
    crop_pad_fraction_of_height: f64,
    #[serde(default)]
    skew: Option<SkewParams>,
}

impl Alphabet {
    /// Parses `ocr_alphabet.json` (`format` `netron-ocr.ocr-alphabet`, version 1). Errors: malformed JSON or
    /// missing fields, another format/version, blank ≠ 0, an empty symbol list, a symbol that is not exactly
    /// one character, a repeated symbol, `num_classes ≠ symbols + 1`, zero time steps or input sizes, an input
    /// that is not one-channel NCHW, a crop padding outside `[0, 2]`, skew settings out of range.
    pub fn from_json(text: &str) -> Result<Alphabet, ModelError> {
        const FILE: &str = "ocr_alphabet.json";
        let file: AlphabetFile =
            serde_json::from_str(text).map_err(|e| metadata(FILE, e.to_string()))?;
        if file.format != "netron-ocr.ocr-alphabet" || file.version != 1 {
            return Err(metadata(
                FILE,
                format!(
                    "format {:?} version {}, expected netron-ocr.ocr-alphabet 1",
                    file.format, file.version
                ),
            ));
        }
        if file.blank != 0 {
            return Err(metadata(
                FILE,
                format!("blank is {}, expected 0", file.blank),
            ));
        }
        if file.symbols.is_empty() {
            return Err(metadata(FILE, "no symbols"));
        }
        let mut chars = Vec::with_capacity(file.symbols.len());
        for s in &file.symbols {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => {
                    if chars.contains(&c) {
                        return Err(metadata(FILE, format!("symbol {s:?} listed twice")));
                    }
                    chars.push(c);
                }
                _ => return Err(metadata(FILE, format!("symbol {s:?} is not one character"))),
            }
        }
        if file.num_classes != chars.len() + 1 {
            return Err(metadata(
                FILE,
                format!(
                    "num_classes {} != {} symbols + blank",
                    file.num_classes,
                    chars.len()
                ),
            ));
        }
        let input = &file.input;
        if file.time_steps == 0 || file.max_length == 0 || input.height == 0 || input.width == 0 {
            return Err(metadata(
                FILE,
                "time_steps, max_length and the input size must be positive",
            ));
        }
        if input.layout != "NCHW" || input.channels != 1 {
            return Err(metadata(
                FILE,
                format!(
                    "input {} with {} channels, expected NCHW grey",
                    input.layout, input.channels
                ),
            ));
        }
        let pad = input.crop_pad_fraction_of_height;
        if !(0.0..=2.0).contains(&pad) {
            return Err(metadata(
                FILE,
                format!("crop_pad_fraction_of_height {pad} outside [0, 2]"),
            ));
        }
        let skew = match input.skew {
            None => None,
            Some(k) => {
                let ok = (0.0..=45.0).contains(&k.min_deg)
                    && (k.min_deg..=45.0).contains(&k.max_deg)
                    && k.max_side >= 32
                    && (1..=16).contains(&k.max_samples);
                if !ok {
                    return Err(metadata(
                        FILE,
                        format!(
                            "skew min_deg {} max_deg {} max_side {} max_samples {}: expected \
                             0 ≤ min_deg ≤ max_deg ≤ 45, max_side ≥ 32, max_samples 1..=16",
                            k.min_deg, k.max_deg, k.max_side, k.max_samples
                        ),
                    ));
                }
                Some(k)
            }
        };
        Ok(Alphabet {
            symbols: file.symbols,
            time_steps: file.time_steps,
            max_length: file.max_length,
            input_height: input.height,
            input_width: input.width,
            crop_pad_fraction: pad,
            skew,
            chars,
        })
    }

    /// The alphabet compiled into the library.
    pub fn bundled() -> Result<Alphabet, ModelError> {
        Alphabet::from_json(ALPHABET_JSON)
    }

    /// The skew of `image` inside `region` (source pixels `[x0, y0, x1, y1]`, the padded crop) in degrees, as
    /// the OCR crops follow it ([`crate::skew::estimate_skew`]); 0 when this alphabet has no skew settings.
    pub fn estimate_skew(&self, image: &RgbImage, region: [f64; 4]) -> f64 {
        self.skew
            .map_or(0.0, |p| crate::skew::estimate_skew(image, region, &p))
    }

    /// Number of CTC classes (symbols + blank).
    pub fn classes(&self) -> usize {
        self.chars.len() + 1
    }

    /// The character of CTC class `class` (`None` for the blank, 0, and for classes past the alphabet).
    pub fn symbol(&self, class: usize) -> Option<char> {
        class
            .checked_sub(1)
            .and_then(|i| self.chars.get(i).copied())
    }

    /// The CTC class of `c`, if it is in the alphabet.
    pub fn class_of(&self, c: char) -> Option<usize> {
        self.chars.iter().position(|&s| s == c).map(|i| i + 1)
    }

    /// The CTC classes of `text`, `None` when a character is not in the alphabet.
    pub fn encode(&self, text: &str) -> Option<Vec<usize>> {
        text.chars().map(|c| self.class_of(c)).collect()
    }

    /// The text of a sequence of CTC classes; blanks and unknown classes are skipped.
    pub fn decode(&self, classes: &[usize]) -> String {
        classes.iter().filter_map(|&k| self.symbol(k)).collect()
    }
}
