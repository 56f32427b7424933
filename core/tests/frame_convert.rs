//! Camera frame conversion: every pixel format against a reference encoder, rotations, thumbnails, bad input.

use image::{Rgb, RgbImage};
use netron_ocr_core::frame::{
    frame_to_rgb, frame_to_rgb_planes, luma_thumbnail, luma_thumbnail_planes, resize_rgb,
    thumbnail_factor, FrameError, FrameInfo, PixelFormat, ResizeFilter, Rotation, MAX_PIXELS,
};

/// Random colours constant over aligned 2×2 blocks, so 4:2:0 chroma subsampling loses nothing.
fn test_image(w: u32, h: u32, seed: u64) -> RgbImage {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let bw = w.div_ceil(2) as usize;
    let colours: Vec<[u8; 3]> = (0..bw * h.div_ceil(2) as usize)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            [(s >> 8) as u8, (s >> 24) as u8, (s >> 40) as u8]
        })
        .collect();
    RgbImage::from_fn(w, h, |x, y| {
        Rgb(colours[(y / 2) as usize * bw + (x / 2) as usize])
    })
}

/// Full-range BT.601, in floating point.
fn ref_yuv([r, g, b]: [u8; 3]) -> (f64, f64, f64) {
    let (r, g, b) = (f64::from(r), f64::from(g), f64::from(b));
    (
        0.299 * r + 0.587 * g + 0.114 * b,
        128.0 - 0.168736 * r - 0.331264 * g + 0.5 * b,
        128.0 + 0.5 * r - 0.418688 * g - 0.081312 * b,
    )
}

fn q(v: f64) -> u8 {
    v.round().clamp(0.0, 255.0) as u8
}

/// Encodes `img` as `format` into separate planes with `pad` bytes of row padding; chroma planes of I420 use
/// `chroma_step` bytes between samples. Each plane's last row is cut to the bytes it needs, like Android's.
fn encode_planes(
    img: &RgbImage,
    format: PixelFormat,
    pad: u32,
    chroma_step: u32,
) -> (Vec<Vec<u8>>, FrameInfo) {
    let (w, h) = (img.width(), img.height());
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let px = |x: u32, y: u32| img.get_pixel(x, y).0;
    let chroma = |cx: u32, cy: u32| {
        let (_, u, v) = ref_yuv(px(2 * cx, 2 * cy));
        (q(u), q(v))
    };
    let cut = |mut plane: Vec<u8>, stride: u32, rows: u32, last: u32| {
        plane.truncate((stride * (rows - 1) + last) as usize);
        plane
    };
    match format {
        PixelFormat::Rgba8 | PixelFormat::Bgra8 | PixelFormat::Rgb8 => {
            let bpp = if format == PixelFormat::Rgb8 { 3 } else { 4 };
            let stride = w * bpp + pad;
            let mut p = vec![0xAAu8; (stride * h) as usize];
            for (x, y, c) in img.enumerate_pixels() {
                let i = (y * stride + x * bpp) as usize;
                let [r, g, b] = c.0;
                let bytes: &[u8] = match format {
                    PixelFormat::Rgba8 => &[r, g, b, 0x55],
                    PixelFormat::Bgra8 => &[b, g, r, 0x55],
                    _ => &[r, g, b],
                };
                p[i..i + bytes.len()].copy_from_slice(bytes);
            }
            let info = FrameInfo {
                format,
                width: w,
                height: h,
                row_strides: vec![stride],
                pixel_stride: bpp,
                rotation: Rotation::R0,
            };
            (vec![cut(p, stride, h, w * bpp)], info)
        }
        _ => {
            let ys = w + pad;
            let mut yp = vec![0xAAu8; (ys * h) as usize];
            for (x, y, c) in img.enumerate_pixels() {
                yp[(y * ys + x) as usize] = q(ref_yuv(c.0).0);
            }
            let yp = cut(yp, ys, h, w);
            if format == PixelFormat::I420 {
                let cs = (cw - 1) * chroma_step + 1 + pad;
                let mut up = vec![0xAAu8; (cs * ch) as usize];
                let mut vp = up.clone();
                for cy in 0..ch {
                    for cx in 0..cw {
                        let (u, v) = chroma(cx, cy);
                        up[(cy * cs + cx * chroma_step) as usize] = u;
                        vp[(cy * cs + cx * chroma_step) as usize] = v;
                    }
                }
                let last = (cw - 1) * chroma_step + 1;
                let info = FrameInfo {
                    format,
                    width: w,
                    height: h,
                    row_strides: vec![ys, cs, cs],
                    pixel_stride: chroma_step,
                    rotation: Rotation::R0,
                };
                (vec![yp, cut(up, cs, ch, last), cut(vp, cs, ch, last)], info)
            } else {
                let cs = cw * 2 + pad;
                let mut uv = vec![0xAAu8; (cs * ch) as usize];
                for cy in 0..ch {
                    for cx in 0..cw {
                        let (u, v) = chroma(cx, cy);
                        let i = (cy * cs + cx * 2) as usize;
                        let pair = if format == PixelFormat::Nv12 {
                            [u, v]
                        } else {
                            [v, u]
                        };
                        uv[i..i + 2].copy_from_slice(&pair);
                    }
                }
                let info = FrameInfo {
                    format,
                    width: w,
                    height: h,
                    row_strides: vec![ys, cs],
                    pixel_stride: 2,
                    rotation: Rotation::R0,
                };
                (vec![yp, cut(uv, cs, ch, cw * 2)], info)
            }
        }
    }
}

/// The same frame as one buffer: each plane padded to `stride * rows` except the last.
fn encode_single(img: &RgbImage, format: PixelFormat, pad: u32) -> (Vec<u8>, FrameInfo) {
    let (planes, info) = encode_planes(img, format, pad, 1);
    let offsets = info.plane_offsets().unwrap();
    let mut data = Vec::new();
    for (i, plane) in planes.iter().enumerate() {
        data.resize(offsets[i], 0xEE);
        data.extend_from_slice(plane);
    }
    (data, info)
}

fn max_diff(a: &RgbImage, b: &RgbImage) -> u8 {
    assert_eq!(a.dimensions(), b.dimensions());
    a.as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

#[test]
fn every_format_round_trips_with_padded_strides() {
    for (w, h) in [(64, 48), (33, 17), (1, 1), (2, 3)] {
        let img = test_image(w, h, u64::from(w * 1000 + h));
        for format in PixelFormat::ALL {
            for pad in [0, 5, 32] {
                let (data, info) = encode_single(&img, format, pad);
                assert_eq!(
                    info.required_len().unwrap(),
                    data.len(),
                    "{format:?} {w}x{h} pad {pad}"
                );
                let out = frame_to_rgb(&data, &info).unwrap();
                let tol = if format.is_yuv() { 2 } else { 0 };
                let d = max_diff(&img, &out);
                assert!(d <= tol, "{format:?} {w}x{h} pad {pad}: max diff {d}");

                let (planes, info) = encode_planes(&img, format, pad, 1);
                let slices: Vec<&[u8]> = planes.iter().map(|p| p.as_slice()).collect();
                let out2 = frame_to_rgb_planes(&slices, &info).unwrap();
                assert_eq!(
                    out, out2,
                    "{format:?}: plane slices and single buffer differ"
                );
            }
        }
    }
}

#[test]
fn android_yuv_420_888_with_pixel_stride_2() {
    let img = test_image(40, 30, 3);
    let (planes, info) = encode_planes(&img, PixelFormat::I420, 8, 2);
    // U and V buffers are one byte short of whole rows, as on Android.
    let (cw, ch) = (20, 15);
    assert_eq!(
        planes[1].len() as u32,
        info.row_strides[1] * (ch - 1) + 2 * cw - 1
    );
    let slices: Vec<&[u8]> = planes.iter().map(|p| p.as_slice()).collect();
    let out = frame_to_rgb_planes(&slices, &info).unwrap();
    assert!(max_diff(&img, &out) <= 2);
}

#[test]
fn yuv_matches_bt601_full_range_formula() {
    for (y, u, v) in [
        (0u8, 128u8, 128u8),
        (255, 128, 128),
        (76, 85, 255),
        (150, 44, 21),
        (16, 240, 16),
        (200, 0, 255),
    ] {
        let info = FrameInfo::tight(PixelFormat::I420, 1, 1, Rotation::R0);
        let out = frame_to_rgb(&[y, u, v], &info).unwrap();
        let (yf, uf, vf) = (f64::from(y), f64::from(u) - 128.0, f64::from(v) - 128.0);
        let exact = [
            yf + 1.402 * vf,
            yf - 0.344136 * uf - 0.714136 * vf,
            yf + 1.772 * uf,
        ];
        for (c, want) in exact.iter().enumerate() {
            let got = f64::from(out.get_pixel(0, 0).0[c]);
            assert!(
                (got - want.clamp(0.0, 255.0)).abs() <= 0.5 + 1e-3,
                "yuv {y},{u},{v} channel {c}: {got}"
            );
        }
    }
}

#[test]
fn every_rotation_turns_clockwise() {
    let img = test_image(6, 4, 9);
    let (w, h) = (img.width(), img.height());
    for format in PixelFormat::ALL {
        let (data, mut info) = encode_single(&img, format, 3);
        let upright = frame_to_rgb(&data, &info).unwrap();
        for rotation in [Rotation::R0, Rotation::R90, Rotation::R180, Rotation::R270] {
            info.rotation = rotation;
            let out = frame_to_rgb(&data, &info).unwrap();
            assert_eq!(out.dimensions(), info.upright_size());
            for (x, y, p) in upright.enumerate_pixels() {
                // Where source pixel (x, y) lands after turning the image clockwise.
                let (dx, dy) = match rotation {
                    Rotation::R0 => (x, y),
                    Rotation::R90 => (h - 1 - y, x),
                    Rotation::R180 => (w - 1 - x, h - 1 - y),
                    Rotation::R270 => (y, w - 1 - x),
                };
                assert_eq!(
                    out.get_pixel(dx, dy),
                    p,
                    "{format:?} {rotation:?} at {x},{y}"
                );
            }
        }
    }
}

/// Reference area average of the luma of `img` over `f × f` blocks.
fn ref_thumbnail(img: &RgbImage, f: u32) -> Vec<f64> {
    let (ow, oh) = ((img.width() / f).max(1), (img.height() / f).max(1));
    let (bw, bh) = (f.min(img.width()), f.min(img.height()));
    let mut out = Vec::new();
    for oy in 0..oh {
        for ox in 0..ow {
            let mut sum = 0.0;
            for y in oy * f..oy * f + bh {
                for x in ox * f..ox * f + bw {
                    let [r, g, b] = img.get_pixel(x, y).0.map(f64::from);
                    sum += (0.299 * r + 0.587 * g + 0.114 * b).round();
                }
            }
            out.push(sum / f64::from(bw * bh));
        }
    }
    out
}

#[test]
fn luma_thumbnail_is_an_area_average_for_every_format() {
    let img = test_image(103, 61, 5);
    for max_side in [1000, 103, 50, 20, 7, 1] {
        let f = thumbnail_factor(103, 61, max_side);
        assert!(103u32.div_ceil(f) <= max_side.max(1) || f == 1);
        let want = ref_thumbnail(&img, f);
        for format in PixelFormat::ALL {
            let (data, info) = encode_single(&img, format, 4);
            let t = luma_thumbnail(&data, &info, max_side).unwrap();
            assert_eq!(
                t.dimensions(),
                ((103 / f).max(1), (61 / f).max(1)),
                "{format:?} max_side {max_side}"
            );
            assert!(t.width().max(t.height()) <= max_side);
            for (got, want) in t.as_raw().iter().zip(&want) {
                assert!(
                    (f64::from(*got) - want).abs() <= 1.0,
                    "{format:?} f={f}: {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn luma_thumbnail_rotates_and_reads_planes() {
    let img = test_image(40, 20, 8);
    let (planes, mut info) = encode_planes(&img, PixelFormat::Nv21, 0, 1);
    let slices: Vec<&[u8]> = planes.iter().map(|p| p.as_slice()).collect();
    let upright = luma_thumbnail_planes(&slices, &info, 20).unwrap();
    assert_eq!(upright.dimensions(), (20, 10));
    info.rotation = Rotation::R90;
    let turned = luma_thumbnail_planes(&slices, &info, 20).unwrap();
    assert_eq!(turned.dimensions(), (10, 20));
    assert_eq!(turned.get_pixel(9, 0), upright.get_pixel(0, 0));
    assert_eq!(turned.get_pixel(0, 19), upright.get_pixel(19, 9));
}

#[test]
fn degenerate_shapes_convert() {
    for (w, h) in [(1, 7), (7, 1), (1, 1)] {
        let img = test_image(w, h, 1);
        for format in PixelFormat::ALL {
            let (data, info) = encode_single(&img, format, 0);
            let out = frame_to_rgb(&data, &info).unwrap();
            assert!(max_diff(&img, &out) <= 2);
            let t = luma_thumbnail(&data, &info, 3).unwrap();
            assert!(t.width() >= 1 && t.height() >= 1);
        }
    }
}

#[test]
fn short_buffers_are_rejected() {
    let img = test_image(16, 8, 2);
    for format in PixelFormat::ALL {
        let (data, info) = encode_single(&img, format, 2);
        let last = format.plane_count() - 1;
        match frame_to_rgb(&data[..data.len() - 1], &info) {
            Err(FrameError::BufferTooShort { plane, needed, got }) => {
                assert_eq!(
                    (plane, needed, got),
                    (last, data.len(), data.len() - 1),
                    "{format:?}"
                );
            }
            other => panic!("{format:?}: {other:?}"),
        }
        assert!(matches!(
            luma_thumbnail(&data[..10], &info, 8),
            Err(FrameError::BufferTooShort { .. })
        ));
        assert!(matches!(
            frame_to_rgb(&[], &info),
            Err(FrameError::BufferTooShort { plane: 0, .. })
        ));
        let (planes, info) = encode_planes(&img, format, 2, 1);
        let mut slices: Vec<&[u8]> = planes.iter().map(|p| p.as_slice()).collect();
        slices[last] = &slices[last][..slices[last].len() - 1];
        assert!(
            matches!(
                frame_to_rgb_planes(&slices, &info),
                Err(FrameError::BufferTooShort { plane, .. }) if plane == last
            ),
            "{format:?}"
        );
        slices.pop();
        assert!(matches!(
            frame_to_rgb_planes(&slices, &info),
            Err(FrameError::PlaneCount { .. })
        ));
    }
}

#[test]
fn bad_geometry_is_rejected() {
    let data = vec![0u8; 4096];
    let mut info = FrameInfo::tight(PixelFormat::Nv21, 16, 16, Rotation::R0);
    info.row_strides[0] = 15;
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::BadStride {
            plane: 0,
            stride: 15,
            min: 16
        })
    ));
    let mut info = FrameInfo::tight(PixelFormat::Nv12, 16, 16, Rotation::R0);
    info.row_strides[1] = 15;
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::BadStride {
            plane: 1,
            stride: 15,
            min: 16
        })
    ));
    let mut info = FrameInfo::tight(PixelFormat::Rgba8, 16, 16, Rotation::R0);
    info.row_strides[0] = 63;
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::BadStride { plane: 0, .. })
    ));
    let mut info = FrameInfo::tight(PixelFormat::Nv21, 16, 16, Rotation::R0);
    info.pixel_stride = 1;
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::BadPixelStride {
            pixel_stride: 1,
            min: 2
        })
    ));
    let mut info = FrameInfo::tight(PixelFormat::Rgb8, 16, 16, Rotation::R0);
    info.pixel_stride = 2;
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::BadPixelStride { .. })
    ));
    let mut info = FrameInfo::tight(PixelFormat::I420, 16, 16, Rotation::R0);
    info.row_strides.pop();
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::PlaneCount {
            expected: 3,
            got: 2
        })
    ));
    for (w, h) in [(0, 16), (16, 0), (0, 0)] {
        let info = FrameInfo::tight(PixelFormat::Rgb8, w, h, Rotation::R0);
        assert!(matches!(
            frame_to_rgb(&data, &info),
            Err(FrameError::BadDimensions { .. })
        ));
        assert!(matches!(
            luma_thumbnail(&data, &info, 10),
            Err(FrameError::BadDimensions { .. })
        ));
    }
    let info = FrameInfo::tight(PixelFormat::Nv21, 10_000, 6_000, Rotation::R0);
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::TooLarge {
            width: 10_000,
            height: 6_000,
            max_pixels: MAX_PIXELS
        })
    ));
    let info = FrameInfo::tight(PixelFormat::Nv21, 16, 16, Rotation::R0);
    assert!(matches!(
        luma_thumbnail(&data, &info, 0),
        Err(FrameError::BadDimensions { .. })
    ));
    // Huge strides must not overflow.
    let info = FrameInfo {
        format: PixelFormat::I420,
        width: 2,
        height: 20_000_000,
        row_strides: vec![u32::MAX; 3],
        pixel_stride: 1,
        rotation: Rotation::R0,
    };
    assert!(matches!(
        frame_to_rgb(&data, &info),
        Err(FrameError::BufferTooShort { .. })
    ));
    assert!(luma_thumbnail(&data, &info, 480).is_err());
}

#[test]
fn plane_offsets_follow_the_contract() {
    let info = FrameInfo {
        format: PixelFormat::I420,
        width: 5,
        height: 3,
        row_strides: vec![8, 4, 6],
        pixel_stride: 1,
        rotation: Rotation::R0,
    };
    assert_eq!(info.plane_offsets().unwrap(), vec![0, 24, 32]);
    assert_eq!(info.plane_min_lens().unwrap(), vec![21, 7, 9]);
    assert_eq!(info.required_len().unwrap(), 41);
}

#[test]
fn resize_filters() {
    // Constant images stay constant under every filter.
    let flat = RgbImage::from_pixel(37, 23, Rgb([10, 200, 77]));
    for filter in [
        ResizeFilter::Nearest,
        ResizeFilter::Bilinear,
        ResizeFilter::BilinearNoAntialias,
        ResizeFilter::Area,
    ] {
        for (w, h) in [(5, 3), (74, 46), (37, 23), (100, 9)] {
            let out = resize_rgb(&flat, w, h, filter).unwrap();
            assert_eq!(out.dimensions(), (w, h));
            assert!(
                out.pixels().all(|p| p.0 == [10, 200, 77]),
                "{filter:?} {w}x{h}"
            );
        }
    }
    // Area by an integer factor is the block mean.
    let img = test_image(40, 20, 4);
    let out = resize_rgb(&img, 10, 5, ResizeFilter::Area).unwrap();
    for (x, y, p) in out.enumerate_pixels() {
        for c in 0..3 {
            let mut sum = 0u32;
            for yy in 4 * y..4 * y + 4 {
                for xx in 4 * x..4 * x + 4 {
                    sum += u32::from(img.get_pixel(xx, yy).0[c]);
                }
            }
            let mean = f64::from(sum) / 16.0;
            assert!(
                (f64::from(p.0[c]) - mean).abs() <= 1.0,
                "area at {x},{y}: {} vs {mean}",
                p.0[c]
            );
        }
    }
    for (w, h) in [(0, 5), (5, 0)] {
        assert!(matches!(
            resize_rgb(&img, w, h, ResizeFilter::Bilinear),
            Err(FrameError::BadDimensions { .. })
        ));
    }
    assert!(matches!(
        resize_rgb(&RgbImage::new(0, 0), 5, 5, ResizeFilter::Area),
        Err(FrameError::BadDimensions { .. })
    ));
    assert!(matches!(
        resize_rgb(&img, 10_000, 10_000, ResizeFilter::Area),
        Err(FrameError::TooLarge { .. })
    ));
}

/// `ResizeFilter::Bilinear` and `Area` against Pillow 13.0.0 (`Image.resize(size, BILINEAR / BOX)`), whose
/// outputs below were produced in Python from the same 23×17 input: the first 30 bytes and the byte sum.
#[test]
fn resize_matches_pillow() {
    let img = RgbImage::from_fn(23, 17, |x, y| {
        Rgb([0u32, 1, 2].map(|c| ((x * 37 + y * 91 + c * 50 + (x * y) % 13 * 7) % 256) as u8))
    });
    // (filter, output size, Pillow's first 30 bytes, Pillow's byte sum)
    type Case = (ResizeFilter, (u32, u32), [u8; 30], u64);
    let cases: [Case; 4] = [
        (
            ResizeFilter::Bilinear,
            (10, 7),
            [
                104, 129, 137, 125, 125, 139, 131, 134, 122, 135, 126, 119, 106, 120, 155, 132,
                156, 144, 118, 134, 147, 136, 135, 149, 137, 154, 122, 121, 129, 83,
            ],
            27008,
        ),
        (
            ResizeFilter::Bilinear,
            (31, 29),
            [
                0, 50, 100, 23, 73, 123, 50, 100, 150, 78, 128, 178, 105, 155, 205, 132, 182, 232,
                160, 210, 177, 187, 221, 31, 215, 58, 59, 102, 36, 86,
            ],
            347020,
        ),
        (
            ResizeFilter::Area,
            (10, 7),
            [
                66, 116, 166, 125, 132, 139, 141, 127, 113, 94, 144, 130, 111, 97, 147, 133, 140,
                147, 76, 126, 176, 157, 143, 129, 130, 137, 144, 103, 153, 75,
            ],
            27121,
        ),
        (
            ResizeFilter::Area,
            (31, 29),
            [
                0, 50, 100, 37, 87, 137, 37, 87, 137, 74, 124, 174, 111, 161, 211, 148, 198, 248,
                148, 198, 248, 185, 235, 29, 222, 16, 66, 3, 53, 103,
            ],
            343699,
        ),
    ];
    for (filter, (w, h), head, sum) in cases {
        let out = resize_rgb(&img, w, h, filter).unwrap();
        for (i, (got, want)) in out.as_raw().iter().zip(head).enumerate() {
            assert!(
                got.abs_diff(want) <= 1,
                "{filter:?} {w}x{h} byte {i}: {got} vs Pillow {want}"
            );
        }
        let got_sum: u64 = out.as_raw().iter().map(|&v| u64::from(v)).sum();
        let n = u64::from(w * h * 3);
        assert!(
            got_sum.abs_diff(sum) <= n / 10,
            "{filter:?} {w}x{h}: sum {got_sum} vs Pillow {sum}"
        );
    }
}
