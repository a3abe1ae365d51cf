//! Host processes, seen through `/proc`: the sentinels an attack must not be able to kill, and the
//! watcher that records every process a warden run spawns, so that anything still alive after warden
//! returned is found (and killed) however it was reparented.
//!
//! Owns: reading `/proc/<pid>/stat`, `ns/pid` and the tasks' children lists, the sentinel
//! lifecycle (spawned, checked, killed and reaped in `Drop`) and the watcher thread. Does not own:
//! deciding what a survivor means (`verify.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The default sentinel's name (a process `comm` holds at most 15 bytes).
pub const SENTINEL: &str = "warden-sentinel";

/// One process as `/proc` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: u32,
    /// Start time in clock ticks since boot: with the pid, identifies the process.
    pub start: u64,
    pub comm: String,
    pub state: char,
}

/// Reads `/proc/<pid>/stat`.
pub fn stat(pid: u32) -> Option<ProcInfo> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses: split at the last `)`.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // fields[0] is field 3 (state); starttime is field 22.
    Some(ProcInfo {
        pid,
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        comm,
        state: fields.first()?.chars().next()?,
    })
}

/// Every process on the host.
pub fn scan() -> Vec<ProcInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .collect()
}

/// The inode of a process's pid namespace.
pub fn pid_ns(pid: &str) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()?;
    let text = link.to_string_lossy().into_owned();
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// Clock ticks since boot (the unit of `starttime` in `/proc/<pid>/stat`: USER_HZ, 100 on Linux),
/// rounded up.
fn uptime_ticks() -> u64 {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(u64::MAX, |seconds| (seconds * 100.0).ceil() as u64 + 1)
}

/// Sends SIGKILL to one process by its id (used only on processes a watched run spawned).
pub fn kill(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// What a watcher saw of one run.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// (pid, start) → comm of every descendant of the watched process.
    pub procs: BTreeMap<(u32, u64), String>,
    /// Pid namespaces those processes lived in, other than the host's, with the last time (clock
    /// ticks since boot) one was seen alive: a namespace inode number can be reused by a later
    /// jail, whose processes all start after that time.
    pub namespaces: BTreeMap<u64, u64>,
}

/// Polls `/proc` while a run lasts, recording the watched process's descendants.
#[derive(Debug)]
pub struct Watcher {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    seen: Arc<Mutex<Seen>>,
}

impl Watcher {
    /// Starts watching the descendants of `root` (a process this runner spawned).
    pub fn start(root: u32) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let host_ns = pid_ns("self");
        let handle = {
            let (stop, seen) = (Arc::clone(&stop), Arc::clone(&seen));
            std::thread::Builder::new()
                .name(format!("watch {root}"))
                .spawn(move || {
                    // Most runs last well under a second: look often at first, then less.
                    let started = Instant::now();
                    while !stop.load(Ordering::SeqCst) {
                        record(root, host_ns, &seen);
                        let pause = if started.elapsed() < Duration::from_secs(1) {
                            3
                        } else {
                            25
                        };
                        std::thread::sleep(Duration::from_millis(pause));
                    }
                })
                .ok()
        };
        Watcher { stop, handle, seen }
    }

    /// Takes a last look (the run has ended) and returns what was seen.
    pub fn finish(mut self) -> Seen {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
        match self.seen.lock() {
            Ok(seen) => seen.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The most descendants one look records (a fork bomb must not make the watcher unbounded).
const MAX_DESCENDANTS: usize = 4096;

fn record(root: u32, host_ns: Option<u64>, seen: &Mutex<Seen>) {
    let found = descendants(root).unwrap_or_else(|| descendants_by_scan(root));
    let mut seen = match seen.lock() {
        Ok(seen) => seen,
        Err(poisoned) => poisoned.into_inner(),
    };
    let now = uptime_ticks();
    for p in found {
        seen.procs.insert((p.pid, p.start), p.comm.clone());
        if let Some(ns) = pid_ns(&p.pid.to_string()) {
            if Some(ns) != host_ns {
                let last = seen.namespaces.entry(ns).or_insert(0);
                *last = (*last).max(now);
            }
        }
    }
}

/// Whether the kernel lists each task's children (`/proc/<pid>/task/<tid>/children`,
/// CONFIG_PROC_CHILDREN), so that a look at a run reads its own processes only.
fn children_files() -> bool {
    static KNOWN: OnceLock<bool> = OnceLock::new();
    *KNOWN.get_or_init(|| {
        let me = std::process::id();
        Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// The descendants of `root` alive now, found through the children lists of its tasks and theirs;
/// `None` when the kernel has no such lists.
fn descendants(root: u32) -> Option<Vec<ProcInfo>> {
    if !children_files() {
        return None;
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        // A process that ended since it was listed has no tasks left: nothing below it.
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = read_at_once(&task.path().join("children")).unwrap_or_default();
            for child in children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if found.len() >= MAX_DESCENDANTS {
                    return Some(found);
                }
                if let Some(info) = stat(child) {
                    found.push(info);
                    stack.push(child);
                }
            }
        }
    }
    Some(found)
}

/// The descendants of `root` alive now: those either walk finds (the children lists, then the
/// parent links of every process), so that a process the first walk missed while the tree was
/// changing is still counted.
pub fn descendants_of(root: u32) -> Vec<ProcInfo> {
    let mut found = descendants(root).unwrap_or_default();
    let known: std::collections::BTreeSet<(u32, u64)> =
        found.iter().map(|p| (p.pid, p.start)).collect();
    found.extend(
        descendants_by_scan(root)
            .into_iter()
            .filter(|p| !known.contains(&(p.pid, p.start))),
    );
    found
}

/// The most bytes of one children list read (about 9,000 pids).
const CHILDREN_READ: usize = 64 << 10;

/// A task's children list, read in one `read` call. The kernel renders the list anew at each call
/// from where the last one stopped, counted in entries: read in small pieces (`read_to_string`
/// starts with 32 bytes), a child reaped between two calls hides a live sibling listed after it.
fn read_at_once(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0; CHILDREN_READ];
    let n = file.read(&mut buf).ok()?;
    buf.truncate(n);
    String::from_utf8(buf).ok()
}

/// The descendants of `root` alive now, from the parent links of every process on the host.
fn descendants_by_scan(root: u32) -> Vec<ProcInfo> {
    let all = scan();
    let mut children: BTreeMap<u32, Vec<&ProcInfo>> = BTreeMap::new();
    for p in &all {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut stack = vec![root];
    let mut found = Vec::new();
    while let Some(pid) = stack.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if found.len() < MAX_DESCENDANTS {
                found.push((*child).clone());
                stack.push(child.pid);
            }
        }
    }
    found
}

/// Processes of a finished run still alive after `grace`: any process the watcher saw (same pid
/// and start time) or any process in one of the run's pid namespaces. Zombies are ignored (their
/// parent reaps them).
pub fn survivors(seen: &Seen, grace: Duration) -> Vec<ProcInfo> {
    let deadline = Instant::now() + grace;
    loop {
        let alive: Vec<ProcInfo> = scan()
            .into_iter()
            .filter(|p| p.state != 'Z' && p.state != 'X')
            .filter(|p| {
                seen.procs.contains_key(&(p.pid, p.start))
                    || pid_ns(&p.pid.to_string())
                        .and_then(|ns| seen.namespaces.get(&ns))
                        .is_some_and(|last_seen| p.start <= *last_seen)
            })
            .collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A host process (a `sleep` named as a case expects) that an attack must not be able to signal.
/// Killed and reaped on drop.
#[derive(Debug)]
pub struct Sentinel {
    child: Child,
    pub name: String,
    pub pid: u32,
}

impl Sentinel {
    /// Starts `sleep` under the name `name`, through a symbolic link in `bin_dir` (the kernel
    /// names a process after the file it executed). It sleeps 20 minutes: long enough for any case,
    /// short enough not to linger if the runner is killed before it can reap it.
    pub fn spawn(bin_dir: &Path, name: &str) -> Result<Sentinel, String> {
        let sleep = sleep_binary().ok_or("no `sleep` binary in /usr/bin or /bin")?;
        let link = bin_dir.join(name);
        if !link.exists() {
            match std::os::unix::fs::symlink(&sleep, &link) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(format!("{}: {err}", link.display())),
            }
        }
        let child = std::os::unix::process::CommandExt::arg0(&mut Command::new(&link), name)
            .arg("1200")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| format!("cannot start the sentinel {name}: {err}"))?;
        let pid = child.id();
        Ok(Sentinel {
            child,
            name: name.to_owned(),
            pid,
        })
    }

    /// `Ok` while the sentinel runs; otherwise how it ended.
    pub fn check(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!(
                "host process `{}` (pid {}) died: {status}",
                self.name, self.pid
            )),
            Err(err) => Err(format!("cannot check host process `{}`: {err}", self.name)),
        }
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sleep_binary() -> Option<PathBuf> {
    ["/usr/bin/sleep", "/bin/sleep"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_reads_this_process() {
        let me = stat(std::process::id()).unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(me.start > 0);
        assert!(pid_ns("self").is_some());
    }

    #[test]
    fn a_sentinel_carries_its_name_and_notices_its_death() {
        let dir = tempfile::tempdir().unwrap();
        let mut sentinel = Sentinel::spawn(dir.path(), "sshd").unwrap();
        assert!(sentinel.check().is_ok());
        assert_eq!(stat(sentinel.pid).unwrap().comm, "sshd");
        kill(sentinel.pid);
        let deadline = Instant::now() + Duration::from_secs(5);
        while sentinel.check().is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let err = sentinel.check().unwrap_err();
        assert!(err.contains("`sshd`") && err.contains("died"), "{err}");
    }

    #[test]
    fn children_lists_and_the_full_scan_find_the_same_descendants() {
        let mut shell = Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & (sleep 5 & wait) & wait"])
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut by_scan = Vec::new();
        while by_scan.len() < 4 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            by_scan = descendants_by_scan(shell.id());
        }
        let key = |list: Vec<ProcInfo>| {
            let mut pids: Vec<(u32, u64)> = list.iter().map(|p| (p.pid, p.start)).collect();
            pids.sort();
            pids
        };
        let listed = descendants(shell.id());
        for p in &by_scan {
            kill(p.pid);
        }
        let _ = shell.kill();
        let _ = shell.wait();
        assert_eq!(by_scan.len(), 4, "{by_scan:?}");
        if let Some(listed) = listed {
            assert_eq!(key(listed), key(by_scan));
        }
    }

    #[test]
    fn a_child_reaped_while_the_tree_is_read_hides_no_live_sibling() {
        // 150 short sleeps ending one after another, then ten long ones, all children of one
        // shell that reaps the short ones as they end; every look at the tree meanwhile must
        // list the ten long ones.
        let script =
            "i=0; while [ $i -lt 150 ]; do sleep 0.$((100 + i * 5)) & i=$((i + 1)); done; \
                      for i in 1 2 3 4 5 6 7 8 9 10; do sleep 30 & done; wait";
        let mut shell = Command::new("sh").args(["-c", script]).spawn().unwrap();
        let mut looks = Vec::new();
        let started = Instant::now();
        // Until the short sleeps have all ended and the ten long ones run (on a loaded host the
        // shell takes longer than their 0.85 s to start them all), at most 30 s.
        let long_sleep = |pid: &u32| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == b"sleep\x0030\x00")
        };
        let mut long: Vec<u32> = Vec::new();
        while started.elapsed() < Duration::from_secs(30) {
            if let Some(found) = descendants(shell.id()) {
                let pids: Vec<u32> = found.into_iter().map(|p| p.pid).collect();
                let settled = started.elapsed() >= Duration::from_millis(1200)
                    && pids.len() == 10
                    && pids.iter().all(long_sleep);
                looks.push(pids.clone());
                if settled {
                    long = pids;
                    break;
                }
            }
        }
        for pid in &long {
            kill(*pid);
        }
        let _ = shell.kill();
        let _ = shell.wait();
        assert_eq!(long.len(), 10, "{long:?}");
        // The looks taken once the shell had started them all (a list is in the order the
        // children were made: the last long sleep is last).
        let last = long.last().copied().unwrap_or(0);
        let whole: Vec<&Vec<u32>> = looks.iter().filter(|l| l.contains(&last)).collect();
        assert!(!whole.is_empty() || looks.is_empty());
        for look in whole {
            for pid in &long {
                assert!(look.contains(pid), "{pid} missing from {look:?}");
            }
        }
    }

    #[test]
    fn the_watcher_finds_a_survivor_that_left_its_parent() {
        // A shell that starts a background sleep and exits at once: the sleep is reparented.
        let mut shell = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; sleep 0.3"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let watcher = Watcher::start(shell.id());
        let _ = shell.wait();
        let seen = watcher.finish();
        let survivors = survivors(&seen, Duration::from_millis(100));
        assert_eq!(survivors.len(), 1, "{survivors:?} / {seen:?}");
        assert_eq!(survivors[0].comm, "sleep");
        kill(survivors[0].pid);
        assert!(super::survivors(&seen, Duration::from_secs(5)).is_empty());
    }
}
