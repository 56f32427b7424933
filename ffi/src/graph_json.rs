//! Graph JSON v1 checking for the foreign side (the result format of `scan*`, `docs/graph-json.md`).

use netron_ocr_core::graph::GraphJson;

use crate::boundary::guarded;
use crate::error::NetronError;

/// Reads graph JSON v1 with the core reader and its semantic checks, and returns it re-serialised compactly
/// (fields in schema order, unknown fields dropped). Fails with `UnsupportedGraphVersion` for another major
/// version and `InvalidGraph` for anything else wrong (listing every problem the checks found).
#[uniffi::export]
pub fn normalize_graph_json(json: String) -> Result<String, NetronError> {
    guarded(|| {
        let graph = GraphJson::from_json(&json)?;
        let issues = graph.check();
        if !issues.is_empty() {
            let list: Vec<String> = issues.iter().map(ToString::to_string).collect();
            return Err(NetronError::InvalidGraph(list.join("; ")));
        }
        Ok(graph.to_json()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"format":"netron-ocr.graph","version":1,"image":{"width":64,"height":48},
        "canvas":{"box":[0,0,64,48],"confidence":1.0},"nodes":[],"inputs":[],"outputs":[],"tensors":[],
        "edges":[],"future_field":true}"#;

    #[test]
    fn minimal_graph_normalizes_and_drops_unknown_fields() {
        let out = normalize_graph_json(MINIMAL.into()).unwrap();
        assert!(
            out.starts_with(r#"{"format":"netron-ocr.graph","version":1"#),
            "{out}"
        );
        assert!(!out.contains("future_field"));
    }

    #[test]
    fn other_major_version_is_typed() {
        let v2 = MINIMAL.replace(r#""version":1"#, r#""version":2"#);
        assert!(matches!(
            normalize_graph_json(v2),
            Err(NetronError::UnsupportedGraphVersion(_))
        ));
    }

    #[test]
    fn dangling_edge_is_invalid() {
        let bad = MINIMAL.replace(
            r#""edges":[]"#,
            r#""edges":[{"from":"n9","to":"o1","tensor":null,"confidence":1}]"#,
        );
        match normalize_graph_json(bad) {
            Err(NetronError::InvalidGraph(m)) => assert!(m.contains("n9"), "{m}"),
            other => panic!("expected InvalidGraph, got {other:?}"),
        }
    }
}
