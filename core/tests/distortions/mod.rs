//! Distorted views of an image for the robustness sweeps (`tests/pipeline_distorted.rs`,
//! `examples/stress_sweep.rs`, which `#[path]`-includes this file): scaled down or up, stretched, rotated,
//! mirrored, inverted, tiled, cut to a sliver, thresholded, blurred, salted, scribbled over, striped, blanked.
#![allow(dead_code)]

use image::imageops::{self, FilterType};
use image::{Rgb, RgbImage};

#[path = "../quality_support/mod.rs"]
mod quality_support;
/// The quality tests' fixed-seed generator: the random distortions are the same on every run.
pub use quality_support::Rng;

/// Distortion names, in the order they are applied to each image.
pub const DISTORTIONS: &[&str] = &[
    "identity",
    "down_64",
    "down_200",
    "up_3x",
    "wide_8x",
    "tall_8x",
    "rot90",
    "rot180",
    "mirror",
    "invert",
    "tile_3x3",
    "tile_9x1",
    "sliver_top",
    "sliver_left",
    "threshold",
    "blur_6",
    "salt_20",
    "scribble",
    "stripes",
    "flat_black",
];

/// `img` under the distortion `name` (one of [`DISTORTIONS`]).
pub fn distort(img: &RgbImage, name: &str, rng: &mut Rng) -> RgbImage {
    let (w, h) = img.dimensions();
    let scaled =
        |nw: u32, nh: u32| imageops::resize(img, nw.max(1), nh.max(1), FilterType::Triangle);
    match name {
        "identity" => img.clone(),
        "down_64" => scaled(64, (64 * h / w).max(1)),
        "down_200" => scaled(200, (200 * h / w).max(1)),
        "up_3x" => imageops::resize(img, w * 3, h * 3, FilterType::Nearest),
        "wide_8x" => scaled(w * 2, (h / 4).max(1)),
        "tall_8x" => scaled((w / 4).max(1), h * 2),
        "rot90" => imageops::rotate90(img),
        "rot180" => imageops::rotate180(img),
        "mirror" => imageops::flip_horizontal(img),
        "invert" => {
            let mut out = img.clone();
            imageops::invert(&mut out);
            out
        }
        "tile_3x3" | "tile_9x1" => {
            let (nx, ny) = if name == "tile_3x3" { (3, 3) } else { (9, 1) };
            let small = scaled(w / nx, h / ny);
            let mut out = RgbImage::new(w, h);
            for ty in 0..ny {
                for tx in 0..nx {
                    imageops::replace(
                        &mut out,
                        &small,
                        (tx * (w / nx)) as i64,
                        (ty * (h / ny)) as i64,
                    );
                }
            }
            out
        }
        "sliver_top" => imageops::crop_imm(img, 0, 0, w, (h / 10).max(1)).to_image(),
        "sliver_left" => imageops::crop_imm(img, 0, 0, (w / 20).max(1), h).to_image(),
        "threshold" => RgbImage::from_fn(w, h, |x, y| {
            let p = img.get_pixel(x, y).0;
            let l = (p[0] as u32 + p[1] as u32 + p[2] as u32) / 3;
            if l > 160 {
                Rgb([255; 3])
            } else {
                Rgb([0; 3])
            }
        }),
        "blur_6" => imageops::blur(img, 6.0),
        "salt_20" => {
            let mut out = img.clone();
            for p in out.pixels_mut() {
                match rng.range(0, 10) {
                    0 => *p = Rgb([0; 3]),
                    1 => *p = Rgb([255; 3]),
                    _ => {}
                }
            }
            out
        }
        "scribble" => {
            let mut out = img.clone();
            for _ in 0..300 {
                let (x0, y0) = (rng.range(0, w) as f32, rng.range(0, h) as f32);
                let (x1, y1) = (rng.range(0, w) as f32, rng.range(0, h) as f32);
                let c = Rgb([
                    rng.range(0, 256) as u8,
                    rng.range(0, 256) as u8,
                    rng.range(0, 256) as u8,
                ]);
                let steps = (x1 - x0).abs().max((y1 - y0).abs()).max(1.0) as u32;
                for s in 0..=steps {
                    let t = s as f32 / steps as f32;
                    let (x, y) = ((x0 + t * (x1 - x0)) as u32, (y0 + t * (y1 - y0)) as u32);
                    if x < w && y < h {
                        out.put_pixel(x, y, c);
                    }
                }
            }
            out
        }
        "stripes" => RgbImage::from_fn(w, h, |x, y| {
            if (x / 3 + y / 7) % 2 == 0 {
                Rgb([250; 3])
            } else {
                *img.get_pixel(x, y)
            }
        }),
        "flat_black" => RgbImage::new(w, h),
        other => unreachable!("unknown distortion {other}"),
    }
}
