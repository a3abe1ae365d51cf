//! `warden run`: check, jail, validate — the whole gateway for one program.

use super::out::outln;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::exit;
use anyhow::Context;
use clap::Args;
use warden_gateway::pipeline::{self, Approval, CallerLimits, RunRecord, RunRequest, RunStatus};

use super::RulesArg;

#[path = "run_remote.rs"]
mod remote;

/// Check a program, run it in the jail and validate its output.
///
/// The program is judged by the policy first: denied programs never run; programs the policy sends to
/// review run only with `--approve` (or after a yes on a terminal). The result record (`--json`) has a
/// status: ok, denied, review_required, error, timeout, memory_limit, output_limit, output_invalid or
/// setup_failed. Exit status: 0 when the status is ok, 1 for any other status, 2 on usage or
/// configuration errors (nothing ran).
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub rules: RulesArg,
    /// Skip the static policy layer (to prove containment); the jail is never optional.
    #[arg(long)]
    pub no_policy: bool,
    /// Skip the runtime layer's audit hook (to prove the jail alone); the kernel's exec ban and the
    /// jail stay.
    #[arg(long)]
    pub no_hooks: bool,
    /// Print the result record as JSON.
    #[arg(long)]
    pub json: bool,
    /// A file or directory to place in the work dir (by name, read-only unless the policy says
    /// otherwise); repeatable. Symlinks are refused.
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Copy the files the program wrote in its work dir here (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// JSON Schema the program's result must satisfy (replaces the policy's). Where the result is
    /// read from: see `--result`.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// Where the result the schema judges is read from (replaces the rules file's `[output] result`):
    /// `stdout`, the whole of standard output is one JSON document (the default); `last-line`, the
    /// last non-empty line of standard output is the JSON document, so prints before it (debugging,
    /// progress) do not fail the run; `file`, the program writes `result.json` in its work dir and
    /// standard output is free.
    #[arg(long, value_name = "WHERE", value_parser = parse_result_from)]
    pub result: Option<warden_gateway::validate::ResultFrom>,
    /// Approve a program the policy sends to review (recorded in the result).
    #[arg(long)]
    pub approve: bool,
    /// Tighten the policy's wall-clock limit (milliseconds); never loosens it.
    #[arg(long, value_name = "MS")]
    pub wall_time_ms: Option<u64>,
    /// Tighten the policy's CPU-time limit (milliseconds).
    #[arg(long, value_name = "MS")]
    pub cpu_time_ms: Option<u64>,
    /// Tighten the policy's memory limit (MiB).
    #[arg(long, value_name = "MIB")]
    pub memory_mib: Option<u64>,
    /// Tighten the policy's standard-output cap (bytes).
    #[arg(long, value_name = "BYTES")]
    pub stdout_bytes: Option<u64>,
    /// Send the run to a running `warden serve` instead of starting a jail here: `unix:/path` or
    /// `http://host:port`, as the Python client takes it (also the `WARDEN_URL` environment
    /// variable). The server's warm pool makes it fast; the record, `--input`, `--output-dir`,
    /// `--schema`, `--result` and the limits work as for a local run. The server's policies apply:
    /// `--policy` names one (its default otherwise); `--rules`, `--no-policy`, `--no-hooks` and
    /// `--approve` are refused (a client never sends or weakens a policy; approvals go through
    /// `warden review`). A TCP server's bearer token is read from `WARDEN_TOKEN`.
    #[arg(long, value_name = "ADDR", env = "WARDEN_URL")]
    pub server: Option<String>,
    /// With `--server`: the server's policy to run under (`GET /v1/policies` lists them).
    #[arg(long, value_name = "NAME")]
    pub policy: Option<String>,
    /// Program to run, or `-` for standard input.
    pub program: PathBuf,
}

/// Finishes what [`warden_jail::defer_teardown`] left (the inits, the cgroups) when dropped.
struct Teardown;

impl Drop for Teardown {
    fn drop(&mut self) {
        if let Err(err) = warden_jail::finish_teardown() {
            eprintln!("warden: after the run: {err}");
        }
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    warden_jail::trace("cli parsed");
    // The record is printed as soon as it is complete; the jail's init finishes exiting and its
    // cgroup is removed meanwhile, and waited for before warden exits (also on an error path).
    if let Some(server) = args.server.clone() {
        return remote::run(&args, &server);
    }
    if args.policy.is_some() {
        anyhow::bail!("--policy names a server's policy and needs --server (or WARDEN_URL); a local run takes --rules FILE");
    }
    warden_jail::defer_teardown(true);
    let _teardown = Teardown;
    let policy = args.rules.load()?;
    warden_jail::trace("rules loaded");
    let source = read_program(&args.program, policy.source.max_bytes)?;
    let schema = match &args.schema {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read schema {}", path.display()))?;
            Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("schema {} is not JSON", path.display()))?,
            )
        }
        None => None,
    };
    let mut request = RunRequest {
        source,
        inputs: args.inputs.clone(),
        output_dir: args.output_dir.clone(),
        schema,
        result: args.result,
        program_name: Some(program_name(&args.program)),
        no_policy: args.no_policy,
        no_hooks: args.no_hooks,
        approval: args.approve.then(|| Approval {
            method: "flag".to_owned(),
            by: user_name(),
        }),
        limits: CallerLimits {
            wall_time_ms: args.wall_time_ms,
            cpu_time_ms: args.cpu_time_ms,
            memory_mib: args.memory_mib,
            stdout_bytes: args.stdout_bytes,
        },
        // `warden run` checks the program itself, once, in the pipeline.
        checked: None,
    };
    let mut record = pipeline::execute(&policy, &request)?;
    warden_jail::trace("executed");
    if record.status == RunStatus::ReviewRequired && ask_for_approval(&args, &request, &record)? {
        request.approval = Some(Approval {
            method: "terminal".to_owned(),
            by: user_name(),
        });
        record = pipeline::execute(&policy, &request)?;
    }
    report(&args, &record)?;
    warden_jail::trace("reported");
    Ok(ExitCode::from(exit_code(&record)))
}

/// 0 when the run succeeded (`ok`), 1 for any other status.
pub(super) fn exit_code(record: &RunRecord) -> u8 {
    if record.status == RunStatus::Ok {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// `--result`'s values: `stdout`, `last-line` (or `last_line`), `file`.
fn parse_result_from(text: &str) -> Result<warden_gateway::validate::ResultFrom, String> {
    warden_gateway::validate::ResultFrom::parse(text)
        .ok_or_else(|| format!("{text:?}: expected stdout, last-line or file"))
}

/// The name tracebacks show for the program: its file name (`analysis.py`), `<stdin>` for `-`.
fn program_name(path: &Path) -> String {
    if path == Path::new("-") {
        return "<stdin>".to_owned();
    }
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "<program>".to_owned())
}

/// Reads the program, never more than one byte past the policy's size limit (the checker then
/// denies it with a clear finding).
pub(super) fn read_program(path: &Path, max_bytes: usize) -> anyhow::Result<Vec<u8>> {
    let limit = max_bytes as u64 + 1;
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .context("cannot read the program from standard input")?;
        return Ok(bytes);
    }
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read program {}", path.display()))?;
    if meta.is_dir() {
        anyhow::bail!(
            "program {} is a directory; give a Python file or `-`",
            path.display()
        );
    }
    std::fs::File::open(path)
        .and_then(|file| file.take(limit).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read program {}", path.display()))?;
    Ok(bytes)
}

fn user_name() -> String {
    std::env::var("SUDO_USER")
        .or_else(|_| std::env::var("USER"))
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// On a terminal (and when the program did not come from standard input), shows the code and the
/// findings and asks. Non-interactively, the answer is no: `--approve` is required.
fn ask_for_approval(
    args: &RunArgs,
    request: &RunRequest,
    record: &RunRecord,
) -> anyhow::Result<bool> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive || args.program == Path::new("-") || args.json {
        return Ok(false);
    }
    let mut err = std::io::stderr().lock();
    writeln!(err, "── {} ──", args.program.display())?;
    for (number, line) in String::from_utf8_lossy(&request.source).lines().enumerate() {
        writeln!(err, "{:>4} │ {line}", number + 1)?;
    }
    writeln!(err, "── the policy asks for a review:")?;
    for finding in &record.check.findings {
        writeln!(
            err,
            "  {}[{}] {}:{}: {}",
            finding.action.as_str(),
            finding.rule.id(),
            finding.span.line,
            finding.span.column,
            finding.message
        )?;
    }
    write!(err, "Run this program in the jail? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

pub(super) fn report(args: &RunArgs, record: &RunRecord) -> anyhow::Result<()> {
    if args.json {
        outln!("{}", serde_json::to_string(record)?);
        return Ok(());
    }
    super::out::write_all(record.stdout.as_bytes());
    let mut err = std::io::stderr().lock();
    err.write_all(record.stderr.as_bytes())?;
    for finding in &record.check.findings {
        writeln!(
            err,
            "warden: {}[{}] {}:{}:{}: {} (hint: {})",
            finding.action.as_str(),
            finding.rule.id(),
            args.program.display(),
            finding.span.line,
            finding.span.column,
            finding.message,
            finding.hint
        )?;
    }
    // The program's own end, then warden's exit code, which is what a script sees: a program that
    // exited 0 with invalid output is still a run that did not succeed (exit 1).
    let program = match (record.exit_code, record.signal) {
        (Some(code), _) => format!("; the program exited {code}"),
        (None, Some(signal)) => format!("; the program was killed by signal {signal}"),
        (None, None) => String::new(),
    };
    writeln!(
        err,
        "warden: {} in {} ms (cpu {} ms, peak memory {:.1} MiB){program}; warden exits {}",
        record.status.as_str(),
        record.usage.wall_ms,
        record.usage.cpu_ms,
        record.usage.memory_peak_bytes as f64 / (1024.0 * 1024.0),
        exit_code(record)
    )?;
    if let Some(message) = &record.message {
        writeln!(err, "warden: {message}")?;
    }
    if let Some(stopped) = &record.stopped_by {
        let what = [&stopped.rule, &stopped.event, &stopped.errno]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ");
        writeln!(
            err,
            "warden: stopped by the {} layer: {what}",
            stopped.layer.name()
        )?;
    }
    for error in record.validation.iter().flat_map(|v| &v.errors) {
        writeln!(
            err,
            "warden: output invalid at `{}` (schema `{}`): {}",
            error.instance_path, error.schema_path, error.message
        )?;
    }
    for file in &record.files {
        writeln!(
            err,
            "warden: output {} ({} bytes, sha256 {})",
            file.path, file.bytes, file.sha256
        )?;
    }
    Ok(())
}
