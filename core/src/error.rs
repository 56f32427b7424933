//! The crate's top-level error: one variant per pipeline stage.
//!
//! Stage modules keep their own error enums ([`FrameError`], [`ModelError`], [`CropError`], [`DetectError`],
//! [`EdgeError`], [`AssembleError`]); [`ScanError`] wraps them so a [`crate::scanner::Scanner`] call returns one
//! type. Stages without an error enum of their own (the classifier and the OCR reader) use
//! [`ScanError::Inference`] for a failed model run and [`ScanError::Input`] for an input they cannot use.

use thiserror::Error;

use crate::assemble::AssembleError;
use crate::crop::CropError;
use crate::detect::DetectError;
use crate::edges::EdgeError;
use crate::frame::FrameError;
use crate::graph::GraphError;
use crate::models::ModelError;

/// Everything that can go wrong reading a graph from an image.
#[derive(Debug, Error)]
pub enum ScanError {
    /// The frame or image file could not be read or decoded.
    #[error("frame: {0}")]
    Frame(#[from] FrameError),
    /// A model could not be loaded (missing file, hash mismatch, not a valid ONNX model, …).
    #[error("model: {0}")]
    Model(#[from] ModelError),
    /// A model ran but failed, or returned tensors of an unexpected shape. `stage` names the model
    /// (`"cropper"`, `"detector"`, `"classifier"`, `"ocr"`).
    #[error("{stage} inference failed: {message}")]
    Inference {
        stage: &'static str,
        message: String,
    },
    /// A stage was given an input it cannot use (empty box, empty image, …).
    #[error("{stage}: bad input: {message}")]
    Input {
        stage: &'static str,
        message: String,
    },
    /// The cropper stage failed.
    #[error("crop: {0}")]
    Crop(#[from] CropError),
    /// The detector stage failed.
    #[error("detect: {0}")]
    Detect(#[from] DetectError),
    /// The operator classifier failed.
    #[error("classify: {0}")]
    Classify(String),
    /// The OCR stage failed.
    #[error("read: {0}")]
    Read(String),
    /// Edge recovery failed.
    #[error("edges: {0}")]
    Edges(#[from] EdgeError),
    /// The graph could not be assembled.
    #[error("assemble: {0}")]
    Assemble(#[from] AssembleError),
    /// The graph JSON could not be written or read.
    #[error("graph: {0}")]
    Graph(#[from] GraphError),
}

impl ScanError {
    /// A failed model run in `stage`, with tract's message.
    pub fn inference(stage: &'static str, err: impl std::fmt::Display) -> ScanError {
        ScanError::Inference {
            stage,
            message: format!("{err:#}"),
        }
    }
}

/// Short alias used across the crate.
pub type Result<T, E = ScanError> = std::result::Result<T, E>;
