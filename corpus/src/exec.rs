//! Running the warden binary as a subprocess: `warden check --format json` for the policy pass,
//! `warden run [--no-policy] [--no-hooks] --json` for the runtime, jail and full passes.
//!
//! Subprocesses keep the runner independent of the jail's single-thread requirement and let cases
//! run in parallel. Owns: argument lists, a guard timeout that kills the whole process group,
//! bounded capture of stdout/stderr. Does not own: the user warden runs as (`--run-as`,
//! `exec/run_as.rs`), reading the result records (`exec/record.rs`) or judging them
//! (`verify.rs`).

mod record;
mod run_as;

pub use record::{CheckSummary, Finding, Layers, Record, StaticVerdict, StoppedBy, Switch, Usage};
pub use run_as::RunAs;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    use super::run_as::effective_uid;
    use super::*;

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
