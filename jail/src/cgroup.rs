//! cgroups: memory, pids and CPU caps for the whole process tree, on cgroup v1 and v2.
//!
//! Owns: finding the hierarchies (pure parsing of `/proc/self/mountinfo` and `/proc/self/cgroup`)
//! and whether they are usable ([`CgroupHost`], with the reason when they are not), the run's cgroup
//! as data ([`CgroupPlan`]), and its life on the host: create, set limits, open the descriptors the
//! attach uses (the v2 directory, the v1 `tasks` files), read counters (CPU, peak memory, OOM kills,
//! pids-limit hits), kill, remove, and reaping run cgroups left behind by a warden that crashed.
//! Every function takes its directories from the plan, so tests point it at a temporary directory.
//!
//! Layout: one directory per run, `run-<warden pid>-<its start time>-<n>`, under
//! `<hierarchy root>/<parent name>` (parent name `warden`, or `warden-<uid>` for an ordinary user, who
//! needs a delegated, writable directory that root created). Run cgroups sit at a fixed place rather
//! than below warden's own cgroup, so they never block the removal of the cgroup a supervisor started
//! warden in, and every warden finds (and reaps) the run cgroups a crashed one left. The parent
//! directory stays; run directories are removed after each run, and a later warden removes those whose
//! owner is dead.
//!
//! Writes go straight to cgroupfs files rather than through `cgroups-rs`: the jail needs a handful of
//! files per version, exact errors naming the file, `clone3(CLONE_INTO_CGROUP)` on v2, and no extra
//! dependency tree.
//!
//! Does not own: the attach itself (on v1 the jail's init moves itself by writing `0` to the `tasks`
//! files, `child.rs`; on v2 it is cloned into the directory, `parent.rs`) or how counters become a
//! status (`supervise.rs`).

use std::fs;
use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::unistd::{AccessFlags, Pid};
use serde::Serialize;

use crate::error::JailError;

/// cgroup version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    V1,
    V2,
}

impl Version {
    /// `v1` / `v2`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }
}

/// One mounted hierarchy, as found in mountinfo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MountedHierarchy {
    pub version: Version,
    /// v1: the controllers of this mount; v2: empty (see `cgroup.controllers`).
    pub controllers: Vec<String>,
    pub mountpoint: PathBuf,
}

/// Parses `/proc/self/mountinfo` for cgroup mounts.
pub fn parse_mountinfo(text: &str) -> Vec<MountedHierarchy> {
    let mut found = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(mountpoint), Some(fstype)) = (fields.get(4), right.first()) else {
            continue;
        };
        let mountpoint = PathBuf::from(unescape(mountpoint));
        match *fstype {
            "cgroup2" => found.push(MountedHierarchy {
                version: Version::V2,
                controllers: Vec::new(),
                mountpoint,
            }),
            "cgroup" => {
                let options = right.get(2).copied().unwrap_or_default();
                let known = [
                    "memory", "pids", "cpu", "cpuacct", "cpuset", "freezer", "devices", "blkio",
                ];
                let controllers: Vec<String> = options
                    .split(',')
                    .filter(|o| known.contains(o))
                    .map(str::to_owned)
                    .collect();
                if !controllers.is_empty() {
                    found.push(MountedHierarchy {
                        version: Version::V1,
                        controllers,
                        mountpoint,
                    });
                }
            }
            _ => {}
        }
    }
    found
}

/// mountinfo escapes spaces and a few other bytes as `\ooo`.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(value) = u8::try_from(value) {
                    out.push(value);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `/proc/self/cgroup`: (v1 controllers or empty for v2, path).
pub fn parse_self_cgroup(text: &str) -> Vec<(Vec<String>, String)> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?;
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            Some((controllers, path.to_owned()))
        })
        .collect()
}

/// One hierarchy warden uses: where run cgroups go, and which controllers it provides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hierarchy {
    pub controllers: Vec<String>,
    /// The directory run cgroups are created in.
    pub parent: PathBuf,
}

/// What the host offers, as `doctor` reports it and as plans use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupHost {
    /// The version warden would use; `None` when no usable hierarchy was found.
    pub version: Option<Version>,
    pub hierarchies: Vec<Hierarchy>,
    /// Controllers available in that version.
    pub controllers: Vec<String>,
    /// Whether warden may create run cgroups there (root, or a delegated directory).
    pub writable: bool,
    /// Why cgroups are not usable, when they are not.
    pub reason: Option<String>,
    /// The delegated cgroup v2 subtree warden was started in, when run cgroups go there (an ordinary
    /// user): warden moves itself into a leaf of it ([`SUPERVISOR_LEAF`]) and enables the
    /// controllers for its children before the first run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegated: Option<PathBuf>,
}

/// The leaf of a delegated subtree warden moves its processes into: a cgroup v2 directory with
/// processes cannot enable controllers for its children ("no internal processes").
pub const SUPERVISOR_LEAF: &str = "warden-supervisor";

/// The directory of this process's cgroup v2 (`0::PATH` in `/proc/self/cgroup`), or its parent when
/// warden already moved itself into [`SUPERVISOR_LEAF`] (pure).
pub fn delegated_dir(
    mounts: &[MountedHierarchy],
    own: &[(Vec<String>, String)],
) -> Option<PathBuf> {
    let v2 = mounts.iter().find(|m| m.version == Version::V2)?;
    let (_, path) = own.iter().find(|(controllers, _)| controllers.is_empty())?;
    if path == "/" {
        return None;
    }
    let dir = join_cgroup(&v2.mountpoint, path);
    if dir.file_name().is_some_and(|name| name == SUPERVISOR_LEAF) {
        dir.parent().map(Path::to_path_buf)
    } else {
        Some(dir)
    }
}

/// Whether `dir` was delegated to us: we may create cgroups in it, move processes within it and
/// enable its controllers for its children, and it offers memory and pids. `Ok`: its controllers.
pub fn check_delegated(dir: &Path) -> Result<Vec<String>, String> {
    let writable = |path: &Path| nix::unistd::access(path, AccessFlags::W_OK).is_ok();
    if !(is_writable_dir(dir) && writable(&dir.join("cgroup.subtree_control"))) {
        return Err(format!(
            "this process's cgroup {} is not delegated to this user (the directory, its \
             cgroup.procs and cgroup.subtree_control must be writable: systemd's `Delegate=yes`, \
             e.g. `systemd-run --user --scope -p Delegate=yes warden …`)",
            dir.display()
        ));
    }
    let controllers: Vec<String> = fs::read_to_string(dir.join("cgroup.controllers"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let missing: Vec<&str> = ["memory", "pids"]
        .into_iter()
        .filter(|c| !controllers.iter().any(|have| have == c))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the delegated cgroup {} lacks the {} controller(s) (delegate them: `Delegate=memory pids`)",
            dir.display(),
            missing.join(" and ")
        ));
    }
    Ok(controllers)
}

/// Makes the delegated `dir` ready for run cgroups: its controllers enabled for its children, which
/// first needs every process in it (warden among them) moved into a leaf. Idempotent, so concurrent
/// wardens of one user can all do it (a process that appears meanwhile makes the kernel answer
/// EBUSY: move again and retry).
fn prepare_delegated(dir: &Path, controllers: &[String]) -> Result<(), JailError> {
    let wanted: Vec<String> = V2_NEEDED
        .iter()
        .filter(|c| controllers.iter().any(|have| have == *c))
        .map(|c| format!("+{c}"))
        .collect();
    let enabled = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    if wanted
        .iter()
        .all(|c| enabled.split_whitespace().any(|have| have == &c[1..]))
    {
        return Ok(());
    }
    let leaf = dir.join(SUPERVISOR_LEAF);
    match fs::create_dir(&leaf) {
        Err(err) if err.kind() != ErrorKind::AlreadyExists => {
            return Err(JailError::io("cannot create cgroup", &leaf, err))
        }
        _ => {}
    }
    let mut attempt = 0;
    loop {
        let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().map(str::trim).filter(|p| !p.is_empty()) {
            // A process that exited meanwhile is nothing to move.
            let _ = fs::write(leaf.join("cgroup.procs"), pid);
        }
        match fs::write(dir.join("cgroup.subtree_control"), wanted.join(" ")) {
            Ok(()) => return Ok(()),
            Err(err) if err.raw_os_error() == Some(libc::EBUSY) && attempt < 5 => attempt += 1,
            Err(err) => {
                return Err(JailError::io(
                    "cannot enable controllers (processes left in the delegated cgroup?)",
                    dir.join("cgroup.subtree_control"),
                    err,
                ))
            }
        }
    }
}

/// Controllers the jail needs (v1 names; v2 uses memory, pids, cpu).
const V1_NEEDED: [&str; 3] = ["memory", "pids", "cpuacct"];
/// cgroup v1 hierarchies used when mounted, not required: `cpu` (a CPU bandwidth cap) and `freezer`
/// (a session frozen between cells).
const V1_OPTIONAL: [&str; 2] = ["cpu", "freezer"];
const V2_NEEDED: [&str; 3] = ["memory", "pids", "cpu"];

impl CgroupHost {
    /// Looks at the running host. `parent_name` is warden's directory under each hierarchy's root.
    pub fn probe(parent_name: &str, is_root: bool) -> Self {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        // Run cgroups sit at each hierarchy's root, so warden's own cgroup does not matter here.
        let own = "0::/\n";
        let v2_controllers = |mountpoint: &Path, own_path: &str| -> Vec<String> {
            let dir = join_cgroup(mountpoint, own_path);
            let text = fs::read_to_string(mountpoint.join("cgroup.controllers"))
                .or_else(|_| fs::read_to_string(dir.join("cgroup.controllers")))
                .unwrap_or_default();
            text.split_whitespace().map(str::to_owned).collect()
        };
        let mounts = parse_mountinfo(&mountinfo);
        let host = Self::decide(
            &mounts,
            &parse_self_cgroup(own),
            parent_name,
            is_root,
            v2_controllers,
        );
        if host.version.is_some() || is_root {
            return host;
        }
        // An ordinary user without a directory root prepared: the cgroup v2 subtree this process
        // was started in, when it was delegated (systemd's `Delegate=`, or root's chown).
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        match delegated_dir(&mounts, &parse_self_cgroup(&own)) {
            Some(dir) => match check_delegated(&dir) {
                Ok(controllers) => CgroupHost {
                    version: Some(Version::V2),
                    hierarchies: vec![Hierarchy {
                        controllers: controllers.clone(),
                        parent: dir.clone(),
                    }],
                    controllers,
                    writable: true,
                    reason: None,
                    delegated: Some(dir),
                },
                Err(why) => CgroupHost {
                    reason: host.reason.map(|reason| format!("{reason}; {why}")),
                    ..host
                },
            },
            None => host,
        }
    }

    /// The decision, from parsed facts (testable).
    pub fn decide(
        mounts: &[MountedHierarchy],
        own: &[(Vec<String>, String)],
        parent_name: &str,
        is_root: bool,
        v2_controllers: impl Fn(&Path, &str) -> Vec<String>,
    ) -> Self {
        let own_v2 = own
            .iter()
            .find(|(c, _)| c.is_empty())
            .map_or("/", |(_, p)| p.as_str());
        // cgroup v2 wins when it offers the controllers (pure v2 hosts, or hybrids with controllers
        // moved to the unified hierarchy).
        if let Some(v2) = mounts.iter().find(|m| m.version == Version::V2) {
            let controllers = v2_controllers(&v2.mountpoint, own_v2);
            if V2_NEEDED
                .iter()
                .take(2)
                .all(|c| controllers.iter().any(|have| have == c))
            {
                let parent = v2.mountpoint.join(parent_name);
                let hierarchies = vec![Hierarchy {
                    controllers: controllers.clone(),
                    parent,
                }];
                return Self::finish(Version::V2, hierarchies, controllers, is_root);
            }
        }
        let mut hierarchies: Vec<Hierarchy> = Vec::new();
        let mut controllers = Vec::new();
        for mount in mounts.iter().filter(|m| m.version == Version::V1) {
            controllers.extend(mount.controllers.iter().cloned());
            let wanted: Vec<String> = mount
                .controllers
                .iter()
                .filter(|c| V1_NEEDED.contains(&c.as_str()) || V1_OPTIONAL.contains(&c.as_str()))
                .cloned()
                .collect();
            if wanted.is_empty() {
                continue;
            }
            let parent = mount.mountpoint.join(parent_name);
            if !hierarchies.iter().any(|h| h.parent == parent) {
                hierarchies.push(Hierarchy {
                    controllers: wanted,
                    parent,
                });
            }
        }
        controllers.sort();
        controllers.dedup();
        let has = |name: &str| {
            hierarchies
                .iter()
                .any(|h| h.controllers.iter().any(|c| c == name))
        };
        if has("memory") && has("pids") {
            Self::finish(Version::V1, hierarchies, controllers, is_root)
        } else {
            CgroupHost {
                version: None,
                hierarchies: Vec::new(),
                controllers,
                writable: false,
                reason: Some(
                    "no cgroup hierarchy offers both the memory and pids controllers".into(),
                ),
                delegated: None,
            }
        }
    }

    fn finish(
        version: Version,
        hierarchies: Vec<Hierarchy>,
        controllers: Vec<String>,
        is_root: bool,
    ) -> Self {
        // The freezer-only hierarchy is used only where warden may write it (root, or a user it
        // was delegated to).
        let hierarchies: Vec<Hierarchy> = hierarchies
            .into_iter()
            .filter(|h| is_root || h.controllers != ["freezer"] || is_writable_dir(&h.parent))
            .collect();
        // The cpu-only and freezer-only hierarchies are optional (only a CPU bandwidth cap and a
        // session's freeze between cells use them).
        let needed = || {
            hierarchies
                .iter()
                .filter(|h| h.controllers != ["cpu"] && h.controllers != ["freezer"])
        };
        let writable = is_root || needed().all(|h| is_writable_dir(&h.parent));
        let reason = (!writable).then(|| {
            let dirs: Vec<String> = needed().map(|h| h.parent.display().to_string()).collect();
            format!(
                "not delegated: {} must exist and be writable by this user",
                dirs.join(", ")
            )
        });
        CgroupHost {
            version: writable.then_some(version),
            hierarchies,
            controllers,
            writable,
            reason,
            delegated: None,
        }
    }
}

fn is_writable_dir(dir: &Path) -> bool {
    dir.is_dir()
        && nix::unistd::access(dir, AccessFlags::W_OK | AccessFlags::X_OK).is_ok()
        && nix::unistd::access(&dir.join("cgroup.procs"), AccessFlags::W_OK).is_ok()
}

/// `mountpoint` joined with a cgroup path such as `/user.slice/x`.
fn join_cgroup(mountpoint: &Path, cgroup_path: &str) -> PathBuf {
    let relative = cgroup_path.trim_start_matches('/');
    if relative.is_empty() {
        mountpoint.to_path_buf()
    } else {
        mountpoint.join(relative)
    }
}

/// Limits written into a run's cgroup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CgroupLimits {
    pub memory_bytes: u64,
    pub pids: u64,
    /// CPU bandwidth in cores, if capped.
    pub cpu_cores: Option<f64>,
}

/// The cgroup part of a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CgroupPlan {
    pub version: Version,
    pub hierarchies: Vec<Hierarchy>,
    pub limits: CgroupLimits,
    /// Whether warden may create missing parent directories (root only).
    pub create_parents: bool,
    /// An ordinary user's delegated cgroup v2 subtree, prepared before the first run (controllers
    /// enabled for run cgroups; warden moved into a leaf).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegated: Option<PathBuf>,
}

/// Counters read at the end of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub cpu_us: Option<u64>,
    pub memory_peak_bytes: Option<u64>,
    pub oom_kills: u64,
    pub pids_limit_hits: u64,
}

/// A run's cgroup on the host (one directory per hierarchy).
#[derive(Debug)]
pub struct Cgroup {
    version: Version,
    /// (controllers, directory) per hierarchy.
    dirs: Vec<(Vec<String>, PathBuf)>,
    removed: bool,
    /// warden created the parent directories itself: remove them too once they are empty, so no
    /// cgroup outlives the last run (another run still using a parent keeps it: rmdir says EBUSY).
    remove_parents: bool,
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> JailError + 'a {
    move |err| JailError::io(what, path, err)
}

fn write(path: &Path, value: &str) -> Result<(), JailError> {
    fs::write(path, value).map_err(io_err("cannot write", path))
}

/// Writes `value` unless the file does not exist (an optional feature of this kernel).
fn write_optional(path: &Path, value: &str) -> Result<(), JailError> {
    match fs::write(path, value) {
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(()),
        other => other.map_err(io_err("cannot write", path)),
    }
}

/// The name of a run's cgroup: owner pid, owner start time and a per-process sequence number, so a
/// later warden can tell whether the owner is still alive.
pub fn run_name(sequence: u64) -> String {
    let pid = std::process::id();
    format!("run-{pid}-{}-{sequence}", start_time(pid).unwrap_or(0))
}

/// Start time of a live process in clock ticks since boot (field 22 of `/proc/<pid>/stat`); `None`
/// for a process that is gone or has exited and waits to be reaped (a SIGKILLed warden's workers sit
/// as zombies until init collects them, and their runs are stale already).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let mut fields = after_comm.split(' ');
    if matches!(fields.next(), Some("Z" | "X" | "x")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Whether a run directory belongs to a warden that no longer exists.
fn is_stale(name: &str) -> bool {
    let mut parts = name.strip_prefix("run-").unwrap_or_default().split('-');
    let (Some(pid), Some(start)) = (
        parts.next().and_then(|p| p.parse::<u32>().ok()),
        parts.next(),
    ) else {
        return false;
    };
    match start_time(pid) {
        Some(now) => now.to_string() != start,
        None => true,
    }
}

/// How long removing a run's own cgroup waits for its killed processes to leave (1 s was not
/// always enough on a loaded host freeing a large interpreter: the cgroup was left behind).
const REMOVE_WITHIN: Duration = Duration::from_secs(5);
/// The same for a stale run's cgroup, removed before a run starts or periodically: short, so a
/// cgroup that cannot be emptied never delays runs (the next reaping tries again).
const STALE_REMOVE_WITHIN: Duration = Duration::from_secs(1);
impl CgroupPlan {
    /// Creates the run's cgroup and writes its limits.
    pub fn create(&self, name: &str) -> Result<Cgroup, JailError> {
        let mut cgroup = Cgroup {
            version: self.version,
            dirs: Vec::new(),
            removed: false,
            remove_parents: self.create_parents,
        };
        if let (Some(dir), Some(hierarchy)) = (&self.delegated, self.hierarchies.first()) {
            prepare_delegated(dir, &hierarchy.controllers)?;
        }
        for hierarchy in &self.hierarchies {
            let dir = hierarchy.parent.join(name);
            // A concurrent run may remove an empty parent between our check and our mkdir: retry.
            let mut attempt = 0;
            loop {
                self.ensure_parent(&hierarchy.parent)?;
                match fs::create_dir(&dir) {
                    Ok(()) => break,
                    Err(err) if err.kind() == ErrorKind::NotFound && attempt < 5 => attempt += 1,
                    Err(err) => return Err(JailError::io("cannot create cgroup", &dir, err)),
                }
            }
            cgroup.dirs.push((hierarchy.controllers.clone(), dir));
        }
        cgroup.write_limits(&self.limits)?;
        Ok(cgroup)
    }

    fn ensure_parent(&self, parent: &Path) -> Result<(), JailError> {
        if parent.is_dir() {
            return Ok(());
        }
        if !self.create_parents {
            return Err(JailError::io(
                "cgroup parent is missing",
                parent,
                std::io::Error::from(ErrorKind::NotFound),
            ));
        }
        match fs::create_dir(parent) {
            Err(err) if err.kind() != ErrorKind::AlreadyExists => {
                return Err(JailError::io("cannot create", parent, err))
            }
            _ => {}
        }
        if self.version == Version::V2 {
            // Controllers must be enabled in every ancestor's subtree_control down to our parent.
            let wanted: Vec<String> = V2_NEEDED.iter().map(|c| format!("+{c}")).collect();
            if let Some(grandparent) = parent.parent() {
                write(
                    &grandparent.join("cgroup.subtree_control"),
                    &wanted.join(" "),
                )?;
            }
            write(&parent.join("cgroup.subtree_control"), &wanted.join(" "))?;
        }
        Ok(())
    }

    /// Removes run cgroups whose warden is gone (killing what is left in them first).
    pub fn reap_stale(&self) {
        // One look at each owner, whatever the number of its runs and hierarchies: on a busy
        // server there are hundreds of live run directories.
        let mut owners: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
        for hierarchy in &self.hierarchies {
            let Ok(entries) = fs::read_dir(&hierarchy.parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(owner) = name.strip_prefix("run-").and_then(|rest| {
                    let mut parts = rest.splitn(3, '-');
                    Some((parts.next()?, parts.next()?))
                }) else {
                    continue;
                };
                let owner = format!("run-{}-{}", owner.0, owner.1);
                let stale = *owners
                    .entry(owner)
                    .or_insert_with_key(|owner| is_stale(owner));
                if stale {
                    let stale = Cgroup {
                        version: self.version,
                        dirs: vec![(hierarchy.controllers.clone(), entry.path())],
                        removed: false,
                        remove_parents: false,
                    };
                    stale.kill_all();
                    let _ = stale.remove_dirs(STALE_REMOVE_WITHIN);
                }
            }
        }
    }
}

impl Cgroup {
    fn dir_with(&self, controller: &str) -> Option<&Path> {
        self.dirs
            .iter()
            .find(|(controllers, _)| controllers.iter().any(|c| c == controller))
            .map(|(_, d)| d.as_path())
    }

    fn write_limits(&self, limits: &CgroupLimits) -> Result<(), JailError> {
        let memory = limits.memory_bytes.to_string();
        let pids = limits.pids.to_string();
        match self.version {
            Version::V1 => {
                if let Some(dir) = self.dir_with("memory") {
                    write(&dir.join("memory.limit_in_bytes"), &memory)?;
                    // With swap accounting, the same cap on memory+swap: no escaping into swap.
                    write_optional(&dir.join("memory.memsw.limit_in_bytes"), &memory)?;
                }
                if let Some(dir) = self.dir_with("pids") {
                    write(&dir.join("pids.max"), &pids)?;
                }
                if let (Some(cores), Some(dir)) = (limits.cpu_cores, self.dir_with("cpu")) {
                    write(&dir.join("cpu.cfs_period_us"), "100000")?;
                    write(
                        &dir.join("cpu.cfs_quota_us"),
                        &((cores * 100_000.0) as u64).max(1000).to_string(),
                    )?;
                }
            }
            Version::V2 => {
                let Some((_, dir)) = self.dirs.first() else {
                    return Ok(());
                };
                write(&dir.join("memory.max"), &memory)?;
                write_optional(&dir.join("memory.swap.max"), "0")?;
                // One OOM kill takes the whole tree down: no half-dead program keeps running.
                write_optional(&dir.join("memory.oom.group"), "1")?;
                write(&dir.join("pids.max"), &pids)?;
                if let Some(cores) = limits.cpu_cores {
                    write(
                        &dir.join("cpu.max"),
                        &format!("{} 100000", ((cores * 100_000.0) as u64).max(1000)),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// A descriptor of the v2 directory, for `clone3(CLONE_INTO_CGROUP)`.
    pub fn v2_dir_fd(&self) -> Result<Option<OwnedFd>, JailError> {
        if self.version != Version::V2 {
            return Ok(None);
        }
        let Some((_, dir)) = self.dirs.first() else {
            return Ok(None);
        };
        nix::fcntl::open(
            dir.as_path(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map(Some)
        .map_err(|errno| JailError::syscall("open", dir.display(), errno))
    }

    /// The files a process moves itself into this cgroup by writing `0` to, opened for writing
    /// (the kernel checks the opener's credentials, i.e. warden's): v1's `tasks` of each
    /// hierarchy, v2's `cgroup.procs`. A forked run's init uses them (`template.rs`).
    pub fn attach_files(&self) -> Result<Vec<OwnedFd>, JailError> {
        match self.version {
            Version::V1 => self.v1_tasks_files(),
            Version::V2 => self
                .dirs
                .first()
                .map(|(_, dir)| {
                    let path = dir.join("cgroup.procs");
                    nix::fcntl::open(
                        path.as_path(),
                        OFlag::O_WRONLY | OFlag::O_CLOEXEC,
                        nix::sys::stat::Mode::empty(),
                    )
                    .map_err(|errno| JailError::syscall("open", path.display(), errno))
                })
                .into_iter()
                .collect(),
        }
    }

    /// cgroup v1: the `tasks` file of each hierarchy, opened for writing. The jail's init writes `0`
    /// to them to move itself (a single thread moving itself needs no global lock, so no RCU grace
    /// period); the kernel checks the opener's credentials, i.e. warden's.
    pub fn v1_tasks_files(&self) -> Result<Vec<OwnedFd>, JailError> {
        if self.version != Version::V1 {
            return Ok(Vec::new());
        }
        self.dirs
            .iter()
            .map(|(_, dir)| {
                let path = dir.join("tasks");
                nix::fcntl::open(
                    path.as_path(),
                    OFlag::O_WRONLY | OFlag::O_CLOEXEC,
                    nix::sys::stat::Mode::empty(),
                )
                .map_err(|errno| JailError::syscall("open", path.display(), errno))
            })
            .collect()
    }

    /// A handle on this cgroup's CPU counter and freezer, for a session's host side (the cgroup
    /// itself stays with the supervisor, which removes it).
    pub fn share(&self) -> SharedCgroup {
        SharedCgroup {
            version: self.version,
            dirs: self.dirs.clone(),
        }
    }

    /// Freezes (`true`) or thaws every process of the run (cgroup v2's `cgroup.freeze`, v1's
    /// `freezer.state`); `false` when this cgroup has no freezer. Freezing is asynchronous: the
    /// processes stop within a moment.
    pub fn freeze(&self, frozen: bool) -> bool {
        self.share().freeze(frozen)
    }

    /// CPU time of the tree so far, in microseconds, when the hierarchy accounts it.
    pub fn cpu_us(&self) -> Option<u64> {
        self.share().cpu_us()
    }
}

/// What a session's host side may do with its jail's cgroup while the supervisor owns it: read the
/// CPU counter, freeze and thaw ([`Cgroup::share`]).
#[derive(Debug, Clone)]
pub struct SharedCgroup {
    version: Version,
    dirs: Vec<(Vec<String>, PathBuf)>,
}

impl SharedCgroup {
    fn dir_with(&self, controller: &str) -> Option<&Path> {
        self.dirs
            .iter()
            .find(|(controllers, _)| controllers.iter().any(|c| c == controller))
            .map(|(_, d)| d.as_path())
    }

    /// See [`Cgroup::freeze`].
    pub fn freeze(&self, frozen: bool) -> bool {
        match self.version {
            Version::V1 => self.dir_with("freezer").is_some_and(|dir| {
                let state = if frozen { "FROZEN" } else { "THAWED" };
                fs::write(dir.join("freezer.state"), state).is_ok()
            }),
            Version::V2 => self.dirs.first().is_some_and(|(_, dir)| {
                fs::write(dir.join("cgroup.freeze"), if frozen { "1" } else { "0" }).is_ok()
            }),
        }
    }

    /// See [`Cgroup::cpu_us`].
    pub fn cpu_us(&self) -> Option<u64> {
        match self.version {
            Version::V1 => {
                let dir = self.dir_with("cpuacct")?;
                read_u64(&dir.join("cpuacct.usage")).map(|ns| ns / 1000)
            }
            Version::V2 => {
                let (_, dir) = self.dirs.first()?;
                keyed(&dir.join("cpu.stat"), "usage_usec")
            }
        }
    }
}

impl Cgroup {
    /// Counters at the end of the run.
    pub fn stats(&self) -> Stats {
        let mut stats = Stats {
            cpu_us: self.cpu_us(),
            ..Stats::default()
        };
        match self.version {
            Version::V1 => {
                if let Some(dir) = self.dir_with("memory") {
                    stats.memory_peak_bytes = read_u64(&dir.join("memory.max_usage_in_bytes"));
                    stats.oom_kills =
                        keyed(&dir.join("memory.oom_control"), "oom_kill").unwrap_or(0);
                }
                if let Some(dir) = self.dir_with("pids") {
                    stats.pids_limit_hits = keyed(&dir.join("pids.events"), "max").unwrap_or(0);
                }
            }
            Version::V2 => {
                if let Some((_, dir)) = self.dirs.first() {
                    stats.memory_peak_bytes = read_u64(&dir.join("memory.peak"));
                    stats.oom_kills = keyed(&dir.join("memory.events"), "oom_kill").unwrap_or(0);
                    stats.pids_limit_hits = keyed(&dir.join("pids.events"), "max").unwrap_or(0);
                }
            }
        }
        stats
    }

    /// Kills every process still in the cgroup (best effort: a process that is already gone is
    /// nothing to kill).
    pub fn kill_all(&self) {
        // A v1 frozen task does not die until thawed.
        self.freeze(false);
        if self.version == Version::V2 {
            if let Some((_, dir)) = self.dirs.first() {
                if fs::write(dir.join("cgroup.kill"), "1").is_ok() {
                    return;
                }
            }
        }
        for (_, dir) in &self.dirs {
            let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                let _ =
                    nix::sys::signal::kill(Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
        }
    }

    /// Removes the run's directories, waiting briefly for exiting processes to leave.
    pub fn remove(mut self) -> Result<(), JailError> {
        self.removed = true;
        self.remove_dirs(REMOVE_WITHIN)
    }

    /// Removes the directories, waiting up to `within` for killed processes to leave: they can take
    /// seconds on a loaded host (a large address space to free). Polled often at first, then
    /// every 50 ms.
    fn remove_dirs(&self, within: Duration) -> Result<(), JailError> {
        let deadline = std::time::Instant::now() + within;
        for (_, dir) in &self.dirs {
            let mut attempt = 0u32;
            loop {
                match fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(err) if err.kind() == ErrorKind::NotFound => break,
                    Err(err)
                        if err.raw_os_error() == Some(Errno::EBUSY as i32)
                            && std::time::Instant::now() < deadline =>
                    {
                        if attempt.is_multiple_of(20) {
                            self.kill_all();
                        }
                        attempt += 1;
                        std::thread::sleep(Duration::from_millis(if attempt < 100 {
                            5
                        } else {
                            50
                        }));
                    }
                    Err(err) => {
                        return Err(JailError::io("cannot remove cgroup", dir.clone(), err))
                    }
                }
            }
        }
        if self.remove_parents {
            for (_, dir) in &self.dirs {
                if let Some(parent) = dir.parent() {
                    // Fails with EBUSY while another run uses it, which is fine: that run removes it.
                    let _ = fs::remove_dir(parent);
                }
            }
        }
        Ok(())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if !self.removed {
            self.kill_all();
            let _ = self.remove_dirs(REMOVE_WITHIN);
        }
    }
}

fn read_u64(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The value of `key` in a flat-keyed file (`key value` lines).
fn keyed(path: &Path, key: &str) -> Option<u64> {
    let text = fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const HYBRID_SELF: &str = "8:pids:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n0::/\n";

    #[test]
    fn a_hybrid_host_without_v2_controllers_uses_v1_at_the_hierarchy_roots() {
        let host = CgroupHost::decide(
            &parse_mountinfo(HYBRID),
            &parse_self_cgroup(HYBRID_SELF),
            "warden",
            true,
            |_, _| Vec::new(),
        );
        assert_eq!(host.version, Some(Version::V1));
        let parents: Vec<_> = host
            .hierarchies
            .iter()
            .map(|h| h.parent.display().to_string())
            .collect();
        assert_eq!(
            parents,
            [
                "/sys/fs/cgroup/cpu/warden",
                "/sys/fs/cgroup/cpuacct/warden",
                "/sys/fs/cgroup/memory/warden",
                "/sys/fs/cgroup/pids/warden"
            ]
        );
    }

    #[test]
    fn a_pure_v2_host_uses_the_unified_hierarchy() {
        let mountinfo = "25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let host = CgroupHost::decide(
            &parse_mountinfo(mountinfo),
            &parse_self_cgroup("0::/\n"),
            "warden",
            true,
            |_, _| {
                vec![
                    "cpuset".into(),
                    "cpu".into(),
                    "memory".into(),
                    "pids".into(),
                ]
            },
        );
        assert_eq!(host.version, Some(Version::V2));
        assert_eq!(
            host.hierarchies[0].parent,
            PathBuf::from("/sys/fs/cgroup/warden")
        );
    }

    #[test]
    fn an_ordinary_user_without_delegation_gets_no_cgroup_and_a_reason() {
        let host = CgroupHost::decide(
            &parse_mountinfo(HYBRID),
            &parse_self_cgroup(HYBRID_SELF),
            "warden-1000-does-not-exist",
            false,
            |_, _| Vec::new(),
        );
        assert_eq!(host.version, None);
        assert!(host.reason.unwrap_or_default().contains("not delegated"));
    }

    #[test]
    fn limits_and_counters_use_the_v1_file_names() {
        let root = tempfile::tempdir().unwrap();
        let parent = |c: &str| root.path().join(c).join("warden");
        for c in ["memory", "pids", "cpuacct"] {
            fs::create_dir_all(parent(c)).unwrap();
        }
        let plan = CgroupPlan {
            version: Version::V1,
            hierarchies: ["memory", "pids", "cpuacct"]
                .iter()
                .map(|c| Hierarchy {
                    controllers: vec![c.to_string()],
                    parent: parent(c),
                })
                .collect(),
            limits: CgroupLimits {
                memory_bytes: 64 << 20,
                pids: 16,
                cpu_cores: None,
            },
            create_parents: false,
            delegated: None,
        };
        let cgroup = plan.create("run-1-2-3").unwrap();
        let run = |c: &str| parent(c).join("run-1-2-3");
        assert_eq!(
            fs::read_to_string(run("memory").join("memory.limit_in_bytes")).unwrap(),
            "67108864"
        );
        assert_eq!(
            fs::read_to_string(run("pids").join("pids.max")).unwrap(),
            "16"
        );
        fs::write(
            run("memory").join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        fs::write(run("memory").join("memory.max_usage_in_bytes"), "1048576\n").unwrap();
        fs::write(run("pids").join("pids.events"), "max 5\n").unwrap();
        fs::write(run("cpuacct").join("cpuacct.usage"), "2500000\n").unwrap();
        let stats = cgroup.stats();
        assert_eq!(
            stats,
            Stats {
                cpu_us: Some(2500),
                memory_peak_bytes: Some(1 << 20),
                oom_kills: 2,
                pids_limit_hits: 5
            }
        );
        std::mem::forget(cgroup);
    }

    #[test]
    fn limits_use_the_v2_file_names() {
        let root = tempfile::tempdir().unwrap();
        let parent = root.path().join("warden");
        fs::create_dir_all(&parent).unwrap();
        let plan = CgroupPlan {
            version: Version::V2,
            hierarchies: vec![Hierarchy {
                controllers: vec!["memory".into(), "pids".into()],
                parent: parent.clone(),
            }],
            limits: CgroupLimits {
                memory_bytes: 1 << 30,
                pids: 64,
                cpu_cores: Some(1.5),
            },
            create_parents: false,
            delegated: None,
        };
        let cgroup = plan.create("run-1-2-3").unwrap();
        let run = parent.join("run-1-2-3");
        assert_eq!(
            fs::read_to_string(run.join("memory.max")).unwrap(),
            "1073741824"
        );
        assert_eq!(
            fs::read_to_string(run.join("cpu.max")).unwrap(),
            "150000 100000"
        );
        fs::write(
            run.join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
        )
        .unwrap();
        assert_eq!(cgroup.stats().oom_kills, 1);
        std::mem::forget(cgroup);
    }

    #[test]
    fn run_names_identify_a_live_owner() {
        let name = run_name(7);
        assert!(name.starts_with(&format!("run-{}-", std::process::id())));
        assert!(!is_stale(&name), "our own run is not stale");
        assert!(is_stale("run-999999999-1-1"), "a dead owner's run is stale");
        assert!(!is_stale("not-a-run"));
    }

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
    }
    #[test]
    fn a_delegated_subtree_is_found_from_our_own_cgroup_and_its_supervisor_leaf() {
        let mounts = parse_mountinfo("25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        let own = |path: &str| parse_self_cgroup(&format!("0::{path}\n"));
        assert_eq!(
            delegated_dir(&mounts, &own("/user.slice/user-1000.slice/app.scope")),
            Some(PathBuf::from(
                "/sys/fs/cgroup/user.slice/user-1000.slice/app.scope"
            ))
        );
        assert_eq!(
            delegated_dir(&mounts, &own("/deleg/warden-supervisor")),
            Some(PathBuf::from("/sys/fs/cgroup/deleg"))
        );
        assert_eq!(delegated_dir(&mounts, &own("/")), None);
        assert_eq!(
            delegated_dir(&parse_mountinfo(HYBRID), &parse_self_cgroup("0::/x\n")),
            Some(PathBuf::from("/sys/fs/cgroup/unified/x")),
            "a hybrid's unified hierarchy is looked at too (its controllers decide)"
        );
    }

    #[test]
    fn a_delegated_subtree_needs_memory_and_pids() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["cgroup.procs", "cgroup.subtree_control"] {
            fs::write(dir.path().join(file), "").unwrap();
        }
        fs::write(dir.path().join("cgroup.controllers"), "cpu pids\n").unwrap();
        let err = check_delegated(dir.path()).unwrap_err();
        assert!(err.contains("lacks the memory controller"), "{err}");
        fs::write(dir.path().join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        assert_eq!(
            check_delegated(dir.path()).unwrap(),
            ["cpu", "memory", "pids"]
        );
        assert!(check_delegated(&dir.path().join("absent"))
            .unwrap_err()
            .contains("not delegated"));
    }
}
