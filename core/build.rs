//! Generates the model manifest: `OUT_DIR/model_manifest.rs` with
//! `pub const MANIFEST: &[(&str, &str)] = &[(file name, sha256 hex), …];`
//! read from the line `SHA-256: <64 lowercase hex digits>` of each `models/<name>.MODEL.md`.
//! A missing or garbled line stops the build with a message saying which file and how to fix it.

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
            Ok(hash) => entries.push((format!("{name}.onnx"), hash)),
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
    let mut out = String::from(
        "/// (ONNX file name, SHA-256 lowercase hex), from `models/<name>.MODEL.md`.\n",
    );
    out.push_str("pub const MANIFEST: &[(&str, &str)] = &[\n");
    for (file, hash) in &entries {
        out.push_str(&format!("    ({file:?}, {hash:?}),\n"));
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
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
