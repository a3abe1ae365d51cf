//! The corpus runner: proves, per attack, which layers hold, and per benign program that warden
//! lets it run.
//!
//! For every attack it runs up to three passes of the warden binary as subprocesses — the policy
//! alone (`warden check --format json`), the jail alone (`warden run --no-policy --json`) and the
//! full pipeline (`warden run --json`), all by default, or those `--passes` selects — and checks
//! the expected effects from the host side: canaries, listeners, sentinel processes, file
//! snapshots, the process table. Benign programs must be allowed and run to a successful end with
//! their expected output. With `--run-as USER` every warden call runs as that unprivileged user
//! while the runner, as root, keeps the host side.
//!
//! Layout: `header.rs` and `effects.rs` read warden's case format (the `expect-jail` language),
//! `index.rs` the `index.jsonl` format of external corpora, `load.rs` finds cases; `pass.rs` names
//! the passes; `fixtures.rs`, `listeners.rs` and `procs.rs` hold what the host observes; `exec.rs`
//! calls warden; `verify.rs` judges a pass; `session.rs` runs attack sessions (several cells in one
//! `warden repl`); `pool.rs` runs the pool pass through a `warden serve` with its warm pool on;
//! `runner.rs` schedules cases; `report.rs` renders the result. A module too large for one file
//! keeps its root here and its parts, one job a file, in the folder of its name (`exec/`,
//! `fixtures/`, `pool/`, `report/`, `runner/`).
//!
//! Does not own: the jail or the policy (it only calls the binary), nor the command line
//! (`commands/corpus.rs`).

pub mod case;
pub mod effects;
pub mod exec;
pub mod fixtures;
pub mod header;
pub mod index;
pub mod listeners;
pub mod load;
pub mod pass;
pub mod pool;
pub mod procs;
pub mod report;
pub mod runner;
pub mod session;
pub mod verify;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use exec::RunAs;
pub use pass::{Pass, Passes};
pub use report::Report;

/// What `warden corpus run` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub dirs: Vec<PathBuf>,
    /// The warden binary to test (default: the running one).
    pub warden: PathBuf,
    pub rules: Option<PathBuf>,
    pub jobs: usize,
    /// Only cases whose id contains one of these substrings (all when empty).
    pub filters: Vec<String>,
    /// Longest one warden call may take before it is killed.
    pub guard: Duration,
    pub progress: bool,
    /// The passes to make (default: all).
    pub passes: Passes,
    /// Run every warden call as this unprivileged user (the runner stays root).
    pub run_as: Option<RunAs>,
}

/// Why a corpus run could not be carried out at all (as opposed to cases that failed).
#[derive(Debug)]
pub enum RunError {
    /// The corpus directories hold malformed cases: one message per file and line.
    Load(Vec<String>),
    /// Nothing matched the filters.
    NoCases,
    /// The host could not be prepared, or warden could not be called.
    Setup(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Load(errors) => {
                write!(f, "the corpus has {} problem(s):", errors.len())?;
                for error in errors {
                    write!(f, "\n  {error}")?;
                }
                Ok(())
            }
            RunError::NoCases => f.write_str("no case matches"),
            RunError::Setup(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for RunError {}

/// Loads the corpora, runs every case and returns the report.
pub fn run(options: &Options) -> Result<Report, RunError> {
    let started = Instant::now();
    let corpora = load::load(&options.dirs).map_err(RunError::Load)?;
    let mut cases = Vec::new();
    let mut infos = Vec::new();
    for corpus in &corpora {
        let selected: Vec<_> = corpus
            .cases
            .iter()
            .filter(|c| {
                options.filters.is_empty()
                    || options.filters.iter().any(|f| c.id.contains(f.as_str()))
            })
            .cloned()
            .collect();
        infos.push(report::CorpusInfo {
            name: corpus.name.clone(),
            dir: corpus.dir.display().to_string(),
            format: corpus.format,
            cases: selected.len(),
        });
        cases.extend(selected);
    }
    if cases.is_empty() {
        return Err(RunError::NoCases);
    }
    let warden = exec::Warden::new(
        options.warden.clone(),
        options.rules.clone(),
        options.guard,
        options.run_as.clone(),
    )
    .map_err(RunError::Setup)?;
    // Fail early, with the policy's own message, rather than once per case.
    warden.check_rules().map_err(RunError::Setup)?;
    if let Some(user) = &options.run_as {
        let mut files: Vec<&std::path::Path> = cases.iter().map(|c| c.file.as_path()).collect();
        files.extend(cases.iter().map(case::Case::static_file));
        files.sort();
        files.dedup();
        let unreadable = warden.unreadable(&files).map_err(RunError::Setup)?;
        if !unreadable.is_empty() {
            let shown: Vec<String> = unreadable
                .iter()
                .take(5)
                .map(|p| p.display().to_string())
                .collect();
            return Err(RunError::Setup(format!(
                "{} cannot read {} case file(s) (--run-as): {}{}",
                user.name,
                unreadable.len(),
                shown.join(", "),
                if unreadable.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            )));
        }
    }
    let settings = runner::Settings {
        warden,
        passes: options.passes.clone(),
        jobs: options.jobs,
        progress: options.progress,
    };
    let (results, notes, left_behind) = runner::run(&cases, &settings).map_err(RunError::Setup)?;
    let mut summary = Report::summarise(&results);
    summary.pool_left_behind = left_behind;
    Ok(Report {
        warden: options.warden.display().to_string(),
        rules: options.rules.as_ref().map(|r| r.display().to_string()),
        passes: options.passes.list(),
        run_as: options.run_as.as_ref().map(|u| u.name.clone()),
        jobs: options.jobs,
        wall_ms: started.elapsed().as_millis() as u64,
        corpora: infos,
        notes,
        summary,
        cases: results,
    })
}
