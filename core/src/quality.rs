//! Frame-quality gate: is this camera frame good enough to read a Netron graph from?
//!
//! Every measure works on one luma thumbnail (as [`frame::luma_thumbnail`] makes it, but not rotated: no measure
//! depends on the orientation) whose long side is at most [`QualityParams::analysis_max_side`] (480 by default:
//! a 1920×1080 frame becomes 480×270 by 4×4 area averaging). The thumbnail is split into square cells of
//! [`QualityParams::cell_size`] pixels (8 by default, i.e. 32×32 camera pixels at 1920×1080); the last cell of
//! a row or column absorbs the remainder.
//!
//! * **Content cells**: cells whose luma standard deviation is at least `content_min_std`. Netron's canvas is a
//!   flat background with textured cards, labels and edges, so content cells are where the graph is.
//! * **Sharpness**: the variance (mean square) of the 4-neighbour Laplacian `4p - up - down - left - right`
//!   over the content cells, divided by the luma variance of the same cells (each about its cell mean). The
//!   ratio does not depend on contrast or exposure, nor on how much of the frame the graph covers. It falls as
//!   blur grows: for a Gaussian blur of a whole image the ratio is a mean of `|k|⁴` under a power spectrum tilted
//!   ever more towards low frequencies, so it falls strictly; the cell-wise version fell strictly in every sweep
//!   of the tests. Units: 1/pixel⁴ of the thumbnail. Frames with no content cells get 0.
//! * **Exposure**: mean luma, the clipped fractions (`<= dark_clip`, `>= bright_clip`) of the whole thumbnail,
//!   and the 2nd and 98th luma percentiles of the content cells (`content_low`, `content_high`). A clean white
//!   Netron screenshot is mostly clipped white yet perfectly exposed, so the hints look at the content:
//!   `TooDark` when even the bright parts of the content are dim (`content_high < too_dark_high`), `TooBright`
//!   when even its dark parts are washed out (`content_low > too_bright_low`). Without content cells the mean
//!   decides (`< too_dark_high / 2` or `> 1 - (1 - too_bright_low) / 4`).
//! * **Glare**: the share of the frame covered by large 4-connected blobs of saturated cells (`>= saturation_level`
//!   on at least half their pixels) ringed by a smooth halo. A reflection adds a broad, smooth bump of light, so
//!   the cells around its clipped core are gentle ramps; the border of clipped white screen content (Netron's
//!   white canvas against cards, labels, a dark taskbar) is a step. So for each blob of at least
//!   `glare_min_blob` of the frame, the cells touching it count as halo when no pixel in them differs from a
//!   4-neighbour by more than `glare_halo_max_step` levels, and the blob is glare when at least
//!   `glare_halo_share` of them are halo. Thin white text never fills a cell, and a clean white screenshot has
//!   no halo. Glare is only judged (otherwise 0) on frames that are sharp enough and not too bright: blur turns
//!   every edge into a ramp, and over-exposure clips everything. Limitations: a veiling reflection that does
//!   not clip is not measured (it lowers contrast instead), and a blob whose halo falls mostly on dense
//!   content may be missed.
//! * **Stability** (only with a previous frame, see [`FrameGate`]): `1 - mean |a - b|` over two 32×32 area
//!   thumbnails of consecutive frames, each minus its own mean (so auto-exposure drift does not count), luma
//!   in 0..1. 1 means identical.
//! * **Framing** (weak heuristic): `MoveCloser` when the content covers less than `min_content` of the cells, or
//!   its bounding box less than `move_closer_bbox` of the frame; `MoveBack` when content fills at least
//!   `move_back_ring` of the outermost ring of cells along two or more sides of the frame, i.e. the graph runs
//!   off the frame. It cannot tell a busy desk or keyboard from the screen, nor a graph too big for the monitor from
//!   a phone held too close, so only the `min_content` case blocks acceptance unless `framing_blocks` is set.
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
    /// Set by a scan, never by the gate: the graph's text is drawn too small to be read reliably (the scan's
    /// [`crate::scanner::ScanResult::text_height`] is under [`crate::scanner::ScanParams::min_text_height`]). Zoom
    /// in in Netron, or move closer and scan the graph in parts. Advisory: it does not change `accept`.
    ZoomIn,
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
    /// 2nd luma percentile of the content cells (the mean when there are none).
    pub content_low: f32,
    /// 98th luma percentile of the content cells (the mean when there are none).
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
    /// Fraction of the frame in large saturated blobs with a smooth halo (0 when not judged).
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
    /// `TooBlurry` below this sharpness.
    pub min_sharpness: f32,
    /// Sharpness at which the sharpness score reaches 1.
    pub good_sharpness: f32,
    /// Luma at or below which a pixel counts as clipped dark.
    pub dark_clip: u8,
    /// Luma at or above which a pixel counts as clipped bright.
    pub bright_clip: u8,
    /// `TooDark` when the content's 98th percentile is below this (fraction of full scale).
    pub too_dark_high: f32,
    /// `TooBright` when the content's 2nd percentile is above this (fraction of full scale).
    pub too_bright_low: f32,
    /// Luma at or above which a pixel counts as saturated for glare.
    pub saturation_level: u8,
    /// A cell around a saturated blob is part of a smooth glare halo when no pixel in it differs from a
    /// 4-neighbour by more than this many luma levels.
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
    /// `MoveBack` (advisory) when content fills at least this fraction of the outermost ring of cells along two
    /// or more sides of the frame.
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
            min_sharpness: 0.8,
            good_sharpness: 1.6,
            dark_clip: 8,
            bright_clip: 250,
            too_dark_high: 0.3,
            too_bright_low: 0.6,
            saturation_level: 250,
            glare_halo_max_step: 12,
            glare_halo_share: 0.3,
            glare_min_blob: 0.005,
            max_glare: 0.02,
            max_motion: 0.02,
            min_content: 0.02,
            move_closer_bbox: 0.2,
            move_back_ring: 0.1,
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
    /// Largest absolute luma difference between a pixel and a 4-neighbour (interior pixels only).
    max_step: u8,
}

impl Cell {
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
}

impl Grid {
    /// Cells of `size` pixels (clamped to 1..=256, which keeps the u32 column sums from overflowing).
    fn new(w: usize, h: usize, size: usize) -> Grid {
        let size = size.clamp(1, 256);
        Grid {
            size,
            cols: (w / size).max(1),
            rows: (h / size).max(1),
        }
    }

    /// Pixel range of cell column `c` (or row, with `len = h`); the last one takes the remainder.
    fn span(&self, c: usize, count: usize, len: usize) -> std::ops::Range<usize> {
        let start = c * self.size;
        let end = if c + 1 == count {
            len
        } else {
            start + self.size
        };
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
    edge_content: [f32; 4],
    stability_thumb: Vec<f32>,
}

fn measure(thumb: &GrayImage, params: &QualityParams) -> Measures {
    let (w, h) = (thumb.width() as usize, thumb.height() as usize);
    let px = thumb.as_raw();
    let grid = Grid::new(w, h, params.cell_size as usize);
    let mut cells = vec![Cell::default(); grid.cols * grid.rows];
    let hist = histogram(px);

    // Column sums over the rows of one row of cells (vectorisable loops), folded into the cells at its end.
    let sat_level = params.saturation_level;
    let mut col_sum = vec![0u32; w];
    let mut col_sq = vec![0u32; w];
    let mut col_sat = vec![0u32; w];
    let mut col_lap = vec![0u32; w];
    let mut col_step = vec![0u8; w];
    for cy in 0..grid.rows {
        let ys = grid.span(cy, grid.rows, h);
        for col in [&mut col_sum, &mut col_sq, &mut col_sat, &mut col_lap] {
            col.fill(0);
        }
        col_step.fill(0);
        let mut interior_rows = 0u64;
        for y in ys.clone() {
            let row = &px[y * w..(y + 1) * w];
            for (((s, q), t), &v) in col_sum
                .iter_mut()
                .zip(col_sq.iter_mut())
                .zip(col_sat.iter_mut())
                .zip(row)
            {
                let v32 = u32::from(v);
                *s += v32;
                *q += v32 * v32;
                *t += u32::from(v >= sat_level);
            }
            if y == 0 || y + 1 >= h || w < 3 {
                continue;
            }
            interior_rows += 1;
            let (up, down) = (
                &px[(y - 1) * w + 1..y * w - 1],
                &px[(y + 1) * w + 1..(y + 2) * w - 1],
            );
            let (left, mid, right) = (&row[..w - 2], &row[1..w - 1], &row[2..]);
            let lanes = col_lap[1..w - 1]
                .iter_mut()
                .zip(col_step[1..w - 1].iter_mut());
            for ((((((lap, step), &c), &l), &r), &u), &d) in
                lanes.zip(mid).zip(left).zip(right).zip(up).zip(down)
            {
                let lv =
                    4 * i32::from(c) - i32::from(l) - i32::from(r) - i32::from(u) - i32::from(d);
                *lap += (lv * lv) as u32;
                let st = c
                    .abs_diff(l)
                    .max(c.abs_diff(r))
                    .max(c.abs_diff(u))
                    .max(c.abs_diff(d));
                *step = (*step).max(st);
            }
        }
        for cx in 0..grid.cols {
            let xs = grid.span(cx, grid.cols, w);
            let cell = &mut cells[cy * grid.cols + cx];
            let sum64 = |col: &[u32]| col.iter().map(|&v| u64::from(v)).sum::<u64>();
            cell.n = (xs.len() * ys.len()) as u64;
            cell.sum = sum64(&col_sum[xs.clone()]);
            cell.sum_sq = sum64(&col_sq[xs.clone()]);
            cell.saturated = sum64(&col_sat[xs.clone()]);
            let (lo, hi) = (xs.start.max(1), xs.end.min(w.saturating_sub(1)));
            if lo < hi && interior_rows > 0 {
                cell.lap_sq = sum64(&col_lap[lo..hi]);
                cell.lap_n = (hi - lo) as u64 * interior_rows;
                cell.max_step = col_step[lo..hi].iter().copied().max().unwrap_or(0);
            }
        }
    }

    let is_content: Vec<bool> = cells
        .iter()
        .map(|c| c.std() >= f64::from(params.content_min_std))
        .collect();
    let content_cells = is_content.iter().filter(|&&c| c).count();

    // Sharpness: Laplacian energy per pixel over luma variance per pixel, content cells only.
    let (mut lap_sq, mut lap_n, mut sq_dev, mut n) = (0f64, 0f64, 0f64, 0f64);
    for (cell, _) in cells.iter().zip(&is_content).filter(|(_, &c)| c) {
        lap_sq += cell.lap_sq as f64;
        lap_n += cell.lap_n as f64;
        sq_dev += cell.sq_dev();
        n += cell.n as f64;
    }
    let sharpness = if lap_n > 0.0 && sq_dev > 0.0 {
        ((lap_sq / lap_n) / (sq_dev / n)) as f32
    } else {
        0.0
    };

    // Exposure.
    let total = px.len().max(1) as f64;
    let mean = hist
        .iter()
        .enumerate()
        .map(|(v, &c)| v as f64 * c as f64)
        .sum::<f64>()
        / total
        / 255.0;
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
        (
            percentile(&content_hist, 0.02),
            percentile(&content_hist, 0.98),
        )
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
    let bbox_fraction = if content_cells == 0 {
        0.0
    } else {
        ((x1 - x0 + 1) * (y1 - y0 + 1)) as f32 / cells.len() as f32
    };

    // Share of content cells along each frame side (top, bottom, left, right).
    let side_share = |cells_on_side: &mut dyn Iterator<Item = usize>| {
        let (mut n, mut hit) = (0usize, 0usize);
        for i in cells_on_side {
            n += 1;
            hit += usize::from(is_content[i]);
        }
        hit as f32 / n.max(1) as f32
    };
    let (cols, rows) = (grid.cols, grid.rows);
    let edge_content = [
        side_share(&mut (0..cols)),
        side_share(&mut ((rows - 1) * cols..rows * cols)),
        side_share(&mut (0..rows).map(|r| r * cols)),
        side_share(&mut (0..rows).map(|r| r * cols + cols - 1)),
    ];

    // A blurred frame turns every edge into a smooth ramp and an over-exposed one clips everything, so glare
    // is only judged on frames that pass both checks.
    let judge_glare =
        sharpness >= params.min_sharpness && !too_bright(&exposure, content_cells > 0, params);
    let glare = if judge_glare {
        glare_fraction(&cells, &grid, params)
    } else {
        0.0
    };

    Measures {
        sharpness,
        exposure,
        glare,
        content: content_cells as f32 / cells.len() as f32,
        content_cells,
        bbox_fraction,
        edge_content,
        stability_thumb: stability_thumb(thumb),
    }
}

/// 256-bin histogram (four interleaved partial histograms hide the store-to-load latency of repeated bins).
fn histogram(px: &[u8]) -> [u64; 256] {
    let mut parts = [[0u32; 256]; 4];
    let mut chunks = px.chunks_exact(4);
    for c in &mut chunks {
        parts[0][c[0] as usize] += 1;
        parts[1][c[1] as usize] += 1;
        parts[2][c[2] as usize] += 1;
        parts[3][c[3] as usize] += 1;
    }
    for &v in chunks.remainder() {
        parts[0][v as usize] += 1;
    }
    let mut hist = [0u64; 256];
    for (i, h) in hist.iter_mut().enumerate() {
        *h = parts.iter().map(|p| u64::from(p[i])).sum();
    }
    hist
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

/// Share of the frame in large 4-connected blobs of saturated cells ringed by a smooth halo.
fn glare_fraction(cells: &[Cell], grid: &Grid, params: &QualityParams) -> f32 {
    let saturated: Vec<bool> = cells
        .iter()
        .map(|c| c.n > 0 && c.saturated * 2 >= c.n)
        .collect();
    let min_blob = (f64::from(params.glare_min_blob) * cells.len() as f64)
        .ceil()
        .max(1.0) as usize;
    let cols = grid.cols;
    let neighbours = |i: usize| {
        let (cx, cy) = (i % cols, i / cols);
        [
            (cx > 0).then(|| i - 1),
            (cx + 1 < cols).then(|| i + 1),
            (cy > 0).then(|| i - cols),
            (cy + 1 < grid.rows).then(|| i + cols),
        ]
        .into_iter()
        .flatten()
    };
    // `seen` marks blob cells; `ring_of[j] == blob id + 1` marks boundary cells already counted for a blob.
    let mut seen = vec![false; cells.len()];
    let mut ring_of = vec![0usize; cells.len()];
    let (mut stack, mut blob) = (Vec::new(), Vec::new());
    let mut glare_cells = 0usize;
    for start in 0..cells.len() {
        if !saturated[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        blob.clear();
        while let Some(i) = stack.pop() {
            blob.push(i);
            for j in neighbours(i) {
                if saturated[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if blob.len() < min_blob {
            continue;
        }
        let (mut smooth, mut sharp) = (0usize, 0usize);
        for &i in &blob {
            for j in neighbours(i) {
                if saturated[j] || ring_of[j] == start + 1 {
                    continue;
                }
                ring_of[j] = start + 1;
                if cells[j].max_step <= params.glare_halo_max_step {
                    smooth += 1;
                } else {
                    sharp += 1;
                }
            }
        }
        if smooth > 0 && smooth as f32 >= params.glare_halo_share * (smooth + sharp) as f32 {
            glare_cells += blob.len();
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
    let mut col = vec![0u32; w];
    let mut out = Vec::with_capacity(STABILITY_SIDE * STABILITY_SIDE);
    for by in 0..STABILITY_SIDE {
        let ys = bounds(by, h);
        col.fill(0);
        for y in ys.clone() {
            for (c, &v) in col.iter_mut().zip(&px[y * w..(y + 1) * w]) {
                *c += u32::from(v);
            }
        }
        for bx in 0..STABILITY_SIDE {
            let xs = bounds(bx, w);
            let n = (ys.len() * xs.len()).max(1) as f32;
            let sum: u64 = col[xs].iter().map(|&v| u64::from(v)).sum();
            out.push(sum as f32 / n / 255.0);
        }
    }
    out
}

/// `1 - mean |(a - mean a) - (b - mean b)|`.
fn stability(a: &[f32], b: &[f32]) -> f32 {
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len().max(1) as f32;
    let (ma, mb) = (mean(a), mean(b));
    let mad = a
        .iter()
        .zip(b)
        .map(|(x, y)| ((x - ma) - (y - mb)).abs())
        .sum::<f32>()
        / a.len().max(1) as f32;
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

/// `TooDark`: the bright end of the content is dim (or, without content, the whole frame is).
fn too_dark(e: &Exposure, has_content: bool, p: &QualityParams) -> bool {
    if has_content {
        e.content_high < p.too_dark_high
    } else {
        e.mean < p.too_dark_high / 2.0
    }
}

/// Mean luma above which a frame without content is too bright.
fn bright_mean(p: &QualityParams) -> f32 {
    1.0 - (1.0 - p.too_bright_low) / 4.0
}

/// `TooBright`: the dark end of the content is washed out (or, without content, the whole frame is bright).
fn too_bright(e: &Exposure, has_content: bool, p: &QualityParams) -> bool {
    if has_content {
        e.content_low > p.too_bright_low
    } else {
        e.mean > bright_mean(p)
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
    if too_dark(e, has_content, p) {
        hint(Hint::TooDark, true);
    }
    if too_bright(e, has_content, p) {
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
    } else if m
        .edge_content
        .iter()
        .filter(|&&e| e >= p.move_back_ring)
        .count()
        >= 2
    {
        hint(Hint::MoveBack, p.framing_blocks);
    }

    let sharp_score = ramp(
        m.sharpness.max(1e-9).ln(),
        (p.min_sharpness / 4.0).ln(),
        p.min_sharpness.ln(),
        p.good_sharpness.ln(),
    );
    let dark_score = if has_content {
        ramp(
            e.content_high,
            p.too_dark_high / 2.0,
            p.too_dark_high,
            (p.too_dark_high + 0.15).min(1.0),
        )
    } else {
        ramp(
            e.mean,
            p.too_dark_high / 4.0,
            p.too_dark_high / 2.0,
            p.too_dark_high,
        )
    };
    let low = if has_content { e.content_low } else { e.mean };
    let bright_ok = if has_content {
        p.too_bright_low
    } else {
        bright_mean(p)
    };
    let bright_score = ramp(
        1.0 - low,
        (1.0 - bright_ok) / 2.0,
        1.0 - bright_ok,
        (1.0 - bright_ok) + 0.15,
    );
    let glare_score = ramp(-m.glare, -2.0 * p.max_glare, -p.max_glare, 0.0);
    let motion_score = motion.map_or(1.0, |d| ramp(-d, -2.0 * p.max_motion, -p.max_motion, 0.0));
    let content_score = ramp(m.content, 0.0, p.min_content, 2.0 * p.min_content);
    let score =
        sharp_score * dark_score * bright_score * glare_score * motion_score * content_score;

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
    frame::luma_thumbnail_unrotated(&[img.as_raw()], &info, params.analysis_max_side.max(1)).ok()
}

/// The analysis thumbnail of a frame. It is not rotated: no measure depends on the orientation.
fn frame_thumbnail(
    planes: &[&[u8]],
    info: &FrameInfo,
    params: &QualityParams,
) -> Result<GrayImage, FrameError> {
    frame::luma_thumbnail_unrotated(planes, info, params.analysis_max_side.max(1))
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
pub fn assess_frame(
    data: &[u8],
    info: &FrameInfo,
    params: &QualityParams,
) -> Result<FrameQuality, FrameError> {
    let thumb = frame_thumbnail(&info.split_planes(data)?, info, params)?;
    Ok(verdict(&measure(&thumb, params), None, params))
}

/// Assesses one camera frame given as one slice per plane (no stability).
pub fn assess_planes(
    planes: &[&[u8]],
    info: &FrameInfo,
    params: &QualityParams,
) -> Result<FrameQuality, FrameError> {
    let thumb = frame_thumbnail(planes, info, params)?;
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
        FrameGate {
            params,
            previous: None,
        }
    }

    pub fn params(&self) -> &QualityParams {
        &self.params
    }

    /// Assesses a frame held in one buffer. An invalid frame returns the error and leaves the state as it was.
    pub fn push_frame(
        &mut self,
        data: &[u8],
        info: &FrameInfo,
    ) -> Result<FrameQuality, FrameError> {
        let thumb = frame_thumbnail(&info.split_planes(data)?, info, &self.params)?;
        Ok(self.push_thumbnail(&thumb))
    }

    /// Assesses a frame given as one slice per plane.
    pub fn push_planes(
        &mut self,
        planes: &[&[u8]],
        info: &FrameInfo,
    ) -> Result<FrameQuality, FrameError> {
        let thumb = frame_thumbnail(planes, info, &self.params)?;
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
        let stab = self
            .previous
            .as_deref()
            .map(|prev| stability(prev, &m.stability_thumb));
        let q = verdict(&m, stab, &self.params);
        self.previous = Some(m.stability_thumb);
        q
    }
}
