//! The classifier stage end to end on the fixture scenes: true title boxes → `Classifier::classify` with the
//! committed `models/classifier.onnx`.

mod fixture_support;

use image::RgbImage;
use netron_ocr_core::classify::{
    classifier_input, estimate_title_boxes, softmax, title_crop, title_input, title_input_with_pad,
    Classifier, ClassifyParams, INPUT_H, INPUT_W, TITLE_PAD,
};
use netron_ocr_core::graph::{BBox, Direction};
use netron_ocr_core::models::ModelKind;
use netron_ocr_core::vocab::Vocab;
use netron_ocr_core::ScanError;

/// Top-1 accuracy floor on the 80 fixture titles (true title boxes, screenshots and photos).
/// Measured 52/80 = 0.650 with the first CPU baseline (classifier.onnx a136f6e7…).
/// TODO(lead): raise with each better classifier (target ≥ 0.995 on held-out data).
const FIXTURE_MIN_TOP1: f32 = 0.6;
/// Floor on the fraction of fixture nodes whose top class is the same from the estimated title box
/// (`estimate_title_boxes` on the true card and label boxes) as from the true title box.
/// Measured 77/80 = 0.962 (top-1 53 from estimated boxes vs 52 from true ones) with classifier.onnx a136f6e7….
/// TODO(lead): re-measure with each new classifier.
const ESTIMATED_BOX_MIN_AGREEMENT: f32 = 0.9;

fn classifier(params: ClassifyParams) -> Classifier {
    let model = fixture_support::model(ModelKind::Classifier);
    Classifier::new(model, Vocab::bundled().unwrap(), params)
}

/// (image, title boxes, true ops) of every fixture image, titles as training selects them.
fn fixture_titles() -> Vec<(String, RgbImage, Vec<BBox>, Vec<String>)> {
    fixture_support::scenes()
        .into_iter()
        .map(|scene| {
            let (boxes, ops) = scene
                .truth()
                .nodes
                .iter()
                .filter_map(|n| Some((n.title_box?, n.op.clone()?)))
                .filter(|(b, _)| b.width() >= 4.0 && b.height() >= 4.0)
                .unzip();
            (scene.name.clone(), scene.image(), boxes, ops)
        })
        .collect()
}

#[test]
fn classifies_fixture_titles() {
    let clf = classifier(ClassifyParams::default());
    let (mut right, mut total) = (0usize, 0usize);
    for (name, img, boxes, ops) in fixture_titles() {
        let preds = clf.classify(&img, &boxes).unwrap();
        assert_eq!(preds.len(), boxes.len(), "{name}");
        for (p, truth) in preds.iter().zip(&ops) {
            assert!(
                p.index < 72 && (0.0..=1.0).contains(&p.confidence),
                "{name}: {p:?}"
            );
            assert_eq!(p.top.len(), 3);
            assert_eq!(p.top[0], (clf.vocab().ops[p.index].clone(), p.confidence));
            assert!(
                p.top.windows(2).all(|w| w[0].1 >= w[1].1),
                "{name}: top not sorted: {:?}",
                p.top
            );
            assert_eq!(p.op.is_some(), p.confidence >= clf.params().min_confidence);
            if let Some(op) = &p.op {
                assert_eq!(op, &clf.vocab().ops[p.index]);
            }
            right += usize::from(&clf.vocab().ops[p.index] == truth);
            total += 1;
        }
    }
    let top1 = right as f32 / total as f32;
    println!("fixture titles: top-1 {right}/{total} = {top1:.3}");
    assert!(total >= 30);
    assert!(
        top1 >= FIXTURE_MIN_TOP1,
        "top-1 {top1:.3} < {FIXTURE_MIN_TOP1}"
    );
}

#[test]
fn estimated_title_boxes_classify_like_true_ones() {
    let clf = classifier(ClassifyParams::default());
    let (mut same, mut total, mut right_true, mut right_est) = (0usize, 0usize, 0usize, 0usize);
    for scene in fixture_support::scenes() {
        let g = scene.truth();
        let img = scene.image();
        let cards: Vec<BBox> = g.nodes.iter().map(|n| n.bbox).collect();
        let labels: Vec<BBox> = g.tensors.iter().map(|t| t.bbox).collect();
        let est = estimate_title_boxes(&cards, &labels, g.direction.unwrap_or(Direction::Vertical));
        let (truth, (estimated, ops)): (Vec<BBox>, (Vec<BBox>, Vec<String>)) = g
            .nodes
            .iter()
            .zip(&est)
            .filter(|(n, _)| n.truncated != Some(true))
            .filter_map(|(n, e)| Some((n.title_box?, (*e, n.op.clone()?))))
            .unzip();
        let a = clf.classify(&img, &truth).unwrap();
        let b = clf.classify(&img, &estimated).unwrap();
        for ((a, b), op) in a.iter().zip(&b).zip(&ops) {
            same += usize::from(a.index == b.index);
            right_true += usize::from(&clf.vocab().ops[a.index] == op);
            right_est += usize::from(&clf.vocab().ops[b.index] == op);
            total += 1;
        }
    }
    let agreement = same as f32 / total as f32;
    println!(
        "estimated vs true title boxes: same class {same}/{total} = {agreement:.3}; top-1 {right_est} vs {right_true}"
    );
    assert!(total >= 30);
    assert!(
        agreement >= ESTIMATED_BOX_MIN_AGREEMENT,
        "agreement {agreement:.3}"
    );
}

#[test]
fn the_thread_count_does_not_change_the_answer() {
    let (_, img, boxes, _) = fixture_titles()
        .into_iter()
        .find(|t| t.2.len() >= 5)
        .unwrap();
    let one = classifier(ClassifyParams {
        threads: 1,
        ..Default::default()
    })
    .classify(&img, &boxes)
    .unwrap();
    let many = classifier(ClassifyParams {
        threads: 4,
        ..Default::default()
    })
    .classify(&img, &boxes)
    .unwrap();
    assert_eq!(one, many);
    // The crops run one by one (`Model::run_each`) answer as the rows of one stacked batch through `Model::run`.
    let stacked = fixture_support::model(ModelKind::Classifier)
        .run(classifier_input(&img, &boxes).unwrap())
        .unwrap();
    let logits = stacked[0].to_plain_array_view::<f32>().unwrap();
    assert_eq!(logits.shape(), [boxes.len(), 72]);
    for (row, p) in logits.outer_iter().zip(&many) {
        let probs = softmax(&row.iter().copied().collect::<Vec<_>>());
        assert!((probs[p.index] - p.confidence).abs() < 1e-6, "{p:?}");
        assert!(
            probs.iter().all(|&q| q <= p.confidence + 1e-6),
            "{p:?}: {probs:?}"
        );
    }
    // A threshold above every probability marks every node instead of guessing.
    let strict = classifier(ClassifyParams {
        min_confidence: 1.01,
        ..Default::default()
    });
    assert!(strict
        .classify(&img, &boxes)
        .unwrap()
        .iter()
        .all(|p| p.op.is_none()));
}

#[test]
fn several_pads_average_the_probabilities_of_their_crops() {
    let (_, img, boxes, _) = fixture_titles()
        .into_iter()
        .find(|t| t.2.len() >= 3)
        .unwrap();
    let boxes = &boxes[..3];
    let model = fixture_support::model(ModelKind::Classifier);
    let probs = |pad: f32, b: &BBox| -> Vec<f32> {
        let out = model
            .run(title_input_with_pad(&img, b, pad).unwrap())
            .unwrap();
        softmax(
            out[0]
                .to_plain_array_view::<f32>()
                .unwrap()
                .as_slice()
                .unwrap(),
        )
    };
    // The default is the MODEL.md crop alone; an empty list means the same.
    let default = classifier(ClassifyParams::default())
        .classify(&img, boxes)
        .unwrap();
    let empty = classifier(ClassifyParams {
        pads: &[],
        ..Default::default()
    })
    .classify(&img, boxes)
    .unwrap();
    assert_eq!(default, empty);
    for (p, b) in default.iter().zip(boxes) {
        assert_eq!(p.probs, probs(TITLE_PAD, b));
    }
    // Two pads: the mean of the two crops' probabilities, which differ.
    let two = classifier(ClassifyParams {
        pads: &[TITLE_PAD, 2.0],
        ..Default::default()
    })
    .classify(&img, boxes)
    .unwrap();
    for (p, b) in two.iter().zip(boxes) {
        let (a, c) = (probs(TITLE_PAD, b), probs(2.0, b));
        assert_ne!(a, c);
        for ((m, x), y) in p.probs.iter().zip(&a).zip(&c) {
            assert!((m - (x + y) / 2.0).abs() < 1e-6, "{m} vs {x}, {y}");
        }
    }
}

#[test]
fn input_tensor_layout() {
    let img = RgbImage::from_fn(200, 100, |x, _| {
        image::Rgb([if x < 100 { 255 } else { 0 }, 128, 0])
    });
    let b = [
        BBox::new(20.0, 20.0, 180.0, 60.0),
        BBox::new(150.0, 10.0, 199.0, 30.0),
    ];
    let t = classifier_input(&img, &b).unwrap();
    assert_eq!(t.shape(), &[2, 3, INPUT_H as usize, INPUT_W as usize]);
    let v = t.to_plain_array_view::<f32>().unwrap();
    // Crop 0 spans x 13..187: its left column is red (R = 255), its right column is not; channel 0 is R.
    let norm = |v: f32, c: usize| (v / 255.0 - [0.485, 0.456, 0.406][c]) / [0.229, 0.224, 0.225][c];
    assert!((v[[0, 0, 48, 0]] - norm(255.0, 0)).abs() < 1e-6);
    assert!((v[[0, 0, 48, 159]] - norm(0.0, 0)).abs() < 1e-6);
    assert!((v[[0, 1, 48, 80]] - norm(128.0, 1)).abs() < 1e-6);
    assert!((v[[1, 2, 10, 10]] - norm(0.0, 2)).abs() < 1e-6);
    // One crop's input is that crop's item of the stacked input.
    let second = title_input(&img, &b[1]).unwrap();
    assert_eq!(second.shape(), &[1, 3, INPUT_H as usize, INPUT_W as usize]);
    assert_eq!(second, t.slice(0, 1, 2).unwrap());
    // The crop is the padded box stretched: 7 px each side.
    let crop = title_crop(&img, &b[0]).unwrap();
    assert_eq!(crop.dimensions(), (INPUT_W, INPUT_H));
}

#[test]
fn bad_boxes_are_input_errors() {
    let clf = classifier(ClassifyParams::default());
    let img = RgbImage::new(50, 40);
    assert!(clf.classify(&img, &[]).unwrap().is_empty());
    for b in [
        BBox::new(f32::NAN, 0.0, 10.0, 10.0),
        BBox::new(10.0, 10.0, 5.0, 20.0),
        BBox::new(100.0, 100.0, 120.0, 110.0),
        BBox::new(-40.0, 5.0, -20.0, 10.0),
    ] {
        match clf.classify(&img, &[BBox::new(1.0, 1.0, 20.0, 10.0), b]) {
            Err(ScanError::Input {
                stage: "classifier",
                ..
            }) => {}
            other => panic!("{b:?}: {other:?}"),
        }
    }
    // Partly outside is fine: the crop is clipped.
    assert_eq!(
        clf.classify(&img, &[BBox::new(-5.0, 30.0, 70.0, 45.0)])
            .unwrap()
            .len(),
        1
    );
    // A box of no height or width inside the image still cuts a crop: the padding cap leaves at least 1 px.
    for b in [
        BBox::new(10.0, 20.0, 30.0, 20.0),
        BBox::new(10.0, 20.0, 10.0, 26.0),
    ] {
        assert_eq!(clf.classify(&img, &[b]).unwrap().len(), 1, "{b:?}");
    }
}
