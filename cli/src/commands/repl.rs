//! `warden repl`: an interactive session on a terminal, or cells as JSON lines with `--json`.

use super::out::{out, outln};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;

use clap::Args;
use warden_gateway::session::{CellRecord, CellStatus, Session, SessionOptions};

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
/// after an indented block. Ctrl-C interrupts the running cell (it ends with KeyboardInterrupt and
/// the session keeps its state); at the prompt it does nothing but say so. Cells are plain Python:
/// IPython's `%magics` and `!shell` lines are refused with a note, never sent. With `--output-dir`,
/// figures (shown, displayed or a cell's value) are kept there as `figure-<cell>-<k>.png` too. With `--json`, standard input holds one JSON object per line,
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
    /// exist or be empty), with the figures the cells made (`figure-<cell>-<k>.png`).
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
        eprintln!("warden: ready; Ctrl-C interrupts a cell, Ctrl-D ends the session");
    }
    // On a terminal, Ctrl-C is the cell's, not warden's: a watcher turns it into an interrupt of
    // the running cell (the session and its state live on).
    let ctrl_c = if interactive {
        Some(CtrlC::watch(session.interrupter())?)
    } else {
        None
    };
    let mut figures = Figures::default();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
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
        if let Some(note) = not_python(&cell) {
            eprintln!("warden: {note}");
            continue;
        }
        let running = ctrl_c.as_ref().map(CtrlC::cell_running);
        let record = session.execute(cell.as_bytes());
        drop(running);
        if args.output_dir.is_some() {
            figures.keep(&record);
        }
        if args.json {
            outln!("{}", serde_json::to_string(&record)?);
        } else {
            show(&record, args.output_dir.is_some());
        }
        if !record.session_alive {
            break;
        }
    }
    drop(ctrl_c);
    let lost = session.ended().is_some();
    match &args.output_dir {
        Some(dir) => {
            let collected = session.close_into(dir)?;
            for note in &collected.notes {
                eprintln!("warden: {note}");
            }
            let kept = figures.write_into(dir)?;
            if interactive {
                eprintln!(
                    "warden: session ended; {} file(s) and {kept} figure(s) in {}",
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

/// Why a cell is not sent: IPython's magics and shell escapes are not Python, and the session's
/// interpreter is plain Python (no shell, no processes). `None`: send it.
fn not_python(cell: &str) -> Option<&'static str> {
    let first = cell
        .lines()
        .map(str::trim_start)
        .find(|line| !line.is_empty())?;
    if first.starts_with('%') {
        Some("`%` lines are IPython magics; cells here are plain Python (for %timeit: `import timeit; timeit.timeit(...)`). Nothing was run.")
    } else if first.starts_with('!') {
        Some("`!` lines are shell commands; cells here are plain Python and the jail runs no processes (for !ls: `import os; os.listdir()`). Nothing was run.")
    } else {
        None
    }
}

/// Ctrl-C on a terminal: a SIGINT flag and a thread that interrupts the running cell.
struct CtrlC {
    running: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

/// While alive, Ctrl-C interrupts the cell; dropped when the cell ends.
struct CellRunning(Arc<AtomicBool>);

impl Drop for CellRunning {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl CtrlC {
    fn watch(interrupter: Option<warden_jail::Interrupter>) -> anyhow::Result<CtrlC> {
        let pressed = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&pressed))
            .context("cannot take Ctrl-C (SIGINT)")?;
        let running = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (running, stop) = (Arc::clone(&running), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(25));
                    if !pressed.swap(false, Ordering::SeqCst) {
                        continue;
                    }
                    match &interrupter {
                        Some(cell) if running.load(Ordering::SeqCst) => {
                            if !cell.interrupt() {
                                eprintln!("\nwarden: the cell could not be interrupted");
                            }
                        }
                        _ => eprintln!(
                            "\nwarden: no cell is running (Ctrl-C interrupts a cell; Ctrl-D ends the session)"
                        ),
                    }
                }
            })
        };
        Ok(CtrlC {
            running,
            stop,
            watcher: Some(watcher),
        })
    }

    fn cell_running(&self) -> CellRunning {
        self.running.store(true, Ordering::SeqCst);
        CellRunning(Arc::clone(&self.running))
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

/// The figures the cells made, kept for `--output-dir` (written when the session ends, beside the
/// files the session delivers there).
#[derive(Default)]
struct Figures {
    kept: Vec<(String, Vec<u8>)>,
}

impl Figures {
    /// Keeps the PNGs of a cell's displays and of its value.
    fn keep(&mut self, record: &CellRecord) {
        let Some(cell) = record.execution_count else {
            return;
        };
        let pngs = record
            .display
            .iter()
            .chain(record.result.iter())
            .filter_map(|bundle| bundle.get("image/png").map(String::as_str));
        for (k, png) in pngs.enumerate() {
            if let Ok(bytes) = BASE64.decode(png) {
                self.kept
                    .push((format!("figure-{cell}-{}.png", k + 1), bytes));
            }
        }
    }

    /// Writes the figures into `dir`, never over a file the session delivered (another name is
    /// taken). The number written.
    fn write_into(&self, dir: &Path) -> anyhow::Result<usize> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (name, bytes) in &self.kept {
            let mut path = dir.join(name);
            let mut again = 1;
            while path.exists() {
                again += 1;
                path = dir.join(name.replace(".png", &format!("-{again}.png")));
            }
            std::fs::write(&path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(self.kept.len())
    }
}

/// Prints a cell's record as `check` and `run` print theirs.
fn show(record: &CellRecord, keeping_figures: bool) {
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
    out!("{}", record.stdout);
    if record.stdout_truncated {
        outln!("[… stdout truncated]");
    }
    eprint!("{}", record.stderr);
    if let Some(error) = &record.error {
        for line in &error.traceback {
            eprintln!("{line}");
        }
    }
    for (k, item) in record.display.iter().enumerate() {
        let size = item
            .get("image/png")
            .map(String::as_str)
            .map_or(0, |b64| b64.len() * 3 / 4);
        match (keeping_figures, record.execution_count) {
            (true, Some(n)) => outln!(
                "<figure: image/png, {} KiB; kept as figure-{n}-{}.png>",
                size / 1024,
                k + 1
            ),
            _ => outln!(
                "<figure: image/png, {} KiB; --output-dir keeps figures>",
                size / 1024
            ),
        }
    }
    if let (Some(result), Some(n)) = (&record.result, record.execution_count) {
        if let Some(text) = result.get("text/plain").map(String::as_str) {
            outln!("Out[{n}]: {text}");
        }
    }
    if record.status != CellStatus::Ok {
        eprintln!(
            "warden: {}{}",
            record.status.as_str(),
            record
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
    }
}
