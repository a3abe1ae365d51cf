//! The jail's settings: what one run may use, validated before anything touches the kernel.
//!
//! Owns: the plain-data [`Config`] the caller fills (warden's CLI maps the rules file to it) and its
//! validation. Does not own: reading rules files (the policy crate does that), nor deciding *how* a
//! setting is enforced (that is [`crate::Plan`]).

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::JailError;

/// The directory the program runs in, as the program sees it.
pub const WORKDIR: &str = "/work";

/// Where the program text is placed inside the jail (read-only).
pub const PROGRAM_PATH: &str = "/run/warden/main.py";

/// warden's bootstrap, the file the interpreter runs (read-only): `bootstrap.py` beside this file.
pub const BOOTSTRAP_PATH: &str = "/run/warden/bootstrap.py";

/// Where warden's native module is bound (read-only), under the name CPython imports it by.
pub const NATIVE_MODULE_PATH: &str = "/run/warden/lib/_warden_hook.abi3.so";

/// The audit hook's settings (read-only JSON).
pub const HOOK_SETTINGS_PATH: &str = "/run/warden/hook.json";

/// What warden's bootstrap does inside the interpreter before the program runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bootstrap {
    /// Host path of warden's native module (`libwarden_hook.so`), bound read-only at
    /// [`NATIVE_MODULE_PATH`]. Required by the two settings below.
    pub native_module: Option<PathBuf>,
    /// The runtime layer: the audit hook's settings (JSON, opaque to the jail), placed at
    /// [`HOOK_SETTINGS_PATH`]; `None`: no audit hook.
    pub hook_settings: Option<String>,
    /// Forbid execve and process creation once the interpreter runs (seccomp; Landlock's execute
    /// right where the kernel has Landlock).
    pub ban_exec: bool,
    /// Session mode: the bootstrap does not run a program; it reads cells from its standard input
    /// and answers each with one line on its standard output (see [`crate::Session`]).
    pub session: bool,
    /// Template mode (with `session`): the interpreter becomes a warm pool's template after its
    /// preload (`template.rs`). It keeps the init's capabilities in the jail's user namespace and
    /// gets no Landlock, seccomp filter or rlimits of its own — each run forked from it is confined
    /// before it returns into the interpreter — and it runs no untrusted code. Its standard input is
    /// a socket (fork requests carry descriptors).
    #[serde(default)]
    pub template: bool,
    /// The program's name as its author knows it (`analysis.py`, `<stdin>`): the bootstrap compiles
    /// the program under it, so tracebacks and warnings show it instead of [`PROGRAM_PATH`]. A name
    /// the runtime layer would take for library code (absolute, `<frozen …`) is not used.
    #[serde(default)]
    pub program_name: Option<String>,
}

/// A confinement layer a policy can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Namespaces,
    Seccomp,
    Landlock,
    Cgroup,
    Rlimits,
}

impl Layer {
    /// Every layer, in the order reports list them.
    pub const ALL: [Layer; 5] = [
        Layer::Namespaces,
        Layer::Seccomp,
        Layer::Landlock,
        Layer::Cgroup,
        Layer::Rlimits,
    ];

    /// The layer's name as rules files and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Namespaces => "namespaces",
            Layer::Seccomp => "seccomp",
            Layer::Landlock => "landlock",
            Layer::Cgroup => "cgroup",
            Layer::Rlimits => "rlimits",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Resource limits of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock time from spawn to exit; the whole tree is killed when it runs out.
    pub wall_time_ms: u64,
    /// CPU time of the whole tree (cgroup) and of each process (RLIMIT_CPU).
    pub cpu_time_ms: u64,
    /// Memory of the whole tree, page cache and tmpfs included (cgroup; RLIMIT_AS without one).
    pub memory_bytes: u64,
    /// Processes and threads of the whole tree, the jail's init included (cgroup; RLIMIT_NPROC
    /// without one).
    pub pids: u64,
    /// Captured standard output; more is counted and discarded.
    pub stdout_bytes: u64,
    /// Captured standard error; more is counted and discarded.
    pub stderr_bytes: u64,
    /// Largest file the program may write (RLIMIT_FSIZE).
    pub file_size_bytes: u64,
    /// Open descriptors per process (RLIMIT_NOFILE).
    pub open_files: u64,
    /// Size of the private `/tmp`.
    pub tmp_bytes: u64,
    /// Size of the private work dir (`/work`).
    pub work_bytes: u64,
    /// Files copied back from the work dir (the rest are refused; see `mirror.rs`). Bytes copied
    /// back are capped by `work_bytes`.
    pub work_files: u64,
    /// CPU bandwidth cap in cores (cgroup `cpu.max` / CFS quota); `None` leaves the rate free.
    pub cpu_cores: Option<f64>,
}

const MIB: u64 = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Self {
            wall_time_ms: 10_000,
            cpu_time_ms: 10_000,
            memory_bytes: 1024 * MIB,
            pids: 64,
            stdout_bytes: MIB,
            stderr_bytes: 256 * 1024,
            file_size_bytes: 64 * MIB,
            open_files: 256,
            tmp_bytes: 64 * MIB,
            work_bytes: 64 * MIB,
            work_files: 32,
            cpu_cores: None,
        }
    }
}

/// What a run does when this host cannot enforce the memory limit with a memory cgroup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryEnforcement {
    /// The run is refused (`setup_failed`): only a memory cgroup counts everything a run holds.
    #[default]
    Strict,
    /// The run goes ahead with RLIMIT_AS, as one process, with memfds and System V shared memory
    /// refused (what RLIMIT_AS cannot count); the record says `memory: best-effort`.
    BestEffort,
}

/// A host file made visible in the work dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// Absolute host path of a regular file.
    pub host: PathBuf,
    /// File name inside the work dir (one path component).
    pub name: String,
}

/// Everything one run may use. Fill it, then [`crate::Plan::new`] validates it against the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// The Python interpreter, as an absolute host path (a venv's `bin/python` is fine).
    pub interpreter: PathBuf,
    pub limits: Limits,
    /// Roots (jail view) the program may read.
    pub read_roots: Vec<PathBuf>,
    /// Roots (jail view) the program may write (and read).
    pub write_roots: Vec<PathBuf>,
    /// Extra host paths bound read-only at the same place in the jail.
    pub read_only_binds: Vec<PathBuf>,
    /// Layers that must be enforced; the run is refused when one is unavailable.
    pub required_layers: BTreeSet<Layer>,
    /// Files placed read-only in the work dir.
    pub inputs: Vec<Input>,
    /// Name of warden's directory under each cgroup hierarchy (default `warden`, or `warden-<uid>`
    /// when not running as root).
    pub cgroup_parent: Option<String>,
    /// Whether a run may go ahead when no memory cgroup can enforce the memory limit.
    #[serde(default)]
    pub memory_enforcement: MemoryEnforcement,
    /// What warden's bootstrap installs before the program runs (runtime layer, exec ban).
    #[serde(default)]
    pub bootstrap: Bootstrap,
    /// The rules file's intents the kernel mirrors beyond the file roots (issue 24).
    #[serde(default)]
    pub intents: Intents,
}

/// What the rules file allows beyond its file roots, as far as the kernel can hold it on its own
/// (issue 24: the kernel mirrors the policy). Both `false` by default: a jail that is not told
/// otherwise refuses what they would allow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intents {
    /// `[processes] allow`: the program may start processes, which may run any tool under `/usr`
    /// (so the whole of `/usr` stays readable and executable) and talk over local sockets.
    pub processes: bool,
    /// `[network] allow`: the program may open sockets (the jail's network namespace still has
    /// no interface but `lo`).
    pub network: bool,
}

impl Intents {
    /// Whether the program may create `AF_UNIX` sockets and socket pairs: only when it may start
    /// processes (multiprocessing's pipes and listeners) or use the network. Nothing warden runs in
    /// the program's process needs them once the program's confinement is in force: the session
    /// driver reads its standard input, a pooled run's fork requests reach the template (which is
    /// not confined) over a socket of the template's own.
    pub fn local_sockets(self) -> bool {
        self.processes || self.network
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            interpreter: PathBuf::from("/usr/bin/python3"),
            limits: Limits::default(),
            read_roots: vec![PathBuf::from(WORKDIR), PathBuf::from("/tmp")],
            write_roots: vec![PathBuf::from(WORKDIR), PathBuf::from("/tmp")],
            read_only_binds: Vec::new(),
            required_layers: [
                Layer::Namespaces,
                Layer::Seccomp,
                Layer::Landlock,
                Layer::Rlimits,
            ]
            .into(),
            inputs: Vec::new(),
            cgroup_parent: None,
            memory_enforcement: MemoryEnforcement::Strict,
            bootstrap: Bootstrap::default(),
            intents: Intents::default(),
        }
    }
}

/// Paths the jail builds itself; a bind may not land on or inside them.
const RESERVED: [&str; 5] = ["/proc", "/dev", "/run/warden", "/etc", WORKDIR];

impl Config {
    /// Checks the settings on their own (no host access).
    pub fn validate(&self) -> Result<(), JailError> {
        let bad = |message: String| Err(JailError::Config(message));
        if !is_clean_absolute(&self.interpreter) {
            return bad(format!(
                "interpreter {} is not a clean absolute path",
                self.interpreter.display()
            ));
        }
        let l = &self.limits;
        let positive = [
            ("wall_time_ms", l.wall_time_ms),
            ("cpu_time_ms", l.cpu_time_ms),
            ("memory_bytes", l.memory_bytes),
            ("stdout_bytes", l.stdout_bytes),
            ("stderr_bytes", l.stderr_bytes),
            ("file_size_bytes", l.file_size_bytes),
            ("tmp_bytes", l.tmp_bytes),
            ("work_bytes", l.work_bytes),
            ("work_files", l.work_files),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, value)| *value == 0) {
            return bad(format!("limit {name} must be greater than zero"));
        }
        if l.pids < 2 {
            return bad(
                "limit pids must be at least 2 (the jail's init and the interpreter)".into(),
            );
        }
        if l.open_files < 16 {
            return bad(
                "limit open_files must be at least 16 (the interpreter needs a few)".into(),
            );
        }
        if l.memory_bytes < 16 * MIB {
            return bad("limit memory_bytes must be at least 16 MiB".into());
        }
        if let Some(cores) = l.cpu_cores {
            if !(cores.is_finite() && cores >= 0.01) {
                return bad(format!(
                    "limit cpu_cores must be at least 0.01, not {cores}"
                ));
            }
        }
        for root in self.read_roots.iter().chain(&self.write_roots) {
            if !is_clean_absolute(root) {
                return bad(format!(
                    "file root {} is not a clean absolute path",
                    root.display()
                ));
            }
        }
        for bind in &self.read_only_binds {
            if !is_clean_absolute(bind) || bind == Path::new("/") {
                return bad(format!(
                    "read-only bind {} is not a clean absolute path below /",
                    bind.display()
                ));
            }
            if RESERVED
                .iter()
                .any(|reserved| bind.starts_with(reserved) || Path::new(reserved).starts_with(bind))
            {
                return bad(format!(
                    "read-only bind {} overlaps a directory the jail builds itself ({})",
                    bind.display(),
                    RESERVED.join(", ")
                ));
            }
        }
        let mut names = BTreeSet::new();
        for input in &self.inputs {
            if !is_clean_absolute(&input.host) {
                return bad(format!(
                    "input {} is not a clean absolute path",
                    input.host.display()
                ));
            }
            let single = Path::new(&input.name).components().count() == 1
                && matches!(
                    Path::new(&input.name).components().next(),
                    Some(Component::Normal(_))
                );
            if !single {
                return bad(format!(
                    "input name {:?} must be a single file name",
                    input.name
                ));
            }
            if !names.insert(&input.name) {
                return bad(format!("input name {:?} is given twice", input.name));
            }
        }
        let b = &self.bootstrap;
        match &b.native_module {
            Some(module) if !is_clean_absolute(module) => {
                return bad(format!(
                    "native module {} is not a clean absolute path",
                    module.display()
                ))
            }
            None if b.hook_settings.is_some() || b.ban_exec => {
                return bad("the audit hook and the exec ban need warden's native module".into())
            }
            _ => {}
        }
        if let Some(parent) = &self.cgroup_parent {
            let ok = !parent.is_empty()
                && parent
                    .split('/')
                    .all(|part| !part.is_empty() && part != "." && part != "..");
            if !ok {
                return bad(format!(
                    "cgroup parent {parent:?} must be a relative path without `.` or `..`"
                ));
            }
        }
        Ok(())
    }
}

/// Absolute, no `.`/`..` components, no trailing slash ambiguity, no NUL.
pub(crate) fn is_clean_absolute(path: &Path) -> bool {
    let text = path.as_os_str().as_encoded_bytes();
    path.is_absolute()
        && !text.contains(&0)
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_default_config_is_valid() {
        assert!(Config::default().validate().is_ok());
    }

    #[test]
    fn relative_and_dotted_paths_are_refused() {
        let mut config = Config::default();
        config.read_roots.push(PathBuf::from("data"));
        assert!(config.validate().is_err());
        let mut config = Config::default();
        config.write_roots.push(PathBuf::from("/work/../etc"));
        assert!(config.validate().is_err());
        let config = Config {
            interpreter: PathBuf::from("python3"),
            ..Config::default()
        };
        assert!(config.validate().is_err());
    }

    #[test]
    fn binds_over_the_jails_own_directories_are_refused() {
        for bind in ["/proc", "/dev/shm", "/etc", "/work/x", "/run", "/"] {
            let mut config = Config::default();
            config.read_only_binds.push(PathBuf::from(bind));
            assert!(config.validate().is_err(), "{bind} was accepted");
        }
        let mut config = Config::default();
        config.read_only_binds.push(PathBuf::from("/opt/data"));
        assert!(config.validate().is_ok());
    }

    #[test]
    fn zero_limits_are_refused() {
        let mut config = Config::default();
        config.limits.memory_bytes = 0;
        assert!(config.validate().is_err());
        let mut config = Config::default();
        config.limits.pids = 1;
        assert!(config.validate().is_err());
    }

    #[test]
    fn input_names_are_single_components() {
        let mut config = Config::default();
        config.inputs.push(Input {
            host: PathBuf::from("/data/a.csv"),
            name: "../a.csv".into(),
        });
        assert!(config.validate().is_err());
        let mut config = Config::default();
        config.inputs.push(Input {
            host: PathBuf::from("/data/a.csv"),
            name: "a.csv".into(),
        });
        assert!(config.validate().is_ok());
    }
}
