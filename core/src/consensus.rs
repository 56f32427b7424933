//! Label consensus: tensor labels that must show the same text are read together.
//!
//! Netron draws a label on every edge, so one tensor can be shown by several labels, and some operators keep
//! their input's shape. Once edges are recovered, two rules find labels that must read the same
//! ([`label_groups`]):
//! - fan-out: every edge leaving a graph input, or a node whose operator has a single output, carries the same
//!   tensor, so its labels show one text (a shape, or a name in Netron's names mode);
//! - shape-preserving operators ([`SHAPE_PRESERVING`]: `Relu`, `BatchNormalization`, …): a node with exactly one
//!   incoming edge shows the same shape on that edge's label and on its outgoing labels. Applied only when
//!   most labels of the image read as shapes (names differ from tensor to tensor).
//!
//! Each group then gets one text ([`agree`]): among the texts read in the group, the one with the highest sum
//! of CTC log-likelihoods over the group's crops ([`crate::read::TextRead::log_likelihood`]). Errors of independent
//! crops rarely agree, so a misread label is outvoted by the evidence of its twins. A label whose own crop makes
//! the chosen text more than [`ConsensusParams::max_loss_nats`] less likely than its own reading keeps its
//! reading: a wrongly attached label or a misclassified operator then does not overwrite a clear text.
//!
//! Weight rows ([`agree_rows`]): the rows of one card of an operator whose parameters all have one shape
//! ([`EQUAL_ROW_SHAPES`]: `BatchNormalization`'s `scale〈64〉`, `B〈64〉`, `input_mean〈64〉`, `input_var〈64〉`, …)
//! are read together the same way, and so are a `Conv`'s `W〈64×3×7×7〉` and `B〈64〉` (the output channels); each
//! row keeps its own name.

use std::collections::HashMap;

use crate::edges::RecoveredEdge;
use crate::read::TextRead;
use crate::vocab::Alphabet;

/// Operators whose (first) output has the shape of their one data input; their other inputs are initializers,
/// drawn as weight rows, not edges.
pub const SHAPE_PRESERVING: &[&str] = &[
    "Sqrt",
    "Exp",
    "Log",
    "Neg",
    "Abs",
    "Erf",
    "Clip",
    "Relu",
    "LeakyRelu",
    "PRelu",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "HardSigmoid",
    "HardSwish",
    "Elu",
    "Gelu",
    "Softplus",
    "BatchNormalization",
    "LayerNormalization",
    "InstanceNormalization",
    "Dropout",
    "Cast",
    "Identity",
    "QuantizeLinear",
    "DequantizeLinear",
];

/// Operators with several outputs, whose outgoing edges may carry different tensors.
pub const MULTI_OUTPUT: &[&str] = &["LSTM", "GRU", "Split", "TopK"];

/// Tuning of the consensus.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConsensusParams {
    /// Join the labels of the edges leaving one input or single-output node.
    pub fan_out: bool,
    /// Join the labels around a shape-preserving node (shape mode only).
    pub shape_preserving: bool,
    /// Read together the weight rows of each card whose operator ties their shapes ([`agree_rows`]). Default
    /// true: on the development split (`v1-s1` held-out scenes 1009–2329, 266 images, session-7 models)
    /// weight-row recall / precision rose from 0.515 / 0.721 to 0.526 / 0.737 on photos and from 0.676 / 0.810
    /// to 0.685 / 0.821 on screenshots, no other figure moving (`models/METRICS.md`, session 14).
    pub weight_rows: bool,
    /// A label takes the group's text only if its own crop finds that text at most this many nats (natural
    /// log-likelihood) less likely than its own reading. `f64::INFINITY`: always. Default 10: on the
    /// development split (266 images, session-7 models) shape exact match (photos / screenshots) was 0.759 /
    /// 0.849 without the consensus, 0.764 / 0.854 with fan-out alone, and with both rules 0.785 / 0.866 at 4
    /// nats, 0.791 / 0.871 at 10 and 20, 0.792 / 0.870 without a limit.
    pub max_loss_nats: f64,
}

impl Default for ConsensusParams {
    fn default() -> Self {
        ConsensusParams {
            fan_out: true,
            shape_preserving: true,
            weight_rows: true,
            max_loss_nats: 10.0,
        }
    }
}

/// Where a graph element sits among the detections: edge ids are `n<k>` (node `k`), `i<k>` (input `k`),
/// `o<k>` (output `k`), labels `t<k>` ([`crate::assemble::Detections`]).
fn id_index(id: &str, prefix: char) -> Option<usize> {
    id.strip_prefix(prefix)?.parse().ok()
}

/// Groups of label indices (`t<k>` → `k`, each group sorted, at least two labels, groups disjoint, ordered by
/// their first label) that must show the same text, from the recovered `edges` and the operator of each node
/// (`ops[k]` for `n<k>`, `None` when unknown). `shape_mode`: the image shows shapes, not names, so the
/// shape-preserving rule applies. Labels out of `0..labels` are ignored.
pub fn label_groups(
    edges: &[RecoveredEdge],
    ops: &[Option<&str>],
    labels: usize,
    shape_mode: bool,
    params: &ConsensusParams,
) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..labels).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    fn join(parent: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (root(parent, a), root(parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let label_of = |e: &RecoveredEdge| -> Option<usize> {
        id_index(e.label.as_deref()?, 't').filter(|&k| k < labels)
    };
    let op_of = |id: &str| -> Option<&str> { ops.get(id_index(id, 'n')?).copied().flatten() };

    let mut out_labels: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut in_edges: HashMap<&str, Vec<Option<usize>>> = HashMap::new();
    for e in edges {
        if let Some(k) = label_of(e) {
            out_labels.entry(e.from.as_str()).or_default().push(k);
        }
        in_edges.entry(e.to.as_str()).or_default().push(label_of(e));
    }
    if params.fan_out {
        for (from, ks) in &out_labels {
            let single = if from.starts_with('i') {
                true
            } else {
                op_of(from).is_some_and(|op| !MULTI_OUTPUT.contains(&op))
            };
            if single {
                for w in ks.windows(2) {
                    join(&mut parent, w[0], w[1]);
                }
            }
        }
    }
    if params.shape_preserving && shape_mode {
        for (to, incoming) in &in_edges {
            let keeps_shape = op_of(to).is_some_and(|op| SHAPE_PRESERVING.contains(&op));
            let (Some(outs), [Some(k_in)]) = (out_labels.get(to), incoming.as_slice()) else {
                continue;
            };
            if keeps_shape {
                for &k_out in outs {
                    join(&mut parent, *k_in, k_out);
                }
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for k in 0..labels {
        let r = root(&mut parent, k);
        groups.entry(r).or_default().push(k);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() >= 2).collect();
    groups.sort_by_key(|g| g[0]);
    groups
}

/// Gives each group of labels one text (see the module doc). `texts[k]` is label `k`'s current text and
/// `reads[k]` its OCR reading (with the crop's log-probabilities); labels without a reading (`None`, or no
/// log-probabilities) neither vote nor change. Candidates are the group's distinct texts that the alphabet can
/// spell. Returns the indices of the labels whose text changed.
pub fn agree(
    texts: &mut [String],
    reads: &[Option<&TextRead>],
    groups: &[Vec<usize>],
    alphabet: &Alphabet,
    params: &ConsensusParams,
) -> Vec<usize> {
    let mut changed = Vec::new();
    for group in groups {
        let voters: Vec<(usize, &TextRead)> = group
            .iter()
            .filter(|&&k| k < texts.len())
            .filter_map(|&k| reads.get(k).copied().flatten().map(|r| (k, r)))
            .filter(|(_, r)| !r.log_probs.is_empty())
            .collect();
        let values: Vec<String> = voters.iter().map(|&(k, _)| texts[k].clone()).collect();
        let voter_reads: Vec<&TextRead> = voters.iter().map(|&(_, r)| r).collect();
        let render = |_: usize, v: &str| v.to_owned();
        for (j, value) in agree_values(&values, &voter_reads, render, alphabet, params) {
            texts[voters[j].0] = value;
            changed.push(voters[j].0);
        }
    }
    changed.sort_unstable();
    changed
}

/// Operators whose weight rows all show one shape, by the ONNX specification: `BatchNormalization`'s scale, B,
/// input_mean and input_var are `[C]`, `InstanceNormalization`'s scale and B `[C]`, `LayerNormalization`'s
/// Scale and B one shape, and `Slice`'s starts, ends, axes and steps one length.
pub const EQUAL_ROW_SHAPES: &[&str] = &[
    "BatchNormalization",
    "InstanceNormalization",
    "LayerNormalization",
    "Slice",
];

/// Operators whose data tensors carry the weight rows' value as their channel dim (dim 1): `true` when the
/// input's does too. `BatchNormalization` and `InstanceNormalization` keep `N×C×…` from input to output, with
/// `C` their rows' dims; a `Conv`'s output is `N×M×…`, with `M` its `B` row and the first dim of its `W` row.
pub const CHANNEL_ROWS: &[(&str, bool)] = &[
    ("BatchNormalization", true),
    ("InstanceNormalization", true),
    ("Conv", false),
];

/// The labels on the edges into and out of node `n<node>` (`t<k>` → `k`), in edge order.
pub fn node_labels(edges: &[RecoveredEdge], node: usize) -> (Vec<usize>, Vec<usize>) {
    let label = |e: &RecoveredEdge| e.label.as_deref().and_then(|l| id_index(l, 't'));
    let is_node = |id: &str| id_index(id, 'n') == Some(node);
    let incoming = edges.iter().filter(|e| is_node(&e.to)).filter_map(label);
    let outgoing = edges.iter().filter(|e| is_node(&e.from)).filter_map(label);
    (incoming.collect(), outgoing.collect())
}

/// The weight rows of one card read together, where the ONNX specification ties their shapes: for an
/// [`EQUAL_ROW_SHAPES`] operator every row that reads as `name〈dims〉` votes with its dims; for a `Conv`, the
/// `W〈M×C×kH×kW〉` row votes with its first dim and the `B〈M〉` row with its dims (both are the output
/// channels `M`, grouped or not). For a [`CHANNEL_ROWS`] operator the tensor labels of its edges also vote
/// with their dim 1 (`incoming` and `outgoing`: each label's text and reading; the incoming ones only where the
/// input shares the channels), but never change. `texts[i]` is row `i`'s text and `reads[i]` its OCR reading.
/// The candidates are the values read, each scored on a voter as its text with the candidate in place of its
/// own value, and the choice and the [`ConsensusParams::max_loss_nats`] rule are those of [`agree`]; a row
/// keeps its name and the rest of its dims. Other operators: nothing changes. Returns the indices of the rows
/// whose text changed.
pub fn agree_rows(
    op: &str,
    texts: &mut [String],
    reads: &[TextRead],
    incoming: &[(&str, &TextRead)],
    outgoing: &[(&str, &TextRead)],
    alphabet: &Alphabet,
    params: &ConsensusParams,
) -> Vec<usize> {
    let equal = EQUAL_ROW_SHAPES.contains(&op);
    let channels = CHANNEL_ROWS.iter().find(|c| c.0 == op);
    if !equal && channels.is_none() {
        return Vec::new();
    }
    // (text before the value, value, text after it, reading); the rows' voters first.
    let mut voters: Vec<(String, String, String, &TextRead)> = Vec::new();
    let mut rows: Vec<usize> = Vec::new();
    for (i, (text, read)) in texts.iter().zip(reads).enumerate() {
        let Some((name, dims)) = text.split_once('〈') else {
            continue;
        };
        if read.log_probs.is_empty() {
            continue;
        }
        let dims = dims.strip_suffix('〉').unwrap_or(dims);
        let before = format!("{name}〈");
        if equal || (name.trim() == "B" && !dims.contains('×')) {
            voters.push((before, dims.to_owned(), "〉".to_owned(), read));
            rows.push(i);
        } else if name.trim() == "W" {
            if let Some((first, rest)) = dims.split_once('×') {
                voters.push((before, first.to_owned(), format!("×{rest}〉"), read));
                rows.push(i);
            }
        }
    }
    if let Some(&(_, with_inputs)) = channels {
        let inputs = incoming.iter().filter(|_| with_inputs);
        for &(text, read) in inputs.chain(outgoing) {
            let mut dims = text.splitn(3, '×');
            let (Some(first), Some(channel)) = (dims.next(), dims.next()) else {
                continue;
            };
            if read.log_probs.is_empty() || crate::graph::parse_shape_text(text).is_none() {
                continue;
            }
            let after = dims.next().map_or(String::new(), |rest| format!("×{rest}"));
            voters.push((format!("{first}×"), channel.to_owned(), after, read));
        }
    }
    let values: Vec<String> = voters.iter().map(|v| v.1.clone()).collect();
    let voter_reads: Vec<&TextRead> = voters.iter().map(|v| v.3).collect();
    let render = |j: usize, v: &str| format!("{}{v}{}", voters[j].0, voters[j].2);
    let agreed = agree_values(&values, &voter_reads, render, alphabet, params);
    let mut changed = Vec::with_capacity(agreed.len());
    for (j, value) in agreed {
        if let Some(&i) = rows.get(j) {
            texts[i] = render(j, &value);
            changed.push(i);
        }
    }
    changed.sort_unstable();
    changed
}

/// The choice shared by [`agree`] and [`agree_rows`]: voter `j` holds value `values[j]` and reading `reads[j]`,
/// and `render(j, v)` is the text voter `j` would show with value `v`. The candidates are the distinct values
/// whose texts the alphabet spells for every voter; the value with the highest sum over the voters of
/// [`TextRead::log_likelihood`] of its text wins (the first on ties). Returns `(j, winner)` for each voter
/// whose value differs and whose own reading finds the winner's text at most
/// [`ConsensusParams::max_loss_nats`] less likely than its own value's.
fn agree_values(
    values: &[String],
    reads: &[&TextRead],
    render: impl Fn(usize, &str) -> String,
    alphabet: &Alphabet,
    params: &ConsensusParams,
) -> Vec<(usize, String)> {
    let classes = alphabet.classes();
    let mut candidates: Vec<&String> = Vec::new();
    for v in values {
        if !candidates.contains(&v) {
            candidates.push(v);
        }
    }
    if candidates.len() < 2 {
        return Vec::new();
    }
    // scores[c][j]: log-likelihood of candidate c's text under voter j's crops.
    let scores: Vec<Vec<f64>> = candidates
        .iter()
        .map(|c| {
            (0..values.len())
                .map(|j| match alphabet.encode(&render(j, c)) {
                    Some(target) => reads[j].log_likelihood(classes, &target),
                    None => f64::NEG_INFINITY,
                })
                .collect()
        })
        .collect();
    let total = |c: usize| scores[c].iter().sum::<f64>();
    let best = (0..candidates.len())
        .fold(None::<(usize, f64)>, |acc, c| {
            let t = total(c);
            match acc {
                Some((_, bt)) if bt >= t => acc,
                _ if t.is_finite() => Some((c, t)),
                _ => acc,
            }
        })
        .map(|(c, _)| c);
    let Some(best) = best else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (j, v) in values.iter().enumerate() {
        if v == candidates[best] {
            continue;
        }
        let own = candidates
            .iter()
            .position(|c| *c == v)
            .map_or(f64::NEG_INFINITY, |c| scores[c][j]);
        if own - scores[best][j] <= params.max_loss_nats {
            out.push((j, candidates[best].clone()));
        }
    }
    out
}
