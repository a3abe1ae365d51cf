//! Attack programs run in the real jail (static policy off), as root and as an unprivileged user.
//! Every check is made from the host side; what the program prints is only a hint. A probe that
//! succeeds is a breach and fails the test.

use super::support;
use warden_test_support::both_modes;

use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::time::Duration;

use support::{run, As, Canary, Options};

both_modes! {
    /// A world-readable canary outside the file roots is never read, whatever path the program tries.
    fn a_canary_outside_the_roots_is_never_read(who: As) {
        let canary = Canary::new();
        let file = canary.file.display().to_string();
        let dir = canary.dir.display().to_string();
        let program = format!(r##"
import os, glob
attempts = {{
    "open": lambda: open({file:?}).read(),
    "proc-root": lambda: open("/proc/1/root" + {file:?}).read(),
    "proc-self-root": lambda: open("/proc/self/root" + {file:?}).read(),
    "listdir": lambda: os.listdir({dir:?}),
    "glob": lambda: glob.glob("/warden-canary-*"),
    "dotdot": lambda: open("/work/../../.." + {file:?}).read(),
    "host-tmp": lambda: os.listdir("/tmp"),
    "shadow": lambda: open("/etc/shadow").read(),
    "root-home": lambda: os.listdir("/root"),
}}
for name, attempt in attempts.items():
    try:
        result = attempt()
        print("RESULT", name, "ok", repr(result)[:200])
    except Exception as e:
        print("RESULT", name, "blocked", type(e).__name__)
"##);
        let run = run(who, &program, Options::default());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert!(!run.everything().contains(&canary.secret), "the canary's secret leaked: {}", run.stdout());
        for line in run.lines_starting("RESULT") {
            let ok_allowed = line.starts_with("RESULT glob ok []") || line.starts_with("RESULT host-tmp ok []");
            assert!(line.contains(" blocked ") || ok_allowed, "probe succeeded: {line}");
        }
        assert_eq!(run.lines_starting("RESULT").len(), 9);
    }
}

both_modes! {
    /// Writes anywhere but the private work dir and /tmp fail, and nothing appears on the host.
    fn nothing_is_written_outside_the_work_dir(who: As) {
        let marker = support::token("WRITE");
        let targets = [
            "/tmp/{m}",
            "/var/tmp/{m}",
            "/dev/shm/{m}",
            "/{m}",
            "/usr/{m}",
            "/usr/lib/python3/{m}",
            "/etc/{m}",
            "/run/{m}",
            "/proc/{m}",
            "/dev/{m}",
        ];
        let targets: Vec<String> = targets.iter().map(|t| t.replace("{m}", &marker)).collect();
        let program = format!(r##"
import os
for path in {targets:?}:
    try:
        with open(path, "w") as f: f.write("x")
        print("WROTE", path)
    except Exception as e:
        print("BLOCKED", path, type(e).__name__)
with open("/work/{marker}", "w") as f: f.write("inside")
print("WORK", os.listdir("/work"))
"##);
        let run = run(who, &program, Options::default());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        // In the jail, /tmp and /dev/shm are the run's own tmpfs: a write there is allowed but private.
        for line in run.lines_starting("WROTE") {
            assert!(line.starts_with("WROTE /tmp/") || line.starts_with("WROTE /dev/shm/"), "write escaped: {line}");
        }
        for target in &targets {
            assert!(!std::path::Path::new(target).exists(), "{target} exists on the host");
        }
        assert!(run.stdout().contains(&format!("WORK ['{marker}']")));
        // Search the usual host locations for the marker too.
        for dir in ["/tmp", "/var/tmp", "/dev/shm", "/run", "/", "/usr", "/etc", "/root"] {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                assert!(!entry.file_name().to_string_lossy().contains(&marker), "marker found in {dir}");
            }
        }
    }
}

both_modes! {
    /// TCP and UDP listeners on the host's loopback (IPv4 and IPv6) and a host abstract Unix socket
    /// receive nothing.
    fn host_listeners_receive_nothing(who: As) {
        use std::os::linux::net::SocketAddrExt;
        let tcp4 = TcpListener::bind("127.0.0.1:0").expect("tcp4");
        let tcp6 = TcpListener::bind("[::1]:0").ok();
        let udp4 = UdpSocket::bind("127.0.0.1:0").expect("udp4");
        let udp6 = UdpSocket::bind("[::1]:0").ok();
        let abstract_name = support::token("warden-abstract-");
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).expect("addr");
        let unix = UnixListener::bind_addr(&addr).expect("abstract listener");
        for listener in [Some(&tcp4), tcp6.as_ref()].into_iter().flatten() {
            listener.set_nonblocking(true).expect("nonblocking");
        }
        unix.set_nonblocking(true).expect("nonblocking");
        for socket in [Some(&udp4), udp6.as_ref()].into_iter().flatten() {
            socket.set_read_timeout(Some(Duration::from_millis(50))).expect("timeout");
        }
        let port = |l: &TcpListener| l.local_addr().map(|a| a.port()).unwrap_or(0);
        let uport = |s: &UdpSocket| s.local_addr().map(|a| a.port()).unwrap_or(0);
        let program = format!(r##"
import socket, ctypes
def attempt(name, fn):
    try:
        fn(); print("RESULT", name, "connected")
    except Exception as e:
        print("RESULT", name, "blocked", type(e).__name__)
def tcp(family, host, port):
    s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(1); s.connect((host, port)); s.sendall(b"LEAK")
def udp(family, host, port):
    s = socket.socket(family, socket.SOCK_DGRAM); s.sendto(b"LEAK", (host, port))
def unix_abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("\0{abstract_name}"); s.sendall(b"LEAK")
attempt("tcp4", lambda: tcp(socket.AF_INET, "127.0.0.1", {p4}))
attempt("tcp6", lambda: tcp(socket.AF_INET6, "::1", {p6}))
attempt("udp4", lambda: udp(socket.AF_INET, "127.0.0.1", {u4}))
attempt("udp6", lambda: udp(socket.AF_INET6, "::1", {u6}))
attempt("unix-abstract", unix_abstract)
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.socket(2, 1, 0)
print("RESULT raw-libc-inet", "blocked" if fd < 0 else "connected", ctypes.get_errno())
"##,
            p4 = port(&tcp4),
            p6 = tcp6.as_ref().map_or(9, port),
            u4 = uport(&udp4),
            u6 = udp6.as_ref().map_or(9, uport),
        );
        let run = run(who, &program, Options::default());
        for line in run.lines_starting("RESULT") {
            assert!(line.contains(" blocked"), "{line}");
        }
        assert_eq!(run.lines_starting("RESULT").len(), 6, "{}", run.stdout());
        for listener in [Some(&tcp4), tcp6.as_ref()].into_iter().flatten() {
            assert!(listener.accept().is_err(), "a TCP connection reached the host");
        }
        assert!(unix.accept().is_err(), "a connection reached the host's abstract socket");
        let mut buf = [0u8; 16];
        for socket in [Some(&udp4), udp6.as_ref()].into_iter().flatten() {
            assert!(socket.recv_from(&mut buf).is_err(), "a datagram reached the host");
        }
    }
}

both_modes! {
    /// A double-forked daemon dies with the run.
    fn a_double_forked_daemon_does_not_outlive_the_run(who: As) {
        let marker = support::token("DAEMON");
        let program = format!(r##"
import os, sys, time
try:
    child = os.fork()
except BlockingIOError:
    print("fork refused")  # best-effort memory (the test user has no cgroup): one process only
    sys.exit(0)
if child == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "{marker}"])
    os._exit(0)
time.sleep(0.3)
print("parent done")
"##);
        let run = run(who, &program, Options::default());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        let expected = if who == As::Root { "parent done\n" } else { "fork refused\n" };
        assert_eq!(run.stdout(), expected, "{:?}", run.record);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(support::processes_with(&marker), Vec::<u32>::new(), "the daemon outlived the run");
    }
}

both_modes! {
    /// A host process cannot be signalled, not by its pid and not by kill(-1).
    fn a_host_process_cannot_be_signalled(who: As) {
        let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = sleeper.id();
        let program = format!(r##"
import os, signal
for target in ({pid}, -1, 1):
    try:
        os.kill(target, signal.SIGKILL); print("RESULT", target, "sent")
    except Exception as e:
        print("RESULT", target, "blocked", type(e).__name__)
"##);
        let run = run(who, &program, Options::default());
        std::thread::sleep(Duration::from_millis(50));
        assert!(sleeper.try_wait().expect("wait").is_none(), "the host process was killed: {}", run.stdout());
        assert!(run.stdout().contains(&format!("RESULT {pid} blocked")), "{}", run.stdout());
        let _ = sleeper.kill();
        let _ = sleeper.wait();
    }
}

both_modes! {
    /// Dangerous system calls made through ctypes fail.
    fn dangerous_syscalls_fail(who: As) {
        let program = r##"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def sys(name, nr, *args):
    ret = libc.syscall(nr, *args)
    print("RESULT", name, "blocked" if ret == -1 else "succeeded", ctypes.get_errno())
sys("ptrace-traceme", 101, 0, 0, 0, 0)
sys("ptrace-attach-1", 101, 16, 1, 0, 0)
sys("unshare-user", 272, 0x10000000)
sys("unshare-net", 272, 0x40000000)
sys("setns", 308, 0, 0)
sys("mount", 165, b"none", b"/tmp", b"tmpfs", 0, 0)
sys("umount", 166, b"/proc", 2)
sys("pivot_root", 155, b"/tmp", b"/tmp")
sys("chroot", 161, b"/tmp")
sys("bpf", 321, 0, 0, 0)
sys("io_uring_setup", 425, 8, ctypes.create_string_buffer(120))
sys("keyctl", 250, 0, 0, 0, 0, 0)
sys("add_key", 248, b"user", b"x", b"y", 1, -4)
sys("perf_event_open", 298, ctypes.create_string_buffer(128), 0, -1, -1, 0)
sys("userfaultfd", 323, 0)
sys("kexec_load", 246, 0, 0, 0, 0)
sys("init_module", 175, 0, 0, b"")
sys("fsopen", 430, b"tmpfs", 0)
sys("open_tree", 428, -100, b"/", 1)
sys("clone-newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)
sys("raw-socket", 41, 2, 3, 1)
sys("packet-socket", 41, 17, 3, 0)
sys("netlink-socket", 41, 16, 3, 0)
sys("inet6-socket", 41, 10, 1, 0)
sys("x32-getpid", 0x40000000 + 39)
sys("tiocsti", 16, 0, 0x5412, ctypes.c_char_p(b"x"))
sys("tiocsti-high-bits", 16, 0, 0xdead00005412, ctypes.c_char_p(b"x"))
sys("sethostname", 170, b"pwned", 5)
sys("settimeofday", 164, 0, 0)
sys("reboot", 169, 0xfee1dead, 672274793, 0x1234567, 0)
sys("swapon", 167, b"/tmp/x", 0)
sys("acct", 163, b"/tmp/x")
sys("process_vm_readv", 310, 1, 0, 0, 0, 0, 0)
sys("personality", 135, 0x0400000)
print("threads still work:", __import__("threading").Thread(target=lambda: None).start() is None)
"##;
        let run = run(who, program, Options::default());
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        let results = run.lines_starting("RESULT");
        assert_eq!(results.len(), 34, "{}", run.stdout());
        for line in results {
            assert!(line.contains(" blocked "), "a dangerous call succeeded: {line}");
        }
        assert!(run.stdout().contains("threads still work: True"));
    }
}

both_modes! {
    /// A secret in warden's environment is not visible to the program.
    fn the_host_environment_is_not_visible(who: As) {
        let secret = support::token("ENVSECRET");
        let program = r##"
import os
print(dict(os.environ))
for path in ("/proc/self/environ", "/proc/1/environ", "/proc/1/cmdline"):
    try: print(path, open(path, "rb").read())
    except Exception as e: print(path, "blocked", type(e).__name__)
"##;
        let options = Options { env: vec![("WARDEN_TEST_SECRET", secret.clone())], ..Options::default() };
        let run = run(who, program, options);
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert!(!run.stdout().contains(&secret), "the environment leaked: {}", run.stdout());
        assert!(!run.stdout().contains("WARDEN_TEST_SECRET"));
    }
}

both_modes! {
    /// A second run cannot see what the first left in /tmp or the work dir.
    fn a_second_run_sees_nothing_of_the_first(who: As) {
        let marker = support::token("LEFTOVER");
        let first = format!(r##"
for path in ("/tmp/{marker}", "/work/{marker}", "/dev/shm/{marker}"):
    open(path, "w").write("x")
print("written")
"##);
        let second = format!(r##"
import os
print("TMP", os.listdir("/tmp"), "WORK", os.listdir("/work"), "SHM", os.listdir("/dev/shm"))
print("FOUND" if any(os.path.exists(p) for p in ("/tmp/{marker}", "/work/{marker}")) else "CLEAN")
"##);
        assert_eq!(run(who, &first, Options::default()).status(), "ok");
        let run = run(who, &second, Options::default());
        assert!(run.stdout().contains("CLEAN"), "{}", run.stdout());
        assert!(!run.stdout().contains(&marker), "{}", run.stdout());
    }
}

both_modes! {
    /// The interpreter's installation cannot be modified.
    fn the_interpreter_cannot_be_modified(who: As) {
        let os_py = std::path::Path::new("/usr/lib/python3.11/os.py");
        let before = std::fs::read(os_py).ok();
        let program = r##"
import os, sys, sysconfig
stdlib = sysconfig.get_paths()["stdlib"]
target = os.path.join(stdlib, "os.py")
attempts = {
    "write-binary": lambda: open(os.path.realpath(sys.executable), "ab").write(b"x"),
    "write-stdlib": lambda: open(target, "a").write("# pwned"),
    "chmod": lambda: os.chmod(target, 0o777),
    "rename": lambda: os.rename(target, target + ".bak"),
    "unlink": lambda: os.unlink(target),
    "new-module": lambda: open(os.path.join(stdlib, "pwned.py"), "w").write("x"),
    "utime": lambda: os.utime(target, (0, 0)),
}
for name, attempt in attempts.items():
    try:
        attempt(); print("RESULT", name, "succeeded")
    except Exception as e:
        print("RESULT", name, "blocked", type(e).__name__)
"##;
        let run = run(who, program, Options::default());
        for line in run.lines_starting("RESULT") {
            assert!(line.contains(" blocked "), "{line}");
        }
        assert_eq!(run.lines_starting("RESULT").len(), 7, "{}", run.stdout());
        assert_eq!(std::fs::read(os_py).ok(), before, "os.py changed");
        assert!(!std::path::Path::new("/usr/lib/python3.11/pwned.py").exists());
    }
}

both_modes! {
    /// /proc shows only the jail's own processes; /sys, /home and the host's devices are absent.
    fn the_host_s_processes_and_devices_are_invisible(who: As) {
        let program = r##"
import os
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("PIDS", pids)
for path in ("/sys", "/home", "/dev/sda", "/dev/vda", "/dev/mem", "/dev/kmsg", "/proc/kcore", "/proc/sysrq-trigger", "/boot", "/var"):
    print("EXISTS" if os.path.exists(path) else "ABSENT", path)
"##;
        let run = run(who, program, Options::default());
        // Only the program itself: the jail's init (pid 1) is hidden too (hidepid=invisible).
        assert!(run.stdout().contains("PIDS [2]"), "{}", run.stdout());
        assert!(!run.stdout().contains("EXISTS"), "{}", run.stdout());
    }
}
