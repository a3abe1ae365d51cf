//! A served program's static check, made once per request and carried with the program to the
//! process that runs it.
//!
//! The server judges a run once, before it picks a jail (a program the static layer stops never
//! takes a pooled jail). The worker that then runs it — pooled, forked or cold — uses that report
//! instead of judging the program a second time. A report is bound to the program's bytes and the
//! policy's digest it was made for: the pipeline uses it only when both match
//! ([`Checked::report_for`]) and otherwise checks again, so a report can never speak for another
//! program or another policy.
//!
//! Owns: the binding of a report to its program and policy, and whether a verdict lets a program
//! reach a jail. Does not own: the check itself (`warden_policy::check`), the gate
//! (`pipeline::execute`).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use warden_policy::{Decision, Policy, Report};

/// A static check's report and what it was made for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checked {
    /// SHA-256 of the policy's rules text (`Policy::sha256`).
    pub policy_sha256: String,
    /// SHA-256 of the program's bytes as sent.
    pub program_sha256: String,
    pub report: Report,
}

impl Checked {
    /// Judges `source` against `policy` (on a thread with a deep stack: see
    /// [`crate::pipeline::check`]).
    pub fn of(policy: &Policy, source: &[u8]) -> Self {
        Self {
            policy_sha256: policy.sha256.clone(),
            program_sha256: digest(source),
            report: crate::pipeline::check(policy, source),
        }
    }

    /// Whether the static layer lets the program reach a jail: decoded, and allowed, or sent to
    /// review and `approved`.
    pub fn lets_run(&self, approved: bool) -> bool {
        self.report.decoded.is_some()
            && match self.report.decision {
                Decision::Allow => true,
                Decision::Review => approved,
                Decision::Deny => false,
            }
    }

    /// The report, when it was made for exactly this program and this policy.
    pub fn report_for(&self, policy: &Policy, source: &[u8]) -> Option<Report> {
        (self.policy_sha256 == policy.sha256 && self.program_sha256 == digest(source))
            .then(|| self.report.clone())
    }
}

fn digest(source: &[u8]) -> String {
    warden_policy::settings::hex(&Sha256::digest(source))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn default_policy() -> Policy {
        Policy::from_toml(warden_policy::settings::DEFAULT_RULES, None).unwrap()
    }

    #[test]
    fn a_report_speaks_only_for_its_own_program_and_policy() {
        let policy = default_policy();
        let checked = Checked::of(&policy, b"import socket\n");
        assert!(!checked.lets_run(true));
        assert!(checked.report_for(&policy, b"import socket\n").is_some());
        // Another program (one byte more) or another policy: no report, the pipeline checks.
        assert!(checked.report_for(&policy, b"import socket\n\n").is_none());
        let other = Policy::from_toml(
            &format!("{}\n# edited\n", warden_policy::settings::DEFAULT_RULES),
            None,
        )
        .unwrap();
        assert!(checked.report_for(&other, b"import socket\n").is_none());
    }

    #[test]
    fn a_report_crosses_the_wire_unchanged() {
        let policy = default_policy();
        let checked = Checked::of(&policy, b"import os\nos.system('id')\nprint(1)\r\n");
        let back: Checked =
            serde_json::from_str(&serde_json::to_string(&checked).unwrap()).unwrap();
        assert_eq!(back.report.decision, checked.report.decision);
        // As the record shows them (byte offsets, for the text renderers only, do not travel).
        assert_eq!(
            serde_json::to_value(&back.report.findings).unwrap(),
            serde_json::to_value(&checked.report.findings).unwrap()
        );
        assert_eq!(back.report.decoded, checked.report.decoded);
        assert!(!back.report.findings.is_empty());
    }

    #[test]
    fn undecodable_or_unapproved_programs_do_not_reach_a_jail() {
        let policy = default_policy();
        assert!(Checked::of(&policy, b"print(1)\n").lets_run(false));
        assert!(!Checked::of(&policy, b"print(\xff)\n").lets_run(true));
    }

    /// The pipeline gates on the carried report, not on a second check: a report that says
    /// "deny" for this very program is obeyed (nothing starts).
    #[test]
    fn the_pipeline_gates_on_the_report_it_was_given() {
        let policy = default_policy();
        let source = b"print(1)\n".to_vec();
        let mut checked = Checked::of(&policy, &source);
        assert_eq!(checked.report.decision, Decision::Allow);
        checked.report.decision = Decision::Deny;
        let request = crate::pipeline::RunRequest {
            source,
            checked: Some(checked),
            ..Default::default()
        };
        let record = crate::pipeline::execute(&policy, &request).unwrap();
        assert_eq!(record.status.as_str(), "denied");
        assert!(record.layers.is_none(), "no jail was started");
    }

    /// A report made for another program is ignored: the program is judged on its own.
    #[test]
    fn a_report_for_another_program_is_not_used() {
        let policy = default_policy();
        let allowed = Checked::of(&policy, b"print(1)\n");
        let request = crate::pipeline::RunRequest {
            source: b"import socket\n".to_vec(),
            checked: Some(allowed),
            ..Default::default()
        };
        let record = crate::pipeline::execute(&policy, &request).unwrap();
        assert_eq!(record.status.as_str(), "denied");
        assert!(record
            .check
            .findings
            .iter()
            .any(|f| f.rule.id() == "IMP101"));
    }
}
