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
        let values: Vec<Option<String>> = voters
            .iter()
            .map(|&(k, _)| Some(texts[k].clone()))
            .collect();
        let voter_reads: Vec<&TextRead> = voters.iter().map(|&(_, r)| r).collect();
        let render = |_: usize, v: &str| Some(v.to_owned());
        let own = |j: usize| texts[voters[j].0].clone();
        for (j, value) in agree_values(&values, &voter_reads, render, own, alphabet, params) {
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

/// The labels on the edges into and out of node `n<node>` (`t<k>` → `k`), in edge order.
pub fn node_labels(edges: &[RecoveredEdge], node: usize) -> (Vec<usize>, Vec<usize>) {
    let label = |e: &RecoveredEdge| e.label.as_deref().and_then(|l| id_index(l, 't'));
    let is_node = |id: &str| id_index(id, 'n') == Some(node);
    let incoming = edges.iter().filter(|e| is_node(&e.to)).filter_map(label);
    let outgoing = edges.iter().filter(|e| is_node(&e.from)).filter_map(label);
    (incoming.collect(), outgoing.collect())
}

/// Recurrent operators and their gate count `G`: `W〈D×G·H×I〉`, `R〈D×G·H×H〉`, `B〈D×2G·H〉`, `P〈D×3H〉` (D
/// directions, H hidden units); outputs `Y〈T×D×N×H〉`, `Y_h`, `Y_c〈D×N×H〉`.
pub const RECURRENT_GATES: &[(&str, u64)] = &[("LSTM", 4), ("GRU", 3), ("RNN", 1)];

/// Where a tied value shows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    /// Weight rows of this name (`None`: every row with dims).
    Row(Option<&'static str>),
    /// Shape labels of the card's incoming or outgoing edges: they vote, never change.
    Incoming,
    Outgoing,
}

/// Which dims of a text show the value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dims {
    /// All of them, as one text (`64`, `4×768`).
    All,
    At(usize),
    Last,
}

/// One place of a tie: texts from `source` with `min_rank..=max_rank` dims show `factor` × the tied value at
/// `dims`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slot {
    source: Source,
    min_rank: usize,
    max_rank: usize,
    dims: Dims,
    factor: u64,
}

const fn slot(source: Source, ranks: (usize, usize), dims: Dims, factor: u64) -> Slot {
    Slot {
        source,
        min_rank: ranks.0,
        max_rank: ranks.1,
        dims,
        factor,
    }
}

const ANY_RANK: (usize, usize) = (1, usize::MAX);
const AT_LEAST_2: (usize, usize) = (2, usize::MAX);

/// The dims text of a weight row `name〈dims〉` (closing bracket optional), with its name.
fn row_dims(text: &str) -> Option<(&str, &str)> {
    let (name, dims) = text.split_once('〈')?;
    Some((name, dims.strip_suffix('〉').unwrap_or(dims)))
}

/// The ties of an operator's card: each a list of slots that show one value. `rows` are the card's row texts
/// (a `Gemm`'s `B〈K×N〉` or `B〈N×K〉` is told apart by the dims it shares with `C〈N〉` and the labels).
fn ties(
    op: &str,
    rows: &[String],
    incoming: &[(&str, &TextRead)],
    outgoing: &[(&str, &TextRead)],
) -> Vec<Vec<Slot>> {
    use Dims::{All, At, Last};
    use Source::{Incoming, Outgoing, Row};
    let mut out = Vec::new();
    if EQUAL_ROW_SHAPES.contains(&op) {
        let mut tie = vec![slot(Row(None), ANY_RANK, All, 1)];
        // These keep `N×C×…` from input to output, `C` their rows' dims.
        if matches!(op, "BatchNormalization" | "InstanceNormalization") {
            tie.push(slot(Incoming, AT_LEAST_2, At(1), 1));
            tie.push(slot(Outgoing, AT_LEAST_2, At(1), 1));
        }
        out.push(tie);
    } else if op == "Conv" {
        out.push(vec![
            slot(Row(Some("W")), AT_LEAST_2, At(0), 1),
            slot(Row(Some("B")), (1, 1), All, 1),
            slot(Outgoing, AT_LEAST_2, At(1), 1),
        ]);
    } else if let Some(&(_, g)) = RECURRENT_GATES.iter().find(|r| r.0 == op) {
        out.push(vec![
            slot(Row(Some("W")), (3, 3), At(0), 1),
            slot(Row(Some("R")), (3, 3), At(0), 1),
            slot(Row(Some("B")), (2, 2), At(0), 1),
            slot(Row(Some("P")), (2, 2), At(0), 1),
            slot(Outgoing, (4, 4), At(1), 1),
            slot(Outgoing, (3, 3), At(0), 1),
        ]);
        out.push(vec![
            slot(Row(Some("W")), (3, 3), At(1), g),
            slot(Row(Some("R")), (3, 3), At(1), g),
            slot(Row(Some("R")), (3, 3), At(2), 1),
            slot(Row(Some("B")), (2, 2), At(1), 2 * g),
            slot(Row(Some("P")), (2, 2), At(1), 3),
            slot(Outgoing, (4, 4), At(3), 1),
            slot(Outgoing, (3, 3), At(2), 1),
        ]);
    } else if op == "MatMul" {
        out.push(vec![
            slot(Row(Some("B")), (2, 2), At(1), 1),
            slot(Outgoing, ANY_RANK, Last, 1),
        ]);
        out.push(vec![
            slot(Row(Some("B")), (2, 2), At(0), 1),
            slot(Incoming, ANY_RANK, Last, 1),
        ]);
    } else if op == "ConvTranspose" {
        out.push(vec![
            slot(Row(Some("W")), AT_LEAST_2, At(1), 1),
            slot(Row(Some("B")), (1, 1), All, 1),
            slot(Outgoing, AT_LEAST_2, At(1), 1),
        ]);
        out.push(vec![
            slot(Row(Some("W")), AT_LEAST_2, At(0), 1),
            slot(Incoming, AT_LEAST_2, At(1), 1),
        ]);
    } else if op == "Gemm" {
        let mut n = vec![
            slot(Row(Some("C")), (1, 1), All, 1),
            slot(Outgoing, (2, 2), At(1), 1),
        ];
        let mut k = vec![slot(Incoming, (2, 2), At(1), 1)];
        if let Some(trans_b) = gemm_trans_b(rows, incoming, outgoing) {
            let (bn, bk) = if trans_b { (0, 1) } else { (1, 0) };
            n.push(slot(Row(Some("B")), (2, 2), At(bn), 1));
            k.push(slot(Row(Some("B")), (2, 2), At(bk), 1));
        }
        out.push(n);
        out.push(k);
    }
    out
}

/// Whether a `Gemm` card's `B` row reads as `N×K` (`transB`, `Some(true)`) or `K×N`: the orientation in which
/// more of its dims equal `C〈N〉`'s and the labels' (`N` is the output's dim 1, `K` the input's); `None` on a
/// tie or without a two-dim `B`.
fn gemm_trans_b(
    rows: &[String],
    incoming: &[(&str, &TextRead)],
    outgoing: &[(&str, &TextRead)],
) -> Option<bool> {
    let b = rows
        .iter()
        .filter_map(|t| row_dims(t))
        .find(|(name, _)| name.trim() == "B")?
        .1;
    let (b0, b1) = b.split_once('×').filter(|(_, rest)| !rest.contains('×'))?;
    let dim1 = |text: &str| text.split('×').nth(1).map(str::to_owned);
    let c = rows
        .iter()
        .filter_map(|t| row_dims(t))
        .find(|(name, _)| name.trim() == "C")
        .map(|(_, d)| d.to_owned());
    let ns: Vec<String> = c
        .into_iter()
        .chain(outgoing.iter().filter_map(|(t, _)| dim1(t)))
        .collect();
    let ks: Vec<String> = incoming.iter().filter_map(|(t, _)| dim1(t)).collect();
    let support = |n: &str, k: &str| {
        ns.iter().filter(|v| *v == n).count() + ks.iter().filter(|v| *v == k).count()
    };
    let (t, f) = (support(b0, b1), support(b1, b0));
    (t != f).then_some(t > f)
}

/// The weight rows of one card read together, where the ONNX specification ties their shapes (`ties`):
/// - [`EQUAL_ROW_SHAPES`]: every row that reads as `name〈dims〉` votes with its dims;
/// - `Conv`: `W〈M×C×kH×kW〉`'s first dim and `B〈M〉` (the output channels `M`, grouped or not);
/// - [`RECURRENT_GATES`]: the directions `D` (the first dim of `W`, `R`, `B`, `P`) and the hidden size `H` (`W`'s
///   and `R`'s dim 1 as `G·H`, `R`'s dim 2, `B`'s dim 1 as `2G·H`, `P`'s as `3H`);
/// - `MatMul` with a `B〈K×N〉` row, `ConvTranspose` (`W〈C×M×…〉`, `B〈M〉`, one group), `Gemm` (`B`, `C〈N〉`; `B`
///   only where its orientation shows, `gemm_trans_b`).
///
/// The tensor labels of the card's edges vote too where the operator fixes their dims (the channels around a
/// `BatchNormalization` or `InstanceNormalization` and after a `Conv`, a recurrent output's `D` and `H`, a `MatMul`'s last dims, a `Gemm`'s `N` and `K`), but
/// never change (`incoming` and `outgoing`: each label's text and reading). `texts[i]` is row `i`'s text and
/// `reads[i]` its OCR reading. In each tie the candidates are the values read, each scored on a voter as its
/// text with the candidate (times the voter's factor) in place of its own value, and the choice and the
/// [`ConsensusParams::max_loss_nats`] rule are those of [`agree`]; a row keeps its name and the rest of its
/// dims. Other operators: nothing changes. Returns the indices of the rows whose text changed.
pub fn agree_rows(
    op: &str,
    texts: &mut [String],
    reads: &[TextRead],
    incoming: &[(&str, &TextRead)],
    outgoing: &[(&str, &TextRead)],
    alphabet: &Alphabet,
    params: &ConsensusParams,
) -> Vec<usize> {
    let mut changed = Vec::new();
    for tie in ties(op, texts, incoming, outgoing) {
        // (text before the value, value, text after it, factor, reading); the rows' voters first.
        let mut voters: Vec<(String, String, String, u64, &TextRead)> = Vec::new();
        let mut rows: Vec<(usize, Slot)> = Vec::new();
        for (i, (text, read)) in texts.iter().zip(reads).enumerate() {
            let Some((name, dims)) = row_dims(text) else {
                continue;
            };
            if read.log_probs.is_empty() {
                continue;
            }
            let named = |s: &Slot| match s.source {
                Source::Row(None) => true,
                Source::Row(Some(n)) => name.trim() == n,
                _ => false,
            };
            for s in tie.iter().filter(|s| named(s)) {
                if let Some((before, value, after)) = split_at_slot(dims, s) {
                    voters.push((
                        format!("{name}〈{before}"),
                        value,
                        format!("{after}〉"),
                        s.factor,
                        read,
                    ));
                    rows.push((i, *s));
                }
            }
        }
        let labels = tie.iter().flat_map(|s| {
            let texts = match s.source {
                Source::Incoming => incoming,
                Source::Outgoing => outgoing,
                Source::Row(_) => &[],
            };
            texts.iter().map(move |l| (s, l))
        });
        for (s, &(text, read)) in labels {
            if read.log_probs.is_empty() || crate::graph::parse_shape_text(text).is_none() {
                continue;
            }
            if let Some((before, value, after)) = split_at_slot(text, s) {
                voters.push((before, value, after, s.factor, read));
            }
        }
        let proposals: Vec<Option<String>> = voters.iter().map(|v| base_value(&v.1, v.3)).collect();
        let voter_reads: Vec<&TextRead> = voters.iter().map(|v| v.4).collect();
        let render = |j: usize, v: &str| -> Option<String> {
            let (before, _, after, factor, _) = &voters[j];
            Some(format!("{before}{}{after}", shown_value(v, *factor)?))
        };
        let own = |j: usize| format!("{}{}{}", voters[j].0, voters[j].1, voters[j].2);
        let agreed = agree_values(&proposals, &voter_reads, render, own, alphabet, params);
        // A row may hold two slots of one tie (`R`'s dims 1 and 2): each puts the winner in its own dim of
        // the row's current text.
        for (j, value) in agreed {
            let (Some(&(i, s)), Some(shown)) = (rows.get(j), shown_value(&value, voters[j].3))
            else {
                continue;
            };
            let Some((name, dims)) = row_dims(&texts[i]) else {
                continue;
            };
            if let Some((before, _, after)) = split_at_slot(dims, &s) {
                texts[i] = format!("{name}〈{before}{shown}{after}〉");
                changed.push(i);
            }
        }
    }
    changed.sort_unstable();
    changed.dedup();
    changed
}

/// `dims` (a row's dims text, or a label's shape text) split around the value of slot `s`: (before, value,
/// after); `None` when its rank is out of the slot's range.
fn split_at_slot(dims: &str, s: &Slot) -> Option<(String, String, String)> {
    let parts: Vec<&str> = dims.split('×').collect();
    if parts.len() < s.min_rank || parts.len() > s.max_rank {
        return None;
    }
    let at = match s.dims {
        Dims::All => return Some((String::new(), dims.to_owned(), String::new())),
        Dims::At(i) => i,
        Dims::Last => parts.len() - 1,
    };
    let value = parts.get(at)?;
    let before: String = parts[..at].iter().map(|p| format!("{p}×")).collect();
    let after: String = parts[at + 1..].iter().map(|p| format!("×{p}")).collect();
    Some((before, (*value).to_owned(), after))
}

/// What a slot with `factor` shows for the tied value `v`: `v` itself, or `factor` × `v` (`None` when `v` is not
/// a number).
fn shown_value(v: &str, factor: u64) -> Option<String> {
    if factor == 1 {
        return Some(v.to_owned());
    }
    Some(v.parse::<u64>().ok()?.checked_mul(factor)?.to_string())
}

/// The tied value a voter shows as `value` with `factor`: `value` itself, or its quotient when it is a multiple.
fn base_value(value: &str, factor: u64) -> Option<String> {
    if factor == 1 {
        return Some(value.to_owned());
    }
    let v: u64 = value.parse().ok()?;
    (v.is_multiple_of(factor) && v > 0).then(|| (v / factor).to_string())
}

/// The choice shared by [`agree`] and [`agree_rows`]: voter `j` proposes the value `values[j]` (`None`: none),
/// has reading `reads[j]` and shows the text `own(j)`; `render(j, v)` is the text it would show with value `v`
/// (`None`: it cannot). The candidates are the distinct proposed values; the value whose texts have the
/// highest sum over the voters of [`TextRead::log_likelihood`] wins (the first on ties; a text the alphabet
/// cannot spell scores `−∞`). Returns `(j, winner)` for each voter whose text with the winner differs from its
/// own and whose own reading finds that text at most [`ConsensusParams::max_loss_nats`] less likely than its
/// own.
fn agree_values(
    values: &[Option<String>],
    reads: &[&TextRead],
    render: impl Fn(usize, &str) -> Option<String>,
    own: impl Fn(usize) -> String,
    alphabet: &Alphabet,
    params: &ConsensusParams,
) -> Vec<(usize, String)> {
    let classes = alphabet.classes();
    let mut candidates: Vec<&String> = Vec::new();
    for v in values.iter().flatten() {
        if !candidates.contains(&v) {
            candidates.push(v);
        }
    }
    if candidates.len() < 2 {
        return Vec::new();
    }
    let score = |j: usize, text: Option<&str>| match text.and_then(|t| alphabet.encode(t)) {
        Some(target) => reads[j].log_likelihood(classes, &target),
        None => f64::NEG_INFINITY,
    };
    // scores[c][j]: log-likelihood of candidate c's text under voter j's crops.
    let scores: Vec<Vec<f64>> = candidates
        .iter()
        .map(|c| {
            (0..values.len())
                .map(|j| score(j, render(j, c).as_deref()))
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
    for j in 0..values.len() {
        let Some(text) = render(j, candidates[best]) else {
            continue;
        };
        let mine = own(j);
        if text == mine {
            continue;
        }
        let own_score = match values[j]
            .as_ref()
            .and_then(|v| candidates.iter().position(|c| *c == v))
        {
            Some(c) => scores[c][j],
            None => score(j, Some(&mine)),
        };
        if own_score - scores[best][j] <= params.max_loss_nats {
            out.push((j, candidates[best].clone()));
        }
    }
    out
}
