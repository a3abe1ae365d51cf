//! `warden-corpus` (run as `warden corpus ...`): attack and benign corpora through each layer, and the
//! matrix of which layers held.
//!
//! A binary of its own so that the runner is never linked into the `warden` binary that checks and
//! runs programs; `warden corpus` executes this one from the same directory.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use warden_corpus::{report, Options, Pass, Passes, RunAs, RunError};

/// Exit codes, as `warden` uses them.
mod exit {
    pub const OK: u8 = 0;
    pub const FAILED: u8 = 1;
    pub const ERROR: u8 = 2;
}

/// Run attack and benign corpora through each layer and report which layers hold.
#[derive(Debug, Parser)]
#[command(name = "warden corpus", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: CorpusCommand,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("warden: error: {err:#}");
            ExitCode::from(exit::ERROR)
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Run corpora: each attack through the policy alone, the runtime layer alone, the jail alone
    /// and the full pipeline.
    ///
    /// DIR is a directory of cases in warden's header format (searched recursively; see
    /// corpus/README.md) or a directory with an index.jsonl (the external corpora of
    /// ../shared/corpora). Every attack is checked from the host side: canaries, listeners on the
    /// loopback, host processes, file snapshots. Never run attack files outside warden.
    ///
    /// --passes picks the passes (default all four): `--passes jail` runs every attack in the
    /// jail with the policy and the runtime hooks off and nothing else (benign and harmless
    /// programs run there too); `--passes runtime` runs every attack with the policy off and the
    /// runtime hooks on (a case's `expect-runtime` rule must be the one that stops it); `pool`
    /// (never by default) starts a `warden serve` with its warm pool on and the static layer off
    /// and sends every attack through it over HTTP (each must run in a pooled jail, `"warm":
    /// true`, with every host-side check holding); the report's per-case columns, matrix and totals show only the passes that ran, and the JSON
    /// report lists them in `passes`. A warden without runtime hooks (no `run --no-hooks`) skips
    /// the runtime pass, and the report says so. --run-as USER starts every warden call as that
    /// unprivileged user (its uid and gid, no supplementary groups, a HOME and TMPDIR of its own)
    /// while the runner stays root for the host-side checks; the user must be able to read the
    /// cases and the rules file.
    ///
    /// Exit status: 0 when every case met its expectation; 1 on any escape (an attack not contained
    /// with the policy off), benign regression or broken expectation; 2 when the corpus is
    /// malformed or the run could not be set up.
    Run(CorpusRunArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CorpusFormat {
    /// One line per case, the mismatches with their evidence, then the matrix.
    Human,
    /// The whole report as one JSON document.
    Json,
    /// JUnit XML (one test suite per corpus and group).
    Junit,
    /// The Markdown matrix (corpus/REPORT.md).
    Markdown,
}

#[derive(Debug, Args)]
pub struct CorpusRunArgs {
    /// Rules file to apply (default: the built-in policy of the warden binary under test).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = CorpusFormat::Human)]
    pub format: CorpusFormat,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a JUnit XML report to FILE (for CI artefacts), whatever --format says.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Cases run in parallel (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// The warden binary under test (default: `warden` in this program's directory).
    #[arg(long, value_name = "PATH")]
    pub warden: Option<PathBuf>,
    /// Only run cases whose id contains SUBSTRING (repeatable).
    #[arg(long = "only", value_name = "SUBSTRING")]
    pub only: Vec<String>,
    /// Kill a single warden call after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 180)]
    pub guard_seconds: u64,
    /// Print a line per finished case on standard error (default: when it is a terminal).
    #[arg(long)]
    pub progress: bool,
    /// The passes to make, comma-separated; the report shows only these.
    #[arg(
        long,
        value_name = "LIST",
        value_enum,
        value_delimiter = ',',
        default_value = "policy,runtime,jail,full"
    )]
    pub passes: Vec<Pass>,
    /// Run every warden call as USER, an unprivileged account (the runner must be root; it keeps
    /// the host-side checks).
    #[arg(long, value_name = "USER")]
    pub run_as: Option<String>,
    /// Corpus directories (warden's header format, or a directory with an index.jsonl).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

fn run(command: CorpusCommand) -> anyhow::Result<ExitCode> {
    match command {
        CorpusCommand::Run(args) => run_corpus(args),
    }
}

fn run_corpus(args: CorpusRunArgs) -> anyhow::Result<ExitCode> {
    let warden = match args.warden {
        Some(path) => path,
        None => std::env::current_exe()
            .context("cannot find the running binary")?
            .with_file_name("warden"),
    };
    if let Some(rules) = &args.rules {
        // Checked by warden itself (as the --run-as user) before any case runs.
        anyhow::ensure!(rules.is_file(), "rules file {} not found", rules.display());
    }
    let passes = Passes::new(args.passes).context("--passes names no pass")?;
    let run_as = args
        .run_as
        .as_deref()
        .map(RunAs::lookup)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let options = Options {
        dirs: args.dirs,
        warden,
        rules: args.rules.clone(),
        jobs,
        filters: args.only,
        guard: Duration::from_secs(args.guard_seconds.max(1)),
        progress: args.progress || std::io::stderr().is_terminal(),
        passes,
        run_as,
    };
    let report = match warden_corpus::run(&options) {
        Ok(report) => report,
        Err(err @ (RunError::Load(_) | RunError::NoCases | RunError::Setup(_))) => {
            eprintln!("warden: error: {err}");
            return Ok(ExitCode::from(exit::ERROR));
        }
    };
    let text = match args.format {
        CorpusFormat::Human => report::human(&report),
        CorpusFormat::Json => report::json(&report)?,
        CorpusFormat::Junit => report::junit(&report),
        CorpusFormat::Markdown => report::markdown(&report),
    };
    match &args.output {
        Some(path) => write_file(path, &text)?,
        None => std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .context("cannot write the report")?,
    }
    if let Some(path) = &args.junit {
        write_file(path, &report::junit(&report))?;
    }
    Ok(ExitCode::from(if report.passed() {
        exit::OK
    } else {
        exit::FAILED
    }))
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
