//! What a tract model run leaves behind for the scalar code after it: the cost of the C library's `exp` before
//! any model run, right after one of the OCR's plan runs through tract directly, and after
//! `models::clear_upper_vector_state` (which the library's own `Model` runs call after every plan run).
//!
//!     cargo run --release --example libm_after_model [-- N]
//!
//! On x86-64 machines whose tract kernels are AVX-512 ones, the run returns with the upper halves of the vector
//! registers in use and `exp` costs about 25–30× more until they are cleared (`BENCHMARKS.md`, session 38). Prints
//! nanoseconds per `exp` (wall, best of 5 rounds of N calls each, default 1,000,000).

use std::hint::black_box;
use std::time::Instant;

use netron_ocr_core::models::{clear_upper_vector_state, ModelKind, ModelSet};
use tract_onnx::prelude::*;

/// Best of 5 rounds: nanoseconds per `exp`, with `before` run ahead of each round.
fn ns_per_exp(n: usize, before: &dyn Fn()) -> f64 {
    (0..5)
        .map(|_| {
            before();
            let t = Instant::now();
            let mut sum = 0f64;
            for i in 0..n {
                sum += black_box(-((i % 997) as f64) * 0.05).exp();
            }
            black_box(sum);
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> TractResult<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let models = ModelSet::bundled()?;
    let [c, h, w] = ModelKind::Ocr.input_chw();
    let plan = models.get(ModelKind::Ocr).plan_for(h, w)?;
    let input = Tensor::zero::<f32>(&[1, c, h, w])?;
    let run = || {
        plan.run(tvec!(input.clone().into_tvalue()))
            .expect("the OCR runs on zeros");
    };
    clear_upper_vector_state();
    let fresh = ns_per_exp(n, &|| ());
    let after_run = ns_per_exp(n, &run);
    let after_clear = ns_per_exp(n, &|| {
        run();
        clear_upper_vector_state();
    });
    println!("exp, ns per call (best of 5 × {n}):");
    println!("  no model run yet:                          {fresh:7.1}");
    println!("  right after a tract plan run:              {after_run:7.1}");
    println!("  after the run and clear_upper_vector_state: {after_clear:7.1}");
    Ok(())
}
