//! Greedy CTC decoding and the OCR crop geometry helpers on hand-made inputs.

use netron_ocr_core::read::{
    border_mean, ctc_beam, ctc_best_path_log_prob, ctc_greedy, ctc_log_likelihood,
    log_softmax_rows, run_width, text_width,
};

const C: usize = 4; // blank + 3 symbols

/// Logits for a path: at each step, `hi` for the chosen class and 0 elsewhere.
fn path(classes: &[usize], hi: f32) -> Vec<f32> {
    classes
        .iter()
        .flat_map(|&k| (0..C).map(move |c| if c == k { hi } else { 0.0 }))
        .collect()
}

#[test]
fn collapses_repeats_and_drops_blanks() {
    let p = ctc_greedy(&path(&[0, 1, 1, 0, 1, 2, 2, 2, 0, 0, 3], 10.0), C);
    assert_eq!(
        p.classes,
        vec![1, 1, 2, 3],
        "a blank between equal classes keeps both"
    );
    let p = ctc_greedy(&path(&[1, 1, 1, 1], 10.0), C);
    assert_eq!(p.classes, vec![1]);
    let p = ctc_greedy(&path(&[0, 0, 0], 10.0), C);
    assert!(p.classes.is_empty());
    let p = ctc_greedy(&path(&[2, 3, 2], 10.0), C);
    assert_eq!(p.classes, vec![2, 3, 2]);
}

#[test]
fn confidence_is_the_greedy_path_probability() {
    // Top logit 2 against three zeros: p = e² / (e² + 3) per step.
    let steps = [1, 0, 2];
    let p = ctc_greedy(&path(&steps, 2.0), C);
    let per_step = 2f64.exp() / (2f64.exp() + 3.0);
    assert!(
        (f64::from(p.confidence) - per_step.powi(3)).abs() < 1e-6,
        "{}",
        p.confidence
    );
    // Shift invariance: adding a constant to a step's logits changes nothing.
    let mut shifted = path(&steps, 2.0);
    shifted[4..8].iter_mut().for_each(|v| *v += 100.0);
    let q = ctc_greedy(&shifted, C);
    assert_eq!(q.classes, p.classes);
    assert!((q.confidence - p.confidence).abs() < 1e-6);
    // A confident path is near 1; an even split is 1/C per step.
    assert!(ctc_greedy(&path(&[1, 2], 30.0), C).confidence > 0.999);
    let flat = ctc_greedy(&[0.0; 2 * C], C);
    assert!((flat.confidence - 1.0 / 16.0).abs() < 1e-6);
    assert!(
        flat.classes.is_empty(),
        "ties go to the lowest class, the blank"
    );
}

#[test]
fn degenerate_inputs_decode_to_nothing() {
    assert!(ctc_greedy(&[], C).classes.is_empty());
    assert!(ctc_greedy(&[1.0, 2.0], 0).classes.is_empty());
    let nan = ctc_greedy(&[f32::NAN; C], C);
    assert!(nan.classes.is_empty());
    assert!((0.0..=1.0).contains(&nan.confidence) || nan.confidence == 0.0);
}

#[test]
fn text_width_rounds_half_to_even_and_clamps() {
    assert_eq!(text_width(100.0, 48.0, 48, 160), 100);
    assert_eq!(
        text_width(10.5, 48.0, 48, 160),
        10,
        "10.5 → 10 (half to even)"
    );
    assert_eq!(text_width(11.5, 48.0, 48, 160), 12, "11.5 → 12");
    assert_eq!(text_width(1000.0, 10.0, 48, 160), 160);
    assert_eq!(text_width(0.001, 10.0, 48, 160), 1);
    assert_eq!(
        text_width(5.0, 0.0, 48, 160),
        160,
        "zero height: as Python's max(h, 1e-6)"
    );
}

#[test]
fn run_width_adds_the_margin_in_steps_of_32_up_to_the_input_width() {
    assert_eq!(run_width(1, Some(32), 320), 64);
    assert_eq!(run_width(32, Some(32), 320), 64);
    assert_eq!(run_width(33, Some(32), 320), 96);
    assert_eq!(run_width(152, Some(32), 320), 192);
    assert_eq!(run_width(288, Some(32), 320), 320);
    assert_eq!(run_width(320, Some(32), 320), 320);
    assert_eq!(run_width(100, Some(0), 320), 128);
    assert_eq!(
        run_width(100, None, 320),
        320,
        "no margin: the training width"
    );
    assert_eq!(run_width(u32::MAX, Some(32), 320), 320);
}

#[test]
fn border_mean_counts_corners_twice() {
    // 3 rows × 2 columns: every pixel is on the border.
    let px = [10u8, 20, 30, 40, 50, 60];
    // top (10, 20) + bottom (50, 60) + left (10, 30, 50) + right (20, 40, 60) over 10 values.
    assert_eq!(border_mean(&px, 2), 350.0 / 10.0);
    assert_eq!(border_mean(&[], 3), 0.0);
}

/// Every alignment of `steps` frames over `classes` classes, collapsed: the brute-force CTC likelihood.
fn brute_force_likelihood(log_probs: &[f32], classes: usize, target: &[usize]) -> f64 {
    brute_force(log_probs, classes, target, false)
}

/// The brute-force sum (or, with `best`, max) over the alignments that collapse to `target`, as a log.
fn brute_force(log_probs: &[f32], classes: usize, target: &[usize], best: bool) -> f64 {
    let steps = log_probs.len() / classes;
    let mut total = 0f64;
    let mut frame = vec![0usize; steps];
    loop {
        let mut collapsed = Vec::new();
        let mut prev = 0;
        for &k in &frame {
            if k != prev && k != 0 {
                collapsed.push(k);
            }
            prev = k;
        }
        if collapsed == target {
            let lp: f64 = frame
                .iter()
                .enumerate()
                .map(|(t, &k)| f64::from(log_probs[t * classes + k]))
                .sum();
            total = if best {
                total.max(lp.exp())
            } else {
                total + lp.exp()
            };
        }
        let mut i = 0;
        loop {
            if i == steps {
                return total.ln();
            }
            frame[i] += 1;
            if frame[i] < classes {
                break;
            }
            frame[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn ctc_likelihood_matches_brute_force() {
    let logits: Vec<f32> = (0..5 * C)
        .map(|i| ((i * 7919) % 13) as f32 * 0.37 - 2.0)
        .collect();
    let lp = log_softmax_rows(&logits, C);
    for target in [
        vec![],
        vec![1],
        vec![2, 3],
        vec![1, 1],
        vec![3, 2, 1],
        vec![2, 2, 2],
    ] {
        let got = ctc_log_likelihood(&lp, C, &target);
        let want = brute_force_likelihood(&lp, C, &target);
        assert!((got - want).abs() < 1e-6, "{target:?}: {got} vs {want}");
    }
    // `1 1` needs a blank between: 3 frames at least.
    assert_eq!(
        ctc_log_likelihood(&lp[..2 * C], C, &[1, 1]),
        f64::NEG_INFINITY
    );
    assert_eq!(ctc_log_likelihood(&lp, C, &[1, 0]), f64::NEG_INFINITY);
    assert_eq!(ctc_log_likelihood(&lp, C, &[4]), f64::NEG_INFINITY);
    assert_eq!(ctc_log_likelihood(&[], C, &[1]), f64::NEG_INFINITY);
    assert_eq!(ctc_log_likelihood(&lp, 0, &[]), f64::NEG_INFINITY);
}

#[test]
fn ctc_likelihood_stays_finite_where_probabilities_underflow() {
    // Blank is certain at every step but one, where the target's class has log-probability −800 (e^−800 is 0 in
    // f64): exactly one alignment, likelihood −800.
    let mut lp = vec![-2000f32; 4 * C];
    for t in 0..4 {
        lp[t * C] = 0.0;
    }
    lp[2 * C + 1] = -800.0;
    let got = ctc_log_likelihood(&lp, C, &[1]);
    assert!((got + 800.0).abs() < 1e-9, "{got}");
}

#[test]
fn log_softmax_rows_normalise_each_step() {
    let lp = log_softmax_rows(&path(&[1, 0, 3], 4.0), C);
    assert_eq!(lp.len(), 3 * C);
    for row in lp.chunks_exact(C) {
        let s: f64 = row.iter().map(|&v| f64::from(v).exp()).sum();
        assert!((s - 1.0).abs() < 1e-6);
    }
    assert!(log_softmax_rows(&[1.0, 2.0], 0).is_empty());
}

/// Every labeling reachable in `lp` (`T × C`), by enumerating the `C^T` alignments.
fn all_labelings(lp: &[f32]) -> Vec<Vec<usize>> {
    let steps = lp.len() / C;
    let mut out: Vec<Vec<usize>> = Vec::new();
    for n in 0..C.pow(steps as u32) {
        let (mut collapsed, mut prev, mut rest) = (Vec::new(), 0, n);
        for _ in 0..steps {
            let k = rest % C;
            rest /= C;
            if k != prev && k != 0 {
                collapsed.push(k);
            }
            prev = k;
        }
        if !out.contains(&collapsed) {
            out.push(collapsed);
        }
    }
    out
}

#[test]
fn ctc_beam_without_pruning_is_exact_and_sorted() {
    for seed in 0..10usize {
        let logits: Vec<f32> = (0..5 * C)
            .map(|i| ((i * 7919 + seed * 104729) % 17) as f32 * 0.41 - 3.0)
            .collect();
        let lp = log_softmax_rows(&logits, C);
        let labelings = all_labelings(&lp);
        let found = ctc_beam(&lp, C, 4 * labelings.len(), f32::NEG_INFINITY);
        assert_eq!(found.len(), labelings.len(), "seed {seed}");
        for pair in found.windows(2) {
            assert!(pair[0].log_prob >= pair[1].log_prob, "best first");
        }
        for beam in &found {
            let want = brute_force_likelihood(&lp, C, &beam.classes);
            assert!(
                (beam.log_prob - want).abs() < 1e-5,
                "seed {seed} {:?}: {} vs {want}",
                beam.classes,
                beam.log_prob
            );
        }
        let narrow = ctc_beam(&lp, C, 2, f32::NEG_INFINITY);
        assert_eq!(narrow.len(), 2);
    }
}

#[test]
fn ctc_beam_keeps_a_character_spread_over_steps() {
    // Two steps where class 1 has 0.45 and the blank 0.55: the greedy path is all blank, yet the labeling
    // `1` has probability 1 − 0.55² ≈ 0.70.
    let probs = [[1.0, 0.0], [0.55, 0.45], [0.55, 0.45], [1.0, 0.0]];
    let logits: Vec<f32> = probs
        .iter()
        .flat_map(|&[b, one]| [b, one, 0.0, 0.0].map(|p: f64| (p.max(1e-9)).ln() as f32))
        .collect();
    let lp = log_softmax_rows(&logits, C);
    assert!(ctc_greedy(&logits, C).classes.is_empty());
    let found = ctc_beam(&lp, C, 4, -9.0);
    assert_eq!(found[0].classes, vec![1]);
    assert!((found[0].log_prob.exp() - (1.0 - 0.55f64.powi(2))).abs() < 1e-3);
    assert!(found[1].classes.is_empty());
    assert!(ctc_beam(&[], C, 4, -9.0)[0].classes.is_empty());
}

#[test]
fn best_path_is_the_likeliest_alignment() {
    let logits: Vec<f32> = (0..5 * C)
        .map(|i| ((i * 7919) % 13) as f32 * 0.37 - 2.0)
        .collect();
    let lp = log_softmax_rows(&logits, C);
    for target in [vec![], vec![1], vec![2, 3], vec![1, 1], vec![3, 2, 1]] {
        let got = ctc_best_path_log_prob(&lp, C, &target);
        let want = brute_force(&lp, C, &target, true);
        assert!((got - want).abs() < 1e-6, "{target:?}: {got} vs {want}");
    }
    let greedy = ctc_greedy(&logits, C);
    let viterbi = ctc_best_path_log_prob(&lp, C, &greedy.classes);
    assert!((viterbi.exp() - f64::from(greedy.confidence)).abs() < 1e-5);
}
