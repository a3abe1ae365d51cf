//! The policy hand-off every worker starts with: the rules the server validated, as text (and,
//! for a pooled jail, resolved), with their digest, which the worker re-checks before it reads
//! them, and the identity index the runtime checks need.
//!
//! Owns: turning a job's policy fields into a [`Policy`] a worker may judge and run by — the same
//! steps, errors and checks for a run ([`Job`]), a session ([`SessionJob`]) and a pooled jail or a
//! template ([`PoolStart`]). Does not own: the policy itself (`warden_policy`), which policies a
//! caller may use (the server).

use std::path::Path;

use warden_policy::Policy;

use crate::wire::{Job, PoolStart, SessionJob};

/// A job's policy, as the server handed it over.
#[derive(Debug, Clone, Copy)]
pub struct Handoff<'a> {
    /// The rules-file text the server validated.
    pub text: &'a str,
    /// The same rules resolved by the server (`Policy::from_toml_with_json`), read instead of the
    /// text when present.
    pub resolved: Option<&'a str>,
    /// Where relative paths in the rules file resolve.
    pub base_dir: Option<&'a Path>,
    /// SHA-256 of `text`.
    pub sha256: &'a str,
}

impl Handoff<'_> {
    /// The policy, checked against its digest, with its identity index attached.
    pub fn policy(&self) -> anyhow::Result<Policy> {
        let mut policy = match self.resolved {
            Some(json) => Policy::from_resolved_json(json, self.base_dir),
            None => Policy::from_toml(self.text, self.base_dir),
        }
        .map_err(|err| anyhow::anyhow!("invalid policy: {err}"))?;
        // `Policy::sha256` is the digest of the text it was parsed from.
        anyhow::ensure!(
            policy.sha256 == self.sha256,
            "the policy text does not match its digest"
        );
        warden_gateway::runtime_check::attach_index(&mut policy)?;
        Ok(policy)
    }
}

impl<'a> From<&'a Job> for Handoff<'a> {
    fn from(job: &'a Job) -> Self {
        Handoff {
            text: &job.policy_text,
            resolved: None,
            base_dir: job.policy_base_dir.as_deref(),
            sha256: &job.policy_sha256,
        }
    }
}

impl<'a> From<&'a SessionJob> for Handoff<'a> {
    fn from(job: &'a SessionJob) -> Self {
        Handoff {
            text: &job.policy_text,
            resolved: None,
            base_dir: job.policy_base_dir.as_deref(),
            sha256: &job.policy_sha256,
        }
    }
}

impl<'a> From<&'a PoolStart> for Handoff<'a> {
    fn from(start: &'a PoolStart) -> Self {
        Handoff {
            text: &start.policy_text,
            resolved: start.policy_resolved.as_deref(),
            base_dir: start.policy_base_dir.as_deref(),
            sha256: &start.policy_sha256,
        }
    }
}
