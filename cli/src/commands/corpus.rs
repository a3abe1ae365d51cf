//! `warden corpus`: hands over to the `warden-corpus` binary in the same directory.
//!
//! The corpus runner is a program of its own (crate `corpus/`), so the code that checks and runs
//! programs (`warden check`, `warden run`, `warden serve`) never links it. Arguments pass through
//! unchanged; `warden corpus --help` is the runner's help.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

use anyhow::Context;
use clap::Args;

/// Run attack and benign corpora through each layer and report which layers hold.
///
/// `warden corpus run [--rules FILE] [--format human|json|junit|markdown] DIR...`: every attack goes
/// through the policy alone, the jail alone and the full pipeline, its effects judged from the host
/// side; every benign program must run to its expected output. This is the `warden-corpus` program
/// beside `warden`; `warden corpus run --help` lists its options.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct CorpusArgs {
    /// The runner's arguments (`run ...`; `--help` for its help).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<OsString>,
}

pub fn run(args: CorpusArgs) -> anyhow::Result<ExitCode> {
    let warden = std::env::current_exe().context("cannot find the running warden binary")?;
    let runner = warden.with_file_name("warden-corpus");
    anyhow::ensure!(
        runner.is_file(),
        "the corpus runner {} is not installed next to warden (build it with `cargo build --release -p warden-corpus`)",
        runner.display()
    );
    // The runner tests the `warden` in its own directory by default: this one.
    let err = Command::new(&runner).args(&args.args).exec();
    Err(anyhow::anyhow!("cannot run {}: {err}", runner.display()))
}
