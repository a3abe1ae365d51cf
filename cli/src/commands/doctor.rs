//! `warden doctor`: which layers this host can enforce.

use std::process::ExitCode;

use clap::Args;

use super::RulesArg;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub rules: RulesArg,
}

pub fn run(_args: DoctorArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`warden doctor` is not implemented yet")
}
