//! `netron-ocr`: command-line front end of netron-ocr.
//!
//! Each subcommand lives in its own module with an `Args` struct (clap derive) and a `run(&Args) -> u8` that
//! returns the process exit status.
//!
//! Exit statuses shared by all subcommands: 0 success, 1 invalid input (`validate`), 2 usage or I/O error (also
//! what clap uses for bad arguments), 3 a frame rejected by the quality gate.

mod eval;
mod overlay;
mod quality;
mod scan;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Success.
pub const EXIT_OK: u8 = 0;
/// At least one input was read but is not valid.
pub const EXIT_INVALID: u8 = 1;
/// Bad arguments, or a file could not be read or decoded.
pub const EXIT_USAGE: u8 = 2;
/// At least one frame was rejected by the quality gate.
pub const EXIT_REJECTED: u8 = 3;

#[derive(Parser)]
#[command(
    name = "netron-ocr",
    version,
    about = "Read an ONNX graph from a photo of the Netron viewer."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check graph JSON files: version, JSON Schema v1 and cross-references.
    Validate(validate::Args),
    /// Decode images and print the frame-quality assessment of each as JSON.
    Quality(quality::Args),
    /// Read the Netron graph of each image and print it as graph JSON.
    Scan(scan::Args),
    /// Scan a dataset and score the graphs against their ground truth.
    Eval(Box<eval::Args>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match &cli.command {
        Command::Validate(args) => validate::run(args),
        Command::Quality(args) => quality::run(args),
        Command::Scan(args) => scan::run(args),
        Command::Eval(args) => eval::run(args),
    };
    ExitCode::from(status)
}
