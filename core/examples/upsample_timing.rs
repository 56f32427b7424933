//! The detector's plan as the library builds it (its ×2 upsampling transposed convolutions run as tract's nearest
//! upsampling, `models::upsample_copying_deconvs`) against tract's own plan of `models/detector.onnx`, run
//! alternately on zeros in one process, so that the ratio is taken under the same load.
//!
//!     cargo build --release --workspace --example upsample_timing
//!     $CARGO_TARGET_DIR/release/examples/upsample_timing [reps]
//!
//! Run from the repository root. Reports this thread's CPU time per run (`CLOCK_THREAD_CPUTIME_ID`), minimum and
//! median over `reps` (default 40) runs of each plan, for a full 512² tile and a trimmed 512 × 320 one.

use netron_ocr_core::models::{ModelKind, ModelSet};
use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::format_err;

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::thread_cpu;

fn main() -> TractResult<()> {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(40)
        .max(1);
    let set = ModelSet::bundled().map_err(|e| format_err!("{e}"))?;
    let detector = set.get(ModelKind::Detector);
    for (h, w) in [(512, 512), (512, 320)] {
        let library = detector.plan_for(h, w).map_err(|e| format_err!("{e}"))?;
        let plain = tract_onnx::onnx()
            .model_for_path("models/detector.onnx")?
            .with_input_fact(0, f32::fact([1, 3, h, w]).into())?
            .into_optimized()?
            .into_runnable()?;
        let x = Tensor::zero::<f32>(&[1, 3, h, w])?;
        let (mut plain_ms, mut library_ms) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let t = thread_cpu();
            plain.run(tvec!(x.clone().into()))?;
            plain_ms.push(1e3 * (thread_cpu() - t));
            let t = thread_cpu();
            library.run(tvec!(x.clone().into()))?;
            library_ms.push(1e3 * (thread_cpu() - t));
        }
        plain_ms.sort_by(f64::total_cmp);
        library_ms.sort_by(f64::total_cmp);
        let median = |v: &[f64]| v[v.len() / 2];
        println!(
            "detector {h}x{w}, {reps} runs each: tract's plan min {:.1} median {:.1} ms, library plan min {:.1} \
             median {:.1} ms, library / tract (medians) {:.3}",
            plain_ms[0],
            median(&plain_ms),
            library_ms[0],
            median(&library_ms),
            median(&library_ms) / median(&plain_ms)
        );
    }
    Ok(())
}
