//! Model loading: bundled models against the SHA-256 manifest, tampered and missing files refused, dynamic batch.

use std::path::{Path, PathBuf};
use std::time::Instant;

use netron_ocr_core::models::{sha256_hex, Model, ModelError, ModelKind, ModelSet, MANIFEST};
use netron_ocr_core::ScanError;
use tract_onnx::prelude::*;

fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
}

/// A scratch copy of the models directory (the four ONNX files), unique per test.
fn copy_models(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netron-ocr-models-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for kind in ModelKind::ALL {
        std::fs::copy(
            models_dir().join(kind.file_name()),
            dir.join(kind.file_name()),
        )
        .unwrap();
    }
    dir
}

#[test]
fn manifest_lists_the_four_models() {
    let names: Vec<&str> = MANIFEST.iter().map(|(f, _)| *f).collect();
    for kind in ModelKind::ALL {
        assert!(names.contains(&kind.file_name()), "{names:?}");
        assert_eq!(kind.expected_sha256().len(), 64);
    }
}

#[test]
fn committed_files_match_the_manifest() {
    for kind in ModelKind::ALL {
        let bytes = std::fs::read(models_dir().join(kind.file_name())).unwrap();
        assert_eq!(
            sha256_hex(&bytes),
            kind.expected_sha256(),
            "{}: run `python models/update_hashes.py`",
            kind.file_name()
        );
    }
}

#[test]
fn bundled_models_load_and_report_the_load_time() {
    let t = Instant::now();
    let set = ModelSet::bundled().expect("bundled models load");
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    eprintln!("ModelSet::bundled(): {ms:.0} ms (hash check + parse + optimize, all four)");
    for kind in ModelKind::ALL {
        assert_eq!(set.get(kind).sha256(), kind.expected_sha256());
    }
    assert_eq!(set.vocab.len(), 72);
}

#[test]
fn a_tampered_model_is_refused_naming_the_file() {
    let dir = copy_models("tampered");
    let path = dir.join("detector.onnx");
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let err = ModelSet::from_dir(&dir).unwrap_err();
    match &err {
        ModelError::HashMismatch {
            file,
            expected,
            found,
        } => {
            assert_eq!(file, "detector.onnx");
            assert_eq!(expected, ModelKind::Detector.expected_sha256());
            assert_eq!(found, &sha256_hex(&bytes));
        }
        other => panic!("expected HashMismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("detector.onnx"));
    // The scanner reports the same, as a model error.
    let scan_err = netron_ocr_core::scanner::Scanner::from_dir(&dir).unwrap_err();
    assert!(
        matches!(scan_err, ScanError::Model(ModelError::HashMismatch { .. })),
        "{scan_err:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_intact_copy_loads_from_a_directory() {
    let dir = copy_models("intact");
    let set = ModelSet::from_dir(&dir).expect("intact copy loads");
    assert_eq!(set.cropper.sha256(), ModelKind::Cropper.expected_sha256());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_missing_model_is_an_io_error() {
    let dir = copy_models("missing");
    std::fs::remove_file(dir.join("ocr.onnx")).unwrap();
    match ModelSet::from_dir(&dir) {
        Err(ModelError::Io { path, .. }) => assert!(path.ends_with("ocr.onnx")),
        other => panic!("expected Io, got {other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn garbage_bytes_are_not_loaded() {
    // Unverified path, so the parser itself must refuse.
    let err = Model::from_bytes_unverified(ModelKind::Cropper, b"not an onnx model").unwrap_err();
    assert!(matches!(err, ModelError::Load { .. }), "{err:?}");
}

fn zeros(shape: &[usize]) -> Tensor {
    Tensor::zero::<f32>(shape).unwrap()
}

#[test]
fn classifier_and_ocr_take_any_batch() {
    let set = ModelSet::bundled().unwrap();
    for n in [1usize, 3, 7] {
        let out = set.classifier.run(zeros(&[n, 3, 96, 160])).unwrap();
        assert_eq!(out[0].shape(), [n, 72]);
        let out = set.ocr.run(zeros(&[n, 1, 48, 160])).unwrap();
        assert_eq!(out[0].shape(), [n, 40, set.alphabet.classes()]);
    }
}

#[test]
fn batch_rows_are_independent() {
    // Row k of a batched run equals a run of row k alone.
    let set = ModelSet::bundled().unwrap();
    let data: Vec<f32> = (0..2 * 3 * 96 * 160)
        .map(|i| ((i * 7919) % 255) as f32 / 127.0 - 1.0)
        .collect();
    let both = set
        .classifier
        .run(Tensor::from_shape(&[2, 3, 96, 160], &data).unwrap())
        .unwrap();
    let second = set
        .classifier
        .run(Tensor::from_shape(&[1, 3, 96, 160], &data[3 * 96 * 160..]).unwrap())
        .unwrap();
    let both = both[0].to_plain_array_view::<f32>().unwrap();
    let second = second[0].to_plain_array_view::<f32>().unwrap();
    let row: Vec<f32> = both.iter().skip(72).copied().collect();
    for (a, b) in row.iter().zip(second.iter()) {
        assert!((a - b).abs() < 1e-4, "{a} vs {b}");
    }
}

#[test]
fn a_wrong_input_shape_is_an_inference_error() {
    let set = ModelSet::bundled().unwrap();
    let err = set.detector.run(zeros(&[2, 3, 512, 512])).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::Inference {
                stage: "detector",
                ..
            }
        ),
        "{err:?}"
    );
    let err = set.classifier.run(zeros(&[1, 3, 96, 161])).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::Inference {
                stage: "classifier",
                ..
            }
        ),
        "{err:?}"
    );
}
