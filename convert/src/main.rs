//! `netron-ocr-convert MODELS_DIR OUT_DIR`: writes `OUT_DIR/<name>.nnef.tar` for each `MODELS_DIR/<name>.onnx` of
//! the four models (see the library doc). A `netron-ocr-core` built with `nnef` loads that directory.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [models, out] = args.as_slice() else {
        eprintln!("usage: netron-ocr-convert MODELS_DIR OUT_DIR");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("{}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    for name in netron_ocr_convert::MODEL_NAMES {
        let src = models.join(format!("{name}.onnx"));
        let dst = out.join(format!("{name}.nnef.tar"));
        let result = std::fs::read(&src)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                netron_ocr_convert::onnx_to_nnef(name, &bytes).map_err(|e| format!("{e:#}"))
            })
            .and_then(|nnef| std::fs::write(&dst, nnef).map_err(|e| e.to_string()));
        match result {
            Ok(()) => println!("{} -> {}", src.display(), dst.display()),
            Err(e) => {
                eprintln!("{}: {e}", src.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
