//! Where one model's time goes in tract, node by node, on the library's own plan for one input shape (the plan
//! the scanner runs: [`Model::plan_for`], the nominal plan for the nominal size).
//!
//!     cargo build --release --workspace --example op_profile
//!     $CARGO_TARGET_DIR/release/examples/op_profile MODEL H W [reps]
//!
//! `MODEL` is `cropper`, `detector`, `classifier` or `ocr` (the bundled files). Runs the plan `reps` times
//! (default 20) on a fixed pseudo-random input in `[-1, 1]` and prints, per operator type and then for the 15
//! dearest nodes, the median over the runs of the thread CPU time (`CLOCK_THREAD_CPUTIME_ID`) spent in each
//! node's evaluation, with its share of the run.

use std::collections::BTreeMap;

use netron_ocr_core::models::{ModelKind, ModelSet};
use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::format_err;

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::thread_cpu;

fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: op_profile cropper|detector|classifier|ocr H W [reps]");
        std::process::exit(2);
    }
    let kind = ModelKind::ALL
        .into_iter()
        .find(|k| k.name() == args[0])
        .ok_or_else(|| format_err!("unknown model {}", args[0]))?;
    let (h, w): (usize, usize) = (args[1].parse()?, args[2].parse()?);
    let reps: usize = args.get(3).map(|r| r.parse()).transpose()?.unwrap_or(20);
    let models = ModelSet::bundled().map_err(|e| format_err!("{e}"))?;
    let model = models.get(kind);
    let c = kind.input_chw()[0];
    let plan = if [c, h, w] == kind.input_chw() {
        model.plan().clone()
    } else {
        model.plan_for(h, w).map_err(|e| format_err!("{e}"))?
    };
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let input = tract_ndarray::Array4::from_shape_fn((1, c, h, w), |_| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    })
    .into_tensor();

    let mut per_node: Vec<Vec<f64>> = vec![Vec::new(); plan.model().nodes().len()];
    let mut totals = Vec::with_capacity(reps);
    for rep in 0..=reps {
        let mut state = tract_onnx::tract_core::plan::SimpleState::new(&plan)?;
        let mut times = vec![0.0; per_node.len()];
        let start = thread_cpu();
        state.run_plan_with_eval(
            tvec!(input.clone().into_tvalue()),
            |ctx, op_state, node, inputs| {
                let t = thread_cpu();
                let out = tract_onnx::tract_core::plan::eval(ctx, op_state, node, inputs);
                times[node.id] += (thread_cpu() - t) * 1e3;
                out
            },
        )?;
        // The first run warms caches and is not counted.
        if rep > 0 {
            totals.push((thread_cpu() - start) * 1e3);
            for (all, t) in per_node.iter_mut().zip(times) {
                all.push(t);
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let total = median(&mut totals);
    let nodes = plan.model().nodes();
    let mut rows: Vec<(f64, usize)> = (per_node.iter_mut().enumerate())
        .map(|(i, v)| (median(v), i))
        .collect();
    let mut by_op: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for &(t, i) in &rows {
        let e = by_op.entry(nodes[i].op().name().to_string()).or_default();
        e.0 += t;
        e.1 += 1;
    }
    println!(
        "{} at 1x{c}x{h}x{w}: {total:.2} ms per run (median of {reps}, thread CPU)",
        kind.name()
    );
    let mut ops: Vec<_> = by_op.into_iter().collect();
    ops.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0));
    for (name, (t, n)) in ops {
        println!(
            "  {name:<28} {n:>3} nodes {t:>8.3} ms {:>5.1}%",
            100.0 * t / total
        );
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("dearest nodes:");
    for &(t, i) in rows.iter().take(15) {
        let n = &nodes[i];
        let fact = plan.model().outlet_fact(OutletId::new(i, 0))?;
        println!(
            "  {t:>8.3} ms  #{i:<4} {:<24} {} → {:?}",
            n.op().name(),
            n.name,
            fact.shape
        );
    }
    Ok(())
}
