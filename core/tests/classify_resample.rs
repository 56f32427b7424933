//! The Pillow-exact resampler (`resample`) against values computed with Pillow 13
//! (`Image.resize(size, Image.BILINEAR, box=…)`, `convert("L")`) on small hand-made images.

use image::{Rgb, RgbImage};
use netron_ocr_core::resample::{luma, resize_box, resize_luma_box, resize_rgb_box};

/// 5×3 RGB test image: pixel (x, y) = (50x, 100y, (37x + 91y) mod 256).
fn gradient() -> RgbImage {
    RgbImage::from_fn(5, 3, |x, y| {
        Rgb([
            (x * 50) as u8,
            (y * 100) as u8,
            ((x * 37 + y * 91) % 256) as u8,
        ])
    })
}

#[test]
fn grey_row_downscale_matches_pillow() {
    let row = [0u8, 100, 200, 255];
    let out = resize_box::<1>(4, 1, |x, _| [row[x as usize]], [0.0, 0.0, 4.0, 1.0], 2, 1).unwrap();
    assert_eq!(out, vec![71, 209]);
}

#[test]
fn rgb_fractional_box_upscale_matches_pillow() {
    let out = resize_rgb_box(&gradient(), [0.5, 0.25, 4.25, 2.75], 4, 2).unwrap();
    let expected: Vec<u8> = [
        [23, 42, 55],
        [70, 42, 90],
        [117, 42, 125],
        [164, 42, 159],
        [23, 158, 161],
        [70, 158, 135],
        [117, 158, 82],
        [164, 158, 116],
    ]
    .concat();
    assert_eq!(out, expected);
}

#[test]
fn luma_matches_pillow_convert_l() {
    let img = gradient();
    let grey: Vec<u8> = img.pixels().map(|p| luma(p.0)).collect();
    assert_eq!(
        grey,
        vec![0, 19, 38, 58, 77, 69, 88, 107, 127, 146, 138, 157, 147, 166, 186]
    );
    let out = resize_luma_box(&img, [1.3, 0.2, 4.9, 2.9], 3, 3).unwrap();
    assert_eq!(out, vec![37, 59, 82, 99, 120, 143, 150, 156, 178]);
}

#[test]
fn integer_box_at_native_size_is_identity() {
    let img = gradient();
    let out = resize_rgb_box(&img, [1.0, 1.0, 4.0, 3.0], 3, 2).unwrap();
    let expected: Vec<u8> = (1..3)
        .flat_map(|y| (1..4).flat_map(move |x| gradient().get_pixel(x, y).0))
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn constant_image_stays_constant_at_any_scale() {
    let img = RgbImage::from_pixel(37, 23, Rgb([12, 200, 255]));
    for (region, w, h) in [
        ([0.0, 0.0, 37.0, 23.0], 160, 96),
        ([3.7, 1.2, 30.1, 9.9], 5, 3),
        ([0.0, 0.0, 1.0, 1.0], 7, 7),
    ] {
        let out = resize_rgb_box(&img, region, w, h).unwrap();
        assert_eq!(out.len(), (w * h * 3) as usize);
        assert!(
            out.chunks_exact(3).all(|p| p == [12, 200, 255]),
            "{region:?} → {w}×{h}"
        );
    }
}

#[test]
fn invalid_regions_are_refused() {
    let img = gradient();
    for region in [
        [0.0, 0.0, 6.0, 3.0],      // past the right edge
        [-0.5, 0.0, 2.0, 3.0],     // negative
        [2.0, 1.0, 2.0, 2.0],      // empty
        [3.0, 1.0, 2.0, 2.0],      // unordered
        [0.0, f32::NAN, 2.0, 2.0], // not finite
    ] {
        assert!(resize_rgb_box(&img, region, 4, 4).is_none(), "{region:?}");
    }
    assert!(resize_rgb_box(&img, [0.0, 0.0, 5.0, 3.0], 0, 4).is_none());
}
