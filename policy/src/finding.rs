//! Findings and decisions: what the checker says about a program.

use serde::{Deserialize, Serialize};

use crate::rules::Rule;

/// What a finding does to the program's fate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Reported; the program still runs.
    Warn,
    /// The program runs only once a person approves it.
    Review,
    /// The program does not run.
    Deny,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Warn => "warn",
            Action::Review => "review",
            Action::Deny => "deny",
        }
    }
}

/// How dangerous the construct is, independent of the action the policy takes on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// The program's fate: the strictest action among its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Review,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Review => "review",
            Decision::Deny => "deny",
        }
    }

    /// The decision for a set of findings.
    pub fn of(findings: &[Finding]) -> Self {
        findings
            .iter()
            .fold(Decision::Allow, |decision, finding| match finding.action {
                Action::Deny => Decision::Deny,
                Action::Review => decision.max(Decision::Review),
                Action::Warn => decision,
            })
    }
}

/// A located region of the source: 1-based lines, 1-based columns counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Span {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// Byte offsets into the decoded source (not part of the JSON contract).
    #[serde(skip, default)]
    pub start_byte: usize,
    #[serde(skip, default)]
    pub end_byte: usize,
}

/// One thing the checker found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: Rule,
    pub name: &'static str,
    pub severity: Severity,
    pub action: Action,
    pub message: String,
    pub hint: String,
    pub span: Span,
}

/// A finding read back from a record (a worker's reply): the rule id decides the name.
#[derive(Deserialize)]
struct FindingRecord {
    rule: Rule,
    severity: Severity,
    action: Action,
    message: String,
    hint: String,
    span: Span,
}

impl<'de> Deserialize<'de> for Finding {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        FindingRecord::deserialize(deserializer).map(Finding::from)
    }
}

impl From<FindingRecord> for Finding {
    fn from(record: FindingRecord) -> Self {
        Finding {
            rule: record.rule,
            name: record.rule.name(),
            severity: record.severity,
            action: record.action,
            message: record.message,
            hint: record.hint,
            span: record.span,
        }
    }
}
