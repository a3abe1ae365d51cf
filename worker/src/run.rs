//! One cold run: the worker side of `warden worker`.
//!
//! The server writes one [`Job`] as JSON to the worker's standard input; the worker checks the
//! policy it carries against its digest, places the inputs, runs the ordinary pipeline
//! ([`warden_gateway::pipeline::execute`]) and prints one [`WorkerReply`] line. A pooled worker's
//! claimed run goes through [`run_with`] too, in its waiting jail ([`Warm`]).
//!
//! Owns: a run job's execution in a worker, the parent-death tie every worker arms, and the
//! program's name in tracebacks. Does not own: spawning the worker or reading its reply
//! (`service/src/executor.rs`), the pipeline (`warden_gateway::pipeline`).
//!
//! The job carries the policy's *text* as the server validated it at start-up (and its digest, which
//! the worker re-checks), so a rules file edited on disk while the server runs cannot change what a
//! run is judged by.

use std::path::Path;

use anyhow::Context;
use base64::Engine;

use warden_gateway::pipeline::{self, RunRecord, RunRequest};

use crate::handoff::Handoff;
use crate::inputs::{decode_inputs, write_inputs, InputCaps};
use crate::wire::{Job, WorkerReply, PARENT_PID_ENV};

/// The file name a served program's tracebacks and warnings show (`File "main.py", line 3`), cold
/// or pooled: the program a client sent has no file of its own, and the jail's path for it
/// (`/run/warden/main.py`) means nothing to the model that reads the traceback.
pub const SERVED_PROGRAM_NAME: &str = "main.py";

/// The worker: reads one job from stdin, runs it, prints one reply. `dir` is the job's private
/// directory (the server made it and removes it).
pub fn serve_one(dir: &Path) -> anyhow::Result<()> {
    arm_parent_death()?;
    let job: Job = serde_json::from_reader(std::io::stdin().lock())
        .context("the job on standard input is not valid")?;
    let reply = match run(&job, dir) {
        Ok(record) => WorkerReply::Record(Box::new(record)),
        Err(err) => WorkerReply::Error(format!("{err:#}")),
    };
    crate::send(&mut std::io::stdout().lock(), &reply)
}

/// Dies with the server: if it is killed, this worker is killed too (and the jail's init dies with
/// the worker the same way, which takes the whole jail down).
pub fn arm_parent_death() -> anyhow::Result<()> {
    let Some(expected) = std::env::var(PARENT_PID_ENV)
        .ok()
        .and_then(|pid| pid.parse::<i32>().ok())
    else {
        return Ok(());
    };
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .context("cannot arm the parent-death signal")?;
    // The server may have died between fork and prctl; the signal would then never come.
    if nix::unistd::getppid().as_raw() != expected {
        anyhow::bail!("the server (pid {expected}) is gone");
    }
    Ok(())
}

fn run(job: &Job, dir: &Path) -> anyhow::Result<RunRecord> {
    let policy = Handoff::from(job).policy()?;
    run_with(job, dir, &policy, None)
}

/// Where a warm run runs (`pooled.rs`).
pub(crate) enum Warm<'a> {
    /// In a pooled jail that is waiting already.
    Pooled(&'a mut warden_gateway::session::Session),
    /// In a jail forked for it now from the template at `channel` (a run with input files).
    Fork {
        channel: &'a Path,
        lifetime: std::time::Duration,
    },
}

/// A job with its policy already handed over ([`Handoff::policy`]): cold, or in a warm jail (a
/// pooled worker read its policy when its jail started).
pub(crate) fn run_with(
    job: &Job,
    dir: &Path,
    policy: &warden_policy::Policy,
    warm: Option<Warm<'_>>,
) -> anyhow::Result<RunRecord> {
    anyhow::ensure!(
        policy.sha256 == job.policy_sha256,
        "the job's policy is not the one given"
    );
    // The server bounded the request's size already.
    let inputs =
        decode_inputs(&job.inputs, InputCaps::CHECKED).map_err(|err| anyhow::anyhow!(err))?;
    let paths = write_inputs(&inputs, &dir.join("in"))?;
    let output_dir = dir.join("out");
    let request = RunRequest {
        source: job.code.as_bytes().to_vec(),
        inputs: paths,
        output_dir: job.return_files.then(|| output_dir.clone()),
        schema: job
            .schema
            .as_deref()
            .map(|raw| serde_json::from_str(raw.get()))
            .transpose()
            .context("the job's output schema")?,
        result: job.result,
        approval: job.approval.clone(),
        limits: job.limits,
        // Tracebacks name the program `main.py`, cold or pooled, not the jail's internal path.
        program_name: Some(SERVED_PROGRAM_NAME.to_owned()),
        checked: job.checked.clone(),
        // The static and runtime layers always apply to a served run.
        ..RunRequest::default()
    };
    let mut record = match warm {
        Some(Warm::Pooled(warm)) => pipeline::execute_warm(policy, &request, warm)?,
        Some(Warm::Fork { channel, lifetime }) => {
            pipeline::execute_forked(policy, &request, channel, lifetime)?
        }
        None => pipeline::execute(policy, &request)?,
    };
    if job.return_files {
        attach_contents(&mut record, &output_dir);
    }
    Ok(record)
}

/// Adds `content_base64` to each collected file (the pipeline already capped their number and size).
fn attach_contents(record: &mut RunRecord, output_dir: &Path) {
    for file in &mut record.files {
        if let Ok(bytes) = std::fs::read(output_dir.join(&file.path)) {
            file.content_base64 = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use warden_gateway::pipeline::CallerLimits;

    #[test]
    fn a_policy_text_that_does_not_match_its_digest_is_refused() {
        let text = warden_policy::settings::DEFAULT_RULES.to_owned();
        let job = Job {
            policy_text: text.replace("pandas", "pandaz"),
            policy_base_dir: None,
            policy_sha256: warden_policy::Policy::from_toml(&text, None)
                .unwrap()
                .sha256,
            code: "print(1)".to_owned(),
            inputs: Vec::new(),
            schema: None,
            result: None,
            limits: CallerLimits::default(),
            return_files: false,
            approval: None,
            checked: None,
        };
        let dir = std::env::temp_dir().join("warden-job-digest-test-never-created");
        let err = run(&job, &dir).unwrap_err().to_string();
        assert!(err.contains("digest"), "{err}");
        assert!(!dir.exists());
    }
}
