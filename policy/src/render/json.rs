//! JSON output: one object per program, the contract in docs/architecture.md. The same records are
//! what `POST /v1/check` answers and what a run's record embeds.

use serde::{Deserialize, Serialize};

use crate::finding::{Decision, Finding};
use crate::settings::Policy;
use crate::Report;

/// The policy a report was made under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRef {
    pub name: String,
    pub sha256: String,
    /// The name a server registered the policy under, which a client uses to pick it (the rules
    /// file's own `name` may differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered_as: Option<String>,
}

impl PolicyRef {
    pub fn of(policy: &Policy) -> Self {
        Self {
            name: policy.name.clone(),
            sha256: policy.sha256.clone(),
            registered_as: None,
        }
    }
}

/// The verdict on one program: `check --format json` (with `path`) and `POST /v1/check` (with
/// `program_sha256`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub decision: Decision,
    pub policy: PolicyRef,
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_sha256: Option<String>,
}

impl CheckRecord {
    pub fn new(report: &Report, policy: &Policy) -> Self {
        Self {
            path: None,
            decision: report.decision,
            policy: PolicyRef::of(policy),
            findings: report.findings.clone(),
            program_sha256: None,
        }
    }

    /// The rule ids of the findings, each once, in order; with `denying_only`, only those whose
    /// action is `deny`.
    pub fn rule_ids(findings: &[Finding], denying_only: bool) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for finding in findings {
            if denying_only && finding.action != crate::finding::Action::Deny {
                continue;
            }
            let id = finding.rule.id();
            if !ids.iter().any(|known| known == id) {
                ids.push(id.to_owned());
            }
        }
        ids
    }
}

/// One line of JSON.
pub fn render(path: &str, report: &Report, policy: &Policy) -> String {
    let record = CheckRecord {
        path: Some(path.to_owned()),
        ..CheckRecord::new(report, policy)
    };
    serde_json::to_string(&record).unwrap_or_else(|err| {
        format!(
            "{{\"path\":{},\"error\":\"cannot serialise: {err}\"}}",
            serde_json::Value::from(path)
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn finding(rule: &str, action: &str) -> serde_json::Value {
        serde_json::json!({"rule": rule, "name": "ignored", "severity": "high", "action": action,
            "message": "m", "hint": "h",
            "span": {"line": 1, "column": 1, "end_line": 1, "end_column": 2}})
    }

    #[test]
    fn rule_ids_come_once_each() {
        let findings: Vec<Finding> = serde_json::from_value(serde_json::json!([
            finding("IMP101", "deny"),
            finding("REF201", "warn"),
            finding("IMP101", "deny"),
        ]))
        .unwrap();
        assert_eq!(CheckRecord::rule_ids(&findings, true), ["IMP101"]);
        assert_eq!(
            CheckRecord::rule_ids(&findings, false),
            ["IMP101", "REF201"]
        );
    }

    #[test]
    fn a_finding_read_back_takes_its_name_from_its_rule() {
        let findings: Vec<Finding> =
            serde_json::from_value(serde_json::json!([finding("ATTR301", "deny")])).unwrap();
        assert_eq!(findings[0].name, "dunder-attribute");
        assert!(
            serde_json::from_value::<Vec<Finding>>(serde_json::json!([finding("NOPE999", "deny")]))
                .is_err()
        );
    }
}
