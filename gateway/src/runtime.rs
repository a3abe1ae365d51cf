//! Python runtimes for the jail: virtual environments made from the system interpreter with a pinned set
//! of packages, recorded in a manifest, under a data directory the jail binds read-only.
//!
//! This module provisions and describes runtimes on the host. It does not run programs: checking a
//! runtime from inside the jail is the pipeline's business.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

/// The built-in requirements of the `default` runtime (the same text as `rules/runtime/default.txt`).
pub const DEFAULT_REQUIREMENTS: &str = include_str!("../../rules/runtime/default.txt");

/// Where runtimes live: `$WARDEN_DATA_DIR`, else `/var/lib/warden` for root, else
/// `$XDG_DATA_HOME/warden` or `~/.local/share/warden`.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WARDEN_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if nix_is_root() {
        return PathBuf::from("/var/lib/warden");
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("warden");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".local/share/warden")
}

fn nix_is_root() -> bool {
    // The effective uid, read without unsafe code.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Uid:"))
                .and_then(|line| line.split_whitespace().nth(2).map(|uid| uid == "0"))
        })
        .unwrap_or(false)
}

/// A runtime's files.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub name: String,
    /// `<data>/runtimes/<name>`: bound read-only into the jail.
    pub root: PathBuf,
}

impl Runtime {
    pub fn named(name: &str) -> anyhow::Result<Self> {
        if name.is_empty()
            || name.starts_with('.')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            bail!("invalid runtime name {name:?}: use letters, digits, `-`, `_` and `.`");
        }
        Ok(Self {
            name: name.to_owned(),
            root: data_dir().join("runtimes").join(name),
        })
    }

    /// The interpreter to execute: the venv's `bin/python` (a symlink to the base interpreter; executing
    /// it by this path is what makes Python find `pyvenv.cfg` and the runtime's packages).
    pub fn python(&self) -> PathBuf {
        self.root.join("venv/bin/python")
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("manifest.json")
    }

    pub fn manifest(&self) -> anyhow::Result<Manifest> {
        let path = self.manifest_path();
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "runtime `{}` is not installed ({} missing); run `warden runtime install --name {}`",
                self.name,
                path.display(),
                self.name
            )
        })?;
        serde_json::from_str(&text).with_context(|| format!("corrupt manifest {}", path.display()))
    }
}

/// What a runtime holds, written at installation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    /// The base interpreter the venv was made from (resolved, absolute).
    pub base_interpreter: String,
    /// The base interpreter's installation prefix (bound read-only into the jail).
    pub base_prefix: String,
    pub python_version: String,
    /// Installed distributions and their versions.
    pub packages: Vec<Package>,
    /// The requirements text the runtime was installed from.
    pub requirements: String,
    pub installed_at_unix: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub version: String,
}

/// Resolves the base interpreter with the jail's own check (absolute, real ELF binary: shell shims such
/// as pyenv's are refused), so a runtime is never built from something the jail would refuse.
pub fn validate_interpreter(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(warden_jail::resolve_interpreter(path)?.real)
}

/// Installs (or replaces) a runtime. The new runtime is built beside the old one and swapped in only once
/// complete, so a failed installation never leaves a broken runtime behind.
pub fn install(
    name: &str,
    python: &Path,
    requirements: &str,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Manifest> {
    let runtime = Runtime::named(name)?;
    let base = validate_interpreter(python)?;
    let parent = runtime
        .root
        .parent()
        .context("runtime directory has no parent")?
        .to_path_buf();
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = parent.join(format!(".{name}.staging-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("cannot remove {}", staging.display()))?;
    }
    let result = build(&staging, name, python, &base, requirements, log);
    let manifest = match result {
        Ok(manifest) => manifest,
        Err(err) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(err);
        }
    };
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if runtime.root.exists() {
        std::fs::rename(&runtime.root, &old)
            .with_context(|| format!("cannot move aside {}", runtime.root.display()))?;
    }
    std::fs::rename(&staging, &runtime.root)
        .with_context(|| format!("cannot install {}", runtime.root.display()))?;
    if old.exists() {
        std::fs::remove_dir_all(&old)
            .with_context(|| format!("cannot remove {}", old.display()))?;
    }
    // The venv's paths were made for the staging directory; pyvenv.cfg does not record it, and scripts
    // in bin/ are not used by the jail, so the rename is safe.
    Ok(manifest)
}

fn run(command: &mut Command, what: &str) -> anyhow::Result<String> {
    let output = command
        .output()
        .with_context(|| format!("cannot start {what}"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn build(
    staging: &Path,
    name: &str,
    python: &Path,
    base: &Path,
    requirements: &str,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Manifest> {
    let venv = staging.join("venv");
    log(&format!(
        "creating a virtual environment from {}",
        base.display()
    ));
    run(
        Command::new(python).args(["-I", "-m", "venv"]).arg(&venv),
        "python -m venv (Debian: apt-get install python3-venv)",
    )?;
    let requirements_path = staging.join("requirements.txt");
    std::fs::write(&requirements_path, requirements)?;
    log("installing pinned packages from binary wheels");
    run(
        Command::new(venv.join("bin/python"))
            .args([
                "-I",
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-cache-dir",
            ])
            .args(["--only-binary=:all:", "--no-deps", "-r"])
            .arg(&requirements_path),
        "pip install",
    )?;
    let report = run(
        Command::new(venv.join("bin/python")).args([
            "-I",
            "-c",
            "import json, sys, importlib.metadata as m\n\
             print(json.dumps({'version': sys.version.split()[0], 'base_prefix': sys.base_prefix,\n\
             'packages': sorted(({'name': d.metadata['Name'], 'version': d.version} for d in m.distributions()), key=lambda p: p['name'].lower())}))",
        ]),
        "reading installed packages",
    )?;
    let facts: serde_json::Value =
        serde_json::from_str(report.trim()).context("unexpected package report")?;
    let packages = facts["packages"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|p| {
                    Some(Package {
                        name: p["name"].as_str()?.to_owned(),
                        version: p["version"].as_str()?.to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let manifest = Manifest {
        name: name.to_owned(),
        base_interpreter: base.display().to_string(),
        base_prefix: facts["base_prefix"].as_str().unwrap_or("/usr").to_owned(),
        python_version: facts["version"].as_str().unwrap_or_default().to_owned(),
        packages,
        requirements: requirements.to_owned(),
        installed_at_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    std::fs::write(
        staging.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(manifest)
}

/// Names of installed runtimes.
pub fn list() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir().join("runtimes"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Removes a runtime.
pub fn remove(name: &str) -> anyhow::Result<()> {
    let runtime = Runtime::named(name)?;
    if !runtime.root.exists() {
        bail!("runtime `{name}` is not installed");
    }
    std::fs::remove_dir_all(&runtime.root)
        .with_context(|| format!("cannot remove {}", runtime.root.display()))
}
