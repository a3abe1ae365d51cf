//! SARIF 2.1.0 output, as GitHub code scanning accepts it.

use serde_json::{json, Value};

use crate::finding::{Action, Severity};
use crate::rules::Rule;
use crate::Report;

fn level(action: Action) -> &'static str {
    match action {
        Action::Deny => "error",
        Action::Review => "warning",
        Action::Warn => "note",
    }
}

/// GitHub's `security-severity` scale (0.0–10.0).
fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Low => "3.0",
        Severity::Medium => "5.5",
        Severity::High => "8.0",
        Severity::Critical => "9.5",
    }
}

fn first_paragraph(doc: &str) -> String {
    doc.split("## What it does")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .map(|text| text.trim().replace('\n', " "))
        .unwrap_or_default()
}

fn rule_descriptor(rule: Rule) -> Value {
    json!({
        "id": rule.id(),
        "name": rule.name(),
        "shortDescription": {"text": rule.name().replace('-', " ")},
        "fullDescription": {"text": first_paragraph(rule.doc())},
        "help": {"text": rule.doc(), "markdown": rule.doc()},
        "defaultConfiguration": {"level": level(rule.default_action())},
        "properties": {
            "tags": ["security", rule.family()],
            "security-severity": security_severity(rule.severity()),
        },
    })
}

/// One SARIF log for all programs checked.
pub fn render(reports: &[(String, Report)]) -> String {
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|rule| rule_descriptor(*rule))
        .collect();
    let mut results = Vec::new();
    for (path, report) in reports {
        for finding in &report.findings {
            let index = Rule::ALL
                .iter()
                .position(|r| *r == finding.rule)
                .unwrap_or_default();
            let span = finding.span;
            results.push(json!({
                "ruleId": finding.rule.id(),
                "ruleIndex": index,
                "level": level(finding.action),
                "message": {"text": format!("{} ({})", finding.message, finding.hint)},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": path.trim_start_matches("./")},
                        "region": {
                            "startLine": span.line,
                            "startColumn": span.column,
                            "endLine": span.end_line,
                            "endColumn": span.end_column.max(span.column + usize::from(span.end_line == span.line && span.end_column <= span.column)),
                        },
                    },
                }],
            }));
        }
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "warden",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://example.invalid/warden",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}
