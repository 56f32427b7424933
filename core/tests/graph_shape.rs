//! Netron shape labels → dims, and back.

use netron_ocr_core::graph::{format_shape, parse_shape_text, Dim};

fn dims(spec: &[&str]) -> Vec<Dim> {
    spec.iter()
        .map(|s| match s.parse::<u64>() {
            Ok(n) => Dim::Int(n),
            Err(_) => Dim::Sym((*s).to_owned()),
        })
        .collect()
}

#[test]
fn shapes_parse_into_dims() {
    let cases: [(&str, &[&str]); 10] = [
        ("1×64×56×56", &["1", "64", "56", "56"]),
        ("batch×3×224×224", &["batch", "3", "224", "224"]),
        ("?×10", &["?", "10"]),
        ("1000", &["1000"]),
        ("?", &["?"]),
        ("0×5", &["0", "5"]),
        ("N×seq_len×_d2", &["N", "seq_len", "_d2"]),
        (" 1×3 ", &["1", "3"]),
        ("1 × 3", &["1", "3"]),
        ("18446744073709551615×2", &["18446744073709551615", "2"]),
    ];
    for (text, want) in cases {
        assert_eq!(parse_shape_text(text), Some(dims(want)), "{text:?}");
    }
}

#[test]
fn texts_that_are_not_shapes_give_none() {
    for text in [
        "",
        "   ",
        "conv1_out",
        "batch",
        "1×",
        "×3",
        "1××3",
        "1x3",
        "1 x 3",
        "1×3.5",
        "-1×3",
        "1×conv-out",
        "1×2b",
        "1×?×",
        "W〈64×3〉",
        "18446744073709551616",
        "1×64×56×56 extra",
    ] {
        assert_eq!(parse_shape_text(text), None, "{text:?}");
    }
}

#[test]
fn formatting_inverts_parsing() {
    for text in ["1×64×56×56", "batch×3×224×224", "?×10", "1000", "?"] {
        let parsed = parse_shape_text(text).unwrap();
        assert_eq!(format_shape(&parsed), text);
    }
    assert_eq!(format_shape(&[]), "");
}

#[test]
fn dims_serialise_untagged() {
    let d = dims(&["batch", "3", "?"]);
    let json = serde_json::to_string(&d).unwrap();
    assert_eq!(json, r#"["batch",3,"?"]"#);
    assert_eq!(serde_json::from_str::<Vec<Dim>>(&json).unwrap(), d);
    assert!(serde_json::from_str::<Dim>("1.5").is_err());
    assert!(serde_json::from_str::<Dim>("-1").is_err());
    assert!(serde_json::from_str::<Dim>("null").is_err());
}
