//! Wall time of one `title_ops::join_title_reading` (the CTC scoring of every candidate operator's titles) for
//! a few kinds of title reading, on pseudo-random OCR log-probabilities (the cost does not depend on their
//! values) and a uniform classifier (the most candidates). `cargo run --release --example title_join_cost`.

use netron_ocr_core::classify::OpPrediction;
use netron_ocr_core::read::TextRead;
use netron_ocr_core::title_ops::{join_title_reading, TitleParams};
use netron_ocr_core::vocab::{Alphabet, Vocab};
use std::time::Instant;
fn main() {
    let (vocab, alphabet) = (Vocab::bundled().unwrap(), Alphabet::bundled().unwrap());
    let classes = alphabet.classes();
    let mut state = 12345u64;
    for text in [
        "Conv",
        "Conv_437",
        "StatefulPa…nv1/Conv2D",
        "intermediate.fc1.add",
        "cat.ard/Shap",
        "Sa/hhze",
    ] {
        let mut log_probs = Vec::new();
        for _ in 0..80 {
            let row: Vec<f32> = (0..classes)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((state >> 33) as f32 / 2f32.powi(31)) * 4.0
                })
                .collect();
            let m = row.iter().cloned().fold(f32::MIN, f32::max);
            let lse = m + row.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
            log_probs.extend(row.iter().map(|v| v - lse));
        }
        let read = TextRead {
            text: text.into(),
            confidence: 0.1,
            log_probs,
            reread_log_probs: Vec::new(),
        };
        let n = vocab.len();
        let pred = OpPrediction {
            op: None,
            index: 0,
            confidence: 1.0 / n as f32,
            top: vec![],
            probs: vec![1.0 / n as f32; n],
        };
        let t = Instant::now();
        for _ in 0..20 {
            std::hint::black_box(join_title_reading(
                &pred,
                &read,
                &alphabet,
                &vocab,
                0.5,
                &TitleParams::default(),
            ));
        }
        println!(
            "{text}: {:.2} ms per join",
            t.elapsed().as_secs_f64() * 1000.0 / 20.0
        );
    }
}
