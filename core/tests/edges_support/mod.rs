//! Drawing Netron-like scenes for the edge-recovery tests: boxes, anti-aliased curves of a given width, arrowheads
//! 8 × 6 stroke widths large at the target end (Netron's marker), and fake label text.

#![allow(dead_code)]

use image::{Rgb, RgbImage};
use netron_ocr_core::edges::{
    recover_edges, side_crossings, EdgeError, EdgeParams, EdgeResult, Element, ElementKind, Label,
    RecoveredEdge, SideCrossings,
};
use netron_ocr_core::graph::Direction;
use netron_ocr_core::graph::{BBox, Point};

/// Colours of one theme.
#[derive(Clone, Copy)]
pub struct Theme {
    pub background: [u8; 3],
    pub stroke: [u8; 3],
    pub card: [u8; 3],
    pub card_border: [u8; 3],
    pub text: [u8; 3],
}

/// Netron's light theme: black strokes on white.
pub const LIGHT: Theme = Theme {
    background: [255, 255, 255],
    stroke: [0, 0, 0],
    card: [51, 85, 136],
    card_border: [80, 80, 80],
    text: [0, 0, 0],
};

/// Netron's dark theme: `#888` strokes on a dark background.
pub const DARK: Theme = Theme {
    background: [30, 30, 30],
    stroke: [136, 136, 136],
    card: [60, 60, 60],
    card_border: [110, 110, 110],
    text: [178, 178, 178],
};

/// A scene under construction: the image plus the boxes a detector would report.
pub struct Scene {
    pub image: RgbImage,
    pub theme: Theme,
    pub elements: Vec<Element>,
    pub labels: Vec<Label>,
}

fn blend(img: &mut RgbImage, x: i64, y: i64, c: [u8; 3], alpha: f32) {
    if x < 0 || y < 0 || x >= img.width() as i64 || y >= img.height() as i64 || alpha <= 0.0 {
        return;
    }
    let a = alpha.min(1.0);
    let p = img.get_pixel_mut(x as u32, y as u32);
    for (v, c) in p.0.iter_mut().zip(c) {
        *v = (f32::from(*v) * (1.0 - a) + f32::from(c) * a).round() as u8;
    }
}

fn seg_dist(p: Point, a: Point, b: Point) -> f32 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let l2 = dx * dx + dy * dy;
    let t = if l2 > 0.0 {
        (((p.x - a.x) * dx + (p.y - a.y) * dy) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((p.x - a.x - t * dx).powi(2) + (p.y - a.y - t * dy).powi(2)).sqrt()
}

/// Cubic Bézier from `p0` to `p3`, `n + 1` points.
pub fn bezier(p0: Point, p1: Point, p2: Point, p3: Point, n: usize) -> Vec<Point> {
    (0..=n)
        .map(|i| {
            let t = i as f32 / n as f32;
            let u = 1.0 - t;
            let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
            Point::new(
                a * p0.x + b * p1.x + c * p2.x + d * p3.x,
                a * p0.y + b * p1.y + c * p2.y + d * p3.y,
            )
        })
        .collect()
}

/// A vertical-flow curve from `a` (leaving downwards) to `b` (arriving downwards).
pub fn s_curve(a: Point, b: Point) -> Vec<Point> {
    let dy = (b.y - a.y) * 0.5;
    bezier(
        a,
        Point::new(a.x, a.y + dy),
        Point::new(b.x, b.y - dy),
        b,
        64,
    )
}

/// A horizontal-flow curve from `a` (leaving rightwards) to `b` (arriving rightwards).
pub fn s_curve_h(a: Point, b: Point) -> Vec<Point> {
    let dx = (b.x - a.x) * 0.5;
    bezier(
        a,
        Point::new(a.x + dx, a.y),
        Point::new(b.x - dx, b.y),
        b,
        64,
    )
}

impl Scene {
    pub fn new(width: u32, height: u32, theme: Theme) -> Scene {
        Scene {
            image: RgbImage::from_pixel(width, height, Rgb(theme.background)),
            theme,
            elements: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// A card (filled box with a 1 px border) reported as an element.
    pub fn element(&mut self, id: &str, kind: ElementKind, b: BBox) {
        for y in b.y0 as i64..b.y1 as i64 {
            for x in b.x0 as i64..b.x1 as i64 {
                let border = x == b.x0 as i64
                    || y == b.y0 as i64
                    || x == b.x1 as i64 - 1
                    || y == b.y1 as i64 - 1;
                let c = if border {
                    self.theme.card_border
                } else {
                    self.theme.card
                };
                blend(&mut self.image, x, y, c, 1.0);
            }
        }
        self.elements.push(Element {
            id: id.to_owned(),
            kind,
            bbox: b,
        });
    }

    /// A polyline of stroke width `w`, anti-aliased by distance.
    pub fn stroke(&mut self, points: &[Point], w: f32) {
        let c = self.theme.stroke;
        let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
        for p in points {
            x0 = x0.min(p.x);
            y0 = y0.min(p.y);
            x1 = x1.max(p.x);
            y1 = y1.max(p.y);
        }
        let r = w * 0.5 + 1.0;
        for y in (y0 - r).floor() as i64..=(y1 + r).ceil() as i64 {
            for x in (x0 - r).floor() as i64..=(x1 + r).ceil() as i64 {
                let p = Point::new(x as f32 + 0.5, y as f32 + 0.5);
                let d = points
                    .windows(2)
                    .map(|s| seg_dist(p, s[0], s[1]))
                    .fold(f32::MAX, f32::min);
                blend(&mut self.image, x, y, c, w * 0.5 + 0.5 - d);
            }
        }
    }

    /// Netron's arrowhead at `tip`, pointing along `dir`, for stroke width `w`: 8w long, 6w wide.
    pub fn arrowhead(&mut self, tip: Point, dir: Point, w: f32) {
        let l = (dir.x * dir.x + dir.y * dir.y).sqrt();
        let (dx, dy) = (dir.x / l, dir.y / l);
        let back = Point::new(tip.x - dx * 8.0 * w, tip.y - dy * 8.0 * w);
        let a = Point::new(back.x - dy * 3.0 * w, back.y + dx * 3.0 * w);
        let b = Point::new(back.x + dy * 3.0 * w, back.y - dx * 3.0 * w);
        let cross =
            |o: Point, p: Point, q: Point| (p.x - o.x) * (q.y - o.y) - (p.y - o.y) * (q.x - o.x);
        let c = self.theme.stroke;
        let r = 9.0 * w;
        for y in (tip.y - r) as i64..=(tip.y + r) as i64 {
            for x in (tip.x - r) as i64..=(tip.x + r) as i64 {
                let mut hits = 0;
                for sy in 0..4 {
                    for sx in 0..4 {
                        let p = Point::new(
                            x as f32 + (sx as f32 + 0.5) / 4.0,
                            y as f32 + (sy as f32 + 0.5) / 4.0,
                        );
                        let (c1, c2, c3) = (cross(tip, a, p), cross(a, b, p), cross(b, tip, p));
                        if (c1 >= 0.0 && c2 >= 0.0 && c3 >= 0.0)
                            || (c1 <= 0.0 && c2 <= 0.0 && c3 <= 0.0)
                        {
                            hits += 1;
                        }
                    }
                }
                blend(&mut self.image, x, y, c, hits as f32 / 16.0);
            }
        }
    }

    /// An edge along `points` (source to target) with an arrowhead at the end.
    pub fn edge(&mut self, points: &[Point], w: f32) {
        self.stroke(points, w);
        let n = points.len();
        let (a, b) = (points[n - 2], points[n - 1]);
        self.arrowhead(b, Point::new(b.x - a.x, b.y - a.y), w);
    }

    /// A label box with glyph-like strokes (digits and `×`) reported as a label.
    pub fn label(&mut self, id: &str, b: BBox) {
        let c = self.theme.text;
        let h = b.height();
        let mut x = b.x0 + 1.0;
        let mut k = 0;
        while x + 0.5 * h < b.x1 {
            let glyph: Vec<Point> = if k % 3 == 2 {
                vec![
                    Point::new(x, b.y0 + 0.35 * h),
                    Point::new(x + 0.35 * h, b.y0 + 0.75 * h),
                ]
            } else {
                vec![
                    Point::new(x + 0.3 * h, b.y0 + 0.15 * h),
                    Point::new(x, b.y0 + 0.5 * h),
                    Point::new(x + 0.3 * h, b.y0 + 0.85 * h),
                ]
            };
            let saved = self.theme.stroke;
            self.theme.stroke = c;
            self.stroke(&glyph, 1.0);
            self.theme.stroke = saved;
            x += 0.55 * h;
            k += 1;
        }
        self.labels.push(Label {
            id: id.to_owned(),
            bbox: b,
        });
    }

    /// The whole image as region.
    pub fn region(&self) -> BBox {
        BBox::new(
            0.0,
            0.0,
            self.image.width() as f32,
            self.image.height() as f32,
        )
    }

    /// `recover_edges` on the whole scene (its image, [`Scene::region`], elements and labels) with the
    /// default parameters.
    pub fn recover(&self, direction: Direction) -> Result<EdgeResult, EdgeError> {
        self.recover_with(direction, &EdgeParams::default())
    }

    /// `side_crossings` on the whole scene with the default parameters.
    pub fn side_crossings(&self) -> SideCrossings {
        side_crossings(
            &self.image,
            self.region(),
            &self.elements,
            &self.labels,
            &EdgeParams::default(),
        )
        .unwrap()
    }

    /// [`Scene::recover`] with `params`.
    pub fn recover_with(
        &self,
        direction: Direction,
        params: &EdgeParams,
    ) -> Result<EdgeResult, EdgeError> {
        recover_edges(
            &self.image,
            self.region(),
            &self.elements,
            &self.labels,
            direction,
            params,
        )
    }
}

/// The edges as sorted `(from, to, label)` triples.
pub fn triples(edges: &[RecoveredEdge]) -> Vec<(String, String, Option<String>)> {
    let mut v: Vec<_> = edges
        .iter()
        .map(|e| (e.from.clone(), e.to.clone(), e.label.clone()))
        .collect();
    v.sort();
    v
}

/// Sorted `(from, to, label)` triples from literals.
pub fn expect(list: &[(&str, &str, Option<&str>)]) -> Vec<(String, String, Option<String>)> {
    let mut v: Vec<_> = list
        .iter()
        .map(|(a, b, l)| (a.to_string(), b.to_string(), l.map(str::to_owned)))
        .collect();
    v.sort();
    v
}
