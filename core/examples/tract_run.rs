//! Run an ONNX model with tract on `.npy` inputs and write its outputs as `.npy` (parity checks against
//! onnxruntime and PyTorch: `models/train/parity.py`).
//!
//! Usage: `cargo run --release -p netron-ocr-core --example tract_run -- MODEL.onnx IN_DIR OUT_DIR`
//!
//! Every `input_*.npy` in IN_DIR must be float32, little-endian, C order. Two modes:
//! - one run: when IN_DIR has `input_<name>.npy` for every model input `<name>`, the model runs once on them
//!   and writes `OUT_DIR/output_<output name>.npy`;
//! - many runs (single-input models only): otherwise each `input_<tag>.npy` is one run, writing
//!   `OUT_DIR/output_<tag>_<output name>.npy`. One optimized plan is built per distinct input shape.
//!
//! Outputs are written as float32 `.npy` (version 1.0, `<f4`, C order). Errors are reported, never panics.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use tract_onnx::prelude::*;

/// Everything that can go wrong, with the file concerned.
#[derive(Debug)]
enum RunError {
    Usage,
    Io(PathBuf, std::io::Error),
    Npy(PathBuf, String),
    Tract(String),
    Inputs(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Usage => write!(f, "usage: tract_run MODEL.onnx IN_DIR OUT_DIR"),
            RunError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            RunError::Npy(p, e) => write!(f, "{}: not a float32 C-order .npy: {e}", p.display()),
            RunError::Tract(e) => write!(f, "tract: {e}"),
            RunError::Inputs(e) => write!(f, "inputs: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

fn tract_err(e: impl fmt::Display) -> RunError {
    RunError::Tract(format!("{e:#}"))
}

/// A float32 array read from or written to `.npy`.
struct NpyArray {
    shape: Vec<usize>,
    data: Vec<f32>,
}

/// Parse a `.npy` file (format versions 1–3) holding little-endian float32 in C order.
fn read_npy(path: &Path) -> Result<NpyArray, RunError> {
    let bytes = std::fs::read(path).map_err(|e| RunError::Io(path.to_owned(), e))?;
    let bad = |m: &str| RunError::Npy(path.to_owned(), m.to_owned());
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("missing magic"));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad("truncated header"));
            }
            let n = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
            (n, 12usize)
        }
        v => return Err(bad(&format!("unsupported version {v}"))),
    };
    let end = start
        .checked_add(header_len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("truncated header"))?;
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("header is not text"))?;
    let descr = header_value(header, "descr")
        .and_then(|v| v.split(',').next())
        .ok_or_else(|| bad("no descr"))?;
    if !(descr.contains("<f4") || descr.contains("|f4")) {
        return Err(bad(&format!("dtype {descr}, expected <f4")));
    }
    let fortran = header_value(header, "fortran_order").ok_or_else(|| bad("no fortran_order"))?;
    if !fortran.starts_with("False") {
        return Err(bad("fortran_order is not False"));
    }
    let shape_text = header_value(header, "shape").ok_or_else(|| bad("no shape"))?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("shape is not a tuple"))?;
    let mut shape = Vec::new();
    for part in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        shape.push(
            part.parse::<usize>()
                .map_err(|_| bad(&format!("bad dim {part:?}")))?,
        );
    }
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| bad("shape overflows"))?;
    let payload = &bytes[end..];
    if payload.len() != count * 4 {
        return Err(bad(&format!(
            "{} data bytes for shape {shape:?} (expected {})",
            payload.len(),
            count * 4
        )));
    }
    let data = payload
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(NpyArray { shape, data })
}

/// The text after `'key':` in a npy header dict, trimmed.
fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}':");
    let at = header.find(&pat)? + pat.len();
    Some(header[at..].trim_start())
}

/// Write a float32 C-order `.npy`, format version 1.0 (header padded so data starts at a multiple of 64).
fn write_npy(path: &Path, arr: &NpyArray) -> Result<(), RunError> {
    let shape = match arr.shape.len() {
        0 => "()".to_owned(),
        1 => format!("({},)", arr.shape[0]),
        _ => format!(
            "({})",
            arr.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let header_len = u16::try_from(header.len())
        .map_err(|_| RunError::Npy(path.to_owned(), "header too long".into()))?;
    let mut out = Vec::with_capacity(10 + header.len() + arr.data.len() * 4);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in &arr.data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, out).map_err(|e| RunError::Io(path.to_owned(), e))
}

type Plan = Arc<TypedRunnableModel>;

/// Model inputs' and outputs' names, and optimized plans built on demand per input shapes.
struct Runner {
    model: InferenceModel,
    input_names: Vec<String>,
    output_names: Vec<String>,
    plans: HashMap<Vec<Vec<usize>>, Plan>,
}

impl Runner {
    fn load(path: &Path) -> Result<Runner, RunError> {
        let model = tract_onnx::onnx().model_for_path(path).map_err(tract_err)?;
        let names = |outlets: &[OutletId]| -> Vec<String> {
            outlets
                .iter()
                .map(|o| {
                    model
                        .outlet_label(*o)
                        .map(str::to_owned)
                        .unwrap_or_else(|| model.node(o.node).name.clone())
                })
                .collect()
        };
        let input_names = names(model.input_outlets().map_err(tract_err)?);
        let output_names = names(model.output_outlets().map_err(tract_err)?);
        Ok(Runner {
            model,
            input_names,
            output_names,
            plans: HashMap::new(),
        })
    }

    fn plan(&mut self, shapes: Vec<Vec<usize>>) -> Result<Plan, RunError> {
        if let Some(p) = self.plans.get(&shapes) {
            return Ok(p.clone());
        }
        let mut model = self.model.clone();
        for (ix, shape) in shapes.iter().enumerate() {
            model = model
                .with_input_fact(ix, f32::fact(shape).into())
                .map_err(tract_err)?;
        }
        let plan = model
            .into_optimized()
            .map_err(tract_err)?
            .into_runnable()
            .map_err(tract_err)?;
        self.plans.insert(shapes, plan.clone());
        Ok(plan)
    }

    fn run(&mut self, inputs: Vec<NpyArray>) -> Result<Vec<NpyArray>, RunError> {
        let shapes = inputs.iter().map(|a| a.shape.clone()).collect();
        let plan = self.plan(shapes)?;
        let mut values = TVec::new();
        for a in inputs {
            let t = Tensor::from_shape(&a.shape, &a.data).map_err(tract_err)?;
            values.push(t.into_tvalue());
        }
        let outputs = plan.run(values).map_err(tract_err)?;
        outputs
            .iter()
            .map(|v| {
                let view = v.to_plain_array_view::<f32>().map_err(tract_err)?;
                Ok(NpyArray {
                    shape: view.shape().to_vec(),
                    data: view.iter().copied().collect(),
                })
            })
            .collect()
    }
}

fn run(model_path: &Path, in_dir: &Path, out_dir: &Path) -> Result<usize, RunError> {
    let mut runner = Runner::load(model_path)?;
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let entries = std::fs::read_dir(in_dir).map_err(|e| RunError::Io(in_dir.to_owned(), e))?;
    for entry in entries {
        let path = entry
            .map_err(|e| RunError::Io(in_dir.to_owned(), e))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(tag) = name
            .strip_prefix("input_")
            .and_then(|n| n.strip_suffix(".npy"))
        {
            files.push((tag.to_owned(), path.clone()));
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(RunError::Inputs(format!(
            "no input_*.npy in {}",
            in_dir.display()
        )));
    }
    std::fs::create_dir_all(out_dir).map_err(|e| RunError::Io(out_dir.to_owned(), e))?;
    let by_tag: HashMap<&str, &PathBuf> = files.iter().map(|(t, p)| (t.as_str(), p)).collect();
    let output_names = runner.output_names.clone();
    let write = |prefix: &str, outs: Vec<NpyArray>| -> Result<(), RunError> {
        for (name, arr) in output_names.iter().zip(outs.iter()) {
            write_npy(&out_dir.join(format!("output_{prefix}{name}.npy")), arr)?;
        }
        Ok(())
    };
    if runner
        .input_names
        .iter()
        .all(|n| by_tag.contains_key(n.as_str()))
    {
        let inputs = runner
            .input_names
            .iter()
            .map(|n| read_npy(by_tag[n.as_str()]))
            .collect::<Result<Vec<_>, _>>()?;
        let outs = runner.run(inputs)?;
        write("", outs)?;
        return Ok(1);
    }
    if runner.input_names.len() != 1 {
        return Err(RunError::Inputs(format!(
            "model has inputs {:?}; provide input_<name>.npy for each",
            runner.input_names
        )));
    }
    for (tag, path) in &files {
        let outs = runner.run(vec![read_npy(path)?])?;
        write(&format!("{tag}_"), outs)?;
    }
    Ok(files.len())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [model, input, output] => run(Path::new(model), Path::new(input), Path::new(output)),
        _ => Err(RunError::Usage),
    };
    match result {
        Ok(n) => {
            println!("tract_run: {n} run(s) done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tract_run: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip() {
        let dir = std::env::temp_dir().join(format!("tract_run_npy_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.npy");
        let a = NpyArray {
            shape: vec![2, 3],
            data: vec![0.0, 1.5, -2.0, 3.25, f32::MAX, -0.0],
        };
        write_npy(&p, &a).unwrap();
        let b = read_npy(&p).unwrap();
        assert_eq!(b.shape, a.shape);
        assert_eq!(b.data, a.data);
        std::fs::write(&p, b"not npy").unwrap();
        assert!(matches!(read_npy(&p), Err(RunError::Npy(..))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
