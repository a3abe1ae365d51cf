//! `warden check`: judge Python files against the policy without running them.

use std::ffi::OsString;
use std::fs::FileType;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use clap::{Args, ValueEnum};
use warden_policy::{render, Decision, Policy, Report};

use super::RulesArg;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Findings with source snippets and hints, for people.
    Human,
    /// One JSON object per program, one per line.
    Json,
    /// One SARIF 2.1.0 log (GitHub code scanning).
    Sarif,
}

/// Judge Python files against the policy without running them.
///
/// Directories are searched recursively for `*.py` files. Exit status: 0 when every program is
/// allowed, 1 when any is denied or needs review, 2 on usage or configuration errors or unreadable
/// files. Inline suppression comments (`# noqa`, `# nosec`) are never honoured: exceptions live in
/// the rules file.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub rules: RulesArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Files or directories to check, or `-` for standard input.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    // The directories are walked while the policy loads: neither needs the other.
    let (policy, collected) = std::thread::scope(|scope| {
        let walker = std::thread::Builder::new()
            .name("warden-walk".to_owned())
            .spawn_scoped(scope, || collect_inputs(&args.paths));
        let policy = args.rules.load();
        let collected = match walker {
            Ok(handle) => handle
                .join()
                .map_err(|_| anyhow::anyhow!("the directory walk failed")),
            // No thread to spare: walk here.
            Err(_) => Ok(collect_inputs(&args.paths)),
        };
        (policy, collected)
    });
    let policy = policy?;
    let (inputs, mut errors) = collected?;
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let render = Render {
        format: args.format,
        color,
        policy: &policy,
    };
    let results = check_all(inputs, &render)?;
    let mut checked = Vec::new();
    for result in results {
        match result {
            Ok(item) => checked.push(item),
            Err(message) => errors.push(message),
        }
    }
    let worst = checked
        .iter()
        .map(|c| c.decision)
        .max()
        .unwrap_or(Decision::Allow);
    emit(checked, args.format)?;
    for message in &errors {
        eprintln!("warden: error: {message}");
    }
    Ok(ExitCode::from(if !errors.is_empty() {
        super::exit::ERROR
    } else if worst == Decision::Allow {
        super::exit::OK
    } else {
        super::exit::FAILED
    }))
}

/// How each program's verdict is written, known before the checking starts so that the workers
/// render as they go (all but SARIF, which is one document over every program).
struct Render<'a> {
    format: Format,
    color: bool,
    policy: &'a Policy,
}

/// One program's verdict: its decision, and its output already rendered (or, for SARIF, its report).
struct Checked {
    decision: Decision,
    text: String,
    report: Option<(String, Report)>,
}

impl Render<'_> {
    fn checked(&self, path: String, report: Report) -> Checked {
        let decision = report.decision;
        match self.format {
            Format::Human => Checked {
                decision,
                text: render::human::render(&path, &report, self.color),
                report: None,
            },
            Format::Json => {
                let mut text = render::json::render(&path, &report, self.policy);
                text.push('\n');
                Checked {
                    decision,
                    text,
                    report: None,
                }
            }
            Format::Sarif => Checked {
                decision,
                text: String::new(),
                report: Some((path, report)),
            },
        }
    }
}

enum Input {
    Stdin,
    File(PathBuf),
}

type CheckResult = Result<Checked, String>;

/// Checks every input on up to one worker per core, each with a deep stack so hostile nesting cannot
/// overflow it. Workers take the next unchecked input as they finish one; results come back in input
/// order whatever the interleaving. Each worker also renders what it checked.
fn check_all(inputs: Vec<Input>, render: &Render) -> anyhow::Result<Vec<CheckResult>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(inputs.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<CheckResult>> = Vec::new();
    slots.resize_with(inputs.len(), || None);
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let handles = (0..workers)
            .map(|_| {
                std::thread::Builder::new()
                    .name("warden-check".to_owned())
                    .stack_size(warden_policy::STACK_SIZE)
                    .spawn_scoped(scope, || check_some(&inputs, &next, render))
                    .context("cannot start a checker thread")
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        for handle in handles {
            let checked = handle
                .join()
                .map_err(|_| anyhow::anyhow!("a checker thread failed"))?;
            for (index, result) in checked {
                slots[index] = Some(result);
            }
        }
        Ok(())
    })?;
    // Every index below `inputs.len()` was taken by exactly one worker, and every worker was joined.
    Ok(slots.into_iter().flatten().collect())
}

/// One worker's share: the inputs it claimed, with their indices.
fn check_some(inputs: &[Input], next: &AtomicUsize, render: &Render) -> Vec<(usize, CheckResult)> {
    let policy = render.policy;
    let mut checked = Vec::new();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(input) = inputs.get(index) else {
            return checked;
        };
        let result = read_input(input, policy.source.max_bytes)
            .map(|(name, bytes)| render.checked(name, warden_policy::check(&bytes, policy)));
        checked.push((index, result));
    }
}

/// Reads a program, never more than one byte past the policy's size limit.
fn read_input(input: &Input, max_bytes: usize) -> Result<(String, Vec<u8>), String> {
    let limit = max_bytes as u64 + 1;
    match input {
        Input::Stdin => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(|err| format!("cannot read standard input: {err}"))?;
            Ok(("-".to_owned(), bytes))
        }
        Input::File(path) => {
            let file = std::fs::File::open(path)
                .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
            // The file's size (when known) sizes the buffer once, plus a byte for the end check.
            let expected = file.metadata().map_or(0, |meta| meta.len().min(limit));
            let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0) + 1);
            file.take(limit)
                .read_to_end(&mut bytes)
                .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
            Ok((path.display().to_string(), bytes))
        }
    }
}

/// Expands directories into their `*.py` files (sorted, recursively, without following symlinks).
fn collect_inputs(paths: &[PathBuf]) -> (Vec<Input>, Vec<String>) {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            let mut files = Vec::new();
            walk(path, &mut files, &mut errors);
            inputs.extend(files.into_iter().map(Input::File));
        } else {
            inputs.push(Input::File(path.clone()));
        }
    }
    (inputs, errors)
}

/// Collects the `*.py` files under `dir`, each directory's entries in name order, so the list comes
/// out sorted as paths compare (component by component) without comparing whole paths.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<String>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            errors.push(format!("cannot read directory {}: {err}", dir.display()));
            return;
        }
    };
    let mut listed: Vec<(OsString, FileType)> = entries
        .flatten()
        .filter_map(|entry| Some((entry.file_name(), entry.file_type().ok()?)))
        .collect();
    // Names are unique within a directory.
    listed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in listed {
        let path = dir.join(name);
        if kind.is_dir() {
            walk(&path, files, errors);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "py") {
            files.push(path);
        }
    }
}

fn emit(checked: Vec<Checked>, format: Format) -> anyhow::Result<()> {
    let text = match format {
        Format::Human | Format::Json => {
            let mut text = String::with_capacity(checked.iter().map(|c| c.text.len()).sum());
            for item in &checked {
                text.push_str(&item.text);
            }
            text
        }
        Format::Sarif => {
            let reports: Vec<(String, Report)> =
                checked.into_iter().filter_map(|item| item.report).collect();
            let mut text = render::sarif::render(&reports);
            text.push('\n');
            text
        }
    };
    // A reader that left (`| head`) ends the output quietly; the exit code stays the verdict's.
    super::out::write_all(text.as_bytes());
    Ok(())
}
