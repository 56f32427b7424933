//! Scans distorted versions of images through the whole pipeline and reports panics, invalid graphs and slow
//! scans: a robustness sweep, not an accuracy measure.
//!
//! Usage: `stress_sweep [IMAGE…]` (default: every `tests/fixtures/scenes/*.{photo.jpg,shot.png}`)
//!
//! Each image goes through every distortion of `DISTORTIONS` (`tests/distortions/mod.rs`: scaled down or up,
//! stretched, rotated, mirrored, inverted, tiled, cut to a sliver, thresholded, blurred, salted, scribbled over). Every scan runs
//! under `catch_unwind`; a scan that panics, returns a graph failing `GraphJson::check`, or returns an error
//! other than an input error is listed. Prints one line per problem and a summary; exits non-zero on any
//! panic or invalid graph. Deterministic: the random distortions draw from a fixed-seed LCG.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};
use netron_ocr_core::{frame, ScanError};

#[path = "../tests/distortions/mod.rs"]
mod distortions;
use distortions::{distort, Rng, DISTORTIONS};

fn default_images() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scenes");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| {
        let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        n.ends_with(".photo.jpg") || n.ends_with(".shot.png")
    });
    out.sort();
    out
}

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let images = if args.is_empty() {
        default_images()
    } else {
        args
    };
    let models = match ModelSet::bundled() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("models: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut params = ScanParams::default();
    params.set_threads(1);
    let scanner = match Scanner::with_params(&models, params) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("scanner: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut rng = Rng::new(0x5eed_2026_1206);
    let (mut scans, mut panics, mut invalid, mut errors) = (0, 0, 0, 0);
    let mut slowest = (0.0f64, String::new());
    for path in &images {
        let img = match frame::decode_file(path) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                continue;
            }
        };
        let stem = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        for name in DISTORTIONS {
            let input = distort(&img, name, &mut rng);
            let label = format!("{stem} {name} {}x{}", input.width(), input.height());
            let t = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| scanner.scan_rgb(&input)));
            let secs = t.elapsed().as_secs_f64();
            scans += 1;
            if secs > slowest.0 {
                slowest = (secs, label.clone());
            }
            match outcome {
                Err(_) => {
                    panics += 1;
                    println!("PANIC   {label}");
                }
                Ok(Err(ScanError::Input { .. })) => {}
                Ok(Err(e)) => {
                    errors += 1;
                    println!("ERROR   {label}: {e}");
                }
                Ok(Ok(r)) => {
                    let issues = r.graph.check();
                    if !issues.is_empty() {
                        invalid += 1;
                        println!("INVALID {label}: {:?}", &issues[..issues.len().min(3)]);
                    }
                    let sure_ops = r
                        .graph
                        .nodes
                        .iter()
                        .filter(|n| n.op.is_some() && n.op_confidence >= 0.5)
                        .count();
                    println!(
                        "ok      {label}: {} nodes ({sure_ops} ops ≥ 0.5), {} edges, text {:.1} px, hints {:?}, \
                         {:.2} s",
                        r.graph.nodes.len(),
                        r.graph.edges.len(),
                        r.text_height.unwrap_or(0.0),
                        r.quality.hints,
                        secs
                    );
                }
            }
        }
    }
    println!(
        "{scans} scans: {panics} panics, {invalid} invalid graphs, {errors} other errors; slowest {:.2} s ({})",
        slowest.0, slowest.1
    );
    if panics + invalid > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
