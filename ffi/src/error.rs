//! The one error type that crosses the FFI boundary.
//!
//! It is a *flat* error (`#[uniffi(flat_error)]`): the foreign side gets the variant as its own exception / error
//! case and the `Display` text below as its message (Kotlin `NetronException.BufferTooShort`, Swift
//! `NetronError.BufferTooShort(message:)`, Python `NetronError.BufferTooShort`). Every core error maps to exactly
//! one variant; nothing is dropped into a catch-all except what is genuinely internal.

use netron_ocr_core::crop::CropError;
use netron_ocr_core::frame::FrameError;
use netron_ocr_core::graph::GraphError;
use netron_ocr_core::ScanError;

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
    /// Models that could not be loaded: a missing or unusable model directory, a file whose hash does not match
    /// its manifest, a model tract cannot load, or a build without bundled models.
    #[error("cannot load models: {0}")]
    ModelLoad(String),
    /// Graph JSON that is not a valid netron-ocr graph of schema v1.
    #[error("invalid graph JSON: {0}")]
    InvalidGraph(String),
    /// Graph JSON of a major version this library cannot read.
    #[error("unsupported graph JSON version: {0}")]
    UnsupportedGraphVersion(String),
    /// A model ran but failed or returned tensors of an unexpected shape (the message names the stage).
    #[error("inference failed: {0}")]
    Inference(String),
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

impl From<ScanError> for NetronError {
    fn from(e: ScanError) -> Self {
        let text = e.to_string();
        match e {
            ScanError::Frame(f) => f.into(),
            ScanError::Graph(g) => g.into(),
            ScanError::Model(_) => NetronError::ModelLoad(text),
            // An empty image is the caller's input; the other crop/detect failures are a model's output.
            ScanError::Input { .. } | ScanError::Crop(CropError::EmptyImage { .. }) => {
                NetronError::InvalidFrame(text)
            }
            ScanError::Inference { .. }
            | ScanError::Crop(_)
            | ScanError::Detect(_)
            | ScanError::Classify(_)
            | ScanError::Read(_) => NetronError::Inference(text),
            // Edge recovery and assembly only see boxes the pipeline made itself: a failure there is a bug.
            ScanError::Edges(_) | ScanError::Assemble(_) => NetronError::Internal(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_errors_keep_their_kind_and_message() {
        let e: NetronError = ScanError::Frame(FrameError::UnsupportedFormat("GIF".into())).into();
        assert!(
            matches!(&e, NetronError::UnsupportedFormat(m) if m.contains("GIF")),
            "{e:?}"
        );
        let e: NetronError = ScanError::inference("detector", "shape [1, 2]").into();
        assert!(
            matches!(&e, NetronError::Inference(m) if m.contains("detector")),
            "{e:?}"
        );
        let e: NetronError = ScanError::Crop(CropError::EmptyImage {
            width: 0,
            height: 3,
        })
        .into();
        assert!(matches!(e, NetronError::InvalidFrame(_)));
    }
}
