//! `netron-ocr scan <image>... [--pretty] [--overlay PATH] [--models DIR] [--timings] [--threads N]`: read the Netron graph of
//! each photo or screenshot and print it as graph JSON v1 (`docs/graph-json.md`).
//!
//! Output: one graph per image on stdout, one line each (JSON Lines), or indented with `--pretty`. With several
//! images a progress bar runs on stderr (hidden when stderr is not a terminal). `--overlay PATH` writes a debug
//! overlay PNG (see `overlay.rs`): for one image PATH is the file; for several, PATH is a directory that gets
//! `<image file stem>.overlay.png`. `--timings` prints the per-stage milliseconds and the quality verdict of
//! each image on stderr. `--models DIR` loads the four models from DIR (SHA-256-checked) instead of the bundled
//! ones.
//!
//! A view whose text the scan finds too small (`ScanParams::min_text_height`) gets a note on stderr, and so does
//! a graph with readings under [`overlay::DOUBT`] calibrated confidence (their ids, to check them); the graph is
//! printed all the same.
//!
//! Exit status: 0 success, 2 a bad argument, an unreadable image or a model that cannot be loaded (the other
//! images are still scanned). The quality gate is reported, never a reason to refuse: a poor frame still gets
//! its best-effort graph.

use std::io::Write;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use netron_ocr_core::graph::GraphJson;
use netron_ocr_core::quality::Hint;
use netron_ocr_core::scanner::{ScanParams, ScanResult, Scanner};
use netron_ocr_core::{frame, models::ModelSet};

use crate::overlay;
use crate::{EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
pub struct Args {
    /// Image files (JPEG or PNG).
    #[arg(required = true, value_name = "IMAGE")]
    images: Vec<PathBuf>,
    /// Indent the JSON.
    #[arg(long)]
    pretty: bool,
    /// Write a debug overlay PNG: crop, boxes, edges and the texts read, those under 0.5 confidence on red (a file
    /// for one image, a directory for several).
    #[arg(long, value_name = "PATH")]
    overlay: Option<PathBuf>,
    /// Load the models from this directory instead of the bundled ones.
    #[arg(long, value_name = "DIR")]
    models: Option<PathBuf>,
    /// Print per-stage timings (ms) and the quality verdict of each image on stderr.
    #[arg(long)]
    timings: bool,
    /// Grow the cropper's box over content it cut off (graphs larger than the window; off by default, see
    /// `ScanParams::grow_crop`).
    #[arg(long)]
    grow_crop: bool,
    /// Whether the cropper also reads the mirrored photo and keeps the union of the two crops (fewer clipped
    /// graphs, looser crops; `CropParams::mirror`; default: the scanner's).
    #[arg(long, value_name = "BOOL")]
    crop_mirror: Option<bool>,
    /// Threads for the model runs within each scan (tiles, titles, texts); 0: the available cores, at most 4
    /// (the default). The graph is the same at any count.
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,
}

/// Loads the scanner from `--models DIR` or the bundled models.
pub fn load_scanner(models: Option<&Path>, params: ScanParams) -> Result<Scanner, String> {
    let set = match models {
        Some(dir) => ModelSet::from_dir(dir),
        None => ModelSet::bundled(),
    }
    .map_err(|e| format!("cannot load the models: {e}"))?;
    Scanner::with_params(&set, params).map_err(|e| format!("cannot build the scanner: {e}"))
}

fn overlay_path(args: &Args, image: &Path) -> Option<PathBuf> {
    let base = args.overlay.as_ref()?;
    if args.images.len() == 1 {
        return Some(base.clone());
    }
    let stem = image
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "image".into());
    Some(base.join(format!("{stem}.overlay.png")))
}

fn scan_one(scanner: &Scanner, args: &Args, path: &Path) -> Result<ScanResult, String> {
    let t = std::time::Instant::now();
    let image =
        frame::decode_file(path).map_err(|e| format!("cannot decode {}: {e}", path.display()))?;
    let decode_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut result = scanner
        .scan_rgb(&image)
        .map_err(|e| format!("cannot scan {}: {e}", path.display()))?;
    result.timings.decode = decode_ms;
    if let Some(out) = overlay_path(args, path) {
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        overlay::draw(&image, &result.graph)
            .save(&out)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    Ok(result)
}

pub fn run(args: &Args) -> u8 {
    let mut params = ScanParams {
        grow_crop: args
            .grow_crop
            .then(netron_ocr_core::crop::GrowParams::default),
        ..ScanParams::default()
    };
    if let Some(m) = args.crop_mirror {
        params.crop.mirror = m;
    }
    params.set_threads(args.threads);
    let scanner = match load_scanner(args.models.as_deref(), params) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("netron-ocr scan: {e}");
            return EXIT_USAGE;
        }
    };
    let bar = if args.images.len() > 1 {
        let bar = ProgressBar::new(args.images.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} eta {eta} {msg}")
        {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut status = EXIT_OK;
    let mut out = std::io::stdout().lock();
    for path in &args.images {
        bar.set_message(
            path.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        let result = match scan_one(&scanner, args, path) {
            Ok(r) => r,
            Err(e) => {
                bar.suspend(|| eprintln!("netron-ocr scan: {e}"));
                status = EXIT_USAGE;
                bar.inc(1);
                continue;
            }
        };
        let json = if args.pretty {
            result.graph.to_json_pretty()
        } else {
            result.graph.to_json()
        };
        let json = match json {
            Ok(j) => j,
            Err(e) => {
                eprintln!("netron-ocr scan: cannot serialise the graph: {e}");
                return EXIT_USAGE;
            }
        };
        if let Err(e) = bar.suspend(|| writeln!(out, "{json}")) {
            eprintln!("netron-ocr scan: cannot write the result: {e}");
            return EXIT_USAGE;
        }
        if let Some(h) = result
            .text_height
            .filter(|_| result.quality.hints.contains(&Hint::ZoomIn))
        {
            bar.suspend(|| {
                eprintln!(
                    "netron-ocr scan: {}: the text is about {h:.1} px high, too small to be read reliably: \
                     zoom in in Netron and scan again (the graph may be scanned in parts)",
                    path.display()
                )
            });
        }
        if let Some(doubts) = uncertain(&result.graph) {
            bar.suspend(|| {
                eprintln!(
                    "netron-ocr scan: {}: unsure of {doubts}: confidence under {}, check them",
                    path.display(),
                    overlay::DOUBT
                )
            });
        }
        if args.timings {
            let t = &result.timings;
            bar.suspend(|| {
                eprintln!(
                    "{}: decode {:.1} quality {:.1} crop {:.1} detect {:.1} classify {:.1} read {:.1} assemble {:.1} \
                     total {:.1} ms; quality {} (score {:.2}); canvas confidence {:.2}; {} nodes, {} edges",
                    path.display(),
                    t.decode,
                    t.quality,
                    t.crop,
                    t.detect,
                    t.classify,
                    t.read,
                    t.assemble,
                    t.total(),
                    if result.quality.accept { "accepted" } else { "rejected" },
                    result.quality.score,
                    result.graph.canvas.confidence,
                    result.graph.nodes.len(),
                    result.graph.edges.len(),
                )
            });
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    status
}

/// The readings of `graph` under [`overlay::DOUBT`] confidence, as "2 operators (n3, n7) and 1 shape (t4)" (at
/// most 8 ids each), or `None`. A marked node (`op: null`) is an uncertain operator.
fn uncertain(graph: &GraphJson) -> Option<String> {
    let doubt = overlay::DOUBT;
    let ops: Vec<&str> = graph
        .nodes
        .iter()
        .filter(|n| n.op.is_none() || n.op_confidence < doubt)
        .map(|n| n.id.as_str())
        .collect();
    let shapes: Vec<&str> = graph
        .tensors
        .iter()
        .filter(|t| t.confidence < doubt)
        .map(|t| t.id.as_str())
        .collect();
    let names: Vec<&str> = graph
        .inputs
        .iter()
        .chain(&graph.outputs)
        .filter(|p| p.confidence < doubt)
        .map(|p| p.id.as_str())
        .collect();
    let parts: Vec<String> = [(ops, "operator"), (shapes, "shape"), (names, "name")]
        .into_iter()
        .filter(|(ids, _)| !ids.is_empty())
        .map(|(ids, what)| {
            let plural = if ids.len() == 1 { "" } else { "s" };
            let more = if ids.len() > 8 { ", …" } else { "" };
            let shown = ids[..ids.len().min(8)].join(", ");
            format!("{} {what}{plural} ({shown}{more})", ids.len())
        })
        .collect();
    match parts.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netron_ocr_core::graph::{Canvas, ImageSize, Node, Tensor};

    #[test]
    fn uncertain_readings_are_listed_by_kind() {
        let mut g = GraphJson::new(
            ImageSize {
                width: 10,
                height: 10,
            },
            Canvas {
                bbox: [0.0, 0.0, 10.0, 10.0].into(),
                confidence: 1.0,
            },
        );
        assert_eq!(uncertain(&g), None);
        for (k, (op, p)) in [(Some("Conv"), 0.9), (None, 0.3), (Some("Relu"), 0.4)]
            .into_iter()
            .enumerate()
        {
            g.nodes.push(Node {
                id: format!("n{k}"),
                op: op.map(str::to_owned),
                op_confidence: p,
                bbox: [0.0, 0.0, 5.0, 5.0].into(),
                confidence: 1.0,
                weights: vec![],
                title_box: None,
                quad: None,
                truncated: None,
            });
        }
        assert_eq!(uncertain(&g).as_deref(), Some("2 operators (n1, n2)"));
        for k in 0..10 {
            g.tensors.push(Tensor {
                id: format!("t{k}"),
                text: "1".into(),
                shape: None,
                bbox: [0.0, 0.0, 5.0, 5.0].into(),
                confidence: 0.1,
                quad: None,
                name: None,
            });
        }
        assert_eq!(
            uncertain(&g).as_deref(),
            Some("2 operators (n1, n2) and 10 shapes (t0, t1, t2, t3, t4, t5, t6, t7, …)")
        );
    }
}
