//! JSON output: one object per program, the contract in docs/architecture.md.

use serde::Serialize;

use crate::finding::{Decision, Finding};
use crate::settings::Policy;
use crate::Report;

/// The policy a report was made under.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyRef<'a> {
    pub name: &'a str,
    pub sha256: &'a str,
}

/// `check --format json` for one program.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRecord<'a> {
    pub path: &'a str,
    pub decision: Decision,
    pub policy: PolicyRef<'a>,
    pub findings: &'a [Finding],
}

impl<'a> CheckRecord<'a> {
    pub fn new(path: &'a str, report: &'a Report, policy: &'a Policy) -> Self {
        Self {
            path,
            decision: report.decision,
            policy: PolicyRef {
                name: &policy.name,
                sha256: &policy.sha256,
            },
            findings: &report.findings,
        }
    }
}

/// One line of JSON.
pub fn render(path: &str, report: &Report, policy: &Policy) -> String {
    serde_json::to_string(&CheckRecord::new(path, report, policy)).unwrap_or_else(|err| {
        format!(
            "{{\"path\":{},\"error\":\"cannot serialise: {err}\"}}",
            serde_json::Value::from(path)
        )
    })
}
