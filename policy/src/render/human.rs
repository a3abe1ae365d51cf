//! Human output in the style of rustc and ruff: the rule, the message, a source snippet with carets and
//! the hint.

use std::fmt::Write;

use crate::finding::{Action, Finding};
use crate::Report;

/// Renders one program's report. `source` is the decoded text, when there is one.
pub fn render(path: &str, report: &Report, color: bool) -> String {
    let source = report.decoded.as_ref().map(|d| d.text.as_str());
    let mut out = String::new();
    for finding in &report.findings {
        finding_block(&mut out, path, source, finding, color);
    }
    let count = report.findings.len();
    let plural = if count == 1 { "" } else { "s" };
    let _ = writeln!(
        out,
        "{path}: {} ({count} finding{plural})",
        report.decision.as_str()
    );
    out
}

fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

fn finding_block(
    out: &mut String,
    path: &str,
    source: Option<&str>,
    finding: &Finding,
    color: bool,
) {
    let (level, code) = match finding.action {
        Action::Deny => ("deny", "1;31"),
        Action::Review => ("review", "1;35"),
        Action::Warn => ("warning", "1;33"),
    };
    let header = format!("{level}[{}]", finding.rule.id());
    let _ = writeln!(
        out,
        "{}: {}",
        paint(&header, code, color),
        paint(&finding.message, "1", color)
    );
    let span = finding.span;
    let gutter = span.line.to_string().len();
    let pad = " ".repeat(gutter);
    let _ = writeln!(
        out,
        "{pad}{} {path}:{}:{}",
        paint("-->", "1;34", color),
        span.line,
        span.column
    );
    if let Some(line) = source.and_then(|s| s.lines().nth(span.line.saturating_sub(1))) {
        let shown: String = line.chars().take(200).collect();
        let bar = paint("|", "1;34", color);
        let _ = writeln!(out, "{pad} {bar}");
        let _ = writeln!(
            out,
            "{} {bar} {shown}",
            paint(&span.line.to_string(), "1;34", color)
        );
        let start = span.column.saturating_sub(1).min(shown.chars().count());
        let end = if span.end_line == span.line {
            span.end_column.saturating_sub(1)
        } else {
            shown.chars().count()
        };
        let width = end.saturating_sub(start).clamp(1, 200);
        let carets = format!(
            "{}{} {}",
            " ".repeat(start),
            "^".repeat(width),
            finding.name
        );
        let _ = writeln!(out, "{pad} {bar} {}", paint(&carets, code, color));
        let _ = writeln!(out, "{pad} {bar}");
    }
    let _ = writeln!(
        out,
        "{pad} = {} {}",
        paint("hint:", "1", color),
        finding.hint
    );
    out.push('\n');
}
