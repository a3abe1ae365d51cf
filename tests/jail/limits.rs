//! Resource attacks run in the real jail (static policy off), as root and as an unprivileged user:
//! each ends within its limit with the right status, and the host is unaffected.

use super::support;
use warden_test_support::both_modes;

use support::{run, As, Options, SMALL_RULES};

fn small() -> Options<'static> {
    Options {
        rules: Some(SMALL_RULES),
        ..Options::default()
    }
}

both_modes! {
    /// Allocating without end ends with memory_limit (an OOM kill under a cgroup; `MemoryError` under
    /// the RLIMIT_AS fallback).
    fn a_memory_bomb_ends_with_memory_limit(who: As) {
        let program = "x = []\nwhile True:\n    x.append(bytearray(8 * 1024 * 1024))\n";
        let run = run(who, program, small());
        assert_eq!(run.status(), "memory_limit", "{:?}", run.record);
        assert!(run.limits_hit().contains(&"memory".to_owned()));
        assert!(run.record["usage"]["wall_ms"].as_u64().unwrap_or(u64::MAX) < 5000);
        assert_eq!(run.exit_code, 1);
    }
}

both_modes! {
    /// A fork bomb is contained by the pids limit, and none of its processes survive.
    fn a_fork_bomb_is_contained(who: As) {
        let marker = support::token("FORKBOMB");
        let program = format!(r##"
import os, time, sys
made = 0
try:
    while True:
        if os.fork() == 0:
            try:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{marker}"])
            finally:
                os._exit(1)
        made += 1
except OSError as e:
    print("FORK FAILED after", made, type(e).__name__)
"##);
        let run = run(who, &program, small());
        assert!(run.stdout().contains("FORK FAILED after"), "{:?}", run.record);
        let made: u64 = run.stdout().split_whitespace().nth(3).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
        assert!(made < 32, "the program made {made} processes under a limit of 32");
        if who == As::Root {
            assert!(run.limits_hit().contains(&"pids".to_owned()), "{:?}", run.record);
        }
        assert_eq!(support::processes_with(&marker), Vec::<u32>::new(), "fork bomb processes survived");
    }
}

both_modes! {
    /// A CPU loop ends with timeout once its CPU time runs out.
    fn a_cpu_loop_ends_with_timeout(who: As) {
        let run = run(who, "while True:\n    pass\n", small());
        assert_eq!(run.status(), "timeout", "{:?}", run.record);
        // On a busy host the loop may get less than a whole CPU: then the wall clock runs out first.
        let hit = run.limits_hit();
        assert!(hit.contains(&"cpu_time".to_owned()) || hit.contains(&"wall_time".to_owned()), "{:?}", run.record);
        let wall = run.record["usage"]["wall_ms"].as_u64().unwrap_or(u64::MAX);
        assert!((2500..8000).contains(&wall), "wall {wall} ms");
    }
}

both_modes! {
    /// Sleeping past the wall-clock limit ends with timeout; the whole tree is killed.
    fn a_sleeping_program_is_killed_at_the_wall_limit(who: As) {
        let marker = support::token("SLEEPER");
        let program = format!(r##"
import os, sys, time
try:
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{marker}"])
except BlockingIOError:
    pass  # best-effort memory (the test user has no cgroup): one process only
time.sleep(60)
"##);
        let run = run(who, &program, small());
        assert_eq!(run.status(), "timeout", "{:?}", run.record);
        assert!(run.limits_hit().contains(&"wall_time".to_owned()));
        let wall = run.record["usage"]["wall_ms"].as_u64().unwrap_or(u64::MAX);
        assert!((5000..8000).contains(&wall), "wall {wall} ms");
        assert_eq!(support::processes_with(&marker), Vec::<u32>::new());
    }
}

both_modes! {
    /// Filling the work dir and /tmp fails at their caps (and the host's disk is untouched).
    fn a_disk_fill_fails_within_limits(who: As) {
        let program = r##"
import errno
chunk = b"x" * (1 << 20)
for path in ("/work/fill", "/tmp/fill", "/work/big"):
    written = 0
    try:
        for i in range(10_000):
            with open(f"{path}.{i}", "wb") as f:
                for _ in range(64):
                    f.write(chunk); f.flush(); written += len(chunk)
    except OSError as e:
        print("STOPPED", path, written >> 20, errno.errorcode.get(e.errno))
"##;
        let run = run(who, program, small());
        let stops = run.lines_starting("STOPPED");
        assert_eq!(stops.len(), 3, "{:?}", run.record);
        for line in stops {
            let mib: u64 = line.split_whitespace().nth(2).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
            assert!(mib <= 8, "wrote {mib} MiB past an 8 MiB cap: {line}");
            assert!(line.ends_with("ENOSPC") || line.ends_with("EFBIG"), "{line}");
        }
    }
}

both_modes! {
    /// A stdout flood ends with output_limit; the captured output is exactly the cap.
    fn a_stdout_flood_ends_with_output_limit(who: As) {
        let run = run(who, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", small());
        assert_eq!(run.status(), "output_limit", "{:?}", run.record);
        assert_eq!(run.stdout().len(), 4096);
        assert_eq!(run.record["stdout_truncated"], true);
    }
}

both_modes! {
    /// Output a little past the cap is truncated, the program finishes, and the status says so.
    fn output_past_the_cap_is_truncated(who: As) {
        let run = run(who, "print('y' * 10000)\nprint('done', flush=True)\n", small());
        assert_eq!(run.status(), "output_limit", "{:?}", run.record);
        assert_eq!(run.record["exit_code"], 0);
        assert_eq!(run.stdout().len(), 4096);
    }
}

both_modes! {
    /// Socket buffers cannot be sized up (issue 25: socketpairs with a large `SO_SNDBUF` queued
    /// ~1 GiB of kernel memory under a 256 MiB limit): `setsockopt(SO_SNDBUF/SO_RCVBUF)` is refused
    /// with EPERM, so what a run can queue is at most its sockets times the host's
    /// `net.core.wmem_default` (plus the one send of 64 KiB a socket may overshoot it by), which
    /// the program's own count stays under.
    fn socket_buffers_cannot_be_sized_up(who: As) {
        let program = r##"
import errno, resource, socket
a, b = socket.socketpair()
for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
    try:
        a.setsockopt(socket.SOL_SOCKET, option, 64 << 20)
        print("SET", option)
    except OSError as e:
        print("REFUSED", errno.errorcode[e.errno])
pairs, queued = [], 0
try:
    while True:
        x, y = socket.socketpair()
        pairs.append((x, y))
        for s in (x, y):
            s.setblocking(False)
            try:
                while True:
                    queued += s.send(b"\0" * 65536)
            except BlockingIOError:
                pass
except OSError as e:
    print("STOPPED", errno.errorcode[e.errno])
print("QUEUED", queued, 2 * len(pairs))
"##;
        let run = run(who, program, small());
        assert_eq!(run.lines_starting("REFUSED"), ["REFUSED EPERM", "REFUSED EPERM"], "{:?}", run.record);
        let queued = run.lines_starting("QUEUED");
        let numbers: Vec<u64> = queued
            .first()
            .map(|line| line.split_whitespace().skip(1).filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default();
        assert_eq!(numbers.len(), 2, "{:?}", run.record);
        let wmem_default: u64 = std::fs::read_to_string("/proc/sys/net/core/wmem_default")
            .expect("wmem_default")
            .trim()
            .parse()
            .expect("a number");
        let (bytes, sockets) = (numbers[0], numbers[1]);
        eprintln!("{who:?}: {bytes} bytes queued in {sockets} sockets");
        assert!(sockets > 0 && bytes <= sockets * (wmem_default + 65536), "{bytes} bytes in {sockets} sockets");
    }
}
