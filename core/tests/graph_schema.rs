//! Graph JSON v1: fixtures, round trips, the JSON Schema and the reader's error kinds.

use std::path::{Path, PathBuf};

use netron_ocr_core::graph::{
    BBox, Canvas, Dim, Direction, Edge, GraphError, GraphJson, ImageSize, IssueKind, Node, Point,
    Port, Tensor, Weight, JSON_SCHEMA_V1,
};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/graphs")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(JSON_SCHEMA_V1).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn schema_errors(instance: &Value) -> Vec<String> {
    validator()
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

const VALID: [&str; 3] = ["example.json", "example-truth.json", "minimal.json"];

#[test]
fn schema_is_a_valid_draft_2020_12_schema() {
    let schema: Value = serde_json::from_str(JSON_SCHEMA_V1).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(jsonschema::meta::is_valid(&schema));
    assert_eq!(schema["properties"]["version"]["const"], 1);
    assert_eq!(schema["properties"]["format"]["const"], GraphJson::FORMAT);
}

#[test]
fn valid_fixtures_parse_validate_and_round_trip() {
    for name in VALID {
        let text = read(&fixtures().join(name));
        let graph = GraphJson::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(graph.check(), vec![], "{name}");
        let original: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(schema_errors(&original), Vec::<String>::new(), "{name}");

        for written in [graph.to_json().unwrap(), graph.to_json_pretty().unwrap()] {
            let again = GraphJson::from_json(&written).unwrap();
            assert_eq!(again, graph, "{name}");
            let value: Value = serde_json::from_str(&written).unwrap();
            // Nothing the file said is lost or added on the way through the Rust types.
            assert_eq!(value, original, "{name}");
            assert_eq!(schema_errors(&value), Vec::<String>::new(), "{name}");
        }
    }
}

#[test]
fn example_fixture_matches_the_example_in_the_spec() {
    let doc = read(&fixtures().join("../../../docs/graph-json.md"));
    let after = doc
        .split_once("## Example")
        .expect("docs/graph-json.md has an `## Example` section")
        .1;
    let block = after
        .split_once("```json\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("the Example section has a ```json block")
        .0;
    let from_doc: Value = serde_json::from_str(block).expect("doc example is JSON");
    let fixture: Value = serde_json::from_str(&read(&fixtures().join("example.json"))).unwrap();
    assert_eq!(from_doc, fixture);
}

#[test]
fn example_fixture_reads_as_documented() {
    let g = GraphJson::from_json(&read(&fixtures().join("example.json"))).unwrap();
    assert_eq!(g.version, 1);
    assert_eq!(g.direction, Some(Direction::Vertical));
    assert_eq!((g.nodes.len(), g.inputs.len(), g.outputs.len()), (3, 1, 1));
    assert_eq!((g.tensors.len(), g.edges.len()), (3, 4));
    assert_eq!(g.nodes[2].op, None);
    assert_eq!(g.nodes[2].weights[0].shape, None);
    assert_eq!(
        g.tensors[0].shape,
        Some(vec![Dim::from("batch"), 3.into(), 224.into(), 224.into()])
    );
    assert_eq!(g.edges[2].tensor, None);
    assert_eq!(g.canvas.bbox, BBox::new(540.0, 36.0, 800.0, 600.0));
}

/// A graph with every optional field filled in.
fn full_graph() -> GraphJson {
    let quad = |b: BBox| {
        [
            Point::new(b.x0, b.y0),
            Point::new(b.x1, b.y0),
            Point::new(b.x1, b.y1),
            Point::new(b.x0, b.y1),
        ]
    };
    let mut g = GraphJson::new(
        ImageSize {
            width: 800,
            height: 600,
        },
        Canvas {
            bbox: BBox::new(10.5, 20.25, 700.0, 590.0),
            confidence: 0.875,
        },
    );
    g.direction = Some(Direction::Horizontal);
    let node_box = BBox::new(100.0, 100.0, 220.5, 160.0);
    g.nodes.push(Node {
        id: "n0".into(),
        op: Some("MatMul".into()),
        op_confidence: 0.6,
        bbox: node_box,
        confidence: 0.99,
        weights: vec![Weight {
            name: "B".into(),
            shape: Some(vec![Dim::from("?"), 10.into()]),
            text: "?×10".into(),
            bbox: Some(BBox::new(104.0, 130.0, 160.0, 150.0)),
        }],
        title_box: Some(BBox::new(100.0, 100.0, 220.5, 124.0)),
        quad: Some(quad(node_box)),
        truncated: Some(true),
    });
    let port_box = BBox::new(20.0, 110.0, 60.0, 140.0);
    g.inputs.push(Port {
        id: "i0".into(),
        name: "x".into(),
        bbox: port_box,
        confidence: 1.0,
        quad: Some(quad(port_box)),
        truncated: Some(false),
    });
    g.outputs.push(Port {
        id: "o0".into(),
        name: "y".into(),
        bbox: BBox::new(300.0, 110.0, 340.0, 140.0),
        confidence: 0.0,
        quad: None,
        truncated: None,
    });
    let label_box = BBox::new(62.0, 112.0, 98.0, 124.0);
    g.tensors.push(Tensor {
        id: "t0".into(),
        text: "x_in".into(),
        shape: None,
        bbox: label_box,
        confidence: 0.7,
        quad: Some(quad(label_box)),
        name: Some("x_in".into()),
    });
    g.edges.push(Edge {
        from: "i0".into(),
        to: "n0".into(),
        tensor: Some("t0".into()),
        confidence: 0.9,
        points: Some(vec![Point::new(60.0, 125.0), Point::new(100.0, 125.0)]),
        name: Some("x_in".into()),
    });
    g.edges.push(Edge {
        from: "n0".into(),
        to: "o0".into(),
        tensor: None,
        confidence: 0.5,
        points: None,
        name: None,
    });
    g.scene = Some(serde_json::json!({"seed": 3, "kind": "photo"}));
    g
}

#[test]
fn built_graph_round_trips_and_matches_the_schema() {
    let g = full_graph();
    assert_eq!(g.check(), vec![]);
    let text = g.to_json_pretty().unwrap();
    assert_eq!(GraphJson::from_json(&text).unwrap(), g);
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(schema_errors(&value), Vec::<String>::new());
    assert_eq!(
        value["nodes"][0]["box"],
        serde_json::json!([100.0, 100.0, 220.5, 160.0])
    );
    assert_eq!(
        value["nodes"][0]["weights"][0]["shape"],
        serde_json::json!(["?", 10])
    );
    assert_eq!(value["direction"], "horizontal");
    assert_eq!(
        value["edges"][0]["points"][1],
        serde_json::json!([100.0, 125.0])
    );
}

#[test]
fn absent_optional_fields_are_not_written_but_nullable_ones_are() {
    let mut g = full_graph();
    g.direction = None;
    g.scene = None;
    let n = &mut g.nodes[0];
    n.op = None;
    (n.title_box, n.quad, n.truncated, n.weights[0].bbox) = (None, None, None, None);
    g.inputs[0].quad = None;
    g.inputs[0].truncated = None;
    g.tensors[0].quad = None;
    g.tensors[0].name = None;
    g.edges[0].points = None;
    g.edges[0].name = None;
    let value: Value = serde_json::from_str(&g.to_json().unwrap()).unwrap();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&value),
        [
            "canvas", "edges", "format", "image", "inputs", "nodes", "outputs", "tensors",
            "version"
        ]
    );
    assert_eq!(
        keys(&value["nodes"][0]),
        ["box", "confidence", "id", "op", "op_confidence", "weights"]
    );
    assert_eq!(value["nodes"][0]["op"], Value::Null);
    assert_eq!(
        keys(&value["nodes"][0]["weights"][0]),
        ["name", "shape", "text"]
    );
    assert_eq!(
        keys(&value["inputs"][0]),
        ["box", "confidence", "id", "name"]
    );
    assert_eq!(
        keys(&value["tensors"][0]),
        ["box", "confidence", "id", "shape", "text"]
    );
    assert_eq!(value["tensors"][0]["shape"], Value::Null);
    assert_eq!(
        keys(&value["edges"][1]),
        ["confidence", "from", "tensor", "to"]
    );
    assert_eq!(value["edges"][1]["tensor"], Value::Null);
    assert_eq!(schema_errors(&value), Vec::<String>::new());
    assert_eq!(GraphJson::from_json(&g.to_json().unwrap()).unwrap(), g);
}

#[test]
fn unknown_fields_are_ignored() {
    let text = read(&fixtures().join("minimal.json"));
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["made_by"] = "a future v1 writer".into();
    value["nodes"][0]["colour"] = serde_json::json!([51, 85, 136]);
    value["edges"][0]["style"] = serde_json::json!({"dashed": true});
    let with_extras = GraphJson::from_json(&value.to_string()).unwrap();
    assert_eq!(with_extras, GraphJson::from_json(&text).unwrap());
    assert_eq!(schema_errors(&value), Vec::<String>::new());
}

#[test]
fn a_future_major_version_gets_the_version_error_not_a_shape_error() {
    let text = read(&fixtures().join("invalid/version-2.json"));
    let err = GraphJson::from_json(&text).unwrap_err();
    assert!(
        matches!(
            err,
            GraphError::UnsupportedVersion {
                found: 2,
                supported: 1
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("version 2") && msg.contains("version 1"),
        "{msg}"
    );
}

#[test]
fn a_nullable_field_must_still_be_present() {
    for (ptr, key) in [
        ("/nodes/0", "op"),
        ("/tensors/0", "shape"),
        ("/edges/0", "tensor"),
    ] {
        let mut value: Value =
            serde_json::from_str(&read(&fixtures().join("minimal.json"))).unwrap();
        value
            .pointer_mut(ptr)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove(key);
        let err = GraphJson::from_json(&value.to_string()).unwrap_err();
        assert!(matches!(err, GraphError::Schema(_)), "{key}: {err:?}");
        assert!(err.to_string().contains(key), "{err}");
        assert!(!schema_errors(&value).is_empty(), "{key}");
    }
}

/// What each layer says about one invalid fixture.
enum Reader {
    Syntax,
    NotAGraph,
    Version(u64),
    Schema,
    Ok,
}

#[test]
fn invalid_fixtures_are_rejected_by_the_expected_layer() {
    use IssueKind as K;
    type IssueMatch = fn(&str, &IssueKind) -> bool;
    // (file, reader outcome, JSON Schema valid?, expected check() issues as (path, predicate))
    let cases: Vec<(&str, Reader, bool, Vec<IssueMatch>)> = vec![
        ("not-json.json", Reader::Syntax, false, vec![]),
        ("top-level-array.json", Reader::NotAGraph, false, vec![]),
        ("wrong-format.json", Reader::NotAGraph, false, vec![]),
        ("no-format.json", Reader::NotAGraph, false, vec![]),
        ("version-2.json", Reader::Version(2), false, vec![]),
        ("version-0.json", Reader::Version(0), false, vec![]),
        ("missing-confidence.json", Reader::Schema, false, vec![]),
        ("missing-edges.json", Reader::Schema, false, vec![]),
        ("box-three-numbers.json", Reader::Schema, false, vec![]),
        ("shape-negative-dim.json", Reader::Schema, false, vec![]),
        (
            "unordered-box.json",
            Reader::Ok,
            true,
            vec![|p, k| p == "/tensors/0/box" && matches!(k, K::UnorderedBox(_))],
        ),
        (
            "confidence-above-one.json",
            Reader::Ok,
            false,
            vec![|p, k| p == "/edges/1/confidence" && *k == K::ConfidenceOutOfRange(1.5)],
        ),
        (
            "dangling-edge.json",
            Reader::Ok,
            true,
            vec![|p, k| p == "/edges/1/to" && matches!(k, K::UnknownId { id } if id == "o9")],
        ),
        (
            "duplicate-id.json",
            Reader::Ok,
            true,
            vec![
                |p, k| {
                    p == "/tensors/0/id"
                        && matches!(k, K::DuplicateId { id, first } if id == "n0" && first == "/nodes/0/id")
                },
                |p, k| p == "/edges/0/tensor" && matches!(k, K::UnknownId { id } if id == "t0"),
            ],
        ),
        (
            "edge-from-output.json",
            Reader::Ok,
            true,
            vec![|p, k| p == "/edges/2/from" && matches!(k, K::WrongKind { id, .. } if id == "o0")],
        ),
        (
            "edge-tensor-is-node.json",
            Reader::Ok,
            true,
            vec![|p, k| {
                p == "/edges/1/tensor" && matches!(k, K::WrongKind { id, .. } if id == "n0")
            }],
        ),
    ];

    // Every fixture in invalid/ is listed, so a new one cannot go unchecked.
    let mut on_disk: Vec<String> = std::fs::read_dir(fixtures().join("invalid"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = cases.iter().map(|c| c.0.to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);

    for (name, reader, schema_ok, expected) in cases {
        let text = read(&fixtures().join("invalid").join(name));
        let result = GraphJson::from_json(&text);
        match (&reader, &result) {
            (Reader::Syntax, Err(GraphError::Syntax(_)))
            | (Reader::NotAGraph, Err(GraphError::NotAGraph(_)))
            | (Reader::Schema, Err(GraphError::Schema(_)))
            | (Reader::Ok, Ok(_)) => {}
            (
                Reader::Version(v),
                Err(GraphError::UnsupportedVersion {
                    found,
                    supported: 1,
                }),
            ) if found == v => {}
            _ => panic!("{name}: unexpected reader result {result:?}"),
        }
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            assert_eq!(schema_errors(&value).is_empty(), schema_ok, "{name}");
        }
        if let Ok(graph) = result {
            let issues = graph.check();
            assert_eq!(issues.len(), expected.len(), "{name}: {issues:?}");
            for (issue, matches) in issues.iter().zip(expected) {
                assert!(matches(&issue.path, &issue.kind), "{name}: {issue}");
            }
            // The file is rejected by at least one layer.
            assert!(!schema_ok || !issues.is_empty(), "{name}");
        }
    }
}

#[test]
fn fixture_shapes_are_parsed_from_their_text() {
    use netron_ocr_core::graph::parse_shape_text;
    for name in VALID {
        let g = GraphJson::from_json(&read(&fixtures().join(name))).unwrap();
        for t in &g.tensors {
            assert_eq!(parse_shape_text(&t.text), t.shape, "{name} {}", t.id);
        }
        for w in g.nodes.iter().flat_map(|n| &n.weights) {
            assert_eq!(parse_shape_text(&w.text), w.shape, "{name} {}", w.text);
        }
    }
}

#[test]
fn generator_truth_fixtures_are_valid_v1() {
    let dir = fixtures().join("../scenes");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // `*.onnx.json` are generator debug summaries, not graph JSON.
        if !name.ends_with(".json") || name.ends_with(".onnx.json") {
            continue;
        }
        let text = read(&path);
        let graph = GraphJson::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(graph.check(), vec![], "{name}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(schema_errors(&value), Vec::<String>::new(), "{name}");
        seen += 1;
    }
    assert!(seen > 0, "no truth files in {}", dir.display());
}
