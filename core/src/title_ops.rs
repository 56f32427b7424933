//! Operator evidence from a node title read by the OCR, joined with the classifier's.
//!
//! In Netron's "names" mode a card's header shows the node's name instead of its operator: `/layer1/conv/Conv`,
//! `Conv_437`, `intermediate.fc1.add`, `StatefulPartitionedCall/model/conv1/Conv2D`, and names longer than
//! [`MAX_SHOWN`] characters are cut to their first and last [`KEPT`] characters around `…`
//! (`StatefulPa…nv1/Conv2D`). The classifier, trained only on titles that show operators, is often confidently
//! wrong on such names, and a greedy OCR reading of a blurred photo is often one character off (`Sigmod_376`,
//! `Conct_403`). Neither alone is reliable; together they are:
//!
//! 1. the read text is split into its frame ([`TitleFrame`]): what is kept of a truncated name (`head`), the
//!    scope up to the last `/` or `.` (`prefix`), the part that names the operator (`core`) and a trailing
//!    counter (`suffix`: `_437`, `1_1`, `:0`);
//! 2. for an operator `o`, each name an exporter gives it ([`display_names`]: `Conv`, `conv`, `Conv2D`) is put in
//!    place of the core ([`TitleFrame::hypothesis`], truncated as Netron would); the operator's name alone is
//!    one more title (operator mode, whatever frame a misread `/` or `_` suggested). The OCR's CTC
//!    log-likelihood of a title on the crop ([`crate::read::TextRead::log_likelihood`]), less
//!    [`TitleParams::frame_char_nats`] per character of frame, is `L(o)`, the best over its titles;
//! 3. when the best title log-likelihood (frame cost not counted) is within [`TitleParams::max_deficit_nats`]
//!    of the likelihood of the OCR's own reading (the title names an operator at all: `node_6_1` does not,
//!    [`TitleJoin::Name`]), the operator maximises `log p_classifier(o) + ocr_weight · L(o)`, and its
//!    probability is that score's softmax over the candidates.
//!
//! Only candidates are scored: the classifier's [`TitleParams::classifier_candidates`] most probable operators
//! and the operators with a title hypothesis within a small edit distance of the reading.
//!
//! A title that names no operator (`n16`, `node_6_1`) leaves the card's header colour as the only evidence, and
//! Netron colours by category (`layer` blue for `Conv`, `Gemm`, `GRU`, `LSTM`), so the classifier's choice
//! within a category is a guess on such a crop, and often a confident one: it was trained on titles that show
//! operators. [`header_only_prediction`] keeps the classifier's probability of each category and shares it
//! among the category's operators as the training graphs do ([`Vocab::within_category`]).

use crate::classify::{softmax, OpPrediction};
use crate::read::TextRead;
use crate::vocab::{Alphabet, Vocab};

/// Netron shows node names of at most this many characters whole.
pub const MAX_SHOWN: usize = 21;
/// A longer name is shown as its first and last `KEPT` characters joined by `…`.
pub const KEPT: usize = 10;
const ELLIPSIS: char = '…';

/// Exporter spellings of operators in node names, besides the operator itself and its lowercase form
/// (tf2onnx keeps TensorFlow's op names, `Conv2D`, `BiasAdd`, `FusedBatchNormV3`; PyTorch module names
/// abbreviate, `bn`, `fc`, `cat`). One spelling may stand for several operators (`MatMul`, `Mean`).
pub const ALIASES: &[(&str, &str)] = &[
    ("Conv2D", "Conv"),
    ("BiasAdd", "Add"),
    ("FusedBatchNormV3", "BatchNormalization"),
    ("AvgPool", "AveragePool"),
    ("truediv", "Div"),
    ("Mean", "GlobalAveragePool"),
    ("Mean", "ReduceMean"),
    ("MatMul", "Gemm"),
    ("bn", "BatchNormalization"),
    ("fc", "Gemm"),
    ("pool", "MaxPool"),
    ("avgpool", "AveragePool"),
    ("gap", "GlobalAveragePool"),
    ("ln", "LayerNormalization"),
    ("cat", "Concat"),
];

/// Tuning of [`join_title_reading`]. The defaults were set on the development split (`v1-s1` held-out scenes
/// 1009–2329, 266 images; `models/METRICS.md`, session 10), where op accuracy moved by at most 2 of ~1,570
/// nodes per image kind over `ocr_weight` 0.5–2, `max_deficit_nats` 5–20 and `frame_char_nats` 0–4.3.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TitleParams {
    /// Weight of the OCR's log-likelihood against the classifier's log-probability. Default 1.
    pub ocr_weight: f64,
    /// The reading is taken to name an operator when the best operator title is at most this many nats less
    /// likely than the OCR's own reading. Default 10.
    pub max_deficit_nats: f64,
    /// The classifier's most probable operators always scored. Default 5.
    pub classifier_candidates: usize,
    /// Prior cost, in nats, of each character a names-mode title adds around the operator's name (scope,
    /// counter, the kept head of a cut name), so that a garbled reading with a stray `/` or `.` does not pass
    /// for a scoped name. Default 0 (none): 4.3 (≈ ln of the alphabet size) cost the development split one
    /// node per image kind.
    pub frame_char_nats: f64,
}

impl Default for TitleParams {
    fn default() -> Self {
        TitleParams {
            ocr_weight: 1.0,
            max_deficit_nats: 10.0,
            classifier_candidates: 5,
            frame_char_nats: 0.0,
        }
    }
}

/// A read node title taken apart (see the module doc). `head` is `Some` when the text holds `…`; then
/// `prefix`, `core` and `suffix` are parts of what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleFrame<'a> {
    pub head: Option<&'a str>,
    pub prefix: &'a str,
    pub core: &'a str,
    pub suffix: &'a str,
}

impl<'a> TitleFrame<'a> {
    /// Splits `text` (trimmed). The suffix is a trailing `:N`, after a trailing run of digits and `_`; digits
    /// right after an uppercase letter stay in the core (`FusedBatchNormV3`, `Conv2D`).
    pub fn parse(text: &'a str) -> TitleFrame<'a> {
        let text = text.trim();
        let (head, tail) = match text.split_once(ELLIPSIS) {
            Some((h, t)) => (Some(h), t),
            None => (None, text),
        };
        let cut = tail.rfind(['/', '.']).map_or(0, |i| i + 1);
        let (prefix, rest) = tail.split_at(cut);
        let mut end = rest.len();
        if let Some(colon) = rest.rfind(':') {
            if colon + 1 < rest.len() && rest[colon + 1..].bytes().all(|b| b.is_ascii_digit()) {
                end = colon;
            }
        }
        let body = &rest[..end];
        let mut start = body.len();
        let bytes = body.as_bytes();
        while start > 0 && (bytes[start - 1].is_ascii_digit() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        // Digits glued to an uppercase letter belong to the name (`V3`, `2D` is already letters).
        while start < body.len()
            && bytes[start].is_ascii_digit()
            && start > 0
            && bytes[start - 1].is_ascii_uppercase()
        {
            start += 1;
        }
        TitleFrame {
            head,
            prefix,
            core: &body[..start],
            suffix: &rest[start..],
        }
    }

    /// The title Netron would show with `name` in place of the core: `prefix + name + suffix`, shortened as
    /// Netron shortens names when it is longer than [`MAX_SHOWN`] characters and the reading was cut (and only
    /// then: the head is kept as read when a scope prefix shows that the name itself is not at the start).
    pub fn hypothesis(&self, name: &str) -> String {
        let body = format!("{}{name}{}", self.prefix, self.suffix);
        match self.head {
            None => body,
            Some(head) if !self.prefix.is_empty() => {
                format!("{head}{ELLIPSIS}{}", last_chars(&body, KEPT))
            }
            Some(_) => shorten(&body),
        }
    }
}

/// Netron's display of a name: whole up to [`MAX_SHOWN`] characters, else first and last [`KEPT`] around `…`.
pub fn shorten(name: &str) -> String {
    let n = name.chars().count();
    if n <= MAX_SHOWN {
        return name.to_string();
    }
    let first: String = name.chars().take(KEPT).collect();
    format!("{first}{ELLIPSIS}{}", last_chars(name, KEPT))
}

fn last_chars(s: &str, k: usize) -> &str {
    let n = s.chars().count();
    match s.char_indices().nth(n.saturating_sub(k)) {
        Some((i, _)) if n > k => &s[i..],
        _ => s,
    }
}

/// The spellings of `op` in node names: the operator, its lowercase form, and its [`ALIASES`].
pub fn display_names(op: &str) -> Vec<String> {
    let mut names = vec![op.to_string()];
    let lower = op.to_ascii_lowercase();
    if lower != op {
        names.push(lower);
    }
    for (alias, target) in ALIASES {
        if *target == op && !names.iter().any(|n| n == alias) {
            names.push((*alias).to_string());
        }
    }
    names
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// What the reading of a node's title says about its operator ([`join_title_reading`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TitleJoin {
    /// The title names an operator: the classifier's prediction joined with the reading.
    Operator(OpPrediction),
    /// The reading names no operator: a node name (Netron's "names" mode) or a misread.
    Name,
    /// Nothing to join: the reading has no likelihood on its own crop, or `pred.probs` does not cover the
    /// vocabulary.
    Unusable,
}

/// Joins the classifier's prediction of a node with the OCR's reading of its title (module doc).
/// `min_confidence` is the classifier's: under it the returned `op` is `None`, as in [`OpPrediction`].
pub fn join_title_reading(
    pred: &OpPrediction,
    read: &TextRead,
    alphabet: &Alphabet,
    vocab: &Vocab,
    min_confidence: f32,
    params: &TitleParams,
) -> TitleJoin {
    if pred.probs.len() != vocab.len() {
        return TitleJoin::Unusable;
    }
    let classes = alphabet.classes();
    let ll = |text: &str| {
        alphabet
            .encode(text)
            .map_or(f64::NEG_INFINITY, |t| read.log_likelihood(classes, &t))
    };
    let own = ll(&read.text);
    if !own.is_finite() {
        return TitleJoin::Unusable;
    }
    let frame = TitleFrame::parse(&read.text);
    let mut by_prob: Vec<usize> = (0..vocab.len()).collect();
    by_prob.sort_by(|&a, &b| pred.probs[b].total_cmp(&pred.probs[a]).then(a.cmp(&b)));
    // A spelling is near when the title it makes is within a third of its length (at least 2) of the reading.
    let near =
        |name: &str, hyp: &str| edit_distance(hyp, &read.text) <= 2.max(name.chars().count() / 3);
    // Per candidate: (operator, best log-likelihood of its titles, best log-likelihood plus title prior).
    let mut scored: Vec<(usize, f64, f64)> = Vec::new();
    for (rank, &o) in by_prob.iter().enumerate() {
        let op = vocab.ops[o].as_str();
        let names = display_names(op);
        let mut hyps: Vec<(String, f64)> = names
            .iter()
            .map(|n| {
                let h = frame.hypothesis(n);
                let framing = h.chars().count().saturating_sub(n.chars().count());
                let prior = -params.frame_char_nats * framing as f64;
                (h, prior)
            })
            .collect();
        // The operator mode's title, whatever frame a misread `/` or `_` suggested (the first hypothesis
        // already is when the reading has no frame).
        if hyps[0].0 != op {
            hyps.push((op.to_string(), 0.0));
        }
        let is_near = near(op, op) || names.iter().zip(&hyps).any(|(n, (h, _))| near(n, h));
        if rank >= params.classifier_candidates && !is_near {
            continue;
        }
        let (mut raw, mut with_prior) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for (h, prior) in &hyps {
            let l = ll(h);
            raw = raw.max(l);
            with_prior = with_prior.max(l + prior);
        }
        if with_prior.is_finite() {
            scored.push((o, raw, with_prior));
        }
    }
    let best_raw = scored.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
    let names_an_operator = best_raw >= own - params.max_deficit_nats;
    if !names_an_operator {
        return TitleJoin::Name;
    }
    let best = scored.iter().map(|s| s.2).fold(f64::NEG_INFINITY, f64::max);
    // Operators that were not scored get no probability.
    let mut scores = vec![f32::NEG_INFINITY; vocab.len()];
    for &(o, _, l) in &scored {
        let p = f64::from(pred.probs[o]).max(1e-30);
        scores[o] = (p.ln() + params.ocr_weight * (l - best)) as f32;
    }
    TitleJoin::Operator(OpPrediction::from_probs(
        softmax(&scores),
        vocab,
        min_confidence,
    ))
}

/// The prediction of a card whose header shows no operator (module doc): each operator gets the classifier's
/// probability of its category times its share of that category in the training graphs, so the most
/// frequent operator of the likeliest category comes first, at a confidence no higher than its share (a
/// `layer` card: `Conv` at most 0.58, `Relu` at most 0.21 of `activation`, marked doubtful under
/// `min_confidence`). `pred` is returned unchanged when its probabilities do not cover `vocab`.
pub fn header_only_prediction(
    pred: &OpPrediction,
    vocab: &Vocab,
    min_confidence: f32,
) -> OpPrediction {
    if pred.probs.len() != vocab.len() {
        return pred.clone();
    }
    let share = vocab.within_category();
    let mass = |c: &str| -> f32 {
        (0..vocab.len())
            .filter(|&j| vocab.categories[j] == c)
            .map(|j| pred.probs[j])
            .sum()
    };
    let probs = (0..vocab.len())
        .map(|i| mass(&vocab.categories[i]) * share[i])
        .collect();
    OpPrediction::from_probs(probs, vocab, min_confidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(text: &str) -> (Option<&str>, &str, &str, &str) {
        let f = TitleFrame::parse(text);
        (f.head, f.prefix, f.core, f.suffix)
    }

    #[test]
    fn titles_split_into_scope_name_and_counter() {
        for (text, want) in [
            ("Conv", (None, "", "Conv", "")),
            ("Conv_437", (None, "", "Conv", "_437")),
            ("/layer1/conv/Conv", (None, "/layer1/conv/", "Conv", "")),
            (
                "intermediate.fc1.add",
                (None, "intermediate.fc1.", "add", ""),
            ),
            ("greater1_1", (None, "", "greater", "1_1")),
            ("model/ArgMax:0", (None, "model/", "ArgMax", ":0")),
            ("FusedBatchNormV3_1", (None, "", "FusedBatchNormV3", "_1")),
            (
                "StatefulPa…nv1/Conv2D",
                (Some("StatefulPa"), "nv1/", "Conv2D", ""),
            ),
            (
                "BatchNorma…zation_419",
                (Some("BatchNorma"), "", "zation", "_419"),
            ),
            ("_12", (None, "", "", "_12")),
            ("", (None, "", "", "")),
            ("…", (Some(""), "", "", "")),
        ] {
            assert_eq!(frame(text), want, "{text}");
        }
    }

    #[test]
    fn hypotheses_are_shortened_like_netron() {
        let f = TitleFrame::parse("BatchNorma…zation_419");
        assert_eq!(f.hypothesis("BatchNormalization"), "BatchNorma…zation_419");
        assert_eq!(f.hypothesis("LayerNormalization"), "LayerNorma…zation_419");
        assert_eq!(f.hypothesis("Conv"), "Conv_419");
        let f = TitleFrame::parse("StatefulPa…/model/Log");
        assert_eq!(f.hypothesis("Sub"), "StatefulPa…/model/Sub");
        assert_eq!(f.hypothesis("LogSoftmax"), "StatefulPa…LogSoftmax");
        let f = TitleFrame::parse("Sigmod_376");
        assert_eq!(f.hypothesis("Sigmoid"), "Sigmoid_376");
        assert_eq!(shorten("abcdefghijklmnopqrstu"), "abcdefghijklmnopqrstu");
        assert_eq!(shorten("abcdefghijklmnopqrstuv"), "abcdefghij…mnopqrstuv");
    }

    /// Log-softmax rows (80 steps) that spell `text`: each character over two steps with probability 0.9,
    /// blanks between, `noise` nats of spread onto every other class.
    fn spelled(text: &str, alphabet: &Alphabet) -> TextRead {
        let classes = alphabet.classes();
        let target = alphabet.encode(text).expect("text in the alphabet");
        let mut steps = Vec::new();
        for &c in &target {
            steps.extend([c, c, 0]);
        }
        steps.resize(80, 0);
        let mut log_probs = Vec::with_capacity(80 * classes);
        for &k in &steps {
            let rest = (0.1f32 / (classes - 1) as f32).ln();
            log_probs.extend((0..classes).map(|j| if j == k { 0.9f32.ln() } else { rest }));
        }
        TextRead {
            text: text.to_string(),
            confidence: 0.9f32.powi(80),
            log_probs,
            reread_log_probs: Vec::new(),
        }
    }

    fn classifier_says(vocab: &Vocab, op: &str, p: f32) -> OpPrediction {
        let index = vocab.ops.iter().position(|o| o == op).unwrap();
        let rest = (1.0 - p) / (vocab.len() - 1) as f32;
        let probs: Vec<f32> = (0..vocab.len())
            .map(|i| if i == index { p } else { rest })
            .collect();
        OpPrediction {
            op: Some(op.to_string()),
            index,
            confidence: p,
            top: vec![(op.to_string(), p)],
            probs,
        }
    }

    #[test]
    fn a_title_naming_an_operator_outweighs_a_confident_classifier() {
        let (vocab, alphabet) = (Vocab::bundled().unwrap(), Alphabet::bundled().unwrap());
        let p = TitleParams::default();
        let pred = classifier_says(&vocab, "InstanceNormalization", 0.96);
        for (read, op) in [
            ("intermediate.fc1.add", "Add"),
            ("Sigmod_376", "Sigmoid"),
            ("StatefulPa…nv1/Conv2D", "Conv"),
            ("BatchNorma…zation_419", "BatchNormalization"),
        ] {
            let TitleJoin::Operator(joined) =
                join_title_reading(&pred, &spelled(read, &alphabet), &alphabet, &vocab, 0.5, &p)
            else {
                panic!("{read}: no evidence");
            };
            assert_eq!(joined.op.as_deref(), Some(op), "{read}");
            assert!((joined.probs.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
    }

    #[test]
    fn a_title_naming_no_operator_leaves_the_classifier_alone() {
        let (vocab, alphabet) = (Vocab::bundled().unwrap(), Alphabet::bundled().unwrap());
        let p = TitleParams::default();
        let pred = classifier_says(&vocab, "Relu", 0.7);
        for read in ["node_6_1", "zzzzzzzzzzzz", "embeddings"] {
            let joined =
                join_title_reading(&pred, &spelled(read, &alphabet), &alphabet, &vocab, 0.5, &p);
            assert_eq!(joined, TitleJoin::Name, "{read}");
        }
        // The classifier still decides between spellings the reading cannot tell apart.
        let pred = classifier_says(&vocab, "ReduceMean", 0.6);
        let joined = join_title_reading(
            &pred,
            &spelled("model/Mean", &alphabet),
            &alphabet,
            &vocab,
            0.5,
            &p,
        );
        let TitleJoin::Operator(joined) = joined else {
            panic!("model/Mean: {joined:?}");
        };
        assert_eq!(joined.op.as_deref(), Some("ReduceMean"));
        let mut short = classifier_says(&vocab, "Relu", 0.7);
        short.probs.pop();
        assert_eq!(
            join_title_reading(
                &short,
                &spelled("Relu", &alphabet),
                &alphabet,
                &vocab,
                0.5,
                &p
            ),
            TitleJoin::Unusable
        );
    }

    #[test]
    fn a_header_alone_gives_its_category_to_the_category_s_most_frequent_operator() {
        let vocab = Vocab::bundled().unwrap();
        // A blue (`layer`) card the classifier takes for a GRU: the layer mass goes to Conv, the most frequent
        // layer operator of the training graphs, at its share of the category.
        let pred = classifier_says(&vocab, "GRU", 0.97);
        let share = vocab.within_category();
        let conv = vocab.index_of("Conv").unwrap();
        let header = header_only_prediction(&pred, &vocab, 0.5);
        assert_eq!(header.op.as_deref(), Some("Conv"));
        let layer_mass: f32 = (0..vocab.len())
            .filter(|&i| vocab.categories[i] == "layer")
            .map(|i| pred.probs[i])
            .sum();
        assert!((header.confidence - layer_mass * share[conv]).abs() < 1e-6);
        assert!(header.confidence < 0.6);
        assert!((header.probs.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        // An activation's share is small: Relu comes first but is marked doubtful.
        let header = header_only_prediction(&classifier_says(&vocab, "Elu", 0.9), &vocab, 0.5);
        assert_eq!(header.top[0].0, "Relu");
        assert_eq!(header.op, None);
        // Probabilities that do not cover the vocabulary are left alone.
        let mut short = classifier_says(&vocab, "Elu", 0.9);
        short.probs.pop();
        assert_eq!(header_only_prediction(&short, &vocab, 0.5), short);
    }

    #[test]
    fn names_include_exporter_spellings() {
        assert_eq!(display_names("Conv"), ["Conv", "conv", "Conv2D"]);
        assert_eq!(display_names("Gemm"), ["Gemm", "gemm", "MatMul", "fc"]);
        assert_eq!(edit_distance("Sigmod", "Sigmoid"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
