//! Model loading: bundled models against the SHA-256 manifest, tampered and missing files refused, dynamic batch.

mod fixture_support;

use std::path::PathBuf;
use std::time::Instant;

use fixture_support::models_dir;
use netron_ocr_core::models::{sha256_hex, Model, ModelError, ModelKind, ModelSet, MANIFEST};
use netron_ocr_core::ScanError;
use tract_onnx::prelude::*;

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

/// `[n, C, H, W]` of `kind`'s input.
fn batch_shape(kind: ModelKind, n: usize) -> [usize; 4] {
    let [c, h, w] = kind.input_chw();
    [n, c, h, w]
}

/// `n` different deterministic inputs `[1, C, H, W]` for `kind`, values in [-1, 1].
fn distinct_inputs(kind: ModelKind, n: usize) -> Vec<Tensor> {
    let shape = batch_shape(kind, 1);
    let len: usize = shape.iter().product();
    (0..n)
        .map(|k| {
            let data: Vec<f32> = (0..len)
                .map(|i| ((i * 7919 + k * 104_729) % 255) as f32 / 127.0 - 1.0)
                .collect();
            Tensor::from_shape(&shape, &data).unwrap()
        })
        .collect()
}

#[test]
fn classifier_and_ocr_take_any_batch() {
    let set = ModelSet::bundled().unwrap();
    assert_eq!(
        ModelKind::Ocr.input_chw()[1..],
        [
            set.alphabet.input_height as usize,
            set.alphabet.input_width as usize
        ]
    );
    for n in [1usize, 3, 7] {
        let out = set
            .classifier
            .run(zeros(&batch_shape(ModelKind::Classifier, n)))
            .unwrap();
        assert_eq!(out[0].shape(), [n, 72]);
        let out = set.ocr.run(zeros(&batch_shape(ModelKind::Ocr, n))).unwrap();
        assert_eq!(
            out[0].shape(),
            [n, set.alphabet.time_steps, set.alphabet.classes()]
        );
    }
}

#[test]
fn run_each_answers_like_single_runs_and_a_stacked_batch() {
    // Per item: the same outputs as the item run alone and as its row of the stacked batch. A state reused
    // across items (the OCR's GRU) or a mixed-up order fails this: the items differ.
    let set = ModelSet::bundled().unwrap();
    for model in [&set.classifier, &set.ocr] {
        let kind = model.kind();
        let inputs = distinct_inputs(kind, 3);
        let each = model.run_each(inputs.clone()).unwrap();
        let stacked = model
            .run(Tensor::stack_tensors(0, &inputs).unwrap())
            .unwrap();
        assert_eq!(each.len(), 3);
        for (k, (outputs, input)) in each.iter().zip(&inputs).enumerate() {
            let alone = model.run(input.clone()).unwrap();
            assert_eq!(outputs, &alone, "{kind} item {k}");
            assert_eq!(
                outputs[0],
                stacked[0].slice(0, k, k + 1).unwrap(),
                "{kind} item {k}"
            );
        }
        assert_ne!(
            each[0], each[1],
            "{kind}: the inputs must give different outputs"
        );
        let single = model.run_each_single(inputs).unwrap();
        assert_eq!(
            single,
            each.into_iter().map(|o| o[0].clone()).collect::<Vec<_>>()
        );
        assert!(model.run_each(Vec::new()).unwrap().is_empty());
        // Each item is one input: a batch of two is refused, naming the model.
        let err = model.run_each([zeros(&batch_shape(kind, 2))]).unwrap_err();
        assert!(
            matches!(err, ScanError::Inference { stage, .. } if stage == kind.name()),
            "{err:?}"
        );
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

/// The library clears the vector registers' upper halves after each run (`clear_upper_vector_state`): a raw
/// plan run and a library run give the same outputs, and the C library's `exp` gives the same values either
/// way (only its speed differs, `cargo run --release --example libm_after_model`).
#[test]
fn clearing_the_vector_registers_changes_no_value() {
    let set = ModelSet::bundled().unwrap();
    let input = distinct_inputs(ModelKind::Ocr, 1).remove(0);
    let plan = set.ocr.plan_for(48, 320).unwrap();
    let raw = plan.run(tvec!(input.clone().into_tvalue())).unwrap();
    let dirty: Vec<f64> = (0..200).map(|i| (-0.37 * i as f64).exp()).collect();
    netron_ocr_core::models::clear_upper_vector_state();
    let clean: Vec<f64> = (0..200).map(|i| (-0.37 * i as f64).exp()).collect();
    assert_eq!(dirty, clean);
    let ours = set.ocr.run(input).unwrap();
    assert_eq!(raw[0].clone().into_tensor(), ours[0]);
}
