//! `netron-ocr eval --images DIR --truth DIR [--json report.json] [--limit N] [--models DIR]`: scan a dataset
//! and score the graphs against their ground truth.
//!
//! Pairs: every `X.photo.jpg` (or `.jpeg`/`.png`) and `X.shot.png` (or `.jpg`) in `--images` with `X.photo.json` /
//! `X.shot.json` in `--truth` (the dataset layout of `docs/dataset.md`; both may be the same `scenes/`
//! directory). Images without a truth file are skipped with a note. `--limit N` takes the first N images in
//! name order.
//!
//! Prints a table (photos, screenshots, all) of the metrics of `netron_ocr_core::eval` plus the mean scan time,
//! then the photo and screenshot rows again over the views whose text height reaches
//! `ScanParams::min_text_height` (those the scanner does not ask to zoom into), and with `--json` writes a report:
//! `{summary: {photo, shot, all, photo_no_zoom_hint, shot_no_zoom_hint}, images: [{image, truth, kind, metrics,
//! timings, canvas, text_height, error}], models}`; with `--graphs DIR` each predicted graph also goes to
//! `DIR/<image name>.pred.json`. Schema validity here means the prediction passes the JSON Schema v1 *and* the
//! cross-reference checks. Exit status 0, or 2 for bad arguments / unloadable models / an unwritable
//! report (an image that fails to scan counts as an empty prediction and is listed with its error).

use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use netron_ocr_core::calibrate::CalibrationParams;
use netron_ocr_core::eval::{self, Metrics, Summary};
use netron_ocr_core::graph::{Canvas, GraphJson, JSON_SCHEMA_V1};
use netron_ocr_core::scanner::{ScanParams, StageTimings};
use serde::Serialize;
use serde_json::Value;

use crate::scan::load_scanner;
use crate::{EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
pub struct Args {
    /// Directory with `X.photo.jpg` / `X.shot.png` images.
    #[arg(long, value_name = "DIR")]
    images: PathBuf,
    /// Directory with the `X.photo.json` / `X.shot.json` truth files.
    #[arg(long, value_name = "DIR")]
    truth: PathBuf,
    /// Write the full report as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write each predicted graph to this directory as `<image name>.pred.json` (for error analysis).
    #[arg(long, value_name = "DIR")]
    graphs: Option<PathBuf>,
    /// Evaluate at most this many images (first in name order).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Load the models from this directory instead of the bundled ones.
    #[arg(long, value_name = "DIR")]
    models: Option<PathBuf>,
    /// Keep labels without a traced edge unbridged (measures what label bridging adds).
    #[arg(long)]
    no_label_bridges: bool,
    /// Smallest offset of an edge's source above its target, in heights of the taller box (`off`: no check;
    /// default: the scanner's, `EdgeParams::min_rank_offset`).
    #[arg(long, value_name = "F", value_parser = parse_rank_offset)]
    edge_rank_offset: Option<f32>,
    /// Margin by which element boxes are grown before their ink is masked in edge recovery, in stroke widths
    /// (default: the scanner's, `EdgeParams::element_margin`).
    #[arg(long, value_name = "UNITS")]
    edge_element_margin: Option<f32>,
    /// Largest factor by which edge recovery upsamples a view whose strokes are thinner than its working
    /// stroke width (default: the scanner's, `EdgeParams::max_upsample`).
    #[arg(long, value_name = "F")]
    edge_max_upsample: Option<f32>,
    /// Smallest upsampling factor edge recovery applies (default: the scanner's, `EdgeParams::min_upsample`).
    #[arg(long, value_name = "F")]
    edge_min_upsample: Option<f32>,
    /// Lowest ink threshold of edge recovery, in luma levels of top-hat response (default: the scanner's,
    /// `EdgeParams::min_ink_contrast`).
    #[arg(long, value_name = "LEVELS")]
    edge_min_ink_contrast: Option<f32>,
    /// Keep arrowhead terminals whether or not their stroke is aimed into the box (`EdgeParams::aimed_terminals`
    /// off).
    #[arg(long)]
    unaimed_terminals: bool,
    /// Stop edge traces at the cards their strokes pass under (`EdgeParams::pass_under` off).
    #[arg(long)]
    no_pass_under: bool,
    /// Keep side terminals whose stroke widens into a neighbouring card (`EdgeParams::neighbour_arrowheads` off).
    #[arg(long)]
    no_neighbour_arrowheads: bool,
    /// Let every card take edges, `ConstantOfShape` cards showing their `input` row too
    /// (`ScanParams::constant_cards` off).
    #[arg(long)]
    no_constant_cards: bool,
    /// Estimate the layout direction from the boxes alone, not from the strokes crossing their sides first
    /// (`ScanParams::direction_from_crossings` off).
    #[arg(long)]
    direction_from_boxes: bool,
    /// Keep overlapping detections of different classes (measures what cross-class NMS adds).
    #[arg(long)]
    no_cross_class_nms: bool,
    /// Best node-card score under which an image is taken to show no graph (default: the scanner's,
    /// `ScanParams::min_node_score`; 0 returns every image's graph, to measure the gate's margin).
    #[arg(long, value_name = "P")]
    min_node_score: Option<f32>,
    /// Share of node cards (from 2 cards up, `CONNECTED_SHARE_MIN_NODES`) that edges must join, or the image is
    /// taken to show no graph (default: the scanner's, `ScanParams::min_connected_share`; 0 turns the rule off).
    #[arg(long, value_name = "P")]
    min_connected_share: Option<f32>,
    /// Share of node cards that edges bridged from labels alone must join, with the traced ones, to count
    /// (default: the scanner's, `ScanParams::min_bridged_share`).
    #[arg(long, value_name = "P", conflicts_with = "bridges_as_traced")]
    min_bridged_share: Option<f32>,
    /// Count bridged edges as traced ones in the connected share (`ScanParams::min_bridged_share` off).
    #[arg(long)]
    bridges_as_traced: bool,
    /// Count traced edges seen to end without an arrowhead as bridged ones in the connected share
    /// (`ScanParams::traced_needs_arrowhead` on; off by default).
    #[arg(long)]
    traced_needs_arrowhead: bool,
    /// OCR confidence under which a tensor label that does not read as a shape is dropped (default: the
    /// scanner's, `ScanParams::min_label_confidence`).
    #[arg(long, value_name = "P")]
    min_label_confidence: Option<f32>,
    /// Trace one stroke per arrowhead terminal, never splitting a terminal where strokes converge
    /// (`EdgeParams::fan_in_probe` off; measures what the split adds).
    #[arg(long)]
    no_fan_in_split: bool,
    /// Detect in one pass, never re-tiling views whose cards came out small (`DetectParams::zoom` off).
    #[arg(long)]
    no_zoom: bool,
    /// Lower-quartile node height, detector input px, under which the detector re-tiles the view (default:
    /// `ZoomParams::default`).
    #[arg(long, value_name = "PX")]
    zoom_min_px: Option<f64>,
    /// Height, detector input px, at which the re-tiled pass sees that quartile (default: `ZoomParams::default`).
    #[arg(long, value_name = "PX")]
    zoom_target_px: Option<f64>,
    /// At most this many tiles in the re-tiled pass (default: `ZoomParams::default`).
    #[arg(long, value_name = "N")]
    zoom_max_tiles: Option<usize>,
    /// Keep every detected input and output as a port, even when the classifier reads it as an operator
    /// (measures what promoting such ports to nodes adds).
    #[arg(long)]
    no_port_promotion: bool,
    /// Keep inputs and outputs whose text is an operator's name as ports (measures what taking them for node
    /// cards adds, `ScanParams::op_named_ports_are_nodes`).
    #[arg(long)]
    keep_op_named_ports: bool,
    /// Keep tensor labels whose text is an operator's name as labels (`ScanParams::op_named_labels_are_nodes`
    /// off).
    #[arg(long)]
    keep_op_named_labels: bool,
    /// Classifier probability from which a port box is taken to be a node card (default: the scanner's).
    #[arg(long, value_name = "P")]
    port_as_node_confidence: Option<f32>,
    /// Keep inputs and outputs that no recovered edge joins to a node (measures what dropping them adds,
    /// `ScanParams::unconnected_port_min_confidence`).
    #[arg(long)]
    keep_unconnected_ports: bool,
    /// Keep unconnected inputs and outputs whose name is one character or only digits when they read surely, like
    /// any other (`ScanParams::drop_unconnected_glyph_ports` off).
    #[arg(long)]
    keep_glyph_ports: bool,
    /// Calibrated name confidence from which an input or output that no edge joins is kept (default: the
    /// scanner's, `ScanParams::unconnected_port_min_confidence`).
    #[arg(long, value_name = "P")]
    unconnected_port_min_confidence: Option<f32>,
    /// Keep as cards the unsure cards that edges only enter and whose title reads as a name (measures what taking
    /// them for output pills adds, `ScanParams::named_sinks_are_outputs` off).
    #[arg(long)]
    keep_named_sinks: bool,
    /// Title-reading confidence from which such a card is taken for an output pill (default: the scanner's,
    /// `ScanParams::named_sinks_are_outputs`).
    #[arg(long, value_name = "P")]
    named_sink_min_reading: Option<f32>,
    /// Whether such a card whose title reads as a name that names no operator is taken for a pill even when the
    /// classifier gave it an operator (default: the scanner's, `ScanParams::sink_names_overrule_operator`).
    #[arg(long, value_name = "BOOL")]
    sink_names_overrule_operator: Option<bool>,
    /// Drop the tensor labels that no edge carries, whose text is neither a shape nor a number, and that lie at
    /// least this many title heights from every card, pill and traced edge (default: the scanner's,
    /// `ScanParams::far_uncarried_labels`, 1.0).
    #[arg(long, value_name = "TITLE_HEIGHTS")]
    drop_far_labels: Option<f32>,
    /// Keep those labels (measures what dropping them adds).
    #[arg(long, conflicts_with = "drop_far_labels")]
    keep_far_labels: bool,
    /// Drop those labels only in a view where at least this many of them stand in a column, as a sidebar's words
    /// do (`ScanParams::far_uncarried_min_column`; default: the scanner's; 0: wherever they are).
    #[arg(long, value_name = "N")]
    far_labels_column: Option<usize>,
    /// Keep inputs and outputs whose text holds `=` or `〈`/`〉` (measures what dropping them adds,
    /// `ScanParams::drop_row_text_ports`).
    #[arg(long)]
    keep_row_text_ports: bool,
    /// Keep inputs and outputs whose text reads as a shape as ports (measures what relabelling them adds).
    #[arg(long)]
    keep_shape_ports: bool,
    /// Never read node titles with the OCR (measures what reading unsure titles adds).
    #[arg(long)]
    no_title_reading: bool,
    /// Reading confidence from which a title that names no operator hands the node to its header's category
    /// (`off`: the classifier's prediction stands; default: the scanner's,
    /// `ScanParams::name_titles_min_reading`).
    #[arg(long, value_name = "P", value_parser = parse_name_titles)]
    name_titles_min_reading: Option<f32>,
    /// Titles read surely as names that name no operator from which every title of the view is read (`off`:
    /// never; default: the scanner's, `ScanParams::names_view_min_titles`).
    #[arg(long, value_name = "N", value_parser = parse_names_view)]
    names_view_min_titles: Option<usize>,
    /// Classifier probability under which a node title is also read (default: the scanner's).
    #[arg(long, value_name = "P")]
    read_titles_below: Option<f32>,
    /// Weight of the OCR's title log-likelihood against the classifier's log-probability (default: the
    /// scanner's, `TitleParams::ocr_weight`).
    #[arg(long, value_name = "W")]
    title_ocr_weight: Option<f64>,
    /// Largest deficit, in nats, of the best operator title against the OCR's own reading for the title to
    /// count as naming an operator (default: the scanner's, `TitleParams::max_deficit_nats`).
    #[arg(long, value_name = "NATS")]
    title_max_deficit: Option<f64>,
    /// Prior cost in nats of each character a names-mode title adds around the operator's name (default: the
    /// scanner's, `TitleParams::frame_char_nats`).
    #[arg(long, value_name = "NATS")]
    title_frame_char_nats: Option<f64>,
    /// Place weight rows below the title boxes estimated from the card lattice (measures what snapping them to
    /// the header edge seen in the image adds).
    #[arg(long)]
    no_header_snap: bool,
    /// Read every text box from one crop (measures what re-reading unsure boxes adds).
    #[arg(long)]
    no_reread: bool,
    /// OCR confidence under which a text box is read again from more crops (default: the scanner's,
    /// `ReadParams::reread_below`).
    #[arg(long, value_name = "P")]
    reread_below: Option<f32>,
    /// OCR confidence from which an unsure text box is read again: boxes under it are not (default: the
    /// scanner's, `ReadParams::reread_above`).
    #[arg(long, value_name = "P")]
    reread_above: Option<f32>,
    /// Report the models' confidences as they are, without the scanner's calibration by text height
    /// (`ScanParams::calibration`); what `models/train/fit_calibration.py` fits from (with `--graphs`).
    #[arg(long)]
    no_calibration: bool,
    /// Paddings of the extra crops, × box height, comma-separated (default: the scanner's,
    /// `ReadParams::reread_pads`).
    #[arg(long, value_name = "F,F", value_delimiter = ',')]
    reread_pads: Option<Vec<f64>>,
    /// Paddings of the second crops of unsure input/output pills, comma-separated (default: the scanner's,
    /// `ScanParams::port_reread_pads`).
    #[arg(long, value_name = "F,F", value_delimiter = ',')]
    port_reread_pads: Option<Vec<f64>>,
    /// Paddings of each title's classifier crops, source px, comma-separated; the probabilities of the crops are
    /// averaged (default: the scanner's, `ClassifyParams::pads`).
    #[arg(long, value_name = "PX,PX", value_delimiter = ',')]
    title_pads: Option<Vec<f32>>,
    /// Cap each title crop's padding at this × the title's height (`ClassifyParams::max_pad_per_height`).
    #[arg(long, value_name = "F")]
    title_pad_per_height: Option<f32>,
    /// Pad every title crop by the model's 7 px whatever its height (`ClassifyParams::max_pad_per_height` off).
    #[arg(long, conflicts_with = "title_pad_per_height")]
    no_title_pad_cap: bool,
    /// Run each OCR crop only as wide as its text plus at least this many columns of padding instead of the 320
    /// columns it was trained at (`ReadParams::width_margin`; faster, see `models/METRICS.md`, session 12).
    #[arg(long, value_name = "COLUMNS")]
    width_margin: Option<u32>,
    /// Run each OCR crop's convolutional trunk on all 320 columns (`ReadParams::trim_margin` off; the same
    /// readings, more time).
    #[arg(long)]
    no_trim: bool,
    /// Labelings kept by the OCR's prefix beam search per crop, candidates beside the greedy reading (default:
    /// the scanner's, `ReadParams::beam_width`; 1 = greedy only).
    #[arg(long, value_name = "N")]
    beam: Option<usize>,
    /// Read the weight rows of each card on their own, even for operators whose rows share one shape
    /// (measures what `ConsensusParams::weight_rows` adds).
    #[arg(long)]
    no_row_consensus: bool,
    /// Space each card's weight rows by the zoom of the median header of its N nearest cards (1: its own header;
    /// default: the scanner's, `ScanParams::row_header_neighbours`).
    #[arg(long, value_name = "N")]
    row_header_neighbours: Option<usize>,
    /// Start each weight row's crop this many row heights left of the text's left edge (default: the scanner's,
    /// `ScanParams::row_left_slack`).
    #[arg(long, value_name = "F")]
    row_left_slack: Option<f64>,
    /// Fit each card's weight rows to its ink (`ScanParams::row_fit`): `off`; `box` (zoom and shift fitted, as
    /// many rows as the box holds); `add` (and the slot below them when it shows text; the scanner's default);
    /// `ink` (the leading slots that show text). Default: the scanner's.
    #[arg(long, value_name = "MODE", value_parser = ["off", "box", "add", "ink"])]
    row_fit: Option<String>,
    /// Largest relative zoom error tried by `--row-fit` (default: `RowFit::default`).
    #[arg(long, value_name = "F")]
    row_fit_zoom: Option<f64>,
    /// Do not read the weight rows of the cards.
    #[arg(long)]
    no_weights: bool,
    /// OCR confidence under which a weight row is left out (default: the scanner's).
    #[arg(long, value_name = "P")]
    min_weight_confidence: Option<f32>,
    /// OCR confidence from which a weight row named by its operator's inputs is kept (default: the scanner's,
    /// `ScanParams::min_named_row_confidence`).
    #[arg(long, value_name = "P", conflicts_with = "no_row_names")]
    min_named_row_confidence: Option<f32>,
    /// Do not look at the weight rows' names (measures what `ScanParams::min_named_row_confidence` adds).
    #[arg(long)]
    no_row_names: bool,
    /// Name each weight row alone, not mended by its card's schema order (`ScanParams::row_order`).
    #[arg(long)]
    no_row_order: bool,
    /// Threads for the model runs within each scan (`ScanParams::set_threads`); 0: the available cores, at most
    /// 4 (the default). Only the timings change.
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,
    /// Grow the cropper's box over content it cut off (`ScanParams::grow_crop`, off by default).
    #[arg(long)]
    grow_crop: bool,
    /// With `--grow-crop`: grow a side only as far as the cropper's projection bins beyond its on-bins keep a
    /// sigmoid of at least P (`GrowParams::min_projection`, default 0.05); 0: up to the image border.
    #[arg(long, value_name = "P")]
    grow_min_projection: Option<f32>,
    /// Whether the cropper also reads the mirrored image and keeps the union of the two crops
    /// (`CropParams::mirror`; default: the scanner's).
    #[arg(long, value_name = "BOOL")]
    crop_mirror: Option<bool>,
    /// Read every tensor label on its own (measures what the label consensus adds).
    #[arg(long)]
    no_consensus: bool,
    /// Consensus without the shape-preserving operator rule (fan-out only).
    #[arg(long)]
    no_shape_preserving: bool,
    /// Largest loss, in nats of the label's own crop, at which a label takes its group's text (default: the
    /// scanner's).
    #[arg(long, value_name = "NATS")]
    consensus_max_loss: Option<f64>,
}

/// One image of the dataset with its truth file.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub image: PathBuf,
    pub truth: PathBuf,
    /// `photo` or `shot`.
    pub kind: &'static str,
}

/// Finds the image/truth pairs (see the module doc), sorted by image name.
pub fn find_pairs(images: &Path, truth: &Path) -> std::io::Result<(Vec<Pair>, Vec<PathBuf>)> {
    let mut pairs = Vec::new();
    let mut missing = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(images)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let lower = name.to_ascii_lowercase();
        let kind = ["photo", "shot"].into_iter().find(|k| {
            [".jpg", ".jpeg", ".png"]
                .iter()
                .any(|ext| lower.ends_with(&format!(".{k}{ext}")))
        });
        let Some(kind) = kind else { continue };
        let key = &name[..lower.rfind(&format!(".{kind}.")).unwrap_or(0)];
        let t = truth.join(format!("{key}.{kind}.json"));
        if t.is_file() {
            pairs.push(Pair {
                image: path,
                truth: t,
                kind,
            });
        } else {
            missing.push(path);
        }
    }
    Ok((pairs, missing))
}

#[derive(Serialize)]
struct ImageReport {
    image: String,
    truth: String,
    kind: &'static str,
    metrics: Metrics,
    timings: StageTimings,
    /// The predicted canvas (crop) box, source pixels.
    canvas: Canvas,
    /// The scan's estimate of a tensor label's height, source pixels (`ScanResult::text_height`).
    text_height: Option<f32>,
    error: Option<String>,
}

#[derive(Serialize, Default)]
struct Group {
    images: usize,
    errors: usize,
    mean_ms: f64,
    summary: Summary,
    counts: Metrics,
}

/// Whether `json`, a graph's serialisation, passes the schema.
fn schema_ok(json: &str, validator: &jsonschema::Validator) -> bool {
    serde_json::from_str::<Value>(json).is_ok_and(|v| validator.is_valid(&v))
}

fn row(name: &str, g: &Group) -> String {
    let s = &g.summary;
    format!(
        "{name:<6} {:>5} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>8.1}",
        g.images,
        s.crop_containment,
        s.node_f1,
        s.tensor_f1,
        s.input_f1,
        s.output_f1,
        s.op_accuracy,
        s.op_precision,
        s.shape_exact,
        s.port_names,
        s.weight_exact,
        s.weight_precision,
        s.edge_f1,
        s.schema_valid,
        s.op_ece,
        s.shape_ece,
        g.mean_ms
    )
}

fn parse_rank_offset(v: &str) -> Result<f32, String> {
    match v {
        "off" => Ok(f32::NEG_INFINITY),
        _ => v.parse().map_err(|_| format!("{v:?} is a number or off")),
    }
}

/// `off` as `usize::MAX` (no view has that many titles), else a count.
fn parse_names_view(v: &str) -> Result<usize, String> {
    match v {
        "off" => Ok(usize::MAX),
        _ => v.parse().map_err(|_| format!("{v:?} is a count or off")),
    }
}

/// `off` as infinity (no reading is that sure), else a probability.
fn parse_name_titles(v: &str) -> Result<f32, String> {
    match v {
        "off" => Ok(f32::INFINITY),
        _ => v.parse().map_err(|_| format!("{v:?} is a number or off")),
    }
}

pub fn run(args: &Args) -> u8 {
    let (mut pairs, missing) = match find_pairs(&args.images, &args.truth) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "netron-ocr eval: cannot list {}: {e}",
                args.images.display()
            );
            return EXIT_USAGE;
        }
    };
    for m in &missing {
        eprintln!("netron-ocr eval: no truth for {}, skipped", m.display());
    }
    if let Some(n) = args.limit {
        pairs.truncate(n);
    }
    if pairs.is_empty() {
        eprintln!(
            "netron-ocr eval: no image/truth pairs in {}",
            args.images.display()
        );
        return EXIT_USAGE;
    }
    let mut params = ScanParams::default();
    params.edges.bridge_labels = !args.no_label_bridges;
    if let Some(m) = args.edge_element_margin {
        params.edges.element_margin = m;
    }
    if let Some(f) = args.edge_max_upsample {
        params.edges.max_upsample = f;
    }
    if let Some(f) = args.edge_min_upsample {
        params.edges.min_upsample = f;
    }
    if let Some(c) = args.edge_min_ink_contrast {
        params.edges.min_ink_contrast = c;
    }
    if let Some(f) = args.edge_rank_offset {
        params.edges.min_rank_offset = f;
    }
    params.edges.aimed_terminals = !args.unaimed_terminals;
    params.edges.pass_under = !args.no_pass_under;
    params.edges.neighbour_arrowheads = !args.no_neighbour_arrowheads;
    params.constant_cards = !args.no_constant_cards;
    params.direction_from_crossings = !args.direction_from_boxes;
    if args.no_cross_class_nms {
        params.detect.cross_class_iou = f64::INFINITY;
    }
    if let Some(zoom) = params.detect.zoom.as_mut() {
        zoom.min_px = args.zoom_min_px.unwrap_or(zoom.min_px);
        zoom.target_px = args.zoom_target_px.unwrap_or(zoom.target_px);
        zoom.max_tiles = args.zoom_max_tiles.unwrap_or(zoom.max_tiles);
    }
    if let Some(p) = args.min_label_confidence {
        params.min_label_confidence = p;
    }
    if args.no_fan_in_split {
        params.edges.fan_in_probe = None;
    }
    if args.no_zoom {
        params.detect.zoom = None;
    }
    if let Some(p) = args.min_node_score {
        params.min_node_score = p;
    }
    if let Some(p) = args.min_bridged_share {
        params.min_bridged_share = Some(p);
    }
    if args.bridges_as_traced {
        params.min_bridged_share = None;
    }
    if args.traced_needs_arrowhead {
        params.traced_needs_arrowhead = true;
    }
    if let Some(p) = args.min_connected_share {
        params.min_connected_share = Some(p);
    }
    if let Some(p) = args.port_as_node_confidence {
        params.port_as_node_confidence = Some(p);
    }
    if args.no_port_promotion {
        params.port_as_node_confidence = None;
    }
    params.shape_text_ports_are_labels = !args.keep_shape_ports;
    params.drop_row_text_ports = !args.keep_row_text_ports;
    params.op_named_ports_are_nodes = !args.keep_op_named_ports;
    params.op_named_labels_are_nodes = !args.keep_op_named_labels;
    if let Some(p) = args.unconnected_port_min_confidence {
        params.unconnected_port_min_confidence = Some(p);
    }
    if args.keep_unconnected_ports {
        params.unconnected_port_min_confidence = None;
    }
    params.drop_unconnected_glyph_ports = !args.keep_glyph_ports;
    if let Some(p) = args.named_sink_min_reading {
        params.named_sinks_are_outputs = Some(p);
    }
    if args.keep_named_sinks {
        params.named_sinks_are_outputs = None;
    }
    if let Some(on) = args.sink_names_overrule_operator {
        params.sink_names_overrule_operator = on;
    }
    if let Some(gap) = args.drop_far_labels {
        params.far_uncarried_labels = Some(gap);
    }
    if args.keep_far_labels {
        params.far_uncarried_labels = None;
    }
    if let Some(n) = args.far_labels_column {
        params.far_uncarried_min_column = n;
    }
    if let Some(p) = args.read_titles_below {
        params.read_titles_below = Some(p);
    }
    if args.no_title_reading {
        params.read_titles_below = None;
    }
    if let Some(p) = args.name_titles_min_reading {
        params.name_titles_min_reading = p.is_finite().then_some(p);
    }
    if let Some(n) = args.names_view_min_titles {
        params.names_view_min_titles = (n != usize::MAX).then_some(n);
    }
    if let Some(w) = args.title_ocr_weight {
        params.titles.ocr_weight = w;
    }
    if let Some(d) = args.title_max_deficit {
        params.titles.max_deficit_nats = d;
    }
    if let Some(n) = args.title_frame_char_nats {
        params.titles.frame_char_nats = n;
    }
    if args.no_header_snap {
        params.snap_headers = false;
    }
    if let Some(p) = args.reread_below {
        params.read.reread_below = Some(p);
    }
    if let Some(p) = args.reread_above {
        params.read.reread_above = p;
    }
    if args.no_calibration {
        params.calibration = CalibrationParams::none();
    }
    if let Some(pads) = &args.reread_pads {
        // `ReadParams` keeps its pads in a static slice; one per run.
        params.read.reread_pads = Vec::leak(pads.clone());
    }
    if let Some(pads) = &args.port_reread_pads {
        params.port_reread_pads = Vec::leak(pads.clone());
    }
    if let Some(pads) = &args.title_pads {
        params.classify.pads = Vec::leak(pads.clone());
    }
    if let Some(k) = args.title_pad_per_height {
        params.classify.max_pad_per_height = Some(k);
    }
    if args.no_title_pad_cap {
        params.classify.max_pad_per_height = None;
    }
    if args.no_reread {
        params.read.reread_below = None;
    }
    if args.no_trim {
        params.read.trim_margin = None;
    }
    if let Some(m) = args.width_margin {
        params.read.width_margin = Some(m);
    }
    if args.no_row_consensus {
        params.consensus.weight_rows = false;
    }
    if let Some(n) = args.row_header_neighbours {
        params.row_header_neighbours = Some(n);
    }
    if let Some(f) = args.row_left_slack {
        params.row_left_slack = f;
    }
    if let Some(n) = args.beam {
        params.read.beam_width = n;
    }
    if let Some(mode) = &args.row_fit {
        use netron_ocr_core::weights::{RowCount, RowFit};
        let count = match mode.as_str() {
            "box" => Some(RowCount::Box),
            "add" => Some(RowCount::Add),
            "ink" => Some(RowCount::Ink),
            _ => None,
        };
        params.row_fit = count.map(|count| RowFit {
            count,
            ..params.row_fit.unwrap_or_default()
        });
    }
    if let (Some(f), Some(fit)) = (args.row_fit_zoom, params.row_fit.as_mut()) {
        fit.max_zoom_error = f;
    }
    if args.no_weights {
        params.read_weights = false;
    }
    if let Some(p) = args.min_weight_confidence {
        params.min_weight_confidence = p;
    }
    if let Some(p) = args.min_named_row_confidence {
        params.min_named_row_confidence = Some(p);
    }
    if args.no_row_names {
        params.min_named_row_confidence = None;
    }
    params.set_threads(args.threads);
    if args.no_row_order {
        params.row_order = false;
    }
    if args.grow_crop {
        let mut grow = netron_ocr_core::crop::GrowParams::default();
        if let Some(p) = args.grow_min_projection {
            grow.min_projection = (p > 0.0).then_some(p);
        }
        params.grow_crop = Some(grow);
    }
    if let Some(m) = args.crop_mirror {
        params.crop.mirror = m;
    }
    if args.no_consensus {
        params.consensus.fan_out = false;
        params.consensus.shape_preserving = false;
    }
    if args.no_shape_preserving {
        params.consensus.shape_preserving = false;
    }
    if let Some(n) = args.consensus_max_loss {
        params.consensus.max_loss_nats = n;
    }
    let zoom_below = params.min_text_height;
    let scanner = match load_scanner(args.models.as_deref(), params) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("netron-ocr eval: {e}");
            return EXIT_USAGE;
        }
    };
    let schema: Value = match serde_json::from_str(JSON_SCHEMA_V1) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("netron-ocr eval: the built-in JSON Schema is not JSON: {e}");
            return EXIT_USAGE;
        }
    };
    let validator = match jsonschema::validator_for(&schema) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("netron-ocr eval: the built-in JSON Schema does not compile: {e}");
            return EXIT_USAGE;
        }
    };

    if let Some(dir) = &args.graphs {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("netron-ocr eval: cannot create {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    }

    let bar = ProgressBar::new(pairs.len() as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} eta {eta} {msg}")
    {
        bar.set_style(style);
    }
    let mut reports = Vec::with_capacity(pairs.len());
    for pair in &pairs {
        bar.set_message(
            pair.image
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        let truth = match std::fs::read_to_string(&pair.truth)
            .map_err(|e| e.to_string())
            .and_then(|t| GraphJson::from_json(&t).map_err(|e| e.to_string()))
        {
            Ok(t) => t,
            Err(e) => {
                bar.suspend(|| {
                    eprintln!("netron-ocr eval: bad truth {}: {e}", pair.truth.display())
                });
                bar.inc(1);
                continue;
            }
        };
        let (graph, timings, text_height, error) = match scanner.scan_file(&pair.image) {
            Ok(r) => (r.graph, r.timings, r.text_height, None),
            Err(e) => {
                // An unscannable image is an empty prediction.
                let empty = GraphJson::new(
                    truth.image,
                    Canvas {
                        bbox: Default::default(),
                        confidence: 0.0,
                    },
                );
                (empty, StageTimings::default(), None, Some(e.to_string()))
            }
        };
        let mut metrics = eval::evaluate(&graph, &truth);
        let json = graph.to_json();
        if let Some(dir) = &args.graphs {
            let name = pair.image.file_name().unwrap_or_default().to_string_lossy();
            let path = dir.join(format!("{name}.pred.json"));
            if let Err(e) = json
                .as_ref()
                .map_err(|e| e.to_string())
                .and_then(|j| std::fs::write(&path, j).map_err(|e| e.to_string()))
            {
                bar.suspend(|| eprintln!("netron-ocr eval: cannot write {}: {e}", path.display()));
            }
        }
        let valid = json.as_ref().is_ok_and(|j| schema_ok(j, &validator));
        if error.is_none() && !valid {
            metrics.schema_valid.hit = 0;
        }
        reports.push(ImageReport {
            image: pair.image.display().to_string(),
            truth: pair.truth.display().to_string(),
            kind: pair.kind,
            metrics,
            timings,
            canvas: graph.canvas,
            text_height,
            error,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();

    // Views the scanner does not ask to zoom into (no `Hint::ZoomIn` for small text).
    let sharp = |r: &ImageReport| match (zoom_below, r.text_height) {
        (Some(min), Some(h)) => h >= min,
        _ => true,
    };
    let group = |kind: Option<&str>, sharp_only: bool| {
        let mut g = Group::default();
        let mut ms = 0.0;
        let chosen =
            |r: &&ImageReport| kind.is_none_or(|k| r.kind == k) && (!sharp_only || sharp(r));
        for r in reports.iter().filter(chosen) {
            g.images += 1;
            g.errors += usize::from(r.error.is_some());
            g.counts.add(&r.metrics);
            ms += r.timings.total();
        }
        g.summary = Summary::from(&g.counts);
        g.mean_ms = if g.images > 0 {
            ms / g.images as f64
        } else {
            0.0
        };
        g
    };
    let (photo, shot, all) = (
        group(Some("photo"), false),
        group(Some("shot"), false),
        group(None, false),
    );
    let (photo_sharp, shot_sharp) = (group(Some("photo"), true), group(Some("shot"), true));
    println!(
        "{:<6} {:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8}",
        "kind",
        "n",
        "crop",
        "nodeF1",
        "tensF1",
        "inF1",
        "outF1",
        "op",
        "opPrec",
        "shape",
        "names",
        "wRec",
        "wPrec",
        "edgeF1",
        "schema",
        "opECE",
        "shECE",
        "ms"
    );
    for (name, g) in [("photo", &photo), ("shot", &shot), ("all", &all)] {
        if g.images > 0 {
            println!("{}", row(name, g));
        }
    }
    if let Some(min) = zoom_below {
        println!("views whose text is at least {min} px high (no zoom-in hint):");
        for (name, g) in [("photo", &photo_sharp), ("shot", &shot_sharp)] {
            if g.images > 0 {
                println!("{}", row(name, g));
            }
        }
    }
    let (invented, emptied) = (all.counts.invented, all.counts.emptied);
    if invented.total > 0 {
        println!(
            "graphs invented: {} of {} images without a graph in truth got nodes",
            invented.hit, invented.total
        );
    }
    if emptied.total > 0 {
        println!(
            "views emptied: {} of {} images with nodes in truth got none",
            emptied.hit, emptied.total
        );
    }
    let errors: usize = all.errors;
    if errors > 0 {
        println!(
            "{errors} image(s) failed to scan (counted as empty predictions; see the JSON report)"
        );
    }
    if let Some(path) = &args.json {
        let report = serde_json::json!({
            "summary": {"photo": photo, "shot": shot, "all": all,
                        "photo_no_zoom_hint": photo_sharp, "shot_no_zoom_hint": shot_sharp},
            "images": reports,
            "models": args.models.as_ref().map_or("bundled".to_owned(), |d| d.display().to_string()),
        });
        let text = match serde_json::to_string_pretty(&report) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("netron-ocr eval: cannot serialise the report: {e}");
                return EXIT_USAGE;
            }
        };
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("netron-ocr eval: cannot write {}: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_photos_and_shots_with_their_truth() {
        let dir =
            std::env::temp_dir().join(format!("netron-ocr-eval-pairs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "000001.photo.jpg",
            "000001.photo.json",
            "000001.shot.png",
            "000002.shot.png",
            "000001.onnx.json",
        ] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let (pairs, missing) = find_pairs(&dir, &dir).unwrap();
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].kind, "photo");
        assert_eq!(missing.len(), 2, "{missing:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
