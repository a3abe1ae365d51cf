//! `warden repl`: an interactive session on a terminal, or cells as JSON lines with `--json`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use warden_gateway::session::{CellRecord, Session, SessionOptions};

use super::RulesArg;

/// Run cells in one jailed Python session that keeps its state.
///
/// Starts a confined interpreter (the same jail and runtime layer as `warden run`) and runs each
/// cell in one persistent namespace. Every cell is checked by the policy in the context of the
/// cells accepted before it (`import os as o` in one cell, `o.system(...)` in the next is denied)
/// and does not run when denied; the session stays as it was. The value of a cell's last expression
/// is shown as `Out[n]`; figures shown or left open are captured as PNG. With `--output-dir`, the
/// files the session wrote in its work dir are delivered there when it ends.
///
/// On a terminal a cell ends at a line that completes a one-line statement, or at an empty line
/// after an indented block. With `--json`, standard input holds one JSON object per line,
/// `{"code": "..."}`, and each cell's record is printed as one JSON line (the same record as
/// `POST /v1/sessions/{id}/execute`). The session ends at end of input (Ctrl-D).
///
/// Exit status: 0 when the session ended normally; 1 when it was lost; 2 when it could not start.
#[derive(Debug, Args)]
pub struct ReplArgs {
    #[command(flatten)]
    pub rules: RulesArg,
    /// A file copied into the session's work dir (`/work`) before it starts; repeatable.
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Read cells as JSON lines and print each cell's record as a JSON line.
    #[arg(long)]
    pub json: bool,
    /// Skip the static check of each cell (the jail and the runtime layer still hold).
    #[arg(long)]
    pub no_policy: bool,
    /// Turn the runtime layer's audit hook off (the jail still holds).
    #[arg(long)]
    pub no_hooks: bool,
    /// Deliver the files the session wrote (not the inputs) into DIR when it ends (DIR must not
    /// exist or be empty).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

pub fn run(args: ReplArgs) -> anyhow::Result<ExitCode> {
    let policy = args.rules.load()?;
    if let Some(dir) = &args.output_dir {
        warden_gateway::files::check_output_dir(dir)?;
    }
    let options = SessionOptions {
        inputs: args.inputs.clone(),
        no_policy: args.no_policy,
        no_hooks: args.no_hooks,
        ..SessionOptions::default()
    };
    let interactive = !args.json && std::io::stdin().is_terminal();
    if interactive {
        eprintln!("warden: starting a session (policy `{}`)…", policy.name);
    }
    let mut session = Session::start(&policy, &options)
        .map_err(|err| anyhow::anyhow!("the session could not start: {err:#}"))?;
    if interactive {
        eprintln!("warden: ready; Ctrl-D ends the session");
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let stdout = std::io::stdout();
    loop {
        let cell = if args.json {
            match lines.next() {
                None => break,
                Some(line) => {
                    let line = line?;
                    if line.trim().is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<serde_json::Value>(&line) {
                        Ok(value) => match value.get("code").and_then(|c| c.as_str()) {
                            Some(code) => code.to_owned(),
                            None => {
                                eprintln!("warden: each line must be {{\"code\": \"...\"}}");
                                continue;
                            }
                        },
                        Err(err) => {
                            eprintln!("warden: not JSON: {err}");
                            continue;
                        }
                    }
                }
            }
        } else {
            match read_cell(&mut lines, interactive, session.execution_count() + 1)? {
                None => break,
                Some(cell) => cell,
            }
        };
        let record = session.execute(cell.as_bytes());
        if args.json {
            let mut out = stdout.lock();
            serde_json::to_writer(&mut out, &record)?;
            writeln!(out)?;
            out.flush()?;
        } else {
            show(&record);
        }
        if !record.session_alive {
            break;
        }
    }
    let lost = session.ended().is_some();
    match &args.output_dir {
        Some(dir) => {
            let collected = session.close_into(dir)?;
            for note in &collected.notes {
                eprintln!("warden: {note}");
            }
            if interactive {
                eprintln!(
                    "warden: session ended; {} file(s) in {}",
                    collected.files.len(),
                    dir.display()
                );
            }
        }
        None => {
            drop(session.close());
            if interactive {
                eprintln!("warden: session ended");
            }
        }
    }
    Ok(if lost {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Reads one cell from a terminal or a plain stream: a line that completes a statement on its own,
/// or lines up to an empty one when the first opens a block or a bracket.
fn read_cell(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    interactive: bool,
    number: u64,
) -> anyhow::Result<Option<String>> {
    let mut cell = String::new();
    let mut depth: i64 = 0;
    let mut block = false;
    loop {
        if interactive {
            let prompt = if cell.is_empty() {
                format!("In [{number}]: ")
            } else {
                "   ...: ".to_owned()
            };
            eprint!("{prompt}");
            std::io::stderr().flush()?;
        }
        let Some(line) = lines.next() else {
            return Ok((!cell.trim().is_empty()).then_some(cell));
        };
        let line = line?;
        if cell.is_empty() && line.trim().is_empty() {
            continue;
        }
        if line.trim().is_empty() && (block || depth <= 0) {
            return Ok(Some(cell));
        }
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        let trimmed = line.trim_end();
        if trimmed.ends_with(':') || trimmed.ends_with('\\') || line.starts_with([' ', '\t']) {
            block = true;
        }
        cell.push_str(&line);
        cell.push('\n');
        if !block && depth <= 0 {
            return Ok(Some(cell));
        }
    }
}

/// Prints a cell's record as `check` and `run` print theirs.
fn show(record: &CellRecord) {
    for finding in &record.check.findings {
        eprintln!(
            "warden: {}[{}] cell:{}:{}: {} (hint: {})",
            finding.action.as_str(),
            finding.rule.id(),
            finding.span.line,
            finding.span.column,
            finding.message,
            finding.hint
        );
    }
    print!("{}", record.stdout);
    if record.stdout_truncated {
        println!("[… stdout truncated]");
    }
    eprint!("{}", record.stderr);
    if let Some(error) = &record.error {
        for line in &error.traceback {
            eprintln!("{line}");
        }
    }
    for item in &record.display {
        let size = item
            .get("image/png")
            .and_then(|v| v.as_str())
            .map_or(0, |b64| b64.len() * 3 / 4);
        println!("<figure: image/png, {} KiB>", size / 1024);
    }
    if let (Some(result), Some(n)) = (&record.result, record.execution_count) {
        if let Some(text) = result.get("text/plain").and_then(|v| v.as_str()) {
            println!("Out[{n}]: {text}");
        }
    }
    if record.status != "ok" {
        eprintln!(
            "warden: {}{}",
            record.status,
            record
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
    }
}
