//! Frame-quality gate: is this camera frame good enough to read a Netron graph from?
//!
//! Every measure works on one luma thumbnail (see [`frame::luma_thumbnail`]) whose long side is at most
//! [`QualityParams::analysis_max_side`] (480 by default: a 1920×1080 frame becomes 480×270 by 4×4 area
//! averaging). The thumbnail is split into square cells of [`QualityParams::cell_size`] pixels (8 by default,
//! i.e. 32×32 camera pixels at 1920×1080); the last cell of a row or column absorbs the remainder.
//!
//! * **Content cells**: cells whose luma standard deviation is at least `content_min_std`. Netron's canvas is a
//!   flat background with textured cards, labels and edges, so content cells are where the graph is.
//! * **Sharpness**: the variance (mean square) of the 4-neighbour Laplacian `4p - up - down - left - right`
//!   over the content cells, divided by the luma variance of the same cells (each about its cell mean). The
//!   ratio does not depend on contrast or exposure, nor on how much of the frame the graph covers; it falls
//!   monotonically as blur grows (for a Gaussian blur this holds exactly, the ratio being a mean of `|k|⁴` under
//!   a spectrum tilted towards low frequencies). Units: 1/pixel⁴ of the thumbnail. Frames with no content cells
//!   get 0.
//! * **Exposure**: mean luma, the clipped fractions (`<= dark_clip`, `>= bright_clip`) of the whole thumbnail,
//!   and the 5th and 95th luma percentiles of the content cells (`content_low`, `content_high`). A clean white
//!   Netron screenshot is mostly clipped white yet perfectly exposed, so the hints look at the content:
//!   `TooDark` when even the bright parts of the content are dim (`content_high < too_dark_high`), `TooBright`
//!   when even its dark parts are washed out (`content_low > too_bright_low`). Without content cells the mean
//!   decides (`< too_dark_high / 2` or `> 1 - (1 - too_bright_low) / 4`).
//! * **Glare**: the share of the frame covered by large blobs of cells that are mostly saturated
//!   (`>= saturation_level` on at least half their pixels) **and** brighter than the screen background by
//!   `glare_margin`. The background is the median mean of the flat cells (std `<= flat_max_std`) inside the
//!   content's bounding box. Thin white text cannot fill a cell, and a clean white screen is not brighter than
//!   itself, so neither counts. Limitation: when the screen background itself is clipped white, glare on it is
//!   invisible and reads 0.
//! * **Stability** (only with a previous frame, see [`FrameGate`]): `1 - mean |a - b|` over two 32×32 area
//!   thumbnails of consecutive frames, each minus its own mean (so auto-exposure drift does not count), luma
//!   in 0..1. 1 means identical.
//! * **Framing** (weak heuristic): `MoveCloser` when the content covers less than `min_content` of the cells, or
//!   its bounding box less than `move_closer_bbox` of the frame; `MoveBack` when at least `move_back_ring` of
//!   the outermost ring of cells is content, i.e. the graph runs off the frame edges. It cannot tell a monitor
//!   bezel or a busy desk from the screen, so only the `min_content` case blocks acceptance unless
//!   `framing_blocks` is set.
//!
//! `accept` is true when no blocking hint fired. `score` in 0..1 is the product of one score per measure, each
//! 0.5 at its threshold and 1 once comfortably past it; it ranks frames (e.g. to keep the best of a burst).
//! The default thresholds and how they were chosen are in `docs/quality.md`.

use image::{GrayImage, RgbImage};
use serde::{Deserialize, Serialize};

use crate::frame::{self, FrameError, FrameInfo, PixelFormat, Rotation};

/// Side of the square thumbnail compared between consecutive frames for stability.
pub const STABILITY_SIDE: usize = 32;

/// Advice for the user, most important first in [`FrameQuality::hints`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hint {
    TooDark,
    TooBright,
    ReduceGlare,
    HoldSteady,
    TooBlurry,
    MoveCloser,
    MoveBack,
}

/// Brightness statistics; every value is a luma level or a fraction in 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Exposure {
    /// Mean luma of the thumbnail.
    pub mean: f32,
    /// Fraction of thumbnail pixels at or below `dark_clip`.
    pub clipped_dark: f32,
    /// Fraction of thumbnail pixels at or above `bright_clip`.
    pub clipped_bright: f32,
    /// 5th luma percentile of the content cells (the mean when there are none).
    pub content_low: f32,
    /// 95th luma percentile of the content cells (the mean when there are none).
    pub content_high: f32,
}

/// Verdict on one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameQuality {
    /// True when no blocking hint fired.
    pub accept: bool,
    /// 0..1, for ranking frames; see the module documentation.
    pub score: f32,
    /// Contrast-normalised Laplacian variance of the content (1/px⁴ of the analysis thumbnail).
    pub sharpness: f32,
    pub exposure: Exposure,
    /// Fraction of the frame in large saturated blobs brighter than the screen background.
    pub glare: f32,
    /// 1 − mean absolute luma change from the previous frame; `None` without one.
    pub stability: Option<f32>,
    /// Fraction of analysis cells holding textured content.
    pub content: f32,
    /// Advice, most important first.
    pub hints: Vec<Hint>,
}

/// Thresholds of the gate. Luma levels are 0..=255 on the analysis thumbnail; fractions are 0..1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QualityParams {
    /// Long side of the analysis thumbnail, at most (pixels).
    pub analysis_max_side: u32,
    /// Side of an analysis cell (thumbnail pixels).
    pub cell_size: u32,
    /// A cell with at least this luma standard deviation holds content.
    pub content_min_std: f32,
    /// A cell with at most this luma standard deviation is flat (background).
    pub flat_max_std: f32,
    /// `TooBlurry` below this sharpness.
    pub min_sharpness: f32,
    /// Sharpness at which the sharpness score reaches 1.
    pub good_sharpness: f32,
    /// Luma at or below which a pixel counts as clipped dark.
    pub dark_clip: u8,
    /// Luma at or above which a pixel counts as clipped bright.
    pub bright_clip: u8,
    /// `TooDark` when the content's 95th percentile is below this (fraction of full scale).
    pub too_dark_high: f32,
    /// `TooBright` when the content's 5th percentile is above this (fraction of full scale).
    pub too_bright_low: f32,
    /// Luma at or above which a pixel counts as saturated for glare.
    pub saturation_level: u8,
    /// How much brighter than the screen background (fraction of full scale) a glare cell must be.
    pub glare_margin: f32,
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
    /// `MoveBack` (advisory) when at least this fraction of the outermost ring of cells holds content.
    pub move_back_ring: f32,
    /// Whether the advisory framing hints also reject the frame.
    pub framing_blocks: bool,
}

impl Default for QualityParams {
    fn default() -> Self {
        QualityParams {
            analysis_max_side: 480,
            cell_size: 8,
            content_min_std: 8.0,
            flat_max_std: 4.0,
            min_sharpness: 0.8,
            good_sharpness: 1.6,
            dark_clip: 8,
            bright_clip: 250,
            too_dark_high: 0.35,
            too_bright_low: 0.6,
            saturation_level: 250,
            glare_margin: 0.08,
            glare_min_blob: 0.005,
            max_glare: 0.02,
            max_motion: 0.03,
            min_content: 0.02,
            move_closer_bbox: 0.2,
            move_back_ring: 0.35,
            framing_blocks: false,
        }
    }
}

/// Per-cell sums over the analysis thumbnail.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    n: u64,
    sum: u64,
    sum_sq: u64,
    saturated: u64,
    lap_sq: u64,
    lap_n: u64,
}

impl Cell {
    fn mean(&self) -> f64 {
        self.sum as f64 / self.n.max(1) as f64
    }

    /// Sum of squared deviations from the cell mean.
    fn sq_dev(&self) -> f64 {
        (self.sum_sq as f64 - (self.sum as f64).powi(2) / self.n.max(1) as f64).max(0.0)
    }

    fn std(&self) -> f64 {
        (self.sq_dev() / self.n.max(1) as f64).sqrt()
    }
}

/// Cell grid over a `w × h` thumbnail.
struct Grid {
    size: usize,
    cols: usize,
    rows: usize,
    w: usize,
    h: usize,
}

impl Grid {
    fn new(w: usize, h: usize, size: usize) -> Grid {
        let size = size.max(1);
        Grid { size, cols: (w / size).max(1), rows: (h / size).max(1), w, h }
    }

    /// Pixel range of cell column `c` (or row, with `len = h`); the last one takes the remainder.
    fn span(&self, c: usize, count: usize, len: usize) -> std::ops::Range<usize> {
        let start = c * self.size;
        let end = if c + 1 == count { len } else { start + self.size };
        start.min(len)..end.min(len)
    }
}

/// Measures of one frame, before stability and hints.
struct Measures {
    sharpness: f32,
    exposure: Exposure,
    glare: f32,
    content: f32,
    content_cells: usize,
    bbox_fraction: f32,
    ring_content: f32,
    stability_thumb: Vec<f32>,
}

fn measure(thumb: &GrayImage, params: &QualityParams) -> Measures {
    let (w, h) = (thumb.width() as usize, thumb.height() as usize);
    let px = thumb.as_raw();
    let grid = Grid::new(w, h, params.cell_size as usize);
    let mut cells = vec![Cell::default(); grid.cols * grid.rows];
    let mut hist = [0u64; 256];
    for &v in px {
        hist[v as usize] += 1;
    }

    // Per-row buffers keep the inner loops simple enough to vectorise.
    let sat_level = params.saturation_level;
    let mut lap_row = vec![0u32; w];
    for y in 0..h {
        let row = &px[y * w..(y + 1) * w];
        let interior = y > 0 && y + 1 < h && w > 2;
        if interior {
            let (up, down) = (&px[(y - 1) * w..y * w], &px[(y + 1) * w..(y + 2) * w]);
            for x in 1..w - 1 {
                let l = 4 * i32::from(row[x])
                    - i32::from(row[x - 1])
                    - i32::from(row[x + 1])
                    - i32::from(up[x])
                    - i32::from(down[x]);
                lap_row[x] = (l * l) as u32;
            }
        }
        let cy = (y / grid.size).min(grid.rows - 1);
        for cx in 0..grid.cols {
            let span = grid.span(cx, grid.cols, w);
            let cell = &mut cells[cy * grid.cols + cx];
            let seg = &row[span.clone()];
            cell.n += seg.len() as u64;
            cell.sum += seg.iter().map(|&v| u64::from(v)).sum::<u64>();
            cell.sum_sq += seg.iter().map(|&v| u64::from(v) * u64::from(v)).sum::<u64>();
            cell.saturated += seg.iter().filter(|&&v| v >= sat_level).count() as u64;
            if interior {
                let lo = span.start.max(1);
                let hi = span.end.min(w - 1);
                if lo < hi {
                    cell.lap_sq += lap_row[lo..hi].iter().map(|&v| u64::from(v)).sum::<u64>();
                    cell.lap_n += (hi - lo) as u64;
                }
            }
        }
    }

    let is_content: Vec<bool> = cells.iter().map(|c| c.std() >= f64::from(params.content_min_std)).collect();
    let content_cells = is_content.iter().filter(|&&c| c).count();

    // Sharpness: Laplacian energy per pixel over luma variance per pixel, content cells only.
    let (mut lap_sq, mut lap_n, mut sq_dev, mut n) = (0f64, 0f64, 0f64, 0f64);
    for (cell, _) in cells.iter().zip(&is_content).filter(|(_, &c)| c) {
        lap_sq += cell.lap_sq as f64;
        lap_n += cell.lap_n as f64;
        sq_dev += cell.sq_dev();
        n += cell.n as f64;
    }
    let sharpness = if lap_n > 0.0 && sq_dev > 0.0 { ((lap_sq / lap_n) / (sq_dev / n)) as f32 } else { 0.0 };

    // Exposure.
    let total = px.len().max(1) as f64;
    let mean = hist.iter().enumerate().map(|(v, &c)| v as f64 * c as f64).sum::<f64>() / total / 255.0;
    let clipped_dark = hist[..=params.dark_clip as usize].iter().sum::<u64>() as f64 / total;
    let clipped_bright = hist[params.bright_clip as usize..].iter().sum::<u64>() as f64 / total;
    let (content_low, content_high) = if content_cells > 0 {
        let mut content_hist = [0u64; 256];
        for (i, _) in is_content.iter().enumerate().filter(|(_, &c)| c) {
            let (cx, cy) = (i % grid.cols, i / grid.cols);
            let xs = grid.span(cx, grid.cols, w);
            for y in grid.span(cy, grid.rows, h) {
                for &v in &px[y * w + xs.start..y * w + xs.end] {
                    content_hist[v as usize] += 1;
                }
            }
        }
        (percentile(&content_hist, 0.05), percentile(&content_hist, 0.95))
    } else {
        (mean, mean)
    };
    let exposure = Exposure {
        mean: mean as f32,
        clipped_dark: clipped_dark as f32,
        clipped_bright: clipped_bright as f32,
        content_low: content_low as f32,
        content_high: content_high as f32,
    };

    // Content bounding box (cells) and framing statistics.
    let (mut x0, mut x1, mut y0, mut y1) = (grid.cols, 0, grid.rows, 0);
    for (i, _) in is_content.iter().enumerate().filter(|(_, &c)| c) {
        let (cx, cy) = (i % grid.cols, i / grid.cols);
        (x0, x1, y0, y1) = (x0.min(cx), x1.max(cx), y0.min(cy), y1.max(cy));
    }
    if content_cells == 0 {
        (x0, x1, y0, y1) = (0, grid.cols - 1, 0, grid.rows - 1);
    }
    let bbox_fraction = if content_cells == 0 {
        0.0
    } else {
        ((x1 - x0 + 1) * (y1 - y0 + 1)) as f32 / cells.len() as f32
    };
    let on_ring = |i: usize| {
        let (cx, cy) = (i % grid.cols, i / grid.cols);
        cx == 0 || cy == 0 || cx + 1 == grid.cols || cy + 1 == grid.rows
    };
    let ring_total = (0..cells.len()).filter(|&i| on_ring(i)).count();
    let ring_content = (0..cells.len()).filter(|&i| on_ring(i) && is_content[i]).count();
    let ring_content = ring_content as f32 / ring_total.max(1) as f32;

    let glare = glare_fraction(&cells, &grid, (x0, x1, y0, y1), params);

    Measures {
        sharpness,
        exposure,
        glare,
        content: content_cells as f32 / cells.len() as f32,
        content_cells,
        bbox_fraction,
        ring_content,
        stability_thumb: stability_thumb(thumb),
    }
}

/// Luma (0..1) below which `q` of the histogram's pixels lie.
fn percentile(hist: &[u64; 256], q: f64) -> f64 {
    let total: u64 = hist.iter().sum();
    let target = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (v, &c) in hist.iter().enumerate() {
        seen += c;
        if seen >= target {
            return v as f64 / 255.0;
        }
    }
    1.0
}

/// Share of the frame in large 4-connected blobs of saturated cells brighter than the screen background.
fn glare_fraction(cells: &[Cell], grid: &Grid, bbox: (usize, usize, usize, usize), params: &QualityParams) -> f32 {
    let (x0, x1, y0, y1) = bbox;
    let in_box = |i: usize| {
        let (cx, cy) = (i % grid.cols, i / grid.cols);
        (x0..=x1).contains(&cx) && (y0..=y1).contains(&cy)
    };
    let mut flat: Vec<f64> = (0..cells.len())
        .filter(|&i| in_box(i) && cells[i].std() <= f64::from(params.flat_max_std))
        .map(|i| cells[i].mean())
        .collect();
    if flat.is_empty() {
        flat = (0..cells.len()).filter(|&i| in_box(i)).map(|i| cells[i].mean()).collect();
    }
    flat.sort_by(f64::total_cmp);
    let background = flat.get(flat.len() / 2).copied().unwrap_or(0.0);
    let threshold = background + f64::from(params.glare_margin) * 255.0;
    let glare_cell: Vec<bool> =
        cells.iter().map(|c| c.saturated * 2 >= c.n && c.n > 0 && c.mean() >= threshold).collect();

    let min_blob = (f64::from(params.glare_min_blob) * cells.len() as f64).ceil().max(1.0) as usize;
    let mut seen = vec![false; cells.len()];
    let mut stack = Vec::new();
    let mut glare_cells = 0usize;
    for start in 0..cells.len() {
        if !glare_cell[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let mut size = 0usize;
        while let Some(i) = stack.pop() {
            size += 1;
            let (cx, cy) = (i % grid.cols, i / grid.cols);
            let mut visit = |j: usize| {
                if glare_cell[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if cx > 0 {
                visit(i - 1);
            }
            if cx + 1 < grid.cols {
                visit(i + 1);
            }
            if cy > 0 {
                visit(i - grid.cols);
            }
            if cy + 1 < grid.rows {
                visit(i + grid.cols);
            }
        }
        if size >= min_blob {
            glare_cells += size;
        }
    }
    glare_cells as f32 / cells.len() as f32
}

/// 32×32 area thumbnail (luma 0..1), block edges at `i * side / 32`.
fn stability_thumb(thumb: &GrayImage) -> Vec<f32> {
    let (w, h) = (thumb.width() as usize, thumb.height() as usize);
    let px = thumb.as_raw();
    let bounds = |i: usize, len: usize| {
        let start = (i * len / STABILITY_SIDE).min(len.saturating_sub(1));
        let end = ((i + 1) * len / STABILITY_SIDE).max(start + 1).min(len);
        start..end
    };
    let mut out = Vec::with_capacity(STABILITY_SIDE * STABILITY_SIDE);
    for by in 0..STABILITY_SIDE {
        let ys = bounds(by, h);
        for bx in 0..STABILITY_SIDE {
            let xs = bounds(bx, w);
            let mut sum = 0u64;
            for y in ys.clone() {
                sum += px[y * w + xs.start..y * w + xs.end].iter().map(|&v| u64::from(v)).sum::<u64>();
            }
            let n = (ys.len() * xs.len()).max(1) as f32;
            out.push(sum as f32 / n / 255.0);
        }
    }
    out
}

/// `1 - mean |(a - mean a) - (b - mean b)|`.
fn stability(a: &[f32], b: &[f32]) -> f32 {
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    let (ma, mb) = (mean(a), mean(b));
    let mad = a.iter().zip(b).map(|(x, y)| ((x - ma) - (y - mb)).abs()).sum::<f32>() / a.len().max(1) as f32;
    (1.0 - mad).clamp(0.0, 1.0)
}

/// Piecewise-linear score: 0 at or below `bad`, 0.5 at `ok`, 1 at or above `good` (`bad < ok < good`).
fn ramp(x: f32, bad: f32, ok: f32, good: f32) -> f32 {
    if x <= bad {
        0.0
    } else if x < ok {
        0.5 * (x - bad) / (ok - bad)
    } else if x < good {
        0.5 + 0.5 * (x - ok) / (good - ok)
    } else {
        1.0
    }
}

fn verdict(m: &Measures, stability: Option<f32>, params: &QualityParams) -> FrameQuality {
    let p = params;
    let e = &m.exposure;
    let mut hints = Vec::new();
    let mut blocked = false;
    let mut hint = |h: Hint, blocks: bool| {
        hints.push(h);
        blocked |= blocks;
    };

    let has_content = m.content_cells > 0;
    let too_dark = if has_content { e.content_high < p.too_dark_high } else { e.mean < p.too_dark_high / 2.0 };
    let bright_mean = 1.0 - (1.0 - p.too_bright_low) / 4.0;
    let too_bright = if has_content { e.content_low > p.too_bright_low } else { e.mean > bright_mean };
    if too_dark {
        hint(Hint::TooDark, true);
    }
    if too_bright {
        hint(Hint::TooBright, true);
    }
    if m.glare >= p.max_glare {
        hint(Hint::ReduceGlare, true);
    }
    let motion = stability.map(|s| 1.0 - s);
    if motion.is_some_and(|d| d > p.max_motion) {
        hint(Hint::HoldSteady, true);
    }
    if has_content && m.sharpness < p.min_sharpness {
        hint(Hint::TooBlurry, true);
    }
    let little_content = m.content < p.min_content;
    if little_content || m.bbox_fraction < p.move_closer_bbox {
        hint(Hint::MoveCloser, little_content || p.framing_blocks);
    } else if m.ring_content >= p.move_back_ring {
        hint(Hint::MoveBack, p.framing_blocks);
    }

    let sharp_score = ramp(m.sharpness.max(1e-9).ln(), (p.min_sharpness / 4.0).ln(), p.min_sharpness.ln(), p.good_sharpness.ln());
    let dark_score = if has_content {
        ramp(e.content_high, p.too_dark_high / 2.0, p.too_dark_high, (p.too_dark_high + 0.15).min(1.0))
    } else {
        ramp(e.mean, p.too_dark_high / 4.0, p.too_dark_high / 2.0, p.too_dark_high)
    };
    let low = if has_content { e.content_low } else { e.mean };
    let bright_ok = if has_content { p.too_bright_low } else { bright_mean };
    let bright_score = ramp(1.0 - low, (1.0 - bright_ok) / 2.0, 1.0 - bright_ok, (1.0 - bright_ok) + 0.15);
    let glare_score = ramp(-m.glare, -2.0 * p.max_glare, -p.max_glare, 0.0);
    let motion_score = motion.map_or(1.0, |d| ramp(-d, -2.0 * p.max_motion, -p.max_motion, 0.0));
    let content_score = ramp(m.content, 0.0, p.min_content, 2.0 * p.min_content);
    let score = sharp_score * dark_score * bright_score * glare_score * motion_score * content_score;

    FrameQuality {
        accept: !blocked,
        score: score.clamp(0.0, 1.0),
        sharpness: m.sharpness,
        exposure: m.exposure,
        glare: m.glare,
        stability,
        content: m.content,
        hints,
    }
}

fn empty_quality() -> FrameQuality {
    FrameQuality {
        accept: false,
        score: 0.0,
        sharpness: 0.0,
        exposure: Exposure::default(),
        glare: 0.0,
        stability: None,
        content: 0.0,
        hints: vec![Hint::MoveCloser],
    }
}

fn rgb_thumbnail(img: &RgbImage, params: &QualityParams) -> Option<GrayImage> {
    let info = FrameInfo::tight(PixelFormat::Rgb8, img.width(), img.height(), Rotation::R0);
    frame::luma_thumbnail(img.as_raw(), &info, params.analysis_max_side.max(1)).ok()
}

/// Assesses one RGB image on its own (no stability). An empty or oversized image is rejected with
/// `MoveCloser` and every measure 0.
pub fn assess_rgb(img: &RgbImage, params: &QualityParams) -> FrameQuality {
    match rgb_thumbnail(img, params) {
        Some(thumb) => verdict(&measure(&thumb, params), None, params),
        None => empty_quality(),
    }
}

/// Assesses one camera frame held in one buffer (no stability); YUV frames are read from the Y plane only.
pub fn assess_frame(data: &[u8], info: &FrameInfo, params: &QualityParams) -> Result<FrameQuality, FrameError> {
    let thumb = frame::luma_thumbnail(data, info, params.analysis_max_side.max(1))?;
    Ok(verdict(&measure(&thumb, params), None, params))
}

/// Assesses one camera frame given as one slice per plane (no stability).
pub fn assess_planes(
    planes: &[&[u8]],
    info: &FrameInfo,
    params: &QualityParams,
) -> Result<FrameQuality, FrameError> {
    let thumb = frame::luma_thumbnail_planes(planes, info, params.analysis_max_side.max(1))?;
    Ok(verdict(&measure(&thumb, params), None, params))
}

/// Stateful gate for a camera stream: like [`assess_frame`], plus stability against the previous frame.
#[derive(Debug, Clone, Default)]
pub struct FrameGate {
    params: QualityParams,
    previous: Option<Vec<f32>>,
}

impl FrameGate {
    pub fn new(params: QualityParams) -> FrameGate {
        FrameGate { params, previous: None }
    }

    pub fn params(&self) -> &QualityParams {
        &self.params
    }

    /// Assesses a frame held in one buffer. An invalid frame returns the error and leaves the state as it was.
    pub fn push_frame(&mut self, data: &[u8], info: &FrameInfo) -> Result<FrameQuality, FrameError> {
        let thumb = frame::luma_thumbnail(data, info, self.params.analysis_max_side.max(1))?;
        Ok(self.push_thumbnail(&thumb))
    }

    /// Assesses a frame given as one slice per plane.
    pub fn push_planes(&mut self, planes: &[&[u8]], info: &FrameInfo) -> Result<FrameQuality, FrameError> {
        let thumb = frame::luma_thumbnail_planes(planes, info, self.params.analysis_max_side.max(1))?;
        Ok(self.push_thumbnail(&thumb))
    }

    /// Assesses an RGB image. An empty image is rejected and resets the state.
    pub fn push_rgb(&mut self, img: &RgbImage) -> FrameQuality {
        match rgb_thumbnail(img, &self.params) {
            Some(thumb) => self.push_thumbnail(&thumb),
            None => {
                self.reset();
                empty_quality()
            }
        }
    }

    /// Forgets the previous frame: the next one has no stability.
    pub fn reset(&mut self) {
        self.previous = None;
    }

    fn push_thumbnail(&mut self, thumb: &GrayImage) -> FrameQuality {
        let m = measure(thumb, &self.params);
        let stab = self.previous.as_deref().map(|prev| stability(prev, &m.stability_thumb));
        let q = verdict(&m, stab, &self.params);
        self.previous = Some(m.stability_thumb);
        q
    }
}
