//! Confidence calibration of the scan's text outputs by the height of the text they were read from.
//!
//! The graph's confidences come from the models: a node's `op_confidence` is the classifier's top probability
//! (joined with the OCR's title reading, [`crate::title_ops`]), a tensor label's or a port's `confidence` is the
//! detector's score times the OCR's greedy path probability ([`crate::read::TextRead::confidence`]). Neither is
//! the probability that the reported text is right: the classifier's temperature was fitted on title crops of
//! every size together, so it is too sure of small titles; a path probability is a product over the text's
//! frames, so it is far too low (labels reported at 0.36 are read exactly 85% of the time on the development
//! split). [`calibrate`] maps each through a [`HeightCalibration`] fitted on held-out synthetic views
//! (`models/train/fit_calibration.py`; `models/METRICS.md`, session 25), after which a confidence `p` means
//! "right about `p` of the time" on views like those.

use crate::graph::GraphJson;

/// Box height at which a [`HeightCalibration`]'s `bias` alone shifts a confidence, source px (the title box
/// of a view whose text height is 9 px, [`crate::scanner::ScanParams::min_text_height`]).
pub const REFERENCE_HEIGHT: f32 = 16.0;

/// Platt scaling with the text's height as a second feature, and the weight of the model's own confidence
/// depending on the height too:
///
/// `logit(p') = max(0, slope + slope_per_log_height · l) · logit(p) + per_log_height · l + bias`,
/// `l = ln(h / REFERENCE_HEIGHT)`,
///
/// `p` clamped to `[1e-6, 1 − 1e-6]`, `h` (the box's height, source px) to at least 1 px. The floor at 0 keeps a
/// surer model from ever getting a lower calibrated confidence (with the default `op` parameters it acts only
/// on titles under 2 px). `slope_per_log_height` 0 is plain Platt scaling with a height term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeightCalibration {
    pub slope: f32,
    pub per_log_height: f32,
    pub bias: f32,
    pub slope_per_log_height: f32,
}

impl HeightCalibration {
    /// The calibrated confidence of `p` for text in a box `height` source px tall, in `[0, 1]`. NaN stays NaN.
    pub fn apply(&self, p: f32, height: f32) -> f32 {
        if p.is_nan() {
            return p;
        }
        let p = f64::from(p).clamp(1e-6, 1.0 - 1e-6);
        let l = (f64::from(height).max(1.0) / f64::from(REFERENCE_HEIGHT)).ln();
        let weight = (f64::from(self.slope) + f64::from(self.slope_per_log_height) * l).max(0.0);
        let z = weight * (p / (1.0 - p)).ln()
            + f64::from(self.per_log_height) * l
            + f64::from(self.bias);
        (1.0 / (1.0 + (-z).exp())) as f32
    }
}

/// The calibration of each kind of confidence; `None` leaves that kind as the models gave it. The defaults
/// were fitted on the development split (`v1-s1` held-out scenes 1009–2329, 266 images; `models/METRICS.md`,
/// session 25) and checked on the dense synthetic views (`render_dense`, 240 images): expected calibration
/// error there 0.038 → 0.016 (ops), 0.351 → 0.035 (tensor labels), 0.440 → 0.037 (port names). The `op`
/// parameters were fitted again in session 39 on the development split scaled to 1, 0.7, 0.5, 0.35, 0.25 and
/// 0.15 of its size (`models/train/zoom_set.py`; text down to 2 px), with the height-dependent weight of the
/// classifier's confidence: the session-25 fit, one weight for every height, was too sure of zoomed-out titles
/// (ECE 0.133 at 0.15 of the size, 0.065 at 0.25; now 0.024 and 0.013), with the same ECE at full size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationParams {
    /// Nodes' `op_confidence`, by the height of the node's `title_box`.
    pub op: Option<HeightCalibration>,
    /// Tensor labels' `confidence` that their text (and shape) is exact, by the label box's height.
    pub label: Option<HeightCalibration>,
    /// Inputs' and outputs' `confidence` that their name is exact, by the pill box's height.
    pub port: Option<HeightCalibration>,
}

impl Default for CalibrationParams {
    fn default() -> Self {
        CalibrationParams {
            op: Some(HeightCalibration {
                slope: 1.3324,
                per_log_height: 0.4391,
                bias: -1.1940,
                slope_per_log_height: 0.5964,
            }),
            label: Some(HeightCalibration {
                slope: 0.8066,
                per_log_height: 2.1030,
                bias: 3.9747,
                slope_per_log_height: 0.0,
            }),
            port: Some(HeightCalibration {
                slope: 1.1307,
                per_log_height: 2.0201,
                bias: 3.4921,
                slope_per_log_height: 0.0,
            }),
        }
    }
}

impl CalibrationParams {
    /// No recalibration: the models' confidences as they are.
    pub fn none() -> CalibrationParams {
        CalibrationParams {
            op: None,
            label: None,
            port: None,
        }
    }
}

/// Recalibrates `graph`'s confidences in place: each node's `op_confidence` by its `title_box` (nodes without
/// one keep theirs), each tensor label's and port's `confidence` by its box. A node whose calibrated
/// `op_confidence` is under `min_op_confidence` is marked (`op: None`); no operator, text or box changes
/// otherwise.
pub fn calibrate(graph: &mut GraphJson, params: &CalibrationParams, min_op_confidence: f32) {
    if let Some(c) = params.op {
        for n in &mut graph.nodes {
            let Some(title) = n.title_box else { continue };
            n.op_confidence = c.apply(n.op_confidence, title.height());
            if n.op_confidence < min_op_confidence {
                n.op = None;
            }
        }
    }
    if let Some(c) = params.label {
        for t in &mut graph.tensors {
            t.confidence = c.apply(t.confidence, t.bbox.height());
        }
    }
    if let Some(c) = params.port {
        for p in graph.inputs.iter_mut().chain(&mut graph.outputs) {
            p.confidence = c.apply(p.confidence, p.bbox.height());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Canvas, ImageSize, Node, Port, Tensor};

    #[test]
    fn unit_slope_is_the_identity_and_height_moves_the_confidence() {
        let id = HeightCalibration {
            slope: 1.0,
            per_log_height: 0.0,
            bias: 0.0,
            slope_per_log_height: 0.0,
        };
        for p in [0.01f32, 0.3, 0.5, 0.9, 0.999] {
            assert!((id.apply(p, 5.0) - p).abs() < 1e-5, "{p}");
        }
        assert!(id.apply(f32::NAN, 10.0).is_nan());
        assert!(id.apply(1.0, 10.0) < 1.0 && id.apply(0.0, 10.0) > 0.0);
        let c = HeightCalibration {
            slope: 0.8,
            per_log_height: 1.5,
            bias: 0.2,
            slope_per_log_height: 0.0,
        };
        // At the reference height only slope and bias act: logit 0.9 = ln 9.
        let want = 1.0 / (1.0 + (-(0.8 * 9f64.ln() + 0.2)).exp());
        assert!((f64::from(c.apply(0.9, REFERENCE_HEIGHT)) - want).abs() < 1e-6);
        assert!(c.apply(0.9, 8.0) < c.apply(0.9, 16.0));
        assert!(c.apply(0.9, 16.0) < c.apply(0.9, 32.0));
        assert!(c.apply(0.8, 8.0) < c.apply(0.95, 8.0));
        // Degenerate heights are floored at 1 px, not NaN.
        assert!(c.apply(0.9, 0.0).is_finite());
        assert_eq!(c.apply(0.9, -3.0), c.apply(0.9, 1.0));
    }

    #[test]
    fn the_model_confidence_weighs_less_on_smaller_text_and_never_backwards() {
        let c = HeightCalibration {
            slope: 1.2,
            per_log_height: 0.5,
            bias: -1.0,
            slope_per_log_height: 0.6,
        };
        let logit = |p: f64| (p / (1.0 - p)).ln();
        let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
        // At twice the reference height the weight is 1.2 + 0.6 ln 2.
        let l = 2f64.ln();
        let want = sigmoid((1.2 + 0.6 * l) * logit(0.9) + 0.5 * l - 1.0);
        assert!((f64::from(c.apply(0.9, 2.0 * REFERENCE_HEIGHT)) - want).abs() < 1e-6);
        // The logit spread between a sure and an unsure reading shrinks with the text.
        let spread =
            |h: f32| logit(f64::from(c.apply(0.99, h))) - logit(f64::from(c.apply(0.6, h)));
        assert!(spread(32.0) > spread(16.0) && spread(16.0) > spread(6.0) && spread(6.0) > 0.0);
        // Below the height where the weight reaches 0 (ln(h/16) < −2), the model's confidence no longer counts:
        // the same answer for any p, never a lower one for a higher p.
        assert_eq!(c.apply(0.99, 1.5), c.apply(0.3, 1.5));
        assert!(c.apply(0.99, 1.5) < 0.5);
    }

    fn graph() -> GraphJson {
        let mut g = GraphJson::new(
            ImageSize {
                width: 400,
                height: 400,
            },
            Canvas {
                bbox: [0.0, 0.0, 400.0, 400.0].into(),
                confidence: 1.0,
            },
        );
        let node = |id: &str, title_h: Option<f32>| Node {
            id: id.into(),
            op: Some("Conv".into()),
            op_confidence: 0.9,
            bbox: [10.0, 10.0, 90.0, 60.0].into(),
            confidence: 1.0,
            weights: vec![],
            title_box: title_h.map(|h| [10.0, 10.0, 90.0, 10.0 + h].into()),
            quad: None,
            truncated: None,
        };
        g.nodes = vec![
            node("n0", Some(6.0)),
            node("n1", Some(40.0)),
            node("n2", None),
        ];
        g.tensors = vec![Tensor {
            id: "t0".into(),
            text: "1×3".into(),
            shape: None,
            bbox: [10.0, 100.0, 60.0, 110.0].into(),
            confidence: 0.3,
            quad: None,
            name: None,
        }];
        g.inputs = vec![Port {
            id: "i0".into(),
            name: "x".into(),
            bbox: [10.0, 200.0, 60.0, 230.0].into(),
            confidence: 0.3,
            quad: None,
            truncated: None,
        }];
        g
    }

    #[test]
    fn small_titles_are_marked_and_the_rest_only_rescaled() {
        let params = CalibrationParams {
            op: Some(HeightCalibration {
                slope: 1.0,
                per_log_height: 3.0,
                bias: 0.0,
                slope_per_log_height: 0.0,
            }),
            ..CalibrationParams::none()
        };
        let mut g = graph();
        calibrate(&mut g, &params, 0.5);
        // 6 px: logit 0.9 + 3 ln(6/16) < 0 → marked; 40 px: more sure; no title box: unchanged.
        assert!(g.nodes[0].op.is_none() && g.nodes[0].op_confidence < 0.5);
        assert_eq!(g.nodes[1].op.as_deref(), Some("Conv"));
        assert!(g.nodes[1].op_confidence > 0.9);
        assert_eq!(g.nodes[2].op_confidence, 0.9);
        assert_eq!(g.tensors[0].confidence, 0.3);
        assert_eq!(g.inputs[0].confidence, 0.3);

        let mut g = graph();
        calibrate(&mut g, &CalibrationParams::default(), 0.5);
        assert!(g.tensors[0].confidence > 0.3 && g.inputs[0].confidence > 0.3);
        assert!(g.check().is_empty(), "{:?}", g.check());
        let mut same = graph();
        calibrate(&mut same, &CalibrationParams::none(), 0.5);
        assert_eq!(same, graph());
    }
}
