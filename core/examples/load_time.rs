//! Time to load the bundled models (`ModelSet::bundled()`: hash check, parse, optimize the four plans), in the
//! format this build reads (ONNX by default, NNEF with `--no-default-features --features nnef,bundled-models`).
//!
//! Usage: `cargo run --release -p netron-ocr-core --example load_time [--no-default-features --features
//! nnef,bundled-models] -- [REPS]`. Prints this thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, not counting waits
//! for a shared core) and the wall time, best and median of REPS loads (default 7).

use std::process::ExitCode;
use std::time::Instant;

use netron_ocr_core::models::{ModelKind, ModelSet};

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::thread_cpu;

fn main() -> ExitCode {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(7)
        .max(1);
    let (mut cpu, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let (c0, w0) = (thread_cpu(), Instant::now());
        if let Err(e) = ModelSet::bundled() {
            eprintln!("load failed: {e}");
            return ExitCode::FAILURE;
        }
        cpu.push((thread_cpu() - c0) * 1e3);
        wall.push(w0.elapsed().as_secs_f64() * 1e3);
    }
    cpu.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "{} ({reps} loads): cpu best {:.1} ms, median {:.1} ms; wall best {:.1} ms, median {:.1} ms",
        ModelKind::Cropper.file_name(),
        cpu[0],
        cpu[reps / 2],
        wall[0],
        wall[reps / 2]
    );
    ExitCode::SUCCESS
}
