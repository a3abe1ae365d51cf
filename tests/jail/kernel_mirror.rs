//! Issue 24: the kernel mirrors the rules file, so its intents still hold when the runtime layer is
//! gone. Every run here is `--no-policy --no-hooks` with the default policy (no processes, no
//! network; the exec ban stays): what is refused is refused by the kernel alone. Effects are judged
//! from the host side: a secret planted on the host under `/usr` (which the jail binds, read-only)
//! never leaves the jail; the files warden collects from the work dir.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::Value;
use warden_test_support::{both_modes, repo};

use super::support::{self, run, As, Options, Run};

/// The default policy, as shipped (the default runtime, no processes, no network).
fn default_rules() -> String {
    std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules/default.toml")
}

/// `rules` with `[processes] allow = true`.
fn with_processes(rules: &str) -> String {
    let at = rules.find("[processes]").expect("a [processes] table");
    let (head, tail) = rules.split_at(at);
    let tail = tail.replacen("allow = false", "allow = true", 1);
    assert!(tail.contains("allow = true"), "{tail}");
    format!("{head}{tail}")
}

/// Runs `program` with the default policy, the static and the runtime layer off, collecting the
/// work dir into a directory of the run's own.
fn run_kernel_only(who: As, program: &str, rules: &str) -> (Run, Vec<String>) {
    let dir = support::shared_tempdir();
    if who == As::User {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
    }
    let out = dir.path().join("out");
    let run = run(
        who,
        program,
        Options {
            rules: Some(rules),
            hooks: false,
            extra_args: vec!["--output-dir".into(), out.display().to_string()],
            env: vec![("WARDEN_DATA_DIR", "/var/lib/warden".to_owned())],
        },
    );
    let files = run.record["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|file| file["path"].as_str().map(str::to_owned))
        .collect();
    (run, files)
}

/// A world-readable secret planted on the host in a directory of its own under `/usr/lib`: the jail
/// binds the host's `/usr`, so only Landlock keeps the program from reading it. Removed on drop.
struct UsrSecret {
    dir: PathBuf,
    file: PathBuf,
    secret: String,
}

impl UsrSecret {
    fn new() -> Self {
        let secret = support::token("USRSECRET");
        let dir = PathBuf::from(format!("/usr/lib/warden-mirror-{}", support::token("")));
        std::fs::create_dir(&dir).expect("dir under /usr/lib");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let file = dir.join("secret.txt");
        std::fs::write(&file, format!("{secret}\n")).expect("secret");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        UsrSecret { dir, file, secret }
    }
}

impl Drop for UsrSecret {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

both_modes! {
    /// `[files] read` without the runtime layer: of the system tree the program reads only what
    /// the interpreter and its libraries need. A file elsewhere under `/usr` stays unread by every
    /// path: directly, through the `/usr/bin/X11 -> .` link the runtime layer judged by its text,
    /// relative to a directory descriptor, and by a native reader (numpy's `fromfile`) — while the
    /// data stack still imports and the policy's roots are still read and written.
    fn the_kernel_holds_the_read_roots_without_the_runtime_layer(who: As) {
        let planted = UsrSecret::new();
        let file = planted.file.display().to_string();
        let relative = planted.file.strip_prefix("/usr").expect("under /usr").display().to_string();
        let program = format!(r##"
import os, numpy as np, pandas as pd
def attempt(name, fn):
    try:
        print("RESULT", name, "read", repr(fn())[:200])
    except OSError as e:
        print("RESULT", name, "refused", e.errno)
attempt("direct", lambda: open({file:?}).read())
attempt("x11-link", lambda: open("/usr/bin/X11/../.." + {file:?}).read())
usr = os.open("/usr", os.O_PATH | os.O_DIRECTORY)
attempt("dir-fd", lambda: os.read(os.open({relative:?}, os.O_RDONLY, dir_fd=usr), 200))
attempt("numpy-fromfile", lambda: np.fromfile({file:?}, dtype=np.uint8).tobytes())
attempt("usr-bin", lambda: open("/usr/bin/ls", "rb").read(4))
pd.DataFrame({{"a": [1, 2]}}).to_csv("/work/data.csv", index=False)
print("OK", int(pd.read_csv("/work/data.csv")["a"].sum()), bool(open(os.__file__).readline()))
"##);
        let (run, files) = run_kernel_only(who, &program, &default_rules());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert_eq!(run.record["layers"]["runtime_hooks"], false, "{:?}", run.record);
        assert!(!run.everything().contains(&planted.secret), "the secret under /usr leaked: {}", run.stdout());
        let results = run.lines_starting("RESULT");
        assert_eq!(results.len(), 5, "{}", run.stdout());
        let x11 = std::path::Path::new("/usr/bin/X11").exists();
        for line in &results {
            // A host without the `X11 -> .` link has no such path to follow.
            let missing = !x11 && line.starts_with("RESULT x11-link ");
            assert!(
                line.ends_with(" refused 13") || (missing && line.ends_with(" refused 2")),
                "the kernel let it through: {line}"
            );
        }
        // The runtime's own files and the policy's roots are as readable as before.
        assert!(run.stdout().contains("OK 3 True"), "{}", run.stdout());
        assert!(files.contains(&"data.csv".to_owned()), "{files:?}");
    }
}

both_modes! {
    /// `[processes]` and `[network]` off, without the runtime layer: no socket of any family
    /// (`AF_UNIX` and `socketpair` included: `_socket.socketpair` raises no audit event), and no
    /// FIFO or device node in the write roots, while a regular file made by `mknod` still is one.
    /// With a policy that allows processes, a socket pair works (the refusal follows the policy).
    fn sockets_and_device_nodes_are_refused_by_the_kernel_alone(who: As) {
        let program = r#"
import os, stat, socket, _socket
def attempt(name, fn):
    try:
        fn()
        print("RESULT", name, "made")
    except OSError as e:
        print("RESULT", name, "refused", e.errno)
attempt("unix-socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("socketpair", lambda: socket.socketpair())
attempt("raw-socketpair", lambda: _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_DGRAM))
attempt("inet-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("mkfifo-work", lambda: os.mkfifo("/work/fifo"))
attempt("mkfifo-tmp", lambda: os.mkfifo("/tmp/fifo"))
attempt("mknod-fifo", lambda: os.mknod("/work/node", stat.S_IFIFO | 0o600))
attempt("mknod-chr", lambda: os.mknod("/work/null", stat.S_IFCHR | 0o666, os.makedev(1, 3)))
attempt("mknod-sock", lambda: os.mknod("/work/sock", stat.S_IFSOCK | 0o600))
os.mknod("/work/plain", stat.S_IFREG | 0o644)
print("PLAIN", stat.S_ISREG(os.stat("/work/plain").st_mode))
"#;
        let (run, files) = run_kernel_only(who, program, &default_rules());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert_every_attempt_refused(&run, 9);
        assert!(run.stdout().contains("PLAIN True"), "{}", run.stdout());
        assert!(files.contains(&"plain".to_owned()), "{files:?}");
        for name in ["fifo", "node", "null", "sock"] {
            assert!(!files.contains(&name.to_owned()), "{name}: {files:?}");
        }
        let refused: Vec<Value> = run.record["files_refused"].as_array().cloned().unwrap_or_default();
        assert!(refused.is_empty(), "a node was made: {refused:?}");

        // The same socket pair with processes allowed: the refusal is the policy's, not the jail's.
        let (run, _) = run_kernel_only(who, "import socket\na, b = socket.socketpair()\na.send(b'x')\nprint('PAIR', b.recv(1))\n", &with_processes(&default_rules()));
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert!(run.stdout().contains("PAIR b'x'"), "{}", run.stdout());
    }
}

/// The program's `RESULT <name> made|refused <errno>` lines: `count` of them, each refused with
/// EPERM.
fn assert_every_attempt_refused(run: &Run, count: usize) {
    let results = run.lines_starting("RESULT");
    assert_eq!(results.len(), count, "{}", run.stdout());
    for line in &results {
        assert!(
            line.ends_with(" refused 1"),
            "the kernel let it through: {line}"
        );
    }
}

/// The `major:minor:inode` key `/proc/locks` gives a lock on `path` (the host's view).
fn lock_key(path: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap_or_else(|err| panic!("{path}: {err}"));
    let dev = meta.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major:02x}:{minor:02x}:{}", meta.ino())
}

/// Every line of the host's `/proc/locks` seen while `work` runs (read every 20 ms).
fn locks_seen_during<T>(work: impl FnOnce() -> T) -> (T, Vec<String>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut seen = std::collections::BTreeSet::new();
            while !done.load(Ordering::SeqCst) {
                let text = std::fs::read_to_string("/proc/locks").unwrap_or_default();
                seen.extend(text.lines().map(str::to_owned));
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            seen.into_iter().collect::<Vec<_>>()
        });
        let result = work();
        done.store(true, Ordering::SeqCst);
        (result, watcher.join().expect("watcher"))
    })
}

both_modes! {
    /// Issue 25: what a run takes of the host's inodes and of the budgets the kernel counts per
    /// uid, without the runtime layer. A lock on a file the jail binds from the host (`/dev/null`,
    /// the interpreter) is done without locking anything — judged from the host's `/proc/locks`
    /// while the run holds it; sqlite3 still works on a database in the work dir. No inotify or
    /// dnotify watch (they would see host activity on the binds), no queued real-time signal, no
    /// POSIX timer, no pipe grown past the default; ordinary signals still work. In
    /// `/proc/self/mountinfo`, no mount names warden's install directory, and as root the work
    /// dir's mount shows no host uid.
    fn host_inodes_and_shared_budgets_are_out_of_a_runs_reach(who: As) {
        let program = r#"
import ctypes, fcntl, os, signal, sqlite3, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, fn):
    try:
        fn()
        print("RESULT", name, "made")
    except OSError as e:
        print("RESULT", name, "refused", e.errno)
def c_call(fn, *args):
    if fn(*args) < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
attempt("inotify", lambda: c_call(libc.inotify_init1, 0))
timer = ctypes.c_void_p()
attempt("timer", lambda: c_call(libc.timer_create, 1, None, ctypes.byref(timer)))
signal.pthread_sigmask(signal.SIG_BLOCK, [40, signal.SIGUSR1])
attempt("rt-kill", lambda: os.kill(os.getpid(), 40))
attempt("rt-tgkill", lambda: signal.pthread_kill(threading.get_ident(), 41))
r, w = os.pipe()
attempt("pipe-grow", lambda: fcntl.fcntl(w, 1031, 1 << 20))
directory = os.open("/usr", os.O_RDONLY)
attempt("dnotify", lambda: fcntl.fcntl(directory, 1026, 1))
attempt("setsig", lambda: fcntl.fcntl(w, 10, 40))
print("PIPE", fcntl.fcntl(w, 1032))
os.kill(os.getpid(), signal.SIGUSR1)
print("PENDING", signal.SIGUSR1 in signal.sigpending())
held = []
for path in ["/dev/null", os.path.realpath(sys.executable)]:
    f = open(path, "rb")
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB) if path != "/dev/null" else None
    held.append(f)
null = open("/dev/null", "wb")
fcntl.lockf(null, fcntl.LOCK_EX | fcntl.LOCK_NB)
fcntl.fcntl(null, 37, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
held.append(null)
print("LOCKED", os.path.realpath(sys.executable))
db = sqlite3.connect("/work/data.db")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(100)])
db.commit()
print("SQLITE", db.execute("select sum(x) from t").fetchone()[0])
db.close()
mounts = open("/proc/self/mountinfo").read().splitlines()
print("WORKMOUNT", [l for l in mounts if " /work " in l][0].strip())
for line in mounts:
    print("MOUNT", line)
time.sleep(2)
"#;
        let ((run, files), locks) =
            locks_seen_during(|| run_kernel_only(who, program, &default_rules()));
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert_every_attempt_refused(&run, 7);
        assert!(run.stdout().contains("PIPE 65536"), "{}", run.stdout());
        assert!(run.stdout().contains("PENDING True"), "{}", run.stdout());
        assert!(run.stdout().contains("SQLITE 4950"), "{}", run.stdout());
        assert!(files.contains(&"data.db".to_owned()), "{files:?}");
        let interpreter = run
            .lines_starting("LOCKED")
            .first()
            .and_then(|line| line.split_whitespace().nth(1).map(str::to_owned))
            .unwrap_or_else(|| panic!("the program did not lock: {}", run.stdout()));
        for path in ["/dev/null", interpreter.as_str()] {
            let key = lock_key(path);
            let held: Vec<&String> = locks.iter().filter(|l| l.contains(&format!(" {key} "))).collect();
            assert!(held.is_empty(), "the run locked the host's {path}: {held:?}");
        }
        let mount = run.lines_starting("WORKMOUNT");
        let mount = mount.first().unwrap_or_else(|| panic!("{}", run.stdout()));
        // As root each run has host ids of its own, which the mount must not name. An ordinary
        // user's jail mounts as that user, whose id the kernel shows (as in `uid_map`).
        if who == As::Root {
            assert!(!mount.contains("uid="), "the work dir's mount shows a host id: {mount}");
        }
        // warden's install directory (where its binary and hook library are) is named by no
        // mount: the hook library is bound from its copy in the data directory.
        let install = std::path::Path::new(env!("CARGO_BIN_EXE_warden"))
            .parent()
            .expect("the binary's directory")
            .display()
            .to_string();
        let mounts = run.lines_starting("MOUNT ");
        assert!(mounts.len() > 3, "{}", run.stdout());
        for line in &mounts {
            assert!(!line.contains(&install), "a mount names warden's install directory: {line}");
        }
    }
}
