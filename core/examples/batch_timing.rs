//! Where the model time goes in tract: symbolic vs concrete batch plans, batch size, per-thread state; the
//! detector at trimmed input sizes (issue #6: concrete plan per shape vs one plan with symbolic H, W; plan build
//! time and memory).
//!
//!     cargo build --release --workspace --example batch_timing
//!     nice -n 5 $CARGO_TARGET_DIR/release/examples/batch_timing [reps] [photo.jpg photo.json]
//!     nice -n 5 $CARGO_TARGET_DIR/release/examples/batch_timing --model FILE.onnx C,H,W [reps]
//!
//! Run from the repository root. With a photo and its truth JSON, also splits each stage of the pipeline bench
//! (`core/benches/pipeline.rs`, group `stage`) into preprocessing and model runs, using the library's plans; the
//! detector tiles both trimmed to their content and padded to 512 × 512 (`DetectParams::pad_to_max`), back to
//! back. Reports this thread's CPU time per run (`CLOCK_THREAD_CPUTIME_ID`, so time spent waiting for a shared
//! core is not counted) next to wall time; inputs are zeros.

use std::sync::Arc;
use std::time::Instant;

use netron_ocr_core::detect::{DetectParams, Detector};
use netron_ocr_core::graph::{BBox, GraphJson};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::scanner::{ScanParams, Scanner};
use netron_ocr_core::{classify, crop, detect, frame, read};
use tract_onnx::prelude::*;

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::thread_cpu;

fn plan(file: &str, chw: [usize; 3], batch: Option<usize>) -> TractResult<Arc<TypedRunnableModel>> {
    let mut m = tract_onnx::onnx().model_for_path(file)?;
    let fact = match batch {
        None => {
            let s = m.symbols.sym("N");
            f32::fact([
                s.to_dim(),
                chw[0].to_dim(),
                chw[1].to_dim(),
                chw[2].to_dim(),
            ])
        }
        Some(n) => f32::fact([n, chw[0], chw[1], chw[2]]),
    };
    m = m.with_input_fact(0, fact.into())?;
    m.into_optimized()?.into_runnable()
}

/// (cpu ms, wall ms) per call of `f`, best of `reps` after one warm-up call.
fn time(reps: usize, mut f: impl FnMut() -> TractResult<()>) -> TractResult<(f64, f64)> {
    f()?;
    let (mut cpu, mut wall) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..reps {
        let (c, w) = (thread_cpu(), Instant::now());
        f()?;
        cpu = cpu.min((thread_cpu() - c) * 1e3);
        wall = wall.min(w.elapsed().as_secs_f64() * 1e3);
    }
    Ok((cpu, wall))
}

fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, file, chw, rest @ ..] = args.as_slice() {
        if flag == "--model" {
            return one_model(
                file,
                chw,
                rest.first().and_then(|s| s.parse().ok()).unwrap_or(5),
            );
        }
    }
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    for (file, chw) in [
        ("models/classifier.onnx", [3usize, 96, 160]),
        ("models/ocr.onnx", [1, 48, 160]),
    ] {
        let sym = plan(file, chw, None)?;
        for n in [1usize, 2, 4, 8, 20] {
            let x = Tensor::zero::<f32>(&[n, chw[0], chw[1], chw[2]])?;
            let (c, w) = time(reps, || sym.run(tvec!(x.clone().into_tvalue())).map(drop))?;
            println!(
                "{file} n={n:2} symbolic: cpu {:7.1} ms/run {:6.2} ms/crop (wall {w:.1})",
                c,
                c / n as f64
            );
            let conc = plan(file, chw, Some(n))?;
            let (c, w) = time(reps, || conc.run(tvec!(x.clone().into_tvalue())).map(drop))?;
            println!(
                "{file} n={n:2} concrete: cpu {:7.1} ms/run {:6.2} ms/crop (wall {w:.1})",
                c,
                c / n as f64
            );
            if n == 1 {
                let mut state = conc.spawn()?;
                let (c, w) = time(reps, || state.run(tvec!(x.clone().into_tvalue())).map(drop))?;
                println!("{file} n= 1 concrete, reused state: cpu {c:7.1} ms/run (wall {w:.1})");
            }
        }
    }
    for file in ["models/detector.onnx", "models/cropper.onnx"] {
        let p = plan(file, [3, 512, 512], Some(1))?;
        let x = Tensor::zero::<f32>(&[1, 3, 512, 512])?;
        let (c, w) = time(reps, || p.run(tvec!(x.clone().into_tvalue())).map(drop))?;
        println!("{file} 512² tile: cpu {c:7.1} ms/run (wall {w:.1})");
    }
    detector_sizes(reps)?;
    if let [_, _, photo, truth, ..] = args.as_slice() {
        stages(reps, photo, truth)?;
    }
    Ok(())
}

/// One ONNX file with a batch-1 plan for `[1, C, H, W]` (`chw` = "C,H,W"), zero input: plan build time and the
/// run's CPU time (comparing variants of a model, e.g. one op replaced by another).
fn one_model(file: &str, chw: &str, reps: usize) -> TractResult<()> {
    let dims: Vec<usize> = chw.split(',').filter_map(|d| d.parse().ok()).collect();
    let [c, h, w] = dims[..] else {
        return Err(TractError::msg(format!("shape must be C,H,W, got {chw}")));
    };
    let t0 = Instant::now();
    let p = plan(file, [c, h, w], Some(1))?;
    let build = t0.elapsed().as_secs_f64() * 1e3;
    let x = Tensor::zero::<f32>(&[1, c, h, w])?;
    let (cpu, wall) = time(reps, || p.run(tvec!(x.clone().into_tvalue())).map(drop))?;
    println!("{file} [1,{c},{h},{w}]: plan {build:.0} ms, run cpu {cpu:.1} ms (wall {wall:.1})");
    Ok(())
}

/// Resident set size of this process, MiB (Linux `/proc/self/statm`, 4 KiB pages).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |pages| pages * 4096.0 / (1 << 20) as f64)
}

/// The detector at trimmed sizes: the library's per-shape plans (build time, memory, run time) against one plan
/// with symbolic H and W.
fn detector_sizes(reps: usize) -> TractResult<()> {
    let models = ModelSet::bundled().map_err(msg)?;
    let det = &models.detector;
    // (H, W).
    let sizes = [
        (512usize, 512usize),
        (288, 512),
        (512, 288),
        (352, 512),
        (512, 352),
        (512, 160),
        (128, 512),
    ];
    let mut sym = tract_onnx::onnx().model_for_path("models/detector.onnx")?;
    let (h, w) = (sym.symbols.sym("H"), sym.symbols.sym("W"));
    sym = sym.with_input_fact(
        0,
        f32::fact([1.to_dim(), 3.to_dim(), h.to_dim(), w.to_dim()]).into(),
    )?;
    let sym = sym.into_optimized()?.into_runnable()?;
    for (h, w) in sizes {
        let t = Instant::now();
        let plan = det.plan_for(h, w).map_err(msg)?;
        let build = t.elapsed().as_secs_f64() * 1e3;
        let x = Tensor::zero::<f32>(&[1, 3, h, w])?;
        let (c, wall) = time(reps, || plan.run(tvec!(x.clone().into_tvalue())).map(drop))?;
        let (cs, _) = time(reps, || sym.run(tvec!(x.clone().into_tvalue())).map(drop))?;
        println!(
            "detector {w}x{h} (WxH): concrete plan cpu {c:7.1} ms/run (wall {wall:.1}; plan ready in {build:.0} ms), \
             symbolic H,W plan cpu {cs:7.1} ms/run"
        );
    }
    // Memory of plans: every shape a 512-long letterbox can produce, built outside the library's capped cache.
    let before = rss_mib();
    let t = Instant::now();
    let mut plans = Vec::new();
    for k in 1..16 {
        plans.push(plan("models/detector.onnx", [3, 512, 32 * k], Some(1))?);
        plans.push(plan("models/detector.onnx", [3, 32 * k, 512], Some(1))?);
    }
    println!(
        "detector: {} more plans (every letterbox shape), +{:.1} MiB RSS, {:.0} ms to load and build",
        plans.len(),
        rss_mib() - before,
        t.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "library plan cache (cap {}): {:?}",
        netron_ocr_core::models::MAX_SHAPE_PLANS,
        det.cached_shapes()
    );
    Ok(())
}

fn msg<E: std::fmt::Display>(e: E) -> TractError {
    TractError::msg(e.to_string())
}

/// Preprocessing vs model CPU time of each stage on one photo (the work of the `stage` benches).
fn stages(reps: usize, photo: &str, truth: &str) -> TractResult<()> {
    let image = frame::decode_file(std::path::Path::new(photo)).map_err(msg)?;
    let g = GraphJson::from_json(&std::fs::read_to_string(truth)?).map_err(msg)?;
    let models = ModelSet::bundled().map_err(msg)?;
    let err = msg::<netron_ocr_core::error::ScanError>;

    let (c, _) = time(reps, || crop::preprocess(&image).map(drop).map_err(msg))?;
    let x = crop::preprocess(&image).map_err(msg)?;
    let (m, _) = time(reps, || {
        models.cropper.run(x.clone()).map(drop).map_err(err)
    })?;
    println!("crop: preprocess {c:.1} ms, model {m:.1} ms");

    let b = g.padded_canvas(0.04);
    let canvas = [b.x0, b.y0, b.x1, b.y1].map(f64::from);
    let tiles = detect::tiles_for_crop(canvas, &detect::DetectParams::default());
    let mut total = [0f64; 2];
    for t in &tiles {
        let trimmed = detect::Letterbox::for_crop(t.bbox);
        for (k, lb) in [trimmed.padded_to_max(), trimmed].iter().enumerate() {
            let (p, _) = time(reps, || {
                detect::preprocess_letterbox(&image, lb)
                    .map(drop)
                    .map_err(msg)
            })?;
            let x = detect::preprocess_letterbox(&image, lb).map_err(msg)?;
            let (m, _) = time(reps, || {
                models
                    .detector
                    .run_any_size(x.clone())
                    .map(drop)
                    .map_err(err)
            })?;
            total[k] += p + m;
            println!(
                "detect tile {:?} ({}x{} in {}x{}): preprocess {p:.1} ms, model {m:.1} ms",
                t.bbox.map(|v| v.round()),
                lb.tw,
                lb.th,
                lb.input_w,
                lb.input_h
            );
        }
    }
    println!(
        "detect {} tiles, preprocess + model: {:.1} ms padded to 512², {:.1} ms trimmed ({:.2}×)",
        tiles.len(),
        total[0],
        total[1],
        total[0] / total[1]
    );

    // End to end the detector runs on the cropper's crop (`Scanner::scan_rgb`): its tiles, and the whole
    // detector stage (`Detector::run`, CPU time) trimmed vs padded, alternated.
    let scan = Scanner::with_params(
        &models,
        ScanParams {
            debug: true,
            ..ScanParams::default()
        },
    )
    .map_err(err)?
    .scan_rgb(&image)
    .map_err(err)?;
    let Some(debug) = scan.debug else {
        return Err(msg("no scan debug output"));
    };
    for t in &debug.detect.tiles {
        let lb = &t.letterbox;
        println!(
            "scan tile {:?}: {}x{} content in {}x{}",
            t.tile.bbox.map(|v| v.round()),
            lb.tw,
            lb.th,
            lb.input_w,
            lb.input_h
        );
    }
    let crop = debug.crop.bbox;
    // One thread: `time` reads this thread's CPU clock.
    let one_thread = DetectParams {
        threads: 1,
        ..DetectParams::default()
    };
    let square = DetectParams {
        pad_to_max: true,
        ..one_thread
    };
    let detectors = [
        Detector::with_params(&models.detector, square).map_err(err)?,
        Detector::with_params(&models.detector, one_thread).map_err(err)?,
    ];
    let mut best = [f64::INFINITY; 2];
    for _ in 0..reps {
        for (k, d) in detectors.iter().enumerate() {
            let (ms, _) = time(1, || d.run(&image, crop).map(drop).map_err(err))?;
            best[k] = best[k].min(ms);
        }
    }
    println!(
        "scan detect stage ({} tiles): {:.1} ms padded to 512², {:.1} ms trimmed ({:.2}×)",
        debug.detect.tiles.len(),
        best[0],
        best[1],
        best[0] / best[1]
    );

    let titles: Vec<BBox> = g.nodes.iter().filter_map(|n| n.title_box).collect();
    let (p, _) = time(reps, || {
        classify::classifier_input(&image, &titles)
            .map(drop)
            .map_err(err)
    })?;
    let x = classify::classifier_input(&image, &titles).map_err(err)?;
    let (m, _) = time(reps, || {
        models.classifier.run(x.clone()).map(drop).map_err(err)
    })?;
    println!(
        "classify {} crops: preprocess {p:.1} ms, model {m:.1} ms",
        titles.len()
    );

    let texts: Vec<BBox> = g
        .tensors
        .iter()
        .map(|t| t.bbox)
        .chain(g.inputs.iter().chain(&g.outputs).map(|p| p.bbox))
        .collect();
    let region = [crop.x0, crop.y0, crop.x1, crop.y1].map(f64::from);
    let estimate = || models.alphabet.estimate_skew(&image, region);
    let skew = estimate();
    let (k, _) = time(reps, || {
        estimate();
        Ok(())
    })?;
    println!("skew {skew:.2}°: estimate {k:.1} ms");
    let (p, _) = time(reps, || {
        read::ocr_input(&image, &texts, &models.alphabet, skew)
            .map(drop)
            .map_err(err)
    })?;
    let x = read::ocr_input(&image, &texts, &models.alphabet, skew).map_err(err)?;
    let (m, _) = time(reps, || models.ocr.run(x.clone()).map(drop).map_err(err))?;
    println!(
        "read {} crops: preprocess {p:.1} ms, model {m:.1} ms",
        texts.len()
    );
    Ok(())
}
