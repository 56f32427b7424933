//! Dump the Rust cropper/detector preprocessing and post-processing of one image as `.npy` + JSON, for the
//! parity test against the Python training code (`models/train/tests/test_rust_parity.py`).
//!
//! Usage: `cargo run --release -p netron-ocr-core --example preprocess_dump -- IMAGE OUT_DIR X0 Y0 X1 Y1`
//!
//! `X0 Y0 X1 Y1` is the detector crop in source pixels (the test passes Python's `padded_canvas(truth)`).
//! Writes into OUT_DIR:
//! - `decoded.npy`: the decoded image, uint8 `[H, W, 3]`;
//! - `cropper_input.npy`: float32 `[1, 3, 512, 512]` (`crop::preprocess`);
//! - `cropper_{proj_x,proj_y,margins}.npy`: the cropper's raw outputs (bundled model);
//! - `detector_input.npy`: float32 `[1, 3, H, W]` for the crop as one tile (`detect::preprocess`: trimmed to
//!   `H = min(512, ceil32(th + 32))`, `W` likewise);
//! - `detector_{heatmap,size,offset}.npy`: the detector's raw outputs on that input (`[1, C, H/4, W/4]`);
//! - `result.json`: `{crop_normalised, crop_confidence, letterbox: {tw, th, input_w, input_h},
//!   detections: [{class, box, score}]}` (detections of that one tile, `detect::postprocess`, source px).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use netron_ocr_core::crop::{self, CropParams};
use netron_ocr_core::detect::{self, DetectParams};
use netron_ocr_core::frame;
use netron_ocr_core::models::ModelSet;
use tract_onnx::prelude::*;

fn npy(path: &Path, descr: &str, shape: &[usize], payload: &[u8]) -> Result<(), String> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(payload);
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

fn tensor_npy(path: &Path, t: &Tensor) -> Result<(), String> {
    let view = t.to_plain_array_view::<f32>().map_err(|e| e.to_string())?;
    let bytes: Vec<u8> = view.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy(path, "<f4", t.shape(), &bytes)
}

fn run(args: &[String]) -> Result<(), String> {
    let [image, out, x0, y0, x1, y1] = args else {
        return Err("usage: preprocess_dump IMAGE OUT_DIR X0 Y0 X1 Y1".into());
    };
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let num = |s: &String| s.parse::<f64>().map_err(|e| format!("{s}: {e}"));
    let crop_box = [num(x0)?, num(y0)?, num(x1)?, num(y1)?];
    let img = frame::decode_file(Path::new(image)).map_err(|e| e.to_string())?;
    npy(
        &out.join("decoded.npy"),
        "|u1",
        &[img.height() as usize, img.width() as usize, 3],
        img.as_raw(),
    )?;
    let models = ModelSet::bundled().map_err(|e| e.to_string())?;

    let cin = crop::preprocess(&img).map_err(|e| e.to_string())?;
    tensor_npy(&out.join("cropper_input.npy"), &cin)?;
    let couts = models.cropper.run(cin).map_err(|e| e.to_string())?;
    for (name, t) in ["proj_x", "proj_y", "margins"].iter().zip(&couts) {
        tensor_npy(&out.join(format!("cropper_{name}.npy")), t)?;
    }
    let flat = |t: &Tensor| -> Result<Vec<f32>, String> {
        Ok(t.to_plain_array_view::<f32>()
            .map_err(|e| e.to_string())?
            .iter()
            .copied()
            .collect())
    };
    let m = flat(&couts[2])?;
    let (normalised, confidence) = crop::decode(
        &flat(&couts[0])?,
        &flat(&couts[1])?,
        [m[0], m[1], m[2], m[3]],
        &CropParams::default(),
    );

    let (din, lb) = detect::preprocess(&img, crop_box).map_err(|e| e.to_string())?;
    tensor_npy(&out.join("detector_input.npy"), &din)?;
    let douts = models
        .detector
        .run_any_size(din)
        .map_err(|e| e.to_string())?;
    for (name, t) in ["heatmap", "size", "offset"].iter().zip(&douts) {
        tensor_npy(&out.join(format!("detector_{name}.npy")), t)?;
    }
    let (heatmap, size, offset) = (flat(&douts[0])?, flat(&douts[1])?, flat(&douts[2])?);
    let (rows, cols) = lb.grid();
    let maps =
        detect::HeadMaps::new(&heatmap, &size, &offset, rows, cols).map_err(|e| e.to_string())?;
    let dets = detect::postprocess(&maps, Some(&lb), &DetectParams::default());
    let result = serde_json::json!({
        "crop_normalised": normalised,
        "crop_confidence": confidence,
        "letterbox": {"tw": lb.tw, "th": lb.th, "input_w": lb.input_w, "input_h": lb.input_h},
        "detections": dets.iter().map(|d| serde_json::json!({
            "class": d.class, "box": d.bbox, "score": d.score,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(out.join("result.json"), result.to_string()).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("preprocess_dump: {e}");
            ExitCode::from(2)
        }
    }
}
