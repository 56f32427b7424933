//! `netron-ocr validate <graph.json>...`: is each file valid graph JSON v1?
//!
//! Three layers, all reported: the reader (`format`, major `version`, then the v1 shape), the JSON Schema
//! `schema/graph-v1.schema.json`, and `GraphJson::check` (ids, references, boxes, confidences). A file is valid
//! when all three pass.

use std::io::{Read, Write};
use std::path::PathBuf;

use netron_ocr_core::graph::{GraphError, GraphJson, JSON_SCHEMA_V1};
use serde_json::Value;

use crate::{EXIT_INVALID, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
pub struct Args {
    /// Graph JSON files to check (`-` reads standard input).
    #[arg(required = true, value_name = "GRAPH.json")]
    files: Vec<PathBuf>,
}

/// What one file turned out to be.
enum Verdict {
    Valid(String),
    Invalid(Vec<String>),
    Unreadable(String),
}

pub fn run(args: &Args) -> u8 {
    let schema: Value = match serde_json::from_str(JSON_SCHEMA_V1) {
        Ok(v) => v,
        Err(e) => return internal(&format!("the built-in JSON Schema is not JSON: {e}")),
    };
    let validator = match jsonschema::validator_for(&schema) {
        Ok(v) => v,
        Err(e) => return internal(&format!("the built-in JSON Schema does not compile: {e}")),
    };

    let mut status = EXIT_OK;
    let mut out = std::io::stdout().lock();
    for path in &args.files {
        let shown = path.display();
        let verdict = match read(path) {
            Ok(text) => judge(&text, &validator),
            Err(e) => Verdict::Unreadable(e.to_string()),
        };
        let written = match verdict {
            Verdict::Valid(summary) => writeln!(out, "{shown}: valid ({summary})"),
            Verdict::Invalid(problems) => {
                status = status.max(EXIT_INVALID);
                writeln!(out, "{shown}: invalid")
                    .and_then(|()| problems.iter().try_for_each(|p| writeln!(out, "  {p}")))
            }
            Verdict::Unreadable(e) => {
                status = EXIT_USAGE;
                eprintln!("netron-ocr validate: cannot read {shown}: {e}");
                Ok(())
            }
        };
        if let Err(e) = written {
            eprintln!("netron-ocr validate: cannot write the report: {e}");
            return EXIT_USAGE;
        }
    }
    status
}

fn read(path: &PathBuf) -> std::io::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

fn judge(text: &str, validator: &jsonschema::Validator) -> Verdict {
    let parsed = GraphJson::from_json(text);
    // Syntax, `format` and version errors make the schema meaningless: report only them.
    let shape_error = match parsed {
        Err(
            e @ (GraphError::Syntax(_)
            | GraphError::NotAGraph(_)
            | GraphError::UnsupportedVersion { .. }),
        ) => return Verdict::Invalid(vec![e.to_string()]),
        Err(GraphError::Schema(e) | GraphError::Write(e)) => Err(e),
        Ok(graph) => Ok(graph),
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Verdict::Invalid(vec![format!("not valid JSON: {e}")]),
    };
    let mut problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("schema: {}: {e}", pointer(e.instance_path().as_str())))
        .collect();
    match shape_error {
        Err(e) => {
            // Reported by the schema already, except for numbers beyond f32 (coordinates) or u64 (dims).
            if problems.is_empty() {
                problems.push(format!("reader: {e}"));
            }
        }
        Ok(graph) => {
            problems.extend(graph.check().iter().map(|issue| format!("check: {issue}")));
            if problems.is_empty() {
                return Verdict::Valid(summary(&graph));
            }
        }
    }
    Verdict::Invalid(problems)
}

fn pointer(path: &str) -> &str {
    if path.is_empty() {
        "(top level)"
    } else {
        path
    }
}

fn summary(g: &GraphJson) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    [
        count(g.nodes.len(), "node"),
        count(g.inputs.len(), "input"),
        count(g.outputs.len(), "output"),
        count(g.tensors.len(), "tensor"),
        count(g.edges.len(), "edge"),
    ]
    .join(", ")
}

fn internal(message: &str) -> u8 {
    eprintln!("netron-ocr validate: {message}");
    EXIT_USAGE
}
