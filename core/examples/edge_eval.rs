//! Edge recovery with oracle boxes: runs `edges::recover_edges` on dataset scenes with the TRUTH element and label
//! boxes and scores the recovered edges against the truth edges.
//!
//! Usage: `cargo run --release -p netron-ocr-core --example edge_eval -- --data DIR [--kind photo|shot]
//! [--limit N] [--split eval|train] [--json OUT.json] [--overlays DIR] [--verbose] [--min-rank-offset F|off]
//! [--unaimed-terminals] [--no-fan-in-split] [--no-pass-under] [--no-neighbour-arrowheads]
//! [--no-constant-cards]`
//!
//! DIR is a dataset (`DIR/scenes/<k>.photo.jpg|<k>.shot.png` with their `.json` truth, `docs/dataset.md`) or a
//! folder holding such files directly (the test fixtures, including `render_*.png`). The region is the truth
//! canvas box padded by 3 % of its longer side (at least 8 px), standing in for the cropper's padded crop.
//! `--split eval` keeps the dataset's held-out scenes (index % 10 == 9), `--split train` the others; `--limit N`
//! keeps the first N scenes of each kind; `--overlays DIR` writes each scene's `EdgeDebug::overlay`.
//!
//! Scoring: an edge is correct when its (from, to) pair matches a truth edge (pairs matched as multisets);
//! "labelled" additionally requires its label id to equal the truth edge's tensor id (`null` matching `null`).
//! Truth edges are tagged with the failure-prone cases they belong to (fan-out: the source has several outgoing
//! edges; crossing: its curve crosses another edge's curve; horizontal layout; dark theme; truncated: an endpoint
//! is cut by the viewport or a curve point lies outside the image) and the recall of each tag is reported.
//! `--min-rank-offset` and `--unaimed-terminals` set `EdgeParams::min_rank_offset` and turn
//! `EdgeParams::aimed_terminals` off, `--no-fan-in-split` turns `EdgeParams::fan_in_probe` off, and
//! `--no-pass-under` and `--no-neighbour-arrowheads` turn `EdgeParams::pass_under` and
//! `EdgeParams::neighbour_arrowheads` off, to measure what each adds. Cards take their kind from their truth
//! operator and weight rows (`ElementKind::of_card`, as the scanner does from its readings); `--no-constant-cards`
//! makes every card an `ElementKind::Node`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use netron_ocr_core::edges::{self, EdgeParams, Element, ElementKind, Label};
use netron_ocr_core::frame;
use netron_ocr_core::graph::{BBox, Direction, GraphJson, Point};
use serde_json::json;

struct Args {
    data: PathBuf,
    kind: Option<String>,
    limit: Option<usize>,
    split: Option<String>,
    json: Option<PathBuf>,
    overlays: Option<PathBuf>,
    verbose: bool,
    min_rank_offset: Option<f32>,
    unaimed_terminals: bool,
    no_fan_in_split: bool,
    no_pass_under: bool,
    no_neighbour_arrowheads: bool,
    no_constant_cards: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        data: PathBuf::new(),
        kind: None,
        limit: None,
        split: None,
        json: None,
        overlays: None,
        verbose: false,
        min_rank_offset: None,
        unaimed_terminals: false,
        no_fan_in_split: false,
        no_pass_under: false,
        no_neighbour_arrowheads: false,
        no_constant_cards: false,
    };
    let mut it = std::env::args().skip(1);
    let mut data = None;
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--data" => data = Some(PathBuf::from(value("--data")?)),
            "--kind" => {
                let k = value("--kind")?;
                if k != "photo" && k != "shot" {
                    return Err(format!("--kind is photo or shot, not {k:?}"));
                }
                args.kind = Some(k);
            }
            "--limit" => {
                let v = value("--limit")?;
                args.limit = Some(v.parse().map_err(|_| format!("bad --limit {v:?}"))?);
            }
            "--split" => {
                let v = value("--split")?;
                if v != "eval" && v != "train" {
                    return Err(format!("--split is eval or train, not {v:?}"));
                }
                args.split = Some(v);
            }
            "--json" => args.json = Some(PathBuf::from(value("--json")?)),
            "--overlays" => args.overlays = Some(PathBuf::from(value("--overlays")?)),
            "--verbose" => args.verbose = true,
            "--unaimed-terminals" => args.unaimed_terminals = true,
            "--no-fan-in-split" => args.no_fan_in_split = true,
            "--no-pass-under" => args.no_pass_under = true,
            "--no-neighbour-arrowheads" => args.no_neighbour_arrowheads = true,
            "--no-constant-cards" => args.no_constant_cards = true,
            "--min-rank-offset" => {
                let v = value("--min-rank-offset")?;
                let f = if v == "off" {
                    f32::NEG_INFINITY
                } else {
                    v.parse()
                        .map_err(|_| format!("bad --min-rank-offset {v:?}"))?
                };
                args.min_rank_offset = Some(f);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    args.data = data.ok_or("--data DIR is required")?;
    Ok(args)
}

/// One image with its truth file.
struct SceneFile {
    image: PathBuf,
    truth: PathBuf,
    kind: &'static str,
    name: String,
}

fn list_scenes(dir: &Path) -> Result<Vec<SceneFile>, String> {
    let scenes = dir.join("scenes");
    let dir = if scenes.is_dir() {
        scenes
    } else {
        dir.to_path_buf()
    };
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let (stem, kind) = if let Some(s) = name.strip_suffix(".photo.jpg") {
            (format!("{s}.photo"), "photo")
        } else if let Some(s) = name.strip_suffix(".shot.png") {
            (format!("{s}.shot"), "shot")
        } else if let Some(s) = name
            .strip_suffix(".png")
            .filter(|s| s.starts_with("render_"))
        {
            (s.to_owned(), "shot")
        } else {
            continue;
        };
        let truth = dir.join(format!("{stem}.json"));
        if truth.is_file() {
            out.push(SceneFile {
                image: entry.path(),
                truth,
                kind,
                name: stem,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Failure-prone cases a truth edge can belong to.
const TAGS: [&str; 6] = [
    "all",
    "fan_out",
    "crossing",
    "horizontal",
    "dark",
    "truncated",
];

#[derive(Default, Clone)]
struct Tally {
    scenes: usize,
    truth: usize,
    predicted: usize,
    correct: usize,
    labelled: usize,
    /// Per tag: (truth edges, found).
    tags: BTreeMap<&'static str, (usize, usize)>,
    /// Predicted edges that match nothing, per scene tag (horizontal/dark/other).
    false_positives: BTreeMap<&'static str, usize>,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.scenes += o.scenes;
        self.truth += o.truth;
        self.predicted += o.predicted;
        self.correct += o.correct;
        self.labelled += o.labelled;
        for (k, v) in &o.tags {
            let e = self.tags.entry(k).or_default();
            e.0 += v.0;
            e.1 += v.1;
        }
        for (k, v) in &o.false_positives {
            *self.false_positives.entry(k).or_default() += v;
        }
        self.seconds += o.seconds;
    }

    fn prf(correct: usize, predicted: usize, truth: usize) -> (f64, f64, f64) {
        let p = if predicted > 0 {
            correct as f64 / predicted as f64
        } else {
            1.0
        };
        let r = if truth > 0 {
            correct as f64 / truth as f64
        } else {
            1.0
        };
        let f = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        (p, r, f)
    }

    fn report(&self) -> serde_json::Value {
        let (p, r, f) = Self::prf(self.correct, self.predicted, self.truth);
        let (lp, lr, lf) = Self::prf(self.labelled, self.predicted, self.truth);
        let tags: serde_json::Map<String, serde_json::Value> = self
            .tags
            .iter()
            .map(|(k, (n, found))| {
                let recall = if *n > 0 {
                    *found as f64 / *n as f64
                } else {
                    1.0
                };
                (
                    k.to_string(),
                    json!({"truth": n, "found": found, "missed": n - found, "recall": recall}),
                )
            })
            .collect();
        json!({
            "scenes": self.scenes, "truth_edges": self.truth, "predicted_edges": self.predicted,
            "correct": self.correct, "precision": p, "recall": r, "f1": f,
            "labelled_correct": self.labelled, "labelled_precision": lp, "labelled_recall": lr, "labelled_f1": lf,
            "tags": tags, "false_positives": self.false_positives,
            "seconds_per_scene": if self.scenes > 0 { self.seconds / self.scenes as f64 } else { 0.0 },
        })
    }
}

fn segments_cross(a: Point, b: Point, c: Point, d: Point) -> bool {
    let orient =
        |p: Point, q: Point, r: Point| (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    o1 * o2 < 0.0 && o3 * o4 < 0.0
}

/// True when the curves cross away from their ends (shared sources/targets touch at the ends: skip 2 points).
fn curves_cross(a: &[Point], b: &[Point]) -> bool {
    if a.len() < 6 || b.len() < 6 {
        return false;
    }
    let (a, b) = (&a[2..a.len() - 2], &b[2..b.len() - 2]);
    a.windows(2)
        .any(|s| b.windows(2).any(|t| segments_cross(s[0], s[1], t[0], t[1])))
}

fn scene_str<'a>(truth: &'a GraphJson, key: &str) -> Option<&'a str> {
    truth.scene.as_ref()?.get(key)?.as_str()
}

fn evaluate(
    file: &SceneFile,
    params: &EdgeParams,
    overlays: Option<&Path>,
    verbose: bool,
    constant_cards: bool,
) -> Result<Tally, String> {
    let text = std::fs::read_to_string(&file.truth)
        .map_err(|e| format!("{}: {e}", file.truth.display()))?;
    let truth =
        GraphJson::from_json(&text).map_err(|e| format!("{}: {e}", file.truth.display()))?;
    let image =
        frame::decode_file(&file.image).map_err(|e| format!("{}: {e}", file.image.display()))?;
    let direction = truth
        .direction
        .or_else(|| match scene_str(&truth, "direction") {
            Some("horizontal") => Some(Direction::Horizontal),
            _ => None,
        })
        .unwrap_or(Direction::Vertical);
    let dark = scene_str(&truth, "theme") == Some("dark");

    let mut elements = Vec::new();
    for n in &truth.nodes {
        let rows: Vec<&str> = n.weights.iter().map(|w| w.name.as_str()).collect();
        elements.push(Element {
            id: n.id.clone(),
            kind: if constant_cards {
                ElementKind::of_card(n.op.as_deref(), &rows)
            } else {
                ElementKind::Node
            },
            bbox: n.bbox,
        });
    }
    for p in &truth.inputs {
        elements.push(Element {
            id: p.id.clone(),
            kind: ElementKind::Input,
            bbox: p.bbox,
        });
    }
    for p in &truth.outputs {
        elements.push(Element {
            id: p.id.clone(),
            kind: ElementKind::Output,
            bbox: p.bbox,
        });
    }
    let labels: Vec<Label> = truth
        .tensors
        .iter()
        .map(|t| Label {
            id: t.id.clone(),
            bbox: t.bbox,
        })
        .collect();
    let c = truth.canvas.bbox;
    let pad = (0.03 * c.width().max(c.height())).max(8.0);
    let region = BBox::new(c.x0 - pad, c.y0 - pad, c.x1 + pad, c.y1 + pad);

    let start = Instant::now();
    let result = edges::recover_edges(&image, region, &elements, &labels, direction, params)
        .map_err(|e| format!("{}: {e}", file.name))?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(dir) = overlays {
        let path = dir.join(format!("{}.edges.png", file.name));
        result
            .debug
            .overlay
            .save(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }

    // Tags of the truth edges.
    let truncated: HashMap<&str, bool> = truth
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.truncated == Some(true)))
        .chain(
            truth
                .inputs
                .iter()
                .chain(&truth.outputs)
                .map(|p| (p.id.as_str(), p.truncated == Some(true))),
        )
        .collect();
    let mut out_degree: HashMap<&str, usize> = HashMap::new();
    for e in &truth.edges {
        *out_degree.entry(e.from.as_str()).or_default() += 1;
    }
    let (iw, ih) = (truth.image.width as f32, truth.image.height as f32);
    let no_points = Vec::new();
    let tags_of = |i: usize| -> Vec<&'static str> {
        let e = &truth.edges[i];
        let pts = e.points.as_ref().unwrap_or(&no_points);
        let mut tags = vec!["all"];
        if out_degree[e.from.as_str()] > 1 {
            tags.push("fan_out");
        }
        let crosses = truth
            .edges
            .iter()
            .enumerate()
            .any(|(j, o)| j != i && curves_cross(pts, o.points.as_ref().unwrap_or(&no_points)));
        if crosses {
            tags.push("crossing");
        }
        if direction == Direction::Horizontal {
            tags.push("horizontal");
        }
        if dark {
            tags.push("dark");
        }
        let outside = pts
            .iter()
            .any(|p| p.x < 0.0 || p.y < 0.0 || p.x > iw || p.y > ih);
        if outside
            || truncated.get(e.from.as_str()) == Some(&true)
            || truncated.get(e.to.as_str()) == Some(&true)
        {
            tags.push("truncated");
        }
        tags
    };

    // Match (from, to) pairs as multisets: predicted edges of a pair are paired with truth edges of that pair,
    // preferring equal labels.
    let mut tally = Tally {
        scenes: 1,
        truth: truth.edges.len(),
        predicted: result.edges.len(),
        seconds,
        ..Default::default()
    };
    let mut pred_used = vec![false; result.edges.len()];
    let mut truth_found = vec![false; truth.edges.len()];
    for pass in 0..2 {
        for (i, t) in truth.edges.iter().enumerate() {
            if truth_found[i] {
                continue;
            }
            let hit = result.edges.iter().enumerate().find(|(j, p)| {
                !pred_used[*j]
                    && p.from == t.from
                    && p.to == t.to
                    && (pass == 1 || p.label == t.tensor)
            });
            if let Some((j, p)) = hit {
                pred_used[j] = true;
                truth_found[i] = true;
                tally.correct += 1;
                if p.label == t.tensor {
                    tally.labelled += 1;
                }
            }
        }
    }
    for (i, found) in truth_found.iter().enumerate() {
        for tag in tags_of(i) {
            let e = tally.tags.entry(tag).or_default();
            e.0 += 1;
            e.1 += usize::from(*found);
        }
    }
    for tag in TAGS {
        tally.tags.entry(tag).or_default();
    }
    let fp_tag = if direction == Direction::Horizontal {
        "horizontal"
    } else if dark {
        "dark"
    } else {
        "other"
    };
    let fps = pred_used.iter().filter(|u| !**u).count();
    *tally.false_positives.entry(fp_tag).or_default() += fps;
    if verbose {
        let misses: Vec<String> = truth
            .edges
            .iter()
            .zip(&truth_found)
            .filter(|(_, f)| !**f)
            .map(|(e, _)| format!("{}→{}", e.from, e.to))
            .collect();
        let extra: Vec<String> = result
            .edges
            .iter()
            .zip(&pred_used)
            .filter(|(_, u)| !**u)
            .map(|(e, _)| format!("{}→{}", e.from, e.to))
            .collect();
        let d = &result.debug;
        println!(
            "{:<16} {:>3}/{:<3} pred {:<3} lab {:<3} unit {:.2} scale {:.2} thr {:5.1} {:?} term {} src {} out {} lost {} drop {} arrow {}/{}  miss [{}] extra [{}]",
            file.name,
            tally.correct,
            tally.truth,
            tally.predicted,
            tally.labelled,
            d.frame.unit_px,
            d.frame.scale,
            d.threshold,
            d.polarity,
            d.terminals,
            d.traced_to_source,
            d.left_region,
            d.lost,
            d.dropped,
            d.arrowheads,
            d.no_arrowheads,
            misses.join(" "),
            extra.join(" ")
        );
    }
    Ok(tally)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let mut files = list_scenes(&args.data)?;
    if let Some(k) = &args.kind {
        files.retain(|f| f.kind == k);
    }
    if let Some(split) = &args.split {
        let want_eval = split == "eval";
        files.retain(|f| {
            let digits: String = f.name.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits
                .parse::<u64>()
                .is_ok_and(|k| (k % 10 == 9) == want_eval)
        });
    }
    if let Some(n) = args.limit {
        // Keep whole scenes: the first n of each kind.
        let mut seen: HashMap<&'static str, usize> = HashMap::new();
        files.retain(|f| {
            let c = seen.entry(f.kind).or_default();
            *c += 1;
            *c <= n
        });
    }
    if files.is_empty() {
        return Err(format!("no scenes found in {}", args.data.display()));
    }
    if let Some(dir) = &args.overlays {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut params = EdgeParams::default();
    if let Some(f) = args.min_rank_offset {
        params.min_rank_offset = f;
    }
    params.aimed_terminals = !args.unaimed_terminals;
    if args.no_pass_under {
        params.pass_under = false;
    }
    if args.no_neighbour_arrowheads {
        params.neighbour_arrowheads = false;
    }
    if args.no_fan_in_split {
        params.fan_in_probe = None;
    }
    let mut per_kind: BTreeMap<&'static str, Tally> = BTreeMap::new();
    for f in &files {
        let t = evaluate(
            f,
            &params,
            args.overlays.as_deref(),
            args.verbose,
            !args.no_constant_cards,
        )?;
        per_kind.entry(f.kind).or_default().add(&t);
    }
    let mut total = Tally::default();
    for t in per_kind.values() {
        total.add(t);
    }
    let mut report = serde_json::Map::new();
    for (kind, t) in per_kind
        .iter()
        .map(|(k, t)| (*k, t))
        .chain([("total", &total)])
    {
        let r = t.report();
        println!(
            "{kind:<6} scenes {:>4}  edges {:>5}  P {:.3}  R {:.3}  F1 {:.3}  | with label: P {:.3}  R {:.3}  F1 {:.3}  | {:.0} ms/scene",
            t.scenes,
            t.truth,
            r["precision"].as_f64().unwrap_or(0.0),
            r["recall"].as_f64().unwrap_or(0.0),
            r["f1"].as_f64().unwrap_or(0.0),
            r["labelled_precision"].as_f64().unwrap_or(0.0),
            r["labelled_recall"].as_f64().unwrap_or(0.0),
            r["labelled_f1"].as_f64().unwrap_or(0.0),
            1000.0 * r["seconds_per_scene"].as_f64().unwrap_or(0.0),
        );
        let tags: Vec<String> = t
            .tags
            .iter()
            .filter(|(k, _)| **k != "all")
            .map(|(k, (n, found))| format!("{k} {found}/{n}"))
            .collect();
        let fps: Vec<String> = t
            .false_positives
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!(
            "       recall by case: {}  | false positives: {}",
            tags.join(", "),
            fps.join(", ")
        );
        report.insert(kind.to_string(), r);
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&serde_json::Value::Object(report))
            .map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("edge_eval: {e}");
            ExitCode::FAILURE
        }
    }
}
