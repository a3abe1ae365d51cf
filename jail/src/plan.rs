//! The plan: everything a run will do, as plain data, decided before anything touches the kernel.
//!
//! Owns: probing the host once ([`Host`]); which layers that host can enforce and, when it cannot,
//! why, in words — reasoned once, in [`Host::layer`], for the plan and for `warden doctor` alike; and
//! turning a validated [`Config`] plus host facts into a [`Plan`]: namespaces, id maps, mounts,
//! Landlock rules, seccomp profile, rlimits, cgroup limits, argv and environment. Refusing a run
//! whose required layers the host cannot enforce (fail closed) happens here. [`Plan::build`] is pure,
//! so tests and snapshots cover it without privileges.
//!
//! Does not own: any effect. `parent.rs` and `child.rs` carry the plan out.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::budgets::{self, KernelHost, KernelPlan};
use crate::cgroup::{CgroupHost, CgroupLimits, CgroupPlan, Hierarchy};
use crate::config::{
    Config, Layer, Limits, BOOTSTRAP_PATH, HOOK_SETTINGS_PATH, NATIVE_MODULE_PATH, PROGRAM_PATH,
    WORKDIR,
};
use crate::error::JailError;
use crate::interpreter::{self, Interpreter};
use crate::landlock::{Grant, LandlockPlan, Rule};
use crate::mounts::{self, HostLayout, Mount, MountSettings, DEVICES};
use crate::rlimits::{self, Rlimit};
use crate::seccomp::{Mirrored, MirroredRefusal, SeccompPlan};
use crate::sys;
use crate::userns::{IdMaps, Mode, PROGRAM_ID};

/// The namespaces every jail gets.
pub const NAMESPACES: [&str; 7] = ["user", "mount", "pid", "net", "ipc", "uts", "cgroup"];

/// The hostname inside the jail.
pub const HOSTNAME: &str = "warden";

/// warden's bootstrap (`bootstrap.py` beside this file), the file the interpreter runs: it compiles
/// the program as text that warden decoded as UTF-8 — `compile()` of a `str` ignores coding
/// declarations, so none can change what runs — under the program's path so that tracebacks show
/// its lines; with `--hook` and `--ban-exec` it installs the runtime layer and the exec ban first;
/// then it runs the program as a fresh `__main__`.
pub const BOOTSTRAP: &str = include_str!("bootstrap.py");

/// The line of [`BOOTSTRAP`] where its session driver starts.
const SESSION_DRIVER_MARK: &str = "\n# --- the session driver:";

/// Where a one-shot run's compiled bootstrap is written in the jail (`Plan::run_compiled_bootstrap`).
pub const BOOTSTRAP_COMPILED_PATH: &str = "/run/warden/bootstrap.pyc";

/// How [`BOOTSTRAP`] ends: it runs `_run()` when the interpreter runs it as its script (`python -I
/// /run/warden/bootstrap.py` or the compiled `.pyc`: both run as `__main__`), never when it is
/// imported (the host's unit tests of it, `jail/tests/python/`, import it).
const MAIN_GUARD: &str = "\n\nif __name__ == \"__main__\":\n    _run()\n";

/// The bootstrap of a one-shot run: [`BOOTSTRAP`] without its session driver, which is most of its
/// text. CPython compiles a script on every start (nothing caches it), and compiling the driver cost
/// a one-shot run ~4 ms of CPU, about a third of a bare interpreter's start. The lines kept are the
/// same lines, so tracebacks through the bootstrap read the same; the text ends as the whole file
/// does ([`MAIN_GUARD`]). Without the mark (never in a build: a unit test checks it), the whole text.
pub fn one_shot_bootstrap() -> String {
    match BOOTSTRAP.find(SESSION_DRIVER_MARK) {
        Some(end) => format!("{}\n{MAIN_GUARD}", &BOOTSTRAP[..end]),
        None => BOOTSTRAP.to_owned(),
    }
}

/// The bootstrap's exit status when the runtime layer or the exec ban could not be installed
/// (nothing of the program ran); its last line on standard error starts with
/// [`BOOTSTRAP_FAILED_PREFIX`].
pub const BOOTSTRAP_FAILED_STATUS: i32 = 125;

/// How the bootstrap's failure line starts.
pub const BOOTSTRAP_FAILED_PREFIX: &str = "warden-bootstrap: ";

/// Facts about the host a plan depends on.
#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub mode: Mode,
    /// Whether this user may create user namespaces (sysctl view; a spawn gives the final word).
    pub user_namespaces: Result<(), String>,
    pub landlock_abi: Option<u32>,
    pub seccomp: bool,
    pub cgroup: CgroupHost,
    pub layout: HostLayout,
    /// The directory the jail's root is mounted on (inside the jail's own mount namespace only).
    pub stage_dir: PathBuf,
    pub cpus: usize,
    /// What the kernel offers the jail's own limits (sysctls, time namespaces, owner ids).
    pub kernel: KernelHost,
}

impl Host {
    /// Probes the running host. `cgroup_parent`: see [`Config::cgroup_parent`].
    pub fn probe(cgroup_parent: Option<&str>) -> Self {
        let mode = Mode::current();
        let parent = match (cgroup_parent, mode) {
            (Some(name), _) => name.to_owned(),
            (None, Mode::Root) => "warden".to_owned(),
            (None, Mode::Unprivileged { uid, .. }) => format!("warden-{uid}"),
        };
        Host {
            mode,
            user_namespaces: user_namespaces(mode),
            landlock_abi: sys::landlock_abi(),
            seccomp: sys::seccomp_available(),
            cgroup: CgroupHost::probe(&parent, mode == Mode::Root),
            layout: HostLayout::probe(),
            stage_dir: stage_dir(mode),
            kernel: KernelHost::probe(mode),
            // The CPUs this process may run on (sched_getaffinity; std's available_parallelism also reads
            // cgroup files, which costs more than the rest of the probe).
            cpus: nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).map_or(1, |set| {
                (0..nix::sched::CpuSet::count())
                    .filter(|cpu| set.is_set(*cpu).unwrap_or(false))
                    .count()
                    .max(1)
            }),
        }
    }
}

/// Whether a host can enforce one layer, and what is there or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Availability {
    pub layer: Layer,
    pub available: bool,
    /// When available, what the host offers (`abi-7`, `v1 (cpu, memory, pids) under …`); otherwise
    /// why not, in the words a plan refuses a run with ([`JailError::LayerUnavailable`]).
    pub detail: String,
}

impl Host {
    /// Whether this host can enforce `layer`. The one place that reasons about it: a plan that
    /// requires an unavailable layer fails closed with this `detail` as its reason.
    pub fn layer(&self, layer: Layer) -> Availability {
        let state: Result<String, String> = match layer {
            Layer::Namespaces => self
                .user_namespaces
                .clone()
                .map(|()| NAMESPACES.join(", ")),
            Layer::Landlock => self.landlock_abi.map(|abi| format!("abi-{abi}")).ok_or_else(|| {
                "the kernel offers no Landlock ABI (built without it, or not in the `lsm=` boot list)"
                    .into()
            }),
            Layer::Seccomp if self.seccomp => Ok("filters available".into()),
            Layer::Seccomp => Err("the kernel does not support seccomp filters".into()),
            Layer::Cgroup => match self.cgroup.version {
                Some(version) => Ok(format!(
                    "{} ({}) under {}",
                    version.name(),
                    self.cgroup.controllers.join(", "),
                    self.cgroup
                        .hierarchies
                        .iter()
                        .map(|h| h.parent.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                None => Err(self
                    .cgroup
                    .reason
                    .clone()
                    .unwrap_or_else(|| "no usable cgroup hierarchy".into())),
            },
            Layer::Rlimits => Ok("always available".into()),
        };
        let available = state.is_ok();
        Availability {
            layer,
            available,
            detail: state.unwrap_or_else(|reason| reason),
        }
    }

    /// Every layer's availability, in the order of [`Layer::ALL`].
    pub fn layers(&self) -> Vec<Availability> {
        Layer::ALL
            .into_iter()
            .map(|layer| self.layer(layer))
            .collect()
    }
}

fn user_namespaces(mode: Mode) -> Result<(), String> {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| text.trim().to_owned())
    };
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Err("user.max_user_namespaces is 0".into());
    }
    if mode != Mode::Root {
        if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
            return Err(
                "kernel.unprivileged_userns_clone is 0 (run as root or set it to 1)".into(),
            );
        }
        if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
            return Err("AppArmor restricts unprivileged user namespaces \
                        (kernel.apparmor_restrict_unprivileged_userns=1)"
                .into());
        }
    }
    Ok(())
}

/// Where the jail's root is mounted (in the jail's mount namespace; the host only sees an empty
/// directory): `/run/warden/root` for root, the user's runtime or temp directory otherwise.
fn stage_dir(mode: Mode) -> PathBuf {
    match mode {
        Mode::Root => PathBuf::from("/run/warden/root"),
        Mode::Unprivileged { uid, .. } => {
            let base = std::env::var_os("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute() && dir.is_dir())
                .map(|dir| dir.join("warden"))
                .unwrap_or_else(|| std::env::temp_dir().join(format!("warden-{uid}")));
            base.join("root")
        }
    }
}

/// Everything one run will do.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub mode: Mode,
    pub namespaces: Vec<&'static str>,
    pub id_maps: IdMaps,
    /// uid and gid of the program inside the jail.
    pub run_as: u32,
    pub hostname: &'static str,
    pub stage_dir: PathBuf,
    pub interpreter: Interpreter,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub mounts: Vec<Mount>,
    pub landlock: LandlockPlan,
    /// `None`: seccomp is unavailable and not required.
    pub seccomp: Option<SeccompPlan>,
    pub rlimits: Vec<Rlimit>,
    /// `None`: no usable cgroup (rlimit fallbacks are in the list above).
    pub cgroup: Option<CgroupPlan>,
    /// The jail's own kernel budgets, the memory enforcement, what the init hides (`budgets.rs`).
    pub kernel: KernelPlan,
    pub limits: Limits,
    /// Session mode ([`crate::Session`]): the program's stdin is warden's command pipe.
    pub session: bool,
    /// Template mode ([`crate::Bootstrap::template`]).
    pub template: bool,
}

impl Plan {
    /// Removes the run cgroups of wardens that are gone (every run does this before it starts; a
    /// server also does it at start-up and after killing its workers).
    pub fn reap_stale(&self) {
        if let Some(cgroup) = &self.cgroup {
            cgroup.reap_stale();
        }
    }

    /// Probes the host, resolves the interpreter and builds the plan.
    pub fn new(config: &Config) -> Result<Plan, JailError> {
        let host = Host::probe(config.cgroup_parent.as_deref());
        let interpreter = interpreter::resolve(&config.interpreter)?;
        let mut plan = Plan::build(config, &host, interpreter)?;
        if !plan.session {
            plan.run_compiled_bootstrap();
        }
        Ok(plan)
    }

    /// A one-shot run starts its interpreter on the bootstrap compiled ahead (a `.pyc` made once by
    /// this interpreter and cached beside the stage dir, `interpreter::compiled`) instead of its
    /// source, which CPython would compile on every start (~1.5 ms). Same code, same file name in
    /// its frames (the source stays at [`BOOTSTRAP_PATH`] for tracebacks and `inspect`); written
    /// into the jail's read-only root like the source. Without a usable cache the plan is left as
    /// it is: the source runs.
    fn run_compiled_bootstrap(&mut self) {
        let Some(source) = self.mounts.iter().find_map(|step| match step {
            Mount::File { path, contents, .. } if path == Path::new(BOOTSTRAP_PATH) => {
                Some(contents.clone())
            }
            _ => None,
        }) else {
            return;
        };
        let Some(at) = self.argv.iter().position(|arg| arg == BOOTSTRAP_PATH) else {
            return;
        };
        let Some(pivot) = self
            .mounts
            .iter()
            .position(|step| *step == Mount::PivotRoot)
        else {
            return;
        };
        let Some((dir, fd)) = crate::stage::cache_dir(&self.stage_dir, self.mode) else {
            crate::trace("compiled bootstrap: no trusted cache dir");
            return;
        };
        let bytes =
            match interpreter::compiled(&self.interpreter, &source, BOOTSTRAP_PATH, (&dir, &fd)) {
                Ok(bytes) => bytes,
                Err(why) => {
                    crate::trace(&format!("compiled bootstrap: {why}"));
                    return;
                }
            };
        self.mounts.insert(
            pivot,
            Mount::Compiled {
                path: PathBuf::from(BOOTSTRAP_COMPILED_PATH),
                contents: bytes,
                why: "warden's bootstrap compiled by the interpreter, which runs it".into(),
            },
        );
        self.landlock.rules.push(Rule {
            path: PathBuf::from(BOOTSTRAP_COMPILED_PATH),
            grant: Grant::ReadFile,
            why: "warden's bootstrap compiled, which the interpreter runs".into(),
        });
        self.argv[at] = BOOTSTRAP_COMPILED_PATH.into();
    }

    /// The plan for `config` on `host` (pure).
    pub fn build(
        config: &Config,
        host: &Host,
        interpreter: Interpreter,
    ) -> Result<Plan, JailError> {
        config.validate()?;
        let required = |layer: Layer| config.required_layers.contains(&layer);
        // Fail closed. Namespaces are always required: the jail is built on them. (Rlimits are
        // always available.)
        for layer in [
            Layer::Namespaces,
            Layer::Landlock,
            Layer::Seccomp,
            Layer::Cgroup,
        ] {
            let state = host.layer(layer);
            if !state.available && (layer == Layer::Namespaces || required(layer)) {
                return Err(JailError::LayerUnavailable {
                    layer,
                    reason: state.detail,
                });
            }
        }
        // `None` exactly when the cgroup layer is unavailable (checked above when required).
        let cgroup = cgroup_plan(config, host);
        let has = |controller: &str| {
            cgroup.as_ref().is_some_and(|c| {
                c.hierarchies
                    .iter()
                    .any(|h| h.controllers.iter().any(|x| x == controller))
            })
        };
        let read_only = read_only_dirs(config, &interpreter);
        let run_files = bootstrap_files(config);
        let mounts = mounts::plan(&MountSettings {
            layout: &host.layout,
            read_only: &read_only,
            inputs: &config.inputs,
            tmp_bytes: config.limits.tmp_bytes,
            work_bytes: config.limits.work_bytes,
            hostname: HOSTNAME,
            run_files: &run_files,
            native_module: config.bootstrap.native_module.as_deref(),
        });
        let landlock = LandlockPlan {
            abi: host.landlock_abi,
            required: required(Layer::Landlock),
            rules: landlock_rules(config, host, &interpreter, &read_only),
        };
        let (kernel, refused) = budgets::plan(
            config,
            host.mode,
            &host.kernel,
            has("memory"),
            host.cgroup.reason.as_deref(),
        )?;
        let seccomp = host.seccomp.then(|| SeccompPlan {
            refused,
            mirrored: mirrored_refusals(config),
            ..SeccompPlan::default_profile()
        });
        Ok(Plan {
            mode: host.mode,
            namespaces: NAMESPACES.to_vec(),
            id_maps: IdMaps::for_mode(host.mode),
            run_as: PROGRAM_ID,
            hostname: HOSTNAME,
            stage_dir: host.stage_dir.clone(),
            argv: argv(config, &interpreter),
            env: environment(config, host, &interpreter),
            interpreter,
            mounts,
            landlock,
            seccomp,
            rlimits: rlimits::plan(&config.limits, has("memory"), has("pids")),
            cgroup,
            kernel,
            limits: config.limits.clone(),
            session: config.bootstrap.session,
            template: config.bootstrap.session && config.bootstrap.template,
        })
    }
}

/// `python -I /run/warden/bootstrap.py [--hook] [--ban-exec] [--session]`: isolated mode (no environment
/// variables, no user site, no script directory on the import path).
fn argv(config: &Config, interpreter: &Interpreter) -> Vec<String> {
    let mut argv = vec![
        interpreter.configured.display().to_string(),
        "-I".into(),
        BOOTSTRAP_PATH.into(),
    ];
    if config.bootstrap.hook_settings.is_some() {
        argv.push("--hook".into());
    }
    if config.bootstrap.ban_exec {
        argv.push("--ban-exec".into());
    }
    if config.bootstrap.session {
        argv.push("--session".into());
        if config.bootstrap.template {
            argv.push("--template".into());
        }
    }
    if let Some(name) = &config.bootstrap.program_name {
        // One argument, so no name can read as another flag.
        argv.push(format!("--name={name}"));
    }
    argv
}

/// The files warden writes for the bootstrap: the bootstrap itself and the hook's settings.
fn bootstrap_files(config: &Config) -> Vec<(PathBuf, String, String)> {
    let text = if config.bootstrap.session {
        BOOTSTRAP.to_owned()
    } else {
        one_shot_bootstrap()
    };
    let mut files = vec![(
        PathBuf::from(BOOTSTRAP_PATH),
        text,
        "warden's bootstrap: installs the runtime layer, then runs the program".to_owned(),
    )];
    if let Some(settings) = &config.bootstrap.hook_settings {
        files.push((
            PathBuf::from(HOOK_SETTINGS_PATH),
            settings.clone(),
            "the audit hook's settings, from the rules file".to_owned(),
        ));
    }
    files
}

fn cgroup_plan(config: &Config, host: &Host) -> Option<CgroupPlan> {
    let version = host.cgroup.version?;
    let wanted = |h: &Hierarchy| {
        h.controllers
            .iter()
            .any(|c| c == "memory" || c == "pids" || c == "cpuacct")
            || (config.limits.cpu_cores.is_some() && h.controllers.iter().any(|c| c == "cpu"))
            // A session is frozen between cells (cgroup v1: the freezer hierarchy).
            || (config.bootstrap.session && h.controllers.iter().any(|c| c == "freezer"))
    };
    let hierarchies: Vec<Hierarchy> = host
        .cgroup
        .hierarchies
        .iter()
        .filter(|h| wanted(h))
        .cloned()
        .collect();
    Some(CgroupPlan {
        version,
        hierarchies,
        limits: CgroupLimits {
            memory_bytes: config.limits.memory_bytes,
            pids: config.limits.pids,
            cpu_cores: config.limits.cpu_cores,
        },
        create_parents: host.mode == Mode::Root,
        delegated: host.cgroup.delegated.clone(),
    })
}

/// Host directories bound read-only, each with who needs it.
fn read_only_dirs(config: &Config, interpreter: &Interpreter) -> Vec<(PathBuf, String)> {
    let mut dirs: Vec<(PathBuf, String)> = vec![(
        PathBuf::from("/usr"),
        "system libraries: libc, the dynamic loader, the standard library".into(),
    )];
    for prefix in &interpreter.prefixes {
        dirs.push((prefix.clone(), "the interpreter's installation".into()));
    }
    for bind in &config.read_only_binds {
        dirs.push((
            bind.clone(),
            "configured in the rules file (jail.read_only_binds)".into(),
        ));
    }
    let kept = interpreter::minimal_roots(dirs.iter().map(|(path, _)| path.clone()).collect());
    kept.into_iter()
        .filter_map(|path| dirs.iter().find(|(p, _)| *p == path).cloned())
        .collect()
}

fn landlock_rules(
    config: &Config,
    host: &Host,
    interpreter: &Interpreter,
    read_only: &[(PathBuf, String)],
) -> Vec<Rule> {
    let rule = |path: &Path, grant: Grant, why: &str| Rule {
        path: path.to_path_buf(),
        grant,
        why: why.into(),
    };
    let mut rules = vec![rule(
        Path::new("/"),
        Grant::ListDir,
        "listing the jail's own minimal tree (os.walk, glob)",
    )];
    for (dir, why) in read_only {
        if dir == Path::new("/usr") && !config.intents.processes {
            // Issue 24: of the system tree, only what the interpreter and its libraries read.
            rules.extend(system_rules(interpreter));
            // What /usr swallowed of the read-only binds (`minimal_roots`) keeps its own grant.
            for prefix in interpreter
                .prefixes
                .iter()
                .filter(|p| p.starts_with(dir) && *p != dir)
            {
                rules.push(rule(
                    prefix,
                    Grant::ReadExec,
                    "the interpreter's installation",
                ));
            }
            for bind in config.read_only_binds.iter().filter(|b| b.starts_with(dir)) {
                rules.push(rule(
                    bind,
                    Grant::Read,
                    "configured in the rules file (jail.read_only_binds)",
                ));
            }
            continue;
        }
        let exec = dir == Path::new("/usr") || interpreter.prefixes.contains(dir);
        rules.push(rule(
            dir,
            if exec { Grant::ReadExec } else { Grant::Read },
            why,
        ));
    }
    for (name, target) in &host.layout.top_level {
        if target.is_none() {
            rules.push(rule(
                &Path::new("/").join(name),
                Grant::ReadExec,
                "split-usr layout: loader and libc",
            ));
        }
    }
    rules.push(rule(
        Path::new("/etc"),
        Grant::Read,
        "passwd, group and hosts written by warden",
    ));
    rules.push(rule(
        Path::new(PROGRAM_PATH),
        Grant::ReadFile,
        "the program text (tracebacks show its lines)",
    ));
    rules.push(rule(
        Path::new(BOOTSTRAP_PATH),
        Grant::ReadFile,
        "warden's bootstrap, which the interpreter runs",
    ));
    if config.bootstrap.hook_settings.is_some() {
        rules.push(rule(
            Path::new(HOOK_SETTINGS_PATH),
            Grant::ReadFile,
            "the audit hook's settings, read by the bootstrap",
        ));
    }
    if config.bootstrap.native_module.is_some() {
        rules.push(rule(
            Path::new(NATIVE_MODULE_PATH),
            Grant::ReadFile,
            "warden's native module, loaded by the bootstrap (mapping it needs no execute right)",
        ));
    }
    rules.push(rule(
        Path::new("/proc"),
        Grant::Read,
        "the jail's own processes: /proc/self for subprocess, psutil-like code",
    ));
    for (name, why) in DEVICES {
        let grant = if name == "null" || name == "zero" {
            Grant::Device
        } else {
            Grant::ReadFile
        };
        rules.push(rule(&Path::new("/dev").join(name), grant, why));
    }
    for root in &config.read_roots {
        if !config.write_roots.contains(root) {
            rules.push(rule(root, Grant::Read, "files.read in the rules file"));
        }
    }
    for root in &config.write_roots {
        rules.push(rule(
            root,
            Grant::ReadWrite,
            "files.write in the rules file",
        ));
    }
    rules
}

/// What the interpreter and the libraries of a runtime read of the system tree (`/usr`), when the
/// rules file allows no processes (issue 24: the kernel mirrors the policy's read roots). A policy
/// that allows processes keeps the whole of `/usr` readable and executable: the tools it may run
/// read what they like there. Paths the host does not have are skipped when the ruleset is built.
///
/// Landlock judges opening a file or listing a directory; `stat`, `access` and path lookups are not
/// refused, so a library probing for an optional file (nltk's data dirs, a locale) still finds out
/// that it is missing, and only a library that opens something else under `/usr` is refused.
pub fn system_rules(interpreter: &Interpreter) -> Vec<Rule> {
    let rule = |path: PathBuf, grant: Grant, why: &str| Rule {
        path,
        grant,
        why: why.into(),
    };
    let mut rules = Vec::new();
    if interpreter.real.starts_with("/usr") {
        rules.push(rule(
            interpreter.real.clone(),
            Grant::ReadExec,
            "the interpreter's binary, which the jail executes",
        ));
    }
    let multiarch = format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH);
    for dir in [multiarch.as_str(), "/usr/lib64"] {
        rules.push(rule(
            PathBuf::from(dir),
            Grant::ReadExec,
            "the dynamic loader (executed with the interpreter) and the shared libraries: libc, libm, \
             libz, libffi, libexpat, OpenSSL, gconv",
        ));
    }
    // The interpreter's own directories under /usr: `pythonX.Y` from the binary's name (a binary
    // without a version in its name gets the whole of /usr/lib: there is no telling which).
    let version = [&interpreter.real, &interpreter.configured]
        .iter()
        .filter_map(|path| path.file_name()?.to_str())
        .find(|name| is_versioned_python(name))
        .map(str::to_owned);
    match version {
        Some(version) => {
            for dir in ["/usr/lib", "/usr/lib64", "/usr/local/lib"] {
                rules.push(rule(
                    Path::new(dir).join(&version),
                    Grant::Read,
                    "the standard library, lib-dynload and the interpreter's own site directories",
                ));
            }
        }
        None => rules.push(rule(
            PathBuf::from("/usr/lib"),
            Grant::Read,
            "the standard library (the interpreter's binary names no version)",
        )),
    }
    for (dir, why) in [
        (
            "/usr/lib/python3",
            "a system interpreter's distribution packages (Debian's dist-packages)",
        ),
        (
            "/usr/lib/locale",
            "the C.UTF-8 locale glibc loads at start-up",
        ),
        ("/usr/lib/ssl", "OpenSSL's configuration (hashlib)"),
        (
            "/usr/share/zoneinfo",
            "zoneinfo, pandas and pyarrow time zones",
        ),
        (
            "/usr/share/fonts",
            "fontconfig's fonts (jail's /etc/fonts/fonts.conf)",
        ),
        (
            "/usr/local/share/fonts",
            "fontconfig's fonts (jail's /etc/fonts/fonts.conf)",
        ),
    ] {
        rules.push(rule(PathBuf::from(dir), Grant::Read, why));
    }
    rules
}

/// `python3.11`, `python3.12`: a binary name with the interpreter's version.
fn is_versioned_python(name: &str) -> bool {
    name.strip_prefix("python").is_some_and(|rest| {
        rest.split_once('.').is_some_and(|(major, minor)| {
            !major.is_empty()
                && !minor.is_empty()
                && major.bytes().all(|b| b.is_ascii_digit())
                && minor.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// The seccomp refusals that mirror the rules file (issue 24).
fn mirrored_refusals(config: &Config) -> Vec<MirroredRefusal> {
    let mut mirrored = Vec::new();
    if !config.intents.local_sockets() {
        mirrored.push(MirroredRefusal {
            refusal: Mirrored::LocalSockets,
            why: "[processes] and [network] allow neither: no socket, AF_UNIX included",
        });
    }
    if !config.intents.processes {
        mirrored.push(MirroredRefusal {
            refusal: Mirrored::Locks,
            why: "[processes] allow = false: one process, nothing to exclude; locks never reach host files",
        });
    }
    mirrored
}

fn environment(config: &Config, host: &Host, interpreter: &Interpreter) -> Vec<(String, String)> {
    let mut path = Vec::new();
    if let Some(bin) = interpreter.configured.parent() {
        path.push(bin.display().to_string());
    }
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        if !path.iter().any(|p| p == dir) {
            path.push(dir.to_owned());
        }
    }
    // Numeric libraries start one thread per CPU by default; on a large host that alone would exceed
    // the pids limit.
    let cpus = config
        .limits
        .cpu_cores
        .map_or(host.cpus, |cores| cores.ceil() as usize);
    let threads = cpus
        .clamp(1, 4)
        .min((config.limits.pids as usize / 4).max(1))
        .to_string();
    let mut env = vec![
        ("PATH".to_owned(), path.join(":")),
        ("HOME".into(), "/tmp".into()),
        ("TMPDIR".into(), "/tmp".into()),
        ("PWD".into(), WORKDIR.into()),
        ("USER".into(), "nobody".into()),
        ("LOGNAME".into(), "nobody".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("LC_ALL".into(), "C.UTF-8".into()),
        ("TZ".into(), "UTC".into()),
        ("MPLBACKEND".into(), "Agg".into()),
        ("MPLCONFIGDIR".into(), "/tmp/matplotlib".into()),
    ];
    for name in [
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    ] {
        env.push((name.into(), threads.clone()));
    }
    env
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::cgroup::{Hierarchy, Version};

    fn host(mode: Mode) -> Host {
        Host {
            mode,
            user_namespaces: Ok(()),
            landlock_abi: Some(7),
            seccomp: true,
            cgroup: CgroupHost {
                version: Some(Version::V1),
                hierarchies: ["cpu", "cpuacct", "memory", "pids"]
                    .iter()
                    .map(|c| Hierarchy {
                        controllers: vec![c.to_string()],
                        parent: PathBuf::from(format!("/sys/fs/cgroup/{c}/warden")),
                    })
                    .collect(),
                controllers: vec![
                    "cpu".into(),
                    "cpuacct".into(),
                    "memory".into(),
                    "pids".into(),
                ],
                writable: true,
                reason: None,
                delegated: None,
            },
            layout: HostLayout {
                top_level: vec![
                    ("bin".into(), Some("usr/bin".into())),
                    ("lib".into(), Some("usr/lib".into())),
                    ("lib64".into(), Some("usr/lib64".into())),
                ],
            },
            stage_dir: PathBuf::from("/run/warden/root"),
            cpus: 2,
            kernel: KernelHost::full(mode),
        }
    }

    #[test]
    fn a_one_shot_run_gets_the_bootstrap_without_its_session_driver() {
        let one_shot = one_shot_bootstrap();
        // The mark is there (else one-shot runs silently compile the whole driver again) …
        assert!(BOOTSTRAP.contains(SESSION_DRIVER_MARK));
        assert!(one_shot.len() < BOOTSTRAP.len() / 4, "{}", one_shot.len());
        // … everything above it is kept line for line, and both texts run `_run()` as a script only.
        assert!(BOOTSTRAP.ends_with(MAIN_GUARD));
        assert!(one_shot.ends_with(MAIN_GUARD));
        assert!(BOOTSTRAP.starts_with(&one_shot[..one_shot.len() - MAIN_GUARD.len()]));
        assert!(one_shot.contains("def _run():") && one_shot.contains("def _show_saves_figures("));
        assert!(!one_shot.contains("def _session("));
        let file = |config: &Config| {
            let plan = Plan::build(config, &host(Mode::Root), python()).unwrap();
            let text = plan.mounts.iter().find_map(|step| match step {
                Mount::File { path, contents, .. } if path == Path::new(BOOTSTRAP_PATH) => {
                    Some(contents.clone())
                }
                _ => None,
            });
            text.unwrap()
        };
        assert_eq!(file(&Config::default()), one_shot);
        let mut session = Config::default();
        session.bootstrap.session = true;
        assert_eq!(file(&session), BOOTSTRAP);
    }

    #[test]
    fn a_one_shot_run_starts_on_the_bootstrap_compiled_and_a_session_on_its_source() {
        let Ok(interpreter) = interpreter::resolve(Path::new("/usr/bin/python3")) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let plan_for = |config: &Config| {
            let mut plan = Plan::build(config, &host(Mode::Root), interpreter.clone()).unwrap();
            plan.stage_dir = dir.path().join("warden/root");
            if !plan.session {
                plan.run_compiled_bootstrap();
            }
            plan
        };
        let plan = plan_for(&Config::default());
        assert_eq!(plan.argv[2], BOOTSTRAP_COMPILED_PATH);
        let compiled = plan.mounts.iter().position(|step| {
            matches!(step, Mount::Compiled { path, contents, .. }
                if path == Path::new(BOOTSTRAP_COMPILED_PATH) && contents.len() > 16)
        });
        let pivot = plan
            .mounts
            .iter()
            .position(|step| *step == Mount::PivotRoot);
        assert!(compiled.unwrap() < pivot.unwrap());
        // The source stays for tracebacks; the compiled file is readable, nothing more.
        assert!(plan.mounts.iter().any(
            |step| matches!(step, Mount::File { path, .. } if path == Path::new(BOOTSTRAP_PATH))
        ));
        assert!(plan.landlock.rules.iter().any(|rule| {
            rule.path == Path::new(BOOTSTRAP_COMPILED_PATH) && rule.grant == Grant::ReadFile
        }));
        // The cache dir is warden's own (the stage dir's parent, made as the stage dir's is).
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir.path().join("warden")).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o755);
        let mut session = Config::default();
        session.bootstrap.session = true;
        let plan = plan_for(&session);
        assert_eq!(plan.argv[2], BOOTSTRAP_PATH);
        assert!(!plan
            .mounts
            .iter()
            .any(|step| matches!(step, Mount::Compiled { .. })));
    }

    #[test]
    fn without_a_trusted_cache_dir_the_source_runs() {
        use std::os::unix::fs::PermissionsExt;
        let Ok(interpreter) = interpreter::resolve(Path::new("/usr/bin/python3")) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut plan = Plan::build(&Config::default(), &host(Mode::Root), interpreter).unwrap();
        plan.stage_dir = open.join("warden/root");
        let before = plan.clone();
        plan.run_compiled_bootstrap();
        assert_eq!(plan.argv, before.argv);
        assert_eq!(plan.mounts, before.mounts);
        assert_eq!(plan.landlock, before.landlock);
    }

    fn python() -> Interpreter {
        Interpreter {
            configured: PathBuf::from("/usr/bin/python3"),
            real: PathBuf::from("/usr/bin/python3.11"),
            prefixes: vec![PathBuf::from("/usr")],
        }
    }

    #[test]
    fn the_root_plan_matches_its_snapshot() {
        let plan = Plan::build(&Config::default(), &host(Mode::Root), python()).unwrap();
        // The bootstrap's text is its own file's business: the snapshot names it.
        let json = serde_json::to_string_pretty(&plan)
            .unwrap()
            .replace(
                &serde_json::to_string(BOOTSTRAP).unwrap(),
                "\"<the text of jail/src/bootstrap.py>\"",
            )
            .replace(
                &serde_json::to_string(&one_shot_bootstrap()).unwrap(),
                "\"<the text of jail/src/bootstrap.py without its session driver>\"",
            )
            + "\n";
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/plan-root.json");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &json).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            expected == json,
            "plan changed; review and rerun with UPDATE_SNAPSHOTS=1\n{json}"
        );
    }

    #[test]
    fn a_required_layer_that_is_missing_refuses_the_run() {
        let mut no_landlock = host(Mode::Root);
        no_landlock.landlock_abi = None;
        let err = Plan::build(&Config::default(), &no_landlock, python())
            .unwrap_err()
            .to_string();
        assert!(err.contains("required layer `landlock`"), "{err}");

        let mut config = Config::default();
        config.required_layers.remove(&Layer::Landlock);
        let plan = Plan::build(&config, &no_landlock, python()).unwrap();
        assert_eq!(plan.landlock.report(), "none");

        let mut no_cgroup = host(Mode::Root);
        no_cgroup.cgroup.version = None;
        no_cgroup.cgroup.reason = Some("not delegated: /x".into());
        let mut config = Config::default();
        config.required_layers.insert(Layer::Cgroup);
        let err = Plan::build(&config, &no_cgroup, python())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("required layer `cgroup`") && err.contains("not delegated"),
            "{err}"
        );
    }

    #[test]
    fn a_plan_fails_closed_with_the_hosts_own_reason() {
        let mut bare = host(Mode::Root);
        bare.user_namespaces = Err("user.max_user_namespaces is 0".into());
        bare.landlock_abi = None;
        bare.seccomp = false;
        bare.cgroup.version = None;
        bare.cgroup.reason = None;
        let config = Config {
            required_layers: Layer::ALL.into(),
            ..Config::default()
        };
        for (missing, fixed) in [
            (Layer::Namespaces, None),
            (Layer::Landlock, Some(Layer::Namespaces)),
            (Layer::Seccomp, Some(Layer::Landlock)),
            (Layer::Cgroup, Some(Layer::Seccomp)),
        ] {
            match fixed {
                Some(Layer::Namespaces) => bare.user_namespaces = Ok(()),
                Some(Layer::Landlock) => bare.landlock_abi = Some(7),
                Some(Layer::Seccomp) => bare.seccomp = true,
                _ => {}
            }
            let state = bare.layer(missing);
            assert!(!state.available, "{state:?}");
            match Plan::build(&config, &bare, python()) {
                Err(JailError::LayerUnavailable { layer, reason }) => {
                    assert_eq!((layer, reason), (missing, state.detail));
                }
                other => panic!("{missing}: {other:?}"),
            }
        }
        assert_eq!(
            bare.layer(Layer::Cgroup).detail,
            "no usable cgroup hierarchy"
        );
    }

    #[test]
    fn every_layer_of_a_capable_host_is_available_with_what_it_offers() {
        let host = host(Mode::Root);
        let layers = host.layers();
        assert_eq!(
            layers.iter().map(|a| a.layer).collect::<Vec<_>>(),
            Layer::ALL
        );
        assert!(layers.iter().all(|a| a.available), "{layers:?}");
        assert_eq!(
            host.layer(Layer::Namespaces).detail,
            "user, mount, pid, net, ipc, uts, cgroup"
        );
        assert_eq!(host.layer(Layer::Landlock).detail, "abi-7");
        assert!(
            host.layer(Layer::Cgroup)
                .detail
                .starts_with("v1 (cpu, cpuacct, memory, pids) under "),
            "{layers:?}"
        );
    }

    #[test]
    fn without_cgroups_rlimits_fall_back() {
        let mut host = host(Mode::Unprivileged {
            uid: 1000,
            gid: 1000,
        });
        host.cgroup.version = None;
        let config = Config {
            memory_enforcement: crate::config::MemoryEnforcement::BestEffort,
            ..Config::default()
        };
        let plan = Plan::build(&config, &host, python()).unwrap();
        assert!(plan.cgroup.is_none());
        let names: Vec<_> = plan.rlimits.iter().map(|r| r.name).collect();
        assert!(names.contains(&"RLIMIT_NPROC") && names.contains(&"RLIMIT_AS"));
        assert_eq!(plan.id_maps.uid_map, "65534 1000 1\n");
        assert_eq!(plan.kernel.memory, crate::budgets::Memory::BestEffort);
    }

    #[test]
    fn a_memory_limit_without_a_memory_cgroup_fails_closed_unless_best_effort_is_accepted() {
        use crate::seccomp::Refusal;
        let mut host = host(Mode::Unprivileged {
            uid: 1000,
            gid: 1000,
        });
        host.cgroup.version = None;
        host.cgroup.reason = Some("not delegated: /sys/fs/cgroup/warden-1000".into());
        let err = Plan::build(&Config::default(), &host, python())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("layer `cgroup`")
                && err.contains("not delegated")
                && err.contains("memory_enforcement = \"best-effort\""),
            "{err}"
        );
        let config = Config {
            memory_enforcement: crate::config::MemoryEnforcement::BestEffort,
            ..Config::default()
        };
        let plan = Plan::build(&config, &host, python()).unwrap();
        let refused: Vec<Refusal> = plan
            .seccomp
            .unwrap()
            .refused
            .iter()
            .map(|r| r.refusal)
            .collect();
        assert_eq!(
            refused,
            [
                Refusal::ProcessCreation,
                Refusal::MemfdCreate,
                Refusal::SysvShm
            ]
        );
        // With a memory cgroup the run counts everything: no process refusal; an ordinary user's
        // jail still refuses memfds (it cannot set vm.memfd_noexec) and System V shared memory.
        let mut delegated = host.clone();
        delegated.cgroup = self::host(Mode::Root).cgroup;
        let plan = Plan::build(&Config::default(), &delegated, python()).unwrap();
        assert_eq!(plan.kernel.memory, crate::budgets::Memory::Cgroup);
        let refused: Vec<Refusal> = plan
            .seccomp
            .unwrap()
            .refused
            .iter()
            .map(|r| r.refusal)
            .collect();
        assert_eq!(refused, [Refusal::MemfdCreate, Refusal::SysvShm]);
        // As root, sysctls do both: nothing is refused.
        let plan = Plan::build(&Config::default(), &self::host(Mode::Root), python()).unwrap();
        assert!(plan.seccomp.unwrap().refused.is_empty());
        assert_eq!(plan.kernel.memfd_exec, "vm.memfd_noexec=2");
    }

    #[test]
    fn root_runs_need_the_reserved_owner_ids() {
        let mut taken = host(Mode::Root);
        taken.kernel.owner_ids = Some(Err("/etc/passwd gives id 2000000001 to `x`".into()));
        let err = Plan::build(&Config::default(), &taken, python())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("layer `namespaces`") && err.contains("`x`"),
            "{err}"
        );
    }

    #[test]
    fn the_cpu_hierarchy_is_used_only_for_a_cpu_cap() {
        let plan = Plan::build(&Config::default(), &host(Mode::Root), python()).unwrap();
        let cgroup = plan.cgroup.unwrap();
        assert!(!cgroup.hierarchies.iter().any(|h| h.controllers == ["cpu"]));
        let mut config = Config::default();
        config.limits.cpu_cores = Some(1.0);
        let plan = Plan::build(&config, &host(Mode::Root), python()).unwrap();
        assert!(plan
            .cgroup
            .unwrap()
            .hierarchies
            .iter()
            .any(|h| h.controllers == ["cpu"]));
    }

    #[test]
    fn of_the_system_tree_only_what_the_interpreter_needs_is_granted_unless_processes_are_allowed()
    {
        let plan = Plan::build(&Config::default(), &host(Mode::Root), python()).unwrap();
        let granted = |plan: &Plan, path: &str| {
            plan.landlock
                .rules
                .iter()
                .find(|rule| rule.path == Path::new(path))
                .map(|rule| rule.grant)
        };
        // No rule grants /usr, /usr/bin or /usr/share as a whole …
        for path in ["/usr", "/usr/bin", "/usr/share", "/usr/lib", "/usr/local"] {
            assert_eq!(granted(&plan, path), None, "{path}");
        }
        for rule in plan
            .landlock
            .rules
            .iter()
            .filter(|r| r.grant != Grant::ListDir)
        {
            assert!(
                !Path::new("/usr/bin/ls").starts_with(&rule.path),
                "{rule:?}"
            );
            assert!(
                !Path::new("/usr/share/doc").starts_with(&rule.path),
                "{rule:?}"
            );
        }
        // … but the interpreter, its libraries and its standard library are.
        assert_eq!(granted(&plan, "/usr/bin/python3.11"), Some(Grant::ReadExec));
        let multiarch = format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH);
        assert_eq!(granted(&plan, &multiarch), Some(Grant::ReadExec));
        assert_eq!(granted(&plan, "/usr/lib/python3.11"), Some(Grant::Read));
        assert_eq!(granted(&plan, "/usr/share/zoneinfo"), Some(Grant::Read));
        // The policy's roots as they were.
        assert_eq!(granted(&plan, "/work"), Some(Grant::ReadWrite));
        assert_eq!(granted(&plan, "/tmp"), Some(Grant::ReadWrite));
        // A policy that allows processes keeps the whole tree for the tools it may run.
        let mut config = Config::default();
        config.intents.processes = true;
        let plan = Plan::build(&config, &host(Mode::Root), python()).unwrap();
        assert_eq!(granted(&plan, "/usr"), Some(Grant::ReadExec));
        assert_eq!(granted(&plan, "/usr/lib/python3.11"), None);
        // A venv and a bind under /usr keep their grants.
        let mut config = Config::default();
        config
            .read_only_binds
            .push(PathBuf::from("/usr/share/dict"));
        let in_usr = Interpreter {
            configured: PathBuf::from("/usr/local/venv/bin/python3"),
            real: PathBuf::from("/usr/bin/python3.11"),
            prefixes: vec![PathBuf::from("/usr/local/venv"), PathBuf::from("/usr")],
        };
        let plan = Plan::build(&config, &host(Mode::Root), in_usr).unwrap();
        assert_eq!(granted(&plan, "/usr/local/venv"), Some(Grant::ReadExec));
        assert_eq!(granted(&plan, "/usr/share/dict"), Some(Grant::Read));
        assert_eq!(granted(&plan, "/usr"), None);
        // An interpreter whose name carries no version gets /usr/lib whole.
        let unversioned = Interpreter {
            real: PathBuf::from("/usr/bin/python"),
            configured: PathBuf::from("/usr/bin/python"),
            prefixes: vec![PathBuf::from("/usr")],
        };
        let plan = Plan::build(&Config::default(), &host(Mode::Root), unversioned).unwrap();
        assert_eq!(granted(&plan, "/usr/lib"), Some(Grant::Read));
        assert!(is_versioned_python("python3.11") && is_versioned_python("python3.13"));
        assert!(!is_versioned_python("python3") && !is_versioned_python("python3.x"));
    }

    #[test]
    fn sockets_are_refused_unless_the_policy_allows_processes_or_the_network() {
        use crate::seccomp::Mirrored;
        let mirrored = |intents: crate::config::Intents| {
            let config = Config {
                intents,
                ..Config::default()
            };
            let plan = Plan::build(&config, &host(Mode::Root), python()).unwrap();
            plan.seccomp
                .unwrap()
                .mirrored
                .iter()
                .map(|m| m.refusal)
                .collect::<Vec<_>>()
        };
        use crate::config::Intents;
        assert_eq!(
            mirrored(Intents::default()),
            [Mirrored::LocalSockets, Mirrored::Locks]
        );
        assert!(mirrored(Intents {
            processes: true,
            network: false,
        })
        .is_empty());
        assert_eq!(
            mirrored(Intents {
                processes: false,
                network: true,
            }),
            [Mirrored::Locks]
        );
    }

    #[test]
    fn the_program_gets_no_writable_host_path_and_no_exec_where_it_writes() {
        let plan = Plan::build(&Config::default(), &host(Mode::Root), python()).unwrap();
        for rule in &plan.landlock.rules {
            if rule.grant == Grant::ReadWrite {
                assert!(
                    rule.path == Path::new("/work") || rule.path == Path::new("/tmp"),
                    "{rule:?}"
                );
            }
        }
        assert_eq!(plan.argv[0], "/usr/bin/python3");
        assert_eq!(&plan.argv[1..], ["-I", "/run/warden/bootstrap.py"]);
        assert!(plan.env.iter().all(|(name, _)| !name.starts_with("PYTHON")));
    }
}
