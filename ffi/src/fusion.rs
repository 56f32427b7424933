//! Fusion of the scans of several frames of one steady scene into one graph, by voting.
//!
//! The frames come from a camera held still (a `CaptureSession` fuses only frames that passed the quality gate's
//! stability check in a row), so the same element lies at nearly the same place in each frame:
//! * elements of one kind (nodes, inputs, outputs, tensor labels) are matched across frames by box IoU ≥
//!   [`MATCH_IOU`], greedily, most confident first, at most one element per frame in each match;
//! * an element (or an edge) is kept when it was seen in a majority of the frames (more than half);
//! * a node's `op`, a port's `name` and a tensor label's `text` are the majority vote of its frames (ties go to the
//!   larger summed confidence, then to the earlier frame); the kept element's geometry and other fields are those
//!   of its most confident frame that voted for the winner;
//! * confidences are averaged over *all* fused frames (a frame that missed the element counts 0), `op_confidence`
//!   over the frames that voted for the winning op;
//! * edges are matched by their (fused) endpoints; the label is the majority vote of the frames' labels;
//! * the canvas is the mean box and confidence; the direction is the majority vote.
//!
//! Fused ids follow the schema's writer convention (`n<k>`, `i<k>`, `o<k>`, `t<k>`), numbered by descending
//! fused confidence. The result passes `GraphJson::check` when every input does.

use std::collections::HashMap;

use netron_ocr_core::graph::{BBox, Canvas, Edge, GraphJson, Node, Port, Tensor};

/// Smallest box IoU at which two elements of consecutive frames are taken to be the same element.
pub(crate) const MATCH_IOU: f32 = 0.5;

/// Frames needed for an element or edge to be kept out of `n`: more than half.
fn majority(n: usize) -> usize {
    n / 2 + 1
}

/// The members of a track: (frame, index in that frame's list).
type Members = Vec<(usize, usize)>;

/// One element tracked across frames.
struct Track {
    members: Members,
    /// Sum of the member boxes (for the running mean box that later frames are matched against).
    sum: [f32; 4],
}

impl Track {
    fn mean(&self) -> BBox {
        let n = self.members.len() as f32;
        BBox::new(
            self.sum[0] / n,
            self.sum[1] / n,
            self.sum[2] / n,
            self.sum[3] / n,
        )
    }

    fn add(&mut self, frame: usize, index: usize, b: &BBox) {
        self.members.push((frame, index));
        for (s, v) in self.sum.iter_mut().zip([b.x0, b.y0, b.x1, b.y1]) {
            *s += v;
        }
    }

    fn has_frame(&self, frame: usize) -> bool {
        self.members.iter().any(|&(f, _)| f == frame)
    }
}

/// Matches the elements of each frame (`boxes[frame]` = (box, confidence) per element) into tracks.
fn track(boxes: &[Vec<(BBox, f32)>]) -> Vec<Track> {
    let mut tracks: Vec<Track> = Vec::new();
    for (f, elements) in boxes.iter().enumerate() {
        let mut order: Vec<usize> = (0..elements.len()).collect();
        order.sort_by(|&a, &b| elements[b].1.total_cmp(&elements[a].1));
        for i in order {
            let b = &elements[i].0;
            let best = tracks
                .iter()
                .enumerate()
                .filter(|(_, t)| !t.has_frame(f))
                .map(|(k, t)| (k, t.mean().iou(b)))
                .filter(|&(_, iou)| iou >= MATCH_IOU)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            match best {
                Some((k, _)) => tracks[k].add(f, i, b),
                None => {
                    let mut t = Track {
                        members: Vec::new(),
                        sum: [0.0; 4],
                    };
                    t.add(f, i, b);
                    tracks.push(t);
                }
            }
        }
    }
    tracks
}

/// The majority key among `(key, weight)` votes; ties go to the larger summed weight, then to the key seen first.
/// `None` for no votes.
fn vote<K: PartialEq + Clone>(votes: impl IntoIterator<Item = (K, f32)>) -> Option<K> {
    let mut tally: Vec<(K, usize, f32)> = Vec::new();
    for (key, w) in votes {
        match tally.iter_mut().find(|(k, _, _)| *k == key) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 += w;
            }
            None => tally.push((key, 1, w)),
        }
    }
    let mut best: Option<(K, usize, f32)> = None;
    for entry in tally {
        let better = match &best {
            None => true,
            Some((_, c, w)) => entry.1 > *c || (entry.1 == *c && entry.2 > *w),
        };
        if better {
            best = Some(entry);
        }
    }
    best.map(|(k, _, _)| k)
}

/// One kind of element: how to read its box, confidence and voted key, and how to write the fused element.
struct Kind<'a, T, K> {
    lists: Vec<&'a [T]>,
    bbox: fn(&T) -> BBox,
    confidence: fn(&T) -> f32,
    key: fn(&T) -> K,
    /// Builds the fused element from its representative, the winning key, the fused confidence and the members
    /// that voted for the winner.
    build: fn(&T, K, f32, &[&T]) -> T,
    set_id: fn(&mut T, String),
    id: fn(&T) -> &str,
    prefix: char,
}

/// Fuses one kind; returns the fused elements (ids assigned) and, per frame, old id → fused id.
fn fuse_kind<T: Clone, K: PartialEq + Clone>(
    kind: Kind<'_, T, K>,
    ids: &mut [HashMap<String, String>],
) -> Vec<T> {
    let n = kind.lists.len();
    let boxes: Vec<Vec<(BBox, f32)>> = kind
        .lists
        .iter()
        .map(|l| {
            l.iter()
                .map(|e| ((kind.bbox)(e), (kind.confidence)(e)))
                .collect()
        })
        .collect();
    // (fused confidence, fused element, its track's members)
    let mut fused: Vec<(f32, T, Members)> = Vec::new();
    for t in track(&boxes) {
        if t.members.len() < majority(n) {
            continue;
        }
        let elements: Vec<&T> = t.members.iter().map(|&(f, i)| &kind.lists[f][i]).collect();
        let Some(winner) = vote(
            elements
                .iter()
                .map(|e| ((kind.key)(e), (kind.confidence)(e))),
        ) else {
            continue;
        };
        let voters: Vec<&T> = elements
            .iter()
            .copied()
            .filter(|e| (kind.key)(e) == winner)
            .collect();
        let Some(rep) = voters
            .iter()
            .copied()
            .max_by(|a, b| (kind.confidence)(a).total_cmp(&(kind.confidence)(b)))
        else {
            continue;
        };
        let confidence = elements.iter().map(|e| (kind.confidence)(e)).sum::<f32>() / n as f32;
        fused.push((
            confidence,
            (kind.build)(rep, winner, confidence, &voters),
            t.members,
        ));
    }
    // Stable: equal confidences keep the order in which the tracks were first seen.
    fused.sort_by(|a, b| b.0.total_cmp(&a.0));
    fused
        .into_iter()
        .enumerate()
        .map(|(k, (_, mut element, members))| {
            let id = format!("{}{k}", kind.prefix);
            for (f, i) in members {
                ids[f].insert((kind.id)(&kind.lists[f][i]).to_owned(), id.clone());
            }
            (kind.set_id)(&mut element, id);
            element
        })
        .collect()
}

fn port_kind(lists: Vec<&[Port]>, prefix: char) -> Kind<'_, Port, String> {
    Kind {
        lists,
        bbox: |p| p.bbox,
        confidence: |p| p.confidence,
        key: |p| p.name.clone(),
        build: |rep, name, confidence, _| Port {
            name,
            confidence,
            ..rep.clone()
        },
        set_id: |p, id| p.id = id,
        id: |p| &p.id,
        prefix,
    }
}

/// Fused (from, to) ids of an edge.
type EdgeKey = (String, String);

/// One frame's edge between a pair of fused endpoints: its label (fused tensor id), confidence and the edge.
type Sighting<'a> = (Option<String>, f32, &'a Edge);

/// Fuses the graphs of several frames of one scene (see the module documentation). All graphs must share one
/// image size: graphs of another size than the last one's are left out. `None` when `graphs` is empty.
pub(crate) fn fuse(graphs: &[GraphJson]) -> Option<GraphJson> {
    let last = graphs.last()?;
    let graphs: Vec<&GraphJson> = graphs.iter().filter(|g| g.image == last.image).collect();
    let n = graphs.len();
    // Per frame: the frame's element id → fused id (ids are unique within a frame across all kinds).
    let mut ids: Vec<HashMap<String, String>> = vec![HashMap::new(); n];

    let nodes = fuse_kind(
        Kind {
            lists: graphs.iter().map(|g| g.nodes.as_slice()).collect(),
            bbox: |e: &Node| e.bbox,
            confidence: |e| e.confidence,
            key: |e| e.op.clone(),
            build: |rep, op, confidence, voters| Node {
                op,
                op_confidence: voters.iter().map(|v| v.op_confidence).sum::<f32>()
                    / voters.len() as f32,
                confidence,
                ..rep.clone()
            },
            set_id: |e, id| e.id = id,
            id: |e| &e.id,
            prefix: 'n',
        },
        &mut ids,
    );
    let inputs = fuse_kind(
        port_kind(graphs.iter().map(|g| g.inputs.as_slice()).collect(), 'i'),
        &mut ids,
    );
    let outputs = fuse_kind(
        port_kind(graphs.iter().map(|g| g.outputs.as_slice()).collect(), 'o'),
        &mut ids,
    );
    let tensors = fuse_kind(
        Kind {
            lists: graphs.iter().map(|g| g.tensors.as_slice()).collect(),
            bbox: |e: &Tensor| e.bbox,
            confidence: |e| e.confidence,
            key: |e| e.text.clone(),
            // The representative voted for the winning text, so its parsed shape is the text's.
            build: |rep, text, confidence, _| Tensor {
                text,
                confidence,
                ..rep.clone()
            },
            set_id: |e, id| e.id = id,
            id: |e| &e.id,
            prefix: 't',
        },
        &mut ids,
    );

    // Edges by fused endpoints: per pair, the frames' (label, confidence, edge), at most one per frame (the
    // most confident, should a frame have two edges between the same pair).
    let mut pairs: Vec<(EdgeKey, Vec<Option<Sighting>>)> = Vec::new();
    for (f, g) in graphs.iter().enumerate() {
        for e in &g.edges {
            let (Some(from), Some(to)) = (ids[f].get(&e.from), ids[f].get(&e.to)) else {
                continue;
            };
            let label = e.tensor.as_ref().and_then(|t| ids[f].get(t)).cloned();
            let key = (from.clone(), to.clone());
            let slot = match pairs.iter().position(|(k, _)| *k == key) {
                Some(p) => p,
                None => {
                    pairs.push((key, vec![None; n]));
                    pairs.len() - 1
                }
            };
            let seen = &mut pairs[slot].1[f];
            if seen.as_ref().is_none_or(|(_, c, _)| e.confidence > *c) {
                *seen = Some((label, e.confidence, e));
            }
        }
    }
    let mut edges: Vec<Edge> = Vec::new();
    for ((from, to), per_frame) in pairs {
        let seen: Vec<&Sighting> = per_frame.iter().flatten().collect();
        if seen.len() < majority(n) {
            continue;
        }
        let Some(tensor) = vote(seen.iter().map(|(l, c, _)| (l.clone(), *c))) else {
            continue;
        };
        let points = seen
            .iter()
            .filter(|(l, _, _)| *l == tensor)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .and_then(|(_, _, e)| e.points.clone());
        edges.push(Edge {
            from,
            to,
            tensor,
            confidence: seen.iter().map(|(_, c, _)| c).sum::<f32>() / n as f32,
            points,
            name: None,
        });
    }

    let mean = |f: fn(&GraphJson) -> f32| graphs.iter().map(|g| f(g)).sum::<f32>() / n as f32;
    let canvas = Canvas {
        bbox: BBox::new(
            mean(|g| g.canvas.bbox.x0),
            mean(|g| g.canvas.bbox.y0),
            mean(|g| g.canvas.bbox.x1),
            mean(|g| g.canvas.bbox.y1),
        ),
        confidence: mean(|g| g.canvas.confidence),
    };
    let mut graph = GraphJson::new(last.image, canvas);
    graph.direction = vote(graphs.iter().map(|g| (g.direction, 1.0))).flatten();
    graph.nodes = nodes;
    graph.inputs = inputs;
    graph.outputs = outputs;
    graph.tensors = tensors;
    graph.edges = edges;
    Some(graph)
}

#[cfg(test)]
pub(crate) mod tests {
    use netron_ocr_core::graph::{parse_shape_text, Dim, Direction, ImageSize};

    use super::*;

    fn b(x: f32, y: f32) -> BBox {
        BBox::new(x, y, x + 100.0, y + 40.0)
    }

    fn node(id: &str, op: &str, bbox: BBox, confidence: f32) -> Node {
        Node {
            id: id.into(),
            op: Some(op.into()),
            op_confidence: confidence,
            bbox,
            confidence,
            weights: vec![],
            title_box: None,
            quad: None,
            truncated: None,
        }
    }

    fn port(id: &str, name: &str, bbox: BBox) -> Port {
        Port {
            id: id.into(),
            name: name.into(),
            bbox,
            confidence: 0.9,
            quad: None,
            truncated: None,
        }
    }

    fn tensor(id: &str, text: &str, bbox: BBox) -> Tensor {
        Tensor {
            id: id.into(),
            text: text.into(),
            shape: parse_shape_text(text),
            bbox,
            confidence: 0.8,
            quad: None,
            name: None,
        }
    }

    fn edge(from: &str, to: &str, tensor: Option<&str>) -> Edge {
        Edge {
            from: from.into(),
            to: to.into(),
            tensor: tensor.map(Into::into),
            confidence: 0.6,
            points: None,
            name: None,
        }
    }

    fn graph(
        nodes: Vec<Node>,
        inputs: Vec<Port>,
        tensors: Vec<Tensor>,
        edges: Vec<Edge>,
    ) -> GraphJson {
        let mut g = GraphJson::new(
            ImageSize {
                width: 800,
                height: 600,
            },
            Canvas {
                bbox: BBox::new(10.0, 10.0, 790.0, 590.0),
                confidence: 0.9,
            },
        );
        g.direction = Some(Direction::Vertical);
        g.nodes = nodes;
        g.inputs = inputs;
        g.tensors = tensors;
        g.edges = edges;
        assert!(g.check().is_empty(), "{:?}", g.check());
        g
    }

    /// Three frames of a scene input → A → C (label on the first edge), with a few px of jitter, one misread op,
    /// one misread label, one misread input name, a spurious node B in frame 0 only, and C missed in frame 0.
    pub(crate) fn three_frames() -> Vec<GraphJson> {
        let f0 = graph(
            vec![
                node("n0", "Conv", b(300.0, 100.0), 0.9),
                node("n1", "Relu", b(600.0, 400.0), 0.7),
            ],
            vec![port("i0", "data", b(300.0, 10.0))],
            vec![tensor("t0", "1×64×56×56", b(420.0, 60.0))],
            vec![edge("i0", "n0", Some("t0")), edge("n0", "n1", None)],
        );
        // Frame 1 lists its nodes in another order: matching goes by box, not by id or position in the list.
        let f1 = graph(
            vec![
                node("n0", "Add", b(302.0, 202.0), 0.8),
                node("n1", "Conv", b(302.0, 101.0), 0.9),
            ],
            vec![port("i0", "dala", b(301.0, 12.0))],
            vec![tensor("t0", "1×64×5×56", b(421.0, 61.0))],
            vec![edge("i0", "n1", Some("t0")), edge("n1", "n0", None)],
        );
        let f2 = graph(
            vec![
                node("n0", "Relu", b(298.0, 99.0), 0.6),
                node("n1", "Add", b(299.0, 198.0), 0.85),
            ],
            vec![port("i0", "data", b(299.0, 9.0))],
            vec![tensor("t0", "1×64×56×56", b(419.0, 59.0))],
            vec![edge("i0", "n0", Some("t0")), edge("n0", "n1", None)],
        );
        vec![f0, f1, f2]
    }

    #[test]
    fn majority_votes_and_drops_the_unconfirmed() {
        let fused = fuse(&three_frames()).unwrap();
        assert!(fused.check().is_empty(), "{:?}", fused.check());
        // B (frame 0 only) is dropped; A and C (2-3 frames) are kept, most confident first.
        assert_eq!(fused.nodes.len(), 2, "{:#?}", fused.nodes);
        let a = &fused.nodes[0];
        assert_eq!(a.id, "n0");
        assert_eq!(a.op.as_deref(), Some("Conv")); // Conv, Conv, Relu
        assert!((a.op_confidence - 0.9).abs() < 1e-6); // mean over the two Conv votes
        assert!((a.confidence - (0.9 + 0.9 + 0.6) / 3.0).abs() < 1e-6);
        let c = &fused.nodes[1];
        assert_eq!(c.op.as_deref(), Some("Add"));
        assert!((c.confidence - (0.8 + 0.85) / 3.0).abs() < 1e-6); // missed in frame 0: counts 0
        assert!(c.bbox.iou(&b(300.0, 200.0)) > 0.8);

        assert_eq!(fused.inputs.len(), 1);
        assert_eq!(fused.inputs[0].name, "data");
        assert_eq!(fused.tensors.len(), 1);
        assert_eq!(fused.tensors[0].text, "1×64×56×56");
        assert_eq!(
            fused.tensors[0].shape,
            Some(vec![Dim::Int(1), Dim::Int(64), Dim::Int(56), Dim::Int(56)])
        );

        // input → A with its label in 3 frames, A → C in 2 frames; A → B (frame 0) went with B.
        let pairs: Vec<(&str, &str, Option<&str>)> = fused
            .edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str(), e.tensor.as_deref()))
            .collect();
        assert_eq!(pairs, vec![("i0", "n0", Some("t0")), ("n0", "n1", None)]);
        assert!((fused.edges[1].confidence - 0.4).abs() < 1e-6);
        assert_eq!(fused.direction, Some(Direction::Vertical));
    }

    #[test]
    fn a_moved_camera_matches_nothing() {
        let f0 = graph(
            vec![node("n0", "Conv", b(100.0, 100.0), 0.9)],
            vec![],
            vec![],
            vec![],
        );
        let f1 = graph(
            vec![node("n0", "Conv", b(400.0, 300.0), 0.9)],
            vec![],
            vec![],
            vec![],
        );
        let fused = fuse(&[f0, f1]).unwrap();
        assert!(fused.nodes.is_empty(), "{:?}", fused.nodes);
    }

    #[test]
    fn one_frame_is_kept_as_it_is() {
        let frames = three_frames();
        let fused = fuse(&frames[..1]).unwrap();
        assert_eq!(fused.nodes.len(), 2);
        assert_eq!(fused.nodes[1].op.as_deref(), Some("Relu"));
        assert_eq!(fused.edges.len(), 2);
        assert_eq!(fused.canvas, frames[0].canvas);
        assert!(fuse(&[]).is_none());
    }

    #[test]
    fn ties_go_to_the_more_confident_vote() {
        let f0 = graph(
            vec![node("n0", "Conv", b(100.0, 100.0), 0.6)],
            vec![],
            vec![],
            vec![],
        );
        let f1 = graph(
            vec![node("n0", "Gemm", b(101.0, 100.0), 0.8)],
            vec![],
            vec![],
            vec![],
        );
        let fused = fuse(&[f0, f1]).unwrap();
        assert_eq!(fused.nodes[0].op.as_deref(), Some("Gemm"));
        assert_eq!(vote([("a", 1.0), ("b", 1.0), ("a", 0.1)]), Some("a"));
        assert_eq!(vote(Vec::<(u8, f32)>::new()), None);
    }
}
