//! `warden corpus`: run attack and benign corpora through each layer and report the matrix.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

use super::RulesArg;

#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Run corpora: each attack through the policy alone, the jail alone and the full pipeline.
    Run(CorpusRunArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CorpusFormat {
    Human,
    Json,
    Junit,
    Markdown,
}

#[derive(Debug, Args)]
pub struct CorpusRunArgs {
    #[command(flatten)]
    pub rules: RulesArg,
    /// Report format.
    #[arg(long, value_enum, default_value_t = CorpusFormat::Human)]
    pub format: CorpusFormat,
    /// Corpus directories (warden's header format, or a directory with an index.jsonl).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

pub fn run(command: CorpusCommand) -> anyhow::Result<ExitCode> {
    match command {
        CorpusCommand::Run(_args) => anyhow::bail!("`warden corpus run` is not implemented yet"),
    }
}
