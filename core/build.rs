//! Generates the model manifest: `OUT_DIR/model_manifest.rs` with
//! `pub const MANIFEST: &[(&str, &str)] = &[(file name, sha256 hex), …];`
//! read from the line `SHA-256: <64 lowercase hex digits>` of each `models/<name>.MODEL.md`.
//! A missing or garbled line stops the build with a message saying which file and how to fix it.
//!
//! NNEF builds (feature `nnef` without `onnx`): each committed `models/<name>.onnx` must match that hash; it is
//! converted to `OUT_DIR/<name>.nnef.tar` (bundled by `src/models.rs`), and the manifest lists the NNEF files
//! with the hashes of the converted bytes.

use std::env;
use std::fs;
use std::path::PathBuf;

const MODELS: [&str; 4] = ["cropper", "detector", "classifier", "ocr"];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let models_dir = manifest_dir.join("..").join("models");
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for name in MODELS {
        let card = models_dir.join(format!("{name}.MODEL.md"));
        println!("cargo:rerun-if-changed={}", card.display());
        println!(
            "cargo:rerun-if-changed={}",
            models_dir.join(format!("{name}.onnx")).display()
        );
        let text = match fs::read_to_string(&card) {
            Ok(t) => t,
            Err(e) => {
                errors.push(format!("{}: cannot read: {e}", card.display()));
                continue;
            }
        };
        match parse_hash(&text) {
            Ok(hash) => entries.push((name, hash)),
            Err(why) => errors.push(format!("{}: {why}", card.display())),
        }
    }
    println!(
        "cargo:rerun-if-changed={}",
        models_dir.join("vocab.json").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        models_dir.join("ocr_alphabet.json").display()
    );
    if !errors.is_empty() {
        panic!(
            "model manifest: {}\nEach models/<name>.MODEL.md needs exactly one line `SHA-256: <64 lowercase hex \
             digits>` (the hash of models/<name>.onnx). Run `python models/update_hashes.py` to write them.",
            errors.join("; ")
        );
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    #[cfg(all(feature = "nnef", not(feature = "onnx")))]
    let entries = nnef::convert(&models_dir, &out_dir, entries);
    #[cfg(any(feature = "onnx", not(feature = "nnef")))]
    let entries: Vec<(String, String)> = entries
        .into_iter()
        .map(|(name, hash)| (format!("{name}.onnx"), hash))
        .collect();
    let mut out = String::from(
        "/// (model file name, SHA-256 lowercase hex), from `models/<name>.MODEL.md` (NNEF: of the conversion).\n",
    );
    out.push_str("pub const MANIFEST: &[(&str, &str)] = &[\n");
    for (file, hash) in &entries {
        out.push_str(&format!("    ({file:?}, {hash:?}),\n"));
    }
    out.push_str("];\n");
    fs::write(out_dir.join("model_manifest.rs"), out).expect("write model_manifest.rs");
}

/// The hash of the single `SHA-256:` line.
fn parse_hash(text: &str) -> Result<String, String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("SHA-256:"))
        .collect();
    match lines.as_slice() {
        [] => Err("no `SHA-256:` line".into()),
        [line] => {
            let value = line.trim_start()["SHA-256:".len()..].trim();
            if value.len() == 64
                && value
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                Ok(value.to_owned())
            } else {
                Err(format!(
                    "`SHA-256:` line holds {value:?}, not 64 lowercase hex digits"
                ))
            }
        }
        _ => Err(format!("{} `SHA-256:` lines, expected one", lines.len())),
    }
}

#[cfg(all(feature = "nnef", not(feature = "onnx")))]
mod nnef {
    use std::fs;
    use std::path::Path;

    use sha2::{Digest, Sha256};

    fn hex(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Checks each `models/<name>.onnx` against its MODEL.md hash, writes `out_dir/<name>.nnef.tar`, and returns
    /// the NNEF manifest entries.
    pub fn convert(
        models_dir: &Path,
        out_dir: &Path,
        onnx: Vec<(&str, String)>,
    ) -> Vec<(String, String)> {
        onnx.into_iter()
            .map(|(name, expected)| {
                let src = models_dir.join(format!("{name}.onnx"));
                let bytes = fs::read(&src)
                    .unwrap_or_else(|e| panic!("{}: cannot read: {e}", src.display()));
                let found = hex(&bytes);
                if found != expected {
                    panic!(
                        "{}: SHA-256 {found} is not the {expected} of {name}.MODEL.md: refusing to convert it",
                        src.display()
                    );
                }
                let nnef = netron_ocr_convert::onnx_to_nnef(name, &bytes)
                    .unwrap_or_else(|e| panic!("{}: NNEF conversion failed: {e:#}", src.display()));
                let file = format!("{name}.nnef.tar");
                fs::write(out_dir.join(&file), &nnef)
                    .unwrap_or_else(|e| panic!("{file}: cannot write: {e}"));
                (file, hex(&nnef))
            })
            .collect()
    }
}
