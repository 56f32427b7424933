//! `Scanner`: the library's entry object. One scanner is immutable after construction and may be shared by any
//! number of threads (it is `Send + Sync`; every method takes `&self`).
//!
//! Today it holds the quality-gate parameters and where its models come from. Reading a graph (`scan*`) needs the
//! scan pipeline of `netron-ocr-core` (cropper → detector → operator classifier → OCR → graph assembly), which
//! does not exist yet: until it lands, every `scan*` method decodes and validates its input exactly as the
//! pipeline will and then returns [`NetronError::NotAvailable`]. It never fabricates a graph.

use std::path::PathBuf;
use std::sync::Arc;

use image::RgbImage;
use netron_ocr_core::{frame as core_frame, quality as core_quality};

use crate::boundary::guarded;
use crate::error::NetronError;
use crate::types::{select_planes, FrameInfo, FrameQuality, QualityParams};

/// What a successful scan returns.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct ScanResult {
    /// The graph as graph JSON v1 (`docs/graph-json.md`), the library's output contract. Parse it with the
    /// platform's graph types (Kotlin `GraphJson`, Swift `NetronGraph`).
    pub graph_json: String,
}

/// Where a scanner's models come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ModelSource {
    /// The models embedded in the library (cargo feature `bundled-models`).
    Bundled,
    /// `.onnx` files in a directory (e.g. downloaded after install to keep the app small).
    Dir(PathBuf),
}

/// Reads Netron graphs from camera frames and images. Thread-safe: share one instance.
#[derive(Debug, uniffi::Object)]
pub struct Scanner {
    params: core_quality::QualityParams,
    models: ModelSource,
}

// TODO(pipeline): replace with the core scan pipeline once it lands in netron-ocr-core (issue "Scan pipeline":
// cropper, detector, classifier, OCR, graph assembly); `CaptureSession` then fuses per-frame results.
/// Message of the `NotAvailable` error every `scan*` call returns until the pipeline exists.
pub(crate) const SCAN_NOT_AVAILABLE: &str = "graph scanning is not in this build yet: the scan pipeline of \
    netron-ocr-core has not landed; frame input and the quality gate (assess*, CaptureSession) work";

impl Scanner {
    pub(crate) fn core_params(&self) -> &core_quality::QualityParams {
        &self.params
    }

    /// The scan step shared by every input kind, given the upright RGB image.
    pub(crate) fn scan_rgb(&self, image: &RgbImage) -> Result<ScanResult, NetronError> {
        log::debug!(
            "scan of a {}x{} image with {:?} models: pipeline not available",
            image.width(),
            image.height(),
            self.models
        );
        Err(NetronError::NotAvailable(SCAN_NOT_AVAILABLE.to_owned()))
    }
}

#[uniffi::export]
impl Scanner {
    /// A scanner with the models bundled in the library and the default quality thresholds.
    /// Fails with `ModelLoad` when the library was built without bundled models.
    #[uniffi::constructor]
    pub fn new() -> Result<Arc<Self>, NetronError> {
        guarded(|| {
            if !cfg!(feature = "bundled-models") {
                return Err(NetronError::ModelLoad(
                    "this build has no bundled models (cargo feature `bundled-models` off): use from_model_dir".into(),
                ));
            }
            log::debug!("scanner created with bundled models");
            Ok(Arc::new(Scanner {
                params: core_quality::QualityParams::default(),
                models: ModelSource::Bundled,
            }))
        })
    }

    /// A scanner that loads its models from the directory `path`. Fails with `ModelLoad` when `path` is not a
    /// readable directory.
    #[uniffi::constructor]
    pub fn from_model_dir(path: String) -> Result<Arc<Self>, NetronError> {
        guarded(|| {
            let dir = PathBuf::from(&path);
            match std::fs::metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(NetronError::ModelLoad(format!("{path}: not a directory"))),
                Err(e) => return Err(NetronError::ModelLoad(format!("{path}: {e}"))),
            }
            log::debug!("scanner created with models from {path}");
            Ok(Arc::new(Scanner {
                params: core_quality::QualityParams::default(),
                models: ModelSource::Dir(dir),
            }))
        })
    }

    /// A copy of this scanner (same models) with other quality thresholds.
    pub fn with_quality_params(&self, params: QualityParams) -> Result<Arc<Scanner>, NetronError> {
        guarded(|| {
            Ok(Arc::new(Scanner {
                params: params.into(),
                models: self.models.clone(),
            }))
        })
    }

    /// The quality thresholds in use.
    pub fn quality_params(&self) -> Result<QualityParams, NetronError> {
        guarded(|| Ok(self.params.clone().into()))
    }

    /// Quality verdict on one frame held in one buffer (planes packed one after another). No stability: use a
    /// `CaptureSession` for a stream. The buffer is only borrowed for the call (no copy).
    pub fn assess(&self, frame: &[u8], info: FrameInfo) -> Result<FrameQuality, NetronError> {
        guarded(|| Ok(core_quality::assess_frame(frame, &info.into(), &self.params)?.into()))
    }

    /// Like [`Scanner::assess`], with one buffer per plane (Android `Image.getPlanes()`, iOS CVPixelBuffer
    /// planes). Planes the format does not use must be empty.
    pub fn assess_planes(
        &self,
        plane0: &[u8],
        plane1: &[u8],
        plane2: &[u8],
        info: FrameInfo,
    ) -> Result<FrameQuality, NetronError> {
        guarded(|| {
            let planes = select_planes(info.format, [plane0, plane1, plane2])?;
            Ok(core_quality::assess_planes(&planes, &info.into(), &self.params)?.into())
        })
    }

    /// Quality verdict on an encoded JPEG or PNG image (EXIF orientation applied).
    pub fn assess_image(&self, encoded: &[u8]) -> Result<FrameQuality, NetronError> {
        guarded(|| {
            let image = core_frame::decode_bytes(encoded)?;
            Ok(core_quality::assess_rgb(&image, &self.params).into())
        })
    }

    /// Reads the graph in one frame held in one buffer. Until the core pipeline lands: validates and converts the
    /// frame, then fails with `NotAvailable`.
    pub fn scan(&self, frame: &[u8], info: FrameInfo) -> Result<ScanResult, NetronError> {
        guarded(|| self.scan_rgb(&core_frame::frame_to_rgb(frame, &info.into())?))
    }

    /// Like [`Scanner::scan`], with one buffer per plane.
    pub fn scan_planes(
        &self,
        plane0: &[u8],
        plane1: &[u8],
        plane2: &[u8],
        info: FrameInfo,
    ) -> Result<ScanResult, NetronError> {
        guarded(|| {
            let planes = select_planes(info.format, [plane0, plane1, plane2])?;
            self.scan_rgb(&core_frame::frame_to_rgb_planes(&planes, &info.into())?)
        })
    }

    /// Reads the graph in an encoded JPEG or PNG image (a photo from the gallery, a screenshot). Until the core
    /// pipeline lands: decodes the image, then fails with `NotAvailable`.
    pub fn scan_image(&self, encoded: &[u8]) -> Result<ScanResult, NetronError> {
        guarded(|| self.scan_rgb(&core_frame::decode_bytes(encoded)?))
    }
}

/// Quality verdict on one frame with the default thresholds (see [`Scanner::assess`]).
#[uniffi::export]
pub fn assess(frame: &[u8], info: FrameInfo) -> Result<FrameQuality, NetronError> {
    guarded(|| {
        Ok(core_quality::assess_frame(
            frame,
            &info.into(),
            &core_quality::QualityParams::default(),
        )?
        .into())
    })
}
