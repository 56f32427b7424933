//! What a scan returns across the boundary: [`ScanResult`], holding the graph twice — as typed records
//! ([`ScanGraph`] and the records below, mirrors of `netron_ocr_core::graph`) and as graph JSON v1 text
//! (`docs/graph-json.md`, the library's output contract) — plus the frame's quality verdict and per-stage timings.
//!
//! The typed records and the JSON are made from the same core `GraphJson`, so they always agree. Coordinates are
//! `f32` pixels of the upright source image (origin top left, x right, y down); confidences are in `[0, 1]`.
//! Ground-truth-only fields of the schema (`scene`, tensor and edge `name`) are not mirrored: a scan never
//! produces them.

use netron_ocr_core::graph as core_graph;
use netron_ocr_core::scanner as core_scanner;

use crate::error::NetronError;
use crate::types::FrameQuality;

/// An axis-aligned box in source-image pixels, `x0 <= x1`, `y0 <= y1` (JSON: `[x0, y0, x1, y1]`).
#[derive(Debug, Clone, Copy, PartialEq, uniffi::Record)]
pub struct BoundingBox {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// A point in source-image pixels (JSON: `[x, y]`).
#[derive(Debug, Clone, Copy, PartialEq, uniffi::Record)]
pub struct GraphPoint {
    pub x: f32,
    pub y: f32,
}

/// One dimension of a parsed shape (JSON: a number or a string).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum ShapeDim {
    /// A number, e.g. `64`.
    Fixed { value: u64 },
    /// A symbolic (`batch`) or unknown (`?`) dim.
    Symbolic { name: String },
}

/// Size of the source image in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct GraphImageSize {
    pub width: u32,
    pub height: u32,
}

/// The region of the image holding the graph, with the cropper's confidence.
#[derive(Debug, Clone, Copy, PartialEq, uniffi::Record)]
pub struct GraphCanvas {
    pub bbox: BoundingBox,
    pub confidence: f32,
}

/// Layout direction of the drawn graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum LayoutDirection {
    /// Top-down (Netron's default).
    Vertical,
    /// Left-to-right.
    Horizontal,
}

/// One weight row of a node card, e.g. `W〈64×3×7×7〉`.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct GraphWeight {
    /// The row's name (`W`, `B`, …).
    pub name: String,
    /// Dims parsed from `text`; `None` when unreadable.
    pub shape: Option<Vec<ShapeDim>>,
    /// Raw row text without the brackets (`64×3×7×7`).
    pub text: String,
    pub bbox: Option<BoundingBox>,
}

/// An operator card.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct GraphNode {
    /// `n<k>`.
    pub id: String,
    /// Operator name from the classifier's vocabulary; `None` when it was not confident enough.
    pub op: Option<String>,
    /// Probability that `op` is right, calibrated by the title's height (also when `op` is `None`: then it is
    /// under the scanner's `min_confidence`).
    pub op_confidence: f32,
    pub bbox: BoundingBox,
    /// Detector confidence.
    pub confidence: f32,
    /// Weight rows, top to bottom.
    pub weights: Vec<GraphWeight>,
    /// The card's title bar, when estimated.
    pub title_box: Option<BoundingBox>,
    /// Cut by the image border, when known.
    pub truncated: Option<bool>,
}

/// A graph input or output pill.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct GraphPort {
    /// `i<k>` for inputs, `o<k>` for outputs.
    pub id: String,
    /// The text read from the pill.
    pub name: String,
    pub bbox: BoundingBox,
    /// Probability that `name` is exact, calibrated by the pill's height.
    pub confidence: f32,
    pub truncated: Option<bool>,
}

/// A tensor label drawn on an edge.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct GraphTensor {
    /// `t<k>`.
    pub id: String,
    /// The label as read (`1×64×56×56`, or a tensor name in Netron's names mode).
    pub text: String,
    /// Dims parsed from `text`; `None` when the text is not a shape.
    pub shape: Option<Vec<ShapeDim>>,
    pub bbox: BoundingBox,
    /// Probability that `text` is exact, calibrated by the label's height.
    pub confidence: f32,
}

/// A connection from a node or input to a node or output.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct GraphEdge {
    /// Id of a node or an input.
    pub from: String,
    /// Id of a node or an output.
    pub to: String,
    /// Id of the tensor label on this edge; `None` when it has no visible label.
    pub tensor: Option<String>,
    pub confidence: f32,
    /// Polyline of the traced curve, source to target (empty when not traced).
    pub points: Vec<GraphPoint>,
}

/// The graph read from an image: the typed form of graph JSON v1.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct ScanGraph {
    /// Always `netron-ocr.graph`.
    pub format: String,
    /// Schema major version, always 1.
    pub version: u32,
    pub image: GraphImageSize,
    pub canvas: GraphCanvas,
    pub direction: Option<LayoutDirection>,
    pub nodes: Vec<GraphNode>,
    pub inputs: Vec<GraphPort>,
    pub outputs: Vec<GraphPort>,
    pub tensors: Vec<GraphTensor>,
    pub edges: Vec<GraphEdge>,
}

/// Wall time of each pipeline stage in milliseconds (all ≥ 0). `decode` covers frame conversion or JPEG/PNG
/// decoding; `assemble` includes edge recovery. For a fused capture result each stage is summed over the fused
/// frames' scans.
#[derive(Debug, Clone, Copy, PartialEq, Default, uniffi::Record)]
pub struct StageTimings {
    pub decode_ms: f64,
    pub quality_ms: f64,
    pub crop_ms: f64,
    pub detect_ms: f64,
    pub classify_ms: f64,
    pub read_ms: f64,
    pub assemble_ms: f64,
    /// Sum of the stages.
    pub total_ms: f64,
}

/// What a successful scan returns.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct ScanResult {
    /// The graph as typed records (same content as `graph_json`).
    pub graph: ScanGraph,
    /// The graph as graph JSON v1 (`docs/graph-json.md`), compact, fields in schema order.
    pub graph_json: String,
    /// The quality gate's verdict on the scanned frame (for a capture: on the capturing frame). Reported only:
    /// a scan never refuses a frame for its quality.
    pub quality: FrameQuality,
    /// Estimated height of a tensor label's box in this view, source pixels (for a capture: the median over the
    /// fused frames); null for an empty result. Under the scanner's threshold (9 px) `quality.hints` holds
    /// `ZoomIn`: the models read text that small unreliably.
    pub text_height: Option<f32>,
    pub timings: StageTimings,
    /// How many frames the graph was read from: 1 for `Scanner.scan*`, the number of fused frames for a
    /// `CaptureSession` result.
    pub frames: u32,
}

impl ScanResult {
    /// Builds the boundary result from a core graph (serialised here) and the rest.
    pub(crate) fn from_core(
        graph: &core_graph::GraphJson,
        quality: FrameQuality,
        text_height: Option<f32>,
        timings: StageTimings,
        frames: u32,
    ) -> Result<ScanResult, NetronError> {
        Ok(ScanResult {
            graph_json: graph.to_json()?,
            graph: ScanGraph::from(graph),
            quality,
            text_height,
            timings,
            frames,
        })
    }
}

impl From<core_scanner::StageTimings> for StageTimings {
    fn from(t: core_scanner::StageTimings) -> Self {
        StageTimings {
            decode_ms: t.decode,
            quality_ms: t.quality,
            crop_ms: t.crop,
            detect_ms: t.detect,
            classify_ms: t.classify,
            read_ms: t.read,
            assemble_ms: t.assemble,
            total_ms: t.total(),
        }
    }
}

impl StageTimings {
    /// Stage-wise sum (for fused results).
    pub(crate) fn add(&self, o: &StageTimings) -> StageTimings {
        StageTimings {
            decode_ms: self.decode_ms + o.decode_ms,
            quality_ms: self.quality_ms + o.quality_ms,
            crop_ms: self.crop_ms + o.crop_ms,
            detect_ms: self.detect_ms + o.detect_ms,
            classify_ms: self.classify_ms + o.classify_ms,
            read_ms: self.read_ms + o.read_ms,
            assemble_ms: self.assemble_ms + o.assemble_ms,
            total_ms: self.total_ms + o.total_ms,
        }
    }
}

impl From<core_graph::BBox> for BoundingBox {
    fn from(b: core_graph::BBox) -> Self {
        BoundingBox {
            x0: b.x0,
            y0: b.y0,
            x1: b.x1,
            y1: b.y1,
        }
    }
}

impl From<core_graph::Point> for GraphPoint {
    fn from(p: core_graph::Point) -> Self {
        GraphPoint { x: p.x, y: p.y }
    }
}

impl From<&core_graph::Dim> for ShapeDim {
    fn from(d: &core_graph::Dim) -> Self {
        match d {
            core_graph::Dim::Int(value) => ShapeDim::Fixed { value: *value },
            core_graph::Dim::Sym(name) => ShapeDim::Symbolic { name: name.clone() },
        }
    }
}

fn shape(s: &Option<Vec<core_graph::Dim>>) -> Option<Vec<ShapeDim>> {
    s.as_ref()
        .map(|dims| dims.iter().map(ShapeDim::from).collect())
}

impl From<&core_graph::Port> for GraphPort {
    fn from(p: &core_graph::Port) -> Self {
        GraphPort {
            id: p.id.clone(),
            name: p.name.clone(),
            bbox: p.bbox.into(),
            confidence: p.confidence,
            truncated: p.truncated,
        }
    }
}

impl From<&core_graph::GraphJson> for ScanGraph {
    fn from(g: &core_graph::GraphJson) -> Self {
        ScanGraph {
            format: g.format.clone(),
            version: g.version,
            image: GraphImageSize {
                width: g.image.width,
                height: g.image.height,
            },
            canvas: GraphCanvas {
                bbox: g.canvas.bbox.into(),
                confidence: g.canvas.confidence,
            },
            direction: g.direction.map(|d| match d {
                core_graph::Direction::Vertical => LayoutDirection::Vertical,
                core_graph::Direction::Horizontal => LayoutDirection::Horizontal,
            }),
            nodes: g
                .nodes
                .iter()
                .map(|n| GraphNode {
                    id: n.id.clone(),
                    op: n.op.clone(),
                    op_confidence: n.op_confidence,
                    bbox: n.bbox.into(),
                    confidence: n.confidence,
                    weights: n
                        .weights
                        .iter()
                        .map(|w| GraphWeight {
                            name: w.name.clone(),
                            shape: shape(&w.shape),
                            text: w.text.clone(),
                            bbox: w.bbox.map(BoundingBox::from),
                        })
                        .collect(),
                    title_box: n.title_box.map(BoundingBox::from),
                    truncated: n.truncated,
                })
                .collect(),
            inputs: g.inputs.iter().map(GraphPort::from).collect(),
            outputs: g.outputs.iter().map(GraphPort::from).collect(),
            tensors: g
                .tensors
                .iter()
                .map(|t| GraphTensor {
                    id: t.id.clone(),
                    text: t.text.clone(),
                    shape: shape(&t.shape),
                    bbox: t.bbox.into(),
                    confidence: t.confidence,
                })
                .collect(),
            edges: g
                .edges
                .iter()
                .map(|e| GraphEdge {
                    from: e.from.clone(),
                    to: e.to.clone(),
                    tensor: e.tensor.clone(),
                    confidence: e.confidence,
                    points: e
                        .points
                        .iter()
                        .flatten()
                        .copied()
                        .map(GraphPoint::from)
                        .collect(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_graph_mirrors_the_json() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/graphs/example.json"
        ))
        .unwrap();
        let core = core_graph::GraphJson::from_json(&text).unwrap();
        let g = ScanGraph::from(&core);
        assert_eq!((g.format.as_str(), g.version), ("netron-ocr.graph", 1));
        assert_eq!(g.nodes.len(), core.nodes.len());
        assert_eq!(g.tensors.len(), core.tensors.len());
        let t0 = &core.tensors[0];
        assert_eq!(g.tensors[0].text, t0.text);
        assert_eq!(
            g.tensors[0].shape.as_ref().map(Vec::len),
            t0.shape.as_ref().map(Vec::len)
        );
        for (a, b) in g.edges.iter().zip(&core.edges) {
            assert_eq!((&a.from, &a.to, &a.tensor), (&b.from, &b.to, &b.tensor));
        }
        assert_eq!(g.canvas.bbox.x1, core.canvas.bbox.x1);
    }

    #[test]
    fn symbolic_and_fixed_dims() {
        let dims = shape(&Some(vec![core_graph::Dim::Sym("batch".into()), 64.into()])).unwrap();
        assert_eq!(
            dims,
            vec![
                ShapeDim::Symbolic {
                    name: "batch".into()
                },
                ShapeDim::Fixed { value: 64 }
            ]
        );
    }
}
