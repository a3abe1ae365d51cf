//! `warden rules`: validate, explain and test rules files.

use super::out::outln;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use warden_policy::rules::runtime::{runtime_rule, sink_note, RUNTIME_RULES};
use warden_policy::{Policy, Rule};

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Validate a rules file: unknown keys, bad values and bad patterns are errors with line and column.
    Check {
        /// Rules file to validate.
        file: PathBuf,
    },
    /// Print a rule's documentation; without an id, list every rule.
    Explain {
        /// Rule id (e.g. ATTR301) or name (e.g. dunder-attribute).
        id: Option<String>,
    },
    /// Run annotated fixtures against a rules file.
    ///
    /// Each `*.py` fixture marks the lines that must produce findings with a trailing comment
    /// `# expect: RULE[, RULE…]`. Every other line must produce none, and every finding must be
    /// expected. Exit status 0 when all fixtures pass, 1 otherwise.
    Test {
        /// Rules file to apply.
        file: PathBuf,
        /// Directory of fixtures.
        dir: PathBuf,
    },
    /// Print the JSON Schema of the rules file (for editor completion).
    Schema,
}

pub fn run(command: RulesCommand) -> anyhow::Result<ExitCode> {
    match command {
        RulesCommand::Check { file } => check(&file),
        RulesCommand::Explain { id } => explain(id.as_deref()),
        RulesCommand::Test { file, dir } => test(&file, &dir),
        RulesCommand::Schema => {
            outln!(
                "{}",
                serde_json::to_string_pretty(&warden_policy::settings::json_schema())?
            );
            Ok(ExitCode::from(super::exit::OK))
        }
    }
}

fn load(file: &Path) -> anyhow::Result<Policy> {
    Policy::from_file(file)
        .map_err(|err| anyhow::anyhow!("{}", err.render(&file.display().to_string())))
}

fn check(file: &Path) -> anyhow::Result<ExitCode> {
    let policy = load(file)?;
    let interpreter = match &policy.interpreter {
        warden_policy::settings::InterpreterSource::Runtime(name) => format!("runtime `{name}`"),
        warden_policy::settings::InterpreterSource::Path(path) => format!("interpreter {path}"),
    };
    outln!(
        "{}: valid policy `{}` (sha256 {}), {interpreter}, {} allowed import patterns, {} denied, {} banned references",
        file.display(),
        policy.name,
        policy.sha256,
        policy.imports.allow.len(),
        policy.imports.deny.len(),
        policy.denied_references.len(),
    );
    for warning in shadowed_allows(&policy) {
        eprintln!("{}: warning: {warning}", file.display());
    }
    Ok(ExitCode::from(super::exit::OK))
}

/// Allow patterns that a deny pattern of the same policy overrides (`extends = "default"` with
/// `allow = ["requests"]`: the default denies `requests`, and a deny wins), each in words.
fn shadowed_allows(policy: &Policy) -> Vec<String> {
    policy
        .imports
        .allowed_list()
        .into_iter()
        .filter(|pattern| {
            let base = pattern.strip_suffix(".*").unwrap_or(pattern);
            let segments: Vec<&str> = base.split('.').collect();
            policy.imports.deny.any_matches(&segments)
        })
        .map(|pattern| {
            let base = pattern.strip_suffix(".*").unwrap_or(&pattern).to_owned();
            format!(
                "`imports.allow` has `{pattern}`, which `imports.deny` also matches: a deny wins, so `{base}` stays denied; \
                 to allow it, take the deny out (`[remove.imports] deny = [\"{base}\"]` in a file that extends another) or drop the allow entry"
            )
        })
        .collect()
}

fn explain(id: Option<&str>) -> anyhow::Result<ExitCode> {
    let Some(id) = id else {
        for rule in Rule::ALL {
            outln!(
                "{:<8} {:<22} {:<11} {:<8} {}",
                rule.id(),
                rule.name(),
                rule.family(),
                rule.severity().as_str(),
                rule.default_action().as_str()
            );
        }
        // The runtime layer's own ids (a record's `stopped_by.rule`); it enforces them whatever
        // `[actions]` says, which takes static rules only.
        for rule in RUNTIME_RULES {
            outln!(
                "{:<8} {:<22} {:<11} {:<8} {}",
                rule.id,
                rule.name,
                "runtime",
                "high",
                "deny"
            );
        }
        return Ok(ExitCode::from(super::exit::OK));
    };
    if let Some(rule) = runtime_rule(id) {
        outln!("{}", rule.doc.trim_end());
        outln!("\nEnforced by the runtime layer (the audit hook): always deny; not an `[actions]` key.");
        return Ok(ExitCode::from(super::exit::OK));
    }
    let rule = Rule::from_id(id)
        .with_context(|| format!("unknown rule {id:?}; `warden rules explain` lists every rule"))?;
    outln!("{}", rule.doc().trim_end());
    if let Some(note) = sink_note(rule.id()) {
        outln!("\n{note}");
    }
    outln!(
        "\nSeverity: {}. Default action: {}.",
        rule.severity().as_str(),
        rule.default_action().as_str()
    );
    Ok(ExitCode::from(super::exit::OK))
}

fn test(file: &Path, dir: &Path) -> anyhow::Result<ExitCode> {
    let policy = load(file)?;
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read fixture directory {}", dir.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "py"))
        .collect();
    fixtures.sort();
    if fixtures.is_empty() {
        anyhow::bail!("no *.py fixtures in {}", dir.display());
    }
    let mut failures = 0;
    for fixture in &fixtures {
        let bytes =
            std::fs::read(fixture).with_context(|| format!("cannot read {}", fixture.display()))?;
        let problems = warden_policy::fixtures::run_fixture(&bytes, &policy);
        if problems.is_empty() {
            outln!("ok    {}", fixture.display());
        } else {
            failures += 1;
            outln!("FAIL  {}", fixture.display());
            for problem in problems {
                outln!("      {problem}");
            }
        }
    }
    outln!("{} passed, {failures} failed", fixtures.len() - failures);
    Ok(ExitCode::from(if failures == 0 {
        super::exit::OK
    } else {
        super::exit::FAILED
    }))
}
