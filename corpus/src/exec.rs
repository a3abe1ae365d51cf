//! Running the warden binary as a subprocess: `warden check --format json` for the policy pass,
//! `warden run [--no-policy] [--no-hooks] --json` for the runtime, jail and full passes.
//!
//! Subprocesses keep the runner independent of the jail's single-thread requirement and let cases
//! run in parallel. Owns: argument lists, the user warden runs as (`--run-as`), a guard timeout
//! that kills the whole process group, bounded capture of stdout/stderr, and reading the result
//! records (serde views that tolerate older or stand-in binaries). Does not own: judging them
//! (`verify.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use super::pass::{Pass, RunFlags};
use super::procs::{self, Seen, Watcher};

/// The most bytes kept of a subprocess's stdout or stderr (warden caps the program's own output).
const MAX_CAPTURE: u64 = 64 << 20;

/// How to call warden.
#[derive(Debug, Clone)]
pub struct Warden {
    pub binary: PathBuf,
    pub rules: Option<PathBuf>,
    /// Whether `warden run` accepts `--output-dir` (older builds do not).
    pub output_dir: bool,
    /// The long flags `warden run --help` lists (`--no-hooks` is newer than the runner's first
    /// wardens).
    pub run_flags: BTreeSet<String>,
    /// `Err(why)` when the full pipeline (`warden run` with the policy) does not produce a result
    /// record: the runner then does the policy and jail-only passes alone and says so. Set by
    /// [`Warden::probe_full_pipeline`] when the full pass is selected.
    pub full_pipeline: Result<(), String>,
    /// Longest a single warden call may take before the runner kills it.
    pub guard: Duration,
    /// The unprivileged account every warden call runs as (`--run-as`); `None`: the runner's own.
    pub run_as: Option<RunAs>,
}

/// An unprivileged account warden runs as (`--run-as USER`): every warden call is started with
/// this user's uid and primary gid and no supplementary groups, the way `setpriv --reuid --regid
/// --clear-groups` would, and with a HOME and TMPDIR the user owns. The runner itself stays root
/// for its host-side checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// HOME and TMPDIR of warden: a directory the user owns in the run directory, once it exists
    /// (until then `/tmp`).
    pub home: Option<PathBuf>,
}

impl RunAs {
    /// Looks `user` up (a name, through `getent passwd` and then `/etc/passwd`). The runner must
    /// be root to switch to it.
    pub fn lookup(user: &str) -> Result<RunAs, String> {
        if effective_uid() != Some(0) {
            return Err(format!(
                "--run-as {user}: the runner must run as root to start warden as another user \
                 (it also needs root for its host-side checks)"
            ));
        }
        let from_getent = Command::new("getent")
            .args(["passwd", user])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned());
        let passwd = from_getent
            .or_else(|| std::fs::read_to_string("/etc/passwd").ok())
            .unwrap_or_default();
        let ids = passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&user))
                .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))?
        });
        let Some((uid, gid)) = ids else {
            return Err(format!("--run-as {user}: no such user"));
        };
        if uid == 0 {
            return Err(format!(
                "--run-as {user}: this is root; --run-as names an unprivileged user"
            ));
        }
        Ok(RunAs {
            name: user.to_owned(),
            uid,
            gid,
            home: None,
        })
    }

    /// Makes `command` start as this user: uid, gid, no supplementary groups (std drops them with
    /// `setgroups(0)` when a uid is set and no groups are given), a clean HOME and TMPDIR.
    fn apply(&self, command: &mut Command) {
        let home = self.home.as_deref().unwrap_or_else(|| Path::new("/tmp"));
        command
            .uid(self.uid)
            .gid(self.gid)
            .env("HOME", home)
            .env("TMPDIR", home)
            .env("USER", &self.name)
            .env("LOGNAME", &self.name)
            .env_remove("XDG_RUNTIME_DIR");
    }
}

/// The effective uid of this process (`/proc/self/status`).
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// How a warden subprocess ended.
#[derive(Debug, Clone)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The guard timeout fired and the process group was killed.
    pub killed: bool,
    pub elapsed: Duration,
    pub started: Instant,
    /// What the process watcher saw (jail runs only).
    pub seen: Option<Seen>,
}

/// Reads a field leniently: a value of an unexpected type reads as the default (absent), so that
/// one odd field of an older or stand-in warden does not make the whole record unreadable.
fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// A `warden run --json` result record, as far as the runner reads it (see the README's "result
/// record"). Only `status` is required; every other field may be missing or of another type
/// (it then reads as absent), so an older warden's record, or a stand-in's, still parses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Record {
    pub status: String,
    #[serde(default, deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    pub signal: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    pub stdout: String,
    #[serde(default, deserialize_with = "lenient")]
    pub stderr: String,
    /// What the static layer said (`decision` is `skipped` with `--no-policy`).
    #[serde(default, deserialize_with = "lenient")]
    pub check: Option<CheckSummary>,
    #[serde(default, deserialize_with = "lenient")]
    pub layers: Layers,
    #[serde(default, deserialize_with = "lenient")]
    pub usage: Usage,
    /// What went wrong outside the program (why the jail could not be set up…).
    #[serde(default, deserialize_with = "lenient")]
    pub message: Option<String>,
    /// The layer that stopped the program (older wardens give none).
    #[serde(default, deserialize_with = "lenient")]
    pub stopped_by: Option<StoppedBy>,
    /// Whether a pooled jail of `warden serve` ran it (`true`), or one started for it.
    #[serde(default, deserialize_with = "lenient")]
    pub warm: Option<bool>,
}

/// The record's `stopped_by`: `{"layer": "static", "rule"}`, `{"layer": "runtime", "rule",
/// "event"}` or `{"layer": "kernel", "errno"}` (docs/enforcement.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct StoppedBy {
    pub layer: String,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub rule: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub event: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub errno: Option<String>,
}

impl StoppedBy {
    /// Whether the runtime layer (warden's audit hook) stopped the program.
    pub fn is_runtime(&self) -> bool {
        self.layer == "runtime"
    }
}

impl std::fmt::Display for StoppedBy {
    /// `runtime PROC801 (os.system)`, `kernel EPERM`, `static IMP101`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.layer)?;
        if let Some(what) = self.rule.as_ref().or(self.errno.as_ref()) {
            write!(f, " {what}")?;
        }
        if let Some(event) = &self.event {
            write!(f, " ({event})")?;
        }
        Ok(())
    }
}

/// The record's `check`, and one line of `warden check --format json` (which adds `path`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CheckSummary {
    #[serde(default, deserialize_with = "lenient")]
    pub path: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub decision: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub findings: Vec<Finding>,
}

/// One finding; the runner only needs its rule id.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Finding {
    #[serde(default, deserialize_with = "lenient")]
    pub rule: Option<String>,
}

impl CheckSummary {
    /// The rule ids of the findings, sorted, without duplicates.
    pub fn rules(&self) -> Vec<String> {
        let mut rules: Vec<String> = self
            .findings
            .iter()
            .filter_map(|f| f.rule.clone())
            .collect();
        rules.sort();
        rules.dedup();
        rules
    }
}

/// The record's `usage`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Usage {
    #[serde(default, deserialize_with = "lenient")]
    pub wall_ms: Option<u64>,
}

/// The record's `layers`: the confinement the plan put in force.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Layers {
    #[serde(default, deserialize_with = "lenient")]
    pub namespaces: Vec<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub landlock: Option<Switch>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub seccomp: Option<Switch>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub cgroup: Option<Switch>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub rlimits: Option<Switch>,
}

/// How a record reports one layer: `true`/`false`, a version (`abi-6`, `v1`) or `none`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Switch {
    Flag(bool),
    Name(String),
    Number(serde_json::Number),
}

impl Switch {
    fn is_on(&self) -> bool {
        match self {
            Switch::Flag(on) => *on,
            Switch::Name(name) => !name.is_empty() && name != "none",
            Switch::Number(_) => true,
        }
    }
}

impl std::fmt::Display for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

impl Record {
    /// Parses warden's stdout; `None` when it is not a result record (no `status`).
    pub fn parse(stdout: &[u8]) -> Option<Record> {
        let text = String::from_utf8_lossy(stdout);
        serde_json::from_str(text.trim()).ok().or_else(|| {
            text.lines()
                .rev()
                .find_map(|l| serde_json::from_str(l).ok())
        })
    }

    /// The record as JSON, found where [`Record::parse`] finds it.
    pub fn parse_value(stdout: &[u8]) -> Option<serde_json::Value> {
        let text = String::from_utf8_lossy(stdout);
        let is_record = |v: &serde_json::Value| v["status"].is_string();
        serde_json::from_str(text.trim())
            .ok()
            .filter(is_record)
            .or_else(|| {
                text.lines()
                    .rev()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .find(is_record)
            })
    }

    /// The static layer's decision, when it ran.
    pub fn decision(&self) -> Option<&str> {
        self.check.as_ref()?.decision.as_deref()
    }

    /// The rule the runtime layer stopped the program with, when it did.
    pub fn runtime_rule(&self) -> Option<&str> {
        let stopped = self.stopped_by.as_ref().filter(|s| s.is_runtime())?;
        Some(stopped.rule.as_deref().unwrap_or("?"))
    }

    /// The rule ids the static layer reported.
    pub fn rules(&self) -> Vec<String> {
        self.check
            .as_ref()
            .map(CheckSummary::rules)
            .unwrap_or_default()
    }

    /// Whether the record says the layer is in force (`seccomp`, `landlock`, `cgroup`,
    /// `rlimits`, `ns:NAME`).
    pub fn has_layer(&self, layer: &str) -> bool {
        let layers = &self.layers;
        if let Some(ns) = layer.strip_prefix("ns:") {
            return layers.namespaces.iter().any(|n| n == ns);
        }
        let switch = match layer {
            "landlock" => &layers.landlock,
            "seccomp" => &layers.seccomp,
            "cgroup" => &layers.cgroup,
            "rlimits" => &layers.rlimits,
            _ => &None,
        };
        switch.as_ref().is_some_and(Switch::is_on)
    }
}

/// One `warden check --format json` result.
#[derive(Debug, Clone, Serialize)]
pub struct StaticVerdict {
    pub decision: String,
    pub rules: Vec<String>,
}

impl Warden {
    /// Describes `binary`, asking it once (as `run_as`, when given) which `run` flags it has. The
    /// full pipeline is probed later, when the full pass is selected
    /// ([`Warden::probe_full_pipeline`]).
    pub fn new(
        binary: PathBuf,
        rules: Option<PathBuf>,
        guard: Duration,
        run_as: Option<RunAs>,
    ) -> Result<Warden, String> {
        let mut warden = Warden {
            output_dir: false,
            run_flags: BTreeSet::new(),
            full_pipeline: Ok(()),
            binary,
            rules,
            guard,
            run_as,
        };
        let help = warden
            .command()
            .args(["run", "--help"])
            .stdin(Stdio::null())
            .output()
            .map_err(|err| warden.cannot_run(&err))?;
        let help = String::from_utf8_lossy(&help.stdout);
        warden.run_flags = help
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|word| word.starts_with("--") && word.len() > 2)
            .map(str::to_owned)
            .collect();
        warden.output_dir = warden.run_flags.contains("--output-dir");
        Ok(warden)
    }

    /// Whether this warden has the layer `pass` measures (the runtime pass needs a warden with
    /// runtime hooks: one whose `warden run --help` lists `--no-hooks`).
    pub fn supports(&self, pass: Pass) -> bool {
        pass.needs_flag()
            .is_none_or(|flag| self.run_flags.contains(flag))
    }

    /// A command running the warden binary, as the `--run-as` user when there is one.
    fn command(&self) -> Command {
        self.command_for(None)
    }

    /// A command running `program` (the warden binary when `None`; a wrapper that executes it,
    /// like `setpriv`), as the `--run-as` user when there is one.
    pub fn command_for(&self, program: Option<&Path>) -> Command {
        let mut command = Command::new(program.unwrap_or(&self.binary));
        if let Some(user) = &self.run_as {
            user.apply(&mut command);
        }
        command
    }

    fn cannot_run(&self, err: &std::io::Error) -> String {
        match &self.run_as {
            Some(user) => format!(
                "cannot run {} as {}: {err}",
                self.binary.display(),
                user.name
            ),
            None => format!("cannot run {}: {err}", self.binary.display()),
        }
    }

    /// Runs a trivial program through the full pipeline to see whether it gives a result record.
    pub fn probe_full_pipeline(&self) -> Result<(), String> {
        let mut args = vec![OsString::from("run")];
        args.extend(self.rules_args());
        args.extend(["--json".into(), "-".into()]);
        let mut child = self
            .command()
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| self.cannot_run(&err))?;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = std::io::Write::write_all(&mut stdin, b"print('warden corpus probe')\n");
        }
        let output = child
            .wait_with_output()
            .map_err(|err| self.cannot_run(&err))?;
        match Record::parse(&output.stdout) {
            Some(record) if record.status == "ok" => Ok(()),
            Some(record) => Err(format!(
                "a trivial program ended with status {}",
                record.status
            )),
            None => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
        }
    }

    /// Validates the rules file with the binary under test (`warden rules check FILE`, as the
    /// `--run-as` user when there is one, so that a file that user cannot read is caught here), so
    /// that a bad file fails once, with the policy's own message, rather than once per case.
    pub fn check_rules(&self) -> Result<(), String> {
        let Some(rules) = &self.rules else {
            return Ok(());
        };
        let output = self
            .command()
            .args(["rules", "check"])
            .arg(rules)
            .stdin(Stdio::null())
            .output()
            .map_err(|err| self.cannot_run(&err))?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(stderr
            .trim()
            .trim_start_matches("warden: error: ")
            .to_owned())
    }

    /// The files of `files` the `--run-as` user cannot read (none without `--run-as`), asked of
    /// the kernel as that user (`test -r`), so that permissions and every directory on the way
    /// count.
    pub fn unreadable(&self, files: &[&Path]) -> Result<Vec<PathBuf>, String> {
        let Some(user) = &self.run_as else {
            return Ok(Vec::new());
        };
        let mut missing = Vec::new();
        for chunk in files.chunks(500) {
            let mut command = Command::new("/bin/sh");
            user.apply(&mut command);
            let output = command
                .args([
                    "-c",
                    "for f do [ -r \"$f\" ] || printf '%s\\0' \"$f\"; done",
                    "sh",
                ])
                .args(chunk)
                .stdin(Stdio::null())
                .output()
                .map_err(|err| format!("cannot run /bin/sh as {}: {err}", user.name))?;
            missing.extend(
                output
                    .stdout
                    .split(|b| *b == 0)
                    .filter(|name| !name.is_empty())
                    .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned())),
            );
        }
        Ok(missing)
    }

    fn rules_args(&self) -> Vec<OsString> {
        match &self.rules {
            Some(rules) => vec!["--rules".into(), rules.into()],
            None => Vec::new(),
        }
    }

    /// `warden runtime check` for the policy, which writes its identity index beside its runtime
    /// (second paths to banned objects, found by identity: docs/enforcement.md); `warden check`
    /// loads it. Best effort: a warden without the command, a policy without a runtime or a user
    /// who may not write there leaves the policy pass judging names alone.
    pub fn write_identity_index(&self) {
        let mut args = vec![OsString::from("runtime"), "check".into()];
        args.extend(self.rules_args());
        args.push("--json".into());
        let _ = self.call(&args, &[], false);
    }

    /// The policy pass over many files at once: path → verdict. Files warden could not read are
    /// missing from the map.
    pub fn check(&self, files: &[&Path]) -> Result<BTreeMap<PathBuf, StaticVerdict>, String> {
        let mut verdicts = BTreeMap::new();
        for chunk in files.chunks(200) {
            let mut args = vec![OsString::from("check")];
            args.extend(self.rules_args());
            args.extend(["--format".into(), "json".into()]);
            args.extend(chunk.iter().map(|p| p.as_os_str().to_owned()));
            let done = self.call(&args, &[], false)?;
            if done.code == Some(2) && done.stdout.is_empty() {
                return Err(format!(
                    "warden check failed: {}",
                    String::from_utf8_lossy(&done.stderr).trim()
                ));
            }
            for line in String::from_utf8_lossy(&done.stdout).lines() {
                let Ok(summary) = serde_json::from_str::<CheckSummary>(line) else {
                    continue;
                };
                let rules = summary.rules();
                let (Some(path), Some(decision)) = (summary.path, summary.decision) else {
                    continue;
                };
                verdicts.insert(PathBuf::from(path), StaticVerdict { decision, rules });
            }
        }
        Ok(verdicts)
    }

    /// `warden run --json` with the flags of `pass` (`--no-policy` for the runtime pass;
    /// `--no-policy`, and `--no-hooks` when this warden has it, for the jail pass) and `--output-dir DIR` when given, on `file`; watched
    /// when `watch`.
    pub fn run(
        &self,
        file: &Path,
        pass: Pass,
        output_dir: Option<&Path>,
        env: &[(String, String)],
        watch: bool,
    ) -> Result<Finished, String> {
        let flags = pass
            .run_flags()
            .ok_or_else(|| format!("the {pass} pass does not run programs"))?;
        self.run_with(file, flags, output_dir, env, watch)
    }

    /// `warden run --json` with `flags`, as [`Warden::run`] does for a pass.
    pub fn run_with(
        &self,
        file: &Path,
        flags: RunFlags,
        output_dir: Option<&Path>,
        env: &[(String, String)],
        watch: bool,
    ) -> Result<Finished, String> {
        // A session case runs its cells in `warden repl --json`, with the same flags.
        let cells = std::fs::read(file)
            .ok()
            .and_then(|bytes| crate::session::cells(&bytes));
        let command = if cells.is_some() { "repl" } else { "run" };
        let mut args = vec![OsString::from(command)];
        args.extend(self.rules_args());
        args.push("--json".into());
        args.extend(flags.always.iter().map(OsString::from));
        args.extend(
            flags
                .if_known
                .iter()
                .filter(|flag| self.run_flags.contains(**flag))
                .map(OsString::from),
        );
        if let (Some(dir), true) = (output_dir, self.output_dir) {
            args.extend(["--output-dir".into(), dir.into()]);
        }
        let Some(cells) = cells else {
            args.push(file.into());
            return self.call(&args, env, watch);
        };
        let mut done = self.call_with_input(&args, env, watch, crate::session::input(&cells))?;
        // The cells' records summed up as one result record, on the last line (where
        // `Record::parse` looks); the records themselves stay in what warden printed.
        if let Some(record) = crate::session::record(&done.stdout, done.code) {
            done.stdout.push(b'\n');
            done.stdout.extend(record.to_string().into_bytes());
            done.stdout.push(b'\n');
        }
        Ok(done)
    }

    /// Runs warden with `args`; kills its process group if it outlives the guard.
    fn call(
        &self,
        args: &[OsString],
        env: &[(String, String)],
        watch: bool,
    ) -> Result<Finished, String> {
        self.call_with_input(args, env, watch, Vec::new())
    }

    /// [`Warden::call`] with `input` on warden's standard input (none when empty).
    fn call_with_input(
        &self,
        args: &[OsString],
        env: &[(String, String)],
        watch: bool,
        input: Vec<u8>,
    ) -> Result<Finished, String> {
        let started = Instant::now();
        let mut command = self.command();
        command
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(if input.is_empty() {
                Stdio::null()
            } else {
                Stdio::piped()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().map_err(|err| self.cannot_run(&err))?;
        let watcher = watch.then(|| Watcher::start(child.id()));
        // Written from a thread, so that a warden that does not read cannot block the runner; the
        // pipe closes when it is done (the end of the session's input).
        if let Some(mut stdin) = child.stdin.take() {
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&input);
            });
        }
        let reader = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(pipe) = pipe {
                    let mut limited = pipe.take(MAX_CAPTURE);
                    let _ = limited.read_to_end(&mut bytes);
                    // Drain the rest so the child never blocks on a full pipe.
                    let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
                }
                bytes
            })
        };
        let stdout = reader(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = reader(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let mut killed = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() > self.guard => {
                    killed = true;
                    let _ = Command::new("kill")
                        .args(["-KILL", "--", &format!("-{}", child.id())])
                        .stderr(Stdio::null())
                        .status();
                    let _ = child.kill();
                    break child.wait().ok();
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break child.wait().ok(),
            }
        };
        let elapsed = started.elapsed();
        let seen = watcher.map(Watcher::finish);
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        Ok(Finished {
            code: status.and_then(|s| s.code()),
            stdout,
            stderr,
            killed,
            elapsed,
            started,
            seen,
        })
    }
}

/// Kills the processes of a finished run that are still alive (only ones the watcher saw
/// descend from the warden process this runner started, or in that run's pid namespaces).
pub fn reap_survivors(seen: &Seen) -> Vec<procs::ProcInfo> {
    let survivors = procs::survivors(seen, Duration::from_millis(1500));
    for p in &survivors {
        procs::kill(p.pid);
    }
    survivors
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_with_their_layers() {
        let stdout = br#"{"status":"timeout","exit_code":null,"signal":9,"stdout":"a","stderr":"",
            "check":{"decision":"allow","findings":[{"rule":"FILE704"}]},
            "usage":{"wall_ms":30001},
            "layers":{"namespaces":["user","net"],"landlock":"abi-6","seccomp":true,"cgroup":"v1","rlimits":true}}"#;
        let record = Record::parse(stdout).unwrap();
        assert_eq!(record.status, "timeout");
        assert_eq!(record.signal, Some(9));
        assert_eq!(record.decision(), Some("allow"));
        assert_eq!(record.rules(), ["FILE704"]);
        assert_eq!(record.usage.wall_ms, Some(30001));
        for layer in ["ns:net", "seccomp", "landlock", "cgroup", "rlimits"] {
            assert!(record.has_layer(layer), "{layer}");
        }
        assert!(!record.has_layer("ns:pid"));
        assert!(record.stopped_by.is_none() && record.runtime_rule().is_none());
        assert!(Record::parse(b"warden: error: boom").is_none());
    }

    #[test]
    fn stopped_by_names_the_layer_and_what_it_stopped() {
        let runtime = Record::parse(
            br#"{"status":"error","stopped_by":{"layer":"runtime","rule":"PROC801","event":"os.system"}}"#,
        )
        .unwrap();
        assert_eq!(runtime.runtime_rule(), Some("PROC801"));
        let stopped = runtime.stopped_by.unwrap();
        assert!(stopped.is_runtime());
        assert_eq!(stopped.to_string(), "runtime PROC801 (os.system)");
        let kernel =
            Record::parse(br#"{"status":"error","stopped_by":{"layer":"kernel","errno":"EPERM"}}"#)
                .unwrap();
        assert_eq!(kernel.runtime_rule(), None);
        assert_eq!(kernel.stopped_by.unwrap().to_string(), "kernel EPERM");
        // A stand-in's odd value reads as absent; the record still parses.
        let odd = Record::parse(br#"{"status":"ok","stopped_by":"runtime"}"#).unwrap();
        assert!(odd.stopped_by.is_none());
    }

    #[test]
    fn odd_and_partial_records_still_parse() {
        // A stand-in's record: few fields, some of unexpected types, after a line of logging.
        let stdout = b"starting\n{\"status\":\"ok\",\"exit_code\":\"0\",\"stdout\":null,\
            \"check\":[],\"usage\":{\"wall_ms\":-1},\
            \"layers\":{\"namespaces\":[],\"seccomp\":false,\"landlock\":{\"abi\":7},\"cgroup\":\"none\"}}\n";
        let record = Record::parse(stdout).unwrap();
        assert_eq!(record.status, "ok");
        assert_eq!(record.exit_code, None);
        assert_eq!(record.stdout, "");
        assert_eq!(record.decision(), None);
        assert_eq!(record.usage.wall_ms, None);
        for layer in ["seccomp", "landlock", "cgroup", "rlimits", "ns:user"] {
            assert!(!record.has_layer(layer), "{layer}");
        }
        assert_eq!(
            record.layers.to_string(),
            r#"{"namespaces":[],"seccomp":false,"cgroup":"none"}"#
        );
        // Without a status it is not a result record.
        assert!(Record::parse(br#"{"exit_code": 0}"#).is_none());
        assert!(Record::parse(br#"{"status": 3}"#).is_none());
    }

    #[test]
    fn check_lines_give_the_decision_and_sorted_rules() {
        let line = r#"{"path":"a.py","decision":"deny","policy":{"name":"default"},
            "findings":[{"rule":"REF201","span":{}},{"rule":"IMP101"},{"rule":"REF201"},{"name":"x"}]}"#;
        let summary: CheckSummary = serde_json::from_str(line).unwrap();
        assert_eq!(summary.path.as_deref(), Some("a.py"));
        assert_eq!(summary.decision.as_deref(), Some("deny"));
        assert_eq!(summary.rules(), ["IMP101", "REF201"]);
    }

    #[test]
    fn the_guard_kills_a_hung_process_group() {
        let warden = shell(None);
        let args: Vec<OsString> = vec!["-c".into(), "sleep 30 & sleep 30".into()];
        let done = warden.call(&args, &[], true).unwrap();
        assert!(done.killed);
        assert!(done.elapsed < Duration::from_secs(10));
        let seen = done.seen.unwrap();
        assert!(procs::survivors(&seen, Duration::from_secs(3)).is_empty());
    }

    #[test]
    fn the_jail_pass_turns_the_hooks_off_when_warden_has_them() {
        let mut echo = shell(None);
        echo.binary = PathBuf::from("/bin/echo");
        echo.guard = Duration::from_secs(20);
        let args = |warden: &Warden, pass: Pass| {
            let done = warden
                .run(Path::new("p.py"), pass, None, &[], false)
                .unwrap();
            String::from_utf8_lossy(&done.stdout).trim().to_owned()
        };
        assert_eq!(args(&echo, Pass::Jail), "run --json --no-policy p.py");
        echo.run_flags = ["--no-hooks".to_owned(), "--output-dir".to_owned()].into();
        assert_eq!(
            args(&echo, Pass::Jail),
            "run --json --no-policy --no-hooks p.py"
        );
        assert_eq!(args(&echo, Pass::Full), "run --json p.py");
        // The runtime pass keeps the hooks on.
        assert_eq!(args(&echo, Pass::Runtime), "run --json --no-policy p.py");
        assert!(echo.supports(Pass::Runtime));
        echo.run_flags.clear();
        assert!(!echo.supports(Pass::Runtime) && echo.supports(Pass::Jail));
        assert!(echo
            .run(Path::new("p.py"), Pass::Policy, None, &[], false)
            .is_err());
    }

    /// `/bin/sh` standing in for warden.
    fn shell(run_as: Option<RunAs>) -> Warden {
        Warden {
            binary: PathBuf::from("/bin/sh"),
            rules: None,
            output_dir: false,
            run_flags: BTreeSet::new(),
            full_pipeline: Ok(()),
            guard: Duration::from_millis(300),
            run_as,
        }
    }

    /// `nobody`, when the tests run as root on a host that has it.
    fn nobody() -> Option<RunAs> {
        if effective_uid() != Some(0) {
            eprintln!("skipped: switching users needs root");
            return None;
        }
        RunAs::lookup("nobody").ok()
    }

    #[test]
    fn run_as_switches_uid_and_gid_and_drops_supplementary_groups() {
        let Some(mut user) = nobody() else { return };
        let home = tempfile::tempdir().unwrap();
        user.home = Some(home.path().to_path_buf());
        let mut warden = shell(Some(user.clone()));
        warden.guard = Duration::from_secs(20);
        let args: Vec<OsString> = vec![
            "-c".into(),
            "id -u; id -g; id -G; echo \"$HOME $TMPDIR ${XDG_RUNTIME_DIR:-unset}\"".into(),
        ];
        let done = warden.call(&args, &[], false).unwrap();
        let out = String::from_utf8_lossy(&done.stdout).into_owned();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], user.uid.to_string(), "{out}");
        assert_eq!(lines[1], user.gid.to_string(), "{out}");
        assert_eq!(
            lines[2],
            user.gid.to_string(),
            "no supplementary group: {out}"
        );
        let home = home.path().display();
        assert_eq!(lines[3], format!("{home} {home} unset"), "{out}");
        assert!(RunAs::lookup("warden-no-such-user-x").is_err());
    }

    #[test]
    fn unreadable_files_are_found_as_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let Some(user) = nobody() else { return };
        let open = tempfile::tempdir().unwrap();
        std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let readable = open.path().join("readable.py");
        let private = open.path().join("private.py");
        for (path, mode) in [(&readable, 0o644), (&private, 0o600)] {
            std::fs::write(path, "x = 1\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let closed = tempfile::tempdir().unwrap();
        std::fs::set_permissions(closed.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let hidden = closed.path().join("hidden.py");
        std::fs::write(&hidden, "x = 1\n").unwrap();
        std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o644)).unwrap();
        let warden = shell(Some(user));
        let files = [readable.as_path(), private.as_path(), hidden.as_path()];
        assert_eq!(
            warden.unreadable(&files).unwrap(),
            [private.clone(), hidden.clone()]
        );
        assert!(shell(None).unreadable(&files).unwrap().is_empty());
    }
}
