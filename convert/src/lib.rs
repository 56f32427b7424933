//! ONNX → NNEF conversion of the four netron-ocr models, with tract.
//!
//! The ONNX files under `models/` are what training exports and what `models/<name>.MODEL.md` hashes. A build of
//! `netron-ocr-core` with its `nnef` feature (and without `onnx`) links tract's NNEF reader instead of its ONNX
//! parser, which makes the library smaller; its build script calls [`onnx_to_nnef`] on the committed models, and
//! `netron-ocr-convert MODELS_DIR OUT_DIR` does the same for a model directory to load at run time.
//!
//! Contract of the NNEF graphs (each a plain, uncompressed tar):
//! - the input is declared `[1, C, H, W]` float32 (batch 1: the core runs batch-1 plans, see its `models` module),
//!   except the OCR's, `[N, 1, 48, 32·w]` with the symbol `N` ([`SYMBOL_BATCH`]), which the loader binds to 1, or
//!   to the size of a batch of recurrent heads; the detector's `H` and `W` are `32·h` and `32·w` with the symbols
//!   `h` and `w`, which the loader binds to the tile size before optimizing;
//! - outputs keep their ONNX names (`proj_x`, `heatmap`, `logits`, …); ONNX metadata properties are dropped (with
//!   them tract could not read its own NNEF of the OCR back; nothing reads them at run time);
//! - the graph is typed, decluttered for the fixed-size models and the OCR (the cropper's `Resize` becomes tract's
//!   nearest upsampling; undecluttered, the OCR's symbolic batch leaves a `StridedSlice` tract cannot write), and
//!   written with tract's core extension only: the reader does not link the `tract_onnx` one.
//!   tract cannot write that upsampling, nor some decluttered ops, with symbolic sizes, which is why the
//!   detector (symbolic `h`, `w`) is written undecluttered and upsamples with a transposed convolution (the
//!   core's loader turns it back into a nearest upsampling before optimizing, as it does for the ONNX file);
//! - the bytes are deterministic (fixed tar timestamps) and do not depend on the converting host (see
//!   [`declutter_portably`]): one ONNX file and one tract version give one NNEF file, so its SHA-256 can stand in a
//!   manifest.

use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::format_err;

/// The four models, by the stem of their file names.
pub const MODEL_NAMES: [&str; 4] = ["cropper", "detector", "classifier", "ocr"];

/// The input a model is converted with, without the batch dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSize {
    /// `[C, H, W]`.
    Fixed([usize; 3]),
    /// `C` channels, height `32·h` and width `32·w` ([`SYMBOLS_HW`]).
    Symbolic { channels: usize },
    /// `C` channels, a fixed height and the width `32·w` (the second of [`SYMBOLS_HW`]).
    SymbolicWidth { channels: usize, height: usize },
}

/// The input each model is converted with (the nominal sizes of its MODEL.md).
pub fn input_size(name: &str) -> Option<InputSize> {
    match name {
        "cropper" => Some(InputSize::Fixed([3, 512, 512])),
        "detector" => Some(InputSize::Symbolic { channels: 3 }),
        "classifier" => Some(InputSize::Fixed([3, 96, 160])),
        "ocr" => Some(InputSize::SymbolicWidth {
            channels: 1,
            height: 48,
        }),
        _ => None,
    }
}

/// The symbol of the OCR's batch (the core binds it to 1, or to the batch of its recurrent heads).
pub const SYMBOL_BATCH: &str = "N";

/// The symbols of the detector's input height and width (`H = 32·h`, `W = 32·w`); the OCR's width is `32·w`.
pub const SYMBOLS_HW: [&str; 2] = ["h", "w"];

/// Converts the ONNX model `name` (one of [`MODEL_NAMES`]) to NNEF tar bytes.
pub fn onnx_to_nnef(name: &str, onnx: &[u8]) -> TractResult<Vec<u8>> {
    let Some(size) = input_size(name) else {
        return Err(format_err!(
            "unknown model {name:?} (expected one of {MODEL_NAMES:?})"
        ));
    };
    let model = tract_onnx::onnx().model_for_read(&mut &onnx[..])?;
    let shape: TVec<TDim> = match size {
        InputSize::Fixed(chw) => std::iter::once(1)
            .chain(chw)
            .map(|d| TDim::from(d as i64))
            .collect(),
        InputSize::Symbolic { channels } => tvec![
            1.into(),
            (channels as i64).into(),
            TDim::from(model.sym(SYMBOLS_HW[0])) * 32,
            TDim::from(model.sym(SYMBOLS_HW[1])) * 32,
        ],
        InputSize::SymbolicWidth { channels, height } => tvec![
            TDim::from(model.sym(SYMBOL_BATCH)),
            (channels as i64).into(),
            (height as i64).into(),
            TDim::from(model.sym(SYMBOLS_HW[1])) * 32,
        ],
    };
    let mut typed = model
        .with_input_fact(0, f32::fact(shape).into())?
        .into_typed()?;
    if matches!(size, InputSize::Fixed(_) | InputSize::SymbolicWidth { .. }) {
        declutter_portably(&mut typed)?;
    }
    typed.properties.clear();
    // tract's writer panics (`todo!`) on some symbolic dims instead of failing.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tract_nnef::nnef().write_to_tar_with_config(&typed, Vec::new(), false, true)
    }))
    .unwrap_or_else(|_| Err(format_err!("tract's NNEF writer panicked on {name}")))
}

/// The name (its `Debug` form) of tract's declutter pass that applies the axis moves the ops suggest.
pub const CHANGE_AXES_PASS: &str = "ChangeAxes";

/// tract's declutter passes without [`CHANGE_AXES_PASS`], applied to `typed`.
///
/// The axis moves a graph gets from that pass depend on the host: tract 0.23.9 moves a float depthwise convolution
/// of 16 channels or more to channels last where `tract_linalg` has a `depthwise_c_f32` kernel (arm64), not
/// elsewhere (x86-64). Whole declutter therefore wrote other NNEF bytes on an arm64 host than on an x86-64 one, and
/// a file converted on one was refused by the manifest of a library built on the other. The loader declutters
/// again, with that pass, on the device that runs the graph, so nothing is lost by leaving it out here.
///
/// Fails if the pass is not found, so that a tract upgrade that renames it does not silently bring the host
/// dependence back.
pub fn declutter_portably(typed: &mut TypedModel) -> TractResult<()> {
    let mut optimizer = tract_onnx::tract_core::optim::Optimizer::declutter();
    let before = optimizer.passes.len();
    optimizer
        .passes
        .retain(|pass| format!("{pass:?}") != CHANGE_AXES_PASS);
    if optimizer.passes.len() + 1 != before {
        return Err(format_err!(
            "tract's declutter has no single {CHANGE_AXES_PASS} pass to leave out"
        ));
    }
    optimizer.optimize(typed)
}
