//! `warden runtime`: provision and inspect the Python environments the jail runs programs with.

use super::out::{out, outln};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use warden_gateway::runtime;

#[derive(Debug, Subcommand)]
pub enum RuntimeCommand {
    /// Create (or replace) a runtime: a virtual environment from the system interpreter with pinned packages.
    ///
    /// pip resolves the requirements with their dependencies (binary wheels only; a conflict or a
    /// missing version is an error and nothing is installed), warden writes the result as a lock with
    /// the sha256 of every wheel (runtimes/NAME/requirements.lock, shown by `warden runtime show`), and
    /// pip installs exactly that lock with `--require-hashes`. Runtimes live under $WARDEN_DATA_DIR
    /// (default /var/lib/warden as root, else ~/.local/share/warden) in runtimes/NAME; the jail binds
    /// them read-only.
    Install {
        /// Runtime name, as rules files refer to it (`[runtime] name = "..."`).
        #[arg(long, default_value = "default")]
        name: String,
        /// Base interpreter (must be a real binary, not a shell shim).
        #[arg(long, default_value = "/usr/bin/python3")]
        python: PathBuf,
        /// Requirements file, pip format (a lock written by a previous installation works too). Default:
        /// the built-in set named like the runtime: `default` (rules/runtime/default.txt), `current`
        /// (rules/runtime/current.txt), `legacy` (rules/runtime/legacy.txt: pandas 1.5) or `ds1000`.
        #[arg(long, value_name = "FILE")]
        requirements: Option<PathBuf>,
    },
    /// List installed runtimes.
    List,
    /// Print a runtime's manifest (interpreter, packages and versions, the lock with hashes, disk size
    /// and install time) as JSON.
    Show {
        #[arg(default_value = "default")]
        name: String,
        /// Print the lock instead (pip requirements format with hashes: `install --requirements` takes it).
        #[arg(long)]
        lock: bool,
    },
    /// Remove a runtime.
    Remove { name: String },
    /// Import, inside the jail, every module the policy allows; report missing or broken ones and
    /// re-exported modules the policy's name guards would not catch; write the identity index. Exit 1
    /// when any import fails.
    ///
    /// The identity index lists every attribute path under the allowed modules that is the same object
    /// as a name the policy bans (`seaborn.utils.urlopen` is `urllib.request.urlopen`). It is written
    /// beside the runtime (`runtimes/NAME/identity/<policy sha256>.json`); `warden check` and
    /// `warden run` load it for that policy and runtime and judge such a path as the banned object.
    Check {
        #[command(flatten)]
        rules: super::RulesArg,
        /// Print the facts (imports and every re-export found) as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: RuntimeCommand) -> anyhow::Result<ExitCode> {
    match command {
        RuntimeCommand::Install {
            name,
            python,
            requirements,
        } => {
            let requirements = match requirements {
                Some(path) => std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read requirements {}", path.display()))?,
                None => runtime::profile(&name)
                    .with_context(|| {
                        let names: Vec<&str> = runtime::PROFILES.iter().map(|(n, _)| *n).collect();
                        format!(
                            "warden ships no package set named `{name}` (built-in: {}); give --requirements FILE",
                            names.join(", ")
                        )
                    })?
                    .to_owned(),
            };
            let manifest = runtime::install(&name, &python, &requirements, &mut |step| {
                eprintln!("warden: {step}")
            })?;
            let root = runtime::Runtime::named(&name)?.root;
            outln!(
                "runtime `{}` installed at {} (Python {}, {} packages, {} MB, {} s); lock: {}",
                manifest.name,
                root.display(),
                manifest.python_version,
                manifest.packages.len(),
                manifest.disk_bytes / 1_000_000,
                manifest.install_seconds,
                root.join(runtime::LOCK_FILE).display()
            );
        }
        RuntimeCommand::List => {
            for name in runtime::list() {
                outln!("{name}");
            }
        }
        RuntimeCommand::Show { name, lock } => {
            let runtime = runtime::Runtime::named(&name)?;
            let manifest = runtime.manifest()?;
            if lock {
                let path = runtime.lock_path();
                let text = std::fs::read_to_string(&path).with_context(|| {
                    format!(
                        "runtime `{name}` has no lock ({} missing): it was installed by an older warden; reinstall it",
                        path.display()
                    )
                })?;
                out!("{text}");
            } else {
                outln!("{}", serde_json::to_string_pretty(&manifest)?);
            }
        }
        RuntimeCommand::Check { rules, json } => return check(&rules, json),
        RuntimeCommand::Remove { name } => {
            runtime::remove(&name)?;
            outln!("runtime `{name}` removed");
        }
    }
    Ok(ExitCode::from(super::exit::OK))
}

fn check(rules: &super::RulesArg, json: bool) -> anyhow::Result<ExitCode> {
    let policy = rules.load_without_index()?;
    let facts = warden_gateway::runtime_check::probe(&policy)?;
    let unguarded = warden_gateway::runtime_check::unguarded_reexports(&policy, &facts);
    let aliases = warden_gateway::runtime_check::banned_aliases(&policy, &facts);
    let index = warden_gateway::runtime_check::write_index(&policy, &aliases)?;
    let failed: Vec<(&String, &String)> = facts
        .imports
        .iter()
        .filter(|(_, result)| *result != "ok")
        .collect();
    if json {
        outln!(
            "{}",
            serde_json::json!({"imports": facts.imports, "reexports": facts.reexports,
                "unguarded_reexports": unguarded, "aliases": aliases, "index": index})
        );
    } else {
        let ok = facts.imports.len() - failed.len();
        outln!(
            "{ok} of {} allowed modules import in the jail",
            facts.imports.len()
        );
        for (name, result) in &failed {
            outln!("  {name}: {result}");
        }
        outln!(
            "{} re-exported modules found; {} not guarded by name:",
            facts.reexports.len(),
            unguarded.len()
        );
        for (path, real) in &unguarded {
            outln!("  {path} is the module {real}");
        }
        outln!(
            "{} second paths to banned objects (not banned by name):",
            aliases.len()
        );
        for (path, banned) in &aliases {
            outln!("  {path} is {banned}");
        }
        match &index {
            Some(path) => outln!("identity index written to {}", path.display()),
            None => outln!("no identity index: the policy names an interpreter, not a runtime"),
        }
    }
    Ok(ExitCode::from(if failed.is_empty() {
        super::exit::OK
    } else {
        super::exit::FAILED
    }))
}
