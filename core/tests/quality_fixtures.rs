//! The quality gate on real Netron renders and simulated photos (`tests/fixtures/quality/`, copied from
//! `tests/fixtures/scenes/`: `netron_light.png` = `render_001.png`, `netron_dark.png` = `000002.shot.png`,
//! `photo_light.jpg` = `000001.photo.jpg`, `photo_bright.jpg` = `000003.photo.jpg`).

mod quality_support;

use std::path::PathBuf;

use image::RgbImage;
use netron_ocr_core::frame::decode_file;
use netron_ocr_core::quality::{assess_rgb, FrameGate, Hint, QualityParams};
use quality_support::{blur, exposure, glare_sweep, shift, show};

fn fixture(name: &str) -> RgbImage {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/quality")
        .join(name);
    decode_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const BLOCKING: [Hint; 5] = [
    Hint::TooDark,
    Hint::TooBright,
    Hint::ReduceGlare,
    Hint::HoldSteady,
    Hint::TooBlurry,
];

#[test]
fn screenshots_pass_without_glare() {
    let p = QualityParams::default();
    for name in ["netron_light.png", "netron_dark.png"] {
        let q = assess_rgb(&fixture(name), &p);
        show(name, &q);
        assert!(q.accept, "{name}: {q:?}");
        assert!(
            !q.hints.iter().any(|h| BLOCKING.contains(h)),
            "{name}: {:?}",
            q.hints
        );
        assert_eq!(q.glare, 0.0, "{name}");
    }
    // The light render is mostly clipped white canvas: exactly the case glare must not fire on.
    let q = assess_rgb(&fixture("netron_light.png"), &p);
    assert!(q.exposure.clipped_bright > 0.8, "{q:?}");
}

#[test]
fn real_blur_sweep() {
    let p = QualityParams::default();
    for name in ["netron_light.png", "netron_dark.png"] {
        let img = fixture(name);
        let mut prev = f32::INFINITY;
        let mut accepts = Vec::new();
        for r in [0usize, 1, 2, 3, 4, 6, 8] {
            let q = assess_rgb(&blur(&img, r), &p);
            show(&format!("{name} blur r={r}"), &q);
            assert!(
                q.sharpness < prev,
                "{name}: sharpness {} at r={r} not below {prev}",
                q.sharpness
            );
            prev = q.sharpness;
            accepts.push(q.accept);
        }
        assert!(accepts[0] && accepts[1], "{name}: {accepts:?}");
        assert!(!accepts[accepts.len() - 1], "{name}: {accepts:?}");
        assert_eq!(
            accepts.windows(2).filter(|w| w[0] != w[1]).count(),
            1,
            "{name}: {accepts:?}"
        );
    }
}

#[test]
fn real_exposure_sweep() {
    let p = QualityParams::default();
    let img = fixture("netron_light.png");
    let dark = |scale: f32| assess_rgb(&exposure(&img, scale, 0.0), &p);
    let bright = |offset: f32| assess_rgb(&exposure(&img, 1.0, offset), &p);
    for (label, q) in [
        ("x0.15", dark(0.15)),
        ("x0.25", dark(0.25)),
        ("x0.6", dark(0.6)),
        ("+60", bright(60.0)),
        ("+140", bright(140.0)),
        ("+190", bright(190.0)),
    ] {
        show(&format!("netron_light {label}"), &q);
    }
    assert!(dark(0.15).hints.contains(&Hint::TooDark));
    assert!(dark(0.25).hints.contains(&Hint::TooDark));
    assert!(dark(0.6).accept);
    assert!(bright(60.0).accept);
    assert!(bright(140.0).hints.contains(&Hint::TooBright));
    assert!(bright(190.0).hints.contains(&Hint::TooBright));
    let d = fixture("netron_dark.png");
    let q = assess_rgb(&exposure(&d, 0.35, 0.0), &p);
    show("netron_dark x0.35", &q);
    assert!(q.hints.contains(&Hint::TooDark));
}

#[test]
fn real_glare_sweep() {
    let p = QualityParams::default();
    // As a camera would see it: white canvas at 216 rather than clipped.
    let img = exposure(&fixture("netron_light.png"), 0.85, 0.0);
    let centre = (img.width() as f32 * 0.45, img.height() as f32 * 0.4);
    let sweep = glare_sweep("netron_light", &img, centre, 1.0, &p);
    let hinted: Vec<bool> = sweep.iter().map(|s| s.1).collect();
    assert!(!hinted[0] && !hinted[1], "{hinted:?}");
    assert!(hinted[4] && hinted[5], "{hinted:?}");
}

#[test]
fn real_stability() {
    let p = QualityParams::default();
    let img = fixture("netron_light.png");
    let mut gate = FrameGate::new(p);
    gate.push_rgb(&img);
    let same = gate.push_rgb(&img);
    assert!(same.stability.unwrap() > 0.999 && same.accept, "{same:?}");
    let mut results = Vec::new();
    for dx in [2i64, 8, 24, 64] {
        gate.push_rgb(&img);
        let q = gate.push_rgb(&shift(&img, dx, dx / 2));
        show(&format!("netron_light shift {dx}"), &q);
        results.push((q.stability.unwrap(), q.hints.contains(&Hint::HoldSteady)));
    }
    assert!(results.windows(2).all(|w| w[1].0 < w[0].0), "{results:?}");
    assert!(!results[0].1 && results[3].1, "{results:?}");
}

/// Simulated photos from the data generator's camera model. `photo_light.jpg` has a clipped reflection in
/// its top-right corner (about a tenth of the frame), made by the simulator rather than by these tests.
/// `photo_bright.jpg` is over-exposed, but its dark bezel and wall keep the content's dark end low, so the
/// gate cannot see it (a known limitation); it is only printed.
#[test]
fn simulated_photos() {
    let p = QualityParams::default();
    let light = assess_rgb(&fixture("photo_light.jpg"), &p);
    show("photo_light.jpg", &light);
    assert!(
        light.glare > p.max_glare && light.hints.contains(&Hint::ReduceGlare),
        "{light:?}"
    );
    assert!(
        !light.hints.contains(&Hint::TooBlurry) && !light.hints.contains(&Hint::TooDark),
        "{light:?}"
    );
    // Without the reflection (the clipped region, x > 0.6 w and y < 0.45 h, replaced by a flat patch of the
    // canvas colour) it passes.
    let mut clean = fixture("photo_light.jpg");
    let (w, h) = clean.dimensions();
    let canvas = *clean.get_pixel(w / 4, h / 2);
    for y in 0..h * 45 / 100 {
        for x in w * 6 / 10..w {
            clean.put_pixel(x, y, canvas);
        }
    }
    let q = assess_rgb(&clean, &p);
    show("photo_light.jpg patched", &q);
    assert!(q.accept && q.glare == 0.0, "{q:?}");
    let bright = assess_rgb(&fixture("photo_bright.jpg"), &p);
    show("photo_bright.jpg", &bright);
}
