//! Weight rows of node cards: where they are, from the card and its header, and what their text means.
//!
//! Netron draws a card as a header of 20 CSS px × zoom `z` and then one row per initializer (`W〈64×3×7×7〉`,
//! `B = 0.5`) and, when attributes are shown, per attribute: row `i`'s text spans `[4 + 12i, 14 + 12i]·z` below
//! the header and starts `6z` from the card's left edge, and the card ends `6z` below its last row (measured on
//! 300 `v1-s1` screenshots: 1st–99th percentiles within ±0.05 z). [`row_rects`] inverts that geometry for a
//! detected card with its estimated title box ([`crate::classify::estimate_title_boxes`]), also for a card rolled
//! by the image's skew, and [`row_rects_zoomed`] with a zoom shared by neighbouring cards ([`shared_headers`]:
//! a detector box a few pixels off throws one card's own zoom off, and the lower rows with it);
//! [`RowRect::trim`] cuts a row at its last ink column so that short rows in wide cards are not squashed by the
//! OCR's resize; [`parse_row`] turns a row's OCR text into a schema [`Weight`].

use image::RgbImage;

use crate::graph::{parse_shape_text, BBox, Weight};
use crate::resample::luma;

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
        let (iw, ih) = (f64::from(image.width()), f64::from(image.height()));
        let cols = (self.u1 - self.u0).floor().clamp(0.0, 4096.0) as usize;
        let rows = (self.v1 - self.v0).floor().clamp(0.0, 256.0) as usize;
        if cols < 2 || rows < 2 {
            return *self;
        }
        let mut grey: Vec<Option<u8>> = Vec::with_capacity(cols * rows);
        for j in 0..rows {
            let v = self.v0 + j as f64 + 0.5;
            for i in 0..cols {
                let (x, y) = self.point(self.u0 + i as f64 + 0.5, v);
                let inside = x >= 0.0 && y >= 0.0 && x < iw && y < ih;
                grey.push(inside.then(|| luma(image.get_pixel(x as u32, y as u32).0)));
            }
        }
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
    let (cx, cy) = (
        f64::from(card.x0 + card.x1) / 2.0,
        f64::from(card.y0 + card.y1) / 2.0,
    );
    (0..rows)
        .map(|i| RowRect {
            cx,
            cy,
            angle,
            u0: -w / 2.0 + INSET * z,
            u1: w / 2.0 - INSET * z,
            v0: -h / 2.0 + header + (ROW_TOP + PITCH * i as f64) * z,
            v1: -h / 2.0 + header + (ROW_BOTTOM + PITCH * i as f64) * z,
        })
        .collect()
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
