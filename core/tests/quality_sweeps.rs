//! Degradation sweeps on synthetic Netron-like screens: blur, exposure, glare, motion, framing.

mod quality_support;

use image::RgbImage;
use netron_ocr_core::frame::{FrameInfo, PixelFormat, Rotation};
use netron_ocr_core::quality::{
    assess_frame, assess_rgb, FrameGate, FrameQuality, Hint, QualityParams,
};
use quality_support::{blur, exposure, glare_sweep, netron_screen, shift, show, to_nv21};

const W: u32 = 1920;
const H: u32 = 1080;

fn light() -> RgbImage {
    netron_screen(W, H, false, 7)
}

fn dark() -> RgbImage {
    netron_screen(W, H, true, 11)
}

/// A camera rarely clips a white screen: the same screen exposed so white lands at 216.
fn photo_like(img: &RgbImage) -> RgbImage {
    exposure(img, 0.85, 0.0)
}

#[test]
fn clean_screens_are_accepted() {
    let p = QualityParams::default();
    for (name, img) in [
        ("light", light()),
        ("dark", dark()),
        ("light photo", photo_like(&light())),
    ] {
        let q = assess_rgb(&img, &p);
        show(name, &q);
        assert!(q.accept, "{name}: {q:?}");
        assert!(q.hints.is_empty(), "{name}: {:?}", q.hints);
        assert!(q.score > 0.5, "{name}: score {}", q.score);
    }
}

#[test]
fn blur_sweep_lowers_sharpness_monotonically_and_flips_accept() {
    let p = QualityParams::default();
    for (name, img) in [("light", photo_like(&light())), ("dark", dark())] {
        let mut prev = f32::INFINITY;
        let mut accepts = Vec::new();
        for r in [0usize, 1, 2, 3, 4, 6, 8, 12] {
            let q = assess_rgb(&blur(&img, r), &p);
            show(&format!("{name} blur r={r}"), &q);
            assert!(
                q.sharpness < prev,
                "{name}: sharpness {} at r={r} not below {prev}",
                q.sharpness
            );
            prev = q.sharpness;
            assert_eq!(
                q.accept,
                !q.hints.contains(&Hint::TooBlurry),
                "{name} r={r}: {:?}",
                q.hints
            );
            accepts.push(q.accept);
        }
        assert!(accepts[0], "{name}: the sharp screen must pass");
        assert!(
            !accepts[accepts.len() - 1],
            "{name}: the most blurred screen must fail"
        );
        let flips = accepts.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(
            flips, 1,
            "{name}: accept must flip exactly once: {accepts:?}"
        );
    }
}

#[test]
fn exposure_sweep_gives_dark_and_bright_hints_at_the_ends() {
    let p = QualityParams::default();
    let img = light();
    let mut dark_hints = Vec::new();
    for scale in [0.1f32, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0] {
        let q = assess_rgb(&exposure(&img, scale, 0.0), &p);
        show(&format!("scale {scale}"), &q);
        dark_hints.push(q.hints.contains(&Hint::TooDark));
        assert!(!q.hints.contains(&Hint::TooBright));
    }
    assert!(dark_hints[0] && dark_hints[1], "{dark_hints:?}");
    assert!(!dark_hints[5] && !dark_hints[6], "{dark_hints:?}");
    assert!(
        dark_hints.windows(2).all(|w| w[0] || !w[1]),
        "TooDark must only fade out as light grows: {dark_hints:?}"
    );

    let mut bright_hints = Vec::new();
    for offset in [0f32, 40.0, 80.0, 120.0, 160.0, 200.0, 255.0] {
        let q = assess_rgb(&exposure(&img, 1.0, offset), &p);
        show(&format!("offset {offset}"), &q);
        bright_hints.push(q.hints.contains(&Hint::TooBright));
        assert!(!q.hints.contains(&Hint::TooDark));
    }
    assert!(!bright_hints[0] && !bright_hints[1], "{bright_hints:?}");
    assert!(bright_hints[5] && bright_hints[6], "{bright_hints:?}");
    assert!(
        bright_hints.windows(2).all(|w| !w[0] || w[1]),
        "TooBright must persist as light grows: {bright_hints:?}"
    );
}

#[test]
fn dark_theme_is_not_too_dark() {
    let q = assess_rgb(&dark(), &QualityParams::default());
    assert!(!q.hints.contains(&Hint::TooDark), "{q:?}");
    let q = assess_rgb(&exposure(&dark(), 0.3, 0.0), &QualityParams::default());
    assert!(q.hints.contains(&Hint::TooDark), "{q:?}");
}

#[test]
fn white_screenshot_is_not_glare() {
    let p = QualityParams::default();
    let img = light();
    let q = assess_rgb(&img, &p);
    assert!(
        q.exposure.clipped_bright > 0.5,
        "the fixture should be mostly clipped white: {q:?}"
    );
    assert_eq!(q.glare, 0.0, "{q:?}");
    assert!(!q.hints.contains(&Hint::ReduceGlare));
    // Clipped white canvas next to sharp dark and grey bands (taskbar, browser chrome), and blurred: no glare.
    let mut framed = img.clone();
    for (x, y, p) in framed.enumerate_pixels_mut() {
        if y >= H - 60 {
            *p = image::Rgb([40, 40, 45]);
        } else if y < 50 {
            *p = image::Rgb([128, 128, 128]);
        } else if x < 8 {
            *p = image::Rgb([0, 0, 0]);
        }
    }
    for (name, g) in [
        ("framed", framed.clone()),
        ("framed blurred", blur(&framed, 6)),
        ("blurred", blur(&img, 4)),
    ] {
        let q = assess_rgb(&g, &p);
        show(name, &q);
        assert_eq!(q.glare, 0.0, "{name}: {q:?}");
    }
    // A blank white frame is no glare either (and has nothing to read).
    let blank = RgbImage::from_pixel(W, H, image::Rgb([255, 255, 255]));
    let q = assess_rgb(&blank, &p);
    assert_eq!(q.glare, 0.0, "{q:?}");
    assert!(!q.accept);
}

#[test]
fn glare_sweep_raises_glare_and_asks_to_reduce_it() {
    let p = QualityParams::default();
    // On a dark screen a reflection must be stronger to clip.
    for (name, img, strength) in [
        ("light photo", photo_like(&light()), 1.0),
        ("dark", dark(), 1.6),
    ] {
        let sweep = glare_sweep(name, &img, (1100.0, 450.0), strength, &p);
        let hinted: Vec<bool> = sweep.iter().map(|s| s.1).collect();
        assert!(!hinted[0] && !hinted[1], "{name}: {hinted:?}");
        assert!(hinted[4] && hinted[5], "{name}: {hinted:?}");
        let last = sweep[sweep.len() - 1].0;
        assert!(last > 2.0 * p.max_glare, "{name}: glare {last}");
    }
}

fn nv21_info() -> FrameInfo {
    FrameInfo::tight(PixelFormat::Nv21, W, H, Rotation::R0)
}

#[test]
fn nv21_fast_path_matches_rgb_path() {
    let p = QualityParams::default();
    let img = photo_like(&light());
    let rgb = assess_rgb(&img, &p);
    let yuv = assess_frame(&to_nv21(&img), &nv21_info(), &p).unwrap();
    show("rgb", &rgb);
    show("nv21", &yuv);
    assert_eq!(rgb.accept, yuv.accept);
    assert_eq!(rgb.hints, yuv.hints);
    assert!(
        (rgb.sharpness - yuv.sharpness).abs() <= 0.02 * rgb.sharpness,
        "{} vs {}",
        rgb.sharpness,
        yuv.sharpness
    );
    assert!((rgb.exposure.mean - yuv.exposure.mean).abs() < 0.005);
}

#[test]
fn gate_stability_identical_shifted_and_exposure_drift() {
    let p = QualityParams::default();
    let img = photo_like(&light());
    let info = nv21_info();
    let mut gate = FrameGate::new(p.clone());

    let first = gate.push_frame(&to_nv21(&img), &info).unwrap();
    assert_eq!(first.stability, None);
    assert!(first.accept, "{first:?}");

    let same = gate.push_frame(&to_nv21(&img), &info).unwrap();
    show("same", &same);
    assert!(same.stability.unwrap() > 0.999, "{same:?}");
    assert!(same.accept && !same.hints.contains(&Hint::HoldSteady));

    // Auto-exposure drift alone is not motion.
    let drift = gate
        .push_frame(&to_nv21(&exposure(&img, 1.0, 12.0)), &info)
        .unwrap();
    show("drift", &drift);
    assert!(!drift.hints.contains(&Hint::HoldSteady), "{drift:?}");

    let mut prev_stab = 1.0f32;
    for dx in [4i64, 16, 48, 96] {
        gate.push_frame(&to_nv21(&img), &info).unwrap();
        let moved = gate
            .push_frame(&to_nv21(&shift(&img, dx, dx / 2)), &info)
            .unwrap();
        show(&format!("shift {dx}"), &moved);
        let s = moved.stability.unwrap();
        assert!(
            s < prev_stab,
            "stability must fall as the shift grows: {s} at {dx}"
        );
        prev_stab = s;
    }
    assert!(
        prev_stab < 1.0 - p.max_motion,
        "a 96 px jump must be unstable: {prev_stab}"
    );
    gate.push_frame(&to_nv21(&img), &info).unwrap();
    let jumped = gate
        .push_frame(&to_nv21(&shift(&img, 96, 48)), &info)
        .unwrap();
    assert!(
        jumped.hints.contains(&Hint::HoldSteady) && !jumped.accept,
        "{jumped:?}"
    );

    gate.reset();
    let after_reset = gate.push_rgb(&img);
    assert_eq!(after_reset.stability, None);
}

#[test]
fn framing_heuristic_far_and_close() {
    let p = QualityParams::default();
    let screen = photo_like(&light());
    // Far: the screen is a small rectangle in a dim room.
    let small =
        image::imageops::resize(&screen, W / 3, H / 3, image::imageops::FilterType::Triangle);
    let mut far = RgbImage::from_pixel(W, H, image::Rgb([70, 60, 55]));
    image::imageops::replace(&mut far, &small, i64::from(W / 3), i64::from(H / 3));
    let q = assess_rgb(&far, &p);
    show("far", &q);
    assert!(q.hints.contains(&Hint::MoveCloser), "{q:?}");
    // Close: a crop of the middle of the screen fills the frame.
    let crop = image::imageops::crop_imm(&screen, W / 4, H / 4, W / 2, H / 2).to_image();
    let close = image::imageops::resize(&crop, W, H, image::imageops::FilterType::Triangle);
    let q = assess_rgb(&close, &p);
    show("close", &q);
    assert!(q.hints.contains(&Hint::MoveBack), "{q:?}");
    assert!(!q.hints.contains(&Hint::MoveCloser), "{q:?}");
}

#[test]
fn bad_input_never_panics() {
    let p = QualityParams::default();
    let q = assess_rgb(&RgbImage::new(0, 0), &p);
    assert!(!q.accept);
    for (w, h) in [(1, 1), (1, 500), (500, 1), (3, 3), (7, 2)] {
        let q = assess_rgb(&RgbImage::from_pixel(w, h, image::Rgb([128, 128, 128])), &p);
        assert!(!q.accept, "{w}x{h}: {q:?}");
    }
    let info = nv21_info();
    assert!(assess_frame(&[0u8; 100], &info, &p).is_err());
    let mut gate = FrameGate::new(p);
    assert!(gate.push_frame(&[0u8; 100], &info).is_err());
    let json = serde_json::to_string(&gate.push_rgb(&light())).unwrap();
    assert!(
        json.contains("\"hints\":[]") && json.contains("\"stability\":null"),
        "{json}"
    );
}

#[test]
fn serde_names_are_snake_case() {
    let hints = [
        Hint::TooDark,
        Hint::ReduceGlare,
        Hint::HoldSteady,
        Hint::MoveCloser,
    ];
    assert_eq!(
        serde_json::to_string(&hints).unwrap(),
        r#"["too_dark","reduce_glare","hold_steady","move_closer"]"#
    );
    let p: QualityParams = serde_json::from_str(r#"{"min_sharpness": 1.5}"#).unwrap();
    assert_eq!(p.min_sharpness, 1.5);
    assert_eq!(p.max_glare, QualityParams::default().max_glare);
    let q = assess_rgb(&light(), &QualityParams::default());
    let back: FrameQuality = serde_json::from_str(&serde_json::to_string(&q).unwrap()).unwrap();
    assert_eq!(back, q);
}
