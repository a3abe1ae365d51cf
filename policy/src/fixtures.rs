//! Annotated rule fixtures: `# expect: RULE[, RULE…]` marks the findings a line must produce.
//!
//! Used by `warden rules test` and by warden's own rule tests. Annotations are read only here; the
//! checker never honours comments.

use std::collections::{BTreeMap, BTreeSet};

use crate::Policy;

/// Expected rule ids by 1-based line.
pub fn expectations(text: &str) -> BTreeMap<usize, BTreeSet<String>> {
    let mut expected = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        if let Some((_, rest)) = line.rsplit_once("# expect:") {
            let ids: BTreeSet<String> = rest
                .split([',', ' '])
                .map(str::trim)
                .filter(|id| !id.is_empty() && *id != "none")
                .map(str::to_ascii_uppercase)
                .collect();
            expected.insert(index + 1, ids);
        }
    }
    expected
}

/// Checks one fixture; returns the mismatches, empty when it passes.
pub fn run_fixture(bytes: &[u8], policy: &Policy) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let expected = expectations(&text);
    let report = crate::check_on_worker(bytes, policy);
    let mut found: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for finding in &report.findings {
        found
            .entry(finding.span.line)
            .or_default()
            .insert(finding.rule.id().to_owned());
    }
    let mut problems = Vec::new();
    for (line, ids) in &expected {
        let got = found.get(line).cloned().unwrap_or_default();
        for id in ids.difference(&got) {
            problems.push(format!("line {line}: expected {id}, not reported"));
        }
    }
    for (line, ids) in &found {
        let want = expected.get(line).cloned().unwrap_or_default();
        for id in ids.difference(&want) {
            let message = report
                .findings
                .iter()
                .find(|f| f.span.line == *line && f.rule.id() == id)
                .map_or(String::new(), |f| f.message.clone());
            problems.push(format!("line {line}: unexpected {id}: {message}"));
        }
    }
    problems
}
