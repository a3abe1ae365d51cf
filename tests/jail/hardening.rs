//! Issue 11's hardening, judged from the host side while the run holds what it can get: kernel
//! budgets charged to the run's own host ids rather than root's, memory that RLIMIT_AS cannot count
//! (memfds, System V shared memory, other processes) contained or refused, the memory limit failing
//! closed where nothing can enforce it, memfds that cannot be executed, what the program sees of
//! the host (pid 1, cgroup paths, uptime), and supplementary groups.

use super::support;
use warden_test_support::{both_modes, require_root};

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{command_as, rules_for, run, As, Options, SMALL_RULES};

/// A run started in the background, so the host can measure it while it holds what it took.
struct Background {
    child: Child,
    _dir: tempfile::TempDir,
    stdout: std::thread::JoinHandle<Vec<u8>>,
}

impl Background {
    fn start(who: As, program: &str, rules: &str) -> Self {
        let dir = support::shared_tempdir();
        let program_path = dir.path().join("program.py");
        let rules_path = dir.path().join("rules.toml");
        std::fs::write(&program_path, program).expect("program");
        std::fs::write(&rules_path, rules_for(who, &without_hooks(rules))).expect("rules");
        let args: Vec<String> = vec![
            "run".into(),
            "--no-policy".into(),
            "--json".into(),
            "--rules".into(),
            rules_path.display().to_string(),
            program_path.display().to_string(),
        ];
        let mut child = command_as(who, &args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn warden");
        let mut out = child.stdout.take().expect("stdout");
        let stdout = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        });
        Background {
            child,
            _dir: dir,
            stdout,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the end (at most 90 s) and returns the result record.
    fn finish(mut self) -> Value {
        let start = Instant::now();
        while self.running() {
            if start.elapsed() > Duration::from_secs(90) {
                let _ = self.child.kill();
                panic!("warden did not finish");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = self.pid();
        let out = self.stdout.join().unwrap_or_default();
        support::assert_nothing_left(pid);
        serde_json::from_slice(&out)
            .unwrap_or_else(|err| panic!("no record ({err}): {}", String::from_utf8_lossy(&out)))
    }
}

/// `rules` with the runtime layer off: these programs use ctypes to reach the kernel directly, and
/// it is the jail that must hold.
fn without_hooks(rules: &str) -> String {
    if rules.contains("[runtime]") {
        rules.to_owned()
    } else {
        format!("{rules}\n[runtime]\nhooks = \"off\"\n")
    }
}

/// The processes below `root` (the jail's init, the program and its children), from `/proc`.
fn descendants(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|at| &stat[at + 2..]) else {
            continue;
        };
        if let Some(ppid) = after.split(' ').nth(1).and_then(|p| p.parse().ok()) {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// A `Key:` line of `/proc/<pid>/status`, without the key.
fn status_line(pid: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix(key))
        .map(|rest| rest.trim().to_owned())
}

/// A `Key:   N kB` line of `/proc/<pid>/status`, in bytes.
fn status_kib(pid: u32, key: &str) -> u64 {
    status_line(&pid.to_string(), key)
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// The first number of `SigQ: queued/limit` of a process.
fn queued_signals(pid: &str) -> u64 {
    status_line(pid, "SigQ:")
        .and_then(|v| v.split('/').next()?.parse().ok())
        .unwrap_or(u64::MAX)
}

/// How many inotify instances a root process on the host can still create, up to 200 (a short
/// Python process counts them: the budget is root's, whichever root process asks).
fn inotify_headroom() -> usize {
    let count = "import ctypes\nlibc = ctypes.CDLL(None)\nn = 0\nwhile n < 200 and libc.inotify_init1(0) >= 0:\n    n += 1\nprint(n)\n";
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", count])
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// How many POSIX message queues of 64 KiB a root process on the host can still create, up to 100
/// (created and unlinked again by a short Python process).
fn mqueue_headroom() -> usize {
    let count = r#"
import ctypes, os
rt = ctypes.CDLL("librt.so.1", use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long)]
attr = Attr(0, 8, 8192, 0)
names = []
while len(names) < 100:
    name = b"/warden-test-%d-%d" % (os.getpid(), len(names))
    if rt.mq_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, ctypes.byref(attr)) < 0:
        break
    names.append(name)
for name in names:
    rt.mq_unlink(name)
print(len(names))
"#;
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", count])
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// The jail's process whose `comm` is `name`, once it appears (within 60 s).
fn wait_for_comm(background: &mut Background, name: &str) -> Option<u32> {
    let start = Instant::now();
    while background.running() && start.elapsed() < Duration::from_secs(60) {
        for pid in descendants(background.pid()) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == name {
                return Some(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Point 2: while a run holds every queued signal, inotify instance and message queue it can get,
/// root's own budgets on the host are untouched (measured by this root process), and the run held no more
/// than its jail's ceilings, from host ids of its own.
#[test]
fn a_run_holding_its_kernel_budgets_leaves_roots_untouched() {
    require_root!();
    let marker = format!("hold{}", &support::token("")[..6]);
    let program = format!(
        r##"
import os, signal, time, ctypes
libc = ctypes.CDLL(None, use_errno=True)
sig = signal.SIGRTMIN
signal.pthread_sigmask(signal.SIG_BLOCK, {{sig}})
# Each kill() would queue one more real-time signal until the budget is spent (then the kernel drops
# them); seccomp now refuses the first (issue 25), so the run holds none.
for _ in range(120000):
    try:
        os.kill(os.getpid(), sig)
    except PermissionError:
        break
inotify = 0
while inotify < 100000 and libc.inotify_init1(0) >= 0:
    inotify += 1
class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long)]
attr = MqAttr(0, 8, 8192, 0)
mqueues = 0
while mqueues < 1000 and libc.mq_open(b"/hold%d" % mqueues, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(attr)) >= 0:
    mqueues += 1
libc.prctl(15, b"{marker}", 0, 0, 0)
sigq = [l.split()[1] for l in open("/proc/self/status") if l.startswith("SigQ")]
print("HELD", sigq[0], inotify, mqueues, flush=True)
time.sleep(5)
"##
    );
    let root_signals_before = queued_signals("self");
    let root_inotify_before = inotify_headroom();
    let root_mqueues_before = mqueue_headroom();
    let mut background = Background::start(As::Root, &program, support::BASE_RULES);
    let held = wait_for_comm(&mut background, &marker);
    let root_signals_during = queued_signals("self");
    let root_inotify_during = inotify_headroom();
    let root_mqueues_during = mqueue_headroom();
    let program_signals = held.map(|pid| queued_signals(&pid.to_string()));
    let program_uid = held.and_then(|pid| status_line(&pid.to_string(), "Uid:"));
    let record = background.finish();
    assert_eq!(record["status"], "ok", "{record}");
    let held = held.expect("the program never held its budgets");
    let stdout = record["stdout"].as_str().unwrap_or("");
    let inotify: u64 = stdout
        .split_whitespace()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    // The run got what its jail allows, and no more.
    let program_signals = program_signals.unwrap_or(u64::MAX);
    assert!(
        program_signals <= 256,
        "the program queued {program_signals} signals (ceiling 256): {stdout}"
    );
    assert_eq!(
        inotify, 0,
        "the program made {inotify} inotify instances (refused by seccomp)"
    );
    let mqueues: u64 = stdout
        .split_whitespace()
        .nth(3)
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    assert_eq!(
        mqueues, 0,
        "the program made POSIX message queues: {stdout}"
    );
    // Root's budgets did not move (other tests running as root meanwhile get a little slack).
    assert!(
        root_signals_during <= root_signals_before + 64,
        "root's queued signals went from {root_signals_before} to {root_signals_during} while the run held its own"
    );
    assert!(
        root_inotify_during + 16 >= root_inotify_before && root_inotify_during > 0,
        "root's inotify headroom went from {root_inotify_before} to {root_inotify_during}"
    );
    assert!(
        root_mqueues_during + 2 >= root_mqueues_before && root_mqueues_during > 0,
        "root's message queue headroom went from {root_mqueues_before} to {root_mqueues_during}"
    );
    // The program ran as a host uid of the run's own, not as the host's nobody or root.
    let uid: u64 = program_uid
        .and_then(|line| line.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    assert!(
        (2_000_000_000..2_000_008_192).contains(&uid),
        "program {held} ran as host uid {uid}"
    );
}

/// Memory the host sees a run hold that RLIMIT_AS does not count: bytes in memfds (stat of the
/// descriptors) and attached System V shared memory (RssShmem), over the run's processes.
fn uncounted_memory(warden: u32) -> u64 {
    let mut total = 0;
    for pid in descendants(warden) {
        total += status_kib(pid, "RssShmem:");
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            if target.to_string_lossy().starts_with("/memfd:") {
                use std::os::unix::fs::MetadataExt;
                total += std::fs::metadata(fd.path()).map_or(0, |m| m.blocks() * 512);
            }
        }
    }
    total
}

const MIB: u64 = 1024 * 1024;

both_modes! {
    /// Point 3: memfds and System V shared memory hold memory outside the address space; a run
    /// never holds more than its memory limit (128 MiB) of them, measured from the host while it
    /// tries. Root: the memory cgroup counts them (an OOM kill). An ordinary user without a
    /// cgroup (best-effort mode): memfd_create and shmget are refused.
    fn memory_outside_the_address_space_is_contained(who: As) {
        let program = r##"
import os, time, ctypes
libc = ctypes.CDLL(None, use_errno=True)
chunk = b"x" * (1 << 20)
held, fds = 0, []
try:
    while held < (512 << 20):
        fd = os.memfd_create("hog")
        for _ in range(4):
            os.write(fd, chunk)
        fds.append(fd)
        held += 4 << 20
except OSError as e:
    print("MEMFD STOPPED", held >> 20, type(e).__name__, flush=True)
libc.shmget.restype = ctypes.c_int
libc.shmat.restype = ctypes.c_void_p
shm = 0
while shm < (512 << 20):
    sid = libc.shmget(0, 16 << 20, 0o1600)
    if sid < 0:
        print("SHM STOPPED", shm >> 20, os.strerror(ctypes.get_errno()), flush=True)
        break
    at = libc.shmat(sid, None, 0)
    ctypes.memset(at, 1, 16 << 20)
    shm += 16 << 20
print("HOLDING", held >> 20, shm >> 20, flush=True)
time.sleep(3)
"##;
        let mut background = Background::start(who, program, SMALL_RULES);
        let mut peak = 0;
        while background.running() {
            peak = peak.max(uncounted_memory(background.pid()));
            std::thread::sleep(Duration::from_millis(10));
        }
        let record = background.finish();
        assert!(peak <= 128 * MIB, "the run held {} MiB in memfds and shared memory under a 128 MiB limit: {record}", peak / MIB);
        let stdout = record["stdout"].as_str().unwrap_or("");
        match who {
            As::Root => {
                assert_eq!(record["layers"]["memory"], "cgroup", "{record}");
                assert!(record["status"] == "memory_limit" || stdout.contains("STOPPED"), "{record}");
            }
            As::User => {
                assert_eq!(record["layers"]["memory"], "best-effort", "{record}");
                assert!(stdout.contains("MEMFD STOPPED 0 PermissionError"), "{record}");
                assert!(stdout.contains("SHM STOPPED 0 Operation not permitted"), "{record}");
                assert_eq!(record["status"], "ok", "{record}");
            }
        }
    }
}

both_modes! {
    /// Point 3: RLIMIT_AS is per process, so children multiply it; the run's processes never hold
    /// (anonymous memory, from the host) much more than the limit together. Root: the cgroup counts
    /// the tree. best-effort: no second process (EAGAIN, Python's BlockingIOError), threads work.
    fn a_fork_multiplier_is_contained_and_threads_still_work(who: As) {
        let program = r##"
import os, sys, time, threading
done = []
threads = [threading.Thread(target=lambda: done.append(1)) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print("THREADS", len(done), flush=True)
children = 0
try:
    for _ in range(6):
        if os.fork() == 0:
            block = bytearray(60 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(3)
            os._exit(0)
        children += 1
except OSError as e:
    print("FORK REFUSED", type(e).__name__, flush=True)
print("CHILDREN", children, flush=True)
for _ in range(children):
    try:
        os.wait()
    except ChildProcessError:
        break
"##;
        let mut background = Background::start(who, program, SMALL_RULES);
        let mut peak = 0;
        while background.running() {
            let anon: u64 = descendants(background.pid())
                .into_iter()
                .map(|pid| status_kib(pid, "RssAnon:"))
                .sum();
            peak = peak.max(anon);
            std::thread::sleep(Duration::from_millis(10));
        }
        let record = background.finish();
        let stdout = record["stdout"].as_str().unwrap_or("");
        assert!(stdout.contains("THREADS 8"), "threads must keep working: {record}");
        // Pages a fork shares with its parent count in both: a little slack over 128 MiB.
        assert!(peak <= 176 * MIB, "the run's processes held {} MiB under a 128 MiB limit: {record}", peak / MIB);
        if who == As::User {
            assert!(stdout.contains("FORK REFUSED BlockingIOError") && stdout.contains("CHILDREN 0"), "{record}");
            assert_eq!(record["layers"]["memory"], "best-effort");
        }
    }
}

/// Point 3: numpy with OpenBLAS threads runs in best-effort mode (threads are not processes), with
/// the provisioned runtime when it is installed.
#[test]
fn numpy_threads_run_in_best_effort_mode() {
    require_root!();
    if !Path::new("/var/lib/warden/runtimes/default").is_dir() {
        eprintln!("skipped: no provisioned runtime `default` (scripts/setup.sh installs it)");
        return;
    }
    let rules = "[policy]\nname = \"t\"\n[runtime]\nname = \"default\"\n[processes]\nallow = true\n[limits]\nmemory_enforcement = \"best-effort\"\n";
    let program = "import numpy, os\na = numpy.ones((600, 600))\nprint('SUM', float((a @ a).sum()), len(os.listdir('/proc/self/task')))\n";
    let run = run(
        As::User,
        program,
        Options {
            rules: Some(rules),
            env: vec![("WARDEN_DATA_DIR", "/var/lib/warden".into())],
            ..Options::default()
        },
    );
    assert_eq!(run.status(), "ok", "{:?}", run.record);
    assert!(
        run.stdout().starts_with("SUM 216000000.0"),
        "{}",
        run.stdout()
    );
    assert_eq!(run.record["layers"]["memory"], "best-effort");
}

/// Point 3: without `memory_enforcement = "best-effort"`, a memory limit this host cannot enforce
/// for an ordinary user (no delegated cgroup) refuses the run, naming the layer and the way out.
#[test]
fn an_unenforceable_memory_limit_fails_closed() {
    require_root!();
    let rules = "[policy]\nname = \"strict\"\n# memory_enforcement is not set: strict\n[processes]\nallow = true\n";
    let run = run(
        As::User,
        "print('must not run')\n",
        Options {
            rules: Some(rules),
            ..Options::default()
        },
    );
    assert_eq!(run.status(), "setup_failed", "{:?}", run.record);
    assert_eq!(run.exit_code, 1);
    let message = run.message();
    assert!(
        message.contains("layer `cgroup`")
            && message.contains("memory limit")
            && message.contains("memory_enforcement = \"best-effort\""),
        "{message}"
    );
    assert_eq!(run.stdout(), "");
}

both_modes! {
    /// Point 6: a native binary written into a memfd cannot be executed (root: vm.memfd_noexec=2
    /// in the jail's pid namespace; an ordinary user's jail: memfd_create refused). Had the exec
    /// worked, the program would have become /usr/bin/false and the record would say exit code 1.
    fn a_memfd_cannot_be_executed(who: As) {
        let program = r##"
import os
try:
    fd = os.memfd_create("payload", 0)
    with open("/usr/bin/false", "rb") as f:
        os.write(fd, f.read())
    os.execve(fd, ["false"], {})
except OSError as e:
    print("REFUSED", type(e).__name__)
try:
    os.memfd_create("payload", getattr(os, "MFD_EXEC", 0x10))
    print("MFD_EXEC accepted")
except OSError as e:
    print("MFD_EXEC REFUSED", type(e).__name__)
"##;
        let run = run(who, program, Options::default());
        assert_eq!(run.record["exit_code"], 0, "the memfd was executed: {:?}", run.record);
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert!(run.stdout().starts_with("REFUSED "), "{}", run.stdout());
        assert!(run.stdout().contains("MFD_EXEC REFUSED"), "{}", run.stdout());
        let expected = match who {
            As::Root => "vm.memfd_noexec=2",
            As::User => "memfd_create refused",
        };
        assert_eq!(run.record["layers"]["memfd_exec"], expected);
    }
}

both_modes! {
    /// Point 7: the program sees nothing of warden's command line (host paths of the rules file and
    /// the program), no host cgroup path or warden pid, and an uptime that starts with the run.
    fn the_program_sees_no_host_paths_pids_or_uptime(who: As) {
        let program = r##"
import os, time
try:
    print("CMDLINE", open("/proc/1/cmdline", "rb").read())
except OSError as e:
    print("CMDLINE", type(e).__name__)
try:
    print("ENVIRON", open("/proc/1/environ", "rb").read())
except OSError as e:
    print("ENVIRON", type(e).__name__)
print("CGROUP", open("/proc/self/cgroup").read().replace("\n", " "))
print("PROCS", sorted(p for p in os.listdir("/proc") if p.isdigit()))
print("UPTIME", int(time.clock_gettime(time.CLOCK_BOOTTIME)), int(time.clock_gettime(time.CLOCK_MONOTONIC)))
"##;
        let run = run(who, program, Options::default());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        let out = run.stdout();
        // Nothing of the host's paths: the test's temp dirs, warden's binary, the run cgroups.
        for host_path in ["/tmp/warden-jail-test-", "target/", "run-", "/work/main", "warden/"] {
            assert!(!out.contains(host_path), "{host_path} visible: {out}");
        }
        assert!(!out.contains(&format!("{}", run.warden_pid)), "warden's pid visible: {out}");
        let line = |key: &str| out.lines().find(|l| l.starts_with(key)).unwrap_or("").to_owned();
        assert!(
            line("CMDLINE") == "CMDLINE FileNotFoundError" || line("CMDLINE") == "CMDLINE b'warden-init'",
            "{out}"
        );
        assert!(line("ENVIRON").starts_with("ENVIRON ") && !line("ENVIRON").contains("PATH"), "{out}");
        for entry in line("CGROUP").trim_start_matches("CGROUP ").split_whitespace() {
            assert!(entry.ends_with(":/"), "cgroup path {entry}: {out}");
        }
        assert!(!line("PROCS").contains("'1'"), "pid 1 visible: {out}");
        let host_uptime: f64 = std::fs::read_to_string("/proc/uptime")
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse().ok())
            .unwrap_or(0.0);
        let jail: Vec<u64> = line("UPTIME").split_whitespace().skip(1).filter_map(|n| n.parse().ok()).collect();
        if host_uptime > 600.0 {
            assert!(jail.len() == 2 && jail.iter().all(|&s| s < 120), "the jail's clocks show the host's uptime: {out}");
        }
    }
}

/// Point 8: the program has no supplementary groups as root; as an ordinary user started with one,
/// the kernel keeps it (setgroups is refused in a user namespace an unprivileged user mapped), and
/// the jail shows it only as the overflow gid.
#[test]
fn supplementary_groups_are_dropped_or_shown_as_overflow() {
    require_root!();
    let program = "print('GROUPS', [l for l in open('/proc/self/status') if l.startswith('Groups:')][0].split()[1:])\n";
    let root = run(As::Root, program, Options::default());
    assert_eq!(root.status(), "ok", "{:?}", root.record);
    assert_eq!(root.stdout().trim(), "GROUPS []");

    let (uid, gid) = support::test_user();
    let dir = support::shared_tempdir();
    let program_path = dir.path().join("program.py");
    let rules_path = dir.path().join("rules.toml");
    std::fs::write(&program_path, program).expect("program");
    std::fs::write(
        &rules_path,
        rules_for(As::User, &without_hooks(support::BASE_RULES)),
    )
    .expect("rules");
    let mut command = std::process::Command::new("setpriv");
    command
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"))
        .arg("--groups=100")
        .arg("--")
        .arg(warden_test_support::warden_bin())
        .args(["run", "--no-policy", "--json", "--rules"])
        .arg(&rules_path)
        .arg(&program_path)
        .env("HOME", "/tmp")
        .env("TMPDIR", "/tmp")
        .env_remove("XDG_RUNTIME_DIR");
    let output = support::run_with_timeout(command, Duration::from_secs(60));
    let record: Value = serde_json::from_slice(&output.stdout).expect("record");
    assert_eq!(record["status"], "ok", "{record}");
    let stdout = record["stdout"].as_str().unwrap_or("");
    assert_eq!(stdout.trim(), "GROUPS ['65534']", "{record}");
}
