//! Write the Rust-preprocessed classifier and OCR input tensors for given boxes of one image, as `.npy`, so that
//! `models/train/tests/test_rust_crop_parity.py` can compare them with the Python training-time preprocessing.
//!
//! Usage: `crop_dump IMAGE BOXES.json OUT_DIR`
//!
//! - IMAGE: a PNG or JPEG file, decoded with `netron_ocr_core::frame::decode_file` (what the library does);
//! - BOXES.json: `{"titles": [[x0, y0, x1, y1], …], "texts": [[x0, y0, x1, y1], …], "skew_region": [x0, y0, x1,
//!   y1], "skew": degrees}` in source pixels (`skew_region` optional: the OCR crops follow the skew estimated
//!   there, else 0; `skew` optional: the OCR crops follow it instead);
//! - writes `OUT_DIR/skew.json` (`{"skew": degrees}`), `OUT_DIR/classifier.npy` (float32 `[N, 3, 96, 160]`,
//!   `classify::classifier_input`) and `OUT_DIR/ocr.npy` (float32 `[M, 1, 48, 320]`, `read::ocr_input`), each
//!   npy only when its list is non-empty.
//!
//! Errors are reported with a non-zero exit status, never a panic.

use std::path::Path;
use std::process::ExitCode;

use netron_ocr_core::graph::BBox;
use netron_ocr_core::vocab::Alphabet;
use netron_ocr_core::{classify, frame, read};
use serde::Deserialize;
use tract_onnx::prelude::Tensor;

#[derive(Deserialize)]
struct Boxes {
    #[serde(default)]
    titles: Vec<BBox>,
    #[serde(default)]
    texts: Vec<BBox>,
    /// Region to estimate the skew on (`skew::estimate_skew`); the OCR crops follow that skew. Without it, 0.
    #[serde(default)]
    skew_region: Option<[f64; 4]>,
    /// A skew to cut the OCR crops at instead (the estimate is still written to `skew.json`).
    #[serde(default)]
    skew: Option<f64>,
}

/// `.npy` version 1.0, little-endian float32, C order.
fn write_npy(path: &Path, tensor: &Tensor) -> Result<(), String> {
    let view = tensor
        .to_plain_array_view::<f32>()
        .map_err(|e| e.to_string())?;
    let dims: Vec<String> = view.shape().iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + header length (2) + header + '\n' must be a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + view.len() * 4);
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in view.iter() {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn run(image: &Path, boxes: &Path, out: &Path) -> Result<(), String> {
    let img = frame::decode_file(image).map_err(|e| format!("{}: {e}", image.display()))?;
    let text = std::fs::read_to_string(boxes).map_err(|e| format!("{}: {e}", boxes.display()))?;
    let boxes: Boxes =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", boxes.display()))?;
    let alphabet = Alphabet::bundled().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    if !boxes.titles.is_empty() {
        let t = classify::classifier_input(&img, &boxes.titles).map_err(|e| e.to_string())?;
        write_npy(&out.join("classifier.npy"), &t)?;
    }
    let skew = boxes
        .skew_region
        .map_or(0.0, |region| alphabet.estimate_skew(&img, region));
    std::fs::write(out.join("skew.json"), format!("{{\"skew\": {skew:?}}}\n"))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    if !boxes.texts.is_empty() {
        let at = boxes.skew.unwrap_or(skew);
        let t = read::ocr_input(&img, &boxes.texts, &alphabet, at).map_err(|e| e.to_string())?;
        write_npy(&out.join("ocr.npy"), &t)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [image, boxes, out] = args.as_slice() else {
        eprintln!("usage: crop_dump IMAGE BOXES.json OUT_DIR");
        return ExitCode::from(2);
    };
    match run(Path::new(image), Path::new(boxes), Path::new(out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crop_dump: {e}");
            ExitCode::FAILURE
        }
    }
}
