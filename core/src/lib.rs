//! netron-ocr core: turn a photo of the Netron viewer into a graph.
pub mod assemble;
pub mod calibrate;
pub mod classify;
pub mod consensus;
pub mod crop;
pub mod detect;
pub mod edges;
pub mod error;
pub mod eval;
pub mod frame;
pub mod graph;
pub mod models;
pub mod quality;
pub mod read;
pub mod resample;
pub mod scanner;
pub mod skew;
pub mod threads;
pub mod title_ops;
pub mod vocab;
pub mod weights;

pub use error::ScanError;
