//! The one error type that crosses the FFI boundary.
//!
//! It is a *flat* error (`#[uniffi(flat_error)]`): the foreign side gets the variant as its own exception / error
//! case and the `Display` text below as its message (Kotlin `NetronException.BufferTooShort`, Swift
//! `NetronError.BufferTooShort(message:)`, Python `NetronError.BufferTooShort`). Every core error maps to exactly
//! one variant; nothing is dropped into a catch-all except what is genuinely internal.

use netron_ocr_core::frame::FrameError;
use netron_ocr_core::graph::GraphError;

/// Everything an exported call can fail with.
#[derive(Debug, thiserror::Error, uniffi::Error)]
#[uniffi(flat_error)]
pub enum NetronError {
    /// A frame plane is shorter than its geometry needs.
    #[error("frame buffer too short: {0}")]
    BufferTooShort(String),
    /// A row stride or pixel stride is too small for the frame's width and format.
    #[error("invalid stride: {0}")]
    InvalidStride(String),
    /// The frame description itself is inconsistent (dimensions, plane count, unused planes not empty, ...).
    #[error("invalid frame: {0}")]
    InvalidFrame(String),
    /// The image or file is over the size limits of `netron_ocr_core::frame`.
    #[error("too large: {0}")]
    TooLarge(String),
    /// Encoded image bytes that are neither JPEG nor PNG.
    #[error("unsupported image format: {0}")]
    UnsupportedFormat(String),
    /// JPEG/PNG bytes that could not be decoded.
    #[error("cannot decode image: {0}")]
    DecodeFailed(String),
    /// An I/O error (reading a file or a model directory).
    #[error("i/o error: {0}")]
    Io(String),
    /// An argument outside its documented range (other than frame geometry).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A model directory that is missing or unusable.
    #[error("cannot load models: {0}")]
    ModelLoad(String),
    /// Graph JSON that is not a valid netron-ocr graph of schema v1.
    #[error("invalid graph JSON: {0}")]
    InvalidGraph(String),
    /// Graph JSON of a major version this library cannot read.
    #[error("unsupported graph JSON version: {0}")]
    UnsupportedGraphVersion(String),
    /// A feature this build of the library does not provide yet.
    #[error("not available: {0}")]
    NotAvailable(String),
    /// A bug: a panic inside the library, caught at the boundary. The message is the panic's.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<FrameError> for NetronError {
    fn from(e: FrameError) -> Self {
        let text = e.to_string();
        match e {
            FrameError::BufferTooShort { .. } => NetronError::BufferTooShort(text),
            FrameError::BadStride { .. } | FrameError::BadPixelStride { .. } => {
                NetronError::InvalidStride(text)
            }
            FrameError::PlaneCount { .. } | FrameError::BadDimensions { .. } => {
                NetronError::InvalidFrame(text)
            }
            FrameError::TooLarge { .. } | FrameError::FileTooLarge { .. } => {
                NetronError::TooLarge(text)
            }
            FrameError::UnsupportedFormat(_) => NetronError::UnsupportedFormat(text),
            FrameError::Decode(_) => NetronError::DecodeFailed(text),
            FrameError::Io(_) => NetronError::Io(text),
            // Resizing a validated image cannot fail on caller input; a failure here is a library bug.
            FrameError::Resize(_) => NetronError::Internal(text),
        }
    }
}

impl From<GraphError> for NetronError {
    fn from(e: GraphError) -> Self {
        let text = e.to_string();
        match e {
            GraphError::UnsupportedVersion { .. } => NetronError::UnsupportedGraphVersion(text),
            GraphError::Syntax(_) | GraphError::NotAGraph(_) | GraphError::Schema(_) => {
                NetronError::InvalidGraph(text)
            }
            GraphError::Write(_) => NetronError::Internal(text),
        }
    }
}
