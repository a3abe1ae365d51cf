//! Python runtimes for the jail: virtual environments made from the system interpreter with a pinned set
//! of packages, recorded in a manifest, under a data directory the jail binds read-only.
//!
//! This module provisions and describes runtimes on the host. It does not run programs: checking a
//! runtime from inside the jail is the pipeline's business.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

/// The built-in package sets, by runtime name: `warden runtime install --name NAME` without
/// `--requirements` installs the set of that name. The texts are `rules/runtime/NAME.txt`: human-readable
/// pins; the lock with hashes is written at installation.
pub const PROFILES: &[(&str, &str)] = &[
    ("default", include_str!("../../rules/runtime/default.txt")),
    ("current", include_str!("../../rules/runtime/current.txt")),
    ("ds1000", include_str!("../../rules/runtime/ds1000.txt")),
    ("legacy", include_str!("../../rules/runtime/legacy.txt")),
];

/// The built-in requirements of the `default` runtime (the same text as `rules/runtime/default.txt`).
pub const DEFAULT_REQUIREMENTS: &str = PROFILES[0].1;

/// The built-in requirements of the runtime `name`, if warden ships a set by that name.
pub fn profile(name: &str) -> Option<&'static str> {
    PROFILES
        .iter()
        .find(|(profile, _)| *profile == name)
        .map(|(_, text)| *text)
}

/// The file, in a runtime's directory, holding the lock it was installed from (pip requirements format
/// with `--hash`: `warden runtime install --requirements` accepts it as it is).
pub const LOCK_FILE: &str = "requirements.lock";

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

    pub fn lock_path(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
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
    /// What pip resolved those requirements to, every dependency included, each with the sha256 of the
    /// wheel installed (the lock was installed with `--require-hashes`; its text is `requirements.lock`).
    #[serde(default)]
    pub lock: Vec<LockedPackage>,
    /// Size of the runtime's directory after installation.
    #[serde(default)]
    pub disk_bytes: u64,
    /// How long the installation took (venv, resolution, download and installation).
    #[serde(default)]
    pub install_seconds: u64,
    pub installed_at_unix: u64,
}

/// One distribution of a lock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LockedPackage {
    pub name: String,
    pub version: String,
    /// sha256 of the wheel, hex.
    pub sha256: String,
    /// Where pip found it.
    pub url: String,
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
    let started = std::time::Instant::now();
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
    // pip's cache (root: ~/.cache/pip) is used: a re-installation downloads nothing.
    let pip_install = || {
        let mut command = Command::new(venv.join("bin/python"));
        command
            .args([
                "-I",
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg("--only-binary=:all:");
        command
    };
    log("resolving dependencies (binary wheels only)");
    let resolution = staging.join("resolution.json");
    let output = pip_install()
        .args(["--dry-run", "--ignore-installed", "--report"])
        .arg(&resolution)
        .arg("-r")
        .arg(&requirements_path)
        .output()
        .context("cannot start pip to resolve the requirements")?;
    if !output.status.success() {
        bail!(
            "the requirements of runtime `{name}` cannot be resolved (nothing was installed):\n{}",
            pip_errors(&String::from_utf8_lossy(&output.stderr))
        );
    }
    let report = std::fs::read_to_string(&resolution)
        .with_context(|| format!("pip wrote no report at {}", resolution.display()))?;
    let lock = lock_from_report(&report)?;
    let _ = std::fs::remove_file(&resolution);
    std::fs::write(staging.join(LOCK_FILE), lock_text(name, &lock))?;
    log(&format!(
        "installing {} locked distributions (hashes checked)",
        lock.len()
    ));
    // Without `--no-deps`: pip checks that the lock holds every dependency, each with its hash.
    run(
        pip_install()
            .args(["--require-hashes", "-r"])
            .arg(staging.join(LOCK_FILE)),
        "pip install of the lock",
    )?;
    let mut check = Command::new(venv.join("bin/python"));
    check.args(["-I", "-m", "pip", "check", "--disable-pip-version-check"]);
    run(
        &mut check,
        "pip check (the installed distributions' dependencies)",
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
        lock,
        disk_bytes: disk_usage(staging),
        install_seconds: started.elapsed().as_secs(),
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

/// The lines of pip's error output that say what went wrong (its `ERROR:` lines and the conflict
/// explanation after them), or all of it when it has none.
fn pip_errors(stderr: &str) -> String {
    let start = stderr.find("ERROR:").unwrap_or(0);
    let text = stderr[start..].trim();
    let lines: Vec<&str> = text.lines().take(60).collect();
    lines.join("\n")
}

/// The lock: every distribution pip's installation report (`--report`, format version 1) says it would
/// install, with the sha256 of its archive. A local wheel without a hash in its link is hashed here.
pub fn lock_from_report(report: &str) -> anyhow::Result<Vec<LockedPackage>> {
    let report: serde_json::Value =
        serde_json::from_str(report).context("pip's installation report is not JSON")?;
    let Some(items) = report["install"].as_array() else {
        bail!("pip's installation report has no `install` list");
    };
    let mut lock = Vec::new();
    for item in items {
        let name = item["metadata"]["name"]
            .as_str()
            .context("a report entry without a name")?;
        let version = item["metadata"]["version"]
            .as_str()
            .context("a report entry without a version")?;
        let info = &item["download_info"];
        let url = info["url"].as_str().unwrap_or_default();
        let archive = &info["archive_info"];
        let sha256 = archive["hashes"]["sha256"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| {
                archive["hash"]
                    .as_str()
                    .and_then(|h| h.strip_prefix("sha256="))
                    .map(str::to_owned)
            });
        let sha256 = match sha256 {
            Some(hash) => hash,
            None => match url.strip_prefix("file://") {
                Some(path) => hash_file(Path::new(&percent_decode(path)))?,
                None => bail!("pip gave no sha256 for {name} {version} ({url}): cannot lock it"),
            },
        };
        lock.push(LockedPackage {
            name: name.to_owned(),
            version: version.to_owned(),
            sha256,
            url: url.to_owned(),
        });
    }
    lock.sort_by_key(|p| p.name.to_lowercase());
    Ok(lock)
}

/// The lock as a pip requirements file: `name==version --hash=sha256:…`, one per distribution.
pub fn lock_text(name: &str, lock: &[LockedPackage]) -> String {
    let mut text = format!(
        "# Lock of runtime `{name}`, written by `warden runtime install`: every distribution pip resolved the\n\
         # requirements to, with the sha256 of its wheel. Installed with `pip install --require-hashes`;\n\
         # `warden runtime install --requirements` accepts this file to rebuild exactly this set.\n"
    );
    for package in lock {
        text.push_str(&format!(
            "{}=={} --hash=sha256:{}\n",
            package.name, package.version, package.sha256
        ));
    }
    text
}

fn hash_file(path: &Path) -> anyhow::Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot hash {}", path.display()))?;
    // sha2 0.11's hasher is not an `io::Write`: fed by hand.
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = file
            .read(&mut buffer)
            .with_context(|| format!("cannot hash {}", path.display()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(warden_policy::settings::hex(&hasher.finalize()))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            if let Some(byte) = text
                .get(index + 1..index + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            {
                out.push(byte);
                index += 3;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Bytes of the regular files under `root` (symlinks are not followed).
fn disk_usage(root: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total += meta.len();
            }
        }
    }
    total
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_comes_from_pips_report_sorted_with_hashes() {
        let report = r#"{"version": "1", "install": [
            {"metadata": {"name": "regex", "version": "2026.11.15"},
             "download_info": {"url": "https://example.invalid/regex.whl",
                               "archive_info": {"hash": "sha256=aa", "hashes": {"sha256": "aa"}}}},
            {"metadata": {"name": "Click", "version": "8.5.1"},
             "download_info": {"url": "https://example.invalid/click.whl",
                               "archive_info": {"hash": "sha256=bb"}}}]}"#;
        let lock = lock_from_report(report).expect("lock");
        assert_eq!(
            lock.iter()
                .map(|p| (p.name.as_str(), p.sha256.as_str()))
                .collect::<Vec<_>>(),
            [("Click", "bb"), ("regex", "aa")]
        );
        let text = lock_text("t", &lock);
        assert!(
            text.contains("Click==8.5.1 --hash=sha256:bb\nregex==2026.11.15 --hash=sha256:aa\n")
        );
    }

    #[test]
    fn local_wheels_without_a_hash_are_hashed_and_remote_ones_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wheel = dir.path().join("a b+1.whl");
        std::fs::write(&wheel, b"abc").expect("write");
        let url = format!("file://{}", wheel.display())
            .replace(' ', "%20")
            .replace('+', "%2B");
        let report = format!(
            r#"{{"install": [{{"metadata": {{"name": "a", "version": "1"}}, "download_info": {{"url": "{url}", "archive_info": {{}}}}}}]}}"#
        );
        let lock = lock_from_report(&report).expect("lock");
        assert_eq!(
            lock[0].sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let remote = r#"{"install": [{"metadata": {"name": "a", "version": "1"}, "download_info": {"url": "https://x.invalid/a.whl", "archive_info": {}}}]}"#;
        assert!(lock_from_report(remote).is_err());
    }

    #[test]
    fn resolution_errors_keep_pips_explanation() {
        let stderr = "Collecting x\nERROR: Cannot install a==1 and b==2 because these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n    a 1 depends on c<2\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io\n";
        let text = pip_errors(stderr);
        assert!(text.starts_with("ERROR: Cannot install a==1"));
        assert!(text.contains("a 1 depends on c<2"));
    }

    #[test]
    fn every_shipped_set_is_fully_pinned() {
        for (name, text) in PROFILES {
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                assert!(line.contains("=="), "{name}: `{line}` is not pinned");
            }
        }
        assert_eq!(profile("default"), Some(DEFAULT_REQUIREMENTS));
        assert!(profile("nope").is_none());
    }

    /// The two generations of model code (issue 26): `default` pins pandas 2.2 (what recent models write),
    /// `legacy` the previous default, pandas 1.5; every other pin is the same in both, so a program that
    /// fails on one and passes on the other differs by pandas alone (docs/compatibility.md).
    #[test]
    fn legacy_differs_from_default_only_in_pandas() {
        let pins = |text: &'static str| -> Vec<&'static str> {
            text.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .collect()
        };
        let default = pins(DEFAULT_REQUIREMENTS);
        let legacy = pins(profile("legacy").expect("a legacy set ships"));
        assert!(default.contains(&"pandas==2.2.3"), "{default:?}");
        assert!(legacy.contains(&"pandas==1.5.3"), "{legacy:?}");
        let rest = |set: &[&'static str]| -> Vec<&'static str> {
            set.iter()
                .copied()
                .filter(|pin| !pin.starts_with("pandas=="))
                .collect()
        };
        assert_eq!(rest(&default), rest(&legacy));
    }
}
