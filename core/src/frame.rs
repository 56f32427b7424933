//! Frame input: camera frames (packed RGB or YUV 4:2:0) and image files (JPEG, PNG) in, upright RGB out.
//!
//! # Buffer layout contract
//!
//! A frame is described by a [`FrameInfo`] and its bytes come either as one buffer (`&[u8]`, the planes packed one
//! after another) or as one slice per plane (`&[&[u8]]`, e.g. the three `ByteBuffer`s of Android's
//! `YUV_420_888`, without a copy). Planes, in order:
//!
//! | format | planes | plane 0 | plane 1 | plane 2 |
//! |---|---|---|---|---|
//! | `Rgba8`, `Bgra8`, `Rgb8` | 1 | pixels, `pixel_stride` bytes apart (≥ 4, 4, 3) | | |
//! | `Nv12` | 2 | Y, one byte a pixel | interleaved U,V pairs, `pixel_stride` (≥ 2) bytes apart | |
//! | `Nv21` | 2 | Y | interleaved V,U pairs, `pixel_stride` (≥ 2) bytes apart | |
//! | `I420` | 3 | Y | U samples, `pixel_stride` (≥ 1) bytes apart | V samples, likewise |
//!
//! * Row `r` of plane `p` starts at byte `r * row_strides[p]` of that plane.
//! * The luma plane and packed RGB planes have `height` rows of `width` pixels. Chroma planes have
//!   `ceil(height / 2)` rows of `ceil(width / 2)` samples; the chroma sample of pixel `(x, y)` is the one at
//!   `(x / 2, y / 2)` (no chroma interpolation).
//! * The Y plane always has a pixel stride of 1. `pixel_stride` applies to the packed RGB plane or to the
//!   chroma plane(s), as Android's `Image.Plane.getPixelStride()` reports it: 2 for interleaved chroma (so an
//!   Android `YUV_420_888` image with pixel stride 2 is passed as `I420` with `pixel_stride: 2` and its three
//!   plane buffers), 1 for planar chroma.
//! * A plane must hold `row_stride * (rows - 1) + last_row_bytes` bytes, where `last_row_bytes =
//!   (samples - 1) * step + sample_bytes`: the padding after the last row may be missing (Android's U/V buffers
//!   are one byte short of a full row).
//! * In a single buffer, plane `p + 1` starts at the offset of plane `p` plus `row_strides[p] * rows(p)` (see
//!   [`FrameInfo::plane_offsets`]). The last plane may be short as above.
//!
//! # Colour
//!
//! YUV is converted with BT.601 **full range** (JPEG / JFIF style, which is what Android camera frames use):
//! `R = Y + 1.402 (V - 128)`, `G = Y - 0.344136 (U - 128) - 0.714136 (V - 128)`, `B = Y + 1.772 (U - 128)`,
//! computed in 16.16 fixed point, rounded, clamped to 0..=255. Luma of RGB input (for [`luma_thumbnail`]) is
//! `Y = 0.299 R + 0.587 G + 0.114 B` (BT.601), likewise in fixed point.
//!
//! # Rotation
//!
//! [`Rotation`] is how far the image must be turned **clockwise** to be upright (Android's
//! `ImageInfo.getRotationDegrees()`); the conversions apply it, so their output is upright.

use std::io::{BufRead, Cursor, Read, Seek};
use std::ops::AddAssign;
use std::path::Path;

use fast_image_resize as fr;
use image::{DynamicImage, GrayImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};
use serde::{Deserialize, Serialize};

/// Largest image, in pixels, that any function here will decode, convert or allocate (50 megapixels).
pub const MAX_PIXELS: u64 = 50_000_000;

/// Largest image file, in bytes, that [`decode_file`] will read (256 MiB).
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Largest width or height accepted from an image file header (also passed to `image::Limits`).
pub const MAX_SIDE: u32 = 100_000;

/// Most bytes the image decoder may allocate (`image::Limits::max_alloc`): a 50 MP image at 16-bit RGBA.
pub const MAX_DECODE_ALLOC: u64 = MAX_PIXELS * 8;

/// Pixel layout of a camera frame. See the module documentation for the plane layout of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PixelFormat {
    /// 4 bytes a pixel: R, G, B, A (alpha ignored).
    Rgba8,
    /// 4 bytes a pixel: B, G, R, A (alpha ignored).
    Bgra8,
    /// 3 bytes a pixel: R, G, B.
    Rgb8,
    /// Y plane, then interleaved V,U (Android's legacy camera default).
    Nv21,
    /// Y plane, then interleaved U,V.
    Nv12,
    /// Y plane, U plane, V plane.
    I420,
}

impl PixelFormat {
    /// Every format, in declaration order.
    pub const ALL: [PixelFormat; 6] = [
        PixelFormat::Rgba8,
        PixelFormat::Bgra8,
        PixelFormat::Rgb8,
        PixelFormat::Nv21,
        PixelFormat::Nv12,
        PixelFormat::I420,
    ];

    /// Number of planes: 1 for packed RGB, 2 for NV12/NV21, 3 for I420.
    pub fn plane_count(self) -> usize {
        match self {
            PixelFormat::Rgba8 | PixelFormat::Bgra8 | PixelFormat::Rgb8 => 1,
            PixelFormat::Nv21 | PixelFormat::Nv12 => 2,
            PixelFormat::I420 => 3,
        }
    }

    /// True for the YUV 4:2:0 formats (which have a Y plane).
    pub fn is_yuv(self) -> bool {
        self.plane_count() > 1
    }

    /// Byte offsets of R, G, B inside a pixel and the bytes a pixel occupies, for packed formats.
    fn rgb_layout(self) -> Option<([usize; 3], usize)> {
        match self {
            PixelFormat::Rgba8 => Some(([0, 1, 2], 4)),
            PixelFormat::Bgra8 => Some(([2, 1, 0], 4)),
            PixelFormat::Rgb8 => Some(([0, 1, 2], 3)),
            _ => None,
        }
    }
}

/// Clockwise rotation that makes the frame upright.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rotation {
    #[default]
    R0,
    R90,
    R180,
    R270,
}

impl Rotation {
    /// From clockwise degrees (0, 90, 180 or 270; other values give `None`).
    pub fn from_degrees(degrees: u32) -> Option<Rotation> {
        match degrees {
            0 => Some(Rotation::R0),
            90 => Some(Rotation::R90),
            180 => Some(Rotation::R180),
            270 => Some(Rotation::R270),
            _ => None,
        }
    }

    /// Clockwise degrees.
    pub fn degrees(self) -> u32 {
        match self {
            Rotation::R0 => 0,
            Rotation::R90 => 90,
            Rotation::R180 => 180,
            Rotation::R270 => 270,
        }
    }
}

/// Geometry of a camera frame. See the module documentation for the layout contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameInfo {
    pub format: PixelFormat,
    /// Width in pixels, before rotation.
    pub width: u32,
    /// Height in pixels, before rotation.
    pub height: u32,
    /// Bytes from one row to the next, one entry per plane.
    pub row_strides: Vec<u32>,
    /// Bytes between pixels of the packed RGB plane, or between chroma samples of the chroma plane(s).
    pub pixel_stride: u32,
    pub rotation: Rotation,
}

/// Everything that can go wrong reading a frame or an image file.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("plane {plane}: buffer holds {got} bytes, the frame needs {needed}")]
    BufferTooShort {
        plane: usize,
        needed: usize,
        got: usize,
    },
    #[error("plane {plane}: row stride {stride} is below the {min} bytes a row needs")]
    BadStride { plane: usize, stride: u32, min: u64 },
    #[error("pixel stride {pixel_stride} is below the minimum {min} for this format")]
    BadPixelStride { pixel_stride: u32, min: u32 },
    #[error("{got} planes or row strides given, the format has {expected}")]
    PlaneCount { expected: usize, got: usize },
    #[error("bad dimensions {width}x{height}")]
    BadDimensions { width: u64, height: u64 },
    #[error("image of {width}x{height} exceeds the limit of {max_pixels} pixels")]
    TooLarge {
        width: u64,
        height: u64,
        max_pixels: u64,
    },
    #[error("file of {bytes} bytes exceeds the limit of {max_bytes}")]
    FileTooLarge { bytes: u64, max_bytes: u64 },
    #[error("unsupported format: {0}")]
    UnsupportedFormat(String),
    #[error("decode error: {0}")]
    Decode(String),
    #[error("resize error: {0}")]
    Resize(String),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// Where one plane's samples are: `rows` rows of `samples` samples, each `sample_bytes` wide and `step` apart.
#[derive(Debug, Clone, Copy)]
struct PlaneShape {
    rows: u64,
    samples: u64,
    step: u64,
    sample_bytes: u64,
}

impl PlaneShape {
    fn last_row_bytes(&self) -> u64 {
        (self.samples - 1) * self.step + self.sample_bytes
    }
}

impl FrameInfo {
    /// A frame with tight rows (no padding): `pixel_stride` 4/3 for RGB, 2 for NV12/NV21, 1 for I420.
    pub fn tight(format: PixelFormat, width: u32, height: u32, rotation: Rotation) -> FrameInfo {
        let cw = width.div_ceil(2);
        let (row_strides, pixel_stride) = match format {
            PixelFormat::Rgba8 | PixelFormat::Bgra8 => (vec![width.saturating_mul(4)], 4),
            PixelFormat::Rgb8 => (vec![width.saturating_mul(3)], 3),
            PixelFormat::Nv21 | PixelFormat::Nv12 => (vec![width, cw.saturating_mul(2)], 2),
            PixelFormat::I420 => (vec![width, cw, cw], 1),
        };
        FrameInfo {
            format,
            width,
            height,
            row_strides,
            pixel_stride,
            rotation,
        }
    }

    /// Width and height after rotation.
    pub fn upright_size(&self) -> (u32, u32) {
        match self.rotation {
            Rotation::R0 | Rotation::R180 => (self.width, self.height),
            Rotation::R90 | Rotation::R270 => (self.height, self.width),
        }
    }

    /// Checks dimensions, plane count and strides, and returns each plane's shape.
    fn plane_shapes(&self) -> Result<Vec<PlaneShape>, FrameError> {
        let (w, h) = (u64::from(self.width), u64::from(self.height));
        if w == 0 || h == 0 {
            return Err(FrameError::BadDimensions {
                width: w,
                height: h,
            });
        }
        if w * h > MAX_PIXELS {
            return Err(FrameError::TooLarge {
                width: w,
                height: h,
                max_pixels: MAX_PIXELS,
            });
        }
        let expected = self.format.plane_count();
        if self.row_strides.len() != expected {
            return Err(FrameError::PlaneCount {
                expected,
                got: self.row_strides.len(),
            });
        }
        let ps = u64::from(self.pixel_stride);
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let luma = PlaneShape {
            rows: h,
            samples: w,
            step: 1,
            sample_bytes: 1,
        };
        let min_ps = match self.format {
            PixelFormat::Rgba8 | PixelFormat::Bgra8 => 4,
            PixelFormat::Rgb8 => 3,
            PixelFormat::Nv21 | PixelFormat::Nv12 => 2,
            PixelFormat::I420 => 1,
        };
        if self.pixel_stride < min_ps {
            return Err(FrameError::BadPixelStride {
                pixel_stride: self.pixel_stride,
                min: min_ps,
            });
        }
        let shapes = match self.format {
            PixelFormat::Rgba8 | PixelFormat::Bgra8 | PixelFormat::Rgb8 => {
                vec![PlaneShape {
                    rows: h,
                    samples: w,
                    step: ps,
                    sample_bytes: u64::from(min_ps),
                }]
            }
            PixelFormat::Nv21 | PixelFormat::Nv12 => {
                vec![
                    luma,
                    PlaneShape {
                        rows: ch,
                        samples: cw,
                        step: ps,
                        sample_bytes: 2,
                    },
                ]
            }
            PixelFormat::I420 => {
                let chroma = PlaneShape {
                    rows: ch,
                    samples: cw,
                    step: ps,
                    sample_bytes: 1,
                };
                vec![luma, chroma, chroma]
            }
        };
        for (plane, (shape, &stride)) in shapes.iter().zip(&self.row_strides).enumerate() {
            let min = shape.last_row_bytes();
            if u64::from(stride) < min {
                return Err(FrameError::BadStride { plane, stride, min });
            }
        }
        Ok(shapes)
    }

    /// Bytes each plane needs (see the module documentation), after validating the geometry.
    pub fn plane_min_lens(&self) -> Result<Vec<usize>, FrameError> {
        self.plane_shapes()?
            .iter()
            .zip(&self.row_strides)
            .enumerate()
            .map(|(plane, (shape, &stride))| {
                let n = u64::from(stride)
                    .checked_mul(shape.rows - 1)
                    .and_then(|n| n.checked_add(shape.last_row_bytes()));
                n.and_then(|n| usize::try_from(n).ok())
                    .ok_or(FrameError::BadStride {
                        plane,
                        stride,
                        min: shape.last_row_bytes(),
                    })
            })
            .collect()
    }

    /// Byte offset of each plane inside a single buffer: plane `p + 1` starts `row_strides[p] * rows(p)` after
    /// plane `p`.
    pub fn plane_offsets(&self) -> Result<Vec<usize>, FrameError> {
        let shapes = self.plane_shapes()?;
        let mut offsets = Vec::with_capacity(shapes.len());
        let mut offset: u64 = 0;
        for (plane, (shape, &stride)) in shapes.iter().zip(&self.row_strides).enumerate() {
            let as_usize = usize::try_from(offset).map_err(|_| FrameError::BadStride {
                plane,
                stride,
                min: shape.last_row_bytes(),
            })?;
            offsets.push(as_usize);
            offset = u64::from(stride)
                .checked_mul(shape.rows)
                .and_then(|n| n.checked_add(offset))
                .ok_or(FrameError::BadStride {
                    plane,
                    stride,
                    min: shape.last_row_bytes(),
                })?;
        }
        Ok(offsets)
    }

    /// Total bytes a single buffer must hold: offset of the last plane plus that plane's minimum length.
    pub fn required_len(&self) -> Result<usize, FrameError> {
        let offsets = self.plane_offsets()?;
        let lens = self.plane_min_lens()?;
        let (last_off, last_len) = (offsets[offsets.len() - 1], lens[lens.len() - 1]);
        last_off
            .checked_add(last_len)
            .ok_or(FrameError::BufferTooShort {
                plane: offsets.len() - 1,
                needed: usize::MAX,
                got: 0,
            })
    }

    /// Splits a single buffer into plane slices at [`FrameInfo::plane_offsets`], checking every length.
    pub fn split_planes<'a>(&self, data: &'a [u8]) -> Result<Vec<&'a [u8]>, FrameError> {
        let offsets = self.plane_offsets()?;
        let lens = self.plane_min_lens()?;
        let mut planes = Vec::with_capacity(offsets.len());
        for (plane, (&off, &len)) in offsets.iter().zip(&lens).enumerate() {
            let needed = off.saturating_add(len);
            if data.len() < needed {
                return Err(FrameError::BufferTooShort {
                    plane,
                    needed,
                    got: data.len(),
                });
            }
            let end = offsets
                .get(plane + 1)
                .map_or(data.len(), |&next| next.min(data.len()));
            planes.push(&data[off..end.max(needed)]);
        }
        Ok(planes)
    }
}

/// A validated frame: plane slices that are long enough for every sample access below.
struct FrameView<'a> {
    info: &'a FrameInfo,
    planes: Vec<&'a [u8]>,
    width: usize,
    height: usize,
}

impl<'a> FrameView<'a> {
    fn new(planes: &[&'a [u8]], info: &'a FrameInfo) -> Result<Self, FrameError> {
        let lens = info.plane_min_lens()?;
        if planes.len() != lens.len() {
            return Err(FrameError::PlaneCount {
                expected: lens.len(),
                got: planes.len(),
            });
        }
        for (plane, (data, &needed)) in planes.iter().zip(&lens).enumerate() {
            if data.len() < needed {
                return Err(FrameError::BufferTooShort {
                    plane,
                    needed,
                    got: data.len(),
                });
            }
        }
        Ok(FrameView {
            info,
            planes: planes.to_vec(),
            width: info.width as usize,
            height: info.height as usize,
        })
    }

    fn stride(&self, plane: usize) -> usize {
        self.info.row_strides[plane] as usize
    }

    /// Writes the RGB pixels of row `y` (unrotated) into `out` (`3 * width` bytes).
    fn rgb_row(&self, y: usize, out: &mut [u8]) {
        let w = self.width;
        let ps = self.info.pixel_stride as usize;
        match self.info.format {
            PixelFormat::Rgba8 | PixelFormat::Bgra8 | PixelFormat::Rgb8 => {
                let ([r, g, b], _) = self.info.format.rgb_layout().unwrap_or(([0, 1, 2], 3));
                let row = &self.planes[0][y * self.stride(0)..];
                for (x, px) in out.chunks_exact_mut(3).enumerate() {
                    let s = &row[x * ps..];
                    px.copy_from_slice(&[s[r], s[g], s[b]]);
                }
            }
            PixelFormat::Nv21 | PixelFormat::Nv12 => {
                let ys = &self.planes[0][y * self.stride(0)..y * self.stride(0) + w];
                let uv = &self.planes[1][(y / 2) * self.stride(1)..];
                let (ui, vi) = if self.info.format == PixelFormat::Nv12 {
                    (0, 1)
                } else {
                    (1, 0)
                };
                for (x, px) in out.chunks_exact_mut(3).enumerate() {
                    let c = (x / 2) * ps;
                    px.copy_from_slice(&yuv_to_rgb(ys[x], uv[c + ui], uv[c + vi]));
                }
            }
            PixelFormat::I420 => {
                let ys = &self.planes[0][y * self.stride(0)..y * self.stride(0) + w];
                let us = &self.planes[1][(y / 2) * self.stride(1)..];
                let vs = &self.planes[2][(y / 2) * self.stride(2)..];
                for (x, px) in out.chunks_exact_mut(3).enumerate() {
                    let c = (x / 2) * ps;
                    px.copy_from_slice(&yuv_to_rgb(ys[x], us[c], vs[c]));
                }
            }
        }
    }

    /// Adds the luma of the first `acc.len()` pixels of row `y` into `acc`.
    fn add_luma_row<T: Copy + AddAssign + From<u8>>(&self, y: usize, acc: &mut [T]) {
        match self.info.format.rgb_layout() {
            None => {
                let start = y * self.stride(0);
                let row = &self.planes[0][start..start + acc.len()];
                for (a, &v) in acc.iter_mut().zip(row) {
                    *a += T::from(v);
                }
            }
            Some(([r, g, b], _)) => {
                let ps = self.info.pixel_stride as usize;
                let row = &self.planes[0][y * self.stride(0)..];
                for (x, a) in acc.iter_mut().enumerate() {
                    let s = &row[x * ps..];
                    *a += T::from(rgb_luma(s[r], s[g], s[b]));
                }
            }
        }
    }
}

/// BT.601 full-range YUV → RGB (16.16 fixed point, rounded, clamped).
#[inline]
fn yuv_to_rgb(y: u8, u: u8, v: u8) -> [u8; 3] {
    let y = (i32::from(y) << 16) + (1 << 15);
    let (u, v) = (i32::from(u) - 128, i32::from(v) - 128);
    let clamp = |x: i32| (x >> 16).clamp(0, 255) as u8;
    [
        clamp(y + 91_881 * v),
        clamp(y - 22_554 * u - 46_802 * v),
        clamp(y + 116_130 * u),
    ]
}

/// BT.601 luma of an RGB pixel (16.16 fixed point, rounded).
#[inline]
fn rgb_luma(r: u8, g: u8, b: u8) -> u8 {
    ((19_595 * u32::from(r) + 38_470 * u32::from(g) + 7_471 * u32::from(b) + (1 << 15)) >> 16) as u8
}

fn rotate_rgb(img: RgbImage, rotation: Rotation) -> RgbImage {
    match rotation {
        Rotation::R0 => img,
        Rotation::R90 => image::imageops::rotate90(&img),
        Rotation::R180 => image::imageops::rotate180(&img),
        Rotation::R270 => image::imageops::rotate270(&img),
    }
}

fn rotate_gray(img: GrayImage, rotation: Rotation) -> GrayImage {
    match rotation {
        Rotation::R0 => img,
        Rotation::R90 => image::imageops::rotate90(&img),
        Rotation::R180 => image::imageops::rotate180(&img),
        Rotation::R270 => image::imageops::rotate270(&img),
    }
}

/// Converts a frame held in one buffer (layout in the module documentation) to an upright RGB image.
pub fn frame_to_rgb(data: &[u8], info: &FrameInfo) -> Result<RgbImage, FrameError> {
    frame_to_rgb_planes(&info.split_planes(data)?, info)
}

/// Converts a frame given as one slice per plane to an upright RGB image.
pub fn frame_to_rgb_planes(planes: &[&[u8]], info: &FrameInfo) -> Result<RgbImage, FrameError> {
    let view = FrameView::new(planes, info)?;
    let row_bytes = view.width * 3;
    let mut out = vec![0u8; row_bytes * view.height];
    for (y, row) in out.chunks_exact_mut(row_bytes).enumerate() {
        view.rgb_row(y, row);
    }
    let img =
        RgbImage::from_raw(info.width, info.height, out).ok_or(FrameError::BadDimensions {
            width: u64::from(info.width),
            height: u64::from(info.height),
        })?;
    Ok(rotate_rgb(img, info.rotation))
}

/// Downsampling factor used by [`luma_thumbnail`]: the smallest integer `f` with `ceil(long_side / f) <=
/// max_side`, at least 1.
pub fn thumbnail_factor(width: u32, height: u32, max_side: u32) -> u32 {
    width.max(height).div_ceil(max_side.max(1)).max(1)
}

/// Upright luma thumbnail of a frame held in one buffer; see [`luma_thumbnail_planes`].
pub fn luma_thumbnail(
    data: &[u8],
    info: &FrameInfo,
    max_side: u32,
) -> Result<GrayImage, FrameError> {
    luma_thumbnail_planes(&info.split_planes(data)?, info, max_side)
}

/// Upright luma thumbnail by area averaging, reading only the Y plane of YUV frames.
///
/// With `f = `[`thumbnail_factor`]`(width, height, max_side)`, each output pixel is the rounded mean of an
/// `f × f` block of luma (the block is clipped to the image when a side is shorter than `f`); the output is
/// `max(1, width / f) × max(1, height / f)` before rotation, so up to `f - 1` trailing columns and rows are
/// dropped. For RGB input the luma of each pixel is computed first (BT.601). Rotation is applied to the
/// thumbnail. `max_side` must be at least 1.
pub fn luma_thumbnail_planes(
    planes: &[&[u8]],
    info: &FrameInfo,
    max_side: u32,
) -> Result<GrayImage, FrameError> {
    Ok(rotate_gray(
        luma_thumbnail_unrotated(planes, info, max_side)?,
        info.rotation,
    ))
}

/// [`luma_thumbnail_planes`] without the rotation (the quality gate's measures do not depend on it).
pub(crate) fn luma_thumbnail_unrotated(
    planes: &[&[u8]],
    info: &FrameInfo,
    max_side: u32,
) -> Result<GrayImage, FrameError> {
    if max_side == 0 {
        return Err(FrameError::BadDimensions {
            width: 0,
            height: 0,
        });
    }
    let view = FrameView::new(planes, info)?;
    let f = thumbnail_factor(info.width, info.height, max_side) as usize;
    let (ow, oh) = ((view.width / f).max(1), (view.height / f).max(1));
    let (bw, bh) = (f.min(view.width), f.min(view.height));
    let out = if bh <= 257 && bw * bh <= 4096 {
        // u16 column sums hold 257 rows of 255.
        box_average_small(&view, f, ow, oh)
    } else if bh <= (u32::MAX / 255) as usize {
        box_average::<u32>(&view, f, ow, oh)
    } else {
        // Only frames at most 2 pixels wide can have blocks over 16.8 M rows.
        box_average::<u64>(&view, f, ow, oh)
    };
    GrayImage::from_raw(ow as u32, oh as u32, out).ok_or(FrameError::BadDimensions {
        width: ow as u64,
        height: oh as u64,
    })
}

/// Block sums of `B` columns of `acc`, times `inv / 2^24`, rounded: the block means for `inv = 2^24 / n`.
fn block_means<const B: usize>(acc: &[u16], out: &mut [u8], inv: u32) {
    for (o, block) in out.iter_mut().zip(acc.chunks_exact(B)) {
        let sum: u32 = block.iter().map(|&v| u32::from(v)).sum();
        *o = ((sum * inv + (1 << 23)) >> 24).min(255) as u8;
    }
}

/// [`box_average`] for blocks of at most 257 rows and 4096 pixels, with u16 sums and a multiply for the division.
fn box_average_small(view: &FrameView<'_>, f: usize, ow: usize, oh: usize) -> Vec<u8> {
    let (bw, bh) = (f.min(view.width), f.min(view.height));
    let n = (bw * bh) as u32;
    // sum * inv <= 255 n (2^24 / n + 1/2) < 2^32 for n <= 4096; the rounding error stays below 0.03.
    let inv = ((1u32 << 24) + n / 2) / n;
    let mut acc = vec![0u16; ow * bw];
    let mut out = vec![0u8; ow * oh];
    for (oy, out_row) in out.chunks_exact_mut(ow).enumerate() {
        acc.fill(0);
        for y in oy * f..oy * f + bh {
            view.add_luma_row(y, &mut acc);
        }
        match bw {
            1 => block_means::<1>(&acc, out_row, inv),
            2 => block_means::<2>(&acc, out_row, inv),
            3 => block_means::<3>(&acc, out_row, inv),
            4 => block_means::<4>(&acc, out_row, inv),
            5 => block_means::<5>(&acc, out_row, inv),
            6 => block_means::<6>(&acc, out_row, inv),
            8 => block_means::<8>(&acc, out_row, inv),
            _ => {
                for (o, block) in out_row.iter_mut().zip(acc.chunks_exact(bw)) {
                    let sum: u32 = block.iter().map(|&v| u32::from(v)).sum();
                    *o = ((sum * inv + (1 << 23)) >> 24).min(255) as u8;
                }
            }
        }
    }
    out
}

/// Area average of `f × f` luma blocks (clipped to the image) into an `ow × oh` buffer.
fn box_average<T>(view: &FrameView<'_>, f: usize, ow: usize, oh: usize) -> Vec<u8>
where
    T: Copy + Default + AddAssign + From<u8> + Into<u64>,
{
    let (bw, bh) = (f.min(view.width), f.min(view.height));
    let n = (bw * bh) as u64;
    // Division by the block area as a multiply, within 0.002 of exact for n < 2^16.
    let inv = ((1u64 << 32) + n / 2) / n;
    let average = |sum: u64| {
        let v = if n < (1 << 16) {
            (sum * inv + (1 << 31)) >> 32
        } else {
            (sum + n / 2) / n
        };
        v.min(255) as u8
    };
    let mut acc = vec![T::default(); ow * bw];
    let mut out = vec![0u8; ow * oh];
    for (oy, out_row) in out.chunks_exact_mut(ow).enumerate() {
        acc.fill(T::default());
        for y in oy * f..oy * f + bh {
            view.add_luma_row(y, &mut acc);
        }
        for (o, block) in out_row.iter_mut().zip(acc.chunks_exact(bw)) {
            *o = average(block.iter().map(|&v| v.into()).sum());
        }
    }
    out
}

/// Decodes a JPEG or PNG file to upright RGB; see [`decode_bytes`].
pub fn decode_file(path: &Path) -> Result<RgbImage, FrameError> {
    let file = std::fs::File::open(path)?;
    let bytes = file.metadata()?.len();
    if bytes > MAX_FILE_BYTES {
        return Err(FrameError::FileTooLarge {
            bytes,
            max_bytes: MAX_FILE_BYTES,
        });
    }
    let mut data = Vec::with_capacity(bytes as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut data)?;
    if data.len() as u64 > MAX_FILE_BYTES {
        return Err(FrameError::FileTooLarge {
            bytes: data.len() as u64,
            max_bytes: MAX_FILE_BYTES,
        });
    }
    decode_bytes(&data)
}

/// Decodes JPEG or PNG bytes (format sniffed from the content) to upright RGB.
///
/// The header is read first and images over [`MAX_PIXELS`] (or with a side over [`MAX_SIDE`]) are rejected
/// with [`FrameError::TooLarge`] before the pixel buffer is allocated; `image::Limits` caps decoder
/// allocations at [`MAX_DECODE_ALLOC`] as well. The EXIF orientation (JPEG APP1, PNG eXIf) is applied. Alpha
/// is dropped; 16-bit images are reduced to 8 bits; greyscale is expanded to RGB.
pub fn decode_bytes(data: &[u8]) -> Result<RgbImage, FrameError> {
    decode_reader(Cursor::new(data))
}

fn decode_reader<R: BufRead + Seek>(reader: R) -> Result<RgbImage, FrameError> {
    let mut reader = ImageReader::new(reader).with_guessed_format()?;
    match reader.format() {
        Some(ImageFormat::Jpeg | ImageFormat::Png) => {}
        Some(other) => return Err(FrameError::UnsupportedFormat(format!("{other:?}"))),
        None => {
            return Err(FrameError::UnsupportedFormat(
                "not a JPEG or PNG file".into(),
            ))
        }
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(image_error)?;
    let (w, h) = decoder.dimensions();
    let (w64, h64) = (u64::from(w), u64::from(h));
    if w == 0 || h == 0 {
        return Err(FrameError::BadDimensions {
            width: w64,
            height: h64,
        });
    }
    if w64 * h64 > MAX_PIXELS {
        return Err(FrameError::TooLarge {
            width: w64,
            height: h64,
            max_pixels: MAX_PIXELS,
        });
    }
    let orientation = decoder.orientation().map_err(image_error)?;
    let mut img = DynamicImage::from_decoder(decoder).map_err(image_error)?;
    img.apply_orientation(orientation);
    Ok(img.into_rgb8())
}

fn image_error(e: image::ImageError) -> FrameError {
    match e {
        image::ImageError::IoError(io) => FrameError::Decode(io.to_string()),
        image::ImageError::Unsupported(u) => FrameError::UnsupportedFormat(u.to_string()),
        other => FrameError::Decode(other.to_string()),
    }
}

/// Resampling filter for [`resize_rgb`]. All are fast_image_resize 6.1 algorithms on 8-bit RGB with
/// pixel-centre alignment (`align_corners = false`); each variant documents its reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResizeFilter {
    /// `ResizeAlg::Nearest`.
    Nearest,
    /// `ResizeAlg::Convolution(FilterType::Bilinear)`: triangle filter whose support widens with the
    /// downscale factor (antialiased), the same as Pillow's `Image.resize(size, Image.BILINEAR)` and
    /// `torch.nn.functional.interpolate(mode="bilinear", antialias=True, align_corners=False)`. When
    /// upscaling it is plain bilinear interpolation.
    #[default]
    Bilinear,
    /// `ResizeAlg::Interpolation(FilterType::Bilinear)`: fixed 2×2 bilinear taps whatever the scale (no
    /// antialiasing), like OpenCV `INTER_LINEAR` and `interpolate(mode="bilinear", antialias=False)`.
    BilinearNoAntialias,
    /// `ResizeAlg::Convolution(FilterType::Box)`: area average of the covered source pixels, like Pillow's
    /// `Image.BOX` and, for downscaling, OpenCV `INTER_AREA`.
    Area,
}

impl ResizeFilter {
    fn algorithm(self) -> fr::ResizeAlg {
        match self {
            ResizeFilter::Nearest => fr::ResizeAlg::Nearest,
            ResizeFilter::Bilinear => fr::ResizeAlg::Convolution(fr::FilterType::Bilinear),
            ResizeFilter::BilinearNoAntialias => {
                fr::ResizeAlg::Interpolation(fr::FilterType::Bilinear)
            }
            ResizeFilter::Area => fr::ResizeAlg::Convolution(fr::FilterType::Box),
        }
    }
}

/// Resizes an RGB image to exactly `width × height` (aspect ratio not kept) with `filter`.
pub fn resize_rgb(
    src: &RgbImage,
    width: u32,
    height: u32,
    filter: ResizeFilter,
) -> Result<RgbImage, FrameError> {
    for (w, h) in [(src.width(), src.height()), (width, height)] {
        let (w, h) = (u64::from(w), u64::from(h));
        if w == 0 || h == 0 {
            return Err(FrameError::BadDimensions {
                width: w,
                height: h,
            });
        }
        if w * h > MAX_PIXELS {
            return Err(FrameError::TooLarge {
                width: w,
                height: h,
                max_pixels: MAX_PIXELS,
            });
        }
    }
    let src_ref =
        fr::images::ImageRef::new(src.width(), src.height(), src.as_raw(), fr::PixelType::U8x3)
            .map_err(|e| FrameError::Resize(e.to_string()))?;
    let mut dst = fr::images::Image::new(width, height, fr::PixelType::U8x3);
    let options = fr::ResizeOptions::new().resize_alg(filter.algorithm());
    fr::Resizer::new()
        .resize(&src_ref, &mut dst, &options)
        .map_err(|e| FrameError::Resize(e.to_string()))?;
    RgbImage::from_raw(width, height, dst.into_vec())
        .ok_or_else(|| FrameError::Resize("output buffer size mismatch".into()))
}
