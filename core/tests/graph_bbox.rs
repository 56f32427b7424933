//! Box and point geometry and their JSON form.

use netron_ocr_core::graph::{BBox, Point};

#[test]
fn size_and_area() {
    let b = BBox::new(10.0, 20.0, 40.0, 30.0);
    assert_eq!((b.width(), b.height(), b.area()), (30.0, 10.0, 300.0));
    assert_eq!(b.center(), Point::new(25.0, 25.0));
    let unordered = BBox::new(40.0, 20.0, 10.0, 30.0);
    assert_eq!(unordered.width(), -30.0);
    assert_eq!(unordered.area(), 0.0);
    assert!(!unordered.is_ordered());
    assert!(b.is_ordered() && b.is_finite());
    assert!(!BBox::new(0.0, 0.0, f32::INFINITY, 1.0).is_finite());
    assert!(!BBox::new(f32::NAN, 0.0, 1.0, 1.0).is_ordered());
}

#[test]
fn intersection_union_and_iou() {
    let a = BBox::new(0.0, 0.0, 2.0, 2.0);
    let b = BBox::new(1.0, 0.0, 3.0, 2.0);
    assert_eq!(a.intersection(&b), Some(BBox::new(1.0, 0.0, 2.0, 2.0)));
    assert_eq!(a.union(&b), BBox::new(0.0, 0.0, 3.0, 2.0));
    // Overlap 2, union 4 + 4 - 2 = 6.
    assert!((a.iou(&b) - 1.0 / 3.0).abs() < 1e-6);
    assert_eq!(a.iou(&b), b.iou(&a));
    assert_eq!(a.iou(&a), 1.0);

    let touching = BBox::new(2.0, 0.0, 4.0, 2.0);
    assert_eq!(
        a.intersection(&touching),
        Some(BBox::new(2.0, 0.0, 2.0, 2.0))
    );
    assert_eq!(a.iou(&touching), 0.0);
    let apart = BBox::new(5.0, 5.0, 6.0, 6.0);
    assert_eq!(a.intersection(&apart), None);
    assert_eq!(a.iou(&apart), 0.0);

    let point = BBox::new(1.0, 1.0, 1.0, 1.0);
    assert_eq!(point.iou(&point), 0.0);
}

#[test]
fn containment() {
    let a = BBox::new(0.0, 0.0, 10.0, 5.0);
    assert!(a.contains(Point::new(0.0, 0.0)));
    assert!(a.contains(Point::new(10.0, 5.0)));
    assert!(a.contains(Point::new(3.0, 4.0)));
    assert!(!a.contains(Point::new(10.5, 1.0)));
    assert!(!a.contains(Point::new(1.0, -0.1)));
    assert!(a.contains_box(&BBox::new(1.0, 1.0, 10.0, 5.0)));
    assert!(a.contains_box(&a));
    assert!(!a.contains_box(&BBox::new(1.0, 1.0, 11.0, 2.0)));
}

#[test]
fn boxes_and_points_are_json_arrays() {
    let b = BBox::new(1.5, 2.0, 3.25, 4.0);
    let json = serde_json::to_string(&b).unwrap();
    assert_eq!(json, "[1.5,2.0,3.25,4.0]");
    assert_eq!(serde_json::from_str::<BBox>(&json).unwrap(), b);
    assert_eq!(
        serde_json::from_str::<BBox>("[1, 2, 3, 4]").unwrap(),
        BBox::new(1.0, 2.0, 3.0, 4.0)
    );
    assert!(serde_json::from_str::<BBox>("[1, 2, 3]").is_err());
    assert!(serde_json::from_str::<BBox>("[1, 2, 3, 4, 5]").is_err());
    assert!(serde_json::from_str::<BBox>(r#"{"x0": 1, "y0": 2, "x1": 3, "y1": 4}"#).is_err());

    let p = Point::new(0.5, -7.0);
    assert_eq!(serde_json::to_string(&p).unwrap(), "[0.5,-7.0]");
    assert_eq!(serde_json::from_str::<Point>("[0.5,-7]").unwrap(), p);
    assert!(serde_json::from_str::<Point>("[0.5]").is_err());
}
