//! Label consensus on hand-made edges and OCR readings: which labels are grouped, and which text a group takes.

use netron_ocr_core::consensus::{agree, agree_rows, label_groups, ConsensusParams};
use netron_ocr_core::edges::{RecoveredEdge, Side};
use netron_ocr_core::graph::Point;
use netron_ocr_core::read::{log_softmax_rows, TextRead};
use netron_ocr_core::vocab::Alphabet;

fn edge(from: &str, to: &str, label: Option<&str>) -> RecoveredEdge {
    RecoveredEdge {
        from: from.into(),
        to: to.into(),
        label: label.map(str::to_owned),
        confidence: 0.9,
        points: vec![Point::new(0.0, 0.0), Point::new(0.0, 10.0)],
        from_side: Side::Bottom,
        to_side: Side::Top,
        arrowhead: Some(true),
    }
}

/// A reading of `text` over 40 frames (each character twice, then a blank): the chosen class at logit 8,
/// the others at 0. `doubt` lists `(character index, logit)`: that character's frames give the blank this logit
/// instead, so at 9 the greedy path drops the character though it stays plausible.
fn reading(alphabet: &Alphabet, text: &str, doubt: &[(usize, f32)]) -> TextRead {
    let classes = alphabet.classes();
    let mut frames: Vec<(usize, f32)> = Vec::new();
    for (i, c) in text.chars().enumerate() {
        let k = alphabet.class_of(c).expect("test text in the alphabet");
        let blank = doubt.iter().find(|d| d.0 == i).map_or(0.0, |d| d.1);
        frames.extend([(k, blank), (k, blank), (0, 0.0)]);
    }
    assert!(frames.len() <= 40);
    frames.resize(40, (0, 0.0));
    let mut logits = vec![0f32; 40 * classes];
    for (t, &(k, blank)) in frames.iter().enumerate() {
        logits[t * classes + k] = 8.0;
        if k != 0 {
            logits[t * classes] = blank;
        }
    }
    let mut decoded = String::new();
    let mut prev = 0;
    for t in 0..40 {
        let row = &logits[t * classes..(t + 1) * classes];
        let best = (0..classes).fold(0, |b, k| if row[k] > row[b] { k } else { b });
        if best != prev && best != 0 {
            decoded.push(alphabet.symbol(best).unwrap());
        }
        prev = best;
    }
    TextRead {
        text: decoded,
        confidence: 0.5,
        log_probs: log_softmax_rows(&logits, classes),
        reread_log_probs: Vec::new(),
    }
}

fn params() -> ConsensusParams {
    ConsensusParams::default()
}

#[test]
fn fan_out_labels_of_a_single_output_node_are_grouped() {
    let edges = [
        edge("n0", "n1", Some("t0")),
        edge("n0", "n2", Some("t1")),
        edge("n0", "o0", Some("t2")),
        edge("n1", "n2", Some("t3")),
    ];
    let ops = [Some("Conv"), Some("Conv"), Some("Add")];
    let groups = label_groups(&edges, &ops, 4, true, &params());
    assert_eq!(groups, vec![vec![0, 1, 2]]);
}

#[test]
fn multi_output_and_unknown_operators_are_not_fanned_out() {
    let edges = [
        edge("n0", "n1", Some("t0")),
        edge("n0", "n2", Some("t1")),
        edge("n3", "n1", Some("t2")),
        edge("n3", "n2", Some("t3")),
        edge("i0", "n0", Some("t4")),
        edge("i0", "n3", Some("t5")),
    ];
    let ops = [Some("Split"), Some("Add"), Some("Add"), None];
    let groups = label_groups(&edges, &ops, 6, true, &params());
    assert_eq!(groups, vec![vec![4, 5]], "only the graph input fans out");
}

#[test]
fn shape_preserving_nodes_join_their_input_and_outputs_in_shape_mode_only() {
    let edges = [
        edge("n0", "n1", Some("t0")),
        edge("n1", "n2", Some("t1")),
        edge("n2", "n3", Some("t2")),
    ];
    let ops = [Some("Conv"), Some("Relu"), Some("MaxPool"), Some("Conv")];
    assert_eq!(
        label_groups(&edges, &ops, 3, true, &params()),
        vec![vec![0, 1]]
    );
    assert!(label_groups(&edges, &ops, 3, false, &params()).is_empty());
    let no_rule = ConsensusParams {
        shape_preserving: false,
        ..params()
    };
    assert!(label_groups(&edges, &ops, 3, true, &no_rule).is_empty());
    // Two incoming edges: not a one-input node, whatever the classifier says.
    let edges = [
        edge("n0", "n1", Some("t0")),
        edge("n3", "n1", Some("t2")),
        edge("n1", "n2", Some("t1")),
    ];
    assert!(label_groups(&edges, &ops, 3, true, &params()).is_empty());
}

#[test]
fn labels_out_of_range_or_unlabelled_edges_are_ignored() {
    let edges = [
        edge("n0", "n1", Some("t0")),
        edge("n0", "n2", None),
        edge("n0", "n3", Some("t9")),
        edge("n0", "n4", Some("x1")),
    ];
    let ops = [Some("Conv")];
    assert!(label_groups(&edges, &ops, 2, true, &params()).is_empty());
}

#[test]
fn a_dropped_digit_is_outvoted_by_the_clear_twin() {
    let a = Alphabet::bundled().unwrap();
    let clear = reading(&a, "1×64×56×56", &[]);
    let doubted = reading(&a, "1×64×56×56", &[(9, 9.0)]);
    assert_eq!(clear.text, "1×64×56×56");
    assert_eq!(
        doubted.text, "1×64×56×5",
        "the greedy path drops the doubted 6"
    );
    let mut texts = vec![clear.text.clone(), doubted.text.clone()];
    let changed = agree(
        &mut texts,
        &[Some(&clear), Some(&doubted)],
        &[vec![0, 1]],
        &a,
        &params(),
    );
    assert_eq!(changed, vec![1]);
    assert_eq!(texts, vec!["1×64×56×56", "1×64×56×56"]);
}

#[test]
fn a_clear_reading_keeps_its_text_against_the_group() {
    let a = Alphabet::bundled().unwrap();
    let one = reading(&a, "1×64×56×56", &[]);
    let other = reading(&a, "1×128×28×28", &[]);
    let third = reading(&a, "1×64×56×56", &[]);
    let mut texts = vec![one.text.clone(), other.text.clone(), third.text.clone()];
    let changed = agree(
        &mut texts,
        &[Some(&one), Some(&other), Some(&third)],
        &[vec![0, 1, 2]],
        &a,
        &params(),
    );
    assert!(changed.is_empty(), "{texts:?}");
    let always = ConsensusParams {
        max_loss_nats: f64::INFINITY,
        ..params()
    };
    let changed = agree(
        &mut texts,
        &[Some(&one), Some(&other), Some(&third)],
        &[vec![0, 1, 2]],
        &a,
        &always,
    );
    assert_eq!(changed, vec![1], "two clear votes against one");
    assert_eq!(texts[1], "1×64×56×56");
}

#[test]
fn labels_without_a_reading_neither_vote_nor_change() {
    let a = Alphabet::bundled().unwrap();
    let doubted = reading(&a, "1×64×56×56", &[(9, 9.0)]);
    let mut texts = vec!["1×64×56×56".to_owned(), doubted.text.clone()];
    let changed = agree(
        &mut texts,
        &[None, Some(&doubted)],
        &[vec![0, 1]],
        &a,
        &params(),
    );
    assert!(changed.is_empty());
    assert_eq!(texts[1], "1×64×56×5");
    // Members out of range are skipped.
    let clear = reading(&a, "1×64×56×56", &[]);
    let mut texts = vec![clear.text.clone(), doubted.text.clone()];
    let changed = agree(
        &mut texts,
        &[Some(&clear), Some(&doubted)],
        &[vec![0, 1, 7]],
        &a,
        &params(),
    );
    assert_eq!(changed, vec![1]);
}

#[test]
fn a_weight_row_takes_the_dims_of_its_twins_and_keeps_its_name() {
    let a = Alphabet::bundled().unwrap();
    let scale = reading(&a, "scale〈64〉", &[]);
    let bias = reading(&a, "B〈64〉", &[(3, 9.0)]);
    let var = reading(&a, "var〈64〉", &[]);
    assert_eq!(bias.text, "B〈6〉", "the greedy path drops the doubted 4");
    let mut texts = vec![scale.text.clone(), bias.text.clone(), var.text.clone()];
    let changed = agree_rows(
        "BatchNormalization",
        &mut texts,
        &[scale.clone(), bias.clone(), var.clone()],
        &[],
        &[],
        &a,
        &params(),
    );
    assert_eq!(changed, vec![1]);
    assert_eq!(texts, vec!["scale〈64〉", "B〈64〉", "var〈64〉"]);
}

#[test]
fn rows_without_dims_neither_vote_nor_change_and_clear_rows_keep_theirs() {
    let a = Alphabet::bundled().unwrap();
    let attr = reading(&a, "axis = 1", &[]);
    let bias = reading(&a, "B〈64〉", &[(3, 9.0)]);
    let mut texts = vec![attr.text.clone(), bias.text.clone()];
    assert!(agree_rows(
        "Slice",
        &mut texts,
        &[attr.clone(), bias.clone()],
        &[],
        &[],
        &a,
        &params()
    )
    .is_empty());
    assert_eq!(texts, vec!["axis = 1", "B〈6〉"]);
    // Two clear rows that differ: neither gives way within the default loss.
    let w = reading(&a, "W〈64〉", &[]);
    let r = reading(&a, "R〈32〉", &[]);
    let mut texts = vec![w.text.clone(), r.text.clone()];
    assert!(agree_rows(
        "LayerNormalization",
        &mut texts,
        &[w.clone(), r.clone()],
        &[],
        &[],
        &a,
        &params()
    )
    .is_empty());
    assert_eq!(texts, vec!["W〈64〉", "R〈32〉"]);
}

#[test]
fn a_conv_bias_and_the_first_weight_dim_agree_and_other_operators_are_left_alone() {
    let a = Alphabet::bundled().unwrap();
    let w = reading(&a, "W〈64×3×7×7〉", &[]);
    let b = reading(&a, "B〈64〉", &[(3, 9.0)]);
    assert_eq!(b.text, "B〈6〉");
    let mut texts = vec![w.text.clone(), b.text.clone()];
    let changed = agree_rows(
        "Conv",
        &mut texts,
        &[w.clone(), b.clone()],
        &[],
        &[],
        &a,
        &params(),
    );
    assert_eq!(changed, vec![1]);
    assert_eq!(texts, vec!["W〈64×3×7×7〉", "B〈64〉"]);
    // The doubt on the weight row's first dim instead: the bias corrects it, the rest of its dims stay.
    let w = reading(&a, "W〈64×3×7×7〉", &[(3, 9.0)]);
    let b = reading(&a, "B〈64〉", &[]);
    assert_eq!(w.text, "W〈6×3×7×7〉");
    let mut texts = vec![w.text.clone(), b.text.clone()];
    assert_eq!(
        agree_rows(
            "Conv",
            &mut texts,
            &[w.clone(), b.clone()],
            &[],
            &[],
            &a,
            &params()
        ),
        vec![0]
    );
    assert_eq!(texts[0], "W〈64×3×7×7〉");
    let mut texts = vec![w.text.clone(), b.text.clone()];
    assert!(agree_rows(
        "Gemm",
        &mut texts,
        &[w.clone(), b.clone()],
        &[],
        &[],
        &a,
        &params()
    )
    .is_empty());
    assert_eq!(texts[0], "W〈6×3×7×7〉");
}

#[test]
fn the_labels_of_a_batch_norm_vote_with_their_channels_but_do_not_change() {
    let a = Alphabet::bundled().unwrap();
    let scale = reading(&a, "scale〈64〉", &[(7, 9.0)]);
    let bias = reading(&a, "B〈64〉", &[(3, 9.0)]);
    assert_eq!(
        (scale.text.as_str(), bias.text.as_str()),
        ("scale〈6〉", "B〈6〉")
    );
    let input = reading(&a, "1×64×56×56", &[]);
    let output = reading(&a, "1×64×56×56", &[]);
    let labels = [(input.text.as_str(), &input)];
    let outs = [(output.text.as_str(), &output)];
    // Alone, the two rows agree on their wrong reading.
    let mut texts = vec![scale.text.clone(), bias.text.clone()];
    let reads = [scale.clone(), bias.clone()];
    let alone = agree_rows(
        "BatchNormalization",
        &mut texts,
        &reads,
        &[],
        &[],
        &a,
        &params(),
    );
    assert!(alone.is_empty());
    let changed = agree_rows(
        "BatchNormalization",
        &mut texts,
        &reads,
        &labels,
        &outs,
        &a,
        &params(),
    );
    assert_eq!(changed, vec![0, 1]);
    assert_eq!(texts, vec!["scale〈64〉", "B〈64〉"]);
    // A Conv's input channels are not its output channels: only the outgoing labels vote.
    let w = reading(&a, "W〈32×64×3×3〉", &[]);
    let b = reading(&a, "B〈32〉", &[]);
    let mut texts = vec![w.text.clone(), b.text.clone()];
    let changed = agree_rows(
        "Conv",
        &mut texts,
        &[w.clone(), b.clone()],
        &labels,
        &[],
        &a,
        &params(),
    );
    assert!(changed.is_empty(), "{texts:?}");
}

#[test]
fn recurrent_rows_share_directions_and_hidden_size() {
    let a = Alphabet::bundled().unwrap();
    // LSTM (4 gates), H = 32: W〈1×128×32〉, R〈1×128×32〉, B〈1×256〉; R's last dim drops its 2.
    let w = reading(&a, "W〈1×128×32〉", &[]);
    let r = reading(&a, "R〈1×128×32〉", &[(9, 9.0)]);
    let b = reading(&a, "B〈1×256〉", &[]);
    assert_eq!(r.text, "R〈1×128×3〉");
    let reads = [w.clone(), r.clone(), b.clone()];
    let mut texts: Vec<String> = reads.iter().map(|x| x.text.clone()).collect();
    let changed = agree_rows("LSTM", &mut texts, &reads, &[], &[], &a, &params());
    assert_eq!(changed, vec![1]);
    assert_eq!(texts, vec!["W〈1×128×32〉", "R〈1×128×32〉", "B〈1×256〉"]);
    // The same rows on a GRU card (3 gates): 128 is no multiple of 3, so nothing agrees and nothing changes.
    let mut texts: Vec<String> = reads.iter().map(|x| x.text.clone()).collect();
    let changed = agree_rows("GRU", &mut texts, &reads, &[], &[], &a, &params());
    assert!(changed.is_empty(), "{texts:?}");
    // GRU, H = 32: W's 96 loses its 6 and is outvoted by R (96 = 3·32, and 32) and B (192 = 6·32).
    let w = reading(&a, "W〈1×96×16〉", &[(5, 9.0)]);
    let r = reading(&a, "R〈1×96×32〉", &[]);
    let b = reading(&a, "B〈1×192〉", &[]);
    assert_eq!(w.text, "W〈1×9×16〉");
    let reads = [w.clone(), r.clone(), b.clone()];
    let mut texts: Vec<String> = reads.iter().map(|x| x.text.clone()).collect();
    let changed = agree_rows("GRU", &mut texts, &reads, &[], &[], &a, &params());
    assert_eq!(changed, vec![0]);
    assert_eq!(texts[0], "W〈1×96×16〉");
}

#[test]
fn matmul_and_gemm_weights_agree_with_their_labels() {
    let a = Alphabet::bundled().unwrap();
    // MatMul B〈K×N〉: its N (dropped 8) against the output label's last dim.
    let b = reading(&a, "B〈64×128〉", &[(7, 9.0)]);
    assert_eq!(b.text, "B〈64×12〉");
    let out = reading(&a, "1×10×128", &[]);
    let outs = [(out.text.as_str(), &out)];
    let mut texts = vec![b.text.clone()];
    let changed = agree_rows(
        "MatMul",
        &mut texts,
        std::slice::from_ref(&b),
        &[],
        &outs,
        &a,
        &params(),
    );
    assert_eq!(changed, vec![0]);
    assert_eq!(texts, vec!["B〈64×128〉"]);
    // Gemm with transB: B〈N×K〉 = B〈512×2048〉 shares its first dim with C〈512〉, which drops its 2.
    let b = reading(&a, "B〈512×2048〉", &[]);
    let c = reading(&a, "C〈512〉", &[(4, 9.0)]);
    assert_eq!(c.text, "C〈51〉");
    let input = reading(&a, "1×2048", &[]);
    let ins = [(input.text.as_str(), &input)];
    let reads = [b.clone(), c.clone()];
    let mut texts: Vec<String> = reads.iter().map(|x| x.text.clone()).collect();
    let changed = agree_rows("Gemm", &mut texts, &reads, &ins, &[], &a, &params());
    assert_eq!(changed, vec![1]);
    assert_eq!(texts, vec!["B〈512×2048〉", "C〈512〉"]);
    // Without the label, no dim of B equals C's misreading: B's orientation is unknown, it joins no tie, and C
    // alone has no one to agree with.
    let mut texts = vec![b.text.clone(), c.text.clone()];
    assert!(agree_rows("Gemm", &mut texts, &reads, &[], &[], &a, &params()).is_empty());
    assert_eq!(texts[1], "C〈51〉");
}
