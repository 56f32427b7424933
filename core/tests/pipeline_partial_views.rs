//! Partial views: the app tells users to scan a large graph in parts, so cards, rows and labels cut by the
//! image border are the common case, not the odd one. Such views must scan to a valid graph whose boxes lie
//! in the image, never fail as a whole because one box near the border cannot be cropped.

mod fixture_support;

use image::RgbImage;
use netron_ocr_core::graph::{BBox, GraphJson};
use netron_ocr_core::scanner::Scanner;

/// Windows as fractions `[x0, y0, x1, y1]` of the image: a left part, a lower part, and a centre that cuts
/// through cards on all four sides.
const WINDOWS: [[f32; 4]; 3] = [
    [0.0, 0.0, 0.55, 1.0],
    [0.0, 0.55, 1.0, 1.0],
    [0.23, 0.27, 0.71, 0.69],
];

fn cut(image: &RgbImage, w: &[f32; 4]) -> RgbImage {
    let (iw, ih) = (image.width() as f32, image.height() as f32);
    let (x0, y0) = ((w[0] * iw) as u32, (w[1] * ih) as u32);
    let (x1, y1) = ((w[2] * iw) as u32, (w[3] * ih) as u32);
    image::imageops::crop_imm(image, x0, y0, x1 - x0, y1 - y0).to_image()
}

fn boxes(g: &GraphJson) -> Vec<(String, BBox)> {
    let nodes = g.nodes.iter().map(|n| (n.id.clone(), n.bbox));
    let inputs = g.inputs.iter().map(|p| (p.id.clone(), p.bbox));
    let outputs = g.outputs.iter().map(|p| (p.id.clone(), p.bbox));
    let tensors = g.tensors.iter().map(|t| (t.id.clone(), t.bbox));
    nodes.chain(inputs).chain(outputs).chain(tensors).collect()
}

#[test]
fn views_cut_through_the_graph_scan_to_valid_graphs() {
    let scanner = Scanner::new().expect("scanner");
    let mut scenes = fixture_support::scenes();
    scenes.truncate(2);
    scenes.extend(fixture_support::dense_scenes());
    let mut found = 0;
    for scene in &scenes {
        let image = scene.image();
        for w in &WINDOWS {
            let view = cut(&image, w);
            let what = format!("{} cut to {w:?}", scene.name);
            let r = scanner
                .scan_rgb(&view)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let g = &r.graph;
            assert!(g.check().is_empty(), "{what}: {:?}", g.check());
            assert_eq!(
                (g.image.width, g.image.height),
                (view.width(), view.height())
            );
            let (vw, vh) = (view.width() as f32 + 0.5, view.height() as f32 + 0.5);
            for (id, b) in boxes(g) {
                assert!(
                    b.x0 >= -0.5 && b.y0 >= -0.5 && b.x1 <= vw && b.y1 <= vh,
                    "{what}: {id} {b:?} leaves the image"
                );
            }
            found += g.nodes.len();
        }
    }
    // Every window shows part of a graph: an empty result everywhere would mean the views were never read.
    assert!(found > 0, "no node found in any partial view");
}
