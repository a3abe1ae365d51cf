//! The `warden` binary: parses the command line and hands each subcommand to its module.

use std::process::ExitCode;

use clap::Parser;

mod commands;

fn main() -> ExitCode {
    warden_jail::trace("main");
    let cli = commands::Cli::parse();
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("warden: error: {err:#}");
            ExitCode::from(commands::exit::ERROR)
        }
    }
}
