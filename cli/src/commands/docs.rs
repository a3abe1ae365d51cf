//! `warden completions SHELL` and `warden man`: shell completions and a manual page made by clap's
//! own generators from the command-line grammar, so they never drift from `--help`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory, ValueEnum};

use super::{exit, Cli};

/// Print a shell completion script for warden.
///
/// Load it for the running shell, or install it where the shell looks:
///   bash: `warden completions bash > /etc/bash_completion.d/warden`
///   zsh:  `warden completions zsh > "${fpath[1]}/_warden"`
///   fish: `warden completions fish > ~/.config/fish/completions/warden.fish`
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells clap_complete writes for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    #[value(name = "powershell")]
    Pwsh,
}

/// Print warden's manual pages (roff).
///
/// Without `--dir`, the page of `warden` itself goes to standard output
/// (`warden man | man -l -`); with `--dir DIR`, one page per command is written there
/// (`warden.1`, `warden-run.1`, `warden-rules-explain.1`, …), for `/usr/local/share/man/man1`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write a page for every command into DIR (made if missing).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Elvish => clap_complete::Shell::Elvish,
        Shell::Pwsh => clap_complete::Shell::PowerShell,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "warden", &mut script);
    super::out::write_all(&script);
    Ok(ExitCode::from(exit::OK))
}

pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let command = Cli::command();
    match &args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            super::out::write_all(&page);
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let mut written = 0;
            write_pages(command, dir, &mut written)?;
            eprintln!(
                "warden: {written} manual page(s) written to {}",
                dir.display()
            );
        }
    }
    Ok(ExitCode::from(exit::OK))
}

/// Writes the page of `command` and of each of its visible subcommands, depth first.
fn write_pages(
    command: clap::Command,
    dir: &std::path::Path,
    written: &mut usize,
) -> anyhow::Result<()> {
    let command = command.disable_help_subcommand(true);
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("{}-{}", command.get_name(), sub.get_name());
        let sub = sub
            .clone()
            .name(name)
            .version(command.get_version().unwrap_or_default().to_owned());
        write_pages(sub, dir, written)?;
    }
    let path = dir.join(format!("{}.1", command.get_name()));
    let mut file =
        std::fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
    clap_mangen::Man::new(command).render(&mut file)?;
    file.flush()?;
    *written += 1;
    Ok(())
}
