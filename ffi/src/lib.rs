//! UniFFI bindings of netron-ocr (Kotlin, Swift, Python): a thin layer over `netron-ocr-core`.
//!
//! * [`scanner::Scanner`]: thread-safe entry object over the core pipeline: `assess*` (quality gate) and `scan*`
//!   (graph reading), returning a [`scan_result::ScanResult`]: the graph as typed records and as graph JSON v1,
//!   the frame's quality and per-stage timings.
//! * [`capture::CaptureSession`]: the Searching → Steadying → Captured state machine over a camera stream; the
//!   steady frames are scanned and their graphs fused by voting (`fusion`).
//! * [`scanner::assess`], [`types::tight_frame_info`], [`types::rotation_from_degrees`],
//!   [`types::default_quality_params`], [`graph_json::normalize_graph_json`]: free functions.
//! * [`log_bridge`]: `log` records to a foreign `LogSink`, or to logcat / os_log.
//!
//! Contract at the boundary: every exported function is synchronous, returns `Result<_, NetronError>`, and runs
//! inside `boundary::guarded`, so no panic reaches foreign code. Frame buffers are `&[u8]`: borrowed for the
//! duration of the call without a copy (a direct `ByteBuffer` in Kotlin, `Data` in Swift, `bytes` in Python).

uniffi::setup_scaffolding!("netron_ocr_ffi");

pub mod boundary;
pub mod capture;
pub mod error;
mod fusion;
pub mod graph_json;
pub mod log_bridge;
pub mod scan_result;
pub mod scanner;
pub mod types;

mod platform_log;

#[cfg(target_os = "android")]
mod android;
#[cfg(target_os = "ios")]
mod oslog;

pub use capture::{CaptureSession, CaptureState, CaptureUpdate};
pub use error::NetronError;
pub use scan_result::{ScanGraph, ScanResult, StageTimings};
pub use scanner::{assess, Scanner};
pub use types::{Exposure, FrameInfo, FrameQuality, Hint, PixelFormat, QualityParams, Rotation};
