//! Debug overlay of a scan: boxes, lines and the texts read, drawn over the source image with plain pixel writes.
//!
//! Colours: crop (canvas box) yellow, nodes blue (title box cyan), tensor labels green, inputs magenta, outputs
//! orange, edges red polylines (their traced curves; a straight line when no curve is known). Nodes whose op is
//! `null` (marked) are drawn dashed. What was read is written over the top left corner of its box in 8 × 8
//! bitmap glyphs scaled to about the box's height ([`font8x8`]; `×` included, other characters outside Latin-1
//! as their nearest ASCII): a node's op (`?` when marked), a tensor label's text, a port's name, black on white,
//! on pale red when the element's calibrated confidence is under [`DOUBT`], with that confidence in per cent
//! after the text.

use image::{Rgb, RgbImage};
use netron_ocr_core::graph::{BBox, GraphJson, Point};

const CROP: Rgb<u8> = Rgb([240, 200, 0]);
const NODE: Rgb<u8> = Rgb([30, 90, 255]);
const TITLE: Rgb<u8> = Rgb([0, 200, 230]);
const TENSOR: Rgb<u8> = Rgb([0, 170, 60]);
const INPUT: Rgb<u8> = Rgb([220, 0, 220]);
const OUTPUT: Rgb<u8> = Rgb([255, 120, 0]);
const EDGE: Rgb<u8> = Rgb([230, 20, 20]);
const INK: Rgb<u8> = Rgb([0, 0, 0]);
const PAPER: Rgb<u8> = Rgb([255, 255, 255]);
const DOUBTFUL_PAPER: Rgb<u8> = Rgb([255, 190, 190]);

/// Under this confidence a text is drawn on [`DOUBTFUL_PAPER`] with its confidence.
pub const DOUBT: f32 = 0.5;

/// The 8 × 8 glyph of `c` (row by row, bit 0 the leftmost pixel): ASCII and Latin-1 from [`font8x8`], Netron's
/// `〈 〉 …` as `< > ~`, anything else as `?`.
fn glyph(c: char) -> [u8; 8] {
    use font8x8::legacy::{BASIC_LEGACY, LATIN_LEGACY};
    let c = match c {
        '〈' | '⟨' => '<',
        '〉' | '⟩' => '>',
        '…' => '~',
        c => c,
    };
    match u32::from(c) {
        code @ 0x20..=0x7e => BASIC_LEGACY[code as usize],
        code @ 0xa0..=0xff => LATIN_LEGACY[(code - 0xa0) as usize],
        _ => BASIC_LEGACY[usize::from(b'?')],
    }
}

/// Writes `text` with its top left corner at `(x, y)`, each glyph pixel `scale` × `scale`, on a `paper`
/// rectangle one glyph pixel wider on every side. Clipped to the image.
fn text(img: &mut RgbImage, x: i64, y: i64, text: &str, scale: i64, paper: Rgb<u8>) {
    let n = text.chars().count() as i64;
    let (w, h) = (img.width() as i64, img.height() as i64);
    let mut put = |px: i64, py: i64, c: Rgb<u8>| {
        if px >= 0 && py >= 0 && px < w && py < h {
            img.put_pixel(px as u32, py as u32, c);
        }
    };
    for py in (y - scale)..(y + 8 * scale + scale) {
        for px in (x - scale)..(x + 8 * scale * n + scale) {
            put(px, py, paper);
        }
    }
    for (k, c) in text.chars().enumerate() {
        let g = glyph(c);
        let gx = x + 8 * scale * k as i64;
        for (row, bits) in g.iter().enumerate() {
            for col in 0..8 {
                if bits >> col & 1 == 1 {
                    for dy in 0..scale {
                        for dx in 0..scale {
                            put(gx + col * scale + dx, y + row as i64 * scale + dy, INK);
                        }
                    }
                }
            }
        }
    }
}

/// `what` as written on the overlay for a confidence `p`: with `p` in per cent when under [`DOUBT`].
fn label(what: &str, p: f32) -> (String, Rgb<u8>) {
    if p < DOUBT {
        (format!("{what} {:.0}%", 100.0 * p), DOUBTFUL_PAPER)
    } else {
        (what.to_owned(), PAPER)
    }
}

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
    // Texts last, over every box and line, about as tall as the box they were read from.
    let mut write = |b: &BBox, what: &str, p: f32| {
        let (s, paper) = label(what, p);
        let scale = text_scale(b);
        let (x, y) = (b.x0.round() as i64 + scale, b.y0.round() as i64 + scale);
        text(&mut img, x, y, &s, scale, paper);
    };
    for n in &graph.nodes {
        let b = n.title_box.as_ref().unwrap_or(&n.bbox);
        write(b, n.op.as_deref().unwrap_or("?"), n.op_confidence);
    }
    for x in &graph.tensors {
        write(&x.bbox, &x.text, x.confidence);
    }
    for p in graph.inputs.iter().chain(&graph.outputs) {
        write(&p.bbox, &p.name, p.confidence);
    }
    img
}

/// Glyph pixel size for text read from box `b`: one per 10 px of its height, 1 to 4.
fn text_scale(b: &BBox) -> i64 {
    let h = b.height();
    if h.is_finite() {
        ((h / 10.0).round() as i64).clamp(1, 4)
    } else {
        1
    }
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

    #[test]
    fn glyphs_cover_netron_text_and_fall_back_to_a_question_mark() {
        let ink = |c: char| glyph(c).iter().map(|r| r.count_ones()).sum::<u32>();
        for c in "Conv1×64×56?_,".chars() {
            assert!(ink(c) > 0, "{c:?}");
        }
        assert_ne!(glyph('×'), glyph('x'));
        assert_eq!(glyph('〈'), glyph('<'));
        assert_eq!(glyph('漢'), glyph('?'));
        assert_eq!(ink(' '), 0);
    }

    #[test]
    fn texts_are_written_over_their_boxes_doubtful_ones_on_red() {
        use netron_ocr_core::graph::{Node, Tensor};
        let img = RgbImage::from_pixel(200, 120, Rgb([128, 128, 128]));
        let mut g = GraphJson::new(
            ImageSize {
                width: 200,
                height: 120,
            },
            Canvas {
                bbox: BBox::new(0.0, 0.0, 200.0, 120.0),
                confidence: 0.9,
            },
        );
        g.nodes.push(Node {
            id: "n0".into(),
            op: Some("Conv".into()),
            op_confidence: 0.9,
            bbox: BBox::new(10.0, 10.0, 90.0, 60.0),
            confidence: 0.9,
            weights: vec![],
            title_box: Some(BBox::new(10.0, 10.0, 90.0, 22.0)),
            quad: None,
            truncated: None,
        });
        g.tensors.push(Tensor {
            id: "t0".into(),
            text: "1×3".into(),
            shape: None,
            bbox: BBox::new(100.0, 80.0, 140.0, 92.0),
            confidence: 0.2,
            quad: None,
            name: None,
        });
        let out = draw(&img, &g);
        // Boxes 12 px tall: glyph pixels of 1 px, text from (11, 11) on paper from (10, 10); "Conv" is 32 px wide.
        let region = |x0: u32, y0: u32, w: u32, h: u32, c: Rgb<u8>| {
            (x0..x0 + w)
                .flat_map(|x| (y0..y0 + h).map(move |y| (x, y)))
                .filter(|&(x, y)| *out.get_pixel(x, y) == c)
                .count()
        };
        assert!(region(11, 11, 32, 8, INK) > 20);
        assert!(region(11, 11, 32, 8, PAPER) > 100);
        assert_eq!(region(11, 11, 32, 8, DOUBTFUL_PAPER), 0);
        // "1×3 20%" on pale red.
        assert_eq!(label("1×3", 0.2).0, "1×3 20%");
        assert!(region(101, 81, 56, 8, DOUBTFUL_PAPER) > 100);
        assert!(region(101, 81, 56, 8, INK) > 20);
        // Nothing drawn where no element is.
        assert_eq!(region(150, 10, 40, 40, INK), 0);
    }

    #[test]
    fn text_off_the_image_is_clipped() {
        let mut img = RgbImage::new(10, 10);
        text(&mut img, -20, 5, "Conv", 2, PAPER);
        text(&mut img, 8, 8, "Relu", 3, DOUBTFUL_PAPER);
        text(&mut img, i64::MAX / 4, 0, "", 1, PAPER);
        // The paper's margin, one glyph pixel (3 px) above and left of the text.
        assert_eq!(*img.get_pixel(6, 6), DOUBTFUL_PAPER);
    }
}
