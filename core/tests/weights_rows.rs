//! Weight rows of node cards (`weights::row_rects`, `shared_headers`, `RowRect::trim`, `parse_row`): synthetic rolled cards, the
//! fixture scenes' ground truth, and row texts.

mod fixture_support;

use image::{Rgb, RgbImage};
use netron_ocr_core::graph::{BBox, Dim};
use netron_ocr_core::models::OP_ROWS_JSON;
use netron_ocr_core::weights::{
    fitted_rows, parse_row, row_rects, row_rects_zoomed, shared_headers, title_zoom, OpRows,
    RowCount, RowFit, RowName,
};
use serde_json::Value;

/// Corners of a screen rectangle rotated by `deg` about its centre, and their axis-aligned box.
fn rolled(cx: f64, cy: f64, w: f64, h: f64, dx: f64, dy: f64, deg: f64) -> (f64, f64, BBox) {
    let (s, c) = deg.to_radians().sin_cos();
    let pts = [
        (-w / 2.0, -h / 2.0),
        (w / 2.0, -h / 2.0),
        (w / 2.0, h / 2.0),
        (-w / 2.0, h / 2.0),
    ]
    .map(|(u, v)| (u + dx, v + dy))
    .map(|(u, v)| (cx + u * c - v * s, cy + u * s + v * c));
    let xs = pts.map(|p| p.0);
    let ys = pts.map(|p| p.1);
    let min = |a: [f64; 4]| a.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |a: [f64; 4]| a.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let b = BBox::new(
        min(xs) as f32,
        min(ys) as f32,
        max(xs) as f32,
        max(ys) as f32,
    );
    (cx + dx * c - dy * s, cy + dx * s + dy * c, b)
}

#[test]
fn rows_of_a_rolled_card_follow_netron_geometry() {
    let z = 1.5;
    for (rows, deg) in [(1usize, 0.0), (3, 0.0), (3, 4.0), (5, -6.0)] {
        let (w, h) = (90.0 * z, (26.0 + 12.0 * rows as f64) * z);
        let (_, _, card) = rolled(400.0, 300.0, w, h, 0.0, 0.0, deg);
        // The title box as `estimate_title_boxes` gives it: the card's top, header's axis-aligned extent tall.
        let s = deg.to_radians().sin().abs();
        let title_h = 20.0 * z * deg.to_radians().cos() + w * s;
        let title = BBox::new(card.x0, card.y0, card.x1, card.y0 + title_h as f32);
        let got: Vec<BBox> = row_rects(&card, &title, deg, 16)
            .iter()
            .map(|r| r.bbox())
            .collect();
        assert_eq!(got.len(), rows, "{rows} rows at {deg}°");
        for (i, b) in got.iter().enumerate() {
            let v = -h / 2.0 + (24.0 + 12.0 * i as f64 + 5.0) * z;
            let (ex, ey, want) = rolled(400.0, 300.0, w - 12.0 * z, 10.0 * z, 0.0, v, deg);
            let c = b.center();
            assert!(
                (f64::from(c.x) - ex).abs() < 0.5 && (f64::from(c.y) - ey).abs() < 0.5,
                "row {i} at {deg}°: {b:?} vs {want:?}"
            );
            assert!(b.iou(&want) > 0.97, "row {i} at {deg}°: {b:?} vs {want:?}");
        }
    }
}

#[test]
fn a_card_takes_its_neighbours_header_height() {
    let z = 1.5;
    for deg in [0.0f64, 5.0] {
        let s = deg.to_radians().sin().abs();
        let c = deg.to_radians().cos();
        // Five cards in a column, 2, 0, 4, 1 and 3 rows, one zoom; the third card's header estimate is 20% short.
        let mut cards = Vec::new();
        let mut titles = Vec::new();
        for (k, rows) in [2usize, 0, 4, 1, 3].into_iter().enumerate() {
            let h = if rows == 0 {
                20.0
            } else {
                26.0 + 12.0 * rows as f64
            } * z;
            let w = 90.0 * z;
            let (_, _, card) = rolled(400.0, 100.0 + 150.0 * k as f64, w, h, 0.0, 0.0, deg);
            let header = if k == 2 { 16.0 } else { 20.0 } * z;
            let title_h = (header * c + w * s) as f32;
            titles.push(BBox::new(card.x0, card.y0, card.x1, card.y0 + title_h));
            cards.push(card);
        }
        let shared = shared_headers(&cards, &titles, deg, 5);
        assert_ne!(
            row_rects(&cards[2], &titles[2], deg, 16).len(),
            4,
            "the short header miscounts at {deg}°"
        );
        for (k, rows) in [2usize, 0, 4, 1, 3].into_iter().enumerate() {
            let want = if k == 2 {
                20.0 * z * c + 90.0 * z * s
            } else {
                f64::from(titles[k].height())
            };
            assert!(
                (f64::from(shared[k].height()) - want).abs() < 1e-3,
                "card {k} at {deg}°: {:?}",
                shared[k]
            );
            assert_eq!(
                (shared[k].x0, shared[k].y0, shared[k].x1),
                (titles[k].x0, titles[k].y0, titles[k].x1)
            );
            assert_eq!(
                row_rects(&cards[k], &shared[k], deg, 16).len(),
                rows,
                "card {k} at {deg}°"
            );
        }
        // Only the nearest cards vote: with two, the short card's header is the mean of its own and one other.
        let pair = shared_headers(&cards, &titles, deg, 2);
        assert!(f64::from(pair[2].height()) < 20.0 * z * c + 90.0 * z * s - 0.5);
    }
}

#[test]
fn rows_below_a_seen_header_edge_follow_the_given_zoom() {
    let z = 1.5;
    // A card with 3 rows at z = 1.5, its detector box 8 px too tall at the top; the header edge is known.
    let (top, w) = (100.0f32, 135.0f32);
    let h = ((26.0 + 36.0) * z) as f32;
    let card = BBox::new(50.0, top - 8.0, 50.0 + w, top + h);
    let header = BBox::new(50.0, top - 8.0, 50.0 + w, top + (20.0 * z) as f32);
    let rows = row_rects_zoomed(&card, &header, Some(z), 0.0, 16);
    assert_eq!(rows.len(), 3);
    for (i, r) in rows.iter().enumerate() {
        let b = r.bbox();
        let y0 = f64::from(top) + (24.0 + 12.0 * i as f64) * z;
        assert!(
            (f64::from(b.y0) - y0).abs() < 1e-3 && (f64::from(b.height()) - 10.0 * z).abs() < 1e-3,
            "row {i}: {b:?}"
        );
    }
    // Its own header height gives a zoom 27% too large: the rows drift off their text.
    let own = row_rects(&card, &header, 0.0, 16);
    assert!((f64::from(own[1].bbox().y0) - (f64::from(top) + 36.0 * z)).abs() > 3.0);
    // Without a zoom, or with a useless one, it is `row_rects`.
    for zoom in [None, Some(f64::NAN), Some(0.0)] {
        let same: Vec<BBox> = row_rects_zoomed(&card, &header, zoom, 0.0, 16)
            .iter()
            .map(|r| r.bbox())
            .collect();
        let want: Vec<BBox> = own.iter().map(|r| r.bbox()).collect();
        assert_eq!(same, want);
    }
    // The zoom a title box gives, with and without a roll.
    assert!((title_zoom(&card, &header, 0.0).unwrap() - (20.0 * z + 8.0) / 20.0).abs() < 1e-4);
    let (_, _, rolled_card) = rolled(400.0, 300.0, 90.0 * z, 62.0 * z, 0.0, 0.0, 4.0);
    let s = 4f64.to_radians().sin();
    let title_h = 20.0 * z * 4f64.to_radians().cos() + 90.0 * z * s;
    let rolled_title = BBox::new(
        rolled_card.x0,
        rolled_card.y0,
        rolled_card.x1,
        rolled_card.y0 + title_h as f32,
    );
    assert!((title_zoom(&rolled_card, &rolled_title, 4.0).unwrap() - z).abs() < 1e-3);
    assert_eq!(title_zoom(&card, &header, 40.0), None);
}

#[test]
fn a_row_extended_left_keeps_its_right_end_and_height() {
    let z = 1.5;
    let (_, _, card) = rolled(400.0, 300.0, 90.0 * z, 50.0 * z, 0.0, 0.0, 0.0);
    let title = BBox::new(card.x0, card.y0, card.x1, card.y0 + (20.0 * z) as f32);
    let row = row_rects(&card, &title, 0.0, 16)[0];
    let wider = row.extended_left(0.3);
    let (a, b) = (row.bbox(), wider.bbox());
    assert!(
        (f64::from(a.x0 - b.x0) - 3.0 * z).abs() < 1e-3,
        "{a:?} vs {b:?}"
    );
    assert_eq!((a.y0, a.x1, a.y1), (b.y0, b.x1, b.y1));
    assert_eq!(row.extended_left(0.0), row);
}

#[test]
fn shared_headers_leave_bad_input_alone() {
    let cards = [
        BBox::new(0.0, 0.0, 100.0, 74.0),
        BBox::new(0.0, 200.0, 100.0, 220.0),
        BBox::new(f32::NAN, 0.0, 1.0, 1.0),
    ];
    let titles = [
        BBox::new(0.0, 0.0, 100.0, 16.0),
        BBox::new(0.0, 200.0, 100.0, 220.0),
        BBox::new(0.0, 0.0, 1.0, 1.0),
    ];
    assert_eq!(
        shared_headers(&cards, &titles, 0.0, 1),
        titles.to_vec(),
        "one neighbour: own"
    );
    assert_eq!(
        shared_headers(&cards, &titles, 45.0, 5),
        titles.to_vec(),
        "roll too large"
    );
    assert_eq!(
        shared_headers(&cards[..1], &titles[..1], 0.0, 5),
        titles[..1].to_vec(),
        "one card"
    );
    let got = shared_headers(&cards, &titles, 0.0, 5);
    assert_eq!(
        got[2], titles[2],
        "the unusable card keeps its title and does not vote"
    );
    assert_eq!(got[0].height(), 18.0, "median of two: their mean");
    assert!(shared_headers(&[], &[], 0.0, 5).is_empty());
}

#[test]
fn cards_without_rows_and_bad_boxes_give_nothing() {
    let card = BBox::new(10.0, 10.0, 60.0, 30.0);
    assert!(row_rects(&card, &card, 0.0, 16).is_empty(), "all header");
    let nan = BBox::new(f32::NAN, 0.0, 1.0, 1.0);
    assert!(row_rects(&nan, &card, 0.0, 16).is_empty());
    assert!(row_rects(&card, &nan, 0.0, 16).is_empty());
    assert!(row_rects(&card, &card, f64::NAN, 16).is_empty());
    let tall = BBox::new(0.0, 0.0, 100.0, 2000.0);
    let title = BBox::new(0.0, 0.0, 100.0, 20.0);
    assert_eq!(row_rects(&tall, &title, 0.0, 16).len(), 16, "capped");
    assert!(
        row_rects(&tall, &title, 45.0, 16).is_empty(),
        "roll too large"
    );
}

#[test]
fn fixture_screenshot_rows_match_the_truth() {
    let mut checked = 0;
    for scene in fixture_support::scenes()
        .iter()
        .filter(|s| s.kind == "shot")
    {
        let raw: Value =
            serde_json::from_str(&std::fs::read_to_string(&scene.truth_path).unwrap()).unwrap();
        let truth = scene.truth();
        for (n, rn) in truth.nodes.iter().zip(raw["nodes"].as_array().unwrap()) {
            let attrs = rn["attributes"].as_array().map_or(0, Vec::len);
            let (Some(title), false) = (n.title_box, n.truncated.unwrap_or(false)) else {
                continue;
            };
            let got: Vec<BBox> = row_rects(&n.bbox, &title, 0.0, 16)
                .iter()
                .map(|r| r.bbox())
                .collect();
            assert_eq!(
                got.len(),
                n.weights.len() + attrs,
                "{} {}",
                scene.name,
                n.id
            );
            for (b, w) in got.iter().zip(&n.weights) {
                let t = w.bbox.unwrap();
                assert!(
                    (b.y0 - t.y0).abs() < 1.0
                        && (b.y1 - t.y1).abs() < 1.0
                        && (b.x0 - t.x0).abs() < 1.0,
                    "{} {}: {b:?} vs {t:?}",
                    scene.name,
                    n.id
                );
                assert!(b.x1 >= t.x1 - 1.0, "the row covers the text");
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} rows checked");
}

#[test]
fn fixture_screenshot_rows_trim_to_their_text() {
    let mut checked = 0;
    for scene in fixture_support::scenes()
        .iter()
        .filter(|s| s.kind == "shot")
    {
        let image = scene.image();
        for n in scene.truth().nodes {
            let (Some(title), false) = (n.title_box, n.truncated.unwrap_or(false)) else {
                continue;
            };
            for (r, w) in row_rects(&n.bbox, &title, 0.0, 16).iter().zip(&n.weights) {
                let t = w.bbox.unwrap();
                let b = r.bbox();
                let trimmed = r.trim(&image, 0.35).bbox();
                let margin = b.height() / 2.0;
                assert!(
                    trimmed.x1 >= t.x1 - 1.0 && trimmed.x1 <= t.x1 + margin + 1.5,
                    "{} {}: trimmed {trimmed:?}, text {t:?}",
                    scene.name,
                    n.id
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} rows checked");
}

#[test]
fn trim_keeps_flat_rows_and_cuts_after_the_ink() {
    let mut img = RgbImage::from_pixel(200, 40, Rgb([250, 250, 250]));
    let title = BBox::new(0.0, 0.0, 200.0, 20.0);
    let card = BBox::new(0.0, 0.0, 200.0, 38.0); // z = 1: one row, text at y 24..34, x 6..194
    let rects = row_rects(&card, &title, 0.0, 16);
    assert_eq!(rects.len(), 1);
    let row = rects[0];
    assert_eq!(row.trim(&img, 0.35), row, "no ink: unchanged");
    for x in 20..70 {
        for y in 26..32 {
            img.put_pixel(x, y, Rgb([40, 40, 40]));
        }
    }
    let t = row.trim(&img, 0.35).bbox();
    assert_eq!((t.x0, t.y0, t.y1), (6.0, 24.0, 34.0));
    assert!((t.x1 - (70.0 + 5.0)).abs() < 0.01, "{t:?}");
    let far = RgbImage::from_pixel(10, 10, Rgb([0, 0, 0]));
    assert_eq!(row.trim(&far, 0.35), row, "outside the image: unchanged");
}

/// A light-theme card drawn as Netron does at zoom `z` (header 20z; each row's glyphs 7z tall from 1.5z into
/// its 10z text box, which starts 6z in; the card ending 6z below its last row, with a 1-px border) with `rows`
/// rows on a white canvas; returns the image and the card's exact box.
fn drawn_card(z: f64, rows: usize) -> (RgbImage, BBox) {
    let mut img = RgbImage::from_pixel(400, 400, Rgb([252, 252, 252]));
    let (x0, y0, w) = (60.0, 40.0, 90.0 * z);
    let h = (28.0 + 12.0 * rows as f64) * z;
    let px = |v: f64| v.round() as u32;
    for y in px(y0)..px(y0 + h) {
        for x in px(x0)..px(x0 + w) {
            let header = f64::from(y) < y0 + 20.0 * z;
            img.put_pixel(
                x,
                y,
                if header {
                    Rgb([50, 90, 160])
                } else {
                    Rgb([255, 255, 255])
                },
            );
        }
    }
    for x in px(x0)..px(x0 + w) {
        img.put_pixel(x, px(y0 + h) - 1, Rgb([120, 120, 120]));
    }
    for i in 0..rows {
        // Glyphs: 4z-wide strokes with 1.5z gaps, 5 to 9 of them.
        let top = y0 + (20.0 + 4.0 + 12.0 * i as f64 + 1.5) * z;
        for g in 0..(5 + i % 5) {
            let left = x0 + 6.0 * z + g as f64 * 5.5 * z;
            for y in px(top)..px(top + 7.0 * z) {
                for x in px(left)..px(left + 4.0 * z) {
                    img.put_pixel(x, y, Rgb([40, 40, 40]));
                }
            }
        }
    }
    let card = BBox::new(x0 as f32, y0 as f32, (x0 + w) as f32, (y0 + h) as f32);
    (img, card)
}

#[test]
fn rows_fitted_to_the_ink_land_on_their_text() {
    for (z, rows) in [(1.5, 4usize), (1.0, 3), (2.0, 2)] {
        let (img, card) = drawn_card(z, rows);
        // The zoom 8% too large, the header edge 2z too low: Netron's geometry misses the rows.
        let zoom = z * 1.08;
        let title = BBox::new(card.x0, card.y0, card.x1, card.y0 + (22.0 * z) as f32);
        let boxed = row_rects_zoomed(&card, &title, Some(zoom), 0.0, 16);
        let fit = RowFit::default();
        let got = fitted_rows(&img, &card, &title, Some(zoom), 0.0, 16, &fit);
        assert_eq!(got.len(), boxed.len(), "z {z}: the box's count");
        let truth_top = |i: usize| f64::from(card.y0) + (24.0 + 12.0 * i as f64) * z;
        for (i, r) in got.iter().enumerate() {
            let b = r.bbox();
            assert!(
                (f64::from(b.y0) - truth_top(i)).abs() <= 0.6 * z,
                "z {z} row {i}: {b:?}, text at {}",
                truth_top(i)
            );
        }
        let last = boxed.len() - 1;
        assert!(
            (f64::from(boxed[last].bbox().y0) - truth_top(last)).abs() > 2.0 * z,
            "z {z}: the geometry alone is off"
        );
        // A box 9z short holds a row less; counting by ink finds it, and the border below is no row.
        let short = BBox::new(card.x0, card.y0, card.x1, card.y1 - (9.0 * z) as f32);
        let count = |b: &BBox, count| {
            let fit = RowFit { count, ..fit };
            fitted_rows(&img, b, &title, Some(zoom), 0.0, 16, &fit).len()
        };
        assert_eq!(count(&short, RowCount::Box), rows - 1, "z {z}");
        assert_eq!(count(&short, RowCount::Add), rows, "z {z}");
        assert_eq!(count(&short, RowCount::Ink), rows, "z {z}");
        assert_eq!(count(&card, RowCount::Add), rows, "z {z}: border");
        assert_eq!(count(&card, RowCount::Ink), rows, "z {z}: border");
    }
    // A box a row too tall: `Ink` finds the blank slot.
    let (img, card) = drawn_card(1.0, 2);
    let title = BBox::new(card.x0, card.y0, card.x1, card.y0 + 20.0);
    let tall = BBox::new(card.x0, card.y0, card.x1, card.y1 + 12.0);
    let ink = RowFit {
        count: RowCount::Ink,
        ..RowFit::default()
    };
    assert_eq!(
        fitted_rows(&img, &tall, &title, Some(1.0), 0.0, 16, &ink).len(),
        2
    );
    // No ink in sight, or a header alone: Netron's geometry, unchanged.
    let blank = RgbImage::from_pixel(400, 400, Rgb([250, 250, 250]));
    let (_, card) = drawn_card(1.5, 3);
    let title = BBox::new(card.x0, card.y0, card.x1, card.y0 + 30.0);
    assert_eq!(
        fitted_rows(&blank, &card, &title, Some(1.4), 0.0, 16, &ink),
        row_rects_zoomed(&card, &title, Some(1.4), 0.0, 16)
    );
    let (img, card) = drawn_card(1.0, 0);
    let header_only = BBox::new(card.x0, card.y0, card.x1, card.y0 + 21.0);
    let title = BBox::new(card.x0, card.y0, card.x1, card.y0 + 20.0);
    assert!(fitted_rows(&img, &header_only, &title, Some(1.0), 0.0, 16, &ink).is_empty());
}

#[test]
fn row_texts_become_weights() {
    let w = parse_row("W〈64×3×7×7〉", None).unwrap();
    assert_eq!((w.name.as_str(), w.text.as_str()), ("W", "64×3×7×7"));
    assert_eq!(
        w.shape,
        Some(vec![Dim::Int(64), Dim::Int(3), Dim::Int(7), Dim::Int(7)])
    );
    let b = parse_row(" B = 0.5 ", None).unwrap();
    assert_eq!(
        (b.name.as_str(), b.text.as_str(), b.shape),
        ("B", "0.5", None)
    );
    let k = parse_row("kernel_shape = 3, 3", None).unwrap();
    assert_eq!((k.name.as_str(), k.text.as_str()), ("kernel_shape", "3, 3"));
    let cut = parse_row("scale〈64", None).unwrap();
    assert_eq!(cut.text, "64", "a lost closing bracket is tolerated");
    assert!(parse_row("", None).is_none());
    assert!(parse_row("〈64〉", None).is_none());
    assert!(parse_row("Conv", None).is_none());
}

#[test]
fn row_names_tell_inputs_from_attributes_and_mend_misreadings() {
    let rows = OpRows::from_json(OP_ROWS_JSON).expect("bundled op_rows.json parses");
    let input = |s: &str| RowName::Input(s.to_owned());
    // Misreadings seen on the development split's screenshots.
    for (op, read, want) in [
        ("Conv", "W", input("W")),
        ("Conv", "strdes", RowName::Attribute),
        ("Conv", "lemel_shape", RowName::Attribute),
        ("DequantizeLinear", "axs", RowName::Attribute),
        ("DequantizeLinear", "x_scale", input("x_scale")),
        ("BatchNormalization", "epsion", RowName::Attribute),
        ("BatchNormalization", "input_mean", input("input_mean")),
        // An older opset's name (Netron shows `mean` before opset 14).
        ("BatchNormalization", "mean", input("mean")),
        ("Slice", "aoxes", input("axes")),
        ("Gather", "andices", input("indices")),
        ("LayerNormalization", "Sscale", input("Scale")),
        // Single characters: exact only.
        ("Gemm", "D", RowName::Unknown),
        // Too far from every name, an empty name, an operator not listed.
        ("Conv", "zzzzzz", RowName::Unknown),
        ("Conv", " ", RowName::Unknown),
        ("NotAnOp", "W", RowName::Unknown),
    ] {
        assert_eq!(rows.name(op, read), want, "{op} {read:?}");
    }
    // `mix` is one edit from both `min` and `max`: a tie says nothing.
    assert_eq!(rows.name("Clip", "mix"), RowName::Unknown);
    assert_eq!(
        rows.get("Conv").map(|r| &r.inputs[..]),
        Some(&["X".to_owned(), "W".to_owned(), "B".to_owned()][..])
    );
}

#[test]
fn a_card_s_row_names_are_mended_by_schema_order() {
    let rows = OpRows::from_json(OP_ROWS_JSON).expect("bundled op_rows.json parses");
    let name_rows = |op: &str, reads: &[&str]| {
        let alone: Vec<RowName> = reads.iter().map(|r| rows.name(op, r)).collect();
        rows.mend_row_order(op, reads, &alone)
    };
    let input = |s: &str| RowName::Input(s.to_owned());
    let bn = "BatchNormalization";
    // Seen on the development split: `input_mean` read as `input_var` above the true `input_var`.
    assert_eq!(
        name_rows(bn, &["scale", "B", "input_var", "input_var"]),
        [
            input("scale"),
            input("B"),
            input("input_mean"),
            input("input_var")
        ]
    );
    // The misread row below: the lower row takes the free name after the repeated one.
    assert_eq!(
        name_rows(bn, &["scale", "B", "input_mean", "input_mean"]),
        [
            input("scale"),
            input("B"),
            input("input_mean"),
            input("input_var")
        ]
    );
    // A repeat whose free name is too far from the reading stays (`B` is 5 edits from `scale`).
    assert_eq!(
        name_rows(bn, &["scale", "scale", "input_mean", "input_var"]),
        [
            input("scale"),
            input("scale"),
            input("input_mean"),
            input("input_var")
        ]
    );
    // An unknown reading between two named rows takes the one free name there, when near enough.
    assert_eq!(rows.name("Slice", "aoxxes"), RowName::Unknown);
    assert_eq!(
        name_rows("Slice", &["starts", "ends", "aoxxes", "steps"]),
        [
            input("starts"),
            input("ends"),
            input("axes"),
            input("steps")
        ]
    );
    assert_eq!(
        name_rows("Slice", &["starts", "mds"]),
        [input("starts"), input("ends")]
    );
    assert_eq!(
        name_rows("Slice", &["starts", "ends", "zzzzz", "steps"]),
        [
            input("starts"),
            input("ends"),
            RowName::Unknown,
            input("steps")
        ]
    );
    // A reading as near an attribute (`axis`) as the free input is not moved.
    assert_eq!(name_rows("ArgMax", &["dais"]), [RowName::Unknown]);
    // Nothing repeated or unknown: each row as read alone, attribute rows included.
    assert_eq!(
        name_rows("Conv", &["W", "B", "strides"]),
        [input("W"), input("B"), RowName::Attribute]
    );
    // Only the upper row can move up the schema and keep the order.
    assert_eq!(
        name_rows(bn, &["input_var", "input_var"]),
        [input("input_mean"), input("input_var")]
    );
    // A variadic input repeats its name, and there is no other name to move to.
    assert_eq!(
        name_rows("Concat", &["inputs", "inputs"]),
        [input("inputs"), input("inputs")]
    );
    // The free name must be near the reading: `B` is one edit from `W`, but ⌊1 / 2⌋ = 0.
    assert_eq!(name_rows("Conv", &["W", "W"]), [input("W"), input("W")]);
}

#[test]
fn op_rows_refuse_bad_files() {
    assert!(OpRows::from_json("not json").is_err());
    assert!(OpRows::from_json(r#"{"version": 2, "operators": {}}"#).is_err());
    assert!(OpRows::from_json(
        r#"{"version": 1, "operators": {"Conv": {"inputs": [""], "attributes": []}}}"#
    )
    .is_err());
    let ok = OpRows::from_json(
        r#"{"version": 1, "operators": {"Conv": {"inputs": ["W"], "attributes": []}}}"#,
    );
    assert_eq!(
        ok.expect("parses").name("Conv", "W"),
        RowName::Input("W".to_owned())
    );
}
