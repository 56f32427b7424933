//! The cropper's mirrored reading (`CropParams::mirror`) on the committed fixture scenes: the union of the two
//! crops, the mirrored one equal to cropping the mirrored photo.

mod fixture_support;

use image::imageops;
use netron_ocr_core::crop::{self, CropParams, Cropper};
use netron_ocr_core::models::ModelKind;

fn cropper(mirror: bool) -> Cropper {
    let params = CropParams {
        mirror,
        ..CropParams::default()
    };
    Cropper::with_params(&fixture_support::model(ModelKind::Cropper), params).unwrap()
}

#[test]
fn the_mirrored_reading_is_the_mirrored_photo_cropped_and_the_crop_their_union() {
    let (plain, both) = (cropper(false), cropper(true));
    let scenes = fixture_support::scenes();
    assert!(!scenes.is_empty());
    for scene in scenes {
        let image = scene.image();
        let a = plain.run(&image).unwrap();
        let m = both.run(&image).unwrap();
        assert_eq!(a.mirrored, None);
        assert_eq!(
            m.confidence, a.confidence,
            "{}: the confidence stays the plain reading's",
            scene.name
        );
        assert_eq!(m.proj_x, a.proj_x, "{}", scene.name);
        let back = m.mirrored.expect("mirrored reading");

        // The mirrored photo cropped without the option, its box mapped back. The two inputs differ only in
        // the resize's fixed-point rounding, so allow a bin and a little.
        let flipped = plain.run(&imageops::flip_horizontal(&image)).unwrap();
        let f = flipped.normalised;
        let want = [1.0 - f[2], f[1], 1.0 - f[0], f[3]];
        for (g, w) in back.iter().zip(want) {
            assert!(
                (g - w).abs() < 1.5 / crop::BINS as f64,
                "{}: {back:?} vs {want:?}",
                scene.name
            );
        }

        let union = [
            a.normalised[0].min(back[0]),
            a.normalised[1].min(back[1]),
            a.normalised[2].max(back[2]),
            a.normalised[3].max(back[3]),
        ];
        assert_eq!(m.normalised, union, "{}", scene.name);
        let (w, h) = (image.width() as f32, image.height() as f32);
        assert!(
            m.bbox.x0 <= a.bbox.x0 && m.bbox.y0 <= a.bbox.y0,
            "{}",
            scene.name
        );
        assert!(
            m.bbox.x1 >= a.bbox.x1 && m.bbox.y1 >= a.bbox.y1,
            "{}",
            scene.name
        );
        assert!(m.bbox.x1 <= w && m.bbox.y1 <= h, "{}", scene.name);
    }
}

#[test]
fn mirroring_reverses_every_row() {
    let image = image::RgbImage::from_fn(700, 300, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 7])
    });
    let input = crop::preprocess(&image).unwrap();
    let mirrored = crop::mirror_input(&input).unwrap();
    let a = input.to_plain_array_view::<f32>().unwrap();
    let b = mirrored.to_plain_array_view::<f32>().unwrap();
    assert_eq!(a.shape(), b.shape());
    let w = a.shape()[3];
    for c in 0..3 {
        for y in [0, 100, 511] {
            for x in [0, 1, 200, 511] {
                assert_eq!(a[[0, c, y, x]], b[[0, c, y, w - 1 - x]]);
            }
        }
    }
    assert_ne!(a, b, "the test image is not symmetric");
}
