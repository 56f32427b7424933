//! Runs the built `netron-ocr` binary on fixtures and checks exit statuses and output.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_netron-ocr"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn graph(name: &str) -> String {
    root()
        .join("tests/fixtures/graphs")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch file under Cargo's per-test-target temporary directory.
fn scratch(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{}-{name}", std::process::id()))
}

// ---- validate ----

#[test]
fn validate_accepts_the_valid_fixtures() {
    let o = run(&["validate", &graph("example.json")]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o)
            .ends_with("example.json: valid (3 nodes, 1 input, 1 output, 3 tensors, 4 edges)\n"),
        "{}",
        stdout(&o)
    );

    let files = ["example.json", "example-truth.json", "minimal.json"].map(graph);
    let o = bin().arg("validate").args(&files).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(
        stdout(&o)
            .lines()
            .filter(|l| l.contains(": valid ("))
            .count(),
        3
    );
    assert_eq!(stderr(&o), "");
}

#[test]
fn validate_reads_standard_input() {
    let text = std::fs::read(graph("minimal.json")).unwrap();
    let mut child = bin()
        .args(["validate", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "-: valid (1 node, 1 input, 1 output, 1 tensor, 2 edges)\n"
    );
}

#[test]
fn validate_reports_each_kind_of_invalid_file() {
    // (fixture, lines the report must contain)
    let cases: [(&str, &[&str]); 9] = [
        ("not-json.json", &["not valid JSON"]),
        (
            "wrong-format.json",
            &["not a netron-ocr graph", "onnx.graph"],
        ),
        (
            "version-2.json",
            &["graph JSON version 2 is not supported", "version 1"],
        ),
        (
            "missing-confidence.json",
            &["schema: /nodes/0: ", "confidence"],
        ),
        ("box-three-numbers.json", &["schema: /nodes/0/box: "]),
        (
            "confidence-above-one.json",
            &[
                "schema: /edges/1/confidence: ",
                "check: /edges/1/confidence: confidence 1.5 is outside [0, 1]",
            ],
        ),
        (
            "dangling-edge.json",
            &["check: /edges/1/to: id \"o9\" does not exist"],
        ),
        (
            "edge-from-output.json",
            &["check: /edges/2/from: id \"o0\" is an output, expected a node or input"],
        ),
        ("unordered-box.json", &["check: /tensors/0/box: box"]),
    ];
    for (name, wanted) in cases {
        let path = graph(&format!("invalid/{name}"));
        let o = run(&["validate", &path]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {out}");
        assert!(
            out.starts_with(&format!("{path}: invalid\n")),
            "{name}: {out}"
        );
        for w in wanted {
            assert!(out.contains(w), "{name}: no {w:?} in\n{out}");
        }
        // Problems are indented under the file line.
        assert!(out.lines().skip(1).all(|l| l.starts_with("  ")), "{out}");
    }
}

#[test]
fn validate_rejects_every_invalid_fixture() {
    let dir = root().join("tests/fixtures/graphs/invalid");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    let o = bin().arg("validate").args(&files).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let verdicts: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(verdicts.len(), files.len(), "{out}");
    assert!(verdicts.iter().all(|l| l.ends_with(": invalid")), "{out}");
}

#[test]
fn validate_exit_statuses_combine() {
    let o = run(&[
        "validate",
        &graph("example.json"),
        &graph("invalid/dangling-edge.json"),
    ]);
    assert_eq!(o.status.code(), Some(1));

    let missing = graph("does-not-exist.json");
    let o = run(&["validate", &missing]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot read") && err.contains("does-not-exist.json"),
        "{err}"
    );

    let o = run(&[
        "validate",
        &graph("invalid/dangling-edge.json"),
        &missing,
        &graph("example.json"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("example.json: valid"));
}

#[test]
fn usage_errors_exit_with_2() {
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["validate"]).status.code(), Some(2));
    assert_eq!(run(&["quality"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    let both = run(&[
        "eval",
        "--images",
        ".",
        "--truth",
        ".",
        "--title-pad-per-height",
        "0.5",
        "--no-title-pad-cap",
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        stderr(&both).contains("cannot be used with"),
        "{}",
        stderr(&both)
    );
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    for sub in ["validate", "quality"] {
        assert!(stdout(&help).contains(sub), "{}", stdout(&help));
    }
}

// ---- quality ----

/// A clean Netron screenshot rendered by the data generator.
fn screenshot() -> String {
    root()
        .join("tests/fixtures/scenes/000000.shot.png")
        .to_string_lossy()
        .into_owned()
}

/// A flat grey frame: nothing to read, so the gate must reject it.
fn blank_png(tag: &str) -> String {
    let path = scratch(&format!("blank-{tag}.png"));
    image::RgbImage::from_pixel(640, 480, image::Rgb([128, 128, 128]))
        .save(&path)
        .unwrap();
    path.to_string_lossy().into_owned()
}

/// Parses every JSON value printed on stdout (one per image, compact or pretty).
fn reports(o: &Output) -> Vec<Value> {
    serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn quality_accepts_a_clean_screenshot() {
    let shot = screenshot();
    let o = run(&["quality", &shot]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1);
    let r = &reports(&o)[0];
    assert_eq!(r["path"], shot.as_str());
    assert_eq!(r["accept"], true);
    assert!(r["score"].as_f64().unwrap() > 0.0);
    assert_eq!(r["stability"], Value::Null);
}

#[test]
fn quality_rejects_a_blank_frame_with_3() {
    let blank = blank_png("rejects");
    let o = run(&["quality", "--pretty", &blank]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).lines().count() > 3, "--pretty indents");
    let r = &reports(&o)[0];
    assert_eq!(r["accept"], false);
    assert!(!r["hints"].as_array().unwrap().is_empty(), "{r}");

    // One rejected frame among accepted ones makes the whole run 3; every image is still reported.
    let o = run(&["quality", &screenshot(), &blank]);
    assert_eq!(o.status.code(), Some(3));
    let rs = reports(&o);
    assert_eq!(rs.len(), 2);
    assert_eq!(
        (&rs[0]["accept"], &rs[1]["accept"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
}

#[test]
fn quality_stream_reports_stability_from_the_second_frame() {
    let shot = screenshot();
    let o = run(&["quality", "--stream", &shot, &shot]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rs = reports(&o);
    assert_eq!(rs[0]["stability"], Value::Null);
    // The same frame twice is perfectly stable.
    assert_eq!(rs[1]["stability"].as_f64(), Some(1.0));
}

#[test]
fn quality_undecodable_input_exits_2_with_one_line() {
    let bogus = scratch("not-an-image.png");
    std::fs::write(&bogus, b"this is not a PNG").unwrap();
    let bogus = bogus.to_string_lossy().into_owned();
    let o = run(&["quality", &bogus]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot decode") && err.contains("not-an-image.png"),
        "{err}"
    );

    let missing = scratch("missing.jpg").to_string_lossy().into_owned();
    let o = run(&["quality", &missing]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1);

    // Decode errors outrank rejections; the decodable image is still reported.
    let o = run(&["quality", &blank_png("undecodable"), &bogus]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(reports(&o).len(), 1);
}

// ---- eval ----

#[test]
fn eval_writes_the_report_and_each_predicted_graph() {
    let scenes = root().join("tests/fixtures/scenes");
    let scenes = scenes.to_string_lossy();
    let (report, graphs) = (scratch("eval.json"), scratch("eval-graphs"));
    let o = run(&[
        "eval",
        "--images",
        &scenes,
        "--truth",
        &scenes,
        "--limit",
        "1",
        "--json",
        &report.to_string_lossy(),
        "--graphs",
        &graphs.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let images = report["images"].as_array().expect("images");
    assert_eq!(images.len(), 1);
    // The no-zoom-hint rows count the views whose text is at least 9 px high.
    for kind in ["photo", "shot"] {
        let all = report["summary"][kind]["images"].as_u64().unwrap_or(0);
        let small = (images.iter())
            .filter(|i| i["kind"] == kind && i["text_height"].as_f64().is_some_and(|h| h < 9.0))
            .count() as u64;
        let sharp = &report["summary"][format!("{kind}_no_zoom_hint")];
        assert_eq!(sharp["images"].as_u64(), Some(all - small), "{kind}");
    }
    let name = Path::new(images[0]["image"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(graphs.join(format!("{name}.pred.json")))
        .expect("the predicted graph");
    let graph: Value = serde_json::from_str(&text).unwrap();
    assert!(
        !graph["nodes"].as_array().expect("nodes").is_empty(),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&graphs);
}

#[test]
fn scan_writes_an_overlay_the_size_of_the_image() {
    let out = scratch("overlay.png");
    let o = run(&["scan", &screenshot(), "--overlay", &out.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let source = image::open(screenshot()).unwrap().to_rgb8();
    let drawn = image::open(&out).expect("the overlay PNG").to_rgb8();
    assert_eq!(drawn.dimensions(), source.dimensions());
    let changed = source
        .pixels()
        .zip(drawn.pixels())
        .filter(|(a, b)| a != b)
        .count();
    // Boxes, edges and the texts read: more than the canvas outline alone, whose 3-px lines change at most
    // 6 (w + h) pixels.
    let (w, h) = source.dimensions();
    assert!(changed > 6 * (w + h) as usize, "{changed} pixels changed");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn scan_names_the_uncertain_readings_on_stderr() {
    // The dense fixture photo's labels are about 7 px high: some read under 0.5 calibrated confidence.
    let photo = root().join("tests/fixtures/dense/000104.photo.jpg");
    let o = run(&["scan", &photo.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.contains("unsure of"))
        .unwrap_or_else(|| panic!("no 'unsure of' note: {err}"));
    assert!(line.contains("shape") && line.contains("(t"), "{line}");
    // Every id it names is in the printed graph.
    let graph: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ids: Vec<&str> = ["nodes", "tensors", "inputs", "outputs"]
        .iter()
        .flat_map(|k| graph[k].as_array().unwrap())
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let named = line.split(['(', ')', ',', ' ']).filter(|w| {
        w.len() > 1
            && w.starts_with(['n', 't', 'i', 'o'])
            && w[1..].chars().all(|c| c.is_ascii_digit())
    });
    for id in named {
        assert!(ids.contains(&id), "{id} not in the graph");
    }
}
