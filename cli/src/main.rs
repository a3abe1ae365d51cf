//! The `warden` binary: parses the command line and hands each subcommand to its module.

use std::process::ExitCode;

use clap::Parser;

mod commands;

fn main() -> ExitCode {
    warden_jail::trace("main");
    let cli = commands::Cli::parse();
    match commands::dispatch(cli) {
        // Output that could not be written (not a reader that left: that is quiet) fails the
        // command whatever it decided, once it has finished (a jail torn down, files delivered).
        Ok(_) if commands::out::failure().is_some() => {
            eprintln!(
                "warden: error: {}",
                commands::out::failure().unwrap_or_default()
            );
            ExitCode::from(commands::exit::ERROR)
        }
        Ok(code) => code,
        Err(err) => {
            eprintln!("warden: error: {err:#}");
            ExitCode::from(commands::exit::ERROR)
        }
    }
}
