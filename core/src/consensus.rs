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
    let classes = alphabet.classes();
    let mut changed = Vec::new();
    for group in groups {
        let voters: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&k| {
                k < texts.len()
                    && reads
                        .get(k)
                        .copied()
                        .flatten()
                        .is_some_and(|r| !r.log_probs.is_empty())
            })
            .collect();
        let mut candidates: Vec<String> = Vec::new();
        for &k in &voters {
            if !candidates.contains(&texts[k]) {
                candidates.push(texts[k].clone());
            }
        }
        if candidates.len() < 2 {
            continue;
        }
        // scores[c][j]: log-likelihood of candidate c under voter j's crop.
        let scores: Vec<Vec<f64>> = candidates
            .iter()
            .map(|c| match alphabet.encode(c) {
                Some(target) => voters
                    .iter()
                    .map(|&k| {
                        let r = reads[k].expect("voters have readings");
                        r.log_likelihood(classes, &target)
                    })
                    .collect(),
                None => vec![f64::NEG_INFINITY; voters.len()],
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
        let Some(best) = best else { continue };
        let chosen = candidates[best].clone();
        for (j, &k) in voters.iter().enumerate() {
            if texts[k] == chosen {
                continue;
            }
            let own = candidates
                .iter()
                .position(|c| *c == texts[k])
                .map_or(f64::NEG_INFINITY, |c| scores[c][j]);
            if own - scores[best][j] <= params.max_loss_nats {
                texts[k] = chosen.clone();
                changed.push(k);
            }
        }
    }
    changed.sort_unstable();
    changed
}
