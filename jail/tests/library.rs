//! `warden_jail::run` called directly, as warden's pipeline calls it: what the command line does not
//! show on its own (the pipeline refuses coding declarations before the jail sees them, and the work dir
//! is the pipeline's). A plain `main` (no test harness): the jail must be spawned from a single-threaded
//! process, and libtest runs tests on threads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use warden_jail::{Config, JailError, Plan, Status};

fn plan() -> Plan {
    Plan::new(&Config::default()).expect("plan")
}

/// The program is the UTF-8 text the caller decoded: a coding declaration cannot change what runs.
fn a_coding_declaration_cannot_change_what_runs() {
    let outcome = warden_jail::run(
        &plan(),
        "# -*- coding: latin-1 -*-\ns = 'é'\nprint(len(s))\n",
        None,
    )
    .unwrap();
    assert_eq!(outcome.status, Status::Ok, "{}", outcome.stderr_text());
    assert_eq!(outcome.stdout_text(), "1\n");
}

/// A leading byte-order mark is not part of the program.
fn a_byte_order_mark_is_dropped() {
    let outcome = warden_jail::run(&plan(), "\u{feff}print('bom')\n", None).unwrap();
    assert_eq!(outcome.stdout_text(), "bom\n", "{}", outcome.stderr_text());
}

/// A named one-shot run (`analysis.py`) does not import linecache just in case (it imports
/// tokenize, re, enum and collections: ~6 ms, two thirds of a bare interpreter's start), yet a
/// warning and a traceback still show the program's lines under its name.
fn a_named_program_s_lines_cost_nothing_until_an_error_reads_them() {
    let mut config = Config::default();
    config.bootstrap.program_name = Some("analysis.py".to_owned());
    let plan = Plan::new(&config).expect("plan");
    let outcome = warden_jail::run(
        &plan,
        "import sys\nprint(sorted({'linecache', 'tokenize', 're'} & set(sys.modules)))\n",
        None,
    )
    .unwrap();
    assert_eq!(outcome.stdout_text(), "[]\n", "{}", outcome.stderr_text());
    let outcome = warden_jail::run(
        &plan,
        "import warnings\nwarnings.warn('careful')\n\ndef f():\n    raise ValueError('boom')\nf()\n",
        None,
    )
    .unwrap();
    let stderr = outcome.stderr_text();
    assert_eq!(outcome.exit_code, Some(1), "{stderr}");
    assert!(
        stderr.contains("analysis.py:2: UserWarning: careful\n  warnings.warn('careful')"),
        "{stderr}"
    );
    assert!(
        stderr.contains("File \"analysis.py\", line 5, in f\n    raise ValueError('boom')"),
        "{stderr}"
    );
    assert!(!stderr.contains("/run/warden"), "{stderr}");
}

/// The program runs in a network namespace of its own, with nothing but the loopback device,
/// whichever way it was made (ahead of the clone on a helper thread as root, by the clone
/// otherwise); the caller is back in its own namespace afterwards, and single-threaded.
fn the_program_has_its_own_empty_network_namespace() {
    let host = std::fs::read_link("/proc/thread-self/ns/net").unwrap();
    let outcome = warden_jail::run(
        &plan(),
        "import os\nprint(os.readlink('/proc/self/ns/net'))\n\
         print(sorted(l.split(':')[0].strip() for l in open('/proc/self/net/dev').readlines()[2:]))\n\
         print(len(open('/proc/self/net/if_inet6').read()), len(open('/proc/self/net/route').readlines()))\n",
        None,
    )
    .unwrap();
    let stdout = outcome.stdout_text();
    assert_eq!(outcome.status, Status::Ok, "{}", outcome.stderr_text());
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("net:["), "{stdout}");
    assert_ne!(
        Path::new(lines[0]),
        host,
        "the jail shares the caller's network namespace"
    );
    assert_eq!(lines[1], "['lo']", "{stdout}");
    // `lo` is down: no address (not even ::1), no route.
    assert!(["0 0", "0 1"].contains(&lines[2]), "{stdout}");
    assert_eq!(
        std::fs::read_link("/proc/thread-self/ns/net").unwrap(),
        host
    );
    assert_eq!(std::fs::read_dir("/proc/self/task").unwrap().count(), 1);
}

/// The host work dir is copied in; new and changed regular files come back; symlinks never cross.
fn the_work_dir_is_copied_in_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    std::fs::write(work.join("in.txt"), "input\n").unwrap();
    std::fs::create_dir(work.join("sub")).unwrap();
    std::fs::write(work.join("sub/keep.txt"), "unchanged\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", work.join("host-link")).unwrap();
    let program = r#"
import os
print(open("in.txt").read().strip(), sorted(os.listdir(".")))
open("out.txt", "w").write("made in the jail\n")
open("in.txt", "a").write("more\n")
os.symlink("/etc/passwd", "jail-link")
"#;
    let outcome = warden_jail::run(&plan(), program, Some(work)).unwrap();
    assert_eq!(outcome.status, Status::Ok, "{}", outcome.stderr_text());
    assert_eq!(
        outcome.stdout_text(),
        "input ['in.txt', 'sub']\n",
        "the host symlink was not copied in"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "made in the jail\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("in.txt")).unwrap(),
        "input\nmore\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("sub/keep.txt")).unwrap(),
        "unchanged\n"
    );
    assert!(
        std::fs::symlink_metadata(work.join("jail-link")).is_err(),
        "a symlink came out of the jail"
    );
}

/// Bytes under `dir` as the disk holds them (allocated blocks, `du`).
fn allocated(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        total += meta.blocks() * 512;
        if meta.is_dir() {
            total += allocated(&entry.path());
        }
    }
    total
}

/// The copy back holds the caps while it copies: a file with a hundred names comes back once, a
/// sparse file counts by its length, the file cap stops the rest, and the host holds no more.
fn the_copy_back_holds_the_caps_while_copying() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let mut config = Config::default();
    config.limits.work_files = 4;
    config.limits.work_bytes = 8 << 20;
    let plan = Plan::new(&config).unwrap();
    let program = r#"
import os
with open("data.bin", "wb") as f:
    f.write(os.urandom(3 << 20))
for i in range(100):
    os.link("data.bin", f"link-{i:03}.bin")
for i in range(10):
    open(f"small-{i}.txt", "w").write("small\n")
with open("sparse.bin", "wb") as f:
    f.truncate(7 << 20)
"#;
    let outcome = warden_jail::run(&plan, program, Some(work)).unwrap();
    assert_eq!(outcome.status, Status::Ok, "{}", outcome.stderr_text());
    let copy = outcome.copy_back.expect("a copy back");
    let mut names: Vec<String> = std::fs::read_dir(work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["data.bin", "small-0.txt", "small-1.txt", "small-2.txt"]
    );
    assert_eq!((copy.files, copy.bytes), (4, (3 << 20) + 18));
    assert_eq!(copy.refused_total, 100 + 7 + 1);
    assert!(copy.capped && !copy.partial);
    assert_eq!(
        copy.refused.len(),
        16 + 8,
        "16 hard links and 8 over the file cap are named"
    );
    assert_eq!(
        copy.refused[0].refusal,
        warden_jail::Refusal::HardLink {
            of: "data.bin".into()
        }
    );
    assert!(
        allocated(work) <= (3 << 20) + 64 * 1024,
        "{} bytes on the host",
        allocated(work)
    );
}

/// A program killed at its wall-clock limit gets back what it wrote before the kill, marked partial.
fn files_written_before_a_kill_come_back_partial() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let mut config = Config::default();
    config.limits.wall_time_ms = 1500;
    let plan = Plan::new(&config).unwrap();
    let program = r#"
open("so-far.txt", "w").write("written before the kill\n")
import time
time.sleep(30)
"#;
    let outcome = warden_jail::run(&plan, program, Some(work)).unwrap();
    assert_eq!(outcome.status, Status::Timeout, "{}", outcome.stderr_text());
    let copy = outcome.copy_back.expect("a copy back after the kill");
    assert!(copy.partial && copy.files == 1, "{copy:?}");
    assert_eq!(
        std::fs::read_to_string(work.join("so-far.txt")).unwrap(),
        "written before the kill\n"
    );
}

/// A step that fails inside the jail is reported with its stage, call and argument.
fn a_failing_stage_names_its_call_and_argument() {
    let mut config = Config::default();
    config
        .read_only_binds
        .push("/nonexistent-warden-bind".into());
    let err = match Plan::new(&config) {
        Ok(plan) => warden_jail::run(&plan, "print(1)\n", None).unwrap_err(),
        Err(err) => err,
    };
    let text = err.to_string();
    assert!(text.contains("/nonexistent-warden-bind"), "{text}");
}

/// Kills the jail's init from outside once the program runs in it: finds a `python*` process whose
/// parent (the init) is a child of the test process (argv[1]). Exits 1 when none turns up.
const KILL_INIT: &str = r#"
import os, signal, sys, time
test = int(sys.argv[1])
def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.index("(") + 1:text.rindex(")")], int(text[text.rindex(")") + 2:].split()[1])
end = time.monotonic() + 12
while time.monotonic() < end:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        found = stat(pid)
        if found and found[0].startswith("python") and (stat(found[1]) or ("", 0))[1] == test:
            os.kill(found[1], signal.SIGKILL)
            sys.exit(0)
    time.sleep(0.01)
sys.exit(1)
"#;

/// An init that ends without reporting how the program ended — here killed from outside while the
/// program runs — is an error that says how the init ended, not a run that ended with no exit code.
fn an_init_killed_from_outside_is_reported_lost() {
    let plan = plan();
    let mut killer = std::process::Command::new("/usr/bin/python3")
        .args(["-I", "-c", KILL_INIT, &std::process::id().to_string()])
        .spawn()
        .unwrap();
    let result = warden_jail::run(&plan, "import time\ntime.sleep(20)\n", None);
    let helper = killer.wait().unwrap();
    assert!(helper.success(), "the helper found no jail to kill");
    match result {
        Err(JailError::InitLost(how)) => assert_eq!(how, "it was killed by SIGKILL"),
        other => panic!("expected InitLost, got {other:?}"),
    }
}

/// Spawning from a multi-threaded process is refused, not attempted.
fn a_multithreaded_caller_is_refused() {
    let plan = plan();
    let (stop, wait) = std::sync::mpsc::channel::<()>();
    let helper = std::thread::spawn(move || {
        let _ = wait.recv();
    });
    let err = warden_jail::run(&plan, "print(1)\n", None).unwrap_err();
    assert!(matches!(err, JailError::Multithreaded(2)), "{err}");
    drop(stop);
    helper.join().unwrap();
}

/// A one-shot run ends without the interpreter's module-by-module teardown (`_exit_fast`), yet
/// everything of the shutdown a program can see still happens: a non-daemon thread is waited for,
/// atexit callbacks run, objects of `__main__` are finalized while its globals are still there,
/// files left open are flushed, and
/// `sys.exit` gives the interpreter's exit status (a message on stderr and 1 for a string).
fn a_run_ends_as_the_interpreter_s_shutdown_would() {
    let dir = tempfile::tempdir().unwrap();
    let program = r#"
import atexit, sys, threading, time
class Noisy:
    def __del__(self):
        sys.stdout.write(word + "\n")
word = "finalized"
kept = Noisy()
def late():
    time.sleep(0.05)
    print("thread done", flush=True)
threading.Thread(target=late).start()
atexit.register(lambda: print("atexit ran"))
left_open = open("/work/open.txt", "w")
left_open.write("buffered")
sys.stdout.write("unflushed")
sys.exit(3)
"#;
    let outcome = warden_jail::run(&plan(), program, Some(dir.path())).unwrap();
    let stdout = outcome.stdout_text();
    assert_eq!(outcome.exit_code, Some(3), "{}", outcome.stderr_text());
    assert!(stdout.starts_with("unflushed"), "{stdout}");
    for line in ["thread done", "atexit ran", "finalized"] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("open.txt")).unwrap(),
        "buffered"
    );
    let outcome = warden_jail::run(&plan(), "import sys\nsys.exit('bye')\n", None).unwrap();
    assert_eq!(outcome.exit_code, Some(1));
    assert_eq!(outcome.stderr_text(), "bye\n");
    let outcome = warden_jail::run(&plan(), "raise ValueError('x')\n", None).unwrap();
    assert_eq!(outcome.exit_code, Some(1));
    assert!(outcome.stderr_text().ends_with("ValueError: x\n"));
}

/// The run cgroups of this process (`run-<pid>-…`), in every hierarchy.
fn own_run_cgroups() -> Vec<std::path::PathBuf> {
    let prefix = format!("run-{}-", std::process::id());
    let mut found = Vec::new();
    let mut dirs = vec![(std::path::PathBuf::from("/sys/fs/cgroup"), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                found.push(entry.path());
            } else if depth < 4 {
                dirs.push((entry.path(), depth + 1));
            }
        }
    }
    found
}

/// With `defer_teardown` (what `warden run` asks for), the outcome comes back complete — output,
/// files copied back, the cgroup's counters — while the init may still be exiting and the run's
/// cgroup still exists; `finish_teardown` then reaps the init and removes the cgroup: no process
/// and no cgroup is left. Without a cgroup (no counters to read early) nothing is deferred.
fn an_outcome_returned_before_the_init_exits_leaves_nothing_after_the_teardown() {
    let plan = plan();
    warden_jail::defer_teardown(true);
    let dir = tempfile::tempdir().unwrap();
    for workdir in [None, Some(dir.path())] {
        let program = "import os\nif os.path.isdir('/work'):\n    open('/work/out.txt', 'w').write('x')\nprint('hi')\n";
        let outcome = warden_jail::run(&plan, program, workdir).unwrap();
        assert_eq!(outcome.status, Status::Ok, "{}", outcome.stderr_text());
        assert_eq!(outcome.stdout_text(), "hi\n");
        assert!(outcome.usage.memory_peak_bytes > 0);
        // With a work dir the init waits for warden's word after the copy back, so it is
        // certainly still there; without one it exits right after reporting, and may be seen gone
        // in the same wake-up as the pipes' end (then nothing is deferred).
        let left = own_run_cgroups();
        if plan.cgroup.is_none() {
            assert!(left.is_empty(), "{left:?}");
        } else if workdir.is_some() {
            assert!(!left.is_empty(), "the teardown was not deferred");
        }
        // The run cgroup of a warden that is gone (no such pid) is reaped after the run too.
        let stale = plan
            .cgroup
            .as_ref()
            .filter(|_| workdir.is_some())
            .map(|cgroup| {
                let dir = cgroup.hierarchies[0].parent.join("run-999999999-1-0");
                std::fs::create_dir(&dir).unwrap();
                dir
            });
        warden_jail::finish_teardown().unwrap();
        assert_eq!(own_run_cgroups(), Vec::<std::path::PathBuf>::new());
        if let Some(stale) = stale {
            assert!(!stale.exists(), "{} was not reaped", stale.display());
        }
        // No child of ours is left, not even a zombie.
        let status = nix::sys::wait::waitpid(None, Some(nix::sys::wait::WaitPidFlag::WNOHANG));
        assert_eq!(status, Err(nix::errno::Errno::ECHILD));
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "x"
    );
    warden_jail::defer_teardown(false);
}

fn main() {
    let uid = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2).map(str::to_owned))
        .unwrap_or_default();
    if !Path::new("/usr/bin/python3").exists() {
        eprintln!("skipped: no /usr/bin/python3");
        return;
    }
    let tests: [(&str, fn()); 12] = [
        (
            "a_run_ends_as_the_interpreter_s_shutdown_would",
            a_run_ends_as_the_interpreter_s_shutdown_would,
        ),
        (
            "an_outcome_returned_before_the_init_exits_leaves_nothing_after_the_teardown",
            an_outcome_returned_before_the_init_exits_leaves_nothing_after_the_teardown,
        ),
        (
            "a_coding_declaration_cannot_change_what_runs",
            a_coding_declaration_cannot_change_what_runs,
        ),
        (
            "the_program_has_its_own_empty_network_namespace",
            the_program_has_its_own_empty_network_namespace,
        ),
        (
            "a_named_program_s_lines_cost_nothing_until_an_error_reads_them",
            a_named_program_s_lines_cost_nothing_until_an_error_reads_them,
        ),
        ("a_byte_order_mark_is_dropped", a_byte_order_mark_is_dropped),
        (
            "the_work_dir_is_copied_in_and_back",
            the_work_dir_is_copied_in_and_back,
        ),
        (
            "the_copy_back_holds_the_caps_while_copying",
            the_copy_back_holds_the_caps_while_copying,
        ),
        (
            "files_written_before_a_kill_come_back_partial",
            files_written_before_a_kill_come_back_partial,
        ),
        (
            "a_failing_stage_names_its_call_and_argument",
            a_failing_stage_names_its_call_and_argument,
        ),
        (
            "an_init_killed_from_outside_is_reported_lost",
            an_init_killed_from_outside_is_reported_lost,
        ),
        (
            "a_multithreaded_caller_is_refused",
            a_multithreaded_caller_is_refused,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    // The listing protocol of libtest, so that cargo-nextest can run this binary too.
    if std::env::args().any(|a| a == "--list") {
        if !std::env::args().any(|a| a == "--ignored") {
            for (name, _) in tests {
                println!("{name}: test");
            }
        }
        return;
    }
    for (name, test) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        test();
        println!("test {name} ... ok (uid {uid})");
    }
}
