//! End-to-end metrics: a predicted graph against its ground truth (both graph JSON v1, same image).
//!
//! Per image ([`evaluate`]) and summed over images ([`Metrics::add`]), with the ratios in [`Summary`]:
//! - **crop containment**: share of truth element boxes (nodes, inputs, outputs, tensors; clipped to the image)
//!   lying fully inside the predicted `canvas.box`, with a 0.5 px tolerance;
//! - **box F1 per class** (node, tensor, input, output) at IoU ≥ 0.5: per image and class, predictions in
//!   descending confidence each take the unmatched truth box of that class with the highest IoU, if ≥ 0.5
//!   (the matching of `models/train/eval_detector.py`);
//! - **op accuracy**: matched nodes whose predicted `op` equals the truth `op` (a `null` op counts as wrong and
//!   is also counted as *marked*); **op precision** ([`Summary::op_precision`]): the same over the matched nodes
//!   not marked;
//! - **shape exact match**: matched tensor labels whose predicted `shape` equals the truth `shape` (both
//!   parsed dim lists; when the truth label is not a shape, names mode, the texts must be equal);
//! - **port names**: matched inputs/outputs whose name equals the truth name;
//! - **weight rows**: the truth weight rows (`W〈64×3×7×7〉`, `B = 0.5`) of matched nodes whose predicted row at
//!   the same position has the same name and text (weights come first on a card, attributes after them);
//!   *weight precision*: the predicted rows of matched nodes that are such a hit (a predicted attribute row,
//!   which the scanner cannot tell from a scalar weight row, counts as wrong);
//! - **edge F1**: a predicted edge is correct when its endpoints, mapped through the box matching, are the
//!   endpoints of a not yet used truth edge; endpoints without a match make it wrong;
//! - **schema validity**: the prediction passes [`GraphJson::check`] and survives a JSON round trip;
//! - **calibration** ([`Reliability`]): matched nodes with an `op`, binned by `op_confidence`, against op
//!   accuracy; matched tensor labels, binned by their `confidence`, against shape exact match. The summary gives
//!   the expected calibration error (ECE) of each.

use std::collections::HashMap;

use serde::Serialize;

use crate::graph::{BBox, GraphJson, Weight};

/// IoU at which a predicted box matches a truth box.
pub const IOU_MATCH: f32 = 0.5;
/// Tolerance of the crop containment test, pixels.
pub const CONTAIN_TOLERANCE: f32 = 0.5;

/// Element classes evaluated as boxes.
pub const CLASSES: [&str; 4] = ["node", "tensor", "input", "output"];

/// True positives, predictions and truths of one count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    pub tp: usize,
    pub pred: usize,
    pub truth: usize,
}

impl Counts {
    /// `tp / pred`, 1 when nothing was predicted and nothing was there, 0 when only one side is empty.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.pred, self.truth == 0)
    }

    /// `tp / truth` (1 when there is no truth and no prediction).
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.truth, self.pred == 0)
    }

    /// Harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        }
    }

    fn add(&mut self, o: &Counts) {
        self.tp += o.tp;
        self.pred += o.pred;
        self.truth += o.truth;
    }
}

/// Hits out of a total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Share {
    pub hit: usize,
    pub total: usize,
}

impl Share {
    /// `hit / total`, 1 for an empty total.
    pub fn value(&self) -> f64 {
        ratio(self.hit, self.total, true)
    }

    fn add(&mut self, o: &Share) {
        self.hit += o.hit;
        self.total += o.total;
    }
}

/// Bins of [`Reliability`]: equal widths over `[0, 1]`.
pub const RELIABILITY_BINS: usize = 10;

/// A reliability diagram: per confidence bin (`[k/10, (k+1)/10)`, the last one closed), the predictions, how
/// many were right and the sum of their confidences.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Reliability {
    pub count: [usize; RELIABILITY_BINS],
    pub hit: [usize; RELIABILITY_BINS],
    pub confidence: [f64; RELIABILITY_BINS],
}

impl Reliability {
    /// Records one prediction of confidence `c` (clamped to `[0, 1]`; NaN counts as 0).
    pub fn push(&mut self, c: f32, right: bool) {
        let c = if c.is_nan() { 0.0 } else { c.clamp(0.0, 1.0) };
        let k = ((c * RELIABILITY_BINS as f32) as usize).min(RELIABILITY_BINS - 1);
        self.count[k] += 1;
        self.hit[k] += usize::from(right);
        self.confidence[k] += f64::from(c);
    }

    /// Predictions recorded.
    pub fn total(&self) -> usize {
        self.count.iter().sum()
    }

    /// Expected calibration error: `Σ_k n_k / n · |accuracy_k − mean confidence_k|`; 0 when empty.
    pub fn ece(&self) -> f64 {
        let n = self.total();
        if n == 0 {
            return 0.0;
        }
        (0..RELIABILITY_BINS)
            .filter(|&k| self.count[k] > 0)
            .map(|k| (self.hit[k] as f64 - self.confidence[k]).abs())
            .sum::<f64>()
            / n as f64
    }

    /// Mean confidence minus accuracy: positive when over-confident.
    pub fn overconfidence(&self) -> f64 {
        let n = self.total();
        if n == 0 {
            return 0.0;
        }
        (self.confidence.iter().sum::<f64>() - self.hit.iter().sum::<usize>() as f64) / n as f64
    }

    fn add(&mut self, o: &Reliability) {
        for k in 0..RELIABILITY_BINS {
            self.count[k] += o.count[k];
            self.hit[k] += o.hit[k];
            self.confidence[k] += o.confidence[k];
        }
    }
}

fn ratio(a: usize, b: usize, empty_is_one: bool) -> f64 {
    if b == 0 {
        if empty_is_one {
            1.0
        } else {
            0.0
        }
    } else {
        a as f64 / b as f64
    }
}

/// Metrics of one image (also the sum over images, [`Metrics::add`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Metrics {
    /// Truth element boxes inside the predicted canvas.
    pub crop_containment: Share,
    /// Box counts per class, in [`CLASSES`] order.
    pub boxes: [Counts; 4],
    /// Matched nodes with the right op.
    pub op_accuracy: Share,
    /// Matched nodes the classifier marked (`op: null`).
    pub op_marked: Share,
    /// Matched tensor labels with the exact shape (or text, in names mode).
    pub shape_exact: Share,
    /// Matched inputs and outputs with the exact name.
    pub port_names: Share,
    /// Truth weight rows of matched nodes read exactly (name and text, same position).
    pub weight_exact: Share,
    /// Predicted rows of matched nodes equal to the truth weight row at their position.
    pub weight_precision: Share,
    /// Edges.
    pub edges: Counts,
    /// Predictions passing the graph checks.
    pub schema_valid: Share,
    /// Images whose truth has no node (no Netron graph), and of those the ones given a node anyway: invented
    /// graphs, which the standards forbid.
    pub invented: Share,
    /// Images whose truth has nodes, and of those the ones given none: views emptied.
    pub emptied: Share,
    /// `op_confidence` of matched nodes with an op against op accuracy.
    pub op_reliability: Reliability,
    /// `confidence` of matched tensor labels against shape exact match.
    pub shape_reliability: Reliability,
}

impl Metrics {
    /// Adds another image's counts.
    pub fn add(&mut self, o: &Metrics) {
        self.crop_containment.add(&o.crop_containment);
        for (a, b) in self.boxes.iter_mut().zip(&o.boxes) {
            a.add(b);
        }
        self.op_accuracy.add(&o.op_accuracy);
        self.op_marked.add(&o.op_marked);
        self.shape_exact.add(&o.shape_exact);
        self.port_names.add(&o.port_names);
        self.weight_exact.add(&o.weight_exact);
        self.weight_precision.add(&o.weight_precision);
        self.edges.add(&o.edges);
        self.schema_valid.add(&o.schema_valid);
        self.invented.add(&o.invented);
        self.emptied.add(&o.emptied);
        self.op_reliability.add(&o.op_reliability);
        self.shape_reliability.add(&o.shape_reliability);
    }

    /// Box counts of one class (`"node"`, `"tensor"`, `"input"`, `"output"`).
    pub fn class(&self, name: &str) -> Counts {
        CLASSES
            .iter()
            .position(|c| *c == name)
            .map(|i| self.boxes[i])
            .unwrap_or_default()
    }

    /// Inputs and outputs together.
    pub fn ports(&self) -> Counts {
        let mut c = self.boxes[2];
        c.add(&self.boxes[3]);
        c
    }

    /// Mean of the four per-class box F1 values.
    pub fn mean_box_f1(&self) -> f64 {
        self.boxes.iter().map(Counts::f1).sum::<f64>() / 4.0
    }
}

/// The headline ratios of a [`Metrics`] sum.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Summary {
    pub crop_containment: f64,
    pub node_f1: f64,
    pub tensor_f1: f64,
    pub input_f1: f64,
    pub output_f1: f64,
    /// Inputs and outputs together.
    pub port_f1: f64,
    pub mean_box_f1: f64,
    pub op_accuracy: f64,
    pub op_marked: f64,
    /// Of the matched nodes given an operator (not marked), the share whose operator is right: what a consumer
    /// can trust of the operators it is told (1 when every node is marked).
    pub op_precision: f64,
    pub shape_exact: f64,
    pub port_names: f64,
    pub weight_exact: f64,
    pub weight_precision: f64,
    pub edge_precision: f64,
    pub edge_recall: f64,
    pub edge_f1: f64,
    pub schema_valid: f64,
    /// Of the images without a graph in truth, the share given one ([`Metrics::invented`]; 0 when there are none).
    pub invented: f64,
    /// Of the images with nodes in truth, the share given none ([`Metrics::emptied`]; 0 when there are none).
    pub emptied: f64,
    /// Expected calibration error of `op_confidence` ([`Reliability::ece`]).
    pub op_ece: f64,
    /// Expected calibration error of the tensor labels' `confidence` for their shapes.
    pub shape_ece: f64,
}

impl From<&Metrics> for Summary {
    fn from(m: &Metrics) -> Summary {
        Summary {
            crop_containment: m.crop_containment.value(),
            node_f1: m.boxes[0].f1(),
            tensor_f1: m.boxes[1].f1(),
            input_f1: m.boxes[2].f1(),
            output_f1: m.boxes[3].f1(),
            port_f1: m.ports().f1(),
            mean_box_f1: m.mean_box_f1(),
            op_accuracy: m.op_accuracy.value(),
            op_marked: m.op_marked.value(),
            op_precision: ratio(
                m.op_accuracy.hit,
                m.op_accuracy.total.saturating_sub(m.op_marked.hit),
                true,
            ),
            shape_exact: m.shape_exact.value(),
            port_names: m.port_names.value(),
            weight_exact: m.weight_exact.value(),
            weight_precision: m.weight_precision.value(),
            edge_precision: m.edges.precision(),
            edge_recall: m.edges.recall(),
            edge_f1: m.edges.f1(),
            schema_valid: m.schema_valid.value(),
            invented: ratio(m.invented.hit, m.invented.total, false),
            emptied: ratio(m.emptied.hit, m.emptied.total, false),
            op_ece: m.op_reliability.ece(),
            shape_ece: m.shape_reliability.ece(),
        }
    }
}

/// Greedy matching of one class: `(pred → truth index, truth → pred index)`.
pub fn match_boxes(
    pred: &[(BBox, f32)],
    truth: &[BBox],
    iou_min: f32,
) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let mut order: Vec<usize> = (0..pred.len()).collect();
    order.sort_by(|&a, &b| pred[b].1.total_cmp(&pred[a].1).then(a.cmp(&b)));
    let mut p2t = vec![None; pred.len()];
    let mut t2p = vec![None; truth.len()];
    for p in order {
        let best = truth
            .iter()
            .enumerate()
            .filter(|(t, _)| t2p[*t].is_none())
            .map(|(t, b)| (t, pred[p].0.iou(b)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        if let Some((t, iou)) = best {
            if iou >= iou_min {
                p2t[p] = Some(t);
                t2p[t] = Some(p);
            }
        }
    }
    (p2t, t2p)
}

/// Matches one class: counts and the matched (pred id, truth id) pairs. Truth boxes are clipped to the image.
fn match_class<'a>(
    pred_items: &[(&'a str, BBox, f32)],
    truth_items: &[(&'a str, BBox)],
    w: f32,
    h: f32,
) -> (Counts, Vec<(&'a str, &'a str)>) {
    let pb: Vec<(BBox, f32)> = pred_items.iter().map(|(_, b, c)| (*b, *c)).collect();
    let tb: Vec<BBox> = truth_items.iter().map(|(_, b)| clip(b, w, h)).collect();
    let (p2t, _) = match_boxes(&pb, &tb, IOU_MATCH);
    let pairs: Vec<(&str, &str)> = p2t
        .iter()
        .enumerate()
        .filter_map(|(p, t)| t.map(|t| (pred_items[p].0, truth_items[t].0)))
        .collect();
    let counts = Counts {
        tp: pairs.len(),
        pred: pred_items.len(),
        truth: truth_items.len(),
    };
    (counts, pairs)
}

fn clip(b: &BBox, w: f32, h: f32) -> BBox {
    BBox::new(
        b.x0.clamp(0.0, w),
        b.y0.clamp(0.0, h),
        b.x1.clamp(0.0, w),
        b.y1.clamp(0.0, h),
    )
}

/// Compares a prediction with the truth of the same image.
pub fn evaluate(pred: &GraphJson, truth: &GraphJson) -> Metrics {
    let mut m = Metrics::default();
    let (w, h) = (truth.image.width as f32, truth.image.height as f32);

    let canvas = pred.canvas.bbox;
    let t = CONTAIN_TOLERANCE;
    let truth_boxes = truth
        .nodes
        .iter()
        .map(|n| n.bbox)
        .chain(truth.inputs.iter().map(|p| p.bbox))
        .chain(truth.outputs.iter().map(|p| p.bbox))
        .chain(truth.tensors.iter().map(|x| x.bbox));
    for b in truth_boxes {
        let b = clip(&b, w, h);
        m.crop_containment.total += 1;
        if b.x0 >= canvas.x0 - t
            && b.y0 >= canvas.y0 - t
            && b.x1 <= canvas.x1 + t
            && b.y1 <= canvas.y1 + t
        {
            m.crop_containment.hit += 1;
        }
    }

    // Box matching per class.
    let nodes = match_class(
        &pred
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.bbox, n.confidence))
            .collect::<Vec<_>>(),
        &truth
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.bbox))
            .collect::<Vec<_>>(),
        w,
        h,
    );
    let tensors = match_class(
        &pred
            .tensors
            .iter()
            .map(|n| (n.id.as_str(), n.bbox, n.confidence))
            .collect::<Vec<_>>(),
        &truth
            .tensors
            .iter()
            .map(|n| (n.id.as_str(), n.bbox))
            .collect::<Vec<_>>(),
        w,
        h,
    );
    let inputs = match_class(
        &pred
            .inputs
            .iter()
            .map(|n| (n.id.as_str(), n.bbox, n.confidence))
            .collect::<Vec<_>>(),
        &truth
            .inputs
            .iter()
            .map(|n| (n.id.as_str(), n.bbox))
            .collect::<Vec<_>>(),
        w,
        h,
    );
    let outputs = match_class(
        &pred
            .outputs
            .iter()
            .map(|n| (n.id.as_str(), n.bbox, n.confidence))
            .collect::<Vec<_>>(),
        &truth
            .outputs
            .iter()
            .map(|n| (n.id.as_str(), n.bbox))
            .collect::<Vec<_>>(),
        w,
        h,
    );
    m.boxes = [nodes.0, tensors.0, inputs.0, outputs.0];
    let (node_pairs, tensor_pairs, input_pairs, output_pairs) =
        (nodes.1, tensors.1, inputs.1, outputs.1);
    // Predicted id → truth id, for the edges.
    let mut id_map: HashMap<&str, &str> = HashMap::new();

    let pred_node: HashMap<&str, _> = pred.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let truth_node: HashMap<&str, _> = truth.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    for (p, t) in &node_pairs {
        let (pn, tn) = (pred_node[p], truth_node[t]);
        m.op_accuracy.total += 1;
        m.op_marked.total += 1;
        match &pn.op {
            Some(op) => {
                let right = Some(op) == tn.op.as_ref();
                m.op_accuracy.hit += usize::from(right);
                m.op_reliability.push(pn.op_confidence, right);
            }
            None => m.op_marked.hit += 1,
        }
        let same = |pw: &Weight, tw: &Weight| {
            pw.name.trim() == tw.name.trim() && pw.text.trim() == tw.text.trim()
        };
        let hits = pn
            .weights
            .iter()
            .zip(&tn.weights)
            .filter(|(pw, tw)| same(pw, tw))
            .count();
        m.weight_exact.total += tn.weights.len();
        m.weight_exact.hit += hits;
        m.weight_precision.total += pn.weights.len();
        m.weight_precision.hit += hits;
    }
    let pred_tensor: HashMap<&str, _> = pred.tensors.iter().map(|n| (n.id.as_str(), n)).collect();
    let truth_tensor: HashMap<&str, _> = truth.tensors.iter().map(|n| (n.id.as_str(), n)).collect();
    for (p, t) in &tensor_pairs {
        let (pt, tt) = (pred_tensor[p], truth_tensor[t]);
        m.shape_exact.total += 1;
        let ok = match &tt.shape {
            Some(shape) => pt.shape.as_ref() == Some(shape),
            None => pt.shape.is_none() && pt.text.trim() == tt.text.trim(),
        };
        if ok {
            m.shape_exact.hit += 1;
        }
        m.shape_reliability.push(pt.confidence, ok);
    }
    let port_name = |g: &GraphJson, id: &str| {
        g.inputs
            .iter()
            .chain(&g.outputs)
            .find(|p| p.id == id)
            .map(|p| p.name.clone())
    };
    for (p, t) in input_pairs.iter().chain(&output_pairs) {
        m.port_names.total += 1;
        if port_name(pred, p)
            .is_some_and(|n| Some(n.trim()) == port_name(truth, t).as_deref().map(str::trim))
        {
            m.port_names.hit += 1;
        }
    }

    for (p, t) in node_pairs.iter().chain(&input_pairs).chain(&output_pairs) {
        id_map.insert(p, t);
    }
    let mut unused: Vec<(&str, &str)> = truth
        .edges
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str()))
        .collect();
    let mut tp = 0;
    for e in &pred.edges {
        let (Some(f), Some(to)) = (id_map.get(e.from.as_str()), id_map.get(e.to.as_str())) else {
            continue;
        };
        if let Some(k) = unused.iter().position(|(a, b)| a == f && b == to) {
            unused.swap_remove(k);
            tp += 1;
        }
    }
    m.edges = Counts {
        tp,
        pred: pred.edges.len(),
        truth: truth.edges.len(),
    };

    let valid = pred.check().is_empty()
        && pred
            .to_json()
            .ok()
            .and_then(|s| GraphJson::from_json(&s).ok())
            .is_some();
    m.schema_valid = Share {
        hit: usize::from(valid),
        total: 1,
    };
    let given_nodes = !pred.nodes.is_empty();
    if truth.nodes.is_empty() {
        m.invented = Share {
            hit: usize::from(given_nodes),
            total: 1,
        };
    } else {
        m.emptied = Share {
            hit: usize::from(!given_nodes),
            total: 1,
        };
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Canvas, Edge, ImageSize, Node};

    fn node(id: &str, op: Option<&str>, b: [f32; 4], c: f32) -> Node {
        Node {
            id: id.into(),
            op: op.map(str::to_owned),
            op_confidence: 1.0,
            bbox: b.into(),
            confidence: c,
            weights: vec![],
            title_box: None,
            quad: None,
            truncated: None,
        }
    }

    fn edge(a: &str, b: &str) -> Edge {
        Edge {
            from: a.into(),
            to: b.into(),
            tensor: None,
            confidence: 1.0,
            points: None,
            name: None,
        }
    }

    fn graph(nodes: Vec<Node>, edges: Vec<Edge>) -> GraphJson {
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
        g.nodes = nodes;
        g.edges = edges;
        g
    }

    #[test]
    fn perfect_prediction_scores_one() {
        let t = graph(
            vec![
                node("n0", Some("Conv"), [10.0, 10.0, 90.0, 40.0], 1.0),
                node("n1", Some("Relu"), [10.0, 80.0, 90.0, 110.0], 1.0),
            ],
            vec![edge("n0", "n1")],
        );
        let m = evaluate(&t, &t);
        assert_eq!(m.class("node").f1(), 1.0);
        assert_eq!(m.op_accuracy.value(), 1.0);
        assert_eq!(m.edges.f1(), 1.0);
        assert_eq!(m.crop_containment.value(), 1.0);
        assert_eq!(m.schema_valid.value(), 1.0);
    }

    #[test]
    fn edges_map_through_the_box_matching() {
        let t = graph(
            vec![
                node("n0", Some("Conv"), [10.0, 10.0, 90.0, 40.0], 1.0),
                node("n1", Some("Relu"), [10.0, 80.0, 90.0, 110.0], 1.0),
            ],
            vec![edge("n0", "n1")],
        );
        // Same boxes with swapped ids and one wrong op; the edge is drawn the same way.
        let p = graph(
            vec![
                node("n0", Some("Relu"), [11.0, 80.0, 90.0, 110.0], 0.9),
                node("n1", Some("Gemm"), [10.0, 11.0, 90.0, 40.0], 0.8),
            ],
            vec![edge("n1", "n0"), edge("n0", "n1")],
        );
        let m = evaluate(&p, &t);
        assert_eq!(m.class("node").tp, 2);
        assert_eq!(m.op_accuracy, Share { hit: 1, total: 2 });
        assert_eq!(
            m.edges,
            Counts {
                tp: 1,
                pred: 2,
                truth: 1
            }
        );
    }

    #[test]
    fn empty_prediction_has_zero_recall() {
        let t = graph(
            vec![node("n0", Some("Conv"), [10.0, 10.0, 90.0, 40.0], 1.0)],
            vec![],
        );
        let mut p = graph(vec![], vec![]);
        p.canvas.bbox = [200.0, 200.0, 300.0, 300.0].into();
        let m = evaluate(&p, &t);
        assert_eq!(m.class("node").recall(), 0.0);
        assert_eq!(m.crop_containment.value(), 0.0);
    }

    #[test]
    fn graphs_invented_and_views_emptied_are_counted_per_image() {
        let card = || node("n0", Some("Conv"), [10.0, 10.0, 90.0, 40.0], 1.0);
        let (with, without) = (graph(vec![card()], vec![]), graph(vec![], vec![]));
        let none = Share { hit: 0, total: 0 };
        let cases = [
            (&with, &without, Share { hit: 1, total: 1 }, none),
            (&without, &without, Share { hit: 0, total: 1 }, none),
            (&without, &with, none, Share { hit: 1, total: 1 }),
            (&with, &with, none, Share { hit: 0, total: 1 }),
        ];
        let mut sum = Metrics::default();
        for (pred, truth, invented, emptied) in cases {
            let m = evaluate(pred, truth);
            assert_eq!((m.invented, m.emptied), (invented, emptied));
            sum.add(&m);
        }
        let s = Summary::from(&sum);
        assert_eq!((s.invented, s.emptied), (0.5, 0.5));
    }

    #[test]
    fn low_iou_does_not_match() {
        let (p2t, t2p) = match_boxes(
            &[(BBox::new(0.0, 0.0, 10.0, 10.0), 1.0)],
            &[BBox::new(6.0, 0.0, 16.0, 10.0)],
            0.5,
        );
        assert_eq!(p2t, vec![None]);
        assert_eq!(t2p, vec![None]);
    }

    #[test]
    fn reliability_measures_the_gap_between_confidence_and_accuracy() {
        let mut r = Reliability::default();
        // Bin 9: four at 0.95, two right; bin 5: two at 0.55, both right; 1.0 falls in the last bin.
        for right in [true, true, false, false] {
            r.push(0.95, right);
        }
        r.push(0.55, true);
        r.push(0.55, true);
        r.push(1.0, true);
        assert_eq!(r.total(), 7);
        assert_eq!(r.count[9], 5);
        assert_eq!(r.hit[9], 3);
        let want = (3.0f64 - (4.0 * 0.95 + 1.0)).abs() / 7.0 + (2.0f64 - 1.1).abs() / 7.0;
        assert!((r.ece() - want).abs() < 1e-6, "{} vs {want}", r.ece());
        assert!(r.overconfidence() > 0.0);
        assert_eq!(Reliability::default().ece(), 0.0);
    }

    #[test]
    fn op_confidence_is_scored_on_nodes_with_an_op() {
        let t = graph(
            vec![
                node("n0", Some("Conv"), [10.0, 10.0, 90.0, 40.0], 1.0),
                node("n1", Some("Relu"), [10.0, 80.0, 90.0, 110.0], 1.0),
                node("n2", Some("Add"), [10.0, 150.0, 90.0, 180.0], 1.0),
            ],
            vec![],
        );
        let mut p = t.clone();
        p.nodes[0].op_confidence = 0.9;
        p.nodes[1].op = Some("Sigmoid".into());
        p.nodes[1].op_confidence = 0.9;
        p.nodes[2].op = None;
        let m = evaluate(&p, &t);
        assert_eq!(m.op_reliability.total(), 2);
        assert_eq!(m.op_reliability.hit[9], 1);
        assert!((m.op_reliability.ece() - 0.4).abs() < 1e-6);
        // One right, one wrong, one marked: accuracy 1/3, precision 1/2 (the marked node is not counted).
        let s = Summary::from(&m);
        assert!((s.op_accuracy - 1.0 / 3.0).abs() < 1e-9);
        assert!((s.op_marked - 1.0 / 3.0).abs() < 1e-9);
        assert!((s.op_precision - 0.5).abs() < 1e-9);
        p.nodes[0].op = None;
        p.nodes[1].op = None;
        assert_eq!(Summary::from(&evaluate(&p, &t)).op_precision, 1.0);
    }
}
