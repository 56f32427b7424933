//! The four ONNX models, loaded with tract and checked against the SHA-256 manifest.
//!
//! - [`Model`]: one optimized tract plan (`Arc<TypedRunnableModel>`, `Send + Sync`, shared by every thread;
//!   each [`Model::run`] makes a fresh state); the detector keeps one plan per input size (below).
//! - [`ModelSet`]: the cropper, detector, classifier and OCR models plus the operator vocabulary
//!   (`models/vocab.json`) and the OCR alphabet (`models/ocr_alphabet.json`).
//!
//! Batching: the plan is always optimized for a batch of **one** (a concrete input fact `[1, C, H, W]`).
//! [`Model::run_each`] runs a list of such inputs one after another, each with a fresh state, and returns the
//! outputs per input (the classifier and the text reader build one input per crop). [`Model::run`] also takes
//! any batch `N` for the classifier and OCR models, runs its items the same way and stacks the outputs.
//! Measured on this project's models (tract 0.23.9, one core, thread CPU time, `core/examples/batch_timing.rs`):
//! a plan with a symbolic `N` costs 7–8 ms per classifier crop against 1.9 ms for the batch-1 plan (2.5–3.2 ms
//! per crop for concrete batches of 2–20), and 5–8 ms against 3.3 ms per OCR crop; the results are the same up
//! to float rounding.
//!
//! Input facts (NCHW float32, see each `models/<name>.MODEL.md`):
//!
//! | model | input `image` | outputs |
//! |---|---|---|
//! | cropper | `[1, 3, 512, 512]` | `proj_x [1,128]`, `proj_y [1,128]`, `margins [1,4]` |
//! | detector | `[1, 3, H, W]`, H and W multiples of 32 up to 512 | `heatmap [1,4,H/4,W/4]`, `size [1,2,H/4,W/4]`, `offset [1,2,H/4,W/4]` |
//! | classifier | `[N, 3, 96, 160]` (any batch `N ≥ 1`) | `logits [N,72]` |
//! | ocr | `[N, 1, 48, 320]` (any batch `N ≥ 1`); `[1, 1, 48, W]`, W a multiple of 32 up to 320 | `logits [N,80,76]`; `[1,W/4,76]` |
//!
//! Variable input size ([`ModelKind::variable_sides`]): the detector is fully convolutional (total stride 32), and
//! each tile is trimmed to its letterboxed content (`crate::detect`); the OCR runs each crop at a width a little
//! over the text's (`crate::read`). [`Model::run_any_size`] takes `[1, C, H, W]` with the variable sides multiples
//! of [`HW_MULTIPLE`] up to the nominal ones and runs it on a plan optimized for that concrete shape:
//! the nominal plan is built at load and always kept, the others on first use (detector 60–120 ms each, OCR about
//! 20 ms) and kept in a mutex-guarded least-recently-used cache of at most [`MAX_SHAPE_PLANS`] per model, shared by
//! the clones and threads, so a `Model` stays `Send + Sync`. Each plan holds its own packed weights, about 5 MiB for
//! the detector (30 plans, every other shape a letterbox can produce: +153 MiB RSS), hence the cap. A single plan
//! with symbolic H and W was measured 7× slower per run than concrete ones (tract 0.23.9,
//! `core/examples/batch_timing.rs`).
//!
//! Transposed plans ([`Model::run_transposed`]): the detector can also run an input `[1, C, H, W]` through its
//! graph rebuilt with the two spatial axes exchanged (every kernel transposed), on the transposed input, with the
//! outputs transposed back: the same outputs up to float rounding. tract 0.23's depthwise convolution reaches its
//! vector kernel only when the longest axis of a zone is W, so a taller-than-wide tile ran its depthwise layers on
//! the scalar path; transposed, it runs about 30% faster (`crate::detect::DetectParams::transpose_tall`,
//! `BENCHMARKS.md`, session 42). These plans are cached apart from the others, on the same terms. On arm64 tract
//! lays the depthwise convolutions out channels last, where its kernel runs along the channels, and the
//! transposed run is the plain one ([`Model::runs_transposed`]; `ffi/arm64-check.sh`).
//!
//! Trunk and head ([`Model::run_padded`]): the OCR is also kept cut where its convolutional trunk ends, so that
//! a crop's trunk runs only over its text and some padding, and the recurrent head over all 80 steps. The heads of
//! several crops can run as one batch ([`Model::run_padded_trunk`], then [`Model::run_padded_heads`]; up to
//! [`HEAD_BATCH`] crops, the same logits bit for bit), which halves their cost per crop: each recurrent step then
//! multiplies a matrix instead of one vector per crop. The NNEF OCR keeps its batch symbolic for this
//! (`netron-ocr-convert`); an NNEF file converted with a fixed batch runs each head alone.
//!
//! Optimization: each plan is the decluttered typed graph with four rewrites of ours, then tract's codegen:
//! - the detector's ×2 upsamplings, stored as transposed convolutions of ones, become tract's nearest upsampling
//!   (`upsample_copying_deconvs`; the same outputs, bit for bit, `core/tests/detect_input_sizes.rs`), 2–5% less
//!   detector time (`core/examples/upsample_timing.rs`);
//! - some convolutions are lowered otherwise than tract would (`conv_lowerings`, [`SMALL_CONV_INPUTS`]): those
//!   with many inputs per output point never as tract's direct spatial convolution, and small ones that tract
//!   would not run directly (it takes a lazy im2col) through an eager im2col. The same outputs up to float
//!   rounding; per run, 10% less OCR time at 320 columns, 20% less classifier time (`BENCHMARKS.md`, session 43);
//! - a 2 × 2 max pool of stride 2 becomes a 2 × 1 pool over rows and a 1 × 2 pool over columns
//!   (`split_square_max_pools`; the same outputs bit for bit), 4–5% less OCR time;
//! - a depthwise convolution of stride 2 along W runs at stride 1 along W, then every other column is kept
//!   (`unstride_depthwise_columns`; the same outputs bit for bit on x86-64): tract vectorises a depthwise
//!   convolution only at stride 1, and the vector sums of twice the columns cost less than the scalar sums of half.
//!   Per run, 27% less classifier time, 19% less cropper time, 14% less detector time (`BENCHMARKS.md`, session
//!   44).
//!
//! Integrity: `core/build.rs` reads the line `SHA-256: <64 hex>` of every `models/<name>.MODEL.md` into a
//! manifest ([`MANIFEST`]); every load (bundled bytes or files from a directory) hashes the model bytes and
//! refuses a mismatch with [`ModelError::HashMismatch`]. `models/update_hashes.py` rewrites those lines after an
//! export.
//!
//! Format (cargo features): with `onnx` (the default) the models are the committed `models/<name>.onnx` files,
//! parsed by tract's ONNX front end. Without it and with `nnef`, they are NNEF tars (`<name>.nnef.tar`) read by
//! `tract-nnef` alone, which leaves the ONNX parser out of the library (smaller, see `docs/mobile.md`): the build
//! script checks each committed `.onnx` against its `MODEL.md` hash, converts it with `netron-ocr-convert`
//! (deterministic bytes), bundles the result and puts the NNEF hashes in the manifest. `netron-ocr-convert
//! MODELS_DIR OUT_DIR` writes the same files for [`ModelSet::from_dir`]. Both formats give the same plans and
//! outputs (`core/tests/models_nnef.rs`).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};
use thiserror::Error;
#[cfg(not(any(feature = "onnx", feature = "nnef")))]
compile_error!("netron-ocr-core needs a model format: cargo feature `onnx` (default) or `nnef`");

use tract_nnef::prelude::*;
use tract_nnef::tract_core::knobs::KnobScope;
use tract_nnef::tract_core::ops::cnn::conv::DirectSpatialConv;
use tract_nnef::tract_core::ops::cnn::{Conv, Deconv, MaxPool, PaddingSpec};
use tract_nnef::tract_core::ops::nn::{DataFormat, NearestUpsample};
#[cfg(feature = "onnx")]
use tract_onnx::prelude::{InferenceModel, InferenceModelExt};

use crate::error::ScanError;
use crate::vocab::{Alphabet, Vocab};

// `MANIFEST: &[(&str, &str)]`: (model file name, lowercase hex SHA-256), generated by build.rs.
include!(concat!(env!("OUT_DIR"), "/model_manifest.rs"));

/// Most OCR crops whose recurrent heads [`Model::run_padded_heads`] runs as one batch. The head (two bidirectional
/// GRU layers over 80 steps, then the classifier) costs per crop, in one run of `n` crops (tract 0.23.9, one core,
/// best of 15, session 43): 1.36 ms alone, 0.99 ms in twos, 0.76 in fours, 0.70 in eights, 0.68 in sixteens, 0.71
/// in thirty-twos: each recurrent step multiplies one `n`-row matrix instead of `n` vectors.
pub const HEAD_BATCH: usize = 8;

/// Input height and width of a variable-size model ([`ModelKind::variable_sides`]) are multiples of this (the
/// detector's total stride), at most its nominal side ([`ModelKind::input_chw`]).
pub const HW_MULTIPLE: usize = 32;

/// A variable-size model keeps optimized plans for at most this many input shapes besides the nominal one (least
/// recently used dropped first). The detector's letterbox makes one side 512 and the other a multiple of 32, so it
/// can produce 31 shapes; one camera framing yields one or two, and a plan costs about 5 MiB. The text reader's
/// widths with a margin of 32 or more are 64 to 288 besides the nominal 320 (`crate::read::run_width`): all 8 stay.
pub const MAX_SHAPE_PLANS: usize = 8;

/// The operator vocabulary shipped with the models (`models/vocab.json`, parsed by [`Vocab`]).
pub const VOCAB_JSON: &str = include_str!("../../models/vocab.json");
/// The ONNX input and attribute names of the vocabulary's operators (`models/op_rows.json`, parsed by
/// [`crate::weights::OpRows`]).
pub const OP_ROWS_JSON: &str = include_str!("../../models/op_rows.json");
/// The OCR alphabet shipped with the models (`models/ocr_alphabet.json`, parsed by [`Alphabet`]).
pub const ALPHABET_JSON: &str = include_str!("../../models/ocr_alphabet.json");

#[cfg(all(feature = "bundled-models", feature = "onnx"))]
mod bundled {
    pub const CROPPER: &[u8] = include_bytes!("../../models/cropper.onnx");
    pub const DETECTOR: &[u8] = include_bytes!("../../models/detector.onnx");
    pub const CLASSIFIER: &[u8] = include_bytes!("../../models/classifier.onnx");
    pub const OCR: &[u8] = include_bytes!("../../models/ocr.onnx");
}

/// Converted from the committed ONNX files by build.rs.
#[cfg(all(feature = "bundled-models", not(feature = "onnx")))]
mod bundled {
    pub const CROPPER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cropper.nnef.tar"));
    pub const DETECTOR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/detector.nnef.tar"));
    pub const CLASSIFIER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/classifier.nnef.tar"));
    pub const OCR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ocr.nnef.tar"));
}

/// Why a model (or the vocabulary / alphabet) could not be loaded.
#[derive(Debug, Error)]
pub enum ModelError {
    /// The file's SHA-256 is not the one in the manifest (`models/<name>.MODEL.md`): a corrupted, tampered or
    /// re-exported file whose hash line was not updated (`python models/update_hashes.py`).
    #[error("{file}: SHA-256 {found} does not match the manifest's {expected}")]
    HashMismatch {
        file: String,
        expected: String,
        found: String,
    },
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// tract could not parse, type or optimize the model.
    #[error("{file}: cannot load with tract: {message}")]
    Load { file: String, message: String },
    /// The model loads but its inputs/outputs are not the documented ones.
    #[error("{file}: unexpected interface: {message}")]
    Interface { file: String, message: String },
    /// `vocab.json` or `ocr_alphabet.json` is not what the code expects.
    #[error("{file}: {message}")]
    Metadata { file: String, message: String },
    /// This build has no bundled models (cargo feature `bundled-models` off): load them from a directory.
    #[error("models are not bundled in this build (cargo feature `bundled-models` is off)")]
    NotBundled,
}

/// Which of the four models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelKind {
    Cropper,
    Detector,
    Classifier,
    Ocr,
}

impl ModelKind {
    /// All four, in pipeline order.
    pub const ALL: [ModelKind; 4] = [
        ModelKind::Cropper,
        ModelKind::Detector,
        ModelKind::Classifier,
        ModelKind::Ocr,
    ];

    /// Short name, also the stage name in [`ScanError::Inference`].
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Cropper => "cropper",
            ModelKind::Detector => "detector",
            ModelKind::Classifier => "classifier",
            ModelKind::Ocr => "ocr",
        }
    }

    /// File name in a model directory: `models/<name>.onnx`, or `<name>.nnef.tar` in an NNEF build (module doc).
    pub fn file_name(self) -> &'static str {
        #[cfg(feature = "onnx")]
        let name = match self {
            ModelKind::Cropper => "cropper.onnx",
            ModelKind::Detector => "detector.onnx",
            ModelKind::Classifier => "classifier.onnx",
            ModelKind::Ocr => "ocr.onnx",
        };
        #[cfg(not(feature = "onnx"))]
        let name = match self {
            ModelKind::Cropper => "cropper.nnef.tar",
            ModelKind::Detector => "detector.nnef.tar",
            ModelKind::Classifier => "classifier.nnef.tar",
            ModelKind::Ocr => "ocr.nnef.tar",
        };
        name
    }

    /// Input shape without the batch dim (C, H, W).
    pub fn input_chw(self) -> [usize; 3] {
        match self {
            ModelKind::Cropper | ModelKind::Detector => [3, 512, 512],
            ModelKind::Classifier => [3, 96, 160],
            ModelKind::Ocr => [1, 48, 320], // = ocr_alphabet.json input
        }
    }

    /// Which sides of the input, `(height, width)`, [`Model::run_any_size`] takes at any multiple of
    /// [`HW_MULTIPLE`] up to the nominal one of [`ModelKind::input_chw`] (a side that is not variable must be the
    /// nominal one): both for the detector (fully convolutional, total stride 32), the width for the OCR
    /// (convolutions, then a recurrent layer over the columns: one time step per 4 columns). [`Model::run`] always
    /// takes the nominal size.
    pub fn variable_sides(self) -> (bool, bool) {
        match self {
            ModelKind::Detector => (true, true),
            ModelKind::Ocr => (false, true),
            ModelKind::Cropper | ModelKind::Classifier => (false, false),
        }
    }

    /// Whether [`Model::run`] takes any batch size `N ≥ 1`; otherwise the batch is 1.
    pub fn dynamic_batch(self) -> bool {
        matches!(self, ModelKind::Classifier | ModelKind::Ocr)
    }

    /// Output names, in the order [`Model::run`] returns them.
    pub fn output_names(self) -> &'static [&'static str] {
        match self {
            ModelKind::Cropper => &["proj_x", "proj_y", "margins"],
            ModelKind::Detector => &["heatmap", "size", "offset"],
            ModelKind::Classifier | ModelKind::Ocr => &["logits"],
        }
    }

    /// The manifest's SHA-256 for this model's file.
    pub fn expected_sha256(self) -> &'static str {
        MANIFEST
            .iter()
            .find(|(f, _)| *f == self.file_name())
            .map(|(_, h)| *h)
            // build.rs refuses to build without all four entries.
            .unwrap_or("")
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One optimized, runnable model. Cheap to clone (the plans are shared).
#[derive(Clone)]
pub struct Model {
    kind: ModelKind,
    plan: Arc<TypedRunnableModel>,
    sha256: String,
    /// For each of `kind.output_names()`, its index among the plan's outputs.
    output_order: Vec<usize>,
    /// Variable-size models only: the plans per input shape.
    shapes: Option<Arc<ShapePlans>>,
    /// The OCR only: its trunk and head apart ([`Model::run_padded`]).
    trunk: Option<Arc<TrunkSplit>>,
}

/// The OCR cut where its convolutional trunk ends ([`Model::run_padded`]).
struct TrunkSplit {
    /// The rest of the network (recurrent layers, classifier) on the trunk's output at the nominal width.
    head: Arc<TypedRunnableModel>,
    /// The trunk's output at the nominal width: `[1, C, 1, W/4]`.
    features: [usize; 4],
    /// The trunk alone, per input width.
    trunks: Mutex<PlanCache>,
    /// The head for batches of `n` crops, keyed by `(n, 0)`, 2 ≤ `n` ≤ [`HEAD_BATCH`].
    heads: Mutex<PlanCache>,
    /// Set when a batched head could not be built: every head then runs alone.
    unbatchable: AtomicBool,
}

/// One OCR input prepared by [`Model::run_padded_trunk`] for [`Model::run_padded_heads`].
pub struct PaddedTrunk(Prepared);

enum Prepared {
    /// The trunk's output widened to the nominal width: the head's input `[1, C, 1, W/4]`.
    Features(Tensor),
    /// The model's output, for an input the trunk alone does not serve.
    Done(Tensor),
}

/// Output columns at the right end of a trunk run taken as they are. The OCR trunk's output column `k` depends on
/// input columns `4k − 15 ..= 4k + 17`, so the last four of a run see its right border (the convolutions' zero
/// padding); the fifth is one to spare. The column before them sees only padding when the run's last 39 columns or
/// more are padding (`crate::read::MIN_TRIM_MARGIN`).
const BORDER_STEPS: usize = 5;

/// The outlet where the OCR's convolutional trunk ends, in its decluttered graph for an input `W` columns wide:
/// the last of the chain of 4-D tensors that starts at the input (each the only consumer of the one before),
/// when it is `[N, C, 1, W/4]` (columns kept apart from here on: the recurrent layers read one column per step),
/// `N` the graph's batch. `None` when the graph has no such chain.
fn trunk_cut(model: &TypedModel, batch: usize, steps: usize) -> Option<OutletId> {
    let input = *model.input_outlets().ok()?.first()?;
    let mut at = input;
    loop {
        let successors = model.outlet_successors(at);
        if successors.len() != 1 {
            break;
        }
        let node = model.node(successors[0].node);
        let next = OutletId::new(node.id, 0);
        let rank = model.outlet_fact(next).ok()?.rank();
        if node.outputs.len() != 1 || rank != 4 {
            break;
        }
        at = next;
    }
    let shape = model.outlet_fact(at).ok()?.shape.as_concrete()?.to_vec();
    (at != input && shape.len() == 4 && shape[0] == batch && shape[2] == 1 && shape[3] == steps)
        .then_some(at)
}

/// Splits the OCR's decluttered graph `typed` (input `[1, C, H, W]` of `chw`) at [`trunk_cut`]: the head on the
/// trunk's output at that width. `None` when the graph cannot be cut there.
fn trunk_split(mut typed: TypedModel, chw: [usize; 3]) -> TractResult<Option<TrunkSplit>> {
    let Some(cut) = trunk_cut(&typed, 1, chw[2] / 4) else {
        return Ok(None);
    };
    let shape = typed
        .outlet_fact(cut)?
        .shape
        .as_concrete()
        .map(<[usize]>::to_vec);
    let Some(&[n, c, h, w]) = shape.as_deref() else {
        return Ok(None);
    };
    // `compact` turns the node of an input outlet into a source and drops what only fed it.
    typed.set_input_outlets(&[cut])?;
    typed.compact()?;
    Ok(Some(TrunkSplit {
        head: finish(typed)?,
        features: [n, c, h, w],
        trunks: Mutex::new(PlanCache::default()),
        heads: Mutex::new(PlanCache::default()),
        unbatchable: AtomicBool::new(false),
    }))
}

/// `input` (`[1, C, H, W]`) padded on the right to `width` columns with each row's last value.
fn widened(input: &Tensor, width: usize) -> TractResult<Tensor> {
    let view = input.to_plain_array_view::<f32>()?;
    let &[n, c, h, w] = view.shape() else {
        tract_nnef::internal::bail!("input {:?} is not 4-D", view.shape());
    };
    let wide = tract_ndarray::Array4::from_shape_fn((n, c, h, width), |(a, b, y, x)| {
        view[[a, b, y, x.min(w - 1)]]
    });
    Ok(wide.into_tensor())
}

/// The OCR's trunk alone for the input `[1, C, H, W]`.
fn trunk_plan(model: Parsed, chw: [usize; 3]) -> TractResult<Arc<TypedRunnableModel>> {
    let mut typed = declutter(model, chw)?;
    let Some(cut) = trunk_cut(&typed, 1, chw[2] / 4) else {
        tract_nnef::internal::bail!("no trunk to cut at width {}", chw[2]);
    };
    typed.select_output_outlets(&[cut])?;
    typed.compact()?;
    finish(typed)
}

/// The OCR's head for a batch of `n` trunk outputs (the input `[n, C, H, W]` of `chw`).
fn head_plan(model: Parsed, n: usize, chw: [usize; 3]) -> TractResult<Arc<TypedRunnableModel>> {
    let mut typed = declutter_batch(model, n, chw)?;
    let Some(cut) = trunk_cut(&typed, n, chw[2] / 4) else {
        tract_nnef::internal::bail!("no trunk to cut at batch {n}");
    };
    typed.set_input_outlets(&[cut])?;
    typed.compact()?;
    finish(typed)
}

/// The plans of a variable-size model for input shapes `(H, W)` other than the nominal one ([`Model::plan`]).
struct ShapePlans {
    /// The parsed model before its input size is fixed.
    source: Parsed,
    cache: Mutex<PlanCache>,
    /// Plans of the graph with its spatial axes exchanged ([`Model::run_transposed`]), keyed by the untransposed
    /// input's `(H, W)`.
    transposed: Mutex<PlanCache>,
    /// Whether [`Model::run_transposed`] runs the transposed graph: not when tract lays the graph out channels
    /// last ([`lays_out_channels_last`]).
    transposes: bool,
}

/// Whether a decluttered graph has a convolution with its channels last. tract 0.23.9 moves the channels of a
/// float depthwise convolution of 16 channels or more last when the host has a vector kernel for that layout
/// (`tract_linalg::routines::depthwise_c_f32`: arm64 and WebAssembly, not x86-64), and the layout spreads through
/// the graph; on x86-64 every graph stays channels first.
fn lays_out_channels_last(model: &TypedModel) -> bool {
    use tract_nnef::tract_core::ops::cnn::Conv;
    model.nodes().iter().any(|node| {
        node.op_as::<Conv>()
            .is_some_and(|conv| conv.pool_spec.data_format.c_is_last())
    })
}

/// At most [`MAX_SHAPE_PLANS`] plans, least recently used dropped first.
#[derive(Default)]
struct PlanCache {
    plans: HashMap<(usize, usize), Arc<TypedRunnableModel>>,
    /// Use order, least recent first.
    order: VecDeque<(usize, usize)>,
}

impl PlanCache {
    fn get(&mut self, hw: (usize, usize)) -> Option<Arc<TypedRunnableModel>> {
        let plan = self.plans.get(&hw)?.clone();
        self.touch(hw);
        Some(plan)
    }

    fn insert(&mut self, hw: (usize, usize), plan: Arc<TypedRunnableModel>) {
        self.plans.insert(hw, plan);
        self.touch(hw);
        while self.order.len() > MAX_SHAPE_PLANS {
            if let Some(old) = self.order.pop_front() {
                self.plans.remove(&old);
            }
        }
    }

    fn touch(&mut self, hw: (usize, usize)) {
        self.order.retain(|&k| k != hw);
        self.order.push_back(hw);
    }
}

/// The plan for `hw` from `cache`, or built now and cached. Built outside the lock (tens of ms), so other shapes
/// keep running; two threads asking for the same new shape at once may both build it, and the first one stored
/// is kept.
fn cached_plan(
    cache: &Mutex<PlanCache>,
    hw: (usize, usize),
    build: impl FnOnce() -> Result<Arc<TypedRunnableModel>, ScanError>,
) -> Result<Arc<TypedRunnableModel>, ScanError> {
    let lock = || cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(plan) = lock().get(hw) {
        return Ok(plan);
    }
    let plan = build()?;
    let mut cache = lock();
    if let Some(first) = cache.get(hw) {
        return Ok(first);
    }
    cache.insert(hw, plan.clone());
    Ok(plan)
}

/// Marks the upper halves of the vector registers unused (`vzeroupper`) on x86-64 CPUs with AVX; elsewhere
/// nothing. tract's AVX-512 matrix kernels return without doing so, and until something does, the C library's
/// math functions (`exp`, `expf`, `atan2`, … all over the post-processing) run about 25–30× slower on this
/// project's x86 machines: 174 ns an `exp` after an OCR run instead of 6 (`cargo run --release --example
/// libm_after_model`, `BENCHMARKS.md`, session 38). [`Model`] calls it on the running thread after every plan
/// run (`run_plan`), whether the run succeeded or not; values are unaffected (no code keeps those register
/// halves live across a call).
#[inline]
pub fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked just above), which is all `vzeroupper` needs.
        unsafe { zero_upper_avx() }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn zero_upper_avx() {
    std::arch::x86_64::_mm256_zeroupper();
}

/// Runs `plan` on `inputs` (a fresh state), then [`clear_upper_vector_state`]; errors are `stage`'s.
fn run_plan(
    plan: &Arc<TypedRunnableModel>,
    inputs: TVec<TValue>,
    stage: &'static str,
) -> Result<TVec<TValue>, ScanError> {
    let outputs = plan.run(inputs);
    clear_upper_vector_state();
    outputs.map_err(|e| ScanError::inference(stage, e))
}

/// A parsed model whose input size is not fixed yet: ONNX as parsed, or an NNEF graph whose variable sides are
/// `32·h` and `32·w` (`netron-ocr-convert`).
#[cfg(feature = "onnx")]
type Parsed = InferenceModel;
#[cfg(not(feature = "onnx"))]
type Parsed = TypedModel;

#[cfg(feature = "onnx")]
fn parse(bytes: &[u8]) -> TractResult<Parsed> {
    tract_onnx::onnx().model_for_read(&mut &bytes[..])
}

#[cfg(not(feature = "onnx"))]
fn parse(bytes: &[u8]) -> TractResult<Parsed> {
    // Building the reader parses NNEF's standard library of fragments: once per process.
    static NNEF: std::sync::OnceLock<tract_nnef::framework::Nnef> = std::sync::OnceLock::new();
    NNEF.get_or_init(tract_nnef::nnef)
        .model_for_read(&mut &bytes[..])
}

/// Optimizes `model` for the concrete input `[1, C, H, W]`.
fn optimize(model: Parsed, chw: [usize; 3]) -> TractResult<Arc<TypedRunnableModel>> {
    finish(declutter(model, chw)?)
}

/// The decluttered typed graph of `model` for the concrete input `[1, C, H, W]`.
fn declutter(model: Parsed, chw: [usize; 3]) -> TractResult<TypedModel> {
    declutter_batch(model, 1, chw)
}

/// The decluttered typed graph of `model` for the concrete input `[N, C, H, W]`, `N` = `batch`.
#[cfg(feature = "onnx")]
fn declutter_batch(model: Parsed, batch: usize, chw: [usize; 3]) -> TractResult<TypedModel> {
    let [c, h, w] = chw;
    model
        .with_input_fact(0, f32::fact([batch, c, h, w]).into())?
        .into_typed()?
        .into_decluttered()
}

/// Our rewrites and tract's codegen on a decluttered graph.
fn finish(mut typed: TypedModel) -> TractResult<Arc<TypedRunnableModel>> {
    upsample_copying_deconvs(&mut typed)?;
    conv_lowerings(&mut typed)?;
    split_square_max_pools(&mut typed)?;
    unstride_depthwise_columns(&mut typed)?;
    typed.optimize()?;
    typed.into_runnable()
}

/// The decluttered typed graph of `model` for the concrete input `[N, C, H, W]`, `N` = `batch` (more than one
/// only for a graph whose batch is the symbol `N`: the OCR's, `netron-ocr-convert`'s `SYMBOL_BATCH`).
#[cfg(not(feature = "onnx"))]
fn declutter_batch(model: Parsed, batch: usize, chw: [usize; 3]) -> TractResult<TypedModel> {
    let [c, h, w] = chw;
    let mut subs = HashMap::new();
    // The symbols `netron-ocr-convert` writes (its `SYMBOLS_HW` and `SYMBOL_BATCH`): H = 32·h, W = 32·w, N.
    for (name, value) in [("h", h / HW_MULTIPLE), ("w", w / HW_MULTIPLE), ("N", batch)] {
        if let Some(symbol) = model.symbols.get(name) {
            subs.insert(symbol, TDim::from(value as i64));
        }
    }
    let model = if subs.is_empty() {
        model
    } else {
        model.set_symbols(&subs)?
    };
    let want: TVec<TDim> = tvec![batch.into(), c.into(), h.into(), w.into()];
    let input = model.input_fact(0)?;
    if input.shape.to_tvec() != want {
        tract_nnef::internal::bail!("input fact {input:?} is not [{batch}, {c}, {h}, {w}]");
    }
    model.into_decluttered()
}

/// Replaces each transposed convolution that only copies pixels by tract's nearest upsampling: a depthwise
/// `Deconv` (group = channels, NCHW) whose kernel equals its stride on every axis (no padding, dilation or
/// adjustment, so each output pixel gets exactly one tap), with a constant kernel of ones and a zero bias. That is
/// how the detector's FPN upsamples ×2 (`detector.MODEL.md`: a `ConvTranspose` so that tract can write it to NNEF
/// with symbolic sizes), and tract runs it about 5× slower as a deconvolution than as an upsampling (per 512²
/// tile, 7.3 against 1.4 ms: `tract … dump --profile`, BENCHMARKS.md). The values are the same: `x · 1 + 0`.
fn upsample_copying_deconvs(model: &mut TypedModel) -> TractResult<()> {
    let mut patches = Vec::new();
    for node in model.nodes() {
        let Some(op) = node.op_as::<Deconv>() else {
            continue;
        };
        let spec = &op.pool_spec;
        let strides = spec.strides();
        let copies = spec.data_format == DataFormat::NCHW
            && op.group == spec.input_channels
            && op.group == spec.output_channels
            && node.inputs.len() == 3
            && (0..spec.rank()).all(|ax| {
                spec.kernel_shape[ax] == strides[ax]
                    && spec.dilations()[ax] == 1
                    && op.adjustments[ax] == 0
                    && spec.padding.valid_dim(ax, false)
            });
        if !copies {
            continue;
        }
        let konst = |ix: usize| {
            model
                .outlet_fact(node.inputs[ix])
                .ok()
                .and_then(|f| f.konst.clone())
        };
        let (Some(kernel), Some(bias)) = (konst(1), konst(2)) else {
            continue;
        };
        let taps: usize = spec.kernel_shape.iter().product();
        let all = |t: &Tensor, v: f32| {
            t.to_plain_array_view::<f32>()
                .is_ok_and(|a| a.iter().all(|&x| x == v))
        };
        if kernel.len() != op.group * taps || !all(&kernel, 1.0) || !all(&bias, 0.0) {
            continue;
        }
        let scales = [1, 1].into_iter().chain(strides.iter().copied()).collect();
        patches.push(TypedModelPatch::replace_single_op(
            model,
            node,
            &node.inputs[..1],
            NearestUpsample { scales },
        )?);
    }
    for patch in patches {
        patch.apply(model)?;
    }
    Ok(())
}

/// Most inputs per output point (input channels × kernel taps) of a convolution that tract may run as its
/// `DirectSpatialConv` (tract itself takes up to 576), and most for which `conv_lowerings` (below) replaces tract's
/// lazy im2col by an eager one. Measured on this project's models (tract 0.23.9, one core, thread CPU per node,
/// `core/examples/op_profile.rs`, session 43): the direct convolution wins on the stems, 9 and 27 inputs (OCR
/// 0.05 against 0.16 ms, detector 1.5 against 6.2 ms at 288 × 512), and loses from 144 up (the OCR's second
/// convolution 0.94 against 0.63 ms at 320 columns, the cropper's head convolutions 0.68 against 0.26 ms for
/// the four); where a stem cannot run directly (an output row under 128 points), the eager im2col beats the lazy
/// one (classifier 0.55 against 0.25 ms, detector at 160 × 224 0.88 against 0.46 ms), and from 144 inputs up it
/// loses to it (OCR 4.3 against 4.9 ms a run).
pub const SMALL_CONV_INPUTS: usize = 64;

/// Lowers the group-1 float convolutions whose best lowering, on this project's models, is not tract's own
/// choice ([`SMALL_CONV_INPUTS`]), before the codegen of the rest of the graph: one with more inputs per output
/// point the way tract's codegen does with its direct spatial convolution switched off (the knob that switches
/// it off applies to a whole optimization; this makes it one node's choice), and one with fewer that tract would
/// not run directly as an eager im2col and a matrix product. The same function, other rounding.
fn conv_lowerings(model: &mut TypedModel) -> TractResult<()> {
    let no_direct = KnobScope::new([("TRACT_DISABLE_DIRECT_SPATIAL", "true")])?;
    for id in model.eval_order()? {
        let node = &model.nodes()[id];
        let Some(conv) = node.op_as::<Conv>() else {
            continue;
        };
        let taps: usize = conv.pool_spec.kernel_shape.iter().product();
        if conv.group != 1 || conv.q_params.is_some() || taps < 2 {
            continue;
        }
        let patch = if conv.input_channels() * taps > SMALL_CONV_INPUTS {
            no_direct.enter(|| conv.codegen(model, node))?
        } else {
            let own = conv.codegen(model, node)?;
            let direct =
                |p: &TypedModelPatch| p.nodes().iter().any(|n| n.op_is::<DirectSpatialConv>());
            // tract's own lowering, when it runs directly, is applied now rather than computed again by the
            // optimization below.
            if own.as_ref().is_none_or(direct) {
                own
            } else {
                eager_im2col(model, node, conv)?
            }
        };
        if let Some(patch) = patch {
            patch.apply(model)?;
        }
    }
    Ok(())
}

/// `node`'s convolution `conv` as an eager im2col and a matrix product (`Conv::wire_as_im2col_pair`).
fn eager_im2col(
    model: &TypedModel,
    node: &TypedNode,
    conv: &Conv,
) -> TractResult<Option<TypedModelPatch>> {
    let mut patch = TypedModelPatch::new("eager-im2col");
    let inputs = patch.taps(model, &node.inputs)?;
    // SAFETY: the inputs are this convolution's own (image, kernel, bias), as tract's codegen passes them.
    let wire = unsafe { conv.wire_as_im2col_pair(&mut patch, &node.name, &inputs)? };
    patch.shunt_outside(model, OutletId::new(node.id, 0), wire[0])?;
    patch.obliterate(node.id)?;
    Ok(Some(patch))
}

/// Splits every unpadded 2 × 2, stride-2 max pool (the OCR's first) into a 2 × 1 pool over rows and a 1 × 2 pool
/// over columns, each stride 2 along its axis: the same maximum of the same four values, so the same outputs bit
/// for bit. tract 0.23.9's 2 × 2 pool vectorises along W only at stride 1; split, the row pool runs along
/// contiguous rows and the column pool on half the data. Measured on the OCR (`core/examples/op_profile.rs`, one
/// core, six alternating runs, session 43): the pool 0.21 → 0.10 ms, the whole run 3.43 → 3.30 ms at 320 columns
/// and 2.41 → 2.29 ms at 224.
fn split_square_max_pools(model: &mut TypedModel) -> TractResult<()> {
    for id in model.eval_order()? {
        let node = &model.nodes()[id];
        let Some(pool) = node.op_as::<MaxPool>() else {
            continue;
        };
        let spec = &pool.pool_spec;
        let unpadded = match &spec.padding {
            PaddingSpec::Valid => true,
            PaddingSpec::Explicit(before, after)
            | PaddingSpec::ExplicitOnnxPool(before, after, false) => {
                before.iter().chain(after).all(|&p| p == 0)
            }
            _ => false,
        };
        let square = spec.data_format == DataFormat::NCHW
            && spec.kernel_shape[..] == [2, 2]
            && spec.strides()[..] == [2, 2]
            && spec.dilations().iter().all(|&d| d == 1);
        if !unpadded || !square || pool.with_index_outputs.is_some() {
            continue;
        }
        let half = |kernel: [usize; 2]| {
            let mut half = pool.clone();
            half.pool_spec.kernel_shape = kernel.into_iter().collect();
            half.pool_spec.strides = Some(kernel.into_iter().collect());
            half.pool_spec.padding = PaddingSpec::Valid;
            half
        };
        let mut patch = TypedModelPatch::new("split-max-pool");
        let x = patch.tap_model(model, node.inputs[0])?;
        let rows = patch.wire_node(format!("{}.rows", node.name), half([2, 1]), &[x])?;
        let cols = patch.wire_node(format!("{}.cols", node.name), half([1, 2]), &rows)?;
        patch.shunt_outside(model, OutletId::new(id, 0), cols[0])?;
        patch.obliterate(id)?;
        patch.apply(model)?;
    }
    Ok(())
}

/// Runs each depthwise convolution that strides along W at stride 1 along W, then keeps every `s`-th column
/// ([`keep_columns::KeepColumns`]): the same sum of the same products in the same order for every column kept, so
/// the same outputs bit for bit on x86-64. On arm64 tract's vector and scalar paths round differently, so the
/// outputs agree there up to float rounding, and tract moves the depthwise convolutions of 16 channels or more
/// channels last, which this rewrite leaves alone. tract 0.23.9 vectorises a depthwise convolution's inner loop
/// (along W) only where its input stride is 1; at stride 2 each output is a scalar sum of its taps. Computing
/// every column and dropping half costs twice the products but runs them eight to a vector. Only explicit
/// padding is taken (a `Same` padding would change with the stride), and the rewrite is kept only where it gives
/// the convolution's output shape. Measured per model in `BENCHMARKS.md` (session 44).
fn unstride_depthwise_columns(model: &mut TypedModel) -> TractResult<()> {
    for id in model.eval_order()? {
        let node = &model.nodes()[id];
        let Some(conv) = node.op_as::<Conv>() else {
            continue;
        };
        let spec = &conv.pool_spec;
        let float = model.outlet_fact(node.inputs[0])?.datum_type == f32::datum_type();
        let depthwise = float
            && conv.group > 1
            && conv.group == spec.input_channels
            && conv.group == spec.output_channels
            && conv.q_params.is_none();
        let explicit = matches!(spec.padding, PaddingSpec::Valid | PaddingSpec::Explicit(..));
        let strides = spec.strides();
        if !depthwise
            || !explicit
            || !matches!(spec.data_format, DataFormat::NCHW | DataFormat::CHW)
            || spec.rank() != 2
            || strides[1] < 2
            || spec.dilations()[1] != 1
        {
            continue;
        }
        let mut unstrided = conv.clone();
        unstrided.pool_spec.strides = Some(tvec![strides[0], 1]);
        let mut patch = TypedModelPatch::new("unstride-depthwise-columns");
        let inputs = patch.taps(model, &node.inputs)?;
        let all = patch.wire_node(format!("{}.all_columns", node.name), unstrided, &inputs)?;
        let stride = strides[1];
        let kept = patch.wire_node(
            format!("{}.kept_columns", node.name),
            keep_columns::KeepColumns { stride },
            &all,
        )?;
        if patch.outlet_fact(kept[0])?.shape != model.outlet_fact(OutletId::new(id, 0))?.shape {
            continue;
        }
        patch.shunt_outside(model, OutletId::new(id, 0), kept[0])?;
        patch.obliterate(id)?;
        patch.apply(model)?;
    }
    Ok(())
}

/// [`keep_columns::KeepColumns`]: every `stride`-th column of a tensor.
mod keep_columns {
    use tract_nnef::internal::*;

    /// Every `stride`-th column (the first, then every `stride`-th after it) of a float tensor: `[…, W]` →
    /// `[…, ceil(W / stride)]`. tract's `Downsample` does the same for any axis, element by element through ndarray,
    /// and took about a quarter of the time the depthwise convolutions saved (`unstride_depthwise_columns`).
    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    pub(crate) struct KeepColumns {
        pub(crate) stride: usize,
    }

    impl Op for KeepColumns {
        fn name(&self) -> StaticName {
            "KeepColumns".into()
        }

        fn info(&self) -> TractResult<Vec<String>> {
            Ok(vec![format!("stride: {}", self.stride)])
        }

        op_as_typed_op!();
    }

    impl EvalOp for KeepColumns {
        fn eval_out_of_plan(&self, inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
            Ok(Some(self.eval(&EvalContext::out_of_plan(), inputs)?))
        }

        fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
            let input = args_1!(inputs);
            let mut shape: TVec<usize> = input.shape().into();
            let Some(w) = shape.last_mut() else {
                bail!("KeepColumns on a scalar");
            };
            let (from, to) = (*w, w.div_ceil(self.stride));
            *w = to;
            let plain = input.try_as_plain_ram()?;
            let src = plain.as_slice::<f32>()?;
            if to == 0 {
                return Ok(tvec!(Tensor::zero::<f32>(&shape)?.into_tvalue()));
            }
            // SAFETY: every element is written below: `to` per row, for every row.
            let mut out = unsafe { Tensor::uninitialized::<f32>(&shape)? };
            let mut plain = out.try_as_plain_ram_mut()?;
            let kept_rows = plain.as_slice_mut::<f32>()?.chunks_exact_mut(to);
            for (kept, row) in kept_rows.zip(src.chunks_exact(from)) {
                for (x, v) in kept.iter_mut().enumerate() {
                    *v = row[x * self.stride];
                }
            }
            Ok(tvec!(out.into_tvalue()))
        }
    }

    impl TypedOp for KeepColumns {
        fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
            ensure!(
                self.stride > 0
                    && inputs[0].datum_type == f32::datum_type()
                    && inputs[0].rank() > 0
            );
            let mut fact = inputs[0].without_value();
            let w = fact.shape.len() - 1;
            let to = fact.shape[w].clone().div_ceil(self.stride as u64);
            fact.shape.set(w, to);
            Ok(tvec!(fact))
        }

        as_op!();
    }
}

/// `model`, a decluttered NCHW graph for the input `[1, C, H, W]`, rebuilt for the input `[1, C, W, H]` so that
/// it computes the same function of the transposed image: `transposed_hw(M)(xᵀ) = M(x)ᵀ`, where `ᵀ` exchanges the
/// two spatial axes of every tensor. Every convolution and transposed convolution keeps its op with its kernel's
/// spatial axes exchanged and its kernel shape, strides, dilations, padding and adjustments swapped; element-wise
/// ops, broadcasting binary ops and the einsums that carry the spatial axes through untouched (tract's 1 × 1
/// convolutions) are kept as they are. Any other op, a layout other than channels first (NCHW, or CHW once
/// tract has dropped the batch axis), or a constant that would broadcast over the image (and is no kernel, bias or
/// such einsum operand) is an error: the rewrite would change the function.
///
/// Why: tract 0.23's depthwise convolution walks the longest axis of each output zone in its inner loop, and only
/// an inner loop along W (stride 1) reaches its vector kernel; on a taller-than-wide input the whole zone takes the
/// scalar path (`BENCHMARKS.md`, session 42). Run on the transposed input, the same detector keeps the vector path.
fn transposed_hw(model: &TypedModel) -> TractResult<TypedModel> {
    use tract_nnef::tract_core::ops::binary::TypedBinOp;
    use tract_nnef::tract_core::ops::change_axes::InOut;
    use tract_nnef::tract_core::ops::cnn::conv::KernelFormat;
    use tract_nnef::tract_core::ops::cnn::{Conv, PaddingSpec, PoolSpec};
    use tract_nnef::tract_core::ops::einsum::EinSum;
    use tract_nnef::tract_core::ops::element_wise::ElementWiseOp;
    use tract_nnef::tract_core::ops::konst::Const;
    use tract_nnef::tract_core::ops::source::TypedSource;

    fn swap_spec(spec: &PoolSpec) -> TractResult<PoolSpec> {
        // Channels first, with or without the batch axis: the spatial axes are the last two.
        let chw = matches!(spec.data_format, DataFormat::NCHW | DataFormat::CHW);
        if !chw || spec.kernel_shape.len() != 2 {
            tract_nnef::internal::bail!("not a 2-D channels-first convolution: {spec:?}");
        }
        let swap = |v: &TVec<usize>| -> TVec<usize> { v.iter().rev().copied().collect() };
        let padding = match &spec.padding {
            PaddingSpec::Explicit(before, after) => {
                PaddingSpec::Explicit(swap(before), swap(after))
            }
            PaddingSpec::ExplicitOnnxPool(before, after, ceil) => {
                PaddingSpec::ExplicitOnnxPool(swap(before), swap(after), *ceil)
            }
            other => other.clone(),
        };
        Ok(PoolSpec {
            kernel_shape: swap(&spec.kernel_shape),
            padding,
            dilations: spec.dilations.as_ref().map(swap),
            strides: spec.strides.as_ref().map(swap),
            ..spec.clone()
        })
    }
    fn kernel_hw(format: &KernelFormat) -> (usize, usize) {
        match format {
            KernelFormat::OIHW => (2, 3),
            KernelFormat::HWIO => (0, 1),
            KernelFormat::OHWI => (1, 2),
        }
    }

    // The kernel's spatial axes of every constant read as a convolution's kernel (slot 1).
    let mut kernels: Vec<(OutletId, (usize, usize))> = Vec::new();
    // The constant operands of the einsums that carry the image's spatial axes (the last two) through untouched,
    // tract's form of a 1 × 1 convolution (`IHW,OI->OHW`): they share no axis with those.
    let mut einsum_operands: Vec<InletId> = Vec::new();
    for node in model.nodes() {
        if let Some(einsum) = node.op_as::<EinSum>() {
            let varying: Vec<usize> = (0..node.inputs.len())
                .filter(|&slot| {
                    model
                        .outlet_fact(node.inputs[slot])
                        .is_ok_and(|f| f.konst.is_none())
                })
                .collect();
            let carried = |slot: usize| {
                let rank = einsum.axes.rank(InOut::In(slot));
                rank >= 3
                    && (rank - 2..rank).all(|ax| {
                        einsum.axes.axis((InOut::In(slot), ax)).is_ok_and(|axis| {
                            axis.outputs.len() == 1
                                && axis.outputs[0].len() == 1
                                && axis
                                    .inputs
                                    .iter()
                                    .enumerate()
                                    .all(|(i, at)| i == slot || at.is_empty())
                        })
                    })
            };
            match varying[..] {
                [slot] if carried(slot) => einsum_operands.extend(
                    (0..node.inputs.len())
                        .filter(|&i| i != slot)
                        .map(|i| InletId::new(node.id, i)),
                ),
                _ => tract_nnef::internal::bail!(
                    "{}: an einsum that mixes the spatial axes ({} on {varying:?})",
                    node.name,
                    einsum.axes
                ),
            }
            continue;
        }
        let hw = match (node.op_as::<Conv>(), node.op_as::<Deconv>()) {
            (Some(conv), _) => kernel_hw(&conv.kernel_fmt),
            (_, Some(deconv)) => kernel_hw(&deconv.kernel_format),
            _ => continue,
        };
        let Some(&kernel) = node.inputs.get(1) else {
            tract_nnef::internal::bail!("{}: a convolution without a kernel input", node.name);
        };
        kernels.push((kernel, hw));
    }
    let is_conv = |inlet: &InletId| {
        let node = model.node(inlet.node);
        node.op_is::<Conv>() || node.op_is::<Deconv>()
    };

    let mut out = TypedModel::default();
    // The new outlets of each old node, by node id.
    let mut map: Vec<TVec<OutletId>> = vec![tvec!(); model.nodes().len()];
    let mapped = |map: &[TVec<OutletId>], o: &OutletId| {
        map.get(o.node)
            .and_then(|outlets| outlets.get(o.slot))
            .copied()
            .ok_or_else(|| tract_nnef::internal::format_err!("node {} is not wired yet", o.node))
    };
    for id in model.eval_order()? {
        let node = model.node(id);
        let inputs: TVec<OutletId> = node
            .inputs
            .iter()
            .map(|i| mapped(&map, i))
            .collect::<TractResult<_>>()?;
        let wired: TVec<OutletId> = if let Some(source) = node.op_as::<TypedSource>() {
            let mut dims: TVec<TDim> = source.fact.shape.to_tvec();
            if dims.len() != 4 {
                tract_nnef::internal::bail!(
                    "{}: input of rank {}, expected 4",
                    node.name,
                    dims.len()
                );
            }
            dims.swap(2, 3);
            let fact = TypedFact::dt_shape(source.fact.datum_type, dims);
            tvec!(out.add_source(&node.name, fact)?)
        } else if node.op_is::<Const>() {
            let outlet = OutletId::new(id, 0);
            let value = model.outlet_fact(outlet)?.konst.clone().ok_or_else(|| {
                tract_nnef::internal::format_err!("{}: constant without a value", node.name)
            })?;
            let uses = model.outlet_successors(outlet);
            let kernel = kernels
                .iter()
                .find(|(k, _)| *k == outlet)
                .map(|(_, hw)| *hw);
            let value = if let Some((h, w)) = kernel {
                if !uses.iter().all(|u| is_conv(u) && u.slot == 1) {
                    tract_nnef::internal::bail!(
                        "{}: a kernel also read as something else",
                        node.name
                    );
                }
                let mut axes: Vec<usize> = (0..value.rank()).collect();
                axes.swap(h, w);
                value.into_tensor().permute_axes(&axes)?.into_arc_tensor()
            } else {
                // Broadcast against a tensor whose last two axes are the spatial ones: only extents of 1 there
                // broadcast the same way after the exchange. A convolution's bias (slot 2) and an einsum operand
                // checked above do not broadcast over the image.
                let rank = value.rank();
                let spatial = value.shape()[rank.saturating_sub(2)..]
                    .iter()
                    .any(|&d| d != 1);
                let harmless =
                    |u: &InletId| (is_conv(u) && u.slot == 2) || einsum_operands.contains(u);
                if spatial && !uses.iter().all(harmless) {
                    tract_nnef::internal::bail!(
                        "{}: a constant of shape {:?} would not broadcast the same way",
                        node.name,
                        value.shape()
                    );
                }
                value
            };
            tvec!(out.add_const(&node.name, value)?)
        } else {
            let op: Box<dyn TypedOp> = if let Some(conv) = node.op_as::<Conv>() {
                Box::new(Conv {
                    pool_spec: swap_spec(&conv.pool_spec)?,
                    ..conv.clone()
                })
            } else if let Some(deconv) = node.op_as::<Deconv>() {
                Box::new(Deconv {
                    pool_spec: swap_spec(&deconv.pool_spec)?,
                    adjustments: deconv.adjustments.iter().rev().copied().collect(),
                    ..deconv.clone()
                })
            } else if node.op_is::<TypedBinOp>()
                || node.op_is::<ElementWiseOp>()
                || node.op_is::<EinSum>()
            {
                node.op.clone()
            } else {
                tract_nnef::internal::bail!(
                    "{}: op {} is not known to commute with a transposition",
                    node.name,
                    node.op.name()
                );
            };
            out.wire_node(&node.name, op, &inputs)?
        };
        map[id] = wired;
    }
    let outputs: Vec<OutletId> = model
        .output_outlets()?
        .iter()
        .map(|o| mapped(&map, o))
        .collect::<TractResult<_>>()?;
    out.select_output_outlets(&outputs)?;
    for (old, new) in model.output_outlets()?.iter().zip(&outputs) {
        if let Some(label) = model.outlet_label(*old) {
            out.set_outlet_label(*new, label.to_owned())?;
        }
    }
    Ok(out)
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("kind", &self.kind)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Loads `kind` from model bytes (module doc: ONNX or NNEF) after checking them against the manifest.
    pub fn from_bytes(kind: ModelKind, bytes: &[u8]) -> Result<Model, ModelError> {
        let found = sha256_hex(bytes);
        let expected = kind.expected_sha256();
        if found != expected {
            return Err(ModelError::HashMismatch {
                file: kind.file_name().to_owned(),
                expected: expected.to_owned(),
                found,
            });
        }
        Self::build(kind, bytes, found)
    }

    /// Loads `kind` from model bytes **without** the manifest check: for trying a fresh export before its
    /// hash line is updated. Production code uses [`Model::from_bytes`].
    pub fn from_bytes_unverified(kind: ModelKind, bytes: &[u8]) -> Result<Model, ModelError> {
        Self::build(kind, bytes, sha256_hex(bytes))
    }

    fn build(kind: ModelKind, bytes: &[u8], sha256: String) -> Result<Model, ModelError> {
        let file = kind.file_name();
        let load = |e: TractError| ModelError::Load {
            file: file.to_owned(),
            message: format!("{e:#}"),
        };
        let interface = |message: String| ModelError::Interface {
            file: file.to_owned(),
            message,
        };
        // tract's ONNX loader ignores declared output shapes by default, so the detector's (`H/4`, `W/4`) are never
        // unified with the concrete input fact of each plan.
        let model = parse(bytes).map_err(load)?;
        if model.input_outlets().map_err(load)?.len() != 1 {
            return Err(interface("expected exactly one input".into()));
        }

        let names: Vec<String> = model
            .output_outlets()
            .map_err(load)?
            .iter()
            .map(|o| {
                model
                    .outlet_label(*o)
                    .map(str::to_owned)
                    .unwrap_or_else(|| model.node(o.node).name.clone())
            })
            .collect();
        let output_order =
            kind.output_names()
                .iter()
                .map(|want| {
                    names.iter().position(|n| n == want).ok_or_else(|| {
                        interface(format!("no output {want:?} (outputs: {names:?})"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;

        // Batch 1 for every model, also the dynamic-batch ones (see the module doc: tract runs a plan with a
        // symbolic batch several times slower per item).
        let chw = kind.input_chw();
        let source = (kind.variable_sides() != (false, false)).then(|| model.clone());
        let typed = declutter(model, chw).map_err(load)?;
        let shapes = source.map(|source| {
            Arc::new(ShapePlans {
                source,
                cache: Mutex::new(PlanCache::default()),
                transposed: Mutex::new(PlanCache::default()),
                transposes: !lays_out_channels_last(&typed),
            })
        });
        let trunk = match kind {
            ModelKind::Ocr => trunk_split(typed.clone(), chw).map_err(load)?.map(Arc::new),
            _ => None,
        };
        let plan = finish(typed).map_err(load)?;
        Ok(Model {
            kind,
            plan,
            sha256,
            output_order,
            shapes,
            trunk,
        })
    }

    /// Loads `kind` from `dir/<file name>`, checked against the manifest.
    pub fn from_dir(kind: ModelKind, dir: &Path) -> Result<Model, ModelError> {
        let path = dir.join(kind.file_name());
        let bytes = std::fs::read(&path).map_err(|source| ModelError::Io { path, source })?;
        Model::from_bytes(kind, &bytes)
    }

    /// Which model this is.
    pub fn kind(&self) -> ModelKind {
        self.kind
    }

    /// SHA-256 of the loaded bytes (lowercase hex).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The shared tract plan, optimized for an input of batch 1 and the nominal size (`[1, C, H, W]` of
    /// [`ModelKind::input_chw`]).
    pub fn plan(&self) -> &Arc<TypedRunnableModel> {
        &self.plan
    }

    /// The plan for the input `[1, C, h, w]` of a variable-size model: [`Model::plan`] for the nominal size, else
    /// from the cache, or optimized now and cached (see the module doc). A size that is not a multiple of
    /// [`HW_MULTIPLE`] in `1..=` the nominal one, or a fixed-size model, is [`ScanError::Inference`].
    pub fn plan_for(&self, h: usize, w: usize) -> Result<Arc<TypedRunnableModel>, ScanError> {
        let shapes = self.variable_shapes(h, w)?;
        let [c, hmax, wmax] = self.kind.input_chw();
        let stage = self.kind.name();
        if (h, w) == (hmax, wmax) {
            return Ok(self.plan.clone());
        }
        cached_plan(&shapes.cache, (h, w), || {
            optimize(shapes.source.clone(), [c, h, w]).map_err(|e| ScanError::inference(stage, e))
        })
    }

    /// The plans of a variable-size model if it takes the input `[1, C, h, w]` ([`Model::plan_for`]), else
    /// [`ScanError::Inference`].
    fn variable_shapes(&self, h: usize, w: usize) -> Result<&Arc<ShapePlans>, ScanError> {
        let stage = self.kind.name();
        let [c, hmax, wmax] = self.kind.input_chw();
        let Some(shapes) = &self.shapes else {
            return Err(ScanError::Inference {
                stage,
                message: format!(
                    "this model takes only [1, {c}, {hmax}, {wmax}], not a {h}x{w} input"
                ),
            });
        };
        let (vh, vw) = self.kind.variable_sides();
        let fits = |v: usize, max: usize, variable: bool| {
            v == max || (variable && v > 0 && v < max && v.is_multiple_of(HW_MULTIPLE))
        };
        if !fits(h, hmax, vh) || !fits(w, wmax, vw) {
            let side = |max: usize, variable: bool| match variable {
                true => format!("a multiple of {HW_MULTIPLE} up to {max}"),
                false => format!("{max}"),
            };
            return Err(ScanError::Inference {
                stage,
                message: format!(
                    "input size {h}x{w}: the height must be {}, the width {}",
                    side(hmax, vh),
                    side(wmax, vw)
                ),
            });
        }
        Ok(shapes)
    }

    /// The input shapes `(H, W)` with a cached plan besides the nominal one, least recently used first (empty for
    /// a fixed-size model).
    pub fn cached_shapes(&self) -> Vec<(usize, usize)> {
        self.shapes
            .as_ref()
            .map(|s| {
                let cache = s.cache.lock().unwrap_or_else(PoisonError::into_inner);
                cache.order.iter().copied().collect()
            })
            .unwrap_or_default()
    }

    /// Runs a variable-size model ([`ModelKind::variable_sides`]: the detector, the OCR) on one input
    /// `[1, C, H, W]` whose variable sides are multiples of [`HW_MULTIPLE`] up to the nominal size, on the plan for
    /// that shape ([`Model::plan_for`]). Returns the outputs in the order of [`ModelKind::output_names`] (the
    /// detector's at `[1, ·, H/4, W/4]`, the OCR's at `[1, W/4, classes]`). Any other shape, a fixed-size model or
    /// a tract failure is [`ScanError::Inference`] naming the model.
    pub fn run_any_size(&self, input: Tensor) -> Result<Vec<Tensor>, ScanError> {
        let (h, w) = self.input_hw(&input)?;
        self.run_on(&self.plan_for(h, w)?, input)
    }

    /// `(H, W)` of an input `[1, C, H, W]` with this model's C, else [`ScanError::Inference`].
    fn input_hw(&self, input: &Tensor) -> Result<(usize, usize), ScanError> {
        let c = self.kind.input_chw()[0];
        match *input.shape() {
            [1, ch, h, w] if ch == c => Ok((h, w)),
            ref shape => Err(ScanError::Inference {
                stage: self.kind.name(),
                message: format!("input shape {shape:?}, expected [1, {c}, H, W]"),
            }),
        }
    }

    /// [`Model::run_any_size`] for the detector, through the graph with its spatial axes exchanged
    /// (`transposed_hw`): the input `[1, C, H, W]` is transposed to `[1, C, W, H]`, run on that graph (optimized
    /// for that shape and cached like [`Model::plan_for`]'s plans), and every output transposed back to
    /// `[1, ·, H/4, W/4]`. The outputs equal [`Model::run_any_size`]'s up to float rounding (the depthwise
    /// convolutions add their taps in another order; `core/tests/detect_input_sizes.rs`). Worth it when `H > W`:
    /// tract then runs the depthwise convolutions on its vector path (`transposed_hw`). The same sizes as
    /// [`Model::run_any_size`]; a model whose sides are not both variable is [`ScanError::Inference`].
    ///
    /// Where tract lays the graph out channels last (arm64: [`Model::runs_transposed`] is false), its depthwise
    /// convolutions run along the channels whatever the shape, nothing would be gained, and this is
    /// [`Model::run_any_size`].
    pub fn run_transposed(&self, input: Tensor) -> Result<Vec<Tensor>, ScanError> {
        let stage = self.kind.name();
        let [c, _, _] = self.kind.input_chw();
        let (h, w) = self.input_hw(&input)?;
        let shapes = self.variable_shapes(h, w)?;
        if self.kind.variable_sides() != (true, true) {
            return Err(ScanError::Inference {
                stage,
                message: "only a model with variable height and width runs transposed".into(),
            });
        }
        if !shapes.transposes {
            return self.run_any_size(input);
        }
        let plan = cached_plan(&shapes.transposed, (h, w), || {
            declutter(shapes.source.clone(), [c, h, w])
                .and_then(|typed| transposed_hw(&typed))
                .and_then(finish)
                .map_err(|e| ScanError::inference(stage, e))
        })?;
        let swap = |t: Tensor| {
            t.permute_axes(&[0, 1, 3, 2])
                .map_err(|e| ScanError::inference(stage, e))
        };
        self.run_on(&plan, swap(input)?)?
            .into_iter()
            .map(swap)
            .collect()
    }

    /// Whether [`Model::run_transposed`] runs the graph with its spatial axes exchanged: a model with variable
    /// height and width (the detector) that tract lays out channels first (on x86-64; on arm64 tract moves the
    /// depthwise convolutions' channels last).
    pub fn runs_transposed(&self) -> bool {
        self.kind.variable_sides() == (true, true)
            && self.shapes.as_ref().is_some_and(|s| s.transposes)
    }

    /// Whether [`Model::run_padded`] runs the trunk on the narrow input (the OCR, when its graph could be cut
    /// where the trunk ends); otherwise it pads the input back to the nominal width.
    pub fn trims_padding(&self) -> bool {
        self.trunk.is_some()
    }

    /// Runs the OCR on `[1, C, H, W]`, W a multiple of [`HW_MULTIPLE`] up to the nominal width, as if it had been
    /// padded to the nominal width with the value of its last columns: its outputs are those of
    /// [`Model::run_any_size`] on the padded input (its one output, `[1, W/4, classes]` at the nominal W), for a
    /// fraction of the trunk's time. Valid when the input's last 40 or more columns (all past the text) hold one
    /// value, as [`crate::read`] pads a crop: the trunk (convolutions over 33 columns, downsampling by 4) then gives
    /// every padding column out of the text's reach one output column, and the columns next to the right border
    /// (the last five) only depend on the padding value. So the trunk runs on the narrow input, its output is
    /// widened by repeating its last such column (keeping the border columns at the end), and the head runs at
    /// the nominal width. A model without a trunk cut runs whole. [`Model::run_padded_trunk`] then
    /// [`Model::run_padded_heads`] on one input.
    pub fn run_padded(&self, input: Tensor) -> Result<Tensor, ScanError> {
        let trunk = self.run_padded_trunk(input)?;
        let mut outputs = self.run_padded_heads(std::slice::from_ref(&trunk))?;
        outputs.pop().ok_or_else(|| ScanError::Inference {
            stage: self.kind.name(),
            message: "no output".into(),
        })
    }

    /// The first half of [`Model::run_padded`]: the trunk's run on `input`, widened to the head's input; the whole
    /// model's output for an input the trunk does not serve (another shape, a crop too narrow to widen, or a model
    /// without a trunk cut). At the nominal width the trunk and head give the whole model's output bit for bit.
    pub fn run_padded_trunk(&self, input: Tensor) -> Result<PaddedTrunk, ScanError> {
        let stage = self.kind.name();
        let [c, hmax, wmax] = self.kind.input_chw();
        let done = |outputs| {
            self.first_output(outputs)
                .map(|t| PaddedTrunk(Prepared::Done(t)))
        };
        let &[1, ch, h, w] = input.shape() else {
            return done(self.run_any_size(input)?);
        };
        let steps = w / 4;
        if ch != c || h != hmax || w > wmax || !w.is_multiple_of(HW_MULTIPLE) {
            return done(self.run_any_size(input)?);
        }
        let cut =
            (self.trunk.as_ref().zip(self.shapes.as_ref())).filter(|_| steps > BORDER_STEPS + 1);
        let Some((split, shapes)) = cut else {
            let wide = widened(&input, wmax).map_err(|e| ScanError::inference(stage, e))?;
            return done(self.run_any_size(wide)?);
        };
        let trunk = cached_plan(&split.trunks, (h, w), || {
            trunk_plan(shapes.source.clone(), [c, h, w]).map_err(|e| ScanError::inference(stage, e))
        })?;
        let narrow = run_plan(&trunk, tvec!(input.into_tvalue()), stage)?
            .remove(0)
            .into_tensor();
        let [n, fc, fh, fw] = split.features;
        let view = narrow
            .to_plain_array_view::<f32>()
            .map_err(|e| ScanError::inference(stage, e))?;
        if view.shape() != [n, fc, fh, steps] {
            return Err(ScanError::Inference {
                stage,
                message: format!(
                    "trunk output {:?}, expected [{n}, {fc}, {fh}, {steps}]",
                    view.shape()
                ),
            });
        }
        let last_free = steps - BORDER_STEPS - 1;
        let column = |j: usize| {
            if j < last_free {
                j
            } else if j < fw - BORDER_STEPS {
                last_free
            } else {
                steps - (fw - j)
            }
        };
        let wide = tract_ndarray::Array4::from_shape_fn((n, fc, fh, fw), |(a, b, y, j)| {
            view[[a, b, y, column(j)]]
        });
        Ok(PaddedTrunk(Prepared::Features(wide.into_tensor())))
    }

    /// The second half of [`Model::run_padded`], for each of `trunks` in order: the heads run in batches of up to
    /// [`HEAD_BATCH`] crops, on a plan per batch size (built on first use and cached; a batch's outputs are
    /// those of its crops run one by one, bit for bit). A graph whose batch cannot be changed (an NNEF file from
    /// before the converter kept the OCR's batch symbolic) runs each head alone.
    pub fn run_padded_heads(&self, trunks: &[PaddedTrunk]) -> Result<Vec<Tensor>, ScanError> {
        let stage = self.kind.name();
        let features: Vec<&Tensor> = (trunks.iter())
            .filter_map(|t| match &t.0 {
                Prepared::Features(f) => Some(f),
                Prepared::Done(_) => None,
            })
            .collect();
        // One run of `plan` on the stacked `inputs`, cut back into one output per input.
        let run = |plan: &Arc<TypedRunnableModel>,
                   inputs: &[&Tensor]|
         -> Result<Vec<Tensor>, ScanError> {
            let input =
                Tensor::stack_tensors(0, inputs).map_err(|e| ScanError::inference(stage, e))?;
            let output = self.first_output(self.ordered(run_plan(
                plan,
                tvec!(input.into_tvalue()),
                stage,
            )?)?)?;
            (0..inputs.len())
                .map(|i| {
                    output
                        .slice(0, i, i + 1)
                        .map_err(|e| ScanError::inference(stage, e))
                })
                .collect()
        };
        let mut heads = Vec::with_capacity(features.len());
        if let Some((split, shapes)) = self.trunk.as_ref().zip(self.shapes.as_ref()) {
            for chunk in features.chunks(HEAD_BATCH) {
                let n = chunk.len();
                let batched = (n > 1 && !split.unbatchable.load(Ordering::Relaxed)).then(|| {
                    cached_plan(&split.heads, (n, 0), || {
                        head_plan(shapes.source.clone(), n, self.kind.input_chw())
                            .map_err(|e| ScanError::inference(stage, e))
                    })
                });
                match batched {
                    Some(Ok(plan)) => heads.extend(run(&plan, chunk)?),
                    alone => {
                        // A single crop runs on the batch-1 head; so does each crop of a graph whose batch is
                        // fixed at one (an NNEF file converted before the OCR's batch was kept symbolic), which
                        // is not asked again.
                        if matches!(alone, Some(Err(_))) {
                            split.unbatchable.store(true, Ordering::Relaxed);
                        }
                        for f in chunk {
                            heads.extend(run(&split.head, &[f])?);
                        }
                    }
                }
            }
        }
        let mut heads = heads.into_iter();
        (trunks.iter())
            .map(|t| match &t.0 {
                Prepared::Done(output) => Ok(output.clone()),
                Prepared::Features(_) => heads.next().ok_or_else(|| ScanError::Inference {
                    stage,
                    message: "no head for a trunk output".into(),
                }),
            })
            .collect()
    }

    /// Runs the model on one input tensor (shape `[N, C, H, W]`, see the module table; `N` must be 1 for the
    /// cropper and detector) and returns the outputs in the order of [`ModelKind::output_names`], each with the
    /// batch `N` as its first axis. A batch of `N > 1` is cut into items that run one after another, each with
    /// a fresh state as in [`Model::run_each`], and their outputs are stacked (copies that callers building their
    /// items one by one avoid with [`Model::run_each`]).
    /// A tract failure or a wrongly shaped input is [`ScanError::Inference`] naming the model.
    pub fn run(&self, input: Tensor) -> Result<Vec<Tensor>, ScanError> {
        let stage = self.kind.name();
        let batch = self.check_input(input.shape(), self.kind.dynamic_batch())?;
        if batch == 1 {
            return self.run_item(input);
        }
        // One list per output, one tensor per item, then stacked on the batch axis.
        let mut items: Vec<Vec<Tensor>> = vec![Vec::with_capacity(batch); self.output_order.len()];
        for i in 0..batch {
            let item = input
                .slice(0, i, i + 1)
                .map_err(|e| ScanError::inference(stage, e))?;
            for (list, t) in items.iter_mut().zip(self.run_item(item)?) {
                list.push(t);
            }
        }
        items
            .iter()
            .map(|list| Tensor::stack_tensors(0, list).map_err(|e| ScanError::inference(stage, e)))
            .collect()
    }

    /// Runs the model on each of `inputs` (every one `[1, C, H, W]`, see the module table; a variable-size model
    /// also takes the sizes of [`Model::run_any_size`], input by input), one after another, each with a fresh
    /// state, and returns per input its outputs in the order of [`ModelKind::output_names`] (batch axis 1). A
    /// tract failure or a wrongly shaped input is [`ScanError::Inference`] naming the model.
    pub fn run_each(
        &self,
        inputs: impl IntoIterator<Item = Tensor>,
    ) -> Result<Vec<Vec<Tensor>>, ScanError> {
        inputs
            .into_iter()
            .map(|input| {
                if self.shapes.is_some() {
                    return self.run_any_size(input);
                }
                self.check_input(input.shape(), false)?;
                self.run_item(input)
            })
            .collect()
    }

    /// [`Model::run_each`] for a model with one output (classifier, OCR): per input, that output.
    pub fn run_each_single(
        &self,
        inputs: impl IntoIterator<Item = Tensor>,
    ) -> Result<Vec<Tensor>, ScanError> {
        inputs
            .into_iter()
            .map(|input| self.run_single(input))
            .collect()
    }

    /// [`Model::run_each_single`] for one input: its one output.
    pub fn run_single(&self, input: Tensor) -> Result<Tensor, ScanError> {
        let outputs = self.run_each([input])?.pop().unwrap_or_default();
        self.first_output(outputs)
    }

    /// The first of a run's outputs (the only one of the classifier and the OCR).
    fn first_output(&self, outputs: Vec<Tensor>) -> Result<Tensor, ScanError> {
        outputs
            .into_iter()
            .next()
            .ok_or_else(|| ScanError::Inference {
                stage: self.kind.name(),
                message: "no output".into(),
            })
    }

    /// The batch `N` of an input of `shape` if it is `[N, C, H, W]` with the nominal C, H, W and `N ≥ 1`
    /// (`N == 1` unless `any_batch`).
    fn check_input(&self, shape: &[usize], any_batch: bool) -> Result<usize, ScanError> {
        let chw = self.kind.input_chw();
        if shape.len() != 4 || shape[1..] != chw || shape[0] == 0 || (!any_batch && shape[0] != 1) {
            let n = if any_batch { "N" } else { "1" };
            return Err(ScanError::Inference {
                stage: self.kind.name(),
                message: format!(
                    "input shape {shape:?}, expected [{n}, {}, {}, {}]",
                    chw[0], chw[1], chw[2]
                ),
            });
        }
        Ok(shape[0])
    }

    /// Runs one checked `[1, C, H, W]` input. `plan.run` makes a fresh state for every call: a reused state
    /// carries the OCR's recurrent (Scan) state over to the next item and changes its answer.
    fn run_item(&self, input: Tensor) -> Result<Vec<Tensor>, ScanError> {
        self.run_on(&self.plan, input)
    }

    /// Runs `input` on `plan` (a fresh state) and orders the outputs.
    fn run_on(
        &self,
        plan: &Arc<TypedRunnableModel>,
        input: Tensor,
    ) -> Result<Vec<Tensor>, ScanError> {
        let outputs = run_plan(plan, tvec!(input.into_tvalue()), self.kind.name())?;
        self.ordered(outputs)
    }

    /// The plan's outputs in the order of [`ModelKind::output_names`].
    fn ordered(&self, outputs: TVec<TValue>) -> Result<Vec<Tensor>, ScanError> {
        let mut outputs: Vec<Option<TValue>> = outputs.into_iter().map(Some).collect();
        self.output_order
            .iter()
            .map(|&ix| {
                outputs
                    .get_mut(ix)
                    .and_then(Option::take)
                    .map(TValue::into_tensor)
                    .ok_or_else(|| ScanError::Inference {
                        stage: self.kind.name(),
                        message: format!("missing output {ix}"),
                    })
            })
            .collect()
    }
}

/// All four models with their metadata. Clone shares the plans.
#[derive(Debug, Clone)]
pub struct ModelSet {
    pub cropper: Model,
    pub detector: Model,
    pub classifier: Model,
    pub ocr: Model,
    pub vocab: Vocab,
    pub alphabet: Alphabet,
}

impl ModelSet {
    /// The models compiled into the library (cargo feature `bundled-models`, on by default).
    pub fn bundled() -> Result<ModelSet, ModelError> {
        #[cfg(feature = "bundled-models")]
        {
            Ok(ModelSet {
                cropper: Model::from_bytes(ModelKind::Cropper, bundled::CROPPER)?,
                detector: Model::from_bytes(ModelKind::Detector, bundled::DETECTOR)?,
                classifier: Model::from_bytes(ModelKind::Classifier, bundled::CLASSIFIER)?,
                ocr: Model::from_bytes(ModelKind::Ocr, bundled::OCR)?,
                vocab: Vocab::bundled()?,
                alphabet: Alphabet::bundled()?,
            })
        }
        #[cfg(not(feature = "bundled-models"))]
        {
            Err(ModelError::NotBundled)
        }
    }

    /// Loads `cropper.onnx`, `detector.onnx`, `classifier.onnx` and `ocr.onnx` from `dir`, each checked
    /// against the manifest. `vocab.json` and `ocr_alphabet.json` are read from `dir` when present, otherwise
    /// the compiled-in copies are used.
    pub fn from_dir(dir: &Path) -> Result<ModelSet, ModelError> {
        let text = |name: &str, fallback: &str| -> Result<String, ModelError> {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(t) => Ok(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(fallback.to_owned()),
                Err(source) => Err(ModelError::Io { path, source }),
            }
        };
        Ok(ModelSet {
            cropper: Model::from_dir(ModelKind::Cropper, dir)?,
            detector: Model::from_dir(ModelKind::Detector, dir)?,
            classifier: Model::from_dir(ModelKind::Classifier, dir)?,
            ocr: Model::from_dir(ModelKind::Ocr, dir)?,
            vocab: Vocab::from_json(&text("vocab.json", VOCAB_JSON)?)?,
            alphabet: Alphabet::from_json(&text("ocr_alphabet.json", ALPHABET_JSON)?)?,
        })
    }

    /// The model of `kind`.
    pub fn get(&self, kind: ModelKind) -> &Model {
        match kind {
            ModelKind::Cropper => &self.cropper,
            ModelKind::Detector => &self.detector,
            ModelKind::Classifier => &self.classifier,
            ModelKind::Ocr => &self.ocr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classifier ends in a global pooling and a dense head, which do not commute with exchanging the image's
    /// axes: the rewrite refuses them instead of building another function.
    #[cfg(feature = "bundled-models")]
    #[test]
    fn transposing_refuses_ops_it_does_not_know() {
        let bytes = bundled::CLASSIFIER;
        let typed = declutter(parse(bytes).unwrap(), ModelKind::Classifier.input_chw()).unwrap();
        // Refused at the head, whose dense layer reads both spatial axes at once (an einsum summing over them);
        // where tract lays the graph out channels last (arm64), at the first 1 × 1 convolution, whose einsum then
        // has the channels last.
        let err = format!("{:#}", transposed_hw(&typed).unwrap_err());
        let at = if lays_out_channels_last(&typed) {
            "mixes the spatial axes"
        } else {
            "head"
        };
        assert!(err.contains(at), "{err}");
    }

    /// Our convolution lowerings (`conv_lowerings`) change the plan, not the function: on every bundled model, at
    /// shapes that take each branch, the outputs equal those of tract's own lowerings up to float rounding, and
    /// the plans differ where `SMALL_CONV_INPUTS` says (so the test fails if the rewrite does nothing).
    #[cfg(feature = "bundled-models")]
    #[test]
    fn conv_lowerings_keep_each_models_outputs() {
        let cases: [(ModelKind, &[u8], [usize; 3]); 5] = [
            (ModelKind::Ocr, bundled::OCR, [1, 48, 320]),
            (ModelKind::Ocr, bundled::OCR, [1, 48, 192]),
            (ModelKind::Classifier, bundled::CLASSIFIER, [3, 96, 160]),
            (ModelKind::Cropper, bundled::CROPPER, [3, 512, 512]),
            (ModelKind::Detector, bundled::DETECTOR, [3, 160, 224]),
        ];
        let count = |plan: &TypedRunnableModel, op: &str| {
            plan.model()
                .nodes()
                .iter()
                .filter(|n| n.op().name() == op)
                .count()
        };
        for (kind, bytes, chw) in cases {
            let typed = declutter(parse(bytes).unwrap(), chw).unwrap();
            let mut theirs = typed.clone();
            upsample_copying_deconvs(&mut theirs).unwrap();
            theirs.optimize().unwrap();
            let theirs = theirs.into_runnable().unwrap();
            let ours = finish(typed).unwrap();

            // Each case takes a branch: fewer direct convolutions (over SMALL_CONV_INPUTS inputs), or fewer
            // lazy im2cols (at most SMALL_CONV_INPUTS, not run directly).
            let fewer = |op: &str| count(&ours, op) < count(&theirs, op);
            assert!(
                fewer("DirectSpatialConv") || fewer("LazyIm2col"),
                "{kind:?} {chw:?}: the same lowerings as tract's"
            );

            let [c, h, w] = chw;
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            let input = tract_ndarray::Array4::from_shape_fn((1, c, h, w), |_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .into_tensor();
            let want = theirs.run(tvec!(input.clone().into_tvalue())).unwrap();
            let got = ours.run(tvec!(input.into_tvalue())).unwrap();
            assert_eq!(want.len(), got.len());
            for (p, q) in want.iter().zip(&got) {
                let (p, q) = (
                    p.to_plain_array_view::<f32>().unwrap(),
                    q.to_plain_array_view::<f32>().unwrap(),
                );
                assert_eq!(p.shape(), q.shape());
                let scale = p.iter().fold(1f32, |m, v| m.max(v.abs()));
                let diff = p
                    .iter()
                    .zip(q.iter())
                    .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
                assert!(
                    diff <= 1e-5 * scale,
                    "{kind:?} {chw:?}: max abs difference {diff} (scale {scale})"
                );
            }
        }
    }

    /// Splitting the OCR's 2 × 2 max pool (`split_square_max_pools`) leaves its logits the same bit for bit, at the
    /// nominal width and a trimmed one, and the plan has one pool more (so the test fails if nothing is split).
    #[cfg(feature = "bundled-models")]
    #[test]
    fn split_max_pools_keep_the_ocr_logits_bit_for_bit() {
        for chw in [[1, 48, 320], [1, 48, 224]] {
            let typed = declutter(parse(bundled::OCR).unwrap(), chw).unwrap();
            let mut unsplit = typed.clone();
            upsample_copying_deconvs(&mut unsplit).unwrap();
            conv_lowerings(&mut unsplit).unwrap();
            unsplit.optimize().unwrap();
            let unsplit = unsplit.into_runnable().unwrap();
            let split = finish(typed).unwrap();
            let pools = |plan: &TypedRunnableModel| {
                (plan.model().nodes().iter())
                    .filter(|n| n.op().name() == "OptMaxPool")
                    .count()
            };
            assert_eq!(pools(&split), pools(&unsplit) + 1, "{chw:?}");

            let [c, h, w] = chw;
            let input = tract_ndarray::Array4::from_shape_fn((1, c, h, w), |(_, _, y, x)| {
                ((y * 31 + x * 17) as f32 * 0.013).sin()
            })
            .into_tensor();
            let want = unsplit.run(tvec!(input.clone().into_tvalue())).unwrap();
            let got = split.run(tvec!(input.into_tvalue())).unwrap();
            assert_eq!(
                want[0].to_plain_array_view::<f32>().unwrap(),
                got[0].to_plain_array_view::<f32>().unwrap(),
                "{chw:?}"
            );
        }
    }

    /// Running the strided depthwise convolutions at stride 1 along W and keeping every other column
    /// (`unstride_depthwise_columns`) leaves every output of the classifier, the cropper and the detector (at two
    /// tile sizes) the same bit for bit on x86-64 (within 1e-4 elsewhere: arm64's vector and scalar paths round
    /// differently), and each plan has columns kept (so the test fails if nothing is rewritten).
    #[cfg(feature = "bundled-models")]
    #[test]
    fn unstrided_depthwise_columns_keep_each_models_outputs_bit_for_bit() {
        let cases: [(&[u8], [usize; 3]); 4] = [
            (bundled::CLASSIFIER, [3, 96, 160]),
            (bundled::CROPPER, [3, 512, 512]),
            (bundled::DETECTOR, [3, 288, 512]),
            (bundled::DETECTOR, [3, 160, 224]),
        ];
        for (bytes, chw) in cases {
            let typed = declutter(parse(bytes).unwrap(), chw).unwrap();
            let mut strided = typed.clone();
            upsample_copying_deconvs(&mut strided).unwrap();
            conv_lowerings(&mut strided).unwrap();
            split_square_max_pools(&mut strided).unwrap();
            strided.optimize().unwrap();
            let strided = strided.into_runnable().unwrap();
            let unstrided = finish(typed).unwrap();
            let kept = (unstrided.model().nodes().iter())
                .filter(|n| n.op().name() == "KeepColumns")
                .count();
            assert!(kept > 0, "{chw:?}: no depthwise convolution unstrided");

            let [c, h, w] = chw;
            let input = tract_ndarray::Array4::from_shape_fn((1, c, h, w), |(_, c, y, x)| {
                ((y * 31 + x * 17 + c * 7) as f32 * 0.013).sin()
            })
            .into_tensor();
            let want = strided.run(tvec!(input.clone().into_tvalue())).unwrap();
            let got = unstrided.run(tvec!(input.into_tvalue())).unwrap();
            assert_eq!(want.len(), got.len());
            for (p, q) in want.iter().zip(&got) {
                let (p, q) = (
                    p.to_plain_array_view::<f32>().unwrap(),
                    q.to_plain_array_view::<f32>().unwrap(),
                );
                if cfg!(target_arch = "x86_64") {
                    assert_eq!(p, q, "{chw:?}");
                } else {
                    assert_eq!(p.shape(), q.shape(), "{chw:?}");
                    let worst = p
                        .iter()
                        .zip(q.iter())
                        .map(|(a, b)| (a - b).abs())
                        .fold(0f32, f32::max);
                    println!("{chw:?}: max abs difference {worst:e}");
                    assert!(worst <= 1e-4, "{chw:?}: {worst}");
                }
            }
        }
    }

    /// `KeepColumns` keeps the first column and every `stride`-th after it, for widths that the stride divides
    /// and widths it does not.
    #[test]
    fn keep_columns_keeps_every_strideth_column() {
        for (w, stride) in [(6usize, 2usize), (7, 2), (7, 3), (1, 2), (0, 2)] {
            let input = tract_ndarray::Array3::from_shape_fn((2, 3, w), |(c, y, x)| {
                (c * 100 + y * 10 + x) as f32
            });
            use tract_nnef::internal::EvalOp;
            let op = keep_columns::KeepColumns { stride };
            let out = op
                .eval_out_of_plan(tvec!(input.clone().into_tensor().into_tvalue()))
                .unwrap()
                .unwrap();
            let want = input.slice(tract_ndarray::s![.., .., ..;stride]).to_owned();
            assert_eq!(
                out[0].to_plain_array_view::<f32>().unwrap(),
                want.into_dyn().view(),
                "{w} {stride}"
            );
        }
    }

    /// A graph of one depthwise 3 × 3 convolution with a non-symmetric kernel and stride (2, 1) computes, transposed
    /// on the transposed input, the transposed output.
    #[test]
    fn a_transposed_convolution_graph_computes_the_transposed_output() {
        use tract_nnef::tract_core::ops::cnn::conv::KernelFormat;
        use tract_nnef::tract_core::ops::cnn::{Conv, PaddingSpec, PoolSpec};
        let (c, h, w) = (2usize, 9usize, 6usize);
        let mut model = TypedModel::default();
        let x = model.add_source("x", f32::fact([1, c, h, w])).unwrap();
        let kernel: Vec<f32> = (0..c * 3 * 3).map(|i| (i as f32 * 0.37).sin()).collect();
        let kernel = tract_ndarray::Array4::from_shape_vec((c, 1, 3, 3), kernel)
            .unwrap()
            .into_tensor();
        let k = model.add_const("k", kernel).unwrap();
        let b = model.add_const("b", tensor1(&[0.5f32, -0.25])).unwrap();
        let conv = Conv {
            pool_spec: PoolSpec {
                data_format: DataFormat::NCHW,
                kernel_shape: tvec!(3, 3),
                padding: PaddingSpec::Explicit(tvec!(1, 0), tvec!(1, 2)),
                dilations: None,
                strides: Some(tvec!(2, 1)),
                input_channels: c,
                output_channels: c,
            },
            kernel_fmt: KernelFormat::OIHW,
            group: c,
            q_params: None,
        };
        let y = model.wire_node("conv", conv, &[x, k, b]).unwrap();
        model.select_output_outlets(&y).unwrap();

        let input: Vec<f32> = (0..c * h * w).map(|i| (i as f32 * 0.11).cos()).collect();
        let input = tract_ndarray::Array4::from_shape_vec((1, c, h, w), input).unwrap();
        let plain = model.clone().into_runnable().unwrap();
        let want = plain
            .run(tvec!(input.clone().into_tensor().into_tvalue()))
            .unwrap();
        let transposed = transposed_hw(&model).unwrap().into_runnable().unwrap();
        let xt = input
            .permuted_axes([0, 1, 3, 2])
            .as_standard_layout()
            .into_owned();
        let got = transposed
            .run(tvec!(xt.into_tensor().into_tvalue()))
            .unwrap();
        let want = want[0].to_plain_array_view::<f32>().unwrap();
        let got = got[0].to_plain_array_view::<f32>().unwrap();
        let got = got.permuted_axes(&[0, 1, 3, 2][..]);
        assert_eq!(want.shape(), got.shape());
        for (p, q) in want.iter().zip(got.iter()) {
            assert!((p - q).abs() < 1e-5, "{p} vs {q}");
        }
    }
}
