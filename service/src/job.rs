//! One run handed from the server to a worker process, and the worker's side of it.
//!
//! The server is multithreaded (tokio), and a process with threads cannot create a user namespace
//! (`unshare(CLONE_NEWUSER)` fails with EINVAL), so every run happens in a fresh single-threaded
//! `warden worker` process: the server writes one [`Job`] as JSON to its stdin, the worker runs the
//! ordinary pipeline ([`warden_gateway::pipeline::execute`]) and prints one [`WorkerReply`] line.
//!
//! The job carries the policy's *text* as the server validated it at start-up (and its digest, which
//! the worker re-checks), so a rules file edited on disk while the server runs cannot change what a
//! run is judged by.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use warden_gateway::pipeline::{self, CallerLimits, RunRecord, RunRequest};

/// The environment variable that names the server's pid for a worker: the worker dies with it.
pub const PARENT_PID_ENV: &str = "WARDEN_SERVER_PID";

/// The file name a served program's tracebacks and warnings show (`File "main.py", line 3`), cold
/// or pooled: the program a client sent has no file of its own, and the jail's path for it
/// (`/run/warden/main.py`) means nothing to the model that reads the traceback.
pub const SERVED_PROGRAM_NAME: &str = "main.py";

/// A file the client sends with a run; placed in the work dir by name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// A path relative to the work dir (`data.csv`, `inputs/sales.csv`): no `..`, not absolute,
    /// no NUL.
    pub name: String,
    /// The file's bytes, base64 (standard alphabet, padded).
    pub content_base64: String,
}

/// What a worker runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// The rules-file text the server validated.
    pub policy_text: String,
    /// Where relative paths in the rules file resolve (the rules file's directory).
    pub policy_base_dir: Option<PathBuf>,
    /// SHA-256 of `policy_text`; the worker refuses a mismatch.
    pub policy_sha256: String,
    pub code: String,
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    #[serde(default)]
    pub schema: Option<Value>,
    /// Where the result the schema judges is read from (the policy's when absent).
    #[serde(default)]
    pub result: Option<warden_gateway::validate::ResultFrom>,
    #[serde(default)]
    pub limits: CallerLimits,
    /// Return the files the program wrote, base64, in the record's `files[].content_base64`.
    #[serde(default)]
    pub return_files: bool,
    /// A person's approval of this program, when the policy sends it to review
    /// (service/src/review.rs: the server checked it is bound to this program and policy).
    #[serde(default)]
    pub approval: Option<pipeline::Approval>,
}

/// The worker's one line of output.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerReply {
    /// The result record (with file contents when asked for).
    Record(Box<RunRecord>),
    /// Nothing ran: the job was wrong or the host could not run it.
    Error(String),
}

/// Checks an input file name and normalises it: a path relative to the work dir, possibly in
/// subdirectories (`inputs/sales.csv`; `.` and empty segments dropped), never `..`, absolute or
/// with NUL ([`warden_gateway::files::relative_name`]), at most 255 bytes a segment.
pub fn check_input_name(name: &str) -> Result<String, String> {
    if name.is_empty() || name.len() > 4096 {
        return Err(format!("input name {name:?} must be 1 to 4096 bytes long"));
    }
    warden_gateway::files::relative_name(name).map_err(|err| format!("input name: {err}"))
}

/// How many input files a run may carry, and their decoded bytes in total
/// (`admission.max_input_files`, `admission.max_input_bytes`): the worker writes each one before
/// the jail's clocks start, so their number is bounded like their size.
#[derive(Debug, Clone, Copy)]
pub struct InputCaps {
    pub max_files: usize,
    pub max_bytes: u64,
}

impl InputCaps {
    /// For the worker: the server applied the configured caps already.
    pub const CHECKED: Self = Self {
        max_files: usize::MAX,
        max_bytes: u64::MAX,
    };
}

/// Decodes the inputs and checks their number, names and sizes (the number and an estimate of the
/// size before decoding anything).
pub fn decode_inputs(
    inputs: &[InputFile],
    caps: InputCaps,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    if inputs.len() > caps.max_files {
        return Err(format!(
            "{} input files; a run may carry at most {} (admission.max_input_files)",
            inputs.len(),
            caps.max_files
        ));
    }
    let too_big = || {
        format!(
            "inputs exceed {} bytes in total (admission.max_input_bytes)",
            caps.max_bytes
        )
    };
    // Base64 is 4 characters per 3 bytes (less padding).
    let estimate = inputs
        .iter()
        .map(|input| input.content_base64.len() as u64 / 4 * 3)
        .fold(0u64, u64::saturating_add);
    if estimate > caps.max_bytes.saturating_add(2 * inputs.len() as u64) {
        return Err(too_big());
    }
    let mut seen = std::collections::BTreeSet::new();
    for input in inputs {
        let name = check_input_name(&input.name)?;
        if !seen.insert(name.clone()) {
            return Err(format!("two inputs are named {name:?}"));
        }
    }
    // A file cannot also be a directory of another input (`a` and `a/b`).
    for name in &seen {
        let mut prefix = name.as_str();
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            if seen.contains(parent) {
                return Err(format!(
                    "input {parent:?} is a file, so {name:?} cannot be placed below it"
                ));
            }
            prefix = parent;
        }
    }
    let mut total = 0u64;
    let mut decoded = Vec::with_capacity(inputs.len());
    for input in inputs {
        let name = check_input_name(&input.name)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(input.content_base64.as_bytes())
            .map_err(|err| format!("input {:?} is not valid base64: {err}", input.name))?;
        total = total.saturating_add(bytes.len() as u64);
        if total > caps.max_bytes {
            return Err(too_big());
        }
        decoded.push((name, bytes));
    }
    Ok(decoded)
}

/// Writes decoded inputs below `dir` (made here) at their relative paths, and returns the
/// top-level entries (files and directories) to place in the work dir: each is copied in by its
/// name, directories with what they hold.
pub fn write_inputs(inputs: &[(String, Vec<u8>)], dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tops: Vec<PathBuf> = Vec::new();
    for (name, bytes) in inputs {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create the directory of input {name}"))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write input {name}"))?;
        let top = dir.join(name.split('/').next().unwrap_or(name));
        if !tops.contains(&top) {
            tops.push(top);
        }
    }
    Ok(tops)
}

/// The worker: reads one job from stdin, runs it, prints one reply. `dir` is the job's private
/// directory (the server made it and removes it).
pub fn serve_one(dir: &Path) -> anyhow::Result<()> {
    arm_parent_death()?;
    let job: Job = serde_json::from_reader(std::io::stdin().lock())
        .context("the job on standard input is not valid")?;
    let reply = match run(&job, dir) {
        Ok(record) => WorkerReply::Record(Box::new(record)),
        Err(err) => WorkerReply::Error(format!("{err:#}")),
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &reply)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Dies with the server: if it is killed, this worker is killed too (and the jail's init dies with
/// the worker the same way, which takes the whole jail down).
pub(crate) fn arm_parent_death() -> anyhow::Result<()> {
    let Some(expected) = std::env::var(PARENT_PID_ENV)
        .ok()
        .and_then(|pid| pid.parse::<i32>().ok())
    else {
        return Ok(());
    };
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .context("cannot arm the parent-death signal")?;
    // The server may have died between fork and prctl; the signal would then never come.
    if nix::unistd::getppid().as_raw() != expected {
        anyhow::bail!("the server (pid {expected}) is gone");
    }
    Ok(())
}

fn run(job: &Job, dir: &Path) -> anyhow::Result<RunRecord> {
    run_in(job, dir, None)
}

/// [`run`], in a pooled jail when `warm` is given (`pool/worker.rs`).
pub(crate) fn run_in(
    job: &Job,
    dir: &Path,
    warm: Option<&mut warden_gateway::session::Session>,
) -> anyhow::Result<RunRecord> {
    let mut policy =
        warden_policy::Policy::from_toml(&job.policy_text, job.policy_base_dir.as_deref())
            .map_err(|err| anyhow::anyhow!("invalid policy: {err}"))?;
    // `Policy::sha256` is the digest of the text it was parsed from.
    if policy.sha256 != job.policy_sha256 {
        anyhow::bail!("the policy text does not match its digest");
    }
    warden_gateway::runtime_check::attach_index(&mut policy)?;
    run_with(job, dir, &policy, warm.map(Warm::Pooled))
}

/// Where a warm run runs (`pool/worker.rs`).
pub(crate) enum Warm<'a> {
    /// In a pooled jail that is waiting already.
    Pooled(&'a mut warden_gateway::session::Session),
    /// In a jail forked for it now from the template at `channel` (a run with input files).
    Fork {
        channel: &'a Path,
        lifetime: std::time::Duration,
    },
}

/// [`run_in`] with the job's policy already parsed, checked against the job's digest and given
/// its identity index (a pooled worker parsed it when its jail started).
pub(crate) fn run_with(
    job: &Job,
    dir: &Path,
    policy: &warden_policy::Policy,
    warm: Option<Warm<'_>>,
) -> anyhow::Result<RunRecord> {
    anyhow::ensure!(
        policy.sha256 == job.policy_sha256,
        "the job's policy is not the one given"
    );
    // The server bounded the request's size already.
    let inputs =
        decode_inputs(&job.inputs, InputCaps::CHECKED).map_err(|err| anyhow::anyhow!(err))?;
    let paths = write_inputs(&inputs, &dir.join("in"))?;
    let output_dir = dir.join("out");
    let request = RunRequest {
        source: job.code.as_bytes().to_vec(),
        inputs: paths,
        output_dir: job.return_files.then(|| output_dir.clone()),
        schema: job.schema.clone(),
        result: job.result,
        approval: job.approval.clone(),
        limits: job.limits,
        // Tracebacks name the program `main.py`, cold or pooled, not the jail's internal path.
        program_name: Some(SERVED_PROGRAM_NAME.to_owned()),
        // The static and runtime layers always apply to a served run.
        ..RunRequest::default()
    };
    let mut record = match warm {
        Some(Warm::Pooled(warm)) => pipeline::execute_warm(policy, &request, warm)?,
        Some(Warm::Fork { channel, lifetime }) => {
            pipeline::execute_forked(policy, &request, channel, lifetime)?
        }
        None => pipeline::execute(policy, &request)?,
    };
    if job.return_files {
        attach_contents(&mut record, &output_dir);
    }
    Ok(record)
}

/// Adds `content_base64` to each collected file (the pipeline already capped their number and size).
fn attach_contents(record: &mut RunRecord, output_dir: &Path) {
    for file in &mut record.files {
        if let Ok(bytes) = std::fs::read(output_dir.join(&file.path)) {
            file.content_base64 = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn input_names_must_stay_in_the_work_dir() {
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/../../x",
            "a/..",
            "/etc/passwd",
            "a\0b",
            &"x".repeat(256),
        ] {
            assert!(check_input_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "data.csv",
            ".hidden",
            "a b.txt",
            "ü.csv",
            "inputs/sales.csv",
        ] {
            assert_eq!(check_input_name(good).unwrap(), good);
        }
        assert_eq!(check_input_name("./a//b.csv").unwrap(), "a/b.csv");
    }

    #[test]
    fn inputs_in_subdirectories_are_written_below_their_top_entries() {
        let input = |name: &str, text: &str| InputFile {
            name: name.to_owned(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(text),
        };
        let caps = InputCaps {
            max_files: 8,
            max_bytes: 1000,
        };
        let decoded = decode_inputs(
            &[
                input("inputs/sales.csv", "a"),
                input("./inputs/2024/q1.csv", "b"),
                input("top.txt", "c"),
            ],
            caps,
        )
        .unwrap();
        assert_eq!(decoded[1].0, "inputs/2024/q1.csv");
        let dir = tempfile::tempdir().unwrap();
        let tops = write_inputs(&decoded, &dir.path().join("in")).unwrap();
        assert_eq!(
            tops,
            vec![dir.path().join("in/inputs"), dir.path().join("in/top.txt")]
        );
        assert_eq!(
            std::fs::read(dir.path().join("in/inputs/2024/q1.csv")).unwrap(),
            b"b"
        );
        let err = decode_inputs(&[input("a", "x"), input("a/b", "y")], caps).unwrap_err();
        assert!(err.contains("is a file"), "{err}");
        let err = decode_inputs(&[input("a/b", "x"), input("a//b", "y")], caps).unwrap_err();
        assert!(err.contains("two inputs"), "{err}");
    }

    #[test]
    fn a_policy_text_that_does_not_match_its_digest_is_refused() {
        let text = warden_policy::settings::DEFAULT_RULES.to_owned();
        let job = Job {
            policy_text: text.replace("pandas", "pandaz"),
            policy_base_dir: None,
            policy_sha256: warden_policy::Policy::from_toml(&text, None)
                .unwrap()
                .sha256,
            code: "print(1)".to_owned(),
            inputs: Vec::new(),
            schema: None,
            result: None,
            limits: CallerLimits::default(),
            return_files: false,
            approval: None,
        };
        let dir = std::env::temp_dir().join("warden-job-digest-test-never-created");
        let err = run(&job, &dir).unwrap_err().to_string();
        assert!(err.contains("digest"), "{err}");
        assert!(!dir.exists());
    }

    #[test]
    fn inputs_are_decoded_and_capped() {
        let input = |name: &str, text: &str| InputFile {
            name: name.to_owned(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(text),
        };
        let caps = InputCaps {
            max_files: 3,
            max_bytes: 100,
        };
        let decoded = decode_inputs(&[input("a.csv", "x,y\n1,2\n")], caps).unwrap();
        assert_eq!(decoded[0].1, b"x,y\n1,2\n");
        assert!(decode_inputs(&[input("a", "x"), input("a", "y")], caps)
            .unwrap_err()
            .contains("two inputs"));
        assert!(decode_inputs(&[input("a", &"x".repeat(101))], caps)
            .unwrap_err()
            .contains("exceed"));
        // Exactly at the cap is fine, one byte over is not (whatever the padding).
        for size in 97..=100 {
            assert!(decode_inputs(&[input("a", &"x".repeat(size))], caps).is_ok());
        }
        // Too many files, refused before any is decoded (the last one is not even base64).
        let mut many: Vec<InputFile> = (0..3).map(|i| input(&format!("f{i}"), "")).collect();
        many.push(InputFile {
            name: "f3".to_owned(),
            content_base64: "!!".to_owned(),
        });
        let err = decode_inputs(&many, caps).unwrap_err();
        assert!(
            err.contains("at most 3") && err.contains("max_input_files"),
            "{err}"
        );
        // Far over the byte cap: refused from the base64 length alone.
        let err = decode_inputs(&[input("a", &"x".repeat(10_000))], caps).unwrap_err();
        assert!(err.contains("max_input_bytes"), "{err}");
        let bad = InputFile {
            name: "a".to_owned(),
            content_base64: "not base64!".to_owned(),
        };
        assert!(decode_inputs(&[bad], caps).unwrap_err().contains("base64"));
    }
}
