//! `netron-ocr quality <image>... [--pretty]`: decode each image (EXIF orientation applied) and print its
//! frame-quality assessment.
//!
//! Output: one JSON object per image, the `FrameQuality` fields plus `"path"`; one line each, or indented with
//! `--pretty`. Exit status 0 when every frame is accepted, 3 when the gate rejects one, 2 when an image cannot be
//! read or decoded (a one-line message on stderr; the other images are still assessed).

use std::io::Write;
use std::path::PathBuf;

use netron_ocr_core::frame;
use netron_ocr_core::quality::{self, FrameGate, FrameQuality, QualityParams};
use serde::Serialize;

use crate::{EXIT_OK, EXIT_REJECTED, EXIT_USAGE};

#[derive(clap::Args)]
pub struct Args {
    /// Image files (JPEG or PNG).
    #[arg(required = true, value_name = "IMAGE")]
    images: Vec<PathBuf>,
    /// Indent the JSON.
    #[arg(long)]
    pretty: bool,
    /// Treat the images as consecutive frames of one camera stream: each after the first also gets `stability`
    /// against the one before it (an image that fails to decode is skipped).
    #[arg(long)]
    stream: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    path: String,
    #[serde(flatten)]
    quality: &'a FrameQuality,
}

pub fn run(args: &Args) -> u8 {
    let params = QualityParams::default();
    let mut gate = FrameGate::new(params.clone());
    let mut status = EXIT_OK;
    let mut out = std::io::stdout().lock();
    for path in &args.images {
        let rgb = match frame::decode_file(path) {
            Ok(rgb) => rgb,
            Err(e) => {
                eprintln!("netron-ocr quality: cannot decode {}: {e}", path.display());
                status = EXIT_USAGE;
                continue;
            }
        };
        let assessment = if args.stream {
            gate.push_rgb(&rgb)
        } else {
            quality::assess_rgb(&rgb, &params)
        };
        if !assessment.accept && status == EXIT_OK {
            status = EXIT_REJECTED;
        }
        let report = Report {
            path: path.display().to_string(),
            quality: &assessment,
        };
        let json = if args.pretty {
            serde_json::to_string_pretty(&report)
        } else {
            serde_json::to_string(&report)
        };
        let written = match json {
            Ok(json) => writeln!(out, "{json}"),
            Err(e) => {
                eprintln!("netron-ocr quality: cannot serialise the result: {e}");
                return EXIT_USAGE;
            }
        };
        if let Err(e) = written {
            eprintln!("netron-ocr quality: cannot write the result: {e}");
            return EXIT_USAGE;
        }
    }
    status
}
