//! Graph JSON, schema v1: the library's public output contract (`docs/graph-json.md`).
//!
//! All coordinates are `f32` pixels of the *source image* (the decoded, upright photo), with the origin at the top
//! left, x to the right and y down. Confidences are in `[0, 1]`.
//!
//! Reading goes through [`GraphJson::from_json`], which checks `format` and the major `version` before anything
//! else, so a file of another major version gets [`GraphError::UnsupportedVersion`] and not a shape error. Fields
//! this reader does not know are ignored. Structural problems that serde cannot see (duplicate ids, dangling edge
//! endpoints, unordered boxes, out-of-range confidences) are reported by [`GraphJson::check`].

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The JSON Schema (draft 2020-12) of graph JSON v1, `schema/graph-v1.schema.json`.
pub const JSON_SCHEMA_V1: &str = include_str!("../../schema/graph-v1.schema.json");

/// The character Netron draws between the dims of a shape (U+00D7 MULTIPLICATION SIGN).
pub const DIM_SEPARATOR: char = '×';

/// Why a graph JSON text could not be read.
#[derive(Debug, Error)]
pub enum GraphError {
    /// The text is not well-formed JSON.
    #[error("not valid JSON: {0}")]
    Syntax(serde_json::Error),
    /// The text is JSON but not a netron-ocr graph (not an object, wrong or missing `format`, bad `version`).
    #[error("not a netron-ocr graph: {0}")]
    NotAGraph(String),
    /// A netron-ocr graph of a major version this reader does not support.
    #[error("graph JSON version {found} is not supported: this reader supports version {supported} only")]
    UnsupportedVersion { found: u64, supported: u32 },
    /// A v1 graph whose content does not match schema v1 (missing field, wrong type, box not 4 numbers, …).
    #[error("graph JSON does not match schema v1: {0}")]
    Schema(serde_json::Error),
    /// Serialisation failed.
    #[error("cannot write graph JSON: {0}")]
    Write(serde_json::Error),
}

/// A graph read from one image: the top level of graph JSON v1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphJson {
    /// Always [`GraphJson::FORMAT`].
    pub format: String,
    /// Schema major version, always [`GraphJson::VERSION`].
    pub version: u32,
    /// Size of the source image.
    pub image: ImageSize,
    /// Region of the image holding the graph's content.
    pub canvas: Canvas,
    /// Layout direction, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Operator cards.
    pub nodes: Vec<Node>,
    /// Graph input pills.
    pub inputs: Vec<Port>,
    /// Graph output pills.
    pub outputs: Vec<Port>,
    /// Tensor-shape labels drawn on edges.
    pub tensors: Vec<Tensor>,
    /// Connections between nodes, inputs and outputs.
    pub edges: Vec<Edge>,
    /// Generator metadata (ground truth only); a JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<serde_json::Value>,
}

/// Source image size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSize {
    pub width: u32,
    pub height: u32,
}

/// The region of the image that holds the graph.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Canvas {
    #[serde(rename = "box")]
    pub bbox: BBox,
    pub confidence: f32,
}

/// Layout direction of the drawn graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Top-down (Netron's default).
    Vertical,
    /// Left-to-right.
    Horizontal,
}

/// An operator card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: String,
    /// Operator name from `models/vocab.json`, or `None` when the classifier is not confident enough.
    /// Required in JSON (as `null` when unknown).
    #[serde(deserialize_with = "Option::deserialize")]
    pub op: Option<String>,
    /// Top classifier probability, also when `op` is `None`.
    pub op_confidence: f32,
    #[serde(rename = "box")]
    pub bbox: BBox,
    pub confidence: f32,
    /// The `W〈64×3×7×7〉` rows, top to bottom.
    pub weights: Vec<Weight>,
    /// Box of the card's title bar (ground truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_box: Option<BBox>,
    /// Corners of the card, clockwise from its top left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quad: Option<[Point; 4]>,
    /// True when the card is cut by the image or viewport border.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// One weight row of a node card, e.g. `W〈64×3×7×7〉`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Weight {
    /// The row's name (`W`, `B`, …).
    pub name: String,
    /// Dims parsed from `text`, or `None` if unreadable. Required in JSON (as `null`).
    #[serde(deserialize_with = "Option::deserialize")]
    pub shape: Option<Vec<Dim>>,
    /// Raw row text after the name, without the brackets (`64×3×7×7`).
    pub text: String,
    #[serde(rename = "box", default, skip_serializing_if = "Option::is_none")]
    pub bbox: Option<BBox>,
}

/// A graph input or output pill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Port {
    pub id: String,
    /// The text shown in the pill.
    pub name: String,
    #[serde(rename = "box")]
    pub bbox: BBox,
    pub confidence: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quad: Option<[Point; 4]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// A tensor label drawn on an edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    pub id: String,
    /// The label as drawn: a shape (`1×64×56×56`) or, in Netron's names mode, a tensor name.
    pub text: String,
    /// Dims parsed from `text` ([`parse_shape_text`]), `None` when the text is not a shape. Required in JSON.
    #[serde(deserialize_with = "Option::deserialize")]
    pub shape: Option<Vec<Dim>>,
    #[serde(rename = "box")]
    pub bbox: BBox,
    pub confidence: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quad: Option<[Point; 4]>,
    /// The ONNX tensor name, when known (ground truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A connection from a node or input to a node or output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Id of a node or an input.
    pub from: String,
    /// Id of a node or an output.
    pub to: String,
    /// Id of the tensor label on this edge, `None` when it has no visible label. Required in JSON.
    #[serde(deserialize_with = "Option::deserialize")]
    pub tensor: Option<String>,
    pub confidence: f32,
    /// Polyline of the drawn curve, source to target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<Point>>,
    /// The ONNX tensor name, when known (ground truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One dimension of a shape: a number, or a string for a symbolic (`batch`) or unknown (`?`) dim.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Dim {
    Int(u64),
    Sym(String),
}

/// An axis-aligned box `[x0, y0, x1, y1]` in source-image pixels; valid when finite with `x0 <= x1`, `y0 <= y1`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "[f32; 4]", into = "[f32; 4]")]
pub struct BBox {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// A point `[x, y]` in source-image pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "[f32; 2]", into = "[f32; 2]")]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

/// What an id in a graph names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementKind {
    Node,
    Input,
    Output,
    Tensor,
}

/// One semantic problem found by [`GraphJson::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct GraphIssue {
    /// JSON Pointer to the offending value, e.g. `/edges/3/from`.
    pub path: String,
    pub kind: IssueKind,
}

/// The kinds of problem [`GraphJson::check`] reports.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum IssueKind {
    #[error("format is {found:?}, expected {:?}", GraphJson::FORMAT)]
    WrongFormat { found: String },
    #[error("version is {found}, expected {}", GraphJson::VERSION)]
    WrongVersion { found: u32 },
    #[error("image size {width}×{height} is empty")]
    EmptyImage { width: u32, height: u32 },
    #[error("id is empty")]
    EmptyId,
    #[error("id {id:?} is already used at {first}")]
    DuplicateId { id: String, first: String },
    #[error("{what} is empty")]
    EmptyText { what: &'static str },
    #[error("value is not finite")]
    NonFinite,
    #[error("box {0:?} is not ordered (needs x0 <= x1 and y0 <= y1)")]
    UnorderedBox([f32; 4]),
    #[error("confidence {0} is outside [0, 1]")]
    ConfidenceOutOfRange(f32),
    #[error("id {id:?} does not exist")]
    UnknownId { id: String },
    #[error("id {id:?} is {}, expected {expected}", found.with_article())]
    WrongKind {
        id: String,
        found: ElementKind,
        expected: &'static str,
    },
    #[error("scene is not a JSON object")]
    SceneNotObject,
}

impl fmt::Display for GraphIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind)
    }
}

impl ElementKind {
    /// "a node", "an input", …
    pub fn with_article(&self) -> &'static str {
        match self {
            ElementKind::Node => "a node",
            ElementKind::Input => "an input",
            ElementKind::Output => "an output",
            ElementKind::Tensor => "a tensor",
        }
    }
}

impl fmt::Display for ElementKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ElementKind::Node => "node",
            ElementKind::Input => "input",
            ElementKind::Output => "output",
            ElementKind::Tensor => "tensor",
        })
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Int(n) => write!(f, "{n}"),
            Dim::Sym(s) => f.write_str(s),
        }
    }
}

impl From<u64> for Dim {
    fn from(n: u64) -> Self {
        Dim::Int(n)
    }
}

impl From<&str> for Dim {
    fn from(s: &str) -> Self {
        Dim::Sym(s.to_owned())
    }
}

/// Only the two fields [`GraphJson::from_json`] checks before full deserialisation; everything else is skipped.
/// Deserialises from a JSON object only (a derived impl would also accept an array).
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

impl<'de> Deserialize<'de> for Header {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct HeaderVisitor;
        impl<'de> serde::de::Visitor<'de> for HeaderVisitor {
            type Value = Header;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Header, A::Error> {
                let mut header = Header {
                    format: None,
                    version: None,
                };
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "format" => header.format = Some(map.next_value()?),
                        "version" => header.version = Some(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(header)
            }
        }
        deserializer.deserialize_map(HeaderVisitor)
    }
}

impl GraphJson {
    /// The value of `format`.
    pub const FORMAT: &'static str = "netron-ocr.graph";
    /// The schema major version this code reads and writes.
    pub const VERSION: u32 = 1;

    /// An empty v1 graph (no elements) for an image of `image` size.
    pub fn new(image: ImageSize, canvas: Canvas) -> Self {
        GraphJson {
            format: Self::FORMAT.to_owned(),
            version: Self::VERSION,
            image,
            canvas,
            direction: None,
            nodes: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            tensors: Vec::new(),
            edges: Vec::new(),
            scene: None,
        }
    }

    /// Parses graph JSON. Checks, in order: well-formed JSON, a top-level object with
    /// `format == "netron-ocr.graph"`, an integer `version` equal to 1, then the v1 shape.
    /// Unknown fields are ignored. Does not run [`GraphJson::check`].
    pub fn from_json(text: &str) -> Result<GraphJson, GraphError> {
        let header: Header = serde_json::from_str(text).map_err(|e| {
            if e.is_data() {
                GraphError::NotAGraph("the top level is not a JSON object".to_owned())
            } else {
                GraphError::Syntax(e)
            }
        })?;
        match &header.format {
            Some(serde_json::Value::String(s)) if s == Self::FORMAT => {}
            Some(other) => {
                return Err(GraphError::NotAGraph(format!(
                    "`format` is {other}, expected \"{}\"",
                    Self::FORMAT
                )))
            }
            None => return Err(GraphError::NotAGraph("`format` is missing".to_owned())),
        }
        let version = match &header.version {
            Some(v) => v.as_u64().ok_or_else(|| {
                GraphError::NotAGraph(format!("`version` is {v}, expected a non-negative integer"))
            })?,
            None => return Err(GraphError::NotAGraph("`version` is missing".to_owned())),
        };
        if version != u64::from(Self::VERSION) {
            return Err(GraphError::UnsupportedVersion {
                found: version,
                supported: Self::VERSION,
            });
        }
        serde_json::from_str(text).map_err(GraphError::Schema)
    }

    /// Compact JSON. Non-finite floats would be written as `null` (which does not read back): run
    /// [`GraphJson::check`] first when the values come from arithmetic.
    pub fn to_json(&self) -> Result<String, GraphError> {
        serde_json::to_string(self).map_err(GraphError::Write)
    }

    /// JSON indented by two spaces; see [`GraphJson::to_json`].
    pub fn to_json_pretty(&self) -> Result<String, GraphError> {
        serde_json::to_string_pretty(self).map_err(GraphError::Write)
    }

    /// The canvas box grown by `pad` × its width / height on every side, clipped to the image: the crop the
    /// detector is run on with truth crops (`pad` 0.04, the cropper's padding; Python `detector.padded_canvas`).
    pub fn padded_canvas(&self, pad: f32) -> BBox {
        let b = self.canvas.bbox;
        let (w, h) = (b.width(), b.height());
        BBox::new(
            (b.x0 - pad * w).max(0.0),
            (b.y0 - pad * h).max(0.0),
            (b.x1 + pad * w).min(self.image.width as f32),
            (b.y1 + pad * h).min(self.image.height as f32),
        )
    }

    /// What `id` names in this graph (first match), if anything.
    pub fn kind_of(&self, id: &str) -> Option<ElementKind> {
        if self.nodes.iter().any(|n| n.id == id) {
            Some(ElementKind::Node)
        } else if self.inputs.iter().any(|p| p.id == id) {
            Some(ElementKind::Input)
        } else if self.outputs.iter().any(|p| p.id == id) {
            Some(ElementKind::Output)
        } else if self.tensors.iter().any(|t| t.id == id) {
            Some(ElementKind::Tensor)
        } else {
            None
        }
    }

    /// Semantic validation beyond the schema: format/version values, non-empty image, ids non-empty and unique
    /// across the file, every edge endpoint and tensor reference exists and has a legal kind (`from`: node or
    /// input; `to`: node or output; `tensor`: tensor), boxes/points finite and boxes ordered, confidences in
    /// `[0, 1]`, non-empty op names and symbolic dims, `scene` an object. Returns every problem found, in
    /// document order; empty means valid.
    pub fn check(&self) -> Vec<GraphIssue> {
        let mut c = Checker::default();
        if self.format != Self::FORMAT {
            c.push(
                "/format",
                IssueKind::WrongFormat {
                    found: self.format.clone(),
                },
            );
        }
        if self.version != Self::VERSION {
            c.push(
                "/version",
                IssueKind::WrongVersion {
                    found: self.version,
                },
            );
        }
        if self.image.width == 0 || self.image.height == 0 {
            c.push(
                "/image",
                IssueKind::EmptyImage {
                    width: self.image.width,
                    height: self.image.height,
                },
            );
        }
        c.bbox("/canvas/box", &self.canvas.bbox);
        c.confidence("/canvas/confidence", self.canvas.confidence);

        // Ids are registered nodes, inputs, outputs, tensors in that order; the first one wins for lookups.
        let mut kinds: HashMap<&str, ElementKind> = HashMap::new();
        let mut first_path: HashMap<&str, String> = HashMap::new();
        let ids =
            self.nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (format!("/nodes/{i}"), n.id.as_str(), ElementKind::Node))
                .chain(
                    self.inputs
                        .iter()
                        .enumerate()
                        .map(|(i, p)| (format!("/inputs/{i}"), p.id.as_str(), ElementKind::Input)),
                )
                .chain(
                    self.outputs.iter().enumerate().map(|(i, p)| {
                        (format!("/outputs/{i}"), p.id.as_str(), ElementKind::Output)
                    }),
                )
                .chain(
                    self.tensors.iter().enumerate().map(|(i, t)| {
                        (format!("/tensors/{i}"), t.id.as_str(), ElementKind::Tensor)
                    }),
                );
        for (path, id, kind) in ids {
            let id_path = format!("{path}/id");
            if id.is_empty() {
                c.push(&id_path, IssueKind::EmptyId);
                continue;
            }
            if let Some(first) = first_path.get(id) {
                c.push(
                    &id_path,
                    IssueKind::DuplicateId {
                        id: id.to_owned(),
                        first: first.clone(),
                    },
                );
            } else {
                first_path.insert(id, id_path);
                kinds.insert(id, kind);
            }
        }

        for (i, n) in self.nodes.iter().enumerate() {
            let p = format!("/nodes/{i}");
            if n.op.as_deref() == Some("") {
                c.push(&format!("{p}/op"), IssueKind::EmptyText { what: "op" });
            }
            c.confidence(&format!("{p}/op_confidence"), n.op_confidence);
            c.bbox(&format!("{p}/box"), &n.bbox);
            c.confidence(&format!("{p}/confidence"), n.confidence);
            for (j, w) in n.weights.iter().enumerate() {
                let wp = format!("{p}/weights/{j}");
                c.shape(&format!("{wp}/shape"), w.shape.as_deref());
                if let Some(b) = &w.bbox {
                    c.bbox(&format!("{wp}/box"), b);
                }
            }
            if let Some(b) = &n.title_box {
                c.bbox(&format!("{p}/title_box"), b);
            }
            c.quad(&format!("{p}/quad"), n.quad.as_ref());
        }
        for (list, ports) in [("inputs", &self.inputs), ("outputs", &self.outputs)] {
            for (i, port) in ports.iter().enumerate() {
                let p = format!("/{list}/{i}");
                c.bbox(&format!("{p}/box"), &port.bbox);
                c.confidence(&format!("{p}/confidence"), port.confidence);
                c.quad(&format!("{p}/quad"), port.quad.as_ref());
            }
        }
        for (i, t) in self.tensors.iter().enumerate() {
            let p = format!("/tensors/{i}");
            c.shape(&format!("{p}/shape"), t.shape.as_deref());
            c.bbox(&format!("{p}/box"), &t.bbox);
            c.confidence(&format!("{p}/confidence"), t.confidence);
            c.quad(&format!("{p}/quad"), t.quad.as_ref());
        }
        for (i, e) in self.edges.iter().enumerate() {
            let p = format!("/edges/{i}");
            c.reference(
                &format!("{p}/from"),
                &e.from,
                &kinds,
                &[ElementKind::Node, ElementKind::Input],
                "a node or input",
            );
            c.reference(
                &format!("{p}/to"),
                &e.to,
                &kinds,
                &[ElementKind::Node, ElementKind::Output],
                "a node or output",
            );
            if let Some(t) = &e.tensor {
                c.reference(
                    &format!("{p}/tensor"),
                    t,
                    &kinds,
                    &[ElementKind::Tensor],
                    "a tensor",
                );
            }
            c.confidence(&format!("{p}/confidence"), e.confidence);
            if let Some(points) = &e.points {
                for (j, pt) in points.iter().enumerate() {
                    c.point(&format!("{p}/points/{j}"), pt);
                }
            }
        }
        if let Some(scene) = &self.scene {
            if !scene.is_object() {
                c.push("/scene", IssueKind::SceneNotObject);
            }
        }
        c.issues
    }
}

/// Collects issues for [`GraphJson::check`].
#[derive(Default)]
struct Checker {
    issues: Vec<GraphIssue>,
}

impl Checker {
    fn push(&mut self, path: &str, kind: IssueKind) {
        self.issues.push(GraphIssue {
            path: path.to_owned(),
            kind,
        });
    }

    fn bbox(&mut self, path: &str, b: &BBox) {
        if !b.is_finite() {
            self.push(path, IssueKind::NonFinite);
        } else if !b.is_ordered() {
            self.push(path, IssueKind::UnorderedBox((*b).into()));
        }
    }

    fn point(&mut self, path: &str, p: &Point) {
        if !(p.x.is_finite() && p.y.is_finite()) {
            self.push(path, IssueKind::NonFinite);
        }
    }

    fn quad(&mut self, path: &str, quad: Option<&[Point; 4]>) {
        for (k, p) in quad.into_iter().flatten().enumerate() {
            self.point(&format!("{path}/{k}"), p);
        }
    }

    fn confidence(&mut self, path: &str, v: f32) {
        if !(0.0..=1.0).contains(&v) {
            self.push(path, IssueKind::ConfidenceOutOfRange(v));
        }
    }

    fn shape(&mut self, path: &str, shape: Option<&[Dim]>) {
        for (k, d) in shape.into_iter().flatten().enumerate() {
            if matches!(d, Dim::Sym(s) if s.is_empty()) {
                self.push(&format!("{path}/{k}"), IssueKind::EmptyText { what: "dim" });
            }
        }
    }

    fn reference(
        &mut self,
        path: &str,
        id: &str,
        kinds: &HashMap<&str, ElementKind>,
        allowed: &[ElementKind],
        expected: &'static str,
    ) {
        match kinds.get(id) {
            None => self.push(path, IssueKind::UnknownId { id: id.to_owned() }),
            Some(k) if !allowed.contains(k) => self.push(
                path,
                IssueKind::WrongKind {
                    id: id.to_owned(),
                    found: *k,
                    expected,
                },
            ),
            Some(_) => {}
        }
    }
}

impl BBox {
    pub const fn new(x0: f32, y0: f32, x1: f32, y1: f32) -> Self {
        BBox { x0, y0, x1, y1 }
    }

    /// `x1 - x0`; negative for an unordered box.
    pub fn width(&self) -> f32 {
        self.x1 - self.x0
    }

    /// `y1 - y0`; negative for an unordered box.
    pub fn height(&self) -> f32 {
        self.y1 - self.y0
    }

    /// Area in square pixels; 0 for an unordered or degenerate box.
    pub fn area(&self) -> f32 {
        self.width().max(0.0) * self.height().max(0.0)
    }

    /// All four coordinates are finite.
    pub fn is_finite(&self) -> bool {
        [self.x0, self.y0, self.x1, self.y1]
            .iter()
            .all(|v| v.is_finite())
    }

    /// `x0 <= x1` and `y0 <= y1` (false if any coordinate is NaN).
    pub fn is_ordered(&self) -> bool {
        self.x0 <= self.x1 && self.y0 <= self.y1
    }

    /// Centre point.
    pub fn center(&self) -> Point {
        Point::new((self.x0 + self.x1) * 0.5, (self.y0 + self.y1) * 0.5)
    }

    /// The overlap of two boxes, or `None` when they do not overlap. Boxes that only touch give a zero-area box.
    pub fn intersection(&self, other: &BBox) -> Option<BBox> {
        let b = BBox::new(
            self.x0.max(other.x0),
            self.y0.max(other.y0),
            self.x1.min(other.x1),
            self.y1.min(other.y1),
        );
        b.is_ordered().then_some(b)
    }

    /// The smallest box containing both.
    pub fn union(&self, other: &BBox) -> BBox {
        BBox::new(
            self.x0.min(other.x0),
            self.y0.min(other.y0),
            self.x1.max(other.x1),
            self.y1.max(other.y1),
        )
    }

    /// Intersection over union in `[0, 1]`; 0 when the union has no area.
    pub fn iou(&self, other: &BBox) -> f32 {
        let inter = self.intersection(other).map_or(0.0, |b| b.area());
        let union = self.area() + other.area() - inter;
        if union > 0.0 {
            inter / union
        } else {
            0.0
        }
    }

    /// The point lies inside the box or on its border.
    pub fn contains(&self, p: Point) -> bool {
        self.x0 <= p.x && p.x <= self.x1 && self.y0 <= p.y && p.y <= self.y1
    }

    /// `other` lies entirely inside this box (borders included).
    pub fn contains_box(&self, other: &BBox) -> bool {
        self.x0 <= other.x0 && other.x1 <= self.x1 && self.y0 <= other.y0 && other.y1 <= self.y1
    }
}

impl From<[f32; 4]> for BBox {
    fn from([x0, y0, x1, y1]: [f32; 4]) -> Self {
        BBox { x0, y0, x1, y1 }
    }
}

impl From<BBox> for [f32; 4] {
    fn from(b: BBox) -> Self {
        [b.x0, b.y0, b.x1, b.y1]
    }
}

impl Point {
    pub const fn new(x: f32, y: f32) -> Self {
        Point { x, y }
    }
}

impl From<[f32; 2]> for Point {
    fn from([x, y]: [f32; 2]) -> Self {
        Point { x, y }
    }
}

impl From<Point> for [f32; 2] {
    fn from(p: Point) -> Self {
        [p.x, p.y]
    }
}

/// Parses a Netron shape label into dims, or returns `None` when the text is not a shape.
///
/// Rule: after trimming whitespace, the text is split on `×` (U+00D7); every part (trimmed) must be non-empty and
/// be a decimal integer (`56`, a [`Dim::Int`]), `?` (unknown dim), or an ASCII identifier `[A-Za-z_][A-Za-z0-9_]*`
/// (a symbolic dim such as `batch`). A text without `×` is a rank-1 shape only when it is an integer or `?`:
/// a bare identifier (`conv1_out`) is taken as a tensor name, so the rank-1 symbolic shape `[batch]` cannot be told
/// from a tensor named `batch` and reads as a name. Examples: `1×64×56×56`, `batch×3×224×224`, `?×10` and `1000`
/// are shapes; `conv1_out`, `1×`, `1 x 3` and `` are not.
pub fn parse_shape_text(text: &str) -> Option<Vec<Dim>> {
    let text = text.trim();
    let dims = text
        .split(DIM_SEPARATOR)
        .map(|part| parse_dim(part.trim()))
        .collect::<Option<Vec<Dim>>>()?;
    match dims.as_slice() {
        [Dim::Sym(s)] if s != "?" => None,
        _ => Some(dims),
    }
}

/// Formats dims the way Netron draws them: joined by `×`, e.g. `batch×3×224×224`.
pub fn format_shape(dims: &[Dim]) -> String {
    dims.iter()
        .map(Dim::to_string)
        .collect::<Vec<_>>()
        .join(&DIM_SEPARATOR.to_string())
}

fn parse_dim(part: &str) -> Option<Dim> {
    let mut chars = part.chars();
    let first = chars.next()?;
    if part == "?" {
        Some(Dim::Sym("?".to_owned()))
    } else if part.bytes().all(|b| b.is_ascii_digit()) {
        part.parse().ok().map(Dim::Int)
    } else if (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Some(Dim::Sym(part.to_owned()))
    } else {
        None
    }
}
