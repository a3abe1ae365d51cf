//! `warden run`: check, jail, validate. For now only `--no-policy` (the jail alone) is wired.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::{json, Value};
use warden::files::{self, CollectLimits, OutputFile, PlacedInputs};
use warden::{exit, jail_config};
use warden_jail::{JailError, Outcome, Plan};

use super::RulesArg;

/// Check a program, run it in the jail and validate its output.
///
/// Exit status: 0 when the run succeeded, 1 when it did not (error, timeout, limit), 2 on usage,
/// configuration or setup errors.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub rules: RulesArg,
    /// Skip the static policy layer (to prove containment); the jail is never optional.
    #[arg(long)]
    pub no_policy: bool,
    /// Print the result record as JSON.
    #[arg(long)]
    pub json: bool,
    /// A file or directory to place in the work dir (by name); repeatable.
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Copy the files the program wrote in its work dir here (must not exist or be empty).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Program to run, or `-` for standard input.
    pub program: PathBuf,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if !args.no_policy {
        eprintln!("warden: the full pipeline is not wired yet; use --no-policy");
        return Ok(ExitCode::from(exit::ERROR));
    }
    warden_jail::trace("cli: start");
    let text = read_program(&args.program)?;
    let policy = args.rules.load()?;
    warden_jail::trace("cli: policy loaded");
    let config = jail_config::from_policy(&policy)?;
    files::check_inputs(&args.inputs)?;
    if let Some(dir) = &args.output_dir {
        files::check_output_dir(dir)?;
    }
    let plan = match Plan::new(&config) {
        Ok(plan) => plan,
        Err(err) => return Ok(setup_failed(&args, &err, None)),
    };
    warden_jail::trace("cli: plan built");
    let workdir = if args.inputs.is_empty() && args.output_dir.is_none() {
        None
    } else {
        Some(WorkDir::create()?)
    };
    let placed = match &workdir {
        Some(dir) => files::place_inputs(&args.inputs, &dir.path, policy.files.inputs_writable)?,
        None => PlacedInputs::default(),
    };
    let outcome =
        match warden_jail::run(&plan, &text, workdir.as_ref().map(|dir| dir.path.as_path())) {
            Ok(outcome) => outcome,
            Err(err) => return Ok(setup_failed(&args, &err, Some(&plan))),
        };
    let output_files = match &workdir {
        Some(dir) => files::collect_outputs(
            &dir.path,
            &placed,
            CollectLimits {
                max_files: policy.limits.output_files,
                max_total_bytes: policy.limits.output_bytes,
            },
            args.output_dir.as_deref(),
        )?,
        None => Vec::new(),
    };
    report(&args, &outcome, &output_files)?;
    Ok(ExitCode::from(
        if outcome.status == warden_jail::Status::Ok {
            exit::OK
        } else {
            exit::FAILED
        },
    ))
}

fn read_program(path: &Path) -> anyhow::Result<String> {
    let bytes = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the program from standard input")?;
        bytes
    } else {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    String::from_utf8(bytes).map_err(|err| {
        anyhow::anyhow!(
            "{} is not UTF-8 (invalid byte at offset {})",
            path.display(),
            err.utf8_error().valid_up_to()
        )
    })
}

/// A host work dir for one run, removed afterwards.
struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    fn create() -> anyhow::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("warden-work-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("cannot create work dir {}", path.display()))?;
        Ok(WorkDir { path })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = make_writable(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Read-only input dirs (0555) would stop `remove_dir_all`.
fn make_writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&entry.path())?;
        }
    }
    Ok(())
}

/// The result record of DESIGN.md.
fn record(outcome: &Outcome, files: &[OutputFile]) -> anyhow::Result<Value> {
    let mut value = serde_json::to_value(outcome)?;
    if let Value::Object(map) = &mut value {
        map.insert("check".into(), Value::Null);
        map.insert("validation".into(), Value::Null);
        map.insert("files".into(), serde_json::to_value(files)?);
    }
    Ok(value)
}

fn report(args: &RunArgs, outcome: &Outcome, files: &[OutputFile]) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string(&record(outcome, files)?)?);
        return Ok(());
    }
    std::io::stdout().write_all(&outcome.stdout)?;
    std::io::stdout().flush()?;
    std::io::stderr().write_all(&outcome.stderr)?;
    let ending = match (outcome.exit_code, outcome.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "no exit status".into(),
    };
    let layers = &outcome.layers;
    let limits: Vec<String> = outcome
        .limits_hit
        .iter()
        .map(|l| serde_json::to_value(l).map(|v| v.as_str().unwrap_or("").to_owned()))
        .collect::<Result<_, _>>()?;
    eprintln!(
        "warden: {} ({ending}{}) in {} ms, cpu {} ms, peak memory {:.1} MiB; layers: namespaces, landlock {}, seccomp {}, cgroup {}, rlimits {}",
        outcome.status.name(),
        if limits.is_empty() { String::new() } else { format!("; limits hit: {}", limits.join(", ")) },
        outcome.usage.wall_ms,
        outcome.usage.cpu_ms,
        outcome.usage.memory_peak_bytes as f64 / (1024.0 * 1024.0),
        layers.landlock,
        if layers.seccomp { "on" } else { "off" },
        layers.cgroup,
        if layers.rlimits { "on" } else { "off" },
    );
    for file in files {
        eprintln!(
            "warden: output {} ({} bytes, sha256 {})",
            file.path, file.bytes, file.sha256
        );
    }
    Ok(())
}

fn setup_failed(args: &RunArgs, err: &JailError, plan: Option<&Plan>) -> ExitCode {
    if args.json {
        let record = json!({
            "status": "setup_failed",
            "error": err.to_string(),
            "exit_code": null,
            "signal": null,
            "stdout": "",
            "stderr": "",
            "stdout_truncated": false,
            "stderr_truncated": false,
            "check": null,
            "validation": null,
            "usage": null,
            "files": [],
            "layers": plan.map(warden_jail::layers),
        });
        println!("{record}");
    } else {
        eprintln!("warden: setup_failed: {err}");
    }
    ExitCode::from(exit::ERROR)
}
