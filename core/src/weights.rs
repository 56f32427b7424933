//! Weight rows of node cards: where they are, from the card and its header, and what their text means.
//!
//! Netron draws a card as a header of 20 CSS px × zoom `z` and then one row per initializer (`W〈64×3×7×7〉`,
//! `B = 0.5`) and, when attributes are shown, per attribute: row `i`'s text spans `[4 + 12i, 14 + 12i]·z` below
//! the header and starts `6z` from the card's left edge, and the card ends `6z` below its last row (measured on
//! 300 `v1-s1` screenshots: 1st–99th percentiles within ±0.05 z). [`row_rects`] inverts that geometry for a
//! detected card with its estimated title box ([`crate::classify::estimate_title_boxes`]), also for a card rolled
//! by the image's skew, and [`row_rects_zoomed`] with a zoom shared by neighbouring cards ([`shared_headers`]:
//! a detector box a few pixels off throws one card's own zoom off, and the lower rows with it);
//! [`fitted_rows`] then moves and spaces the rows onto the text lines of the card's body, where a photo's
//! perspective leaves the shared zoom a few percent off, and adds a row the box is too short to hold;
//! [`RowRect::trim`] cuts a row at its last ink column so that short rows in wide cards are not squashed by the
//! OCR's resize; [`parse_row`] turns a row's OCR text into a schema [`Weight`], and [`OpRows::name`] tells from
//! the operator's ONNX names whether it names an initializer input or an attribute.

use std::collections::HashMap;

use image::RgbImage;
use serde::Deserialize;

use crate::graph::{parse_shape_text, BBox, Weight};
use crate::models::ModelError;
use crate::resample::luma;
use crate::title_ops::edit_distance;

/// Header height in row-geometry units (`z`).
const HEADER: f64 = 20.0;
/// Row `i`'s text top and bottom below the header, `z`, before adding `PITCH · i`.
const ROW_TOP: f64 = 4.0;
const ROW_BOTTOM: f64 = 14.0;
/// Distance between rows, `z`.
const PITCH: f64 = 12.0;
/// Left (and least right) inset of row text, `z`; space below the last row, `z`.
const INSET: f64 = 6.0;

/// One row's text rectangle on a card rolled by `angle` (radians, `atan2(dy, dx)` of the card's top edge in
/// image coordinates): `u` runs along the row from the card's centre `(cx, cy)`, `v` down across it, both in
/// source pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowRect {
    pub cx: f64,
    pub cy: f64,
    pub angle: f64,
    pub u0: f64,
    pub u1: f64,
    pub v0: f64,
    pub v1: f64,
}

impl RowRect {
    fn point(&self, u: f64, v: f64) -> (f64, f64) {
        let (s, c) = self.angle.sin_cos();
        (self.cx + u * c - v * s, self.cy + u * s + v * c)
    }

    /// The axis-aligned box of the rectangle (what the OCR takes: it cuts a rolled box along the skew).
    pub fn bbox(&self) -> BBox {
        let pts = [
            self.point(self.u0, self.v0),
            self.point(self.u1, self.v0),
            self.point(self.u1, self.v1),
            self.point(self.u0, self.v1),
        ];
        let (mut x0, mut y0, mut x1, mut y1) = (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        );
        for (x, y) in pts {
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        BBox::new(x0 as f32, y0 as f32, x1 as f32, y1 as f32)
    }

    /// The grey of `cols × rows` pixel centres from `(u0, v0)` of the rectangle's frame, row-major (nearest
    /// pixel, one sample per source pixel); `None` outside the image.
    fn sample(&self, image: &RgbImage, cols: usize, rows: usize) -> Vec<Option<u8>> {
        let (iw, ih) = (f64::from(image.width()), f64::from(image.height()));
        let mut grey = Vec::with_capacity(cols * rows);
        for j in 0..rows {
            let v = self.v0 + j as f64 + 0.5;
            for i in 0..cols {
                let (x, y) = self.point(self.u0 + i as f64 + 0.5, v);
                let inside = x >= 0.0 && y >= 0.0 && x < iw && y < ih;
                grey.push(inside.then(|| luma(image.get_pixel(x as u32, y as u32).0)));
            }
        }
        grey
    }

    /// The rectangle reaching `by` × its height further left: a crop that starts exactly at the text's left edge
    /// loses the first letter to a detector box a pixel or two inside the card.
    pub fn extended_left(&self, by: f64) -> RowRect {
        RowRect {
            u0: self.u0 - by * (self.v1 - self.v0),
            ..*self
        }
    }

    /// The rectangle cut at its text's right end: sampled along the row (nearest pixel, one sample per source
    /// pixel), the last column whose grey departs from the row's median grey by at least `fraction` of the
    /// largest departure, plus half the row height. Rows without contrast (under 24 grey levels), or with no
    /// sample inside the image, come back unchanged.
    pub fn trim(&self, image: &RgbImage, fraction: f32) -> RowRect {
        let cols = (self.u1 - self.u0).floor().clamp(0.0, 4096.0) as usize;
        let rows = (self.v1 - self.v0).floor().clamp(0.0, 256.0) as usize;
        if cols < 2 || rows < 2 {
            return *self;
        }
        let grey = self.sample(image, cols, rows);
        let mut sorted: Vec<u8> = grey.iter().flatten().copied().collect();
        if sorted.is_empty() {
            return *self;
        }
        sorted.sort_unstable();
        let median = i32::from(sorted[sorted.len() / 2]);
        let mut profile = vec![0i32; cols];
        for (k, g) in grey.iter().enumerate() {
            if let Some(g) = g {
                let p = &mut profile[k % cols];
                *p = (*p).max((i32::from(*g) - median).abs());
            }
        }
        let peak = profile.iter().copied().max().unwrap_or(0);
        if peak < 24 {
            return *self;
        }
        let threshold = (peak as f32 * fraction).max(1.0);
        let Some(last) = profile.iter().rposition(|&d| d as f32 >= threshold) else {
            return *self;
        };
        let end = self.u0 + (last + 1) as f64 + (self.v1 - self.v0) / 2.0;
        RowRect {
            u1: end.min(self.u1).max(self.u0 + 1.0),
            ..*self
        }
    }
}

/// The row rectangles of one card (top to bottom): the card box `card` and its title box `title` (same `x0`,
/// `y0`; the header's axis-aligned extent, [`crate::classify::estimate_title_boxes`]), the card rolled by
/// `skew_deg` (the image's skew). With `s = |sin θ|`, `c = cos θ` the card's own size `W × H` solves its box
/// `W·c + H·s`, `W·s + H·c`, the header height is `(title height − W·s) / c` = `20z`, and there are
/// `round((H / z − 26) / 12)` rows, at most `max_rows`. Empty for a card without rows (all header), for boxes
/// that are not finite and ordered, for `|skew_deg| ≥ 30`, or when the roll leaves no positive size. A row
/// spans the card's width minus the insets: see [`RowRect::trim`].
pub fn row_rects(card: &BBox, title: &BBox, skew_deg: f64, max_rows: usize) -> Vec<RowRect> {
    row_rects_zoomed(card, title, None, skew_deg, max_rows)
}

/// [`row_rects`] with the zoom `z` given (source pixels per CSS px, e.g. from neighbouring cards,
/// [`shared_headers`]) instead of the title's height / 20: the rows start below the title box as in
/// [`row_rects`], `12z` apart, and there are `round((H − header − 6z) / 12z)` of them. `zoom` `None`, not
/// finite or not positive: [`row_rects`].
pub fn row_rects_zoomed(
    card: &BBox,
    title: &BBox,
    zoom: Option<f64>,
    skew_deg: f64,
    max_rows: usize,
) -> Vec<RowRect> {
    let Some((w, h, header)) = own_frame(card, title, skew_deg) else {
        return Vec::new();
    };
    let angle = skew_deg.to_radians();
    let z = zoom
        .filter(|z| z.is_finite() && *z > 0.0)
        .unwrap_or(header / HEADER);
    let rows = ((h - header - INSET * z) / (PITCH * z)).round();
    if rows < 1.0 || w <= 2.0 * INSET * z {
        return Vec::new();
    }
    let rows = (rows as usize).min(max_rows);
    let centre = (
        f64::from(card.x0 + card.x1) / 2.0,
        f64::from(card.y0 + card.y1) / 2.0,
    );
    netron_rows(centre, angle, w, -h / 2.0 + header, z, rows)
}

/// Rows `0..count` in Netron's geometry at zoom `z`: text `[4, 14]·z` below the header edge (at `header_edge`
/// along the card's `v` axis) plus `12z` per row, `6z` in from either side of a card `w` wide, centred at
/// `centre` and rolled by `angle` radians.
fn netron_rows(
    centre: (f64, f64),
    angle: f64,
    w: f64,
    header_edge: f64,
    z: f64,
    count: usize,
) -> Vec<RowRect> {
    (0..count)
        .map(|i| RowRect {
            cx: centre.0,
            cy: centre.1,
            angle,
            u0: -w / 2.0 + INSET * z,
            u1: w / 2.0 - INSET * z,
            v0: header_edge + (ROW_TOP + PITCH * i as f64) * z,
            v1: header_edge + (ROW_BOTTOM + PITCH * i as f64) * z,
        })
        .collect()
}

/// How [`fitted_rows`] fits a card's rows to its ink.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowFit {
    /// Zooms tried: the given zoom × `1 ± max_zoom_error`, in steps of 0.01 (only where the box holds two rows
    /// or more: one row shows no pitch).
    pub max_zoom_error: f64,
    /// Shifts of the rows tried, up and down, in `z` (steps of `z / 4`).
    pub max_shift: f64,
    /// How many rows.
    pub count: RowCount,
}

impl Default for RowFit {
    fn default() -> Self {
        RowFit {
            max_zoom_error: 0.15,
            max_shift: 4.0,
            count: RowCount::Add,
        }
    }
}

/// How [`fitted_rows`] counts a card's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowCount {
    /// As many as the card's box holds ([`row_rects_zoomed`]).
    Box,
    /// Those, and the slot below them when it shows text.
    Add,
    /// The leading slots that show text, among the box's rows and one more.
    Ink,
}

/// Ink lines of a card body: row text fills `[5.75, 12]·z` of each row's `[0, 16]·z` below the header (its
/// `[4, 14]·z` text box less the space above capitals and below the baseline), the `[12.75, 17]·z` between rows
/// are blank (measured on 72 `v1-s1` screenshot cards: the share of ink per pixel line, averaged).
const INK_TOP: f64 = 5.75;
const INK_BOTTOM: f64 = 12.0;
const GAP_TOP: f64 = 12.75;
const GAP_BOTTOM: f64 = 17.0;

/// [`row_rects_zoomed`] with the rows' zoom and shift fitted to the card's ink: the rows a small error in the
/// zoom or the header spaces off their text (perspective in photos scales neighbouring cards differently) are
/// put back on it.
///
/// The card's body, from above the header edge to a row below the box's rows, is sampled along the roll; each
/// pixel line's ink is the share of its samples departing from the body's median grey by at least 35% of the
/// body's 99th-percentile departure (and at least 24 levels), at most 0.6 (a border or a fill line counts no
/// more than dense text). Each zoom and shift of [`RowFit`] scores the mean ink of its rows' text lines
/// (`INK_TOP`..`INK_BOTTOM`) less that of the blank lines below them, over the rows the box holds (at least
/// one); the fit is the mean zoom and shift of those scoring within 1% of the best (the middle of the plateau
/// that text a little shorter than its lines leaves). The rows keep the geometry of [`row_rects`] (height
/// `10z`, pitch `12z`, `6z` insets) at the fitted zoom and shift, and their number is [`RowFit::count`]'s: a
/// slot shows text when the median ink of its text lines is at least 0.03 and 30% of the fitted rows'.
///
/// Unchanged ([`row_rects_zoomed`]) when the body shows no contrast (under 24 levels), when no fit scores at
/// least 0.02 a row (no row text in sight), and for cards without rows, bad boxes or rolls beyond ±30°.
pub fn fitted_rows(
    image: &RgbImage,
    card: &BBox,
    title: &BBox,
    zoom: Option<f64>,
    skew_deg: f64,
    max_rows: usize,
    fit: &RowFit,
) -> Vec<RowRect> {
    let boxed = row_rects_zoomed(card, title, zoom, skew_deg, max_rows);
    let Some((w, h, header)) = own_frame(card, title, skew_deg) else {
        return boxed;
    };
    let z0 = zoom
        .filter(|z| z.is_finite() && *z > 0.0)
        .unwrap_or(header / HEADER);
    let in_box = boxed.len();
    // A card whose box ends within a third of a row below its header is a header alone.
    if max_rows == 0 || (in_box == 0 && h - header < PITCH * z0 / 3.0) || w <= 2.0 * INSET * z0 {
        return boxed;
    }
    let (max_k, max_m) = (
        (fit.max_zoom_error / 0.01).round().clamp(0.0, 50.0) as i32,
        (fit.max_shift * 4.0).round().clamp(0.0, 80.0) as i32,
    );
    let slots = (in_box + 1).min(max_rows);
    let header_edge = -h / 2.0 + header;
    let v_start = header_edge - (f64::from(max_m) / 4.0 + 1.0) * z0;
    let v_end = header_edge
        + f64::from(max_m) / 4.0 * z0
        + (GAP_BOTTOM + PITCH * (slots as f64 - 1.0)) * z0 * (1.0 + f64::from(max_k) * 0.01);
    let frame = RowRect {
        cx: f64::from(card.x0 + card.x1) / 2.0,
        cy: f64::from(card.y0 + card.y1) / 2.0,
        angle: skew_deg.to_radians(),
        u0: -w / 2.0 + 5.0 * z0,
        u1: w / 2.0 - 3.0 * z0,
        v0: v_start,
        v1: v_end,
    };
    let cols = (frame.u1 - frame.u0).floor().clamp(0.0, 4096.0) as usize;
    let lines = (v_end - v_start).ceil().clamp(0.0, 4096.0) as usize;
    if cols < 4 || lines < 4 {
        return boxed;
    }
    let grey = frame.sample(image, cols, lines);
    let mut values: Vec<u8> = grey.iter().flatten().copied().collect();
    if 2 * values.len() < grey.len() {
        return boxed;
    }
    values.sort_unstable();
    let median = i32::from(values[values.len() / 2]);
    // The body's text contrast, from the lines below the header edge.
    let body = ((header_edge + z0 - v_start).max(0.0) as usize).min(lines) * cols;
    let mut departures: Vec<i32> = grey[body..]
        .iter()
        .flatten()
        .map(|&g| (i32::from(g) - median).abs())
        .collect();
    if departures.is_empty() {
        return boxed;
    }
    departures.sort_unstable();
    let peak = departures[(departures.len() * 99 / 100).min(departures.len() - 1)];
    if peak < 24 {
        return boxed;
    }
    let threshold = (peak as f32 * 0.35).max(24.0);
    let ink: Vec<f64> = grey
        .chunks(cols)
        .map(|line| {
            let seen = line.iter().flatten().count();
            let inked = line
                .iter()
                .flatten()
                .filter(|&&g| (i32::from(g) - median).abs() as f32 >= threshold)
                .count();
            if seen == 0 {
                0.0
            } else {
                (inked as f64 / seen as f64).min(0.6)
            }
        })
        .collect();
    let mut prefix = vec![0.0; lines + 1];
    for (j, v) in ink.iter().enumerate() {
        prefix[j + 1] = prefix[j] + v;
    }
    // Lines whose centre lies in `[a, b)` (frame `v`).
    let span = |a: f64, b: f64| -> (usize, usize) {
        let at = |v: f64| ((v - v_start - 0.5).ceil().max(0.0) as usize).min(lines);
        (at(a), at(b))
    };
    let mean = |a: f64, b: f64| -> f64 {
        let (i, j) = span(a, b);
        if j > i {
            (prefix[j] - prefix[i]) / (j - i) as f64
        } else {
            0.0
        }
    };
    let fitted = in_box.max(1);
    let rows_score = |z: f64, shift: f64| -> f64 {
        (0..fitted)
            .map(|i| {
                let top = header_edge + shift + PITCH * i as f64 * z;
                mean(top + INK_TOP * z, top + INK_BOTTOM * z)
                    - mean(top + GAP_TOP * z, top + GAP_BOTTOM * z)
            })
            .sum()
    };
    let ks = if fitted >= 2 { max_k } else { 0 };
    let mut tried: Vec<(f64, f64, f64)> = Vec::new(); // (score, z, shift)
    for k in -ks..=ks {
        let z = z0 * (1.0 + f64::from(k) * 0.01);
        for m in -max_m..=max_m {
            let shift = f64::from(m) / 4.0 * z0;
            tried.push((rows_score(z, shift), z, shift));
        }
    }
    let best = tried.iter().map(|t| t.0).fold(f64::NEG_INFINITY, f64::max);
    if best < 0.02 * fitted as f64 {
        return boxed;
    }
    // Text a little shorter than the text lines, or blank lines a little taller, leave a plateau of equal
    // scores: its middle.
    let top: Vec<&(f64, f64, f64)> = tried.iter().filter(|t| t.0 >= 0.99 * best).collect();
    let n = top.len() as f64;
    let z = top.iter().map(|t| t.1).sum::<f64>() / n;
    let shift = top.iter().map(|t| t.2).sum::<f64>() / n;
    let text_median = |i: usize| -> f64 {
        let top = header_edge + shift + PITCH * i as f64 * z;
        let (a, b) = span(top + INK_TOP * z, top + INK_BOTTOM * z);
        let mut v: Vec<f64> = ink[a..b].to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let count = match fit.count {
        RowCount::Box => in_box,
        RowCount::Add | RowCount::Ink => {
            let mut reference: Vec<f64> = (0..fitted).map(text_median).collect();
            reference.sort_by(f64::total_cmp);
            let floor = (0.3 * reference[reference.len() / 2]).max(0.03);
            let shows = |i: usize| text_median(i) >= floor;
            if fit.count == RowCount::Add {
                if slots > in_box && shows(in_box) {
                    in_box + 1
                } else {
                    in_box
                }
            } else {
                (0..slots).take_while(|&i| shows(i)).count()
            }
        }
    };
    netron_rows(
        (frame.cx, frame.cy),
        frame.angle,
        w,
        header_edge + shift,
        z,
        count,
    )
}

/// A card's own width `W`, height `H` and header height (without the roll), from its box and its title box
/// rolled by `skew_deg`: with `s = |sin θ|`, `c = cos θ` the box is `W·c + H·s` × `W·s + H·c` and the header
/// `(title height − W·s) / c`. `None` for boxes that are not finite and ordered, a skew beyond ±30°, or when the
/// roll leaves no positive size.
fn own_frame(card: &BBox, title: &BBox, skew_deg: f64) -> Option<(f64, f64, f64)> {
    if !card.is_finite() || !card.is_ordered() || !title.is_finite() || !title.is_ordered() {
        return None;
    }
    if !skew_deg.is_finite() || skew_deg.abs() >= 30.0 {
        return None;
    }
    let angle = skew_deg.to_radians();
    let (s, c) = (angle.sin().abs(), angle.cos());
    let (bw, bh) = (f64::from(card.width()), f64::from(card.height()));
    let det = c * c - s * s;
    let (w, h) = ((bw * c - bh * s) / det, (bh * c - bw * s) / det);
    let header = (f64::from(title.height()) - w * s) / c;
    (w > 0.0 && h > 0.0 && header > 0.0).then_some((w, h, header))
}

/// The zoom `z` (source pixels per CSS px) that a card's title box gives [`row_rects`]: its header height without
/// the roll `skew_deg`, over 20. `None` for boxes that are not finite and ordered, a skew beyond ±30°, or when
/// the roll leaves no positive size.
pub fn title_zoom(card: &BBox, title: &BBox, skew_deg: f64) -> Option<f64> {
    own_frame(card, title, skew_deg).map(|(_, _, header)| header / HEADER)
}

/// Title boxes whose header height is shared by neighbouring cards, for [`row_rects`]. Netron draws every
/// header 20 CSS px × zoom tall, so cards near each other (one zoom; in a photo, nearly one scale) show one
/// header height, while a card's own estimate ([`crate::classify::estimate_title_boxes`],
/// [`crate::classify::snap_title_boxes`]) follows its detector box, often a few pixels too tall or short, and
/// a small error in `z` shifts the lower rows off their text. Each card's header height (`titles[i]` without the
/// roll `skew_deg`, as in [`row_rects`]) becomes the median over its `neighbours` nearest cards (centre
/// distance, itself included) of theirs; the title box keeps its top and takes that header's axis-aligned
/// extent. `neighbours` ≤ 1, a skew beyond ±30°, or fewer than two usable cards: `titles` unchanged. Cards
/// and titles that are not finite, ordered boxes neither vote nor change.
pub fn shared_headers(
    cards: &[BBox],
    titles: &[BBox],
    skew_deg: f64,
    neighbours: usize,
) -> Vec<BBox> {
    let mut out = titles.to_vec();
    if neighbours <= 1 || !skew_deg.is_finite() || skew_deg.abs() >= 30.0 {
        return out;
    }
    let angle = skew_deg.to_radians();
    let (s, c) = (angle.sin().abs(), angle.cos());
    // (card index, centre, own width, header height without the roll)
    let usable: Vec<(usize, (f64, f64), f64, f64)> = cards
        .iter()
        .zip(titles)
        .enumerate()
        .filter_map(|(i, (card, title))| {
            let (w, _, header) = own_frame(card, title, skew_deg)?;
            let centre = (
                f64::from(card.x0 + card.x1) / 2.0,
                f64::from(card.y0 + card.y1) / 2.0,
            );
            Some((i, centre, w, header))
        })
        .collect();
    if usable.len() < 2 {
        return out;
    }
    for &(i, (x, y), w, _) in &usable {
        let mut near: Vec<(f64, f64)> = usable
            .iter()
            .map(|&(_, (xj, yj), _, hj)| ((xj - x).hypot(yj - y), hj))
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        near.truncate(neighbours);
        let Some(median) = crate::classify::median(near.iter().map(|n| n.1).collect()) else {
            continue;
        };
        let t = titles[i];
        let extent = (median * c + w * s) as f32;
        out[i] = BBox::new(t.x0, t.y0, t.x1, t.y0 + extent);
    }
    out
}

/// A weight row's text as a schema [`Weight`]: `name〈dims〉` (`W〈64×3×7×7〉`: name `W`, text `64×3×7×7`, shape
/// parsed) or `name = value` (`B = 0.5`: text `0.5`, no shape unless the value is one). `None` when the text
/// has neither form or an empty name.
pub fn parse_row(text: &str, bbox: Option<BBox>) -> Option<Weight> {
    let text = text.trim();
    let (name, value) = if let Some((name, rest)) = text.split_once('〈') {
        (name, rest.strip_suffix('〉').unwrap_or(rest))
    } else {
        let (name, value) = text.split_once('=')?;
        (name, value)
    };
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() {
        return None;
    }
    Some(Weight {
        name: name.to_owned(),
        shape: parse_shape_text(value),
        text: value.to_owned(),
        bbox,
    })
}

/// The names a card's rows may carry, per operator: its ONNX input names (initializer rows, `W〈64×3×7×7〉`,
/// `B = 0.5`) and attribute names (`kernel_shape = 3, 3`, drawn like a scalar input when Netron shows
/// attributes), over every version of the operator up to the vocabulary's opset (`models/op_rows.json`, written
/// by `python -m datagen op-rows`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpRows {
    ops: HashMap<String, OpRowNames>,
}

/// One operator's row names ([`OpRows`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct OpRowNames {
    /// Input names, the newest version's in order, then those only older versions have.
    pub inputs: Vec<String>,
    /// Attribute names, sorted.
    pub attributes: Vec<String>,
}

/// What a row's name says the row is ([`OpRows::name`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowName {
    /// An input of the operator: the name as the schema spells it (mended when the reading was a few edits off).
    Input(String),
    /// An attribute of the operator: not a weight.
    Attribute,
    /// An operator without names, or a name not clearly nearest one input or one attribute.
    Unknown,
}

#[derive(Deserialize)]
struct OpRowsFile {
    version: u32,
    operators: HashMap<String, OpRowNames>,
}

impl OpRows {
    /// Parses `op_rows.json` (`{"version": 1, "operators": {op: {"inputs": [...], "attributes": [...]}}}`; other
    /// keys are ignored). Errors: malformed JSON, version ≠ 1, an empty name.
    pub fn from_json(text: &str) -> Result<OpRows, ModelError> {
        let bad = |message: String| ModelError::Metadata {
            file: "op_rows.json".to_owned(),
            message,
        };
        let file: OpRowsFile = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if file.version != 1 {
            return Err(bad(format!("version {} is not 1", file.version)));
        }
        for (op, names) in &file.operators {
            if names
                .inputs
                .iter()
                .chain(&names.attributes)
                .any(|n| n.is_empty())
            {
                return Err(bad(format!("{op}: an empty name")));
            }
        }
        Ok(OpRows {
            ops: file.operators,
        })
    }

    /// The row names of `op`, if it has any here.
    pub fn get(&self, op: &str) -> Option<&OpRowNames> {
        self.ops.get(op)
    }

    /// What the row name `read` (an OCR reading, trimmed) means on a card of `op`. An exact input name is
    /// [`RowName::Input`], else an exact attribute name [`RowName::Attribute`]; otherwise the nearest name within
    /// `⌊len / 3⌋` edits of the reading (len: that name's characters), when no other name is as near: an input's
    /// name mends the reading. Two names equally near, none near enough, or an operator not listed:
    /// [`RowName::Unknown`].
    pub fn name(&self, op: &str, read: &str) -> RowName {
        let read = read.trim();
        let Some(names) = self.ops.get(op).filter(|_| !read.is_empty()) else {
            return RowName::Unknown;
        };
        if names.inputs.iter().any(|n| n == read) {
            return RowName::Input(read.to_owned());
        }
        if names.attributes.iter().any(|n| n == read) {
            return RowName::Attribute;
        }
        let inputs = names.inputs.iter().map(|n| (n, true));
        let attributes = names.attributes.iter().map(|n| (n, false));
        let mut best: Option<(usize, &String, bool)> = None;
        let mut tied = false;
        for (name, input) in inputs.chain(attributes) {
            let d = edit_distance(read, name);
            if d > name.chars().count() / 3 {
                continue;
            }
            match best {
                // An input renamed to an attribute by a later version is listed twice: not a tie.
                Some((bd, bn, _)) if d == bd => tied |= bn != name,
                Some((bd, _, _)) if d > bd => {}
                _ => {
                    best = Some((d, name, input));
                    tied = false;
                }
            }
        }
        match best {
            Some((_, name, true)) if !tied => RowName::Input(name.clone()),
            Some((_, _, false)) if !tied => RowName::Attribute,
            _ => RowName::Unknown,
        }
    }

    /// A card's row names, each first read alone by [`OpRows::name`] (`alone`, one per reading of `reads`, top
    /// to bottom), mended by order. Netron lists a card's inputs in the operator's order, each once, so a row
    /// left [`RowName::Unknown`] (`aoxxes` between `ends` and `steps`), or one of two rows read as the same input
    /// (`input_mean` read as `input_var` above the true `input_var`), takes an input name no row holds when that
    /// is the only such name that keeps the card's named rows in schema order, lies within `⌊len / 2⌋` edits of
    /// its reading (len: the name's characters, so one-letter names are never moved to) and is nearer than
    /// every name that is only an attribute. Of two repeated rows only one may move; moves that claim one name,
    /// or together break the order, are all dropped. Names repeated by variadic inputs (`inputs` of `Concat`)
    /// have no free name to move to and stay.
    pub fn mend_row_order(&self, op: &str, reads: &[&str], alone: &[RowName]) -> Vec<RowName> {
        let mut named = alone.to_vec();
        let Some(names) = self.ops.get(op) else {
            return named;
        };
        let index = |n: &RowName| match n {
            RowName::Input(name) => names.inputs.iter().position(|i| i == name),
            _ => None,
        };
        let indices: Vec<Option<usize>> = named.iter().map(index).collect();
        let in_order = |idx: &[Option<usize>]| {
            let held: Vec<usize> = idx.iter().flatten().copied().collect();
            held.windows(2).all(|w| w[0] < w[1])
        };
        let fits = |r: usize| -> Vec<usize> {
            let read = reads[r].trim();
            let attribute = names
                .attributes
                .iter()
                .filter(|a| !names.inputs.contains(a))
                .map(|a| edit_distance(read, a))
                .min()
                .unwrap_or(usize::MAX);
            (0..names.inputs.len())
                .filter(|&k| {
                    let name = &names.inputs[k];
                    let d = edit_distance(read, name);
                    let mut moved = indices.clone();
                    moved[r] = Some(k);
                    !indices.contains(&Some(k))
                        && d <= name.chars().count() / 2
                        && d < attribute
                        && in_order(&moved)
                })
                .collect()
        };
        let mut moves: Vec<(usize, usize)> = Vec::new();
        for r in 0..named.len() {
            if named[r] == RowName::Unknown && !reads[r].trim().is_empty() {
                if let [k] = fits(r)[..] {
                    moves.push((r, k));
                }
            }
        }
        let mut groups: Vec<usize> = indices.iter().flatten().copied().collect();
        groups.sort_unstable();
        groups.dedup();
        for held in groups {
            let rows: Vec<usize> = (0..named.len())
                .filter(|&r| indices[r] == Some(held))
                .collect();
            if rows.len() < 2 {
                continue;
            }
            let group_moves: Vec<(usize, usize)> = rows
                .iter()
                .filter_map(|&r| match fits(r)[..] {
                    [k] => Some((r, k)),
                    _ => None,
                })
                .collect();
            if let [one] = group_moves[..] {
                moves.push(one);
            }
        }
        let mut moved = indices.clone();
        for &(r, k) in &moves {
            moved[r] = Some(k);
        }
        let claimed_once = moves
            .iter()
            .all(|&(_, k)| moves.iter().filter(|m| m.1 == k).count() == 1);
        if claimed_once && in_order(&moved) {
            for (r, k) in moves {
                named[r] = RowName::Input(names.inputs[k].clone());
            }
        }
        named
    }
}
