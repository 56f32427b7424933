//! Loading and validating the OCR alphabet (`models/ocr_alphabet.json`).

use netron_ocr_core::models::{ModelError, ALPHABET_JSON};
use netron_ocr_core::vocab::Alphabet;

#[test]
fn shipped_alphabet_matches_the_model_card() {
    let a = Alphabet::bundled().unwrap();
    assert_eq!(a.symbols.len(), 75);
    assert_eq!(a.classes(), 76);
    assert_eq!(a.time_steps, 80);
    assert_eq!(a.max_length, 32);
    assert_eq!((a.input_height, a.input_width), (48, 320));
    assert_eq!(a.crop_pad_fraction, 0.15);
    assert_eq!(a.symbol(0), None, "class 0 is the blank");
    assert_eq!(a.symbol(1), Some('0'));
    assert_eq!(a.symbol(11), Some('×'));
    assert_eq!(a.symbol(75), Some('…'));
    assert_eq!(a.symbol(76), None);
    assert_eq!(a.class_of('〈'), Some(71));
    assert_eq!(a.class_of('#'), None);
    let ids: Vec<usize> = "1×3×224×224"
        .chars()
        .map(|c| a.class_of(c).unwrap())
        .collect();
    assert_eq!(a.decode(&ids), "1×3×224×224");
    assert_eq!(
        a.decode(&[0, 2, 0, 999]),
        "1",
        "blanks and unknown classes are skipped"
    );
}

/// The shipped file with one JSON edit applied through `serde_json`.
fn edited(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut doc: serde_json::Value = serde_json::from_str(ALPHABET_JSON).unwrap();
    edit(&mut doc);
    doc.to_string()
}

fn rejects(text: &str, needle: &str) {
    match Alphabet::from_json(text) {
        Err(ModelError::Metadata { file, message }) => {
            assert_eq!(file, "ocr_alphabet.json");
            assert!(
                message.contains(needle),
                "{message:?} should mention {needle:?}"
            );
        }
        other => panic!("expected a metadata error, got {other:?}"),
    }
}

#[test]
fn malformed_alphabets_are_typed_errors() {
    rejects("not json", "expected");
    rejects(&edited(|d| d["format"] = "other".into()), "format");
    rejects(&edited(|d| d["version"] = 2.into()), "version 2");
    rejects(&edited(|d| d["blank"] = 3.into()), "blank is 3");
    rejects(
        &edited(|d| d["symbols"] = serde_json::json!([])),
        "no symbols",
    );
    rejects(
        &edited(|d| d["symbols"][0] = "10".into()),
        "not one character",
    );
    rejects(
        &edited(|d| d["symbols"][0] = "".into()),
        "not one character",
    );
    rejects(&edited(|d| d["symbols"][1] = "0".into()), "listed twice");
    rejects(&edited(|d| d["num_classes"] = 75.into()), "num_classes 75");
    rejects(&edited(|d| d["time_steps"] = 0.into()), "positive");
    rejects(&edited(|d| d["input"]["channels"] = 3.into()), "3 channels");
    rejects(
        &edited(|d| d["input"]["crop_pad_fraction_of_height"] = (-0.1).into()),
        "outside",
    );
    rejects(
        &edited(|d| {
            d.as_object_mut()
                .unwrap()
                .remove("input")
                .map(|_| ())
                .unwrap()
        }),
        "input",
    );
}

#[test]
fn skew_settings_are_optional_and_checked() {
    let s = Alphabet::bundled()
        .unwrap()
        .skew
        .expect("shipped with skew");
    assert_eq!((s.min_deg, s.max_deg), (1.5, 20.0));
    assert_eq!((s.max_side, s.max_samples), (512, 4));
    let without = edited(|d| {
        d["input"].as_object_mut().unwrap().remove("skew");
    });
    assert_eq!(Alphabet::from_json(&without).unwrap().skew, None);
    rejects(
        &edited(|d| d["input"]["skew"]["max_deg"] = 1.0.into()),
        "skew",
    );
    rejects(
        &edited(|d| d["input"]["skew"]["max_samples"] = 0.into()),
        "skew",
    );
    rejects(
        &edited(|d| d["input"]["skew"]["max_side"] = 8.into()),
        "skew",
    );
}
