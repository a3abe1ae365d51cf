//! SARIF 2.1.0 output, as GitHub code scanning accepts it.
//!
//! Each result carries a `partialFingerprints` entry that survives edits elsewhere in the file (it
//! hashes the rule and the flagged line's text, not its number), so a code-scanning service keeps
//! one alert per problem across runs. The tool's and each rule's documentation links are formed
//! from the workspace's `repository` (Cargo.toml) and paths that exist in this repository: the
//! rules file's guide and the source file of each rule, which holds its documentation.

use std::collections::HashMap;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

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

/// The key of warden's fingerprint; the version changes whenever its computation does.
pub const FINGERPRINT: &str = "wardenLineHash/v1";

/// Where the tool is documented: the rules file's guide, in the repository.
pub const TOOL_DOC: &str = "rules/README.md";

/// The repository's address, from the workspace's `[workspace.package] repository`.
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The address of `path` (relative to the repository's root) on the repository's main branch.
pub fn repository_uri(path: &str) -> String {
    format!("{}/blob/main/{path}", REPOSITORY.trim_end_matches('/'))
}

/// The repository path of the file that holds `rule`'s documentation (its `DOC`).
pub fn rule_doc_path(rule: Rule) -> String {
    format!(
        "policy/src/rules/{}/{}.rs",
        rule.family(),
        rule.name().replace('-', "_")
    )
}

/// A line as the fingerprint sees it: runs of white space are one space, none at the ends (a
/// re-indented line keeps its fingerprint).
fn normalized(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The fingerprint of the `occurrence`-th finding (from 0, in file order) of `rule` on a line whose
/// normalised text is `line`: two identical lines in a file get different fingerprints.
fn fingerprint(rule: Rule, line: &str, occurrence: usize) -> String {
    let mut hasher = Sha256::new();
    for part in [rule.id(), line, &occurrence.to_string()] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    crate::settings::hex(&hasher.finalize()[..16])
}

fn rule_descriptor(rule: Rule) -> Value {
    json!({
        "id": rule.id(),
        "helpUri": repository_uri(&rule_doc_path(rule)),
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
        let lines: Vec<&str> = report
            .decoded
            .as_ref()
            .map(|decoded| decoded.text.split('\n').collect())
            .unwrap_or_default();
        let mut seen: HashMap<(Rule, String), usize> = HashMap::new();
        for finding in &report.findings {
            let index = Rule::ALL
                .iter()
                .position(|r| *r == finding.rule)
                .unwrap_or_default();
            let span = finding.span;
            let line = normalized(lines.get(span.line.wrapping_sub(1)).copied().unwrap_or(""));
            let occurrence = seen.entry((finding.rule, line.clone())).or_default();
            let fingerprint = fingerprint(finding.rule, &line, *occurrence);
            *occurrence += 1;
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
                "partialFingerprints": {FINGERPRINT: fingerprint},
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
                "informationUri": repository_uri(TOOL_DOC),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}
