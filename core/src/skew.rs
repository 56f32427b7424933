//! Skew: the rotation of a photographed canvas, and text crops cut along it.
//!
//! A phone held a few degrees off the monitor's axes turns every text line by the same angle; an axis-aligned
//! crop of a turned line is taller than the line and holds parts of its neighbours, and the OCR reads it badly
//! (held-out photos, session 6: 47% exact from 5° to 8°, 29% beyond 8°, against 74% under 2°). The OCR
//! contract (`ocr_alphabet.json`, `input.skew`; reference `train/ocr.py::estimate_skew` and
//! `rotated_text_crop`) therefore has two steps, both in f64 with the reference's operation order:
//!
//! - [`estimate_skew`], once per image on the padded crop region: the dominant orientation of edges (card
//!   borders, text strokes, straight edge runs) folded modulo 90°;
//! - [`rotated_text_crop`], per text box when `|skew| ≥ min_deg`: the upright text rectangle behind the
//!   axis-aligned box ([`skewed_text_rect`]) sampled along its own axes.
//!
//! Angles are in degrees, `atan2(dy, dx)` of a text line in image coordinates (y down): negative when the line
//! rises to the right.

use image::RgbImage;
use serde::Deserialize;

use crate::resample::luma;

/// Skew handling of the OCR input (`ocr_alphabet.json`, `input.skew`, read field for field; range checks in
/// [`crate::vocab::Alphabet::from_json`]).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct SkewParams {
    /// Crops are cut rotated from this skew on (1.5°); below it, axis-aligned.
    pub min_deg: f64,
    /// A larger estimate is not trusted and counts as 0 (20°).
    pub max_deg: f64,
    /// The region is block-averaged to at most this many pixels on its longer side before the estimate (512).
    pub max_side: u32,
    /// At most `max_samples × max_samples` bilinear samples per output pixel of a rotated crop (4).
    pub max_samples: u32,
}

/// Skew of the content inside `region` (source pixels `[x0, y0, x1, y1]`, clipped to the image), degrees in
/// `[−max_deg, max_deg]`; 0 when the region is under 32 px on a side, not finite, flat, or the estimate exceeds
/// `max_deg`.
///
/// The integer region (floor/ceil) is block-averaged by `f = ceil(max side / max_side)` (integer luma sums /
/// f², trailing rows and columns dropped); a 3×3 Sobel on the interior gives each pixel a magnitude and an
/// orientation folded modulo 90° into `[−45, 45)`; the pixels above the `(n·9 / 10)`-th smallest magnitude vote
/// with their magnitude into 180 bins of 0.5°; the histogram is smoothed circularly with (1, 2, 3, 2, 1) and its
/// first maximum refined by a parabola through its neighbours.
pub fn estimate_skew(image: &RgbImage, region: [f64; 4], params: &SkewParams) -> f64 {
    if !region.iter().all(|v| v.is_finite()) {
        return 0.0;
    }
    let (iw, ih) = (i64::from(image.width()), i64::from(image.height()));
    let x0 = (region[0].floor() as i64).max(0);
    let y0 = (region[1].floor() as i64).max(0);
    let x1 = (region[2].ceil() as i64).min(iw);
    let y1 = (region[3].ceil() as i64).min(ih);
    if x1 - x0 < 32 || y1 - y0 < 32 {
        return 0.0;
    }
    let side = (x1 - x0).max(y1 - y0);
    let f = ((side as f64 / f64::from(params.max_side.max(1))).ceil() as i64).max(1);
    let (gw, gh) = (((x1 - x0) / f) as usize, ((y1 - y0) / f) as usize);
    if gw < 3 || gh < 3 {
        return 0.0;
    }
    let f = f as usize;
    let (x0, y0) = (x0 as u32, y0 as u32);
    let area = (f * f) as f64;
    let mut g = vec![0f64; gw * gh];
    let mut sums = vec![0u64; gw];
    for by in 0..gh {
        sums.fill(0);
        for y in by * f..(by + 1) * f {
            for (bx, sum) in sums.iter_mut().enumerate() {
                for x in bx * f..(bx + 1) * f {
                    let p = image.get_pixel(x0 + x as u32, y0 + y as u32).0;
                    *sum += u64::from(luma(p));
                }
            }
        }
        for (dst, &s) in g[by * gw..(by + 1) * gw].iter_mut().zip(&sums) {
            *dst = s as f64 / area;
        }
    }

    let at = |y: usize, x: usize| g[y * gw + x];
    let mut mags = Vec::with_capacity((gw - 2) * (gh - 2));
    let mut folded = Vec::with_capacity(mags.capacity());
    for i in 1..gh - 1 {
        for j in 1..gw - 1 {
            let gx = (at(i - 1, j + 1) + 2.0 * at(i, j + 1) + at(i + 1, j + 1))
                - (at(i - 1, j - 1) + 2.0 * at(i, j - 1) + at(i + 1, j - 1));
            let gy = (at(i + 1, j - 1) + 2.0 * at(i + 1, j) + at(i + 1, j + 1))
                - (at(i - 1, j - 1) + 2.0 * at(i - 1, j) + at(i - 1, j + 1));
            mags.push((gx * gx + gy * gy).sqrt());
            folded.push((gy.atan2(gx).to_degrees() + 45.0).rem_euclid(90.0) - 45.0);
        }
    }
    let mut sorted = mags.clone();
    let k = (sorted.len() * 9) / 10;
    let (_, &mut threshold, _) = sorted.select_nth_unstable_by(k, f64::total_cmp);

    let mut hist = [0f64; 180];
    let mut voted = false;
    for (&m, &a) in mags.iter().zip(&folded) {
        if m > threshold {
            let bin = ((a + 45.0) * 2.0).floor().clamp(0.0, 179.0) as usize;
            hist[bin] += m;
            voted = true;
        }
    }
    if !voted {
        return 0.0;
    }
    let h = |k: isize| hist[k.rem_euclid(180) as usize];
    let smooth: Vec<f64> = (0..180isize)
        .map(|k| h(k - 2) + 2.0 * h(k - 1) + 3.0 * h(k) + 2.0 * h(k + 1) + h(k + 2))
        .collect();
    let mut best = 0usize;
    for (k, &v) in smooth.iter().enumerate() {
        if v > smooth[best] {
            best = k;
        }
    }
    let (left, mid, right) = (
        smooth[(best + 179) % 180],
        smooth[best],
        smooth[(best + 1) % 180],
    );
    let denom = left - 2.0 * mid + right;
    let d = if denom != 0.0 {
        0.5 * (left - right) / denom
    } else {
        0.0
    };
    let angle = -45.0 + (best as f64 + 0.5 + d) * 0.5;
    if angle.abs() <= params.max_deg {
        angle
    } else {
        0.0
    }
}

/// `(cx, cy, w, h)` of the text rectangle turned by `angle_deg` whose axis-aligned bounds are `bbox`
/// (`[x0, y0, x1, y1]`): solves `W = w·c + h·s`, `H = w·s + h·c` (`c = cos|θ|`, `s = sin|θ|`), then `w ≥ W/4`
/// and `h ≥ H·c`. The solved `h` is fragile (a detector box 2 px short takes a sixth off a 12 px line at 7° and
/// the crop clips the text); the floor, which decides `h` for every line longer than `h·tan θ`, keeps the
/// rectangle about as tall as the box.
pub fn skewed_text_rect(bbox: [f64; 4], angle_deg: f64) -> (f64, f64, f64, f64) {
    let [x0, y0, x1, y1] = bbox;
    let (bw, bh) = (x1 - x0, y1 - y0);
    let t = angle_deg.abs().to_radians();
    let (c, s) = (t.cos(), t.sin());
    let det = c * c - s * s;
    let w = ((bw * c - bh * s) / det).max(0.25 * bw);
    let h = ((bh * c - bw * s) / det).max(bh * c);
    ((x0 + x1) / 2.0, (y0 + y1) / 2.0, w, h)
}

/// The upright crop of a turned text line: the [`skewed_text_rect`] of `bbox` grown by `pad_fraction` × its
/// height on every side along its own axes, sampled into 8-bit grey (Pillow luma), `out_h` rows × `w` columns,
/// `w = clamp(round(grown_w · out_h / grown_h), 1, max_w)` (round half to even). Returns `(pixels, w)`,
/// row-major.
///
/// Output pixel `(j, i)` is the mean of `ss × ss` bilinear samples (`ss = min(max_samples, ceil(max(du, dv)))`,
/// `du`, `dv` the source pixels per output pixel) at rectangle coordinates `u = u0 + (j + (a + ½)/ss)·du`,
/// `v = v0 + (i + (b + ½)/ss)·dv`, i.e. source `x = cx + u·cos θ − v·sin θ`, `y = cy + u·sin θ + v·cos θ`, with
/// pixel centres at +½ and coordinates clamped to the image; the mean is rounded with `floor(v + ½)`.
pub fn rotated_text_crop(
    image: &RgbImage,
    bbox: [f64; 4],
    angle_deg: f64,
    pad_fraction: f64,
    out_h: u32,
    max_w: u32,
    params: &SkewParams,
) -> (Vec<u8>, u32) {
    let (cx, cy, w, h) = skewed_text_rect(bbox, angle_deg);
    let (u0, v0) = (-w / 2.0 - pad_fraction * h, -h / 2.0 - pad_fraction * h);
    let (uw, vh) = (
        w + (pad_fraction + pad_fraction) * h,
        h + (pad_fraction + pad_fraction) * h,
    );
    let ow = crate::read::text_width(uw, vh, out_h, max_w);
    let (du, dv) = (uw / f64::from(ow), vh / f64::from(out_h));
    let ss = ((du.max(dv) - 1e-9).ceil().max(1.0) as u32).min(params.max_samples.max(1));
    let t = angle_deg.to_radians();
    let (c, s) = (t.cos(), t.sin());
    let coords = |origin: f64, step: f64, n: u32| -> Vec<f64> {
        (0..n)
            .flat_map(|j| {
                (0..ss).map(move |a| {
                    origin + (f64::from(j) + (f64::from(a) + 0.5) / f64::from(ss)) * step
                })
            })
            .collect()
    };
    let us = coords(u0, du, ow);
    let vs = coords(v0, dv, out_h);
    let (iw, ih) = (image.width(), image.height());
    let (max_x, max_y) = (f64::from(iw) - 1.0, f64::from(ih) - 1.0);
    let px = |x: u32, y: u32| f64::from(luma(image.get_pixel(x, y).0));
    let ssu = ss as usize;
    let mut acc = vec![0f64; ow as usize * out_h as usize];
    for (vi, &v) in vs.iter().enumerate() {
        let row = &mut acc[(vi / ssu) * ow as usize..][..ow as usize];
        for (ui, &u) in us.iter().enumerate() {
            let fx = ((cx + u * c - v * s) - 0.5).clamp(0.0, max_x);
            let fy = ((cy + u * s + v * c) - 0.5).clamp(0.0, max_y);
            let (ix, iy) = (fx.floor(), fy.floor());
            let (ax, ay) = (fx - ix, fy - iy);
            let (ix, iy) = (ix as u32, iy as u32);
            let (ix1, iy1) = ((ix + 1).min(iw - 1), (iy + 1).min(ih - 1));
            let val = (1.0 - ay) * ((1.0 - ax) * px(ix, iy) + ax * px(ix1, iy))
                + ay * ((1.0 - ax) * px(ix, iy1) + ax * px(ix1, iy1));
            row[ui / ssu] += val;
        }
    }
    let n = f64::from(ss * ss);
    let pixels = acc
        .iter()
        .map(|&v| (v / n + 0.5).floor().clamp(0.0, 255.0) as u8)
        .collect();
    (pixels, ow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    const PARAMS: SkewParams = SkewParams {
        min_deg: 1.5,
        max_deg: 20.0,
        max_side: 512,
        max_samples: 4,
    };

    /// Light image with dark bars 6 px thick every 30 px and 3 px cross rules every 60 px, turned by `deg`
    /// about the centre, edges antialiased over one pixel (as `turned_bars` in the Python tests).
    fn turned_bars(deg: f64) -> RgbImage {
        let t = deg.to_radians();
        RgbImage::from_fn(400, 300, |x, y| {
            let (dx, dy) = (f64::from(x) - 200.0, f64::from(y) - 150.0);
            let u = dx * t.cos() + dy * t.sin();
            let v = -dx * t.sin() + dy * t.cos();
            let bars = (3.5 - (v.rem_euclid(30.0) - 15.0).abs()).clamp(0.0, 1.0)
                * (150.5 - u.abs()).clamp(0.0, 1.0);
            let rules = (2.0 - (u.rem_euclid(60.0) - 30.0).abs()).clamp(0.0, 1.0);
            let g = (240.0 - 220.0 * bars.max(rules)).round() as u8;
            Rgb([g, g, g])
        })
    }

    #[test]
    fn recovers_the_turn_of_lines() {
        for deg in [-12.0, -4.0, 0.0, 3.0, 9.0] {
            let img = turned_bars(deg);
            let got = estimate_skew(&img, [0.0, 0.0, 400.0, 300.0], &PARAMS);
            assert!((got - deg).abs() < 0.6, "{deg}° estimated as {got}°");
        }
    }

    #[test]
    fn flat_tiny_or_odd_regions_give_zero() {
        let flat = RgbImage::from_pixel(200, 200, Rgb([128, 128, 128]));
        assert_eq!(estimate_skew(&flat, [0.0, 0.0, 200.0, 200.0], &PARAMS), 0.0);
        let img = turned_bars(5.0);
        assert_eq!(estimate_skew(&img, [10.0, 10.0, 30.0, 300.0], &PARAMS), 0.0);
        assert_eq!(
            estimate_skew(&img, [f64::NAN, 0.0, 400.0, 300.0], &PARAMS),
            0.0
        );
        assert_eq!(
            estimate_skew(&img, [500.0, 0.0, 900.0, 300.0], &PARAMS),
            0.0
        );
    }

    #[test]
    fn rect_inverts_the_bounds_of_a_turned_rectangle() {
        // A narrow upright block (w < h·tan θ) is recovered exactly; a text line (w > h·tan θ) gets its width
        // back and the floor H·cos θ as its height.
        let t = 10f64.to_radians();
        let bounds = |w: f64, h: f64| {
            [
                50.0,
                60.0,
                50.0 + w * t.cos() + h * t.sin(),
                60.0 + w * t.sin() + h * t.cos(),
            ]
        };
        let b = bounds(4.0, 40.0);
        let (cx, cy, rw, rh) = skewed_text_rect(b, -10.0);
        assert!(
            (rw - 4.0).abs() < 1e-9 && (rh - 40.0).abs() < 1e-9,
            "{rw} {rh}"
        );
        assert!((cx - (b[0] + b[2]) / 2.0).abs() < 1e-9 && (cy - (b[1] + b[3]) / 2.0).abs() < 1e-9);
        let b = bounds(100.0, 12.0);
        let (_, _, rw, rh) = skewed_text_rect(b, 10.0);
        assert!((rw - 100.0).abs() < 1e-9, "{rw}");
        assert!((rh - (b[3] - b[1]) * t.cos()).abs() < 1e-9, "{rh}");
    }

    #[test]
    fn rotated_crop_of_an_upright_uniform_patch_is_uniform() {
        let img = RgbImage::from_pixel(300, 200, Rgb([90, 90, 90]));
        let (pixels, w) = rotated_text_crop(
            &img,
            [100.0, 80.0, 180.0, 110.0],
            7.0,
            0.15,
            48,
            320,
            &PARAMS,
        );
        assert_eq!(pixels.len(), 48 * w as usize);
        assert!(pixels.iter().all(|&p| p == 90));
    }
}
