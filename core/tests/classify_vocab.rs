//! Loading and validating the operator vocabulary (`models/vocab.json`).

use netron_ocr_core::models::{ModelError, VOCAB_JSON};
use netron_ocr_core::vocab::{Vocab, VOCAB_OPS};

#[test]
fn shipped_vocab_has_72_distinct_ops_in_index_order() {
    let v = Vocab::bundled().unwrap();
    assert_eq!(v.len(), VOCAB_OPS);
    assert_eq!(v.op(0), Some("Conv"));
    assert_eq!(v.op(71), Some("NonMaxSuppression"));
    assert_eq!(v.op(72), None);
    assert_eq!(v.category(20), Some("activation"));
    assert_eq!(v.index_of("Relu"), Some(20));
    assert_eq!(v.index_of("relu"), None);
    // Same order as the file's own `index` fields, read independently.
    let doc: serde_json::Value = serde_json::from_str(VOCAB_JSON).unwrap();
    for e in doc["operators"].as_array().unwrap() {
        let i = e["index"].as_u64().unwrap() as usize;
        assert_eq!(v.op(i), e["op"].as_str());
    }
}

#[test]
fn entries_may_come_in_any_order() {
    let v = Vocab::from_json(
        r#"{"version": 1, "operators": [{"op": "B", "category": "none", "index": 1},
                                        {"op": "A", "category": "layer", "index": 0}]}"#,
    )
    .unwrap();
    assert_eq!(v.ops, vec!["A", "B"]);
    assert_eq!(v.categories, vec!["layer", "none"]);
}

fn rejects(text: &str, needle: &str) {
    match Vocab::from_json(text) {
        Err(ModelError::Metadata { file, message }) => {
            assert_eq!(file, "vocab.json");
            assert!(
                message.contains(needle),
                "{message:?} should mention {needle:?}"
            );
        }
        other => panic!("{text}: expected a metadata error, got {other:?}"),
    }
}

#[test]
fn malformed_vocabularies_are_typed_errors() {
    rejects("{", "EOF");
    rejects("[]", "");
    rejects(r#"{"version": 1}"#, "operators");
    rejects(
        r#"{"version": 2, "operators": [{"op": "A", "category": "x", "index": 0}]}"#,
        "version 2",
    );
    rejects(r#"{"version": 1, "operators": []}"#, "no operators");
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "category": "x", "index": 1}]}"#,
        "outside",
    );
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "category": "x", "index": 0},
                                        {"op": "B", "category": "x", "index": 0}]}"#,
        "twice",
    );
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "category": "x", "index": 0},
                                        {"op": "A", "category": "x", "index": 1}]}"#,
        "\"A\" listed twice",
    );
    rejects(
        r#"{"version": 1, "operators": [{"op": "", "category": "x", "index": 0}]}"#,
        "empty",
    );
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "index": 0}]}"#,
        "category",
    );
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "category": "x", "index": -1}]}"#,
        "",
    );
}
