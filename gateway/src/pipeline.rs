//! The gateway for one program: decode → check → decide → plan the jail from the same policy → run →
//! validate → result record.
//!
//! The CLI, the corpus runner and the server all call [`execute`]. It never panics and never returns an
//! error for anything the program did: every end is a [`RunRecord`] with a status. `Err` is kept for
//! configuration and usage problems found before anything ran (exit code 2).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use warden_policy::{Decision, Finding, Policy, PolicyRef};

use crate::files::{self, OutputFile, WorkDir};
use crate::python_error::{self, PythonError};
use crate::stopped_by::{self, StoppedBy};
use crate::validate::{OutputSchema, ResultFrom, Validation};

/// How a run ended, as the result record names it (docs/architecture.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Denied,
    ReviewRequired,
    Error,
    Timeout,
    MemoryLimit,
    OutputLimit,
    OutputInvalid,
    SetupFailed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Denied => "denied",
            RunStatus::ReviewRequired => "review_required",
            RunStatus::Error => "error",
            RunStatus::Timeout => "timeout",
            RunStatus::MemoryLimit => "memory_limit",
            RunStatus::OutputLimit => "output_limit",
            RunStatus::OutputInvalid => "output_invalid",
            RunStatus::SetupFailed => "setup_failed",
        }
    }
}

/// Limits a caller asks for; each may only tighten the policy's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerLimits {
    pub wall_time_ms: Option<u64>,
    pub cpu_time_ms: Option<u64>,
    pub memory_mib: Option<u64>,
    pub stdout_bytes: Option<u64>,
}

/// A review approval: who approved and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// `flag` (`--approve`), `terminal` (interactive prompt) or `token`.
    pub method: String,
    /// Who approved (the user warden ran as, or the token's owner).
    pub by: String,
}

/// One program to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The program as bytes (decoded by warden, never by the interpreter).
    pub source: Vec<u8>,
    /// Host files and directories placed in the work dir.
    pub inputs: Vec<PathBuf>,
    /// Where the files the program writes are copied.
    pub output_dir: Option<PathBuf>,
    /// A schema that replaces the policy's output schema.
    pub schema: Option<serde_json::Value>,
    /// Where the result the schema judges is read from; the policy's `[output] result` when `None`.
    pub result: Option<ResultFrom>,
    /// The program's name as its author knows it (`analysis.py`, `<stdin>`), shown in tracebacks
    /// and warnings instead of the jail's path; the jail's path when `None`.
    pub program_name: Option<String>,
    /// Skip the static layer (the jail is never optional).
    pub no_policy: bool,
    /// Skip the runtime layer's audit hook (to prove the jail alone; the kernel's exec ban stays).
    pub no_hooks: bool,
    /// Approval for a program the policy sends to review.
    pub approval: Option<Approval>,
    pub limits: CallerLimits,
    /// The static check already made for this program (by the server, once per request): used
    /// instead of checking again when it was made for this program and policy.
    pub checked: Option<crate::checked::Checked>,
}

/// The `check` part of the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckSummary {
    /// `allow`, `review` or `deny`; `skipped` when `--no-policy`.
    pub decision: String,
    pub findings: Vec<Finding>,
}

/// The result record (docs/architecture.md), with warden's additions after the contract's fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub check: CheckSummary,
    /// The output schema's verdict; `null` when no schema applies (nothing was validated).
    pub validation: Option<Validation>,
    pub usage: warden_jail::Usage,
    pub files: Vec<OutputFile>,
    pub layers: Option<warden_jail::Layers>,
    /// The Python exception, when the program died of one.
    pub error: Option<PythonError>,
    /// What went wrong outside the program (setup failure, output files over their caps…).
    pub message: Option<String>,
    pub limits_hit: Vec<warden_jail::LimitHit>,
    pub approval: Option<Approval>,
    pub policy: PolicyRef,
    pub program_sha256: String,
    /// The depth that stopped the program (static, runtime, kernel), when one did.
    #[serde(default)]
    pub stopped_by: Option<StoppedBy>,
    /// The limits the run was given (the policy's, tightened by the caller's), and the caller's
    /// requests the policy did not grant; `null` when nothing was set up to run.
    #[serde(default)]
    pub limits: Option<AppliedLimits>,
    /// The files the program wrote that did not come back, each with its reason (a symlink, not a
    /// regular file, over a cap, another name of a file returned, the copy's time bound).
    #[serde(default)]
    pub files_refused: Vec<files::RefusedOutput>,
    /// Whether the program ran in a pooled jail started before it arrived (`warden serve`,
    /// `warden mcp`; docs/pool.md) rather than in one started for it.
    #[serde(default)]
    pub warm: bool,
}

/// The limits a run was actually given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedLimits {
    pub wall_time_ms: u64,
    pub cpu_time_ms: u64,
    pub memory_mib: u64,
    pub stdout_bytes: u64,
    /// Limits the caller asked to raise above the policy's: kept at the policy's value.
    pub capped: Vec<CappedLimit>,
}

/// A caller's request for more than the policy allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CappedLimit {
    /// The limit's name, as in the request (`wall_time_ms`, `cpu_time_ms`, `memory_mib`, `stdout_bytes`).
    pub limit: String,
    pub requested: u64,
    /// The policy's value, which the run got.
    pub applied: u64,
}

impl AppliedLimits {
    /// What `effective_limits` gives a request, with the requests it did not grant.
    pub fn of(policy: &Policy, caller: &CallerLimits) -> Self {
        let applied = effective_limits(policy, caller);
        let mib = 1024 * 1024;
        let wanted = [
            (
                "wall_time_ms",
                caller.wall_time_ms,
                policy.limits.wall_time_ms,
            ),
            ("cpu_time_ms", caller.cpu_time_ms, policy.limits.cpu_time_ms),
            (
                "memory_mib",
                caller.memory_mib,
                policy.limits.memory_bytes / mib,
            ),
            (
                "stdout_bytes",
                caller.stdout_bytes,
                policy.limits.stdout_bytes,
            ),
        ];
        let capped = wanted
            .into_iter()
            .filter_map(|(limit, requested, allowed)| {
                let requested = requested.filter(|r| *r > allowed)?;
                Some(CappedLimit {
                    limit: limit.to_owned(),
                    requested,
                    applied: allowed,
                })
            })
            .collect();
        Self {
            wall_time_ms: applied.wall_time_ms,
            cpu_time_ms: applied.cpu_time_ms,
            memory_mib: applied.memory_bytes / mib,
            stdout_bytes: applied.stdout_bytes,
            capped,
        }
    }
}

impl RunRecord {
    fn new(policy: &Policy, source: &[u8], check: CheckSummary) -> Self {
        use sha2::{Digest, Sha256};
        Self {
            status: RunStatus::SetupFailed,
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            check,
            validation: None,
            usage: warden_jail::Usage::default(),
            files: Vec::new(),
            layers: None,
            error: None,
            message: None,
            limits_hit: Vec::new(),
            approval: None,
            policy: PolicyRef::of(policy),
            program_sha256: warden_policy::settings::hex(&Sha256::digest(source)),
            stopped_by: None,
            limits: None,
            files_refused: Vec::new(),
            warm: false,
        }
    }
}

/// Loads the output schema a run must satisfy: the request's, else the policy's.
pub fn output_schema(
    policy: &Policy,
    request: &RunRequest,
) -> anyhow::Result<Option<OutputSchema>> {
    let schema = match (
        &request.schema,
        &policy.output_schema,
        &policy.output_schema_file,
    ) {
        (Some(schema), _, _) => Some(schema.clone()),
        (None, Some(schema), _) => Some(schema.clone()),
        (None, None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|err| {
                anyhow::anyhow!("cannot read output schema {}: {err}", path.display())
            })?;
            Some(
                serde_json::from_str(&text)
                    .map_err(|err| anyhow::anyhow!("output schema {}: {err}", path.display()))?,
            )
        }
        (None, None, None) => None,
    };
    schema.as_ref().map(OutputSchema::compile).transpose()
}

/// The static verdict, on a worker thread with a deep stack that has ended before the jail starts
/// (the jail must be spawned from a single-threaded process).
pub fn check(policy: &Policy, source: &[u8]) -> warden_policy::Report {
    warden_policy::check_on_worker(source, policy)
}

/// Runs one program through the whole gateway.
pub fn execute(policy: &Policy, request: &RunRequest) -> anyhow::Result<RunRecord> {
    execute_in(policy, request, None)
}

/// [`execute`] in a pooled jail (`warm`, started for `policy` and not used yet; it is used up
/// whatever happens): the same checks, gate, record and statuses, `warm: true`. A request with
/// input files is refused (they go to a cold run, whose inputs the jail places before it starts).
pub fn execute_warm(
    policy: &Policy,
    request: &RunRequest,
    warm: &mut crate::session::Session,
) -> anyhow::Result<RunRecord> {
    anyhow::ensure!(
        request.inputs.is_empty(),
        "a pooled jail takes no input files; run this request cold"
    );
    execute_in(policy, request, Some(warm))
}

/// Runs `request` in a jail forked for it from the template listening on `channel` (a warm pool's,
/// `warden_jail::template`), its input files copied in before the program starts as a cold run's
/// are: the record of a cold run, with `warm: true`.
pub fn execute_forked(
    policy: &Policy,
    request: &RunRequest,
    channel: &std::path::Path,
    lifetime: std::time::Duration,
) -> anyhow::Result<RunRecord> {
    let options = crate::session::SessionOptions {
        lifetime,
        inputs: request.inputs.clone(),
        ..crate::session::SessionOptions::default()
    };
    let mut session = crate::session::Session::start_from(
        policy,
        &options,
        crate::session::Origin::Fork(channel),
    )
    .map_err(|err| anyhow::Error::new(NotTaken(err)))?;
    // The inputs are in the jail already; what comes back is judged against what was placed.
    let request = RunRequest {
        inputs: Vec::new(),
        ..request.clone()
    };
    execute_in(policy, &request, Some(&mut session))
}

/// The error of [`execute_warm`] and [`execute_forked`] when the warm jail never took the program:
/// none could be forked for it (the template is gone or refused), or the waiting one was lost (it
/// died with its template) or refused the delivery. Nothing of the program ran, so the caller may
/// run it cold instead.
#[derive(Debug)]
pub struct NotTaken(pub anyhow::Error);

impl std::fmt::Display for NotTaken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the warm jail did not take the program: {:#}", self.0)
    }
}

impl std::error::Error for NotTaken {}

fn execute_in(
    policy: &Policy,
    request: &RunRequest,
    warm: Option<&mut crate::session::Session>,
) -> anyhow::Result<RunRecord> {
    // Everything that can be wrong with the request is found before anything runs.
    let schema = output_schema(policy, request)?;
    files::check_inputs(&request.inputs)?;
    if let Some(dir) = &request.output_dir {
        files::check_output_dir(dir)?;
    }
    warden_jail::trace("schema, inputs");
    let report = request
        .checked
        .as_ref()
        .and_then(|checked| checked.report_for(policy, &request.source))
        .unwrap_or_else(|| check(policy, &request.source));
    warden_jail::trace("checked");
    let summary = CheckSummary {
        decision: if request.no_policy {
            "skipped".to_owned()
        } else {
            report.decision.as_str().to_owned()
        },
        findings: report.findings.clone(),
    };
    let mut record = RunRecord::new(policy, &request.source, summary);
    let end = gate_and_run(policy, request, report, schema.as_ref(), &mut record, warm)?;
    record.status = status_of(end);
    if matches!(end, End::Denied) && record.message.is_none() {
        record.message = Some(denied_message(&record.check.findings));
    }
    record.stopped_by = match end {
        End::Denied | End::ReviewRequired => {
            Some(stopped_by::from_findings(&record.check.findings))
        }
        End::Ran(_) => stopped_by::from_run(record.error.as_ref(), &record.stderr, record.signal),
        End::SetupFailed => None,
    };
    Ok(record)
}

/// What a denied record's `message` says: which rules denied it, and where the details are.
fn denied_message(findings: &[warden_policy::Finding]) -> String {
    let mut rules: Vec<&str> = findings
        .iter()
        .filter(|f| f.action == warden_policy::Action::Deny)
        .map(|f| f.rule.id())
        .collect();
    rules.dedup();
    if rules.is_empty() {
        return "denied by the policy; see check.findings".to_owned();
    }
    format!(
        "denied by the policy ({}); each finding in check.findings says where and has a hint",
        rules.join(", ")
    )
}

/// The static gate, then the jail: fills the record's fields and says how the run ended.
fn gate_and_run(
    policy: &Policy,
    request: &RunRequest,
    report: warden_policy::Report,
    schema: Option<&OutputSchema>,
    record: &mut RunRecord,
    warm: Option<&mut crate::session::Session>,
) -> anyhow::Result<End> {
    let Some(decoded) = report.decoded else {
        // Undecodable source never runs, with or without the static layer.
        record.message = Some("the source could not be decoded; see the findings".to_owned());
        return Ok(End::Denied);
    };
    if !request.no_policy {
        match report.decision {
            Decision::Deny => return Ok(End::Denied),
            Decision::Review if request.approval.is_none() => {
                record.message =
                    Some("the policy requires a review before this program runs".to_owned());
                return Ok(End::ReviewRequired);
            }
            Decision::Review => record.approval = request.approval.clone(),
            Decision::Allow => {}
        }
    }
    match warm {
        Some(warm) => run_in_warm_jail(policy, request, &decoded.text, schema, record, warm),
        None => run_in_jail(policy, request, &decoded.text, schema, record),
    }
}

/// The policy's limits, tightened (never loosened) by the caller's.
pub fn effective_limits(
    policy: &Policy,
    caller: &CallerLimits,
) -> warden_policy::settings::PolicyLimits {
    let mut limits = policy.limits.clone();
    let tighten = |current: &mut u64, asked: Option<u64>| {
        if let Some(asked) = asked.filter(|a| *a > 0) {
            *current = (*current).min(asked);
        }
    };
    tighten(&mut limits.wall_time_ms, caller.wall_time_ms);
    tighten(&mut limits.cpu_time_ms, caller.cpu_time_ms);
    tighten(
        &mut limits.memory_bytes,
        caller.memory_mib.map(|m| m.saturating_mul(1024 * 1024)),
    );
    tighten(&mut limits.stdout_bytes, caller.stdout_bytes);
    limits
}

/// How a request ended, before it is named by a status.
#[derive(Debug, Clone, Copy)]
enum End {
    /// The policy denied it, or its source could not be decoded: nothing ran.
    Denied,
    /// The policy requires a review and there was no approval: nothing ran.
    ReviewRequired,
    /// A layer the policy requires could not be set up, or the interpreter is unusable: nothing ran.
    SetupFailed,
    /// The program ran in the jail.
    Ran(Ending),
}

/// A request's status (pure: the one place it is decided).
fn status_of(end: End) -> RunStatus {
    match end {
        End::Denied => RunStatus::Denied,
        End::ReviewRequired => RunStatus::ReviewRequired,
        End::SetupFailed => RunStatus::SetupFailed,
        End::Ran(ending) => run_status(ending),
    }
}

/// Everything that decides a run's status, gathered once the run is over.
#[derive(Debug, Clone, Copy)]
struct Ending {
    /// How the jail says the program ended.
    jail: warden_jail::Status,
    /// Whether stdout satisfied the output schema (`None`: nothing to validate).
    valid_output: Option<bool>,
    /// Whether the program's files were collected within their caps.
    files_collected: bool,
}

/// The status of a run that started: the jail's verdict wins; then the schema; then the output
/// files' caps.
fn run_status(ending: Ending) -> RunStatus {
    let jail = match ending.jail {
        warden_jail::Status::Ok => RunStatus::Ok,
        warden_jail::Status::Error => RunStatus::Error,
        warden_jail::Status::Timeout => RunStatus::Timeout,
        warden_jail::Status::MemoryLimit => RunStatus::MemoryLimit,
        warden_jail::Status::OutputLimit => RunStatus::OutputLimit,
    };
    match jail {
        RunStatus::Ok if ending.valid_output == Some(false) => RunStatus::OutputInvalid,
        RunStatus::Ok if !ending.files_collected => RunStatus::OutputLimit,
        other => other,
    }
}

fn run_in_jail(
    policy: &Policy,
    request: &RunRequest,
    text: &str,
    schema: Option<&OutputSchema>,
    record: &mut RunRecord,
) -> anyhow::Result<End> {
    let limits = effective_limits(policy, &request.limits);
    record.limits = Some(AppliedLimits::of(policy, &request.limits));
    let mut config = crate::jail_config::with_limits(policy, &limits)?;
    match crate::hook_config::runtime_layer(policy, request.no_hooks) {
        Ok(layer) => {
            config.bootstrap = crate::jail_config::bootstrap(layer);
            config.bootstrap.program_name = request.program_name.clone();
        }
        Err(message) => {
            record.message = Some(message);
            return Ok(End::SetupFailed);
        }
    }
    let plan = match warden_jail::Plan::new(&config) {
        Ok(plan) => plan,
        Err(err) => {
            record.message = Some(err.to_string());
            return Ok(End::SetupFailed);
        }
    };
    // The layers in force are the plan's: reported once, whatever happens next.
    record.layers = Some(warden_jail::layers(&plan));
    warden_jail::trace("plan");
    let workdir = WorkDir::create()?;
    let placed = files::place_inputs(&request.inputs, &workdir.path, policy.files.inputs_writable)?;
    let outcome = match warden_jail::run(&plan, text, Some(&workdir.path)) {
        Ok(outcome) => outcome,
        Err(err) => {
            record.message = Some(err.to_string());
            return Ok(End::SetupFailed);
        }
    };
    let ran = Ran {
        workdir: &workdir.path,
        placed: &placed,
        limits: &limits,
        result: request.result.unwrap_or(policy.output_result),
    };
    Ok(finish_run(request, schema, record, outcome, ran))
}

/// A pooled jail: the program is delivered to the interpreter that waits in it.
fn run_in_warm_jail(
    policy: &Policy,
    request: &RunRequest,
    text: &str,
    schema: Option<&OutputSchema>,
    record: &mut RunRecord,
    warm: &mut crate::session::Session,
) -> anyhow::Result<End> {
    let limits = effective_limits(policy, &request.limits);
    record.limits = Some(AppliedLimits::of(policy, &request.limits));
    record.layers = Some(warm.layers().clone());
    record.warm = true;
    let outcome = match warm.run_program(text, &limits, request.program_name.as_deref()) {
        Ok(outcome) => outcome,
        // Never delivered: nothing ran, and the caller may run it cold.
        Err(message) if warm.execution_count() == 0 => {
            return Err(anyhow::Error::new(NotTaken(anyhow::Error::msg(message))));
        }
        // The program ran and the jail failed at its end: a record, never a second run.
        Err(message) => {
            record.message = Some(message);
            return Ok(End::SetupFailed);
        }
    };
    let ran = Ran {
        workdir: warm.workdir(),
        placed: warm.placed(),
        limits: &limits,
        result: request.result.unwrap_or(policy.output_result),
    };
    Ok(finish_run(request, schema, record, outcome, ran))
}

/// Where a run's files are and the limits it had.
struct Ran<'a> {
    workdir: &'a std::path::Path,
    placed: &'a files::PlacedInputs,
    limits: &'a warden_policy::settings::PolicyLimits,
    /// Where the result the schema judges was delivered (the request's, else the policy's).
    result: ResultFrom,
}

/// The files, the output and the validation of a run that ended.
fn finish_run(
    request: &RunRequest,
    schema: Option<&OutputSchema>,
    record: &mut RunRecord,
    outcome: warden_jail::Outcome,
    ran: Ran<'_>,
) -> End {
    let Ran {
        workdir,
        placed,
        limits,
        result,
    } = ran;
    let collect = files::CollectLimits {
        max_files: limits.output_files,
        max_total_bytes: limits.output_bytes,
    };
    let collected = files::collect_outputs(workdir, placed, collect, request.output_dir.as_deref());
    // What the jail refused while copying back, then what collecting said; a cap reached is the
    // run's `output_limit`.
    let (mut notes, capped) = files::copy_back_notes(outcome.copy_back.as_ref(), collect);
    record.files_refused = files::copy_back_refused(outcome.copy_back.as_ref(), collect);
    // Stopped at a limit: the files are as the program left them.
    let partial = outcome.copy_back.as_ref().is_some_and(|copy| copy.partial);
    let files_collected = match collected {
        Ok(collected) => {
            record.files = collected.files;
            for file in &mut record.files {
                file.partial = partial;
            }
            record.files_refused.extend(collected.refused);
            notes.extend(collected.notes);
            !(capped || collected.over_caps)
        }
        Err(err) => {
            notes.push(format!("not collected: {err:#}"));
            false
        }
    };
    if !notes.is_empty() {
        record.message = Some(format!("output files: {}", notes.join("; ")));
    }
    let delivery = Delivery {
        schema,
        from: result,
        workdir,
        max_bytes: limits.stdout_bytes,
    };
    End::Ran(apply_outcome(record, outcome, &delivery, files_collected))
}

/// What judges a run's result, and where it was delivered.
struct Delivery<'a> {
    schema: Option<&'a OutputSchema>,
    from: ResultFrom,
    /// The host work dir, where `result.json` is read with [`ResultFrom::File`].
    workdir: &'a std::path::Path,
    /// The cap on the result file (the policy's `stdout_bytes`, as the result on stdout has).
    max_bytes: u64,
}

/// Fills the record from the jail's outcome: output, usage, validation and the Python error.
fn apply_outcome(
    record: &mut RunRecord,
    outcome: warden_jail::Outcome,
    result: &Delivery,
    files_collected: bool,
) -> Ending {
    record.exit_code = outcome.exit_code;
    record.signal = outcome.signal;
    record.stdout_truncated = outcome.stdout_truncated;
    record.stderr_truncated = outcome.stderr_truncated;
    record.usage = outcome.usage;
    record.limits_hit = outcome.limits_hit.clone();
    record.stdout = outcome.stdout_text();
    record.stderr = outcome.stderr_text();
    if outcome.status == warden_jail::Status::Error {
        record.error = python_error::parse(&record.stderr);
    }
    let jail_only = Ending {
        jail: outcome.status,
        valid_output: None,
        files_collected: true,
    };
    let valid_output = result.schema.map(|schema| {
        let mut validation = match run_status(jail_only) {
            RunStatus::Ok => schema.validate_result(
                result.from,
                &outcome.stdout,
                outcome.stdout_truncated,
                Some(result.workdir),
                result.max_bytes,
            ),
            other => Validation::not_validated(other),
        };
        validation.result = result.from;
        let valid = validation.valid;
        record.validation = Some(validation);
        valid
    });
    Ending {
        jail: outcome.status,
        valid_output,
        files_collected,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use warden_jail::Status;

    #[test]
    fn a_denied_record_names_the_rules_that_denied_it() {
        let policy = Policy::builtin_default().unwrap();
        let report = warden_policy::check(b"import socket\nimport ftplib\n", &policy);
        let message = denied_message(&report.findings);
        assert!(
            message.starts_with("denied by the policy (IMP101)"),
            "{message}"
        );
        assert!(message.contains("check.findings"), "{message}");
        assert_eq!(
            denied_message(&[]),
            "denied by the policy; see check.findings"
        );
    }

    fn ending(jail: Status, valid_output: Option<bool>, files_collected: bool) -> Ending {
        Ending {
            jail,
            valid_output,
            files_collected,
        }
    }

    #[test]
    fn the_jails_verdict_wins_over_files_and_schema() {
        assert_eq!(
            run_status(ending(Status::Timeout, Some(false), false)),
            RunStatus::Timeout
        );
        assert_eq!(
            run_status(ending(Status::Error, None, true)),
            RunStatus::Error
        );
        assert_eq!(
            run_status(ending(Status::MemoryLimit, Some(true), true)),
            RunStatus::MemoryLimit
        );
    }

    #[test]
    fn the_schema_comes_before_the_files_caps() {
        assert_eq!(
            run_status(ending(Status::Ok, Some(false), false)),
            RunStatus::OutputInvalid
        );
        assert_eq!(
            run_status(ending(Status::Ok, Some(true), false)),
            RunStatus::OutputLimit
        );
        assert_eq!(
            run_status(ending(Status::Ok, Some(false), true)),
            RunStatus::OutputInvalid
        );
        assert_eq!(
            run_status(ending(Status::Ok, Some(true), true)),
            RunStatus::Ok
        );
        assert_eq!(run_status(ending(Status::Ok, None, true)), RunStatus::Ok);
    }

    #[test]
    fn the_record_says_which_requested_limits_the_policy_did_not_grant() {
        let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
        let caller = CallerLimits {
            wall_time_ms: Some(policy.limits.wall_time_ms * 4),
            cpu_time_ms: Some(1000),
            memory_mib: None,
            stdout_bytes: Some(policy.limits.stdout_bytes),
        };
        let applied = AppliedLimits::of(&policy, &caller);
        assert_eq!(applied.wall_time_ms, policy.limits.wall_time_ms);
        assert_eq!(applied.cpu_time_ms, 1000);
        assert_eq!(
            applied.memory_mib,
            policy.limits.memory_bytes / (1024 * 1024)
        );
        assert_eq!(
            applied.capped,
            [CappedLimit {
                limit: "wall_time_ms".to_owned(),
                requested: policy.limits.wall_time_ms * 4,
                applied: policy.limits.wall_time_ms,
            }]
        );
        assert!(AppliedLimits::of(&policy, &CallerLimits::default())
            .capped
            .is_empty());
    }
}
