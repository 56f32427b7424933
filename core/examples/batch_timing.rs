//! Where the model time goes in tract: symbolic vs concrete batch plans, batch size, per-thread state.
//!
//!     cargo build --release --workspace --example batch_timing
//!     nice -n 5 $CARGO_TARGET_DIR/release/examples/batch_timing [reps] [photo.jpg photo.json]
//!
//! Run from the repository root. With a photo and its truth JSON, also splits each stage of the pipeline bench
//! (`core/benches/pipeline.rs`, group `stage`) into preprocessing and model runs, using the library's plans. Reports this thread's CPU time per run (`CLOCK_THREAD_CPUTIME_ID`, so
//! time spent waiting for a shared core is not counted) next to wall time; inputs are zeros.

use std::sync::Arc;
use std::time::Instant;

use netron_ocr_core::graph::{BBox, GraphJson};
use netron_ocr_core::models::ModelSet;
use netron_ocr_core::{classify, crop, detect, frame, read};
use tract_onnx::prelude::*;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
}

/// CPU time of the calling thread, seconds (Linux x86_64/aarch64 `CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu() -> f64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec (64-bit `time_t` and `long` on the targets above).
    let rc = unsafe { clock_gettime(3, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

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
    let args: Vec<String> = std::env::args().collect();
    if let [_, _, photo, truth, ..] = args.as_slice() {
        stages(reps, photo, truth)?;
    }
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

    let b = g.canvas.bbox;
    let (w, h) = (b.width(), b.height());
    let canvas = [
        (b.x0 - 0.04 * w).max(0.0),
        (b.y0 - 0.04 * h).max(0.0),
        (b.x1 + 0.04 * w).min(image.width() as f32),
        (b.y1 + 0.04 * h).min(image.height() as f32),
    ]
    .map(f64::from);
    let tiles = detect::tiles_for_crop(canvas, &detect::DetectParams::default());
    for t in &tiles {
        let (p, _) = time(reps, || {
            detect::preprocess(&image, t.bbox).map(drop).map_err(msg)
        })?;
        let (x, lb) = detect::preprocess(&image, t.bbox).map_err(msg)?;
        let (m, _) = time(reps, || {
            models.detector.run(x.clone()).map(drop).map_err(err)
        })?;
        println!(
            "detect tile {:?} ({}x{} in 512²): preprocess {p:.1} ms, model {m:.1} ms",
            t.bbox.map(|v| v.round()),
            lb.tw,
            lb.th
        );
    }

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
    let (p, _) = time(reps, || {
        read::ocr_input(&image, &texts, &models.alphabet)
            .map(drop)
            .map_err(err)
    })?;
    let x = read::ocr_input(&image, &texts, &models.alphabet).map_err(err)?;
    let (m, _) = time(reps, || models.ocr.run(x.clone()).map(drop).map_err(err))?;
    println!(
        "read {} crops: preprocess {p:.1} ms, model {m:.1} ms",
        texts.len()
    );
    Ok(())
}
