//! One module per subcommand; this file holds the command-line grammar and the dispatch.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod check;
mod corpus;
mod docs;
mod doctor;
pub mod exit;
mod http_client;
pub mod out;
mod repl;
mod review;
mod rules;
mod run;
mod runtime;
mod serve;

/// warden: a gateway for Python written by language models.
///
/// Every program goes through a static policy check, runs in a Linux jail (namespaces, seccomp,
/// Landlock, cgroups) and has its output validated. One rules file drives all three.
///
/// Exit codes: 0 allowed / ok; 1 denied, needs review, or the run did not succeed; 2 usage,
/// configuration or internal error.
#[derive(Debug, Parser)]
#[command(name = "warden", version = warden_service::VERSION, about, long_about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    // About and long help: the doc comment of the arguments struct.
    Check(check::CheckArgs),
    // About and long help: the doc comment of the arguments struct.
    Run(run::RunArgs),
    // About and long help: the doc comment of the arguments struct.
    Repl(repl::ReplArgs),
    /// Validate, explain and test rules files.
    #[command(subcommand)]
    Rules(rules::RulesCommand),
    // About and long help: the doc comment of the arguments struct.
    Doctor(doctor::DoctorArgs),
    // About and long help: the doc comment of the arguments struct.
    Corpus(corpus::CorpusArgs),
    /// Provision and inspect the Python runtimes programs run with.
    #[command(subcommand)]
    Runtime(runtime::RuntimeCommand),
    // About and long help: the doc comment of the arguments struct.
    Serve(serve::ServeArgs),
    /// Approve or reject the programs a running `warden serve` holds for review.
    ///
    /// A program the policy sends to review is held by the server with an id; once a person
    /// approves it, its submitter may run it by that id, once (docs/serve.md, "Review"). These
    /// commands talk to the server over its Unix socket, where the server's own user and root may
    /// approve. Exit codes: 0 done; 1 the server refused (no such review, not in the right state,
    /// not allowed); 2 the server could not be reached or answered wrongly.
    #[command(subcommand)]
    Review(review::ReviewCommand),
    // About and long help: the doc comment of the arguments struct.
    Mcp(serve::McpArgs),
    // About and long help: the doc comment of the arguments struct.
    Completions(docs::CompletionsArgs),
    // About and long help: the doc comment of the arguments struct.
    Man(docs::ManArgs),
    /// Run one job for `warden serve` / `warden mcp` (internal).
    #[command(hide = true)]
    Worker(serve::WorkerArgs),
    /// Hold one session for `warden serve` / `warden mcp` (internal).
    #[command(hide = true)]
    SessionWorker(serve::WorkerArgs),
}

/// `--rules FILE`, shared by the commands that judge or run code.
#[derive(Debug, Clone, Args)]
pub struct RulesArg {
    /// Rules file to apply (default: the built-in policy, the same text as rules/default.toml).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
}

impl RulesArg {
    /// Loads the policy named on the command line, or the built-in default, with the identity index
    /// `warden runtime check` wrote for it and its runtime, if any.
    pub fn load(&self) -> anyhow::Result<warden_policy::Policy> {
        let mut policy = self.load_without_index()?;
        warden_gateway::runtime_check::attach_index(&mut policy)?;
        Ok(policy)
    }

    /// The policy alone (what `warden runtime check` builds the index from).
    pub fn load_without_index(&self) -> anyhow::Result<warden_policy::Policy> {
        let policy = match &self.rules {
            Some(path) => warden_policy::Policy::from_file(path).map_err(|err| {
                anyhow::anyhow!(
                    "invalid rules file:\n{}",
                    err.render(&path.display().to_string())
                )
            })?,
            None => warden_policy::Policy::builtin_default()
                .map_err(|err| anyhow::anyhow!("built-in policy is invalid (a bug): {err}"))?,
        };
        Ok(policy)
    }
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Run(args) => run::run(args),
        Command::Repl(args) => repl::run(args),
        Command::Rules(command) => rules::run(command),
        Command::Doctor(args) => doctor::run(args),
        Command::Runtime(command) => runtime::run(command),
        Command::Corpus(args) => corpus::run(args),
        Command::Serve(args) => serve::serve(args),
        Command::Review(command) => review::run(command),
        Command::Mcp(args) => serve::mcp(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
        Command::Worker(args) => serve::worker(args),
        Command::SessionWorker(args) => serve::session_worker(args),
    }
}
