//! netron-ocr core: turn a photo of the Netron viewer into a graph.
pub mod frame;
pub mod graph;
pub mod quality;
