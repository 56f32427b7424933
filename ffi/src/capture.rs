//! `CaptureSession`: turns a camera stream into a capture, frame by frame.
//!
//! States, driven by the quality gate (`netron_ocr_core::quality::FrameGate`):
//! * `Searching`: the last frame was rejected (its hints say why: too dark, glare, hold steady, move closer…).
//! * `Steadying`: the last frame was accepted, but fewer than `stable_frames` accepted frames *with a stability
//!   measure* (i.e. compared with the frame before and found steady) have come in a row.
//! * `Captured`: `stable_frames` such frames in a row. The session stays captured, whatever comes next, until
//!   `reset()`.
//!
//! An invalid frame (bad geometry) returns its error and changes nothing. On `Captured` the scan runs on the
//! capturing frame. Until the core scan pipeline exists it fails with `NotAvailable`, so `result` stays `None`;
//! with the pipeline, results of the steady frames will be fused here (TODO(pipeline)).

use std::sync::{Arc, Mutex, MutexGuard};

use netron_ocr_core::frame as core_frame;
use netron_ocr_core::quality as core_quality;

use crate::boundary::guarded;
use crate::error::NetronError;
use crate::scanner::{ScanResult, Scanner};
use crate::types::{select_planes, FrameInfo, FrameQuality, Hint};

/// Where a capture session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum CaptureState {
    Searching,
    Steadying,
    Captured,
}

/// What one pushed frame did to the session.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct CaptureUpdate {
    pub state: CaptureState,
    /// The frame's hints (same as `quality.hints`), most important first: what to tell the user.
    pub hints: Vec<Hint>,
    /// The quality gate's verdict on this frame.
    pub quality: FrameQuality,
    /// Steady accepted frames in a row so far (capped at `required_stable_frames`), for a progress indicator.
    pub stable_frames: u32,
    pub required_stable_frames: u32,
    /// The scan result once captured; `None` before, and also after capture while the scan pipeline is not
    /// available in this build.
    pub result: Option<ScanResult>,
}

/// The session's state machine, without the scanning (pure; unit-tested below).
#[derive(Debug)]
pub(crate) struct CaptureMachine {
    gate: core_quality::FrameGate,
    required: u32,
    stable: u32,
    state: CaptureState,
    result: Option<ScanResult>,
}

impl CaptureMachine {
    pub(crate) fn new(params: core_quality::QualityParams, required: u32) -> Self {
        CaptureMachine {
            gate: core_quality::FrameGate::new(params),
            required,
            stable: 0,
            state: CaptureState::Searching,
            result: None,
        }
    }

    /// Advances on one assessed frame; returns whether this frame completed the capture.
    pub(crate) fn observe(&mut self, quality: &core_quality::FrameQuality) -> bool {
        if self.state == CaptureState::Captured {
            return false;
        }
        if !quality.accept {
            self.stable = 0;
            self.state = CaptureState::Searching;
            return false;
        }
        // An accepted frame with a stability measure passed the gate's motion check against the previous frame.
        if quality.stability.is_some() {
            self.stable += 1;
        }
        if self.stable >= self.required {
            self.state = CaptureState::Captured;
            true
        } else {
            self.state = CaptureState::Steadying;
            false
        }
    }

    pub(crate) fn update(&self, quality: core_quality::FrameQuality) -> CaptureUpdate {
        let quality = FrameQuality::from(quality);
        CaptureUpdate {
            state: self.state,
            hints: quality.hints.clone(),
            quality,
            stable_frames: self.stable.min(self.required),
            required_stable_frames: self.required,
            result: self.result.clone(),
        }
    }

    pub(crate) fn reset(&mut self) {
        self.gate.reset();
        self.stable = 0;
        self.state = CaptureState::Searching;
        self.result = None;
    }
}

/// A capture from a camera stream. Push frames from one thread at a time (calls are serialised internally, so
/// concurrent pushes are safe but their order is then arbitrary).
#[derive(Debug, uniffi::Object)]
pub struct CaptureSession {
    scanner: Arc<Scanner>,
    machine: Mutex<CaptureMachine>,
}

impl CaptureSession {
    /// The machine, recovered (and reset) if a panic poisoned the lock mid-update.
    fn machine(&self) -> MutexGuard<'_, CaptureMachine> {
        self.machine.lock().unwrap_or_else(|poisoned| {
            let mut m = poisoned.into_inner();
            m.reset();
            self.machine.clear_poison();
            m
        })
    }

    /// Pushes one assessed frame; `rgb` converts the frame for the scan, only when it completes the capture.
    fn push(
        &self,
        assess: impl FnOnce(
            &mut core_quality::FrameGate,
        ) -> Result<core_quality::FrameQuality, NetronError>,
        rgb: impl FnOnce() -> Result<image::RgbImage, NetronError>,
    ) -> Result<CaptureUpdate, NetronError> {
        let mut m = self.machine();
        let quality = assess(&mut m.gate)?;
        if m.observe(&quality) {
            match rgb().and_then(|img| self.scanner.scan_rgb(&img)) {
                Ok(result) => m.result = Some(result),
                Err(NetronError::NotAvailable(why)) => log::warn!("captured, but no scan: {why}"),
                Err(e) => return Err(e),
            }
        }
        Ok(m.update(quality))
    }
}

#[uniffi::export]
impl CaptureSession {
    /// A session using `scanner`'s quality thresholds, capturing after `stable_frames` (≥ 1) steady accepted
    /// frames in a row (3 is a good default at 30 fps).
    #[uniffi::constructor]
    pub fn new(scanner: Arc<Scanner>, stable_frames: u32) -> Result<Arc<Self>, NetronError> {
        guarded(|| {
            if stable_frames == 0 {
                return Err(NetronError::InvalidArgument(
                    "stable_frames must be at least 1".into(),
                ));
            }
            let machine = Mutex::new(CaptureMachine::new(
                scanner.core_params().clone(),
                stable_frames,
            ));
            Ok(Arc::new(CaptureSession { scanner, machine }))
        })
    }

    /// Pushes a frame held in one buffer (borrowed for the call, not copied).
    pub fn push_frame(&self, frame: &[u8], info: FrameInfo) -> Result<CaptureUpdate, NetronError> {
        guarded(|| {
            let info: core_frame::FrameInfo = info.into();
            self.push(
                |gate| Ok(gate.push_frame(frame, &info)?),
                || Ok(core_frame::frame_to_rgb(frame, &info)?),
            )
        })
    }

    /// Pushes a frame given as one buffer per plane; planes the format does not use must be empty.
    pub fn push_planes(
        &self,
        plane0: &[u8],
        plane1: &[u8],
        plane2: &[u8],
        info: FrameInfo,
    ) -> Result<CaptureUpdate, NetronError> {
        guarded(|| {
            let planes = select_planes(info.format, [plane0, plane1, plane2])?;
            let info: core_frame::FrameInfo = info.into();
            self.push(
                |gate| Ok(gate.push_planes(&planes, &info)?),
                || Ok(core_frame::frame_to_rgb_planes(&planes, &info)?),
            )
        })
    }

    /// The current state.
    pub fn state(&self) -> Result<CaptureState, NetronError> {
        guarded(|| Ok(self.machine().state))
    }

    /// Starts over: `Searching`, no previous frame, no result.
    pub fn reset(&self) -> Result<(), NetronError> {
        guarded(|| {
            self.machine().reset();
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(accept: bool, stability: Option<f32>) -> core_quality::FrameQuality {
        core_quality::FrameQuality {
            accept,
            score: if accept { 1.0 } else { 0.1 },
            sharpness: 1.0,
            exposure: core_quality::Exposure::default(),
            glare: 0.0,
            stability,
            content: 0.5,
            hints: if accept {
                vec![]
            } else {
                vec![core_quality::Hint::TooDark]
            },
        }
    }

    #[test]
    fn searching_steadying_captured_then_sticky() {
        let mut m = CaptureMachine::new(Default::default(), 2);
        assert!(!m.observe(&q(false, None)));
        assert_eq!(m.state, CaptureState::Searching);
        // First accepted frame has no stability measure yet: steadying, 0 steady frames.
        assert!(!m.observe(&q(true, None)));
        assert_eq!((m.state, m.stable), (CaptureState::Steadying, 0));
        assert!(!m.observe(&q(true, Some(0.99))));
        assert_eq!((m.state, m.stable), (CaptureState::Steadying, 1));
        assert!(m.observe(&q(true, Some(0.99))));
        assert_eq!(m.state, CaptureState::Captured);
        // Captured is sticky: a bad frame afterwards changes nothing and does not capture again.
        assert!(!m.observe(&q(false, Some(0.5))));
        assert_eq!(m.state, CaptureState::Captured);
        m.reset();
        assert_eq!((m.state, m.stable), (CaptureState::Searching, 0));
    }

    #[test]
    fn a_rejected_frame_restarts_the_count() {
        let mut m = CaptureMachine::new(Default::default(), 3);
        m.observe(&q(true, Some(1.0)));
        m.observe(&q(true, Some(1.0)));
        m.observe(&q(false, Some(1.0)));
        assert_eq!((m.state, m.stable), (CaptureState::Searching, 0));
        m.observe(&q(true, Some(1.0)));
        assert_eq!((m.state, m.stable), (CaptureState::Steadying, 1));
    }

    #[test]
    fn zero_stable_frames_is_rejected() {
        let scanner = Scanner::new().unwrap();
        assert!(matches!(
            CaptureSession::new(scanner, 0),
            Err(NetronError::InvalidArgument(_))
        ));
    }
}
