//! FFI mirrors of the core frame and quality types, with lossless conversions both ways.
//!
//! They exist so the foreign API is documented and stable on its own terms; field meanings, units and ranges are
//! those of `netron_ocr_core::frame` and `netron_ocr_core::quality` (see their module documentation).

use netron_ocr_core::{frame as core_frame, quality as core_quality};

use crate::error::NetronError;

/// Pixel layout of a camera frame (planes in order: see `netron_ocr_core::frame`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, uniffi::Enum)]
pub enum PixelFormat {
    /// 1 plane, 4 bytes a pixel: R, G, B, A (alpha ignored).
    Rgba8,
    /// 1 plane, 4 bytes a pixel: B, G, R, A (iOS `kCVPixelFormatType_32BGRA`).
    Bgra8,
    /// 1 plane, 3 bytes a pixel: R, G, B.
    Rgb8,
    /// 2 planes: Y, then interleaved V,U (Android's legacy camera default).
    Nv21,
    /// 2 planes: Y, then interleaved U,V (iOS `420YpCbCr8BiPlanarFullRange`).
    Nv12,
    /// 3 planes: Y, U, V. Android's `YUV_420_888` is passed as `I420` with its chroma `pixel_stride` (often 2).
    I420,
}

/// How far the frame must be turned clockwise to be upright (Android's `rotationDegrees`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, uniffi::Enum)]
pub enum Rotation {
    R0,
    R90,
    R180,
    R270,
}

/// Geometry of a camera frame.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FrameInfo {
    pub format: PixelFormat,
    /// Width in pixels, before rotation.
    pub width: u32,
    /// Height in pixels, before rotation.
    pub height: u32,
    /// Bytes from one row to the next, one entry per plane.
    pub row_strides: Vec<u32>,
    /// Bytes between pixels of the packed RGB plane, or between samples of the chroma plane(s).
    pub pixel_stride: u32,
    pub rotation: Rotation,
}

/// Advice for the user, most important first in [`FrameQuality::hints`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, uniffi::Enum)]
pub enum Hint {
    TooDark,
    TooBright,
    ReduceGlare,
    HoldSteady,
    TooBlurry,
    MoveCloser,
    MoveBack,
    /// From a scan, never from the gate alone: the graph's text is too small to be read reliably
    /// (`ScanResult.text_height` under the scanner's threshold). Zoom in in Netron, or move closer and scan the
    /// graph in parts. Advisory: it does not change `accept`.
    ZoomIn,
}

/// Brightness statistics; luma as fractions of full scale (0..1).
#[derive(Debug, Clone, Copy, PartialEq, uniffi::Record)]
pub struct Exposure {
    /// Mean luma of the analysis thumbnail.
    pub mean: f32,
    /// Fraction of thumbnail pixels at or below the dark clip level.
    pub clipped_dark: f32,
    /// Fraction of thumbnail pixels at or above the bright clip level.
    pub clipped_bright: f32,
    /// 5th luma percentile of the content cells.
    pub content_low: f32,
    /// 95th luma percentile of the content cells.
    pub content_high: f32,
}

/// The quality gate's verdict on one frame.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct FrameQuality {
    /// True when no blocking hint fired.
    pub accept: bool,
    /// 0..1, for ranking frames.
    pub score: f32,
    /// Contrast-normalised Laplacian variance of the content (1/px⁴ of the analysis thumbnail).
    pub sharpness: f32,
    pub exposure: Exposure,
    /// Fraction of the frame in large saturated blobs brighter than the screen background.
    pub glare: f32,
    /// 1 − mean absolute luma change from the previous frame (0..1); null without a previous frame.
    pub stability: Option<f32>,
    /// Fraction of analysis cells holding textured content.
    pub content: f32,
    /// Advice, most important first.
    pub hints: Vec<Hint>,
}

/// Thresholds of the quality gate (luma levels 0..=255, fractions 0..1). Start from [`default_quality_params`];
/// the meaning of each field is documented on `netron_ocr_core::quality::QualityParams`.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct QualityParams {
    /// Long side of the analysis thumbnail, at most (pixels).
    pub analysis_max_side: u32,
    /// Side of an analysis cell (thumbnail pixels).
    pub cell_size: u32,
    /// A cell with at least this luma standard deviation holds content.
    pub content_min_std: f32,
    /// `TooBlurry` below this sharpness.
    pub min_sharpness: f32,
    /// Sharpness at which the sharpness score reaches 1.
    pub good_sharpness: f32,
    /// Luma at or below which a pixel counts as clipped dark.
    pub dark_clip: u8,
    /// Luma at or above which a pixel counts as clipped bright.
    pub bright_clip: u8,
    /// `TooDark` when the content's bright end is below this (fraction of full scale).
    pub too_dark_high: f32,
    /// `TooBright` when the content's dark end is above this (fraction of full scale).
    pub too_bright_low: f32,
    /// Luma at or above which a pixel counts as saturated for glare.
    pub saturation_level: u8,
    /// Largest luma step between 4-neighbours in a smooth glare-halo cell.
    pub glare_halo_max_step: u8,
    /// A saturated blob is glare when at least this share of the cells around it are smooth halo.
    pub glare_halo_share: f32,
    /// Smallest glare blob that counts, as a fraction of the frame.
    pub glare_min_blob: f32,
    /// `ReduceGlare` at or above this glare fraction.
    pub max_glare: f32,
    /// `HoldSteady` when `1 - stability` exceeds this.
    pub max_motion: f32,
    /// `MoveCloser` (blocking) when fewer than this fraction of cells hold content.
    pub min_content: f32,
    /// `MoveCloser` (advisory) when the content's bounding box covers less than this fraction of the frame.
    pub move_closer_bbox: f32,
    /// `MoveBack` (advisory) threshold on the content in the outermost ring of cells.
    pub move_back_ring: f32,
    /// Whether the advisory framing hints also reject the frame.
    pub framing_blocks: bool,
}

/// The gate's default thresholds (`netron_ocr_core::quality::QualityParams::default()`).
#[uniffi::export]
pub fn default_quality_params() -> Result<QualityParams, NetronError> {
    crate::boundary::guarded(|| Ok(core_quality::QualityParams::default().into()))
}

/// The rotation for clockwise `degrees` (0, 90, 180 or 270), e.g. Android's `ImageInfo.rotationDegrees`.
#[uniffi::export]
pub fn rotation_from_degrees(degrees: u32) -> Result<Rotation, NetronError> {
    crate::boundary::guarded(|| {
        core_frame::Rotation::from_degrees(degrees)
            .map(Rotation::from)
            .ok_or_else(|| {
                NetronError::InvalidFrame(format!(
                    "rotation of {degrees} degrees: expected 0, 90, 180 or 270"
                ))
            })
    })
}

/// Geometry of a tightly packed frame (no row padding; chroma `pixel_stride` 2 for NV12/NV21, 1 for I420).
#[uniffi::export]
pub fn tight_frame_info(
    format: PixelFormat,
    width: u32,
    height: u32,
    rotation: Rotation,
) -> Result<FrameInfo, NetronError> {
    crate::boundary::guarded(|| {
        Ok(core_frame::FrameInfo::tight(format.into(), width, height, rotation.into()).into())
    })
}

/// Picks the planes a format uses out of the three plane arguments of the `*_planes` functions; planes past the
/// format's count must be empty (so a mistaken format is reported, not silently ignored).
pub(crate) fn select_planes(
    format: PixelFormat,
    planes: [&[u8]; 3],
) -> Result<Vec<&[u8]>, NetronError> {
    let count = core_frame::PixelFormat::from(format).plane_count();
    if let Some(extra) = planes[count..].iter().position(|p| !p.is_empty()) {
        return Err(NetronError::InvalidFrame(format!(
            "{format:?} has {count} plane(s) but plane {} is not empty",
            count + extra
        )));
    }
    Ok(planes[..count].to_vec())
}

macro_rules! mirror_enum {
    ($ffi:ident <=> $core:path { $($v:ident),* $(,)? }) => {
        impl From<$ffi> for $core {
            fn from(v: $ffi) -> Self {
                match v { $($ffi::$v => <$core>::$v),* }
            }
        }
        impl From<$core> for $ffi {
            fn from(v: $core) -> Self {
                match v { $(<$core>::$v => $ffi::$v),* }
            }
        }
    };
}

mirror_enum!(PixelFormat <=> core_frame::PixelFormat { Rgba8, Bgra8, Rgb8, Nv21, Nv12, I420 });
mirror_enum!(Rotation <=> core_frame::Rotation { R0, R90, R180, R270 });
mirror_enum!(Hint <=> core_quality::Hint { TooDark, TooBright, ReduceGlare, HoldSteady, TooBlurry, MoveCloser, MoveBack, ZoomIn });

impl From<FrameInfo> for core_frame::FrameInfo {
    fn from(i: FrameInfo) -> Self {
        core_frame::FrameInfo {
            format: i.format.into(),
            width: i.width,
            height: i.height,
            row_strides: i.row_strides,
            pixel_stride: i.pixel_stride,
            rotation: i.rotation.into(),
        }
    }
}

impl From<core_frame::FrameInfo> for FrameInfo {
    fn from(i: core_frame::FrameInfo) -> Self {
        FrameInfo {
            format: i.format.into(),
            width: i.width,
            height: i.height,
            row_strides: i.row_strides,
            pixel_stride: i.pixel_stride,
            rotation: i.rotation.into(),
        }
    }
}

impl From<core_quality::FrameQuality> for FrameQuality {
    fn from(q: core_quality::FrameQuality) -> Self {
        let e = q.exposure;
        FrameQuality {
            accept: q.accept,
            score: q.score,
            sharpness: q.sharpness,
            exposure: Exposure {
                mean: e.mean,
                clipped_dark: e.clipped_dark,
                clipped_bright: e.clipped_bright,
                content_low: e.content_low,
                content_high: e.content_high,
            },
            glare: q.glare,
            stability: q.stability,
            content: q.content,
            hints: q.hints.into_iter().map(Hint::from).collect(),
        }
    }
}

/// Both directions of the `QualityParams` mirror (the field lists are identical).
macro_rules! mirror_params {
    ($($f:ident),* $(,)?) => {
        impl From<QualityParams> for core_quality::QualityParams {
            fn from(p: QualityParams) -> Self {
                core_quality::QualityParams { $($f: p.$f),* }
            }
        }
        impl From<core_quality::QualityParams> for QualityParams {
            fn from(p: core_quality::QualityParams) -> Self {
                QualityParams { $($f: p.$f),* }
            }
        }
    };
}

mirror_params!(
    analysis_max_side,
    cell_size,
    content_min_std,
    min_sharpness,
    good_sharpness,
    dark_clip,
    bright_clip,
    too_dark_high,
    too_bright_low,
    saturation_level,
    glare_halo_max_step,
    glare_halo_share,
    glare_min_blob,
    max_glare,
    max_motion,
    min_content,
    move_closer_bbox,
    move_back_ring,
    framing_blocks,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_info_round_trips() {
        let info = FrameInfo {
            format: PixelFormat::I420,
            width: 5,
            height: 3,
            row_strides: vec![8, 4, 4],
            pixel_stride: 2,
            rotation: Rotation::R270,
        };
        let core: core_frame::FrameInfo = info.clone().into();
        assert_eq!(core.format, core_frame::PixelFormat::I420);
        assert_eq!(core.rotation, core_frame::Rotation::R270);
        assert_eq!(FrameInfo::from(core), info);
    }

    #[test]
    fn params_round_trip() {
        let mut p = default_quality_params().unwrap();
        p.cell_size = 12;
        p.framing_blocks = true;
        let core: core_quality::QualityParams = p.clone().into();
        assert_eq!(core.cell_size, 12);
        assert_eq!(QualityParams::from(core), p);
    }

    #[test]
    fn rotation_degrees() {
        assert_eq!(rotation_from_degrees(90).unwrap(), Rotation::R90);
        assert!(matches!(
            rotation_from_degrees(45),
            Err(NetronError::InvalidFrame(_))
        ));
    }

    #[test]
    fn extra_planes_must_be_empty() {
        let y = [0u8; 4];
        let uv = [0u8; 2];
        assert_eq!(
            select_planes(PixelFormat::Nv21, [&y, &uv, &[]])
                .unwrap()
                .len(),
            2
        );
        let err = select_planes(PixelFormat::Rgb8, [&y, &uv, &[]]).unwrap_err();
        assert!(matches!(err, NetronError::InvalidFrame(m) if m.contains("plane 1")));
    }
}
