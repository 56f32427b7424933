use std::time::Instant;
use tract_onnx::prelude::*;
fn main() -> TractResult<()> {
    for (file, chw) in [("models/classifier.onnx", [3usize, 96, 160]), ("models/ocr.onnx", [1, 48, 160])] {
        for n in [1usize, 8, 20] {
            for symbolic in [true, false] {
                let mut m = tract_onnx::onnx().model_for_path(file)?;
                let fact = if symbolic {
                    let s = m.symbols.sym("N");
                    f32::fact(&[s.to_dim(), chw[0].to_dim(), chw[1].to_dim(), chw[2].to_dim()])
                } else {
                    f32::fact(&[n, chw[0], chw[1], chw[2]])
                };
                m = m.with_input_fact(0, fact.into())?;
                let plan = m.into_optimized()?.into_runnable()?;
                let x = Tensor::zero::<f32>(&[n, chw[0], chw[1], chw[2]])?;
                plan.run(tvec!(x.clone().into_tvalue()))?;
                let t = Instant::now();
                for _ in 0..5 { plan.run(tvec!(x.clone().into_tvalue()))?; }
                println!("{file} n={n} symbolic={symbolic}: {:.1} ms/run", t.elapsed().as_secs_f64() * 200.0);
            }
        }
    }
    Ok(())
}
