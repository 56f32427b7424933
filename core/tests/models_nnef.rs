//! NNEF builds only (feature `nnef` without `onnx`; run with `cargo test --release -p netron-ocr-core
//! --no-default-features --features nnef,bundled-models --test models_nnef`): the bundled NNEF conversions load
//! through the manifest, give the same outputs as the committed ONNX files run by tract's ONNX front end, refuse a
//! tampered file, and scan a fixture.

#![cfg(all(feature = "nnef", not(feature = "onnx")))]

mod fixture_support;

use fixture_support::{max_abs_diff, models_dir, onnx_outputs, scenes_dir, truth};
use netron_ocr_core::models::{Model, ModelError, ModelKind, ModelSet};
use netron_ocr_core::scanner::Scanner;
use tract_onnx::prelude::*;

/// A deterministic input in [-1, 1).
fn input(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n)
        .map(|i| ((i as u64 * 2_654_435_761) % 2000) as f32 / 1000.0 - 1.0)
        .collect();
    tract_ndarray::Array::from_shape_vec(shape.to_vec(), data)
        .unwrap()
        .into_tensor()
}

#[test]
fn nnef_outputs_equal_the_onnx_ones() {
    let set = ModelSet::bundled().expect("bundled NNEF models load");
    let cases: [(ModelKind, &[usize]); 6] = [
        (ModelKind::Cropper, &[1, 3, 512, 512]),
        (ModelKind::Detector, &[1, 3, 512, 512]),
        (ModelKind::Detector, &[1, 3, 352, 512]),
        (ModelKind::Classifier, &[1, 3, 96, 160]),
        (ModelKind::Ocr, &[1, 1, 48, 320]),
        (ModelKind::Ocr, &[1, 1, 48, 160]),
    ];
    for (kind, shape) in cases {
        let model = set.get(kind);
        assert!(model.kind().file_name().ends_with(".nnef.tar"));
        let x = input(shape);
        let got = if kind.variable_sides() != (false, false) {
            model.run_any_size(x.clone()).unwrap()
        } else {
            model.run(x.clone()).unwrap()
        };
        let want = onnx_outputs(kind, &x);
        assert_eq!(got.len(), want.len());
        for (name, (g, w)) in kind.output_names().iter().zip(got.iter().zip(&want)) {
            let d = max_abs_diff(g, w);
            // On arm64 tract's plans of the two graphs round differently (ffi/arm64-check.sh: the cropper 1.05e-5).
            let bound = if cfg!(target_arch = "x86_64") {
                1e-5
            } else {
                1e-4
            };
            assert!(
                d <= bound,
                "{kind} {shape:?} {name}: max |NNEF − ONNX| = {d}"
            );
        }
    }
}

#[test]
fn a_tampered_nnef_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("netron-ocr-nnef-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(ModelKind::Classifier.file_name());
    let converted = netron_ocr_convert_output(ModelKind::Classifier);
    std::fs::write(&file, &converted).unwrap();
    Model::from_dir(ModelKind::Classifier, &dir).expect("the converted file matches the manifest");
    let mut tampered = converted;
    let last = tampered.len() - 600;
    tampered[last] ^= 0x40;
    std::fs::write(&file, &tampered).unwrap();
    let err = Model::from_dir(ModelKind::Classifier, &dir).unwrap_err();
    assert!(
        matches!(err, ModelError::HashMismatch { ref file, .. } if file == "classifier.nnef.tar"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// What `netron-ocr-convert` writes for `kind`: the same bytes as the bundled conversion, on any kind of host (the
/// converter leaves out tract's host-dependent axis moves, `netron_ocr_convert::declutter_portably`; before session
/// 48 this test failed on arm64, docs/mobile.md).
fn netron_ocr_convert_output(kind: ModelKind) -> Vec<u8> {
    let onnx = std::fs::read(models_dir().join(format!("{}.onnx", kind.name()))).unwrap();
    netron_ocr_convert::onnx_to_nnef(kind.name(), &onnx).unwrap()
}

#[test]
fn a_fixture_scans_with_the_nnef_models() {
    let scanner = Scanner::new().unwrap();
    let result = scanner
        .scan_file(&scenes_dir().join("000000.shot.png"))
        .unwrap();
    let want = truth("000000.shot.json");
    let (got, expected) = (result.graph.nodes.len(), want.nodes.len());
    assert!(
        got * 10 >= expected * 8 && got <= expected * 12 / 10 + 1,
        "{got} nodes found, truth has {expected}"
    );
}

/// The detector's NNEF graph keeps the ×2 upsamplings as transposed convolutions of ones (`netron-ocr-convert`);
/// the loader runs them as tract's nearest upsampling, as in the ONNX build (`core/tests/detect_input_sizes.rs`).
#[test]
fn upsampling_deconvolutions_run_as_nearest_upsampling() {
    let set = ModelSet::bundled().expect("bundled NNEF models load");
    let plan = set.get(ModelKind::Detector).plan_for(352, 512).unwrap();
    fixture_support::assert_upsamplings_are_nearest(&plan, "352x512");
}

#[test]
fn the_nnef_ocr_trims_its_padding_columns() {
    let set = ModelSet::bundled().expect("bundled NNEF models load");
    let ocr = set.get(ModelKind::Ocr);
    assert!(ocr.trims_padding());
    // Text over the first 120 columns, one padding value after it, as the text reader pads a crop.
    let mut full = input(&[1, 1, 48, 320]);
    {
        let mut plain = full.try_as_plain_ram_mut().unwrap();
        let data = plain.as_slice_mut::<f32>().unwrap();
        for row in data.chunks_exact_mut(320) {
            row[120..].fill(0.3);
        }
    }
    let want = onnx_outputs(ModelKind::Ocr, &full).remove(0);
    let got = ocr.run_padded(full.slice(3, 0, 192).unwrap()).unwrap();
    let diff = max_abs_diff(&got, &want);
    assert!(diff <= 1e-4, "{diff}");
}

/// The NNEF OCR's batch is the symbol `N` (`netron-ocr-convert`), so its recurrent heads run in batches too
/// (`Model::run_padded_heads`): each crop gets the logits of its own `Model::run_padded`, bit for bit.
#[test]
fn the_nnef_ocr_runs_its_heads_in_batches() {
    let set = ModelSet::bundled().expect("bundled NNEF models load");
    let ocr = set.get(ModelKind::Ocr);
    let inputs: Vec<Tensor> = (0..11)
        .map(|k| {
            let mut t = input(&[1, 1, 48, 320]);
            {
                let mut plain = t.try_as_plain_ram_mut().unwrap();
                let data = plain.as_slice_mut::<f32>().unwrap();
                for (i, row) in data.chunks_exact_mut(320).enumerate() {
                    row[0] = (k * 48 + i) as f32 / 600.0;
                    row[100 + 10 * k..].fill(0.3);
                }
            }
            t.slice(3, 0, 192 + 32 * (k % 3)).unwrap()
        })
        .collect();
    let trunks: Vec<_> = (inputs.iter())
        .map(|t| ocr.run_padded_trunk(t.clone()).unwrap())
        .collect();
    let batched = ocr.run_padded_heads(&trunks).unwrap();
    for (i, (t, got)) in inputs.iter().zip(&batched).enumerate() {
        assert_eq!(got, &ocr.run_padded(t.clone()).unwrap(), "crop {i}");
    }
    // The converted graph's batch is free: its input is `[N, 1, 48, 32·w]`.
    let bytes = netron_ocr_convert_output(ModelKind::Ocr);
    let graph = tract_nnef::nnef().model_for_read(&mut &bytes[..]).unwrap();
    let batch = graph.input_fact(0).unwrap().shape[0].clone();
    assert!(
        batch.to_i64().is_err(),
        "the OCR's NNEF batch is {batch}, not a symbol"
    );
}

/// The NNEF detector also runs through its transposed graph (`Model::run_transposed`, used for tall tiles), with
/// the ONNX model's outputs up to float rounding.
#[test]
fn the_nnef_detector_runs_transposed() {
    let set = ModelSet::bundled().expect("bundled NNEF models load");
    let det = set.get(ModelKind::Detector);
    let x = input(&[1, 3, 512, 288]);
    let got = det.run_transposed(x.clone()).unwrap();
    let want = onnx_outputs(ModelKind::Detector, &x);
    assert_eq!(got.len(), want.len());
    for (name, (g, w)) in ModelKind::Detector
        .output_names()
        .iter()
        .zip(got.iter().zip(&want))
    {
        let d = max_abs_diff(g, w);
        assert!(d <= 1e-4, "{name}: max |transposed NNEF − ONNX| = {d}");
    }
}
