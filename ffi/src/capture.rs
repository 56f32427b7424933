//! `CaptureSession`: turns a camera stream into a capture, frame by frame.
//!
//! States, driven by the quality gate (`netron_ocr_core::quality::FrameGate`):
//! * `Searching`: the last frame was rejected (its hints say why: too dark, glare, hold steady, move closer…).
//! * `Steadying`: the last frame was accepted, but fewer than `stable_frames` accepted frames *with a stability
//!   measure* (i.e. compared with the frame before and found steady) have come in a row.
//! * `Captured`: `stable_frames` such frames in a row. The session stays captured, whatever comes next, until
//!   `reset()`.
//!
//! Every frame that counts towards the capture (accepted and steady) is scanned as it comes in, so a push of
//! such a frame takes a scan's time. When the capture completes, the graphs of those `stable_frames` frames are
//! fused by voting (`crate::fusion`: elements matched by box IoU, majority vote on ops and texts, elements kept
//! when seen in most frames) into the update's `result`, whose `frames` says how many were fused. A rejected
//! frame drops the scans collected so far (the camera moved or the view got worse).
//!
//! An invalid frame (bad geometry) returns its error and changes nothing; so does a frame whose scan fails (it
//! is not counted).

use std::sync::{Arc, Mutex, MutexGuard};

use netron_ocr_core::frame as core_frame;
use netron_ocr_core::quality as core_quality;

use crate::boundary::guarded;
use crate::error::NetronError;
use crate::fusion::fuse;
use crate::scan_result::{ScanResult, StageTimings};
use crate::scanner::Scanner;
use crate::types::{select_planes, FrameInfo, FrameQuality, Hint};
use netron_ocr_core::scanner as core_scanner;

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
    /// The fused scan result once captured (`result.frames` frames fused); `None` before.
    pub result: Option<ScanResult>,
}

/// The session's state machine, without the scanning (pure; unit-tested below).
#[derive(Debug)]
pub(crate) struct CaptureMachine {
    gate: core_quality::FrameGate,
    required: u32,
    stable: u32,
    state: CaptureState,
    /// Scans of the steady frames of the current run, oldest first.
    scans: Vec<core_scanner::ScanResult>,
    result: Option<ScanResult>,
}

impl CaptureMachine {
    pub(crate) fn new(params: core_quality::QualityParams, required: u32) -> Self {
        CaptureMachine {
            gate: core_quality::FrameGate::new(params),
            required,
            stable: 0,
            state: CaptureState::Searching,
            scans: Vec::new(),
            result: None,
        }
    }

    /// Whether a frame of this quality counts towards the capture (and so is to be scanned): accepted, with a
    /// stability measure (it passed the gate's motion check against the previous frame), not yet captured.
    pub(crate) fn counts(&self, quality: &core_quality::FrameQuality) -> bool {
        self.state != CaptureState::Captured && quality.accept && quality.stability.is_some()
    }

    /// Advances on one assessed frame, with its scan when it [`counts`](Self::counts) (`None` in tests of the
    /// state machine alone). When this frame completes the capture, the collected scans are fused into
    /// `result`. Returns whether this frame completed the capture.
    pub(crate) fn observe(
        &mut self,
        quality: &core_quality::FrameQuality,
        scan: Option<core_scanner::ScanResult>,
    ) -> Result<bool, NetronError> {
        if self.state == CaptureState::Captured {
            return Ok(false);
        }
        if !quality.accept {
            self.stable = 0;
            self.scans.clear();
            self.state = CaptureState::Searching;
            return Ok(false);
        }
        if quality.stability.is_some() {
            self.stable += 1;
            self.scans.extend(scan);
        }
        if self.stable >= self.required {
            self.state = CaptureState::Captured;
            self.result = self.fused(quality)?;
            Ok(true)
        } else {
            self.state = CaptureState::Steadying;
            Ok(false)
        }
    }

    /// The collected scans fused, with the capturing frame's quality and the stage timings summed over the scans.
    /// The text height is the median of the scans'; `ZoomIn` joins the hints when most scans gave it.
    fn fused(
        &mut self,
        quality: &core_quality::FrameQuality,
    ) -> Result<Option<ScanResult>, NetronError> {
        let scans = std::mem::take(&mut self.scans);
        let graphs: Vec<_> = scans.iter().map(|s| s.graph.clone()).collect();
        let Some(graph) = fuse(&graphs) else {
            return Ok(None);
        };
        let timings = scans.iter().fold(StageTimings::default(), |sum, s| {
            sum.add(&StageTimings::from(s.timings))
        });
        let zoom_in = core_quality::Hint::ZoomIn;
        let mut quality = quality.clone();
        let flagged = scans
            .iter()
            .filter(|s| s.quality.hints.contains(&zoom_in))
            .count();
        if 2 * flagged > scans.len() && !quality.hints.contains(&zoom_in) {
            quality.hints.push(zoom_in);
        }
        let heights = scans.iter().filter_map(|s| s.text_height).map(f64::from);
        let text_height = netron_ocr_core::classify::median(heights.collect()).map(|h| h as f32);
        let frames = scans.len() as u32;
        ScanResult::from_core(&graph, quality.into(), text_height, timings, frames).map(Some)
    }

    /// The update after a frame of this gate `quality` was observed: its scan found the text too small
    /// (`small_text`: `ZoomIn` joins the hints), or it completed the capture (`captured_now`: the update shows the
    /// fused result's verdict, the gate's with `ZoomIn` by majority).
    pub(crate) fn update(
        &self,
        quality: core_quality::FrameQuality,
        small_text: bool,
        captured_now: bool,
    ) -> CaptureUpdate {
        let mut quality = FrameQuality::from(quality);
        match &self.result {
            Some(r) if captured_now => quality = r.quality.clone(),
            _ if small_text && !quality.hints.contains(&Hint::ZoomIn) => {
                quality.hints.push(Hint::ZoomIn)
            }
            _ => {}
        }
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
        self.scans.clear();
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

    /// Pushes one assessed frame; `rgb` converts the frame for its scan, only when the frame counts towards the
    /// capture.
    fn push(
        &self,
        assess: impl FnOnce(
            &mut core_quality::FrameGate,
        ) -> Result<core_quality::FrameQuality, NetronError>,
        rgb: impl FnOnce() -> Result<image::RgbImage, NetronError>,
    ) -> Result<CaptureUpdate, NetronError> {
        let mut m = self.machine();
        let quality = assess(&mut m.gate)?;
        let scan = if m.counts(&quality) {
            Some(self.scanner.scan_core_rgb(&rgb()?)?)
        } else {
            None
        };
        // The scan assessed the image alone (no stability); only its `ZoomIn` joins the gate's verdict.
        let small_text = scan
            .as_ref()
            .is_some_and(|s| s.quality.hints.contains(&core_quality::Hint::ZoomIn));
        let captured = m.observe(&quality, scan)?;
        if captured {
            log::debug!("captured: {} frame(s) fused", m.required);
        }
        Ok(m.update(quality, small_text, captured))
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

    /// Starts over: `Searching`, no previous frame, no collected scans, no result.
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

    impl CaptureMachine {
        fn observe_q(&mut self, quality: &core_quality::FrameQuality) -> bool {
            self.observe(quality, None).unwrap()
        }
    }

    fn scan(graph: netron_ocr_core::graph::GraphJson) -> core_scanner::ScanResult {
        core_scanner::ScanResult {
            graph,
            quality: q(true, Some(1.0)),
            text_height: Some(12.0),
            timings: core_scanner::StageTimings {
                detect: 2.0,
                ..Default::default()
            },
            debug: None,
        }
    }

    #[test]
    fn captured_result_fuses_the_steady_frames() {
        let frames = crate::fusion::tests::three_frames();
        let mut m = CaptureMachine::new(Default::default(), 3);
        assert!(!m.observe(&q(true, None), None).unwrap()); // first frame: no stability, not scanned
        assert!(!m.counts(&q(true, None)));
        for f in &frames[..2] {
            assert!(m.counts(&q(true, Some(1.0))));
            assert!(!m
                .observe(&q(true, Some(1.0)), Some(scan(f.clone())))
                .unwrap());
        }
        assert!(m.result.is_none());
        assert!(m
            .observe(&q(true, Some(1.0)), Some(scan(frames[2].clone())))
            .unwrap());
        let r = m.result.clone().expect("fused result");
        assert_eq!(r.frames, 3);
        assert_eq!(r.timings.detect_ms, 6.0);
        let fused = crate::fusion::fuse(&frames).unwrap();
        assert_eq!(r.graph_json, fused.to_json().unwrap());
        // The spurious node of frame 0 is gone; the typed graph says the same as the JSON.
        assert_eq!(r.graph.nodes.len(), 2);
        assert_eq!(r.graph.nodes[0].op.as_deref(), Some("Conv"));
        assert!(!m.counts(&q(true, Some(1.0)))); // captured: nothing more is scanned
        m.reset();
        assert!(m.result.is_none() && m.scans.is_empty());
    }

    #[test]
    fn fused_result_says_zoom_in_when_most_frames_did() {
        let frames = crate::fusion::tests::three_frames();
        let small = |graph, h: f32| {
            let mut s = scan(graph);
            s.text_height = Some(h);
            if h < 9.0 {
                s.quality.hints.push(core_quality::Hint::ZoomIn);
            }
            s
        };
        for (heights, zoom_in, median) in [
            ([7.0, 8.0, 12.0], true, 8.0),
            ([7.0, 12.0, 13.0], false, 12.0),
        ] {
            let mut m = CaptureMachine::new(Default::default(), 3);
            for (f, h) in frames.iter().zip(heights) {
                m.observe(&q(true, Some(1.0)), Some(small(f.clone(), h)))
                    .unwrap();
            }
            let r = m.result.clone().expect("fused result");
            assert_eq!(
                r.quality.hints.contains(&Hint::ZoomIn),
                zoom_in,
                "{heights:?}"
            );
            assert_eq!(r.text_height, Some(median));
            // The capturing frame's update shows the fused verdict; a later (sticky) frame its own gate's.
            let u = m.update(q(true, Some(1.0)), heights[2] < 9.0, true);
            assert_eq!((&u.quality, &u.hints), (&r.quality, &r.quality.hints));
            let later = m.update(q(true, Some(1.0)), false, false);
            assert!(later.hints.is_empty() && later.state == CaptureState::Captured);
        }
        // A steadying frame whose scan found small text shows `ZoomIn` beside the gate's hints.
        let mut m = CaptureMachine::new(Default::default(), 3);
        m.observe(&q(true, Some(1.0)), Some(small(frames[0].clone(), 7.0)))
            .unwrap();
        let u = m.update(q(true, Some(1.0)), true, false);
        assert_eq!(u.state, CaptureState::Steadying);
        assert_eq!(
            (u.hints.clone(), u.quality.hints),
            (vec![Hint::ZoomIn], vec![Hint::ZoomIn])
        );
        assert!(m.update(q(true, Some(1.0)), false, false).hints.is_empty());
    }

    #[test]
    fn a_rejected_frame_drops_the_collected_scans() {
        let frames = crate::fusion::tests::three_frames();
        let mut m = CaptureMachine::new(Default::default(), 2);
        m.observe(&q(true, Some(1.0)), Some(scan(frames[0].clone())))
            .unwrap();
        m.observe_q(&q(false, Some(1.0)));
        assert!(m.scans.is_empty());
        m.observe(&q(true, Some(1.0)), Some(scan(frames[1].clone())))
            .unwrap();
        assert!(m
            .observe(&q(true, Some(1.0)), Some(scan(frames[2].clone())))
            .unwrap());
        let r = m.result.unwrap();
        assert_eq!(r.frames, 2);
        // Frames 1 and 2 only (frame 0's scan was dropped): both nodes are seen in both frames, so kept; the input
        // names tie in votes and confidence ("dala" 0.9, "data" 0.9), so the first frame's wins.
        assert_eq!(r.graph.nodes.len(), 2);
        assert_eq!(r.graph.inputs[0].name, "dala");
    }

    #[test]
    fn searching_steadying_captured_then_sticky() {
        let mut m = CaptureMachine::new(Default::default(), 2);
        assert!(!m.observe_q(&q(false, None)));
        assert_eq!(m.state, CaptureState::Searching);
        // First accepted frame has no stability measure yet: steadying, 0 steady frames.
        assert!(!m.observe_q(&q(true, None)));
        assert_eq!((m.state, m.stable), (CaptureState::Steadying, 0));
        assert!(!m.observe_q(&q(true, Some(0.99))));
        assert_eq!((m.state, m.stable), (CaptureState::Steadying, 1));
        assert!(m.observe_q(&q(true, Some(0.99))));
        assert_eq!(m.state, CaptureState::Captured);
        assert!(m.result.is_none()); // nothing was scanned
                                     // Captured is sticky: a bad frame afterwards changes nothing and does not capture again.
        assert!(!m.observe_q(&q(false, Some(0.5))));
        assert_eq!(m.state, CaptureState::Captured);
        m.reset();
        assert_eq!((m.state, m.stable), (CaptureState::Searching, 0));
    }

    #[test]
    fn a_rejected_frame_restarts_the_count() {
        let mut m = CaptureMachine::new(Default::default(), 3);
        m.observe_q(&q(true, Some(1.0)));
        m.observe_q(&q(true, Some(1.0)));
        m.observe_q(&q(false, Some(1.0)));
        assert_eq!((m.state, m.stable), (CaptureState::Searching, 0));
        m.observe_q(&q(true, Some(1.0)));
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
