//! `Scanner`: the library's entry object. One scanner is immutable after construction and may be shared by any
//! number of threads (it is `Send + Sync`; every method takes `&self`).
//!
//! It owns a `netron_ocr_core::scanner::Scanner` built once at construction (models loaded and optimised by
//! tract then, so the first scan pays no setup), and the loaded `ModelSet` so that `with_quality_params` can make a
//! sibling scanner without loading the models again (clones share the tract plans).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use image::RgbImage;
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{self as core_scanner, ScanParams};
use netron_ocr_core::{frame as core_frame, quality as core_quality, ScanError};

use crate::boundary::guarded;
use crate::error::NetronError;
use crate::scan_result::ScanResult;
use crate::types::{select_planes, FrameInfo, FrameQuality, QualityParams};

/// Reads Netron graphs from camera frames and images. Thread-safe: share one instance.
#[derive(Debug, uniffi::Object)]
pub struct Scanner {
    models: ModelSet,
    core: core_scanner::Scanner,
}

impl Scanner {
    fn build(models: ModelSet, params: ScanParams) -> Result<Scanner, NetronError> {
        let core = core_scanner::Scanner::with_params(&models, params)?;
        Ok(Scanner { models, core })
    }

    pub(crate) fn core_params(&self) -> &core_quality::QualityParams {
        &self.core.params().quality
    }

    /// Runs the core pipeline on an upright RGB image (for `CaptureSession`, which fuses core graphs).
    pub(crate) fn scan_core_rgb(
        &self,
        image: &RgbImage,
    ) -> Result<core_scanner::ScanResult, NetronError> {
        Ok(self.core.scan_rgb(image)?)
    }
}

/// The boundary form of a single-frame core result.
fn single(r: core_scanner::ScanResult) -> Result<ScanResult, NetronError> {
    ScanResult::from_core(
        &r.graph,
        r.quality.into(),
        r.text_height,
        r.timings.into(),
        1,
    )
}

fn model_error(e: netron_ocr_core::models::ModelError) -> NetronError {
    ScanError::from(e).into()
}

#[uniffi::export]
impl Scanner {
    /// A scanner with the models bundled in the library and the default parameters (loads and optimises the
    /// four models: tens of milliseconds). Fails with `ModelLoad` when the library was built without bundled
    /// models.
    #[uniffi::constructor]
    pub fn new() -> Result<Arc<Self>, NetronError> {
        guarded(|| {
            let models = ModelSet::bundled().map_err(model_error)?;
            let scanner = Scanner::build(models, ScanParams::default())?;
            log::debug!("scanner created with bundled models");
            Ok(Arc::new(scanner))
        })
    }

    /// A scanner that loads its models from the directory `path` (the `.onnx` files, `vocab.json`,
    /// `ocr_alphabet.json` and their `*.MODEL.md` manifests, hash-checked). Fails with `ModelLoad` when `path` is
    /// not a readable directory or a model in it is missing, corrupt or does not match its manifest.
    #[uniffi::constructor]
    pub fn from_model_dir(path: String) -> Result<Arc<Self>, NetronError> {
        guarded(|| {
            let dir = PathBuf::from(&path);
            match std::fs::metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(NetronError::ModelLoad(format!("{path}: not a directory"))),
                Err(e) => return Err(NetronError::ModelLoad(format!("{path}: {e}"))),
            }
            let models = ModelSet::from_dir(&dir).map_err(model_error)?;
            let scanner = Scanner::build(models, ScanParams::default())?;
            log::debug!("scanner created with models from {path}");
            Ok(Arc::new(scanner))
        })
    }

    /// A copy of this scanner (same models, shared, not reloaded) with other quality thresholds.
    pub fn with_quality_params(&self, params: QualityParams) -> Result<Arc<Scanner>, NetronError> {
        guarded(|| {
            let params = ScanParams {
                quality: params.into(),
                ..self.core.params().clone()
            };
            Ok(Arc::new(Scanner::build(self.models.clone(), params)?))
        })
    }

    /// A copy of this scanner (same models, shared, not reloaded) whose scans spread their model runs (the
    /// detector's tiles, the classifier's titles, the OCR's texts) over `threads` threads; `0`: the available
    /// cores, at most 4 (the default). The graphs are the same at any count; only the time changes.
    pub fn with_threads(&self, threads: u32) -> Result<Arc<Scanner>, NetronError> {
        guarded(|| {
            let mut params = self.core.params().clone();
            params.set_threads(threads as usize);
            Ok(Arc::new(Scanner::build(self.models.clone(), params)?))
        })
    }

    /// The quality thresholds in use.
    pub fn quality_params(&self) -> Result<QualityParams, NetronError> {
        guarded(|| Ok(self.core_params().clone().into()))
    }

    /// Quality verdict on one frame held in one buffer (planes packed one after another). No stability: use a
    /// `CaptureSession` for a stream. The buffer is only borrowed for the call (no copy).
    pub fn assess(&self, frame: &[u8], info: FrameInfo) -> Result<FrameQuality, NetronError> {
        guarded(|| Ok(core_quality::assess_frame(frame, &info.into(), self.core_params())?.into()))
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
            Ok(core_quality::assess_planes(&planes, &info.into(), self.core_params())?.into())
        })
    }

    /// Quality verdict on an encoded JPEG or PNG image (EXIF orientation applied).
    pub fn assess_image(&self, encoded: &[u8]) -> Result<FrameQuality, NetronError> {
        guarded(|| {
            let image = core_frame::decode_bytes(encoded)?;
            Ok(core_quality::assess_rgb(&image, self.core_params()).into())
        })
    }

    /// Reads the graph in one frame held in one buffer (borrowed for the call, not copied). Any frame is
    /// scanned, whatever its quality (reported in `quality`); an image that shows no graph gives an empty graph
    /// with a low canvas confidence, never an error.
    pub fn scan(&self, frame: &[u8], info: FrameInfo) -> Result<ScanResult, NetronError> {
        guarded(|| single(self.core.scan_frame(frame, &info.into())?))
    }

    /// Like [`Scanner::scan`], with one buffer per plane; planes the format does not use must be empty.
    pub fn scan_planes(
        &self,
        plane0: &[u8],
        plane1: &[u8],
        plane2: &[u8],
        info: FrameInfo,
    ) -> Result<ScanResult, NetronError> {
        guarded(|| {
            let planes = select_planes(info.format, [plane0, plane1, plane2])?;
            let t = Instant::now();
            let image = core_frame::frame_to_rgb_planes(&planes, &info.into())?;
            let decode = t.elapsed().as_secs_f64() * 1000.0;
            let mut r = self.core.scan_rgb(&image)?;
            r.timings.decode = decode;
            single(r)
        })
    }

    /// Reads the graph in an encoded JPEG or PNG image (a photo from the gallery, a screenshot; EXIF orientation
    /// applied).
    pub fn scan_image(&self, encoded: &[u8]) -> Result<ScanResult, NetronError> {
        guarded(|| single(self.core.scan_bytes(encoded)?))
    }

    /// Reads the graph in a JPEG or PNG file.
    pub fn scan_file(&self, path: String) -> Result<ScanResult, NetronError> {
        guarded(|| single(self.core.scan_file(Path::new(&path))?))
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
