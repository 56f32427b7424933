//! Debug overlay of a scan: boxes and lines drawn over the source image with plain pixel writes.
//!
//! Colours: crop (canvas box) yellow, nodes blue (title box cyan), tensor labels green, inputs magenta, outputs
//! orange, edges red polylines (their traced curves; a straight line when no curve is known). Nodes whose op is
//! `null` (marked) are drawn dashed. No text is drawn (no font in the binary): read the ops and shape texts from
//! the JSON, whose ids follow the same order.

use image::{Rgb, RgbImage};
use netron_ocr_core::graph::{BBox, GraphJson, Point};

const CROP: Rgb<u8> = Rgb([240, 200, 0]);
const NODE: Rgb<u8> = Rgb([30, 90, 255]);
const TITLE: Rgb<u8> = Rgb([0, 200, 230]);
const TENSOR: Rgb<u8> = Rgb([0, 170, 60]);
const INPUT: Rgb<u8> = Rgb([220, 0, 220]);
const OUTPUT: Rgb<u8> = Rgb([255, 120, 0]);
const EDGE: Rgb<u8> = Rgb([230, 20, 20]);

/// Line thickness for an image: 1 px up to 1000 px on the long side, then one more per 1000 px.
fn thickness(img: &RgbImage) -> i64 {
    1 + i64::from(img.width().max(img.height())) / 1000
}

fn dot(img: &mut RgbImage, x: i64, y: i64, t: i64, c: Rgb<u8>) {
    for dy in 0..t {
        for dx in 0..t {
            let (px, py) = (x + dx - t / 2, y + dy - t / 2);
            if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, c);
            }
        }
    }
}

/// Bresenham line; `dash` > 0 draws `dash` pixels on, `dash` off.
fn line(img: &mut RgbImage, a: Point, b: Point, t: i64, c: Rgb<u8>, dash: i64) {
    if !(a.x.is_finite() && a.y.is_finite() && b.x.is_finite() && b.y.is_finite()) {
        return;
    }
    let (mut x0, mut y0) = (a.x.round() as i64, a.y.round() as i64);
    let (x1, y1) = (b.x.round() as i64, b.y.round() as i64);
    let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
    let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
    let mut err = dx + dy;
    // Bounded by the longest possible line, so a huge coordinate cannot loop for long.
    for k in 0..=(dx - dy).min(100_000) {
        if dash == 0 || (k / dash) % 2 == 0 {
            dot(img, x0, y0, t, c);
        }
        if x0 == x1 && y0 == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x0 += sx;
        }
        if e2 <= dx {
            err += dx;
            y0 += sy;
        }
    }
}

fn rect(img: &mut RgbImage, b: &BBox, t: i64, c: Rgb<u8>, dash: i64) {
    let p = |x, y| Point::new(x, y);
    line(img, p(b.x0, b.y0), p(b.x1, b.y0), t, c, dash);
    line(img, p(b.x1, b.y0), p(b.x1, b.y1), t, c, dash);
    line(img, p(b.x1, b.y1), p(b.x0, b.y1), t, c, dash);
    line(img, p(b.x0, b.y1), p(b.x0, b.y0), t, c, dash);
}

/// Draws `graph` over a copy of `image`.
pub fn draw(image: &RgbImage, graph: &GraphJson) -> RgbImage {
    let mut img = image.clone();
    let t = thickness(&img);
    rect(&mut img, &graph.canvas.bbox, t + 1, CROP, 0);
    let centre = |id: &str| -> Option<Point> {
        let b = graph
            .nodes
            .iter()
            .find(|n| n.id == id)
            .map(|n| n.bbox)
            .or_else(|| {
                graph
                    .inputs
                    .iter()
                    .chain(&graph.outputs)
                    .find(|p| p.id == id)
                    .map(|p| p.bbox)
            })?;
        Some(b.center())
    };
    for e in &graph.edges {
        match &e.points {
            Some(pts) if pts.len() >= 2 => {
                for w in pts.windows(2) {
                    line(&mut img, w[0], w[1], t, EDGE, 0);
                }
            }
            _ => {
                if let (Some(a), Some(b)) = (centre(&e.from), centre(&e.to)) {
                    line(&mut img, a, b, t, EDGE, 0);
                }
            }
        }
    }
    for n in &graph.nodes {
        let dash = if n.op.is_none() { 4 * t } else { 0 };
        rect(&mut img, &n.bbox, t, NODE, dash);
        if let Some(tb) = &n.title_box {
            rect(&mut img, tb, t, TITLE, 0);
        }
    }
    for x in &graph.tensors {
        rect(&mut img, &x.bbox, t, TENSOR, 0);
    }
    for p in &graph.inputs {
        rect(&mut img, &p.bbox, t, INPUT, 0);
    }
    for p in &graph.outputs {
        rect(&mut img, &p.bbox, t, OUTPUT, 0);
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;
    use netron_ocr_core::graph::{Canvas, ImageSize};

    #[test]
    fn draws_the_canvas_box() {
        let img = RgbImage::new(40, 30);
        let g = GraphJson::new(
            ImageSize {
                width: 40,
                height: 30,
            },
            Canvas {
                bbox: BBox::new(5.0, 5.0, 30.0, 20.0),
                confidence: 0.9,
            },
        );
        let out = draw(&img, &g);
        assert_eq!(*out.get_pixel(5, 12), CROP);
        assert_eq!(*out.get_pixel(15, 12), Rgb([0, 0, 0]));
    }

    #[test]
    fn lines_far_outside_do_not_panic() {
        let mut img = RgbImage::new(10, 10);
        line(
            &mut img,
            Point::new(-1e9, -1e9),
            Point::new(1e9, 5.0),
            2,
            EDGE,
            0,
        );
        line(
            &mut img,
            Point::new(f32::NAN, 0.0),
            Point::new(5.0, 5.0),
            1,
            EDGE,
            0,
        );
    }
}
