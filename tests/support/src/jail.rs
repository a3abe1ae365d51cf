//! Shared set-up for the jail's end-to-end tests: running the real `warden` binary on a program, as
//! root or as an unprivileged test user, and checking from the host that the run left nothing behind.
//!
//! Every test runs in its own process under nextest (and in its own thread under `cargo test`), so
//! everything here uses unique names and temporary directories.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub use crate::is_root;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Who runs `warden`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum As {
    Root,
    /// The unprivileged test user (`warden-test`, created if missing).
    User,
}

/// The unprivileged account the tests run warden as.
pub const TEST_USER: &str = "warden-test";

/// A second unprivileged account, for attacks of one user on another (`warden-test2`).
pub const SECOND_USER: &str = "warden-test2";

/// uid and gid of the test user, creating it once if needed.
pub fn test_user() -> (u32, u32) {
    static IDS: OnceLock<(u32, u32)> = OnceLock::new();
    *IDS.get_or_init(|| ensure_user(TEST_USER))
}

/// uid and gid of the second test user, creating it once if needed (kept, like the first: creating it
/// again is a no-op).
pub fn second_user() -> (u32, u32) {
    static IDS: OnceLock<(u32, u32)> = OnceLock::new();
    *IDS.get_or_init(|| ensure_user(SECOND_USER))
}

fn ensure_user(name: &str) -> (u32, u32) {
    for _ in 0..50 {
        if let Some(ids) = lookup_user(name) {
            return ids;
        }
        // Several test processes may race here; useradd locks /etc/passwd and the losers retry.
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                name,
            ])
            .stderr(Stdio::null())
            .status();
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("cannot create the test user {name}");
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&name))
            .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))?
    })
}

/// A random-looking token for secrets and markers.
pub fn token(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut bytes = [0u8; 8];
    if let Ok(mut urandom) = std::fs::File::open("/dev/urandom") {
        let _ = urandom.read_exact(&mut bytes);
    }
    let random: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{label}{}x{nanos:x}{random}", std::process::id())
}

/// A world-readable temporary directory (the test user must read programs and rules in it).
pub fn shared_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("warden-jail-test-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// The rules a run gets when a test names none: the default limits, with the system interpreter (the
/// jail's tests do not depend on a provisioned runtime). Processes are allowed: the jail's tests attack
/// the jail with them (fork bombs, daemons, signals); the exec ban is tested in `tests/jail/hook.rs`.
pub const BASE_RULES: &str = "[policy]\nname = \"jail-test\"\n[processes]\nallow = true\n";

/// Small limits so that limit tests end fast.
pub const SMALL_RULES: &str = r#"
[policy]
name = "jail-test"
[processes]
allow = true
[limits]
wall_time_ms = 5000
cpu_time_ms = 3000
memory_mib = 128
pids = 32
stdout_bytes = 4096
stderr_bytes = 16384
tmp_mib = 8
output_mib = 8
file_size_mib = 4
"#;

/// `rules` as `who` runs them: the test user has no memory cgroup on a host that did not delegate
/// one, where a memory limit is refused unless the rules accept the best effort — so its runs say
/// `[limits] memory_enforcement = "best-effort"` unless the rules decide themselves.
pub fn rules_for(who: As, rules: &str) -> String {
    if who == As::Root || rules.contains("memory_enforcement") {
        return rules.to_owned();
    }
    let key = "memory_enforcement = \"best-effort\"\n";
    match rules.find("[limits]\n") {
        Some(at) => {
            let after = at + "[limits]\n".len();
            format!("{}{key}{}", &rules[..after], &rules[after..])
        }
        None => format!("{rules}\n[limits]\n{key}"),
    }
}

/// One finished `warden run`.
#[derive(Debug)]
pub struct Run {
    /// The result record (`--json`).
    pub record: Value,
    pub exit_code: i32,
    /// warden's own stderr.
    pub warden_stderr: String,
    pub warden_pid: u32,
}

impl Run {
    pub fn status(&self) -> &str {
        self.record["status"].as_str().unwrap_or("")
    }
    pub fn stdout(&self) -> &str {
        self.record["stdout"].as_str().unwrap_or("")
    }
    pub fn stderr(&self) -> &str {
        self.record["stderr"].as_str().unwrap_or("")
    }
    /// Why the run could not be set up (`setup_failed`).
    pub fn message(&self) -> &str {
        self.record["message"].as_str().unwrap_or("")
    }
    /// stdout, stderr and warden's own output together, for "never leaks" checks.
    pub fn everything(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.stdout(),
            self.stderr(),
            self.warden_stderr
        )
    }
    pub fn limits_hit(&self) -> Vec<String> {
        self.record["limits_hit"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
    /// Lines the program printed that start with `prefix`.
    pub fn lines_starting(&self, prefix: &str) -> Vec<String> {
        self.stdout()
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect()
    }
}

/// Options of one run.
#[derive(Default)]
pub struct Options<'a> {
    pub rules: Option<&'a str>,
    /// Keep the runtime layer's audit hook (by default the jail's tests run with `--no-hooks`: they
    /// prove the jail alone).
    pub hooks: bool,
    pub env: Vec<(&'a str, String)>,
    pub extra_args: Vec<String>,
}

/// Runs `program` with `warden run --no-policy --json` (and `--no-hooks` unless `options.hooks`) as
/// `who`, then checks that nothing of the run is left on the host.
pub fn run(who: As, program: &str, options: Options<'_>) -> Run {
    let dir = shared_tempdir();
    let program_path = dir.path().join("program.py");
    std::fs::write(&program_path, program).expect("write program");
    let mut args: Vec<String> = vec!["run".into(), "--no-policy".into(), "--json".into()];
    if !options.hooks {
        args.push("--no-hooks".into());
    }
    let rules_path = dir.path().join("rules.toml");
    std::fs::write(
        &rules_path,
        rules_for(who, options.rules.unwrap_or(BASE_RULES)),
    )
    .expect("write rules");
    args.push("--rules".into());
    args.push(rules_path.display().to_string());
    args.extend(options.extra_args);
    args.push(program_path.display().to_string());
    let mut command = command_as(who, &args);
    for (name, value) in &options.env {
        command.env(name, value);
    }
    let output = run_with_timeout(command, Duration::from_secs(90));
    let record: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "warden did not print a JSON record ({err}); stdout: {} stderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let run = Run {
        record,
        exit_code: output.status,
        warden_stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        warden_pid: output.pid,
    };
    assert_nothing_left(run.warden_pid);
    run
}

/// A `warden` command with `args`, as `who`, with a clean, predictable environment.
pub fn command_as(who: As, args: &[String]) -> Command {
    let mut command = match who {
        As::Root => Command::new(crate::warden_bin()),
        As::User => {
            let (uid, gid) = test_user();
            let mut command = Command::new("setpriv");
            command
                .arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg("--")
                .arg(crate::warden_bin());
            command
                .env("HOME", "/tmp")
                .env("TMPDIR", "/tmp")
                .env_remove("XDG_RUNTIME_DIR");
            command
        }
    };
    command.args(args).stdin(Stdio::null());
    command
}

/// What a finished command produced.
pub struct Output {
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub pid: u32,
}

/// Runs `command`, killing it after `limit`.
pub fn run_with_timeout(mut command: Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn warden");
    let pid = child.id();
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("warden did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status: status.code().unwrap_or(-1),
        stdout: out_thread.join().unwrap_or_default(),
        stderr: err_thread.join().unwrap_or_default(),
        pid,
    }
}

/// Every directory where warden puts run cgroups (`…/warden*` under each hierarchy), found by walking
/// the cgroup mounts a few levels deep.
pub fn warden_cgroup_dirs() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        if !(right.starts_with("cgroup ") || right.starts_with("cgroup2 ")) {
            continue;
        }
        if let Some(mountpoint) = left.split(' ').nth(4) {
            collect_warden_dirs(Path::new(mountpoint), 0, &mut found);
        }
    }
    found
}

fn collect_warden_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("warden") {
            out.push(entry.path());
        } else if !name.starts_with("run-") {
            collect_warden_dirs(&entry.path(), depth + 1, out);
        }
    }
}

/// Asserts that the warden process `pid` left no run cgroup and no mount behind.
pub fn assert_nothing_left(pid: u32) {
    let prefix = format!("run-{pid}-");
    for dir in warden_cgroup_dirs() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(&prefix),
                "run cgroup {} was left behind",
                entry.path().display()
            );
        }
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    assert!(
        !mountinfo.contains("/warden/root") && !mountinfo.contains("warden-jail-test"),
        "a jail mount is visible on the host"
    );
}

/// Pids of host processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmdline).contains(marker) {
                found.push(pid);
            }
        }
    }
    found
}

/// A canary file outside every root, world-readable, holding a secret: only the jail may stop a read.
pub struct Canary {
    pub dir: PathBuf,
    pub file: PathBuf,
    pub secret: String,
}

impl Default for Canary {
    fn default() -> Self {
        Self::new()
    }
}

impl Canary {
    /// Creates `/<unique dir>/secret.txt`.
    pub fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let secret = token("CANARY");
        let dir = PathBuf::from(format!("/warden-canary-{}", token("")));
        std::fs::create_dir(&dir).expect("canary dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let file = dir.join("secret.txt");
        std::fs::write(&file, format!("{secret}\n")).expect("canary");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        Canary { dir, file, secret }
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Generates one test per mode: `$name::as_root` and `$name::as_user`.
#[macro_export]
macro_rules! both_modes {
    ($(#[$meta:meta])* fn $name:ident($who:ident: As) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $(#[$meta])*
            fn check($who: As) $body
            #[test]
            fn as_root() {
                $crate::require_root!();
                check($crate::jail::As::Root)
            }
            #[test]
            fn as_user() {
                $crate::require_root!();
                check($crate::jail::As::User)
            }
        }
    };
}
