//! `warden run`: check, jail, validate.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::RulesArg;

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
    /// Program to run, or `-` for standard input.
    pub program: PathBuf,
}

pub fn run(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`warden run` is not implemented yet")
}
