//! Graph assembly: detected elements with their texts, plus recovered edges → schema-v1 graph JSON
//! (`docs/graph-json.md`).
//!
//! Ids follow the schema's writer convention and the order of the detections: the `k`-th node is `n<k>`, the
//! `k`-th input `i<k>`, the `k`-th output `o<k>`, the `k`-th tensor label `t<k>`. [`Detections::edge_elements`]
//! and [`Detections::edge_labels`] hand the same ids to [`crate::edges::recover_edges`], so its edges plug
//! straight into [`assemble`]. Boxes and points are source-image pixels; confidences are in `[0, 1]`.

use std::collections::{HashMap, HashSet};

use thiserror::Error;

use crate::edges::{self, RecoveredEdge};
use crate::graph::{
    parse_shape_text, BBox, Canvas, Direction, Edge, GraphJson, ImageSize, Node, Point, Port,
    Tensor, Weight,
};

/// One detected operator card with what was read from it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDetection {
    pub bbox: BBox,
    /// Detector confidence.
    pub confidence: f32,
    /// Classified operator, `None` when the classifier was not confident enough.
    pub op: Option<String>,
    /// Top classifier probability (also when `op` is `None`).
    pub op_confidence: f32,
    /// Weight rows, top to bottom.
    pub weights: Vec<Weight>,
    /// Cut by the image or viewport border, when known.
    pub truncated: Option<bool>,
}

/// One detected graph input or output pill.
#[derive(Debug, Clone, PartialEq)]
pub struct PortDetection {
    pub bbox: BBox,
    pub confidence: f32,
    /// The text read from the pill.
    pub name: String,
    pub truncated: Option<bool>,
}

/// One detected tensor label.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelDetection {
    pub bbox: BBox,
    /// Detector confidence (or the product with the OCR confidence, as the caller sees fit).
    pub confidence: f32,
    /// The text read from the label (`1×64×56×56`, or a tensor name in names mode).
    pub text: String,
}

/// Everything found in one image before edges are recovered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detections {
    pub nodes: Vec<NodeDetection>,
    pub inputs: Vec<PortDetection>,
    pub outputs: Vec<PortDetection>,
    pub labels: Vec<LabelDetection>,
}

/// Why a graph could not be assembled.
#[derive(Debug, Error, PartialEq)]
pub enum AssembleError {
    /// A box that is not finite and ordered (`what` is the element's id).
    #[error("box of {what} is not a finite ordered box")]
    BadBox { what: String },
    /// A confidence that is NaN.
    #[error("confidence of {what} is not a number")]
    BadConfidence { what: String },
    /// An edge endpoint that is not a node/input (`from`) or node/output (`to`) id of the detections.
    #[error("edge {from:?} → {to:?} refers to an unknown or wrong-kind id")]
    BadEdge { from: String, to: String },
    /// An edge label that is not a tensor id of the detections.
    #[error("edge {from:?} → {to:?} has unknown label {label:?}")]
    BadLabel {
        from: String,
        to: String,
        label: String,
    },
}

impl Detections {
    /// Schema id of the `k`-th node.
    pub fn node_id(k: usize) -> String {
        format!("n{k}")
    }

    /// Schema id of the `k`-th input.
    pub fn input_id(k: usize) -> String {
        format!("i{k}")
    }

    /// Schema id of the `k`-th output.
    pub fn output_id(k: usize) -> String {
        format!("o{k}")
    }

    /// Schema id of the `k`-th tensor label.
    pub fn tensor_id(k: usize) -> String {
        format!("t{k}")
    }

    /// The nodes, inputs and outputs as [`edges::Element`]s with their schema ids.
    pub fn edge_elements(&self) -> Vec<edges::Element> {
        let nodes = self.nodes.iter().enumerate().map(|(k, n)| edges::Element {
            id: Self::node_id(k),
            kind: edges::ElementKind::Node,
            bbox: n.bbox,
        });
        let inputs = self.inputs.iter().enumerate().map(|(k, p)| edges::Element {
            id: Self::input_id(k),
            kind: edges::ElementKind::Input,
            bbox: p.bbox,
        });
        let outputs = self
            .outputs
            .iter()
            .enumerate()
            .map(|(k, p)| edges::Element {
                id: Self::output_id(k),
                kind: edges::ElementKind::Output,
                bbox: p.bbox,
            });
        nodes.chain(inputs).chain(outputs).collect()
    }

    /// Drops the inputs and outputs that no edge of `edges` joins to a node and that `keep` rejects, renumbering
    /// the ports kept and the edges' endpoints to match; returns how many were dropped. In Netron every graph
    /// input feeds a node and every graph output is fed by one, and a pill's stroke stays in view with the pill,
    /// so a pill without a traced edge is often something else (a truncated card, a stray label).
    pub fn drop_unconnected_ports(
        &mut self,
        edges: &mut [RecoveredEdge],
        keep: impl Fn(&PortDetection) -> bool,
    ) -> usize {
        let connected: HashSet<&str> = edges
            .iter()
            .flat_map(|e| [e.from.as_str(), e.to.as_str()])
            .collect();
        let keep_in: Vec<bool> = (self.inputs.iter().enumerate())
            .map(|(k, p)| connected.contains(Self::input_id(k).as_str()) || keep(p))
            .collect();
        let keep_out: Vec<bool> = (self.outputs.iter().enumerate())
            .map(|(k, p)| connected.contains(Self::output_id(k).as_str()) || keep(p))
            .collect();
        // Old id → new id of every port kept.
        let renumber = |keep: &[bool], id: fn(usize) -> String| -> Vec<(String, String)> {
            keep.iter()
                .enumerate()
                .filter(|(_, &k)| k)
                .enumerate()
                .map(|(new, (old, _))| (id(old), id(new)))
                .collect()
        };
        let renamed: Vec<(String, String)> = renumber(&keep_in, Self::input_id)
            .into_iter()
            .chain(renumber(&keep_out, Self::output_id))
            .filter(|(old, new)| old != new)
            .collect();
        for e in edges.iter_mut() {
            for end in [&mut e.from, &mut e.to] {
                if let Some((_, new)) = renamed.iter().find(|(old, _)| old == end) {
                    *end = new.clone();
                }
            }
        }
        let before = self.inputs.len() + self.outputs.len();
        let mut keep = keep_in.into_iter();
        self.inputs.retain(|_| keep.next().unwrap_or(false));
        let mut keep = keep_out.into_iter();
        self.outputs.retain(|_| keep.next().unwrap_or(false));
        before - self.inputs.len() - self.outputs.len()
    }

    /// Turns the nodes `moved` (node index → the output pill it is) into outputs after the outputs there are,
    /// in the order given, renumbering the nodes kept and the edges' endpoints to match. Indices out of range or
    /// given twice are ignored (the first is taken).
    pub fn nodes_to_outputs(
        &mut self,
        edges: &mut [RecoveredEdge],
        moved: Vec<(usize, PortDetection)>,
    ) {
        let mut is_moved = vec![false; self.nodes.len()];
        let mut renamed: HashMap<String, String> = HashMap::new();
        for (k, port) in moved {
            if k < is_moved.len() && !is_moved[k] {
                is_moved[k] = true;
                renamed.insert(Self::node_id(k), Self::output_id(self.outputs.len()));
                self.outputs.push(port);
            }
        }
        let kept = (0..is_moved.len()).filter(|&k| !is_moved[k]);
        for (new, old) in kept.enumerate() {
            renamed.insert(Self::node_id(old), Self::node_id(new));
        }
        for e in edges.iter_mut() {
            for end in [&mut e.from, &mut e.to] {
                if let Some(new) = renamed.get(end.as_str()) {
                    *end = new.clone();
                }
            }
        }
        let mut moved = is_moved.into_iter();
        self.nodes.retain(|_| !moved.next().unwrap_or(false));
    }

    /// Per tensor label, whether no edge of `edges` carries it.
    pub fn uncarried_labels(&self, edges: &[RecoveredEdge]) -> Vec<bool> {
        let carried: HashSet<&str> = edges.iter().filter_map(|e| e.label.as_deref()).collect();
        (0..self.labels.len())
            .map(|k| !carried.contains(Self::tensor_id(k).as_str()))
            .collect()
    }

    /// Drops the tensor labels that no edge of `edges` carries and that `keep` rejects (given each such label's
    /// index and the edges), renumbering the labels kept and the edges' labels to match. Returns, per label
    /// before, whether it was kept.
    pub fn drop_uncarried_labels(
        &mut self,
        edges: &mut [RecoveredEdge],
        keep: impl Fn(usize, &LabelDetection, &[RecoveredEdge]) -> bool,
    ) -> Vec<bool> {
        let uncarried = self.uncarried_labels(edges);
        let kept: Vec<bool> = (self.labels.iter().enumerate())
            .map(|(k, l)| !uncarried[k] || keep(k, l, edges))
            .collect();
        let renamed: HashMap<String, String> = (0..kept.len())
            .filter(|&k| kept[k])
            .enumerate()
            .map(|(new, old)| (Self::tensor_id(old), Self::tensor_id(new)))
            .collect();
        for e in edges.iter_mut() {
            if let Some(label) = e.label.as_mut() {
                if let Some(new) = renamed.get(label.as_str()) {
                    *label = new.clone();
                }
            }
        }
        let mut flags = kept.iter();
        self.labels.retain(|_| flags.next() == Some(&true));
        kept
    }

    /// The tensor labels as [`edges::Label`]s with their schema ids.
    pub fn edge_labels(&self) -> Vec<edges::Label> {
        self.labels
            .iter()
            .enumerate()
            .map(|(k, l)| edges::Label {
                id: Self::tensor_id(k),
                bbox: l.bbox,
            })
            .collect()
    }
}

fn check_box(b: &BBox, what: &str) -> Result<BBox, AssembleError> {
    if b.is_finite() && b.is_ordered() {
        Ok(*b)
    } else {
        Err(AssembleError::BadBox {
            what: what.to_owned(),
        })
    }
}

/// Clamps a confidence into `[0, 1]`; NaN is an error.
fn check_confidence(c: f32, what: &str) -> Result<f32, AssembleError> {
    if c.is_nan() {
        Err(AssembleError::BadConfidence {
            what: what.to_owned(),
        })
    } else {
        Ok(c.clamp(0.0, 1.0))
    }
}

/// Builds the graph JSON. Confidences are clamped into `[0, 1]`; tensor shapes are parsed from the label texts
/// ([`parse_shape_text`]); edges keep their traced points (non-finite ones dropped) and name their label as
/// `tensor`. Duplicate edges (same `from`, `to` and `tensor`) are kept once, the most confident. The result
/// passes [`GraphJson::check`] whenever this returns `Ok`.
pub fn assemble(
    image: ImageSize,
    canvas: Canvas,
    detections: &Detections,
    recovered: &[RecoveredEdge],
    direction: Option<Direction>,
) -> Result<GraphJson, AssembleError> {
    let canvas = Canvas {
        bbox: check_box(&canvas.bbox, "canvas")?,
        confidence: check_confidence(canvas.confidence, "canvas")?,
    };
    let mut graph = GraphJson::new(image, canvas);
    graph.direction = direction;
    for (k, n) in detections.nodes.iter().enumerate() {
        let id = Detections::node_id(k);
        graph.nodes.push(Node {
            bbox: check_box(&n.bbox, &id)?,
            confidence: check_confidence(n.confidence, &id)?,
            op: n.op.clone().filter(|op| !op.is_empty()),
            op_confidence: check_confidence(n.op_confidence, &id)?,
            weights: n.weights.clone(),
            title_box: None,
            quad: None,
            truncated: n.truncated,
            id,
        });
    }
    for (list, ports, make_id) in [
        (
            &mut graph.inputs,
            &detections.inputs,
            Detections::input_id as fn(usize) -> String,
        ),
        (
            &mut graph.outputs,
            &detections.outputs,
            Detections::output_id,
        ),
    ] {
        for (k, p) in ports.iter().enumerate() {
            let id = make_id(k);
            list.push(Port {
                bbox: check_box(&p.bbox, &id)?,
                confidence: check_confidence(p.confidence, &id)?,
                name: p.name.clone(),
                quad: None,
                truncated: p.truncated,
                id,
            });
        }
    }
    for (k, l) in detections.labels.iter().enumerate() {
        let id = Detections::tensor_id(k);
        graph.tensors.push(Tensor {
            bbox: check_box(&l.bbox, &id)?,
            confidence: check_confidence(l.confidence, &id)?,
            text: l.text.clone(),
            shape: parse_shape_text(&l.text),
            quad: None,
            name: None,
            id,
        });
    }

    let sources: HashSet<String> = (0..detections.nodes.len())
        .map(Detections::node_id)
        .chain((0..detections.inputs.len()).map(Detections::input_id))
        .collect();
    let targets: HashSet<String> = (0..detections.nodes.len())
        .map(Detections::node_id)
        .chain((0..detections.outputs.len()).map(Detections::output_id))
        .collect();
    let tensors: HashSet<String> = (0..detections.labels.len())
        .map(Detections::tensor_id)
        .collect();
    let mut edges: Vec<Edge> = Vec::with_capacity(recovered.len());
    for e in recovered {
        if !sources.contains(&e.from) || !targets.contains(&e.to) {
            return Err(AssembleError::BadEdge {
                from: e.from.clone(),
                to: e.to.clone(),
            });
        }
        if let Some(l) = &e.label {
            if !tensors.contains(l) {
                return Err(AssembleError::BadLabel {
                    from: e.from.clone(),
                    to: e.to.clone(),
                    label: l.clone(),
                });
            }
        }
        let what = format!("edge {} → {}", e.from, e.to);
        let points: Vec<Point> = e
            .points
            .iter()
            .copied()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
            .collect();
        edges.push(Edge {
            from: e.from.clone(),
            to: e.to.clone(),
            tensor: e.label.clone(),
            confidence: check_confidence(e.confidence, &what)?,
            points: (!points.is_empty()).then_some(points),
            name: None,
        });
    }
    // Most confident first within each (from, to, tensor), then keep the first of each.
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by(|&a, &b| {
        edges[b]
            .confidence
            .total_cmp(&edges[a].confidence)
            .then(a.cmp(&b))
    });
    let mut seen = HashSet::new();
    let mut keep = vec![false; edges.len()];
    for i in order {
        let e = &edges[i];
        if seen.insert((e.from.clone(), e.to.clone(), e.tensor.clone())) {
            keep[i] = true;
        }
    }
    graph.edges = edges
        .into_iter()
        .zip(keep)
        .filter_map(|(e, k)| k.then_some(e))
        .collect();
    Ok(graph)
}
