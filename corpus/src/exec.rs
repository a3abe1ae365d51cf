//! Running the warden binary as a subprocess: `warden check --format json` for the policy pass,
//! `warden run [--no-policy] --json` for the jail and full passes.
//!
//! Subprocesses keep the runner independent of the jail's single-thread requirement and let cases
//! run in parallel. Owns: argument lists, a guard timeout that kills the whole process group,
//! bounded capture of stdout/stderr, and parsing the result records. Does not own: judging them
//! (`verify.rs`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

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
    /// `Err(why)` when the full pipeline (`warden run` with the policy) does not produce a result
    /// record: the runner then does the policy and jail-only passes alone and says so.
    pub full_pipeline: Result<(), String>,
    /// Longest a single warden call may take before the runner kills it.
    pub guard: Duration,
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

/// The fields of a `warden run --json` result record the runner uses.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Record {
    pub status: String,
    pub exit_code: Option<i64>,
    pub signal: Option<Value>,
    pub stdout: String,
    pub stderr: String,
    /// The record's `check.decision`, when the static layer ran.
    pub decision: Option<String>,
    pub rules: Vec<String>,
    pub layers: Value,
    pub wall_ms: Option<u64>,
}

impl Record {
    /// Parses warden's stdout; `None` when it is not a result record.
    pub fn parse(stdout: &[u8]) -> Option<Record> {
        let text = String::from_utf8_lossy(stdout);
        let value: Value = serde_json::from_str(text.trim()).ok().or_else(|| {
            text.lines()
                .rev()
                .find_map(|l| serde_json::from_str(l).ok())
        })?;
        let status = value.get("status")?.as_str()?.to_owned();
        let string = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let check = value.get("check");
        Some(Record {
            status,
            exit_code: value.get("exit_code").and_then(Value::as_i64),
            signal: value.get("signal").filter(|s| !s.is_null()).cloned(),
            stdout: string("stdout"),
            stderr: string("stderr"),
            decision: check
                .and_then(|c| c.get("decision"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            rules: rules_of(check.and_then(|c| c.get("findings"))),
            layers: value.get("layers").cloned().unwrap_or(Value::Null),
            wall_ms: value
                .get("usage")
                .and_then(|u| u.get("wall_ms"))
                .and_then(Value::as_u64),
        })
    }

    /// Whether the record says the layer is in force (`seccomp`, `landlock`, `cgroup`,
    /// `rlimits`, `ns:NAME`).
    pub fn has_layer(&self, layer: &str) -> bool {
        let layers = &self.layers;
        if let Some(ns) = layer.strip_prefix("ns:") {
            return layers["namespaces"]
                .as_array()
                .is_some_and(|list| list.iter().any(|n| n.as_str() == Some(ns)));
        }
        match &layers[layer] {
            Value::Bool(on) => *on,
            Value::String(text) => !text.is_empty() && text != "none",
            Value::Number(_) => true,
            _ => false,
        }
    }
}

/// One `warden check --format json` result.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub decision: String,
    pub rules: Vec<String>,
}

fn rules_of(findings: Option<&Value>) -> Vec<String> {
    let mut rules: Vec<String> = findings
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|f| f.get("rule").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    rules.sort();
    rules.dedup();
    rules
}

impl Warden {
    /// Describes `binary`, asking it once which `run` flags it has.
    pub fn new(binary: PathBuf, rules: Option<PathBuf>, guard: Duration) -> Result<Warden, String> {
        let help = Command::new(&binary)
            .args(["run", "--help"])
            .stdin(Stdio::null())
            .output()
            .map_err(|err| format!("cannot run {}: {err}", binary.display()))?;
        let help = String::from_utf8_lossy(&help.stdout);
        let mut warden = Warden {
            output_dir: help.contains("--output-dir"),
            full_pipeline: Ok(()),
            binary,
            rules,
            guard,
        };
        warden.full_pipeline = warden.probe_full_pipeline();
        Ok(warden)
    }

    /// Runs a trivial program through the full pipeline to see whether it gives a result record.
    fn probe_full_pipeline(&self) -> Result<(), String> {
        let mut args = vec![OsString::from("run")];
        args.extend(self.rules_args());
        args.extend(["--json".into(), "-".into()]);
        let mut child = Command::new(&self.binary)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| format!("cannot run {}: {err}", self.binary.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = std::io::Write::write_all(&mut stdin, b"print('warden corpus probe')\n");
        }
        let output = child
            .wait_with_output()
            .map_err(|err| format!("cannot run {}: {err}", self.binary.display()))?;
        match Record::parse(&output.stdout) {
            Some(record) if record.status == "ok" => Ok(()),
            Some(record) => Err(format!(
                "a trivial program ended with status {}",
                record.status
            )),
            None => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
        }
    }

    fn rules_args(&self) -> Vec<OsString> {
        match &self.rules {
            Some(rules) => vec!["--rules".into(), rules.into()],
            None => Vec::new(),
        }
    }

    /// The policy pass over many files at once: path → verdict. Files warden could not read are
    /// missing from the map (their error is in `Err` of the pair).
    pub fn check(&self, files: &[&Path]) -> Result<BTreeMap<PathBuf, Verdict>, String> {
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
                let Ok(value) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                let (Some(path), Some(decision)) = (
                    value.get("path").and_then(Value::as_str),
                    value.get("decision").and_then(Value::as_str),
                ) else {
                    continue;
                };
                verdicts.insert(
                    PathBuf::from(path),
                    Verdict {
                        decision: decision.to_owned(),
                        rules: rules_of(value.get("findings")),
                    },
                );
            }
        }
        Ok(verdicts)
    }

    /// `warden run --json [--no-policy] [--output-dir DIR] FILE`, watched when `watch`.
    pub fn run(
        &self,
        file: &Path,
        no_policy: bool,
        output_dir: Option<&Path>,
        env: &[(String, String)],
        watch: bool,
    ) -> Result<Finished, String> {
        let mut args = vec![OsString::from("run")];
        args.extend(self.rules_args());
        args.push("--json".into());
        if no_policy {
            args.push("--no-policy".into());
        }
        if let (Some(dir), true) = (output_dir, self.output_dir) {
            args.extend(["--output-dir".into(), dir.into()]);
        }
        args.push(file.into());
        self.call(&args, env, watch)
    }

    /// Runs warden with `args`; kills its process group if it outlives the guard.
    fn call(
        &self,
        args: &[OsString],
        env: &[(String, String)],
        watch: bool,
    ) -> Result<Finished, String> {
        let started = Instant::now();
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command
            .spawn()
            .map_err(|err| format!("cannot run {}: {err}", self.binary.display()))?;
        let watcher = watch.then(|| Watcher::start(child.id()));
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

/// Validates a rules file with the binary under test (`warden rules check FILE`), so that a bad
/// file fails once, with the policy's own message, rather than once per case.
pub fn check_rules(binary: &Path, rules: &Path) -> anyhow::Result<()> {
    let output = Command::new(binary)
        .args(["rules", "check"])
        .arg(rules)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| anyhow::anyhow!("cannot run {}: {err}", binary.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let message = stderr.trim().trim_start_matches("warden: error: ");
    anyhow::bail!("{message}")
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
        assert_eq!(record.decision.as_deref(), Some("allow"));
        assert_eq!(record.rules, ["FILE704"]);
        assert_eq!(record.wall_ms, Some(30001));
        for layer in ["ns:net", "seccomp", "landlock", "cgroup", "rlimits"] {
            assert!(record.has_layer(layer), "{layer}");
        }
        assert!(!record.has_layer("ns:pid"));
        assert!(Record::parse(b"warden: error: boom").is_none());
    }

    #[test]
    fn the_guard_kills_a_hung_process_group() {
        let warden = Warden {
            binary: PathBuf::from("/bin/sh"),
            rules: None,
            output_dir: false,
            full_pipeline: Ok(()),
            guard: Duration::from_millis(300),
        };
        let args: Vec<OsString> = vec!["-c".into(), "sleep 30 & sleep 30".into()];
        let done = warden.call(&args, &[], true).unwrap();
        assert!(done.killed);
        assert!(done.elapsed < Duration::from_secs(10));
        let seen = done.seen.unwrap();
        assert!(procs::survivors(&seen, Duration::from_secs(3)).is_empty());
    }
}
