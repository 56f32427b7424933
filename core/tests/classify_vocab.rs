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
    assert_eq!(v.train_nodes, vec![1, 1]);
}

#[test]
fn training_counts_give_each_operator_its_share_of_its_category() {
    let v = Vocab::from_json(
        r#"{"version": 1, "operators": [
            {"op": "Conv", "category": "layer", "index": 0, "train_nodes": 60},
            {"op": "GRU", "category": "layer", "index": 1, "train_nodes": 20},
            {"op": "Gemm", "category": "layer", "index": 2, "train_nodes": 20},
            {"op": "Add", "category": "none", "index": 3, "train_nodes": 7},
            {"op": "Relu", "category": "activation", "index": 4, "train_nodes": 0},
            {"op": "Elu", "category": "activation", "index": 5, "train_nodes": 0}]}"#,
    )
    .unwrap();
    assert_eq!(v.train_nodes, vec![60, 20, 20, 7, 0, 0]);
    let share = v.within_category();
    for (got, want) in share.iter().zip([0.6, 0.2, 0.2, 1.0, 0.5, 0.5]) {
        assert!((got - want).abs() < 1e-6, "{share:?}");
    }
    // The shipped counts: every operator was drawn, and each category's shares sum to 1.
    let v = Vocab::bundled().unwrap();
    assert!(v.train_nodes.iter().all(|&c| c > 0));
    let share = v.within_category();
    for c in &v.categories {
        let sum: f32 = (0..v.len())
            .filter(|&i| &v.categories[i] == c)
            .map(|i| share[i])
            .sum();
        assert!((sum - 1.0).abs() < 1e-5, "{c}: {sum}");
    }
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
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "category": "x", "index": 0, "train_nodes": 3},
                                        {"op": "B", "category": "x", "index": 1}]}"#,
        "train_nodes given for 1 of 2",
    );
    rejects(
        r#"{"version": 1, "operators": [{"op": "A", "category": "x", "index": 0, "train_nodes": -3}]}"#,
        "",
    );
}
