//! Edge recovery: which drawn curves connect which element boxes, and which tensor label sits on which curve.
//!
//! Netron draws an edge as a 1 CSS px curve (`#000` in the light theme, `#888` in the dark one) from the bottom of
//! its source to the top of its target, ending in an arrowhead 8 × 6 stroke widths large (right/left sides in a
//! horizontal layout). Curves are B-splines through the layout's control points, which only move forward in the
//! layout direction: in a vertical layout every edge is a y-monotone curve. A tensor label sits to the right of its
//! edge (below it in a horizontal layout), with its left side about half a text height from the curve.
//!
//! # Units and frames
//!
//! Inputs and outputs are in *source pixels* (the decoded, upright image; `graph` conventions). One *unit* is the
//! drawn stroke width, i.e. one CSS px at the current zoom and device pixel ratio, in source pixels; it is
//! estimated from the label heights (a label is about 11 units tall) unless [`EdgeParams::unit_px`] is given.
//! Most lengths in [`EdgeParams`] are in units. The work happens on a *working raster* ([`WorkFrame`]): the
//! region, area-downsampled so that a unit is about [`EdgeParams::work_unit_px`] pixels, or bilinearly upsampled
//! when its strokes are much thinner (a zoomed-out view: [`EdgeParams::min_upsample`], [`EdgeParams::max_upsample`]),
//! and transposed for horizontal layouts, so that edges always flow top to bottom there.
//!
//! # Stages
//!
//! 1. [`work_frame`]: the working raster's geometry; [`estimate_unit`] the unit.
//! 2. [`ink_map`]: luma on the working raster, the ink polarity (dark strokes on a light screen or light on
//!    dark, voted by the label boxes), a morphological top-hat of radius [`EdgeParams::tophat_radius`] (the local
//!    background minus the pixel, so exposure gradients, glare and vignetting cancel), element and label boxes
//!    masked out, and a threshold from the robust noise level of what is left. The result is an ink *strength*
//!    in `[0, 1]` (0.5 at the threshold).
//! 3. [`find_terminals`]: where a stroke enters an element that can be a target (a node or output; not a card whose
//!    inputs are all rows inside it, [`ElementKind::Constant`]): ink runs in
//!    a thin band just outside the element's entry side (top; left in horizontal layouts), where the arrowhead is.
//!    One terminal is one edge end. Netron aims an arrowhead at its target's centre, so a stroke crossing the top
//!    band aimed beside the box (a curve clipping its corner on the way to another target) is none
//!    ([`aims_into`], [`EdgeParams::aimed_terminals`]). Where several strokes converge on one blob of arrowheads
//!    (a fan-in into a narrow card), [`split_converging`] makes a terminal of each stroke a little upstream
//!    ([`EdgeParams::fan_in_probe`]). A stroke reaching a left or right side is a terminal when it comes from
//!    outside and does not go on downwards past the side and its run (a curve passing by; the run may be two
//!    arrowheads run together), unless what lies below is the next of several arrowheads stacked on that side (a
//!    fan-in arriving sideways), and not when it runs straight into a neighbouring card that can be a target and
//!    widens towards it (the arrowhead is there: [`EdgeParams::neighbour_arrowheads`]).
//! 4. [`trace_terminal`]: from each terminal the curve is followed *upstream* by a tracker that steps
//!    [`EdgeParams::step`] at a time to the strongest ink in a cone around its current, smoothed direction,
//!    re-centres on the stroke, never moves downstream (curves are monotone), coasts straight across label boxes
//!    (labels may sit on the curve) and across gaps up to [`EdgeParams::max_gap`] (photos break thin lines).
//!    It ends when it enters an element that can be a source (node or input) through its exit side, or through a
//!    lateral side while moving mostly sideways; brushing past a box sideways is not an end, and neither is a box
//!    on the target's rank or below it ([`is_upstream`], [`EdgeParams::min_rank_offset`]): Netron's layout puts
//!    every source on an earlier rank than its target. Such a box may lie over the stroke (Netron draws edges
//!    beneath the cards): the tracker jumps to where a stroke comes out on its far side, heading on, and a
//!    terminal of that card where the stroke came out is dropped when both trace to the same source
//!    ([`EdgeParams::pass_under`]). Fan-out needs no special case: each target's terminal is traced back to the
//!    shared source. Crossings are passed by continuity: the smoothed direction and the penalty on turning keep
//!    the tracker on its own curve through the crossing. Traces that leave the region (source outside the view)
//!    or lose the stroke give no edge.
//! 5. [`attach_labels`]: each label goes to the edge whose curve passes closest to the point half a label height
//!    left of the label's left-middle (above its top-middle in horizontal layouts), one label per edge, greedily
//!    by distance.
//! 6. [`bridge_labels`]: a label still without an edge is evidence of one the tracer missed (a stroke washed out
//!    by exposure or blur): it is bridged to the nearest source above and target below it, with a low fixed
//!    confidence ([`EdgeParams::bridge_confidence`]).
//!
//! Every traced edge's confidence is the share of its traced length that was on ink (gaps count against it, coasting
//! across label boxes does not), times a penalty for an unusual exit side. Whether the stroke is seen to widen
//! into an arrowhead at its target is kept beside it ([`has_arrowhead`]): evidence, for the scanner, that the
//! strokes are Netron's edges and not borders or outlines. [`EdgeDebug`] holds an overlay of the
//! ink, the masks, the terminals and the traces. `models/METRICS.md` has the measured accuracy.
//!
//! The layout direction itself can be read from the same ink before any of this: [`side_crossings`] counts the
//! box sides that strokes cross, top and bottom in a vertical layout, left and right in a horizontal one (the
//! scanner's `direction_from_crossings`).

use std::collections::HashSet;

use image::{Rgb, RgbImage};
use thiserror::Error;

use crate::graph::{BBox, Direction, Point};

/// What an element box is; decides whether it can start or end an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// An operator card: source and target.
    Node,
    /// A graph input pill: source only.
    Input,
    /// A graph output pill: target only.
    Output,
    /// An operator card whose inputs are all drawn inside it as initializer rows, so that no edge arrives at
    /// it: source only ([`ElementKind::of_card`]).
    Constant,
}

impl ElementKind {
    /// Nodes, constants and inputs can start an edge.
    pub fn can_be_source(self) -> bool {
        self != ElementKind::Output
    }

    /// Nodes and outputs can end an edge.
    pub fn can_be_target(self) -> bool {
        self != ElementKind::Input && self != ElementKind::Constant
    }

    /// The kind of an operator card from its operator (`None`: unknown) and the names of the rows read inside
    /// it. Netron draws an initializer as a row of its consumer's card (`input〈4〉`), not as an edge: a
    /// `ConstantOfShape`, whose only input is named `input`, showing that row takes no edge
    /// ([`ElementKind::Constant`]; the onnx package's "light" models draw one per weight). Otherwise
    /// [`ElementKind::Node`].
    pub fn of_card(op: Option<&str>, row_names: &[&str]) -> ElementKind {
        if op == Some("ConstantOfShape") && row_names.contains(&"input") {
            ElementKind::Constant
        } else {
            ElementKind::Node
        }
    }
}

/// A node, input or output box in source pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub id: String,
    pub kind: ElementKind,
    pub bbox: BBox,
}

/// A tensor-shape label box in source pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub id: String,
    pub bbox: BBox,
}

/// A side of an element box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Top,
    Bottom,
    Left,
    Right,
}

/// Ink polarity of the strokes relative to the screen background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Polarity {
    /// Dark strokes on a light background (Netron's light theme).
    DarkInk,
    /// Light strokes on a dark background (dark theme).
    LightInk,
}

/// Tuning of [`recover_edges`]. Lengths are in units (stroke widths, see the module doc) unless stated.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeParams {
    /// The stroke width in source pixels, when known; `None` estimates it ([`estimate_unit`]).
    pub unit_px: Option<f32>,
    /// Unit used when it cannot be estimated (no labels, no elements), source pixels.
    pub fallback_unit_px: f32,
    /// Target stroke width on the working raster, in working pixels.
    pub work_unit_px: f32,
    /// Largest factor by which the region is upsampled (bilinearly) to reach [`EdgeParams::work_unit_px`] when
    /// its strokes are thinner (a zoomed-out view); 1 never upsamples. Default 3, with [`EdgeParams::min_upsample`]
    /// 2 (chosen on the development split scaled to 0.35 and 0.25 of its size, where edge F1 rose 0.959 → 0.963
    /// and 0.926 → 0.935, the full-size views unchanged; `models/METRICS.md`, session 39). The working-pixel
    /// lengths of these parameters (`blur_px`, `min_gap_px`, the floors of the top-hat and the terminal bands) are
    /// multiplied by the upsampling factor ([`WorkFrame::magnification`]), so they keep their size in the source.
    pub max_upsample: f32,
    /// Smallest upsampling factor applied: a region that needs less is worked on at its own resolution.
    pub min_upsample: f32,
    /// Largest working raster, in pixels; the region is downsampled further when needed.
    pub max_work_pixels: u64,
    /// Radius of the top-hat's square window. Strokes narrower than twice this count as ink.
    pub tophat_radius: f32,
    /// Ink threshold above the top-hat's median, in robust standard deviations (1.4826 × MAD).
    pub ink_sigmas: f32,
    /// Lowest ink threshold, in luma levels (0–255) of top-hat response. Default 6 (4 was tried: more edges on
    /// the dense synthetic photos, fewer on the real renders, `models/METRICS.md`, session 27).
    pub min_ink_contrast: f32,
    /// Margin added around element boxes before masking them (covers card borders and box error).
    pub element_margin: f32,
    /// Extra margin for blur, in working pixels, added to the element margin and the source reach.
    pub blur_px: f32,
    /// A trace ends at a source when it comes this close to the source's masked box (plus `blur_px`) while
    /// moving towards it.
    pub source_reach: f32,
    /// Smooth the working luma with a 3×3 binomial filter before the top-hat (halves pixel noise).
    pub smooth: bool,
    /// Margin added around label boxes before masking them.
    pub label_margin: f32,
    /// Depth of the band outside an element's entry side searched for arrowheads.
    pub terminal_band: f32,
    /// Terminal ink runs wider than this are split at their dips (two arrowheads side by side).
    pub terminal_split_width: f32,
    /// Look for strokes converging on a terminal this far out from its side ([`split_converging`]); `None`: one
    /// stroke per terminal. Default 12 (past the 8-unit arrowheads): with the truth boxes, edge F1 on the `v1-s1`
    /// held-out scenes (0.984 / 0.995, photos / screenshots) and on the dense synthetic views (0.969 / 0.994) is
    /// the same with and without it; a drawn fan-in into a narrow card needs it (`edges_synthetic.rs`); the
    /// renders of real architectures, where constants fan into narrow cards, gain (`models/METRICS.md`, session 23).
    pub fan_in_probe: Option<f32>,
    /// Tracker step length.
    pub step: f32,
    /// Half-angle of the tracker's search cone, degrees.
    pub cone_deg: f32,
    /// Score penalty for turning by the full cone half-angle (scores are ink strengths in `[0, 1]`).
    pub turn_penalty: f32,
    /// Weight of the previous direction in the tracker's direction update, in `[0, 1)`.
    pub momentum: f32,
    /// Smallest lookahead score (mean ink strength) for a tracker step to count as on ink.
    pub on_ink: f32,
    /// Longest run of steps without ink before a trace is given up.
    pub max_gap: f32,
    /// Lower bound of the gap limit in working pixels (small units: a few noisy pixels are a large gap).
    pub min_gap_px: f32,
    /// Edges below this confidence are dropped.
    pub min_confidence: f32,
    /// A trace ends only at a source whose centre lies upstream of its target's centre, along the layout
    /// direction, by at least this share of the taller of the two boxes ([`is_upstream`]). Netron's layout puts
    /// an edge's target on a later rank than its source, and the boxes of one rank on one centre line, so the
    /// centres of a true edge's ends are half of each box plus the rank separation apart: at least 0.78 of the
    /// taller box on the 6,444 truth edges of the `v1-s1` held-out scenes (photos under perspective included).
    /// A box beside or below the target is passed by, as a box the curve brushes. Default 0.5;
    /// `f32::NEG_INFINITY` turns the check off.
    pub min_rank_offset: f32,
    /// Follow strokes under the cards they pass beneath: a trace entering a card that cannot be its source (on
    /// its target's rank or below, [`is_upstream`]) jumps to where a stroke comes out on the far side, heading on
    /// within 35° ([`trace_terminal`]), and a terminal within 16 units of where such a stroke came out from under
    /// its card, traced to the same source, is dropped ([`recover_edges`]): it is the passing stroke, not an edge
    /// into that card. Netron draws edges beneath the cards, and where a model's weights are `ConstantOfShape`
    /// nodes (the onnx package's "light" models) those cards sit beside their consumers, in the way of the other
    /// edges. Default on (`models/METRICS.md`, session 28).
    pub pass_under: bool,
    /// Drop a left or right terminal whose stroke runs straight across a gap into a neighbouring card and is wider
    /// next to that card (`points_into_neighbour`): the arrowhead is there, so the edge enters the neighbour,
    /// and the stroke at this card's side is the curve coming out from under it, or its own departure. Cards of
    /// one rank side by side (a `ConstantOfShape` card beside its consumer) otherwise take each other's edges. A
    /// neighbour that cannot be a target ([`ElementKind::can_be_target`]) never takes the stroke (session 29).
    /// Default on (`models/METRICS.md`, session 28).
    pub neighbour_arrowheads: bool,
    /// Keep only top-side terminals whose stroke is aimed into the box ([`aims_into`]), where strokes are at
    /// least 0.75 working pixels wide: Netron's arrowheads point at the target's centre, a curve clipping a
    /// corner on its way past does not.
    pub aimed_terminals: bool,
    /// A label is attached only to an edge passing within this many label heights of its anchor.
    pub label_max_distance: f32,
    /// Bridge labels left without a traced edge ([`bridge_labels`]): a label is drawn on its edge, so the nearest
    /// source above and target below its anchor give an edge even where the stroke is too faint to trace.
    pub bridge_labels: bool,
    /// Confidence of a bridged edge (below every traced edge's `min_confidence`, so consumers can tell them apart).
    pub bridge_confidence: f32,
    /// A bridged edge's ends are at most this many label heights above and below the label.
    pub bridge_max_gap: f32,
    /// The label's anchor may lie this many label heights outside an end's box horizontally.
    pub bridge_x_margin: f32,
}

impl Default for EdgeParams {
    fn default() -> Self {
        EdgeParams {
            unit_px: None,
            fallback_unit_px: 1.0,
            work_unit_px: 1.25,
            max_upsample: 3.0,
            min_upsample: 2.0,
            max_work_pixels: 6_000_000,
            tophat_radius: 2.5,
            ink_sigmas: 4.0,
            min_ink_contrast: 6.0,
            element_margin: 1.5,
            blur_px: 1.0,
            source_reach: 1.5,
            smooth: true,
            label_margin: 0.3,
            terminal_band: 3.0,
            terminal_split_width: 6.0,
            fan_in_probe: Some(12.0),
            step: 1.0,
            cone_deg: 45.0,
            turn_penalty: 0.15,
            momentum: 0.7,
            on_ink: 0.3,
            max_gap: 14.0,
            min_gap_px: 16.0,
            min_confidence: 0.4,
            min_rank_offset: 0.5,
            aimed_terminals: true,
            pass_under: true,
            neighbour_arrowheads: true,
            label_max_distance: 2.0,
            bridge_labels: true,
            bridge_confidence: 0.3,
            bridge_max_gap: 4.0,
            bridge_x_margin: 0.5,
        }
    }
}

/// Why edges could not be recovered.
#[derive(Debug, Error, PartialEq)]
pub enum EdgeError {
    /// The region is not finite and ordered, or does not overlap the image by at least 2×2 pixels.
    #[error("region {0:?} is not a finite box overlapping the image")]
    BadRegion([f32; 4]),
    /// An element or label box is not finite and ordered.
    #[error("box of {id:?} is not a finite ordered box")]
    BadBox { id: String },
    /// Two elements or labels share an id.
    #[error("id {id:?} is used twice")]
    DuplicateId { id: String },
}

/// One recovered connection.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveredEdge {
    /// Source element id (a node or input).
    pub from: String,
    /// Target element id (a node or output).
    pub to: String,
    /// Id of the label attached to this edge, if any.
    pub label: Option<String>,
    /// In `[0, 1]`: share of the traced curve on ink, times a penalty for an unusual exit side.
    pub confidence: f32,
    /// The traced curve, source to target, in source pixels (one point a working pixel or so).
    pub points: Vec<Point>,
    /// Side of the source box the curve leaves from.
    pub from_side: Side,
    /// Side of the target box the curve enters.
    pub to_side: Side,
    /// Whether the stroke widens into an arrowhead where it meets the target ([`has_arrowhead`]); `None` where
    /// that cannot be seen (a zoomed-out view, a short edge) and for an edge bridged from a label
    /// ([`bridge_labels`]).
    pub arrowhead: Option<bool>,
}

/// Geometry of the working raster: which source pixels it covers and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkFrame {
    /// Source-pixel position of the region's top-left corner (whole pixels).
    pub origin: Point,
    /// Working pixels per source pixel, in `(0, 1]`.
    pub scale: f32,
    /// Horizontal layouts are transposed (working x = source y), so that edges flow downwards.
    pub transposed: bool,
    /// Working raster size (after transposition).
    pub width: u32,
    pub height: u32,
    /// Unit (stroke width) in source pixels.
    pub unit_px: f32,
}

impl WorkFrame {
    /// Unit in working pixels.
    pub fn unit(&self) -> f32 {
        self.unit_px * self.scale
    }

    /// How much the working raster magnifies the source: `scale` when it is upsampled, else 1. Lengths that the
    /// parameters give in working pixels (blur, the floors of the windows and gaps) are meant at source
    /// resolution, so they are multiplied by it.
    pub fn magnification(&self) -> f32 {
        self.scale.max(1.0)
    }

    /// Source point → working point (continuous coordinates; pixel `(i, j)` covers `[i, i+1) × [j, j+1)`).
    pub fn to_work(&self, p: Point) -> Point {
        let x = (p.x - self.origin.x) * self.scale;
        let y = (p.y - self.origin.y) * self.scale;
        if self.transposed {
            Point::new(y, x)
        } else {
            Point::new(x, y)
        }
    }

    /// Working point → source point.
    pub fn to_source(&self, p: Point) -> Point {
        let (x, y) = if self.transposed {
            (p.y, p.x)
        } else {
            (p.x, p.y)
        };
        Point::new(
            x / self.scale + self.origin.x,
            y / self.scale + self.origin.y,
        )
    }

    /// Source box → working box.
    pub fn box_to_work(&self, b: &BBox) -> BBox {
        let a = self.to_work(Point::new(b.x0, b.y0));
        let c = self.to_work(Point::new(b.x1, b.y1));
        BBox::new(a.x.min(c.x), a.y.min(c.y), a.x.max(c.x), a.y.max(c.y))
    }
}

/// Ink strength on the working raster, with the masks that were applied.
#[derive(Debug, Clone)]
pub struct InkMap {
    pub frame: WorkFrame,
    /// Row-major, `frame.width × frame.height`: `clamp(top-hat / (2 × threshold), 0, 1)`, so 0.5 is the threshold;
    /// 0 inside masked boxes.
    pub strength: Vec<f32>,
    pub polarity: Polarity,
    /// Ink threshold, in luma levels (0–255) of top-hat response.
    pub threshold: f32,
    /// Per pixel: 0 = free, 1 + k = inside the (enlarged) box of element k, `LABEL_FLAG | k` = inside the box of
    /// label k.
    pub owner: Vec<u32>,
    /// Per pixel: 1 + k where a trace may end at source-capable element k (its box grown by the element margin
    /// and the source reach), else 0.
    pub reach: Vec<u32>,
    /// Element boxes on the working raster, enlarged by the element margin; index = element index.
    pub element_boxes: Vec<BBox>,
    /// Label boxes on the working raster (not enlarged); index = label index.
    pub label_boxes: Vec<BBox>,
}

/// Bit set in [`InkMap::owner`] for label pixels (the low bits hold the label index).
pub const LABEL_FLAG: u32 = 1 << 31;

impl InkMap {
    /// Bilinear ink strength at a working point; 0 outside the raster.
    pub fn sample(&self, p: Point) -> f32 {
        let (w, h) = (self.frame.width as i64, self.frame.height as i64);
        let fx = p.x - 0.5;
        let fy = p.y - 0.5;
        let x0 = fx.floor();
        let y0 = fy.floor();
        let (ax, ay) = (fx - x0, fy - y0);
        let (x0, y0) = (x0 as i64, y0 as i64);
        let at = |x: i64, y: i64| -> f32 {
            if x < 0 || y < 0 || x >= w || y >= h {
                0.0
            } else {
                self.strength[(y * w + x) as usize]
            }
        };
        let top = at(x0, y0) * (1.0 - ax) + at(x0 + 1, y0) * ax;
        let bottom = at(x0, y0 + 1) * (1.0 - ax) + at(x0 + 1, y0 + 1) * ax;
        top * (1.0 - ay) + bottom * ay
    }

    /// Ink strength of a whole pixel; 0 outside the raster.
    pub fn at(&self, x: i64, y: i64) -> f32 {
        if x < 0 || y < 0 || x >= self.frame.width as i64 || y >= self.frame.height as i64 {
            0.0
        } else {
            self.strength[(y * self.frame.width as i64 + x) as usize]
        }
    }

    /// Owner of the pixel under a working point (see [`InkMap::owner`]); 0 outside the raster.
    pub fn owner_at(&self, p: Point) -> u32 {
        let (x, y) = (p.x.floor() as i64, p.y.floor() as i64);
        if x < 0 || y < 0 || x >= self.frame.width as i64 || y >= self.frame.height as i64 {
            0
        } else {
            self.owner[(y * self.frame.width as i64 + x) as usize]
        }
    }

    fn inside(&self, p: Point) -> bool {
        p.x >= 0.0 && p.y >= 0.0 && p.x < self.frame.width as f32 && p.y < self.frame.height as f32
    }
}

/// Where a stroke ends at an element's entry side (working raster).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Terminal {
    /// Index of the target element.
    pub element: usize,
    /// Working point just outside the element's (enlarged) box, on the stroke.
    pub at: Point,
    /// Unit vector pointing upstream along the stroke, away from the element.
    pub direction: Point,
    /// Side of the element's box the stroke ends at.
    pub side: Side,
    /// Peak ink strength of the terminal's run, in `[0, 1]`.
    pub strength: f32,
}

/// How a trace ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceEnd {
    /// Entered the source element (index) through this side.
    Source(usize, Side),
    /// Left the working raster (the source is out of view).
    LeftRegion,
    /// Lost the stroke for longer than the gap limit.
    Lost,
}

/// One followed stroke, from a terminal upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub terminal: Terminal,
    pub end: TraceEnd,
    /// Working points, terminal first.
    pub points: Vec<Point>,
    /// Working pixels stepped on ink, across gaps, and coasting across label boxes or brushed element boxes.
    pub on_ink: f32,
    pub gap: f32,
    pub occluded: f32,
    /// Element boxes the trace passed under (jumped across, [`trace_terminal`]): (element index, where the stroke
    /// came out).
    pub passed_under: Vec<(usize, Point)>,
}

/// Diagnostics of one [`recover_edges`] run.
#[derive(Debug, Clone)]
pub struct EdgeDebug {
    pub frame: WorkFrame,
    pub polarity: Polarity,
    /// Ink threshold in luma levels of top-hat response.
    pub threshold: f32,
    pub terminals: usize,
    /// Traces by how they ended.
    pub traced_to_source: usize,
    pub left_region: usize,
    pub lost: usize,
    /// Edges dropped for low confidence or as duplicates.
    pub dropped: usize,
    /// Edges added by [`bridge_labels`].
    pub bridged: usize,
    /// Traced edges seen to end in an arrowhead, and seen to end without one ([`has_arrowhead`]).
    pub arrowheads: usize,
    pub no_arrowheads: usize,
    /// The working raster in source orientation (not transposed): ink strength in grey (dark = strong),
    /// element masks blue, label masks green, traces in colour (lost ones orange), terminals red. Pixel `(x, y)`
    /// covers source pixels `origin + [x, x+1) / scale × [y, y+1) / scale`.
    pub overlay: RgbImage,
}

/// Result of [`recover_edges`].
#[derive(Debug, Clone)]
pub struct EdgeResult {
    pub edges: Vec<RecoveredEdge>,
    pub debug: EdgeDebug,
}

/// The stroke width in source pixels from the boxes: the median label height / 11 (labels are 10 px text in a
/// box about 11 px tall at zoom 1), else the lower-quartile element height / 20 (a title-only card or a pill is
/// 20 px tall at zoom 1). `None` when there are no usable boxes.
pub fn estimate_unit(elements: &[Element], labels: &[Label]) -> Option<f32> {
    let heights = |it: &mut dyn Iterator<Item = f32>| {
        let mut v: Vec<f32> = it.filter(|h| h.is_finite() && *h > 0.0).collect();
        v.sort_by(f32::total_cmp);
        v
    };
    let lh = heights(&mut labels.iter().map(|l| l.bbox.height()));
    if !lh.is_empty() {
        return Some(lh[lh.len() / 2] / 11.0);
    }
    let eh = heights(&mut elements.iter().map(|e| e.bbox.height()));
    if !eh.is_empty() {
        return Some(eh[eh.len() / 4] / 20.0);
    }
    None
}

/// The working raster for `region` (source pixels) of an `image_width × image_height` image.
pub fn work_frame(
    image_width: u32,
    image_height: u32,
    region: BBox,
    unit_px: f32,
    direction: Direction,
    params: &EdgeParams,
) -> Result<WorkFrame, EdgeError> {
    let bad = || EdgeError::BadRegion(region.into());
    if !region.is_finite() || !region.is_ordered() {
        return Err(bad());
    }
    let x0 = region.x0.floor().max(0.0);
    let y0 = region.y0.floor().max(0.0);
    let x1 = region.x1.ceil().min(image_width as f32);
    let y1 = region.y1.ceil().min(image_height as f32);
    if x1 - x0 < 2.0 || y1 - y0 < 2.0 {
        return Err(bad());
    }
    let unit_px = if unit_px.is_finite() && unit_px > 0.0 {
        unit_px
    } else {
        params.fallback_unit_px.max(0.1)
    };
    let mut scale = params.work_unit_px / unit_px;
    if scale > 1.0 {
        scale = if scale >= params.min_upsample {
            scale.min(params.max_upsample.max(1.0))
        } else {
            1.0
        };
    }
    let pixels = f64::from(x1 - x0) * f64::from(y1 - y0);
    let max = params.max_work_pixels.max(1) as f64;
    if pixels * f64::from(scale * scale) > max {
        scale = (max / pixels).sqrt() as f32;
    }
    let w = (((x1 - x0) * scale).floor() as u32).max(1);
    let h = (((y1 - y0) * scale).floor() as u32).max(1);
    let transposed = direction == Direction::Horizontal;
    let (width, height) = if transposed { (h, w) } else { (w, h) };
    Ok(WorkFrame {
        origin: Point::new(x0, y0),
        scale,
        transposed,
        width,
        height,
        unit_px,
    })
}

/// Luma (BT.601, 0–255) of the region on the working raster (transposed when the frame is): area-averaged when the
/// frame shrinks the source or keeps its size, bilinearly sampled at each working pixel's centre when it magnifies
/// (the source clamped at its border).
pub fn work_luma(image: &RgbImage, frame: &WorkFrame) -> Vec<f32> {
    let (w, h) = if frame.transposed {
        (frame.height as usize, frame.width as usize)
    } else {
        (frame.width as usize, frame.height as usize)
    };
    let out = if frame.scale > 1.0 {
        bilinear_luma(image, frame, w, h)
    } else {
        area_luma(image, frame, w, h)
    };
    if frame.transposed {
        let mut t = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                t[x * h + y] = out[y * w + x];
            }
        }
        t
    } else {
        out
    }
}

fn area_luma(image: &RgbImage, frame: &WorkFrame, w: usize, h: usize) -> Vec<f32> {
    let (iw, ih) = (image.width() as usize, image.height() as usize);
    let inv = 1.0 / frame.scale;
    let span = |i: usize, origin: f32, limit: usize| {
        let a = (origin + i as f32 * inv).floor() as usize;
        let b = ((origin + (i + 1) as f32 * inv).floor() as usize).max(a + 1);
        (a.min(limit - 1), b.min(limit))
    };
    let xs: Vec<(usize, usize)> = (0..w).map(|i| span(i, frame.origin.x, iw)).collect();
    let raw = image.as_raw();
    let mut out = vec![0.0f32; w * h];
    for (j, row) in out.chunks_mut(w).enumerate() {
        let (ya, yb) = span(j, frame.origin.y, ih);
        for (i, v) in row.iter_mut().enumerate() {
            let (xa, xb) = xs[i];
            let mut sum = 0.0f32;
            for y in ya..yb {
                let base = (y * iw) * 3;
                for x in xa..xb {
                    let p = &raw[base + x * 3..base + x * 3 + 3];
                    sum +=
                        0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]);
                }
            }
            *v = sum / ((yb - ya) * (xb - xa)) as f32;
        }
    }
    out
}

fn bilinear_luma(image: &RgbImage, frame: &WorkFrame, w: usize, h: usize) -> Vec<f32> {
    let (iw, ih) = (image.width() as usize, image.height() as usize);
    let axis = |i: usize, origin: f32, limit: usize| {
        let c = (origin + (i as f32 + 0.5) / frame.scale - 0.5).clamp(0.0, (limit - 1) as f32);
        let a = c.floor() as usize;
        (a, (a + 1).min(limit - 1), c - a as f32)
    };
    let xs: Vec<(usize, usize, f32)> = (0..w).map(|i| axis(i, frame.origin.x, iw)).collect();
    let ys: Vec<(usize, usize, f32)> = (0..h).map(|j| axis(j, frame.origin.y, ih)).collect();
    let (Some(&(x0, _, _)), Some(&(_, x1, _))) = (xs.first(), xs.last()) else {
        return Vec::new();
    };
    let (Some(&(y0, _, _)), Some(&(_, y1, _))) = (ys.first(), ys.last()) else {
        return Vec::new();
    };
    // The taps only move right and down, so the source rectangle they reach is converted to luma once; every
    // source pixel serves several working pixels.
    let sw = x1 - x0 + 1;
    let raw = image.as_raw();
    let mut src = Vec::with_capacity(sw * (y1 - y0 + 1));
    for y in y0..=y1 {
        for p in raw[(y * iw + x0) * 3..(y * iw + x1 + 1) * 3].chunks_exact(3) {
            src.push(0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]));
        }
    }
    let mut out = vec![0.0f32; w * h];
    for (row, &(ya, yb, fy)) in out.chunks_mut(w).zip(&ys) {
        let (ra, rb) = (&src[(ya - y0) * sw..], &src[(yb - y0) * sw..]);
        for (v, &(xa, xb, fx)) in row.iter_mut().zip(&xs) {
            let (xa, xb) = (xa - x0, xb - x0);
            let top = ra[xa] * (1.0 - fx) + ra[xb] * fx;
            let bottom = rb[xa] * (1.0 - fx) + rb[xb] * fx;
            *v = top * (1.0 - fy) + bottom * fy;
        }
    }
    out
}

/// Ink polarity voted by the label boxes: text is drawn in the strokes' colour. Each box votes for dark ink when
/// more of its pixels are darker than the local background (the median of the ring around the box, half a box
/// height wide) by over 4 levels than are brighter by as much, for light ink in the opposite case. Without labels
/// (or on a tie), a region median of 100 or more means dark ink.
pub fn ink_polarity(luma: &[f32], width: u32, label_boxes: &[BBox]) -> Polarity {
    const MARGIN: f32 = 4.0;
    let w = width as usize;
    let h = luma.len() / w.max(1);
    let pixels = |b: &BBox, hole: Option<&BBox>| -> Vec<f32> {
        let (x0, x1) = pixel_span(b.x0, b.x1, w);
        let (y0, y1) = pixel_span(b.y0, b.y1, h);
        let mut v = Vec::new();
        for y in y0..y1 {
            for x in x0..x1 {
                let c = Point::new(x as f32 + 0.5, y as f32 + 0.5);
                if !hole.is_some_and(|hb| hb.contains(c)) {
                    v.push(luma[y * w + x]);
                }
            }
        }
        v
    };
    let mut votes = 0i32;
    for b in label_boxes {
        let inside = pixels(b, None);
        let mut ring = pixels(&grow(b, 0.5 * b.height().max(2.0)), Some(b));
        if inside.len() < 4 || ring.len() < 4 {
            continue;
        }
        ring.sort_by(f32::total_cmp);
        let background = ring[ring.len() / 2];
        let darker = inside.iter().filter(|v| **v < background - MARGIN).count();
        let brighter = inside.iter().filter(|v| **v > background + MARGIN).count();
        votes += (darker > brighter) as i32 - (brighter > darker) as i32;
    }
    if votes > 0 {
        Polarity::DarkInk
    } else if votes < 0 {
        Polarity::LightInk
    } else {
        let mut v: Vec<f32> = luma.iter().step_by(7).copied().collect();
        v.sort_by(f32::total_cmp);
        if v.is_empty() || v[v.len() / 2] >= 100.0 {
            Polarity::DarkInk
        } else {
            Polarity::LightInk
        }
    }
}

/// Running maximum (`max == true`) or minimum over a square window of radius `r`, separable; the window is clipped
/// at the raster's borders.
fn square_filter(src: &[f32], w: usize, h: usize, r: usize, max: bool) -> Vec<f32> {
    if max {
        square_extreme(src, w, h, r, f32::NEG_INFINITY, f32::max)
    } else {
        square_extreme(src, w, h, r, f32::INFINITY, f32::min)
    }
}

/// [`square_filter`] with `pick` (max or min) and its identity. Whole rows at a time, so the loops vectorise:
/// along a row by doubling windows over a row padded with the identity (a window of 2k values is the pick of
/// two windows of k, shifted by k; the last step overlaps two windows), across rows by picking whole rows. Max
/// and min are exact, so the order of picking does not change the result.
fn square_extreme<F: Fn(f32, f32) -> f32>(
    src: &[f32],
    w: usize,
    h: usize,
    r: usize,
    identity: f32,
    pick: F,
) -> Vec<f32> {
    if w == 0 || h == 0 {
        return Vec::new();
    }
    let n = 2 * r + 1;
    let mut tmp = vec![0.0f32; w * h];
    let mut padded = vec![identity; w + 2 * r];
    let mut next = vec![identity; w + 2 * r];
    for (row, out) in src.chunks_exact(w).zip(tmp.chunks_exact_mut(w)) {
        padded.fill(identity);
        padded[r..r + w].copy_from_slice(row);
        // `padded[i]` holds the pick of the k values from i on (identity past the end).
        let mut k = 1;
        while 2 * k <= n {
            let len = padded.len();
            for (i, v) in next[..len - k].iter_mut().enumerate() {
                *v = pick(padded[i], padded[i + k]);
            }
            next[len - k..].copy_from_slice(&padded[len - k..]);
            std::mem::swap(&mut padded, &mut next);
            k *= 2;
        }
        let shift = n - k;
        for (x, v) in out.iter_mut().enumerate() {
            *v = if shift == 0 {
                padded[x]
            } else {
                pick(padded[x], padded[x + shift])
            };
        }
    }
    let mut out = vec![0.0f32; w * h];
    for (y, row) in out.chunks_exact_mut(w).enumerate() {
        let (a, b) = (y.saturating_sub(r), (y + r).min(h - 1));
        row.copy_from_slice(&tmp[a * w..(a + 1) * w]);
        for other in tmp[(a + 1) * w..(b + 1) * w].chunks_exact(w) {
            for (v, o) in row.iter_mut().zip(other) {
                *v = pick(*v, *o);
            }
        }
    }
    out
}

/// Stage 2: the ink map of the region. Element boxes (enlarged by [`EdgeParams::element_margin`]) and label boxes
/// (enlarged by [`EdgeParams::label_margin`]) are masked out before the noise statistics.
pub fn ink_map(
    image: &RgbImage,
    frame: WorkFrame,
    elements: &[Element],
    labels: &[Label],
    params: &EdgeParams,
) -> InkMap {
    let (w, h) = (frame.width as usize, frame.height as usize);
    let u = frame.unit();
    let mut luma = work_luma(image, &frame);
    if params.smooth {
        luma = binomial3(&luma, w, h);
    }
    let label_boxes: Vec<BBox> = labels.iter().map(|l| frame.box_to_work(&l.bbox)).collect();
    let polarity = ink_polarity(&luma, frame.width, &label_boxes);
    let r = ((params.tophat_radius * u).round() as usize)
        .max((2.0 * frame.magnification()).round() as usize);
    let tophat: Vec<f32> = match polarity {
        Polarity::DarkInk => {
            let closed = square_filter(&square_filter(&luma, w, h, r, true), w, h, r, false);
            closed
                .iter()
                .zip(&luma)
                .map(|(c, l)| (c - l).max(0.0))
                .collect()
        }
        Polarity::LightInk => {
            let opened = square_filter(&square_filter(&luma, w, h, r, false), w, h, r, true);
            luma.iter()
                .zip(&opened)
                .map(|(l, o)| (l - o).max(0.0))
                .collect()
        }
    };

    let mut owner = vec![0u32; w * h];
    let em = params.element_margin * u + params.blur_px * frame.magnification();
    let element_boxes: Vec<BBox> = elements
        .iter()
        .map(|e| grow(&frame.box_to_work(&e.bbox), em))
        .collect();
    let lm = params.label_margin * u;
    for (k, b) in label_boxes.iter().enumerate() {
        fill_owner(&mut owner, w, h, &grow(b, lm), LABEL_FLAG | k as u32);
    }
    for (k, b) in element_boxes.iter().enumerate() {
        fill_owner(&mut owner, w, h, b, k as u32 + 1);
    }
    let mut reach = vec![0u32; w * h];
    let rm = params.source_reach * u + params.blur_px * frame.magnification();
    for (k, b) in element_boxes.iter().enumerate() {
        if elements[k].kind.can_be_source() {
            fill_owner(&mut reach, w, h, &grow(b, rm), k as u32 + 1);
        }
    }

    // Noise statistics of the unmasked top-hat, by a histogram in quarter luma levels.
    let mut hist = vec![0u32; 1024];
    let mut n = 0u32;
    for (t, o) in tophat.iter().zip(&owner) {
        if *o == 0 {
            hist[((t * 4.0) as usize).min(1023)] += 1;
            n += 1;
        }
    }
    let quantile = |hist: &[u32], f: f32| -> f32 {
        let want = (n as f32 * f) as u32;
        let mut acc = 0u32;
        for (i, c) in hist.iter().enumerate() {
            acc += c;
            if acc > want {
                return (i as f32 + 0.5) / 4.0;
            }
        }
        256.0
    };
    let median = if n > 0 { quantile(&hist, 0.5) } else { 0.0 };
    let mut dev = vec![0u32; 1024];
    for (t, o) in tophat.iter().zip(&owner) {
        if *o == 0 {
            dev[(((t - median).abs() * 4.0) as usize).min(1023)] += 1;
        }
    }
    let mad = if n > 0 { quantile(&dev, 0.5) } else { 0.0 };
    let threshold = (median + params.ink_sigmas * 1.4826 * mad).max(params.min_ink_contrast);
    let strength = tophat
        .iter()
        .zip(&owner)
        .map(|(t, o)| {
            if *o == 0 {
                (t / (2.0 * threshold)).min(1.0)
            } else {
                0.0
            }
        })
        .collect();
    InkMap {
        frame,
        strength,
        polarity,
        threshold,
        owner,
        reach,
        element_boxes,
        label_boxes,
    }
}

/// 3×3 binomial smoothing (`[1 2 1] / 4` in each direction), edges clamped.
fn binomial3(src: &[f32], w: usize, h: usize) -> Vec<f32> {
    let mix = |l: f32, c: f32, r: f32| 0.25 * l + 0.5 * c + 0.25 * r;
    let mut tmp = vec![0.0f32; w * h];
    for (row, out) in src.chunks_exact(w).zip(tmp.chunks_exact_mut(w)) {
        out[0] = mix(row[0], row[0], row[1.min(w - 1)]);
        if w > 1 {
            out[w - 1] = mix(row[w - 2], row[w - 1], row[w - 1]);
        }
        if w > 2 {
            let inner = out[1..w - 1].iter_mut().zip(row.windows(3));
            for (v, lcr) in inner {
                *v = mix(lcr[0], lcr[1], lcr[2]);
            }
        }
    }
    let mut out = vec![0.0f32; w * h];
    for (y, row) in out.chunks_exact_mut(w).enumerate() {
        let (a, b) = (y.saturating_sub(1), (y + 1).min(h - 1));
        let above = &tmp[a * w..(a + 1) * w];
        let centre = &tmp[y * w..(y + 1) * w];
        let below = &tmp[b * w..(b + 1) * w];
        for (x, v) in row.iter_mut().enumerate() {
            *v = mix(above[x], centre[x], below[x]);
        }
    }
    out
}

fn grow(b: &BBox, m: f32) -> BBox {
    BBox::new(b.x0 - m, b.y0 - m, b.x1 + m, b.y1 + m)
}

/// Pixel index ranges `[a, b)` of the pixels whose centres lie inside `[lo, hi]`.
fn pixel_span(lo: f32, hi: f32, n: usize) -> (usize, usize) {
    let a = (lo - 0.5).ceil().max(0.0) as usize;
    let b = ((hi - 0.5).floor() + 1.0).clamp(0.0, n as f32) as usize;
    (a.min(n), b.max(a.min(n)))
}

fn fill_owner(owner: &mut [u32], w: usize, h: usize, b: &BBox, value: u32) {
    let (x0, x1) = pixel_span(b.x0, b.x1, w);
    let (y0, y1) = pixel_span(b.y0, b.y1, h);
    for y in y0..y1 {
        owner[y * w + x0..y * w + x1].fill(value);
    }
}

/// Stage 3: arrowhead terminals of every element that can be a target. On the entry side (top of the masked box):
/// runs of ink (strength ≥ 0.5) in the band [`EdgeParams::terminal_band`] deep just outside the box, whose centre
/// lies within the box's width; runs wider than [`EdgeParams::terminal_split_width`] are split at dips below 60 %
/// of the smaller neighbouring peak. On the lateral sides (an edge arriving at a shallow angle ends there): the
/// same, but a run counts only when its stroke heads away from the box sideways and upstream (25°–100° from
/// straight up) and does not continue downstream (a curve brushing past the side).
pub fn find_terminals(ink: &InkMap, elements: &[Element], params: &EdgeParams) -> Vec<Terminal> {
    let u = ink.frame.unit();
    let margin = params.element_margin * u + params.blur_px * ink.frame.magnification();
    let band = (params.terminal_band * u).max(2.0 * ink.frame.magnification());
    let (w, h) = (ink.frame.width as usize, ink.frame.height as usize);
    let mut out = Vec::new();
    for (k, e) in elements.iter().enumerate() {
        if !e.kind.can_be_target() {
            continue;
        }
        let b = ink.element_boxes[k];
        for side in [Side::Top, Side::Left, Side::Right] {
            // Band pixels as (along, across) ranges; `along` runs parallel to the side, `across` through the band.
            let (along, across) = match side {
                Side::Top => (pixel_span(b.x0, b.x1, w), pixel_span(b.y0 - band, b.y0, h)),
                Side::Left => (pixel_span(b.y0, b.y1, h), pixel_span(b.x0 - band, b.x0, w)),
                _ => (pixel_span(b.y0, b.y1, h), pixel_span(b.x1, b.x1 + band, w)),
            };
            if along.0 >= along.1 || across.0 >= across.1 {
                continue;
            }
            let profile: Vec<f32> = (along.0..along.1)
                .map(|i| {
                    (across.0..across.1)
                        .map(|j| match side {
                            Side::Top => ink.at(i as i64, j as i64),
                            _ => ink.at(j as i64, i as i64),
                        })
                        .fold(0.0, f32::max)
                })
                .collect();
            let side_runs: Vec<(usize, usize)> = runs(&profile, 0.5)
                .into_iter()
                .flat_map(|(a, z)| split_run(&profile, a, z, params.terminal_split_width * u))
                .collect();
            for &(sa, sz) in &side_runs {
                let (centroid, strength) = run_centre(&profile, sa, sz);
                let centre = centroid + along.0 as f32 + 0.5;
                let (at, direction) = match side {
                    Side::Top => {
                        if centre < b.x0 + margin - 0.5 || centre > b.x1 - margin + 0.5 {
                            continue;
                        }
                        let at = Point::new(centre, b.y0 - 0.5);
                        let (direction, _) = best_ray(ink, at, 0.0, 75.0, 0.0, 8.0 * u);
                        // Strokes under 0.75 working pixels wide give too noisy a heading for the test.
                        if params.aimed_terminals && u >= 0.75 {
                            let (aim, _) = best_ray(ink, at, 0.0, 75.0, 0.0, 10.0 * u);
                            if !aims_into(&b, at, aim) {
                                continue;
                            }
                        }
                        (at, direction)
                    }
                    _ => {
                        let sign = if side == Side::Left { -1.0 } else { 1.0 };
                        let x = if side == Side::Left {
                            b.x0 - 0.5
                        } else {
                            b.x1 + 0.5
                        };
                        let at = Point::new(x, centre);
                        let (direction, mean) = best_ray(ink, at, sign * 62.5, 37.5, 0.0, 8.0 * u);
                        // Ink going on downwards, past the run, is a curve passing the side, unless it is the
                        // next of several arrowheads stacked on this side (a fan-in arriving sideways). The run
                        // itself may be several arrowheads run together.
                        let below = (sz + along.0) as f32 - centre;
                        let from = (4.0 * u).max(below + u);
                        let (_, down) = best_ray(ink, at, 180.0, 30.0, from, from + 8.0 * u);
                        let stacked = side_runs
                            .iter()
                            .any(|&(na, _)| na >= sz && (na - sz) as f32 <= 12.0 * u);
                        if mean < 0.35 || (down >= 0.35 && !stacked) {
                            continue;
                        }
                        if params.neighbour_arrowheads
                            && points_into_neighbour(ink, elements, k, at, direction, u)
                        {
                            continue;
                        }
                        (at, direction)
                    }
                };
                out.push(Terminal {
                    element: k,
                    at,
                    direction,
                    side,
                    strength,
                });
            }
        }
    }
    out
}

/// Whether the stroke at a side terminal of element `k` (at `at`, heading `dir` away from the box) runs straight
/// into another element's box within 24 units, at least 10 units away (room for an arrowhead and both boxes'
/// margins), and is wider, by a unit or more, 2–5 units from that box than 2–5 units from this one: the arrowhead
/// (8 units long, 6 wide) is at the other end, so the edge ends there ([`EdgeParams::neighbour_arrowheads`]).
/// Never when that element cannot be a target (an input, a constant card).
fn points_into_neighbour(
    ink: &InkMap,
    elements: &[Element],
    k: usize,
    at: Point,
    dir: Point,
    u: f32,
) -> bool {
    let reach = 24.0 * u;
    let mut t = 1.0;
    let mut gap = None;
    while t <= reach {
        let o = ink.owner_at(Point::new(at.x + dir.x * t, at.y + dir.y * t));
        if o != 0 && o & LABEL_FLAG == 0 && o as usize - 1 != k {
            gap = Some((t, o as usize - 1));
            break;
        }
        t += 1.0;
    }
    let Some((g, other)) = gap else { return false };
    if g < 10.0 * u || !elements[other].kind.can_be_target() {
        return false;
    }
    let width = |t: f32| ink_width(ink, Point::new(at.x + dir.x * t, at.y + dir.y * t), dir, u);
    let near_here = [2.0f32, 3.0, 4.0, 5.0]
        .iter()
        .map(|&d| width(d * u))
        .fold(0.0, f32::max);
    let near_there = [2.0f32, 3.0, 4.0, 5.0]
        .iter()
        .map(|&d| width(g - d * u))
        .fold(0.0, f32::max);
    near_there >= near_here + u
}

/// Width of the ink across a stroke heading `dir` at `c`, in working pixels: the samples at least at the
/// threshold (strength 0.5), half a pixel apart, within `ceil(4u)` pixels either side.
fn ink_width(ink: &InkMap, c: Point, dir: Point, u: f32) -> f32 {
    let n = Point::new(-dir.y, dir.x);
    let half = (4.0 * u).ceil() as i32 * 2;
    (-half..=half)
        .filter(|&i| {
            ink.sample(Point::new(
                c.x + n.x * i as f32 * 0.5,
                c.y + n.y * i as f32 * 0.5,
            )) >= 0.5
        })
        .count() as f32
        * 0.5
}

/// Whether a traced stroke widens into an arrowhead at its target: Netron ends every edge in one, 8 units long
/// and 6 wide at its base, its tip on the box. Along the trace from its terminal (which lies just outside the
/// box and its margin), the stroke's width (the ink at least at the threshold, across the trace's local
/// direction), sampled a unit apart, must be at least a unit more than the median of its widths 10–14 units out
/// on two or more consecutive samples, the first of them within 3 units of the terminal (the box may be off by
/// that), or on four or more anywhere in the first 8 units; and that median must be above zero (the stroke goes
/// on). A single wide spot is a crossing; a short wide stretch further out is another shape's; a border or an
/// outline running into a box keeps its width. `None` where a unit is under one working pixel (the view is
/// zoomed out: the arrowhead is a few pixels, most of them under the box's mask, and cannot be told from the
/// stroke) or the trace is shorter than 14 units. Terminals moved upstream of a fan-in's blob of arrowheads
/// ([`split_converging`]) do not show theirs. Measured in `models/METRICS.md` (session 36): it misses many real
/// arrowheads.
pub fn has_arrowhead(ink: &InkMap, trace: &Trace) -> Option<bool> {
    let u = ink.frame.unit();
    if u < 1.0 {
        return None;
    }
    // Width at arc length `s` along the trace, across its direction over about two units around that point.
    let pts = &trace.points;
    let mut arc = Vec::with_capacity(pts.len());
    let mut total = 0.0f32;
    for (k, p) in pts.iter().enumerate() {
        if k > 0 {
            total += distance(pts[k - 1], *p);
        }
        arc.push(total);
    }
    if total < 14.0 * u {
        return None;
    }
    let width = |s: f32| {
        let k = arc.partition_point(|&a| a < s).min(pts.len() - 1);
        let lo = arc.partition_point(|&a| a < s - u).min(k);
        let hi = arc.partition_point(|&a| a <= s + u).clamp(k, pts.len() - 1);
        let (a, b) = (pts[lo], pts[hi]);
        let d = distance(a, b);
        let dir = if d > 1e-3 {
            Point::new((b.x - a.x) / d, (b.y - a.y) / d)
        } else {
            trace.terminal.direction
        };
        ink_width(ink, pts[k], dir, u)
    };
    let near: Vec<f32> = (0..=8).map(|d| width(d as f32 * u)).collect();
    let mut far: Vec<f32> = (10..=14).map(|d| width(d as f32 * u)).collect();
    far.sort_by(f32::total_cmp);
    let wide = far[2] + u;
    // The wide stretch starts where the stroke meets the box's mask, give or take the box's error; one that
    // starts further out must be long (a box drawn short).
    let start = near.iter().position(|&w| w >= wide);
    let run = start.map_or(0, |a| near[a..].iter().take_while(|&&w| w >= wide).count());
    let longest = near
        .split(|&w| w < wide)
        .map(<[f32]>::len)
        .max()
        .unwrap_or(0);
    Some(far[2] > 0.0 && ((start.is_some_and(|a| a <= 3) && run >= 2) || longest >= 4))
}

/// Stage 3b: a terminal where several strokes converge becomes one terminal per stroke. Netron aims every
/// arrowhead at its target's centre, so the edges of a fan-in into a small card (a `BatchNormalization` fed by
/// four constants, a narrow `Add`) end in one blob of overlapping arrowheads and often run together for a while
/// before it, which [`find_terminals`] sees as one run. Further upstream the strokes are apart: at `probe`, 2 ×
/// `probe` and 3 × `probe` units out from the terminal's side (at least 8, 16 and 24 working pixels, but never
/// beyond 3 × `probe` units: where a unit is a fraction of a pixel, farther lines meet the strokes of other edges),
/// the ink runs crossing the line parallel to that side within ±2 such distances of the terminal are candidates,
/// and one counts when the ink joins it straight to the terminal (mean strength ≥ 0.5 along the chord, the
/// strongest of three parallel chords a pixel apart). Where the distance with the most such strokes (the nearest
/// of equals) has two or more, each becomes a terminal at its crossing, heading upstream along its stroke
/// (`best_ray`); otherwise the terminal stays as found.
pub fn split_converging(ink: &InkMap, terminals: Vec<Terminal>, probe: f32) -> Vec<Terminal> {
    let u = ink.frame.unit();
    let mut out = Vec::with_capacity(terminals.len());
    for t in terminals {
        let mut split: Vec<Terminal> = Vec::new();
        for m in 1..=3 {
            let d = (probe * u * m as f32).max(8.0 * m as f32);
            if d > 3.0 * probe * u {
                break;
            }
            let found = converging_strokes(ink, &t, d);
            if found.len() > split.len() {
                split = found;
            }
        }
        if split.len() >= 2 {
            out.extend(split);
        } else {
            out.push(t);
        }
    }
    out
}

/// The strokes crossing the line parallel to `t`'s side `d` working pixels out from it that the ink joins straight
/// to `t` ([`split_converging`]), as terminals.
fn converging_strokes(ink: &InkMap, t: &Terminal, d: f32) -> Vec<Terminal> {
    let u = ink.frame.unit();
    // Away from the box, square to the side the terminal is on.
    let dir = match t.side {
        Side::Left => Point::new(-1.0, 0.0),
        Side::Right => Point::new(1.0, 0.0),
        _ => Point::new(0.0, -1.0),
    };
    let centre = Point::new(t.at.x + dir.x * d, t.at.y + dir.y * d);
    let across = Point::new(-dir.y, dir.x);
    let half = (2.0 * d).ceil() as i32;
    let point = |i: i32| {
        Point::new(
            centre.x + across.x * i as f32,
            centre.y + across.y * i as f32,
        )
    };
    let profile: Vec<f32> = (-half..=half)
        .map(|i| {
            let q = point(i);
            [-1.0f32, 0.0, 1.0]
                .iter()
                .map(|&o| ink.sample(Point::new(q.x + dir.x * o, q.y + dir.y * o)))
                .fold(0.0, f32::max)
        })
        .collect();
    let lo = point(-half);
    let mut found = Vec::new();
    for (a, z) in runs(&profile, 0.5) {
        let (mid, strength) = run_centre(&profile, a, z);
        let at = Point::new(lo.x + across.x * mid, lo.y + across.y * mid);
        if chord_ink(ink, at, t.at) < 0.5 {
            continue;
        }
        let heading = (at.x - t.at.x).atan2(t.at.y - at.y).to_degrees();
        let (direction, _) = best_ray(ink, at, heading, 30.0, 0.0, 8.0 * u);
        if direction.y > MAX_DOWNSTREAM {
            continue;
        }
        found.push(Terminal {
            at,
            direction,
            strength,
            ..*t
        });
    }
    found
}

/// Mean ink strength along the chord `a → b`, sampled every working pixel, of the strongest of three parallel
/// chords a pixel apart (a curve's chord drifts off its stroke by a pixel or so).
fn chord_ink(ink: &InkMap, a: Point, b: Point) -> f32 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1.0 {
        return 0.0;
    }
    let n = norm(-dy, dx);
    let steps = len.ceil() as usize;
    [-1.0f32, 0.0, 1.0]
        .iter()
        .map(|&o| {
            (0..=steps)
                .map(|i| {
                    let f = i as f32 / steps as f32;
                    ink.sample(Point::new(a.x + dx * f + n.x * o, a.y + dy * f + n.y * o))
                })
                .sum::<f32>()
                / (steps + 1) as f32
        })
        .fold(0.0, f32::max)
}

/// Whether a stroke reaching `at` on the top side of box `b` from `upstream` (a unit vector pointing back along
/// the stroke) is aimed into the box: carried on, it passes the box's centre line within the box's width. Netron
/// ends an edge where the line from its last control point to the target's centre meets the target's box, so an
/// arrowhead points at the centre; a curve that only clips a corner of the box on its way past is aimed beside it.
pub fn aims_into(b: &BBox, at: Point, upstream: Point) -> bool {
    if upstream.y >= 0.0 {
        return false;
    }
    let t = ((b.y0 + b.y1) / 2.0 - at.y) / -upstream.y;
    let x = at.x - upstream.x * t;
    b.x0 <= x && x <= b.x1
}

/// The ink-weighted centre (an index into `v`, fractional) and the peak of the run `v[a..z]`.
fn run_centre(v: &[f32], a: usize, z: usize) -> (f32, f32) {
    let seg = &v[a..z];
    let total: f32 = seg.iter().sum();
    let centre = seg
        .iter()
        .enumerate()
        .map(|(i, x)| (a + i) as f32 * x)
        .sum::<f32>()
        / total;
    (centre, seg.iter().copied().fold(0.0, f32::max))
}

/// Maximal index ranges `[a, b)` where `v >= t`.
fn runs(v: &[f32], t: f32) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, x) in v.iter().enumerate() {
        match (start, *x >= t) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, v.len()));
    }
    out
}

/// Splits a run wider than `max_width` at its dips: local minima below 60 % of the smaller of the peaks around them.
fn split_run(v: &[f32], a: usize, z: usize, max_width: f32) -> Vec<(usize, usize)> {
    if ((z - a) as f32) <= max_width {
        return vec![(a, z)];
    }
    let mut cuts = Vec::new();
    for i in a + 1..z.saturating_sub(1) {
        if v[i] <= v[i - 1] && v[i] <= v[i + 1] {
            let left = v[a..i].iter().copied().fold(0.0, f32::max);
            let right = v[i + 1..z].iter().copied().fold(0.0, f32::max);
            if v[i] < 0.6 * left.min(right) && cuts.last().is_none_or(|c| i > c + 1) {
                cuts.push(i);
            }
        }
    }
    let mut out = Vec::new();
    let mut s = a;
    for c in cuts {
        out.push((s, c));
        s = c + 1;
    }
    out.push((s, z));
    out
}

fn norm(x: f32, y: f32) -> Point {
    let l = (x * x + y * y).sqrt().max(1e-6);
    Point::new(x / l, y / l)
}

fn rotate(d: Point, a: f32) -> Point {
    let (s, c) = a.sin_cos();
    Point::new(d.x * c - d.y * s, d.x * s + d.y * c)
}

/// Samples the tracker averages along each candidate direction.
const LOOKAHEAD: usize = 4;

/// [`InkMap::reach`] at a working point; 0 outside the raster.
fn reach_at(ink: &InkMap, p: Point) -> u32 {
    let (x, y) = (p.x.floor() as i64, p.y.floor() as i64);
    if x < 0 || y < 0 || x >= ink.frame.width as i64 || y >= ink.frame.height as i64 {
        0
    } else {
        ink.reach[(y * ink.frame.width as i64 + x) as usize]
    }
}

/// A trace jumps across a card it passes under ([`EdgeParams::pass_under`]) only to a stroke coming out within
/// this many degrees of its heading, as seen from where it went in, ...
const PASS_UNDER_AIM_DEG: f32 = 45.0;
/// ... and running on within this many degrees of that heading.
const PASS_UNDER_TURN_DEG: f32 = 35.0;
/// A terminal this many units from where a stroke came out from under its card is that stroke
/// ([`EdgeParams::pass_under`]).
const PASS_UNDER_REACH: f32 = 16.0;

/// Directions may point at most this far downstream (y component of a unit vector): curves are monotone.
const MAX_DOWNSTREAM: f32 = 0.15;

/// Stage 4: follows the stroke from a terminal upstream until it enters a source element, leaves the raster or is
/// lost. See the module doc.
pub fn trace_terminal(ink: &InkMap, terminal: &Terminal, params: &EdgeParams) -> Trace {
    let u = ink.frame.unit();
    let step = (params.step * u).max(1.0);
    let cone = params.cone_deg.to_radians();
    let max_gap = (params.max_gap * u).max(params.min_gap_px * ink.frame.magnification());
    let label_margin = params.label_margin * u;
    let mut p = terminal.at;
    let mut d = terminal.direction;
    let mut trace = Trace {
        terminal: *terminal,
        end: TraceEnd::Lost,
        points: vec![p],
        on_ink: 0.0,
        gap: 0.0,
        occluded: 0.0,
        passed_under: Vec::new(),
    };
    let mut gap_run = 0.0f32;
    let mut pending: Option<(usize, Trace)> = None;
    let max_steps = (4 * (ink.frame.width + ink.frame.height)) as usize;
    let n_angles = 9i32;
    for _ in 0..max_steps {
        // Best direction in the cone by mean strength over a short lookahead, minus a turning penalty.
        let mut best = (f32::NEG_INFINITY, d, 0.0f32);
        for k in -n_angles..=n_angles {
            let a = cone * k as f32 / n_angles as f32;
            let dir = rotate(d, a);
            if dir.y > MAX_DOWNSTREAM {
                continue;
            }
            let mut s = 0.0;
            for j in 1..=LOOKAHEAD {
                let q = Point::new(p.x + dir.x * step * j as f32, p.y + dir.y * step * j as f32);
                s += ink.sample(q);
            }
            let s = s / LOOKAHEAD as f32;
            let score = s - params.turn_penalty * (a / cone).powi(2);
            if score > best.0 {
                best = (score, dir, s);
            }
        }
        let owner_here = ink.owner_at(p);
        // Inside a label or element box the stroke is masked: coasting there is not a gap.
        let occluded_here = owner_here != 0;
        let mut q;
        if best.2 >= params.on_ink {
            let raw = Point::new(p.x + best.1.x * step, p.y + best.1.y * step);
            let c = recenter(ink, raw, best.1, u);
            let sd = norm(c.x - p.x, c.y - p.y);
            let m = params.momentum;
            let mut nd = norm(d.x * m + sd.x * (1.0 - m), d.y * m + sd.y * (1.0 - m));
            if nd.y > MAX_DOWNSTREAM {
                nd = norm(nd.x, MAX_DOWNSTREAM);
            }
            d = nd;
            q = c;
            trace.on_ink += step;
            gap_run = 0.0;
        } else {
            q = Point::new(p.x + d.x * step, p.y + d.y * step);
            if occluded_here {
                trace.occluded += step;
            } else {
                trace.gap += step;
                gap_run += step;
                if gap_run > max_gap {
                    trace.end = TraceEnd::Lost;
                    return settle(trace, pending);
                }
            }
        }
        // Entering a label box: the stroke is hidden inside it, so jump to where it comes out.
        let o = ink.owner_at(q);
        if o & LABEL_FLAG != 0 && o != owner_here {
            let label = grow(&ink.label_boxes[(o & !LABEL_FLAG) as usize], label_margin);
            if let Some((exit, dir)) = cross_box(ink, &label, p, d, u) {
                trace.occluded += distance(p, exit);
                q = exit;
                d = dir;
            }
        }
        if !ink.inside(q) {
            trace.points.push(q);
            trace.end = TraceEnd::LeftRegion;
            return settle(trace, pending);
        }
        let o = reach_at(ink, q);
        if o != 0
            && o as usize - 1 != terminal.element
            && is_upstream(
                &ink.element_boxes[o as usize - 1],
                &ink.element_boxes[terminal.element],
                params.min_rank_offset,
            )
        {
            let k = o as usize - 1;
            let b = &ink.element_boxes[k];
            let inside = ink.owner_at(q) == o;
            let side = if p.y >= b.y1 - 0.5 {
                Side::Bottom
            } else if p.x <= b.x0 + 0.5 {
                Side::Left
            } else if p.x >= b.x1 - 0.5 {
                Side::Right
            } else {
                Side::Top
            };
            // A trace ends at a source when it gets into the masked box, or into the reach around it where the
            // stroke does not go on outside the box (a curve passing close by does), heading into the box. A steep
            // arrival (within 60° of straight upstream) ends it at once. A shallow one may be a curve that passes
            // under the box (Netron draws edges across cards) as well as one that leaves it sideways: the trace
            // goes on, coasting through the box, and falls back to this box if it finds nothing better.
            let toward = match side {
                Side::Bottom => d.y < -0.3,
                Side::Left => d.x > 0.35,
                Side::Right => d.x < -0.35,
                Side::Top => false,
            };
            let steep = d.y < -0.5;
            let arrived = inside
                || (toward && {
                    let centre = d.x.atan2(-d.y).to_degrees();
                    let (_, ahead) = best_ray(ink, q, centre, 30.0, 1.0, 8.0 * u);
                    ahead < 0.5
                });
            if arrived && steep && (toward || inside) {
                trace.points.push(q);
                trace.end = TraceEnd::Source(k, side);
                return trace;
            }
            if arrived
                && (toward || side != Side::Top)
                && pending.as_ref().is_none_or(|pd| pd.0 != k)
            {
                let mut snapshot = trace.clone();
                snapshot.points.push(q);
                snapshot.end = TraceEnd::Source(k, side);
                pending = Some((k, snapshot));
            }
        }
        // Entering a card that cannot end this trace: the stroke may pass under it (Netron draws edges beneath
        // the cards). Jump to where a stroke comes out on the far side, heading on as this one did.
        let o = ink.owner_at(q);
        if params.pass_under
            && o != 0
            && o & LABEL_FLAG == 0
            && o != owner_here
            && o as usize - 1 != terminal.element
            && pending.as_ref().is_none_or(|pd| pd.0 != o as usize - 1)
        {
            let k = o as usize - 1;
            let b = ink.element_boxes[k];
            let exit = if is_upstream(
                &b,
                &ink.element_boxes[terminal.element],
                params.min_rank_offset,
            ) {
                None
            } else {
                cross_box(ink, &b, p, d, u).filter(|(exit, dir)| {
                    let v = norm(exit.x - p.x, exit.y - p.y);
                    v.x * d.x + v.y * d.y >= PASS_UNDER_AIM_DEG.to_radians().cos()
                        && dir.x * d.x + dir.y * d.y >= PASS_UNDER_TURN_DEG.to_radians().cos()
                })
            };
            if let Some((exit, dir)) = exit {
                trace.occluded += distance(q, exit);
                trace.points.push(q);
                trace.passed_under.push((k, exit));
                q = exit;
                d = dir;
            }
        }
        p = q;
        trace.points.push(p);
    }
    settle(trace, pending)
}

/// Whether a box can be the source of an edge into `target` ([`EdgeParams::min_rank_offset`]): its centre lies
/// above the target's (working raster, where edges flow top to bottom) by at least `min_offset` times the
/// taller box's height. Boxes grown by the same margin compare as the boxes themselves would, near enough.
pub fn is_upstream(source: &BBox, target: &BBox, min_offset: f32) -> bool {
    if min_offset == f32::NEG_INFINITY {
        return true;
    }
    let offset = (target.y0 + target.y1 - source.y0 - source.y1) / 2.0;
    offset >= min_offset * source.height().max(target.height())
}

/// Sides of the element boxes that a stroke crosses, by the axis the strokes run along there: Netron's edges leave
/// and enter the boxes through their bottom and top sides in a vertical layout, through their right and left
/// sides in a horizontal one ([`side_crossings`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SideCrossings {
    /// Top and bottom sides crossed.
    pub vertical: u32,
    /// Left and right sides crossed.
    pub horizontal: u32,
}

/// Counts the sides of `elements` (source pixels, inside `region` of `image`) that a stroke crosses: a side counts
/// when an 8-connected path of ink (strength ≥ 0.5, [`ink_map`] of the untransposed region, every element and
/// label box masked) runs through the band just outside it, [`EdgeParams::terminal_band`] units (at least 4
/// working pixels) deep, from its outer row to the row next to the box, along the side but for one band depth at
/// each end. A stroke running along the side stays in one or two of the band's rows, and one passing the box
/// crosses the bands of its lateral sides only at the corners left out: neither counts.
pub fn side_crossings(
    image: &RgbImage,
    region: BBox,
    elements: &[Element],
    labels: &[Label],
    params: &EdgeParams,
) -> Result<SideCrossings, EdgeError> {
    let ink = region_ink(image, region, elements, labels, Direction::Vertical, params)?;
    let frame = ink.frame;
    let (w, h) = (frame.width as usize, frame.height as usize);
    let depth = (params.terminal_band * frame.unit()).max(4.0 * frame.magnification());
    let mut out = SideCrossings::default();
    for b in &ink.element_boxes {
        // The sides' spans without their ends.
        let span_x = pixel_span(b.x0 + depth, b.x1 - depth, w);
        let span_y = pixel_span(b.y0 + depth, b.y1 - depth, h);
        for side in [Side::Top, Side::Bottom, Side::Left, Side::Right] {
            // Band pixels as (along, across) ranges; `along` runs parallel to the side, `across` through the band.
            let (along, across) = match side {
                Side::Top => (span_x, pixel_span(b.y0 - depth, b.y0, h)),
                Side::Bottom => (span_x, pixel_span(b.y1, b.y1 + depth, h)),
                Side::Left => (span_y, pixel_span(b.x0 - depth, b.x0, w)),
                Side::Right => (span_y, pixel_span(b.x1, b.x1 + depth, w)),
            };
            if along.1 - along.0 < 1 || across.1 - across.0 < 4 {
                continue;
            }
            let inked = |i: usize, j: usize| match side {
                Side::Top | Side::Bottom => ink.at(i as i64, j as i64) >= 0.5,
                _ => ink.at(j as i64, i as i64) >= 0.5,
            };
            // A path through the band read from either end is the same path: rows in raster order.
            let mut reach: Vec<bool> = (along.0..along.1).map(|i| inked(i, across.0)).collect();
            for j in across.0 + 1..across.1 {
                let n = reach.len();
                reach = (0..n)
                    .map(|k| {
                        let near = reach[k.saturating_sub(1)..(k + 2).min(n)].contains(&true);
                        near && inked(along.0 + k, j)
                    })
                    .collect();
                if !reach.contains(&true) {
                    break;
                }
            }
            if reach.contains(&true) {
                match side {
                    Side::Top | Side::Bottom => out.vertical += 1,
                    _ => out.horizontal += 1,
                }
            }
        }
    }
    Ok(out)
}

/// The trace as it ended, or the pending fallback source when it found none.
fn settle(trace: Trace, pending: Option<(usize, Trace)>) -> Trace {
    match (trace.end, pending) {
        (TraceEnd::Source(..), _) | (_, None) => trace,
        (_, Some((_, fallback))) => fallback,
    }
}

/// Where a stroke entering the masked box `b` at `p` (heading `d`) comes out again: the ink pixel (strength ≥ 0.5)
/// in the 2-pixel ring around the box, ahead of `p` and at most 80° off `d` as seen from `p`, whose stroke goes on
/// outwards (a ray of mean strength ≥ 0.35 over 4 units); the one closest in angle to `d` wins. Returns the exit
/// point and the stroke's direction there.
fn cross_box(ink: &InkMap, b: &BBox, p: Point, d: Point, u: f32) -> Option<(Point, Point)> {
    let (w, h) = (ink.frame.width as usize, ink.frame.height as usize);
    let ring = grow(b, 2.0);
    let (xa, xb) = pixel_span(ring.x0, ring.x1, w);
    let (ya, yb) = pixel_span(ring.y0, ring.y1, h);
    let min_cos = 80f32.to_radians().cos();
    let mut candidates: Vec<(f32, Point)> = Vec::new();
    for y in ya..yb {
        for x in xa..xb {
            let c = Point::new(x as f32 + 0.5, y as f32 + 0.5);
            if b.contains(c) || ink.at(x as i64, y as i64) < 0.5 {
                continue;
            }
            let (vx, vy) = (c.x - p.x, c.y - p.y);
            let dist = (vx * vx + vy * vy).sqrt();
            if dist < 2.0 * u.max(1.0) || vy > MAX_DOWNSTREAM * dist {
                continue;
            }
            let cos = (vx * d.x + vy * d.y) / dist;
            if cos < min_cos {
                continue;
            }
            candidates.push((cos, c));
        }
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, c) in candidates {
        let away = norm(c.x - p.x, c.y - p.y);
        let centre = away.x.atan2(-away.y).to_degrees();
        let (dir, mean) = best_ray(ink, c, centre, 60.0, 0.0, 4.0 * u);
        if mean >= 0.35 && dir.y <= MAX_DOWNSTREAM {
            return Some((c, dir));
        }
    }
    None
}

/// The ray from `p` with the most ink: angles `centre ± half` degrees (measured from straight up, positive
/// towards +x, 5° apart), mean strength sampled every working pixel from distance `from` (at least 1) to `to`
/// (at least `from + 3`). Returns the unit direction and its mean strength.
fn best_ray(ink: &InkMap, p: Point, centre: f32, half: f32, from: f32, to: f32) -> (Point, f32) {
    let start = from.max(1.0);
    let len = to.max(start + 3.0);
    let steps = (half / 5.0).floor() as i32;
    let mut best = (Point::new(0.0, -1.0), f32::NEG_INFINITY);
    for k in -steps..=steps {
        let a = (centre + k as f32 * 5.0).to_radians();
        let dir = Point::new(a.sin(), -a.cos());
        let mut s = 0.0;
        let mut n = 0;
        let mut t = start;
        while t <= len {
            s += ink.sample(Point::new(p.x + dir.x * t, p.y + dir.y * t));
            n += 1;
            t += 1.0;
        }
        // Slight preference for the centre direction, so an empty fan keeps it.
        let mean = s / n as f32;
        let score = mean * (1.0 - 0.1 * (k as f32 / steps.max(1) as f32).powi(2));
        if score > best.1 {
            best = (dir, score);
        }
    }
    let mut mean = 0.0;
    let mut n = 0;
    let mut t = start;
    while t <= len {
        mean += ink.sample(Point::new(p.x + best.0.x * t, p.y + best.0.y * t));
        n += 1;
        t += 1.0;
    }
    (best.0, mean / n as f32)
}

/// Moves `q` across the stroke (perpendicular to `dir`) to the ink-weighted centroid within ±max(2, 1.5 units),
/// by at most 1.5 pixels.
fn recenter(ink: &InkMap, q: Point, dir: Point, u: f32) -> Point {
    let n = Point::new(-dir.y, dir.x);
    let half = (1.5 * u).max(2.0);
    let mut t = -half;
    let (mut sw, mut st) = (0.0f32, 0.0f32);
    while t <= half + 1e-3 {
        let v = ink.sample(Point::new(q.x + n.x * t, q.y + n.y * t));
        let wgt = (v - 0.25).max(0.0);
        sw += wgt;
        st += wgt * t;
        t += 0.5;
    }
    if sw <= 0.0 {
        return q;
    }
    let off = (st / sw).clamp(-1.5, 1.5);
    Point::new(q.x + n.x * off, q.y + n.y * off)
}

/// Stage 5: attaches labels to edges (sets [`RecoveredEdge::label`]). Works in the working frame, where every
/// label sits to the right of its edge: the anchor is half a label height left of the label box's left-middle,
/// and an edge's distance is its curve's closest approach to the anchor, in label heights. Pairs closer than
/// [`EdgeParams::label_max_distance`] are taken greedily, nearest first, one label per edge.
pub fn attach_labels(
    edges: &mut [RecoveredEdge],
    labels: &[Label],
    frame: &WorkFrame,
    params: &EdgeParams,
) {
    let mut pairs: Vec<(f32, usize, usize)> = Vec::new();
    let work_paths: Vec<Vec<Point>> = edges
        .iter()
        .map(|e| e.points.iter().map(|p| frame.to_work(*p)).collect())
        .collect();
    for (li, l) in labels.iter().enumerate() {
        let b = frame.box_to_work(&l.bbox);
        // The text height: the working box's height is the label's width in a transposed frame.
        let h = (l.bbox.height() * frame.scale).max(1.0);
        let anchor = Point::new(b.x0 - 0.5 * h, (b.y0 + b.y1) * 0.5);
        for (ei, path) in work_paths.iter().enumerate() {
            let mut dist = f32::INFINITY;
            for seg in path.windows(2) {
                dist = dist.min(point_segment_distance(anchor, seg[0], seg[1]));
            }
            if path.len() == 1 {
                dist = dist.min(distance(anchor, path[0]));
            }
            let dist = dist / h;
            if dist <= params.label_max_distance {
                pairs.push((dist, li, ei));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut used_labels = HashSet::new();
    let mut used_edges = HashSet::new();
    for (_, li, ei) in pairs {
        if used_labels.contains(&li) || used_edges.contains(&ei) {
            continue;
        }
        used_labels.insert(li);
        used_edges.insert(ei);
        edges[ei].label = Some(labels[li].id.clone());
    }
}

/// Gives every label that [`attach_labels`] left alone the edge it must be drawn on, from the layout alone: on
/// the working raster (flow downwards) the edge passes half a label height left of the label (its anchor), so
/// its source is the nearest element above the label whose box spans the anchor's x (± `bridge_x_margin` label
/// heights) and its target the nearest such element below, each at most `bridge_max_gap` label heights away.
/// The nearest element must be able to play its role (an output above or an input below stops the search), so
/// a bridge never jumps over a box. An existing edge between the two only receives the label if it has none.
/// New edges are straight, carry `bridge_confidence` and the label, and leave the bottom (right) side of the
/// source for the top (left) side of the target. Returns how many edges were added; `edges` stays sorted by
/// (to, from).
pub fn bridge_labels(
    edges: &mut Vec<RecoveredEdge>,
    elements: &[Element],
    labels: &[Label],
    frame: &WorkFrame,
    params: &EdgeParams,
) -> usize {
    let mut attached: HashSet<String> = edges.iter().filter_map(|e| e.label.clone()).collect();
    let boxes: Vec<BBox> = elements
        .iter()
        .map(|e| frame.box_to_work(&e.bbox))
        .collect();
    let mut added: Vec<RecoveredEdge> = Vec::new();
    for l in labels {
        if attached.contains(&l.id) {
            continue;
        }
        let b = frame.box_to_work(&l.bbox);
        let h = (l.bbox.height() * frame.scale).max(1.0);
        let ax = b.x0 - 0.5 * h;
        let margin = params.bridge_x_margin * h;
        let spans = |e: &BBox| e.x0 - margin <= ax && ax <= e.x1 + margin;
        let above = boxes
            .iter()
            .enumerate()
            .filter(|(_, e)| spans(e) && e.y1 <= b.y0 + 0.5 * h)
            .min_by(|x, y| (b.y0 - x.1.y1).total_cmp(&(b.y0 - y.1.y1)));
        let below = boxes
            .iter()
            .enumerate()
            .filter(|(_, e)| spans(e) && e.y0 >= b.y1 - 0.5 * h)
            .min_by(|x, y| (x.1.y0 - b.y1).total_cmp(&(y.1.y0 - b.y1)));
        let (Some((si, sb)), Some((ti, tb))) = (above, below) else {
            continue;
        };
        let max_gap = params.bridge_max_gap * h;
        if si == ti
            || !elements[si].kind.can_be_source()
            || !elements[ti].kind.can_be_target()
            || b.y0 - sb.y1 > max_gap
            || tb.y0 - b.y1 > max_gap
        {
            continue;
        }
        let (from, to) = (&elements[si].id, &elements[ti].id);
        if let Some(e) = edges.iter_mut().find(|e| &e.from == from && &e.to == to) {
            if e.label.is_none() {
                e.label = Some(l.id.clone());
                attached.insert(l.id.clone());
            }
            continue;
        }
        if added.iter().any(|e| &e.from == from && &e.to == to) {
            continue;
        }
        let (lo, hi) = (sb.x0.max(tb.x0), sb.x1.min(tb.x1));
        let x = if lo <= hi { ax.clamp(lo, hi) } else { ax };
        let (from_side, to_side) = if frame.transposed {
            (Side::Right, Side::Left)
        } else {
            (Side::Bottom, Side::Top)
        };
        added.push(RecoveredEdge {
            from: from.clone(),
            to: to.clone(),
            label: Some(l.id.clone()),
            confidence: params.bridge_confidence,
            points: vec![
                frame.to_source(Point::new(x, sb.y1)),
                frame.to_source(Point::new(x, tb.y0)),
            ],
            from_side,
            to_side,
            arrowhead: None,
        });
    }
    let n = added.len();
    edges.extend(added);
    edges.sort_by(|a, b| (&a.to, &a.from).cmp(&(&b.to, &b.from)));
    n
}

fn distance(a: Point, b: Point) -> f32 {
    ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt()
}

fn point_segment_distance(p: Point, a: Point, b: Point) -> f32 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let l2 = dx * dx + dy * dy;
    if l2 <= 0.0 {
        return distance(p, a);
    }
    let t = (((p.x - a.x) * dx + (p.y - a.y) * dy) / l2).clamp(0.0, 1.0);
    distance(p, Point::new(a.x + t * dx, a.y + t * dy))
}

/// Checks boxes and ids.
fn validate(elements: &[Element], labels: &[Label]) -> Result<(), EdgeError> {
    let mut seen = HashSet::new();
    let items = elements
        .iter()
        .map(|e| (&e.id, &e.bbox))
        .chain(labels.iter().map(|l| (&l.id, &l.bbox)));
    for (id, b) in items {
        if !b.is_finite() || !b.is_ordered() {
            return Err(EdgeError::BadBox { id: id.clone() });
        }
        if !seen.insert(id.as_str()) {
            return Err(EdgeError::DuplicateId { id: id.clone() });
        }
    }
    Ok(())
}

/// Stages 1 and 2 for `region` of `image`: the elements and labels checked ([`validate`]), the unit
/// ([`EdgeParams::unit_px`] or [`estimate_unit`]), the working raster for `direction` and its ink map.
fn region_ink(
    image: &RgbImage,
    region: BBox,
    elements: &[Element],
    labels: &[Label],
    direction: Direction,
    params: &EdgeParams,
) -> Result<InkMap, EdgeError> {
    validate(elements, labels)?;
    let unit = params
        .unit_px
        .or_else(|| estimate_unit(elements, labels))
        .unwrap_or(params.fallback_unit_px);
    let frame = work_frame(
        image.width(),
        image.height(),
        region,
        unit,
        direction,
        params,
    )?;
    Ok(ink_map(image, frame, elements, labels, params))
}

/// Recovers the edges between `elements` drawn inside `region` (source pixels) of `image`, and attaches `labels`
/// to them. `direction` is the layout direction (Netron's default is vertical). All stages are described in the
/// module doc; the result's edges are sorted by (to, from) and carry the traced curves in source pixels.
pub fn recover_edges(
    image: &RgbImage,
    region: BBox,
    elements: &[Element],
    labels: &[Label],
    direction: Direction,
    params: &EdgeParams,
) -> Result<EdgeResult, EdgeError> {
    let ink = region_ink(image, region, elements, labels, direction, params)?;
    let frame = ink.frame;
    let mut terminals = find_terminals(&ink, elements, params);
    if let Some(probe) = params.fan_in_probe {
        terminals = split_converging(&ink, terminals, probe);
    }
    let traces: Vec<Trace> = terminals
        .iter()
        .map(|t| trace_terminal(&ink, t, params))
        .collect();

    let mut debug = EdgeDebug {
        frame,
        polarity: ink.polarity,
        threshold: ink.threshold,
        terminals: terminals.len(),
        traced_to_source: 0,
        left_region: 0,
        lost: 0,
        dropped: 0,
        bridged: 0,
        arrowheads: 0,
        no_arrowheads: 0,
        overlay: RgbImage::new(1, 1),
    };
    // A terminal where another trace, to the same source, came out from under its card is that stroke passing
    // under the card, not an edge into it.
    let reach = PASS_UNDER_REACH * frame.unit().max(1.0);
    let passed: Vec<bool> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            params.pass_under
                && traces.iter().enumerate().any(|(j, o)| {
                    j != i
                        && matches!((o.end, t.end), (TraceEnd::Source(a, _), TraceEnd::Source(b, _)) if a == b)
                        && o.passed_under.iter().any(|&(k, exit)| {
                            k == t.terminal.element && distance(exit, t.terminal.at) <= reach
                        })
                })
        })
        .collect();
    let mut edges: Vec<RecoveredEdge> = Vec::new();
    for (t, passed) in traces.iter().zip(&passed) {
        if *passed {
            debug.dropped += 1;
            continue;
        }
        let (source, side) = match t.end {
            TraceEnd::Source(k, side) => {
                debug.traced_to_source += 1;
                (k, side)
            }
            TraceEnd::LeftRegion => {
                debug.left_region += 1;
                continue;
            }
            TraceEnd::Lost => {
                debug.lost += 1;
                continue;
            }
        };
        // The terminal's band is ink seen too: it keeps short edges (shorter than an arrowhead plus the masks)
        // from scoring zero.
        let seen = t.on_ink + params.terminal_band * frame.unit() * t.terminal.strength;
        let coverage = seen / (seen + t.gap).max(1e-3);
        let side_factor = if side == Side::Bottom { 1.0 } else { 0.8 };
        let confidence = (coverage * side_factor).clamp(0.0, 1.0);
        if confidence < params.min_confidence {
            debug.dropped += 1;
            continue;
        }
        let (from_side, to_side) = if frame.transposed {
            (transpose_side(side), transpose_side(t.terminal.side))
        } else {
            (side, t.terminal.side)
        };
        edges.push(RecoveredEdge {
            from: elements[source].id.clone(),
            to: elements[t.terminal.element].id.clone(),
            label: None,
            confidence,
            points: t.points.iter().rev().map(|p| frame.to_source(*p)).collect(),
            from_side,
            to_side,
            arrowhead: has_arrowhead(&ink, t),
        });
    }
    // One edge per (from, to): two terminals traced to the same pair are one edge seen twice (e.g. a split run).
    edges.sort_by(|a, b| {
        (&a.to, &a.from)
            .cmp(&(&b.to, &b.from))
            .then(b.confidence.total_cmp(&a.confidence))
    });
    let before = edges.len();
    edges.dedup_by(|a, b| a.from == b.from && a.to == b.to);
    debug.dropped += before - edges.len();
    debug.arrowheads = edges.iter().filter(|e| e.arrowhead == Some(true)).count();
    debug.no_arrowheads = edges.iter().filter(|e| e.arrowhead == Some(false)).count();
    attach_labels(&mut edges, labels, &frame, params);
    if params.bridge_labels {
        debug.bridged = bridge_labels(&mut edges, elements, labels, &frame, params);
    }
    debug.overlay = draw_overlay(&ink, &terminals, &traces);
    Ok(EdgeResult { edges, debug })
}

fn transpose_side(s: Side) -> Side {
    match s {
        Side::Top => Side::Left,
        Side::Bottom => Side::Right,
        Side::Left => Side::Top,
        Side::Right => Side::Bottom,
    }
}

/// The debug overlay in source orientation (see [`EdgeDebug::overlay`]).
fn draw_overlay(ink: &InkMap, terminals: &[Terminal], traces: &[Trace]) -> RgbImage {
    let f = &ink.frame;
    let (w, h) = if f.transposed {
        (f.height, f.width)
    } else {
        (f.width, f.height)
    };
    let mut img = RgbImage::new(w, h);
    let to_img = |x: u32, y: u32| if f.transposed { (y, x) } else { (x, y) };
    for y in 0..f.height {
        for x in 0..f.width {
            let i = (y * f.width + x) as usize;
            let s = ink.strength[i];
            let g = (255.0 - 220.0 * s) as u8;
            let px = match ink.owner[i] {
                0 => Rgb([g, g, g]),
                o if o & LABEL_FLAG != 0 => Rgb([200, 235, 200]),
                _ => Rgb([200, 210, 240]),
            };
            let (ix, iy) = to_img(x, y);
            img.put_pixel(ix, iy, px);
        }
    }
    let put = |p: Point, c: Rgb<u8>, img: &mut RgbImage| {
        if p.x >= 0.0 && p.y >= 0.0 && (p.x as u32) < f.width && (p.y as u32) < f.height {
            let (ix, iy) = to_img(p.x as u32, p.y as u32);
            img.put_pixel(ix, iy, c);
        }
    };
    const PALETTE: [[u8; 3]; 6] = [
        [220, 30, 160],
        [30, 120, 230],
        [0, 170, 90],
        [150, 60, 220],
        [0, 160, 180],
        [190, 150, 0],
    ];
    for (k, t) in traces.iter().enumerate() {
        let c = match t.end {
            TraceEnd::Source(..) => Rgb(PALETTE[k % PALETTE.len()]),
            _ => Rgb([255, 140, 0]),
        };
        for p in &t.points {
            put(*p, c, &mut img);
        }
    }
    for t in terminals {
        for dy in -1..=1 {
            for dx in -1..=1 {
                put(
                    Point::new(t.at.x + dx as f32, t.at.y + dy as f32),
                    Rgb([255, 0, 0]),
                    &mut img,
                );
            }
        }
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain definition of [`square_filter`]: every window read in full.
    fn square_filter_naive(src: &[f32], w: usize, h: usize, r: usize, max: bool) -> Vec<f32> {
        let pick = |a: f32, b: f32| if max { a.max(b) } else { a.min(b) };
        let mut out = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                let mut v = src[y * w + x];
                for yy in y.saturating_sub(r)..=(y + r).min(h - 1) {
                    for xx in x.saturating_sub(r)..=(x + r).min(w - 1) {
                        v = pick(v, src[yy * w + xx]);
                    }
                }
                out[y * w + x] = v;
            }
        }
        out
    }

    /// The plain definition of [`binomial3`].
    fn binomial3_naive(src: &[f32], w: usize, h: usize) -> Vec<f32> {
        let at = |x: usize, y: usize| src[y.min(h - 1) * w + x.min(w - 1)];
        let mut tmp = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                tmp[y * w + x] =
                    0.25 * at(x.saturating_sub(1), y) + 0.5 * at(x, y) + 0.25 * at(x + 1, y);
            }
        }
        let t = |x: usize, y: usize| tmp[y.min(h - 1) * w + x];
        (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                0.25 * t(x, y.saturating_sub(1)) + 0.5 * t(x, y) + 0.25 * t(x, y + 1)
            })
            .collect()
    }

    #[test]
    fn binomial3_is_the_clamped_stencil() {
        for (w, h) in [(1, 1), (1, 5), (2, 2), (5, 1), (13, 7)] {
            let src: Vec<f32> = (0..w * h).map(|i| ((i * 37) % 101) as f32 * 1.7).collect();
            assert_eq!(
                binomial3(&src, w, h),
                binomial3_naive(&src, w, h),
                "{w}x{h}"
            );
        }
    }

    #[test]
    fn square_filter_is_the_clipped_window_extreme() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % 1000) as f32 * 0.25
        };
        for (w, h) in [(1, 1), (1, 9), (9, 1), (5, 4), (23, 17), (64, 3)] {
            let src: Vec<f32> = (0..w * h).map(|_| next()).collect();
            for r in [0, 1, 2, 3, 4, 7, 12] {
                for max in [true, false] {
                    assert_eq!(
                        square_filter(&src, w, h, r, max),
                        square_filter_naive(&src, w, h, r, max),
                        "{w}x{h} r {r} max {max}"
                    );
                }
            }
        }
    }
}
