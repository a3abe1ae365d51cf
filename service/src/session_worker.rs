//! One session handed from the server to a `warden session-worker` process, and the worker's side.
//!
//! A session's jail must be created by a single-threaded process, as a run's is (`job.rs`), so the
//! server keeps one worker process per session. The worker reads one [`SessionJob`] line on its
//! standard input (the policy's text as the server validated it, with its digest, which the worker
//! re-checks; the caller's limits; the inputs), starts a [`Session`] and answers
//! [`WorkerAnswer::Started`] (or [`WorkerAnswer::Failed`]). Then it serves [`WorkerRequest`]s, one
//! JSON line each, in order, until `close` or the end of its standard input; every request gets
//! exactly one final answer line (an execution with `stream` set is preceded by
//! [`WorkerAnswer::Chunk`] lines as the cell writes). Closing ends the session (every process,
//! mount and cgroup of its jail) and answers [`WorkerAnswer::Closed`] with the session's usage.
//!
//! The worker trusts the server (its parent) and nothing that comes out of the jail: the gateway's
//! [`Session`] parses the driver's answers strictly and bounds them.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use warden_gateway::pipeline::{AppliedLimits, CallerLimits};
use warden_gateway::session::{Session, SessionOptions};

use super::job::{self, InputCaps, InputFile};

/// The first line a session worker reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionJob {
    /// The rules-file text the server validated.
    pub policy_text: String,
    pub policy_base_dir: Option<std::path::PathBuf>,
    /// SHA-256 of `policy_text`; the worker refuses a mismatch.
    pub policy_sha256: String,
    /// Limits that may only tighten the policy's: `wall_time_ms` per cell, `memory_mib` for the
    /// whole session, `stdout_bytes` per cell.
    #[serde(default)]
    pub limits: CallerLimits,
    /// Files written into the work dir once the session has started (relative paths).
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    /// The jail's own bound on the session's life (wall clock and CPU); the server ends sessions
    /// before it.
    pub lifetime_ms: u64,
}

/// A request after the first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkerRequest {
    /// Check the cell in the session's context and run it when allowed.
    Execute {
        code: String,
        /// Send the cell's output as [`WorkerAnswer::Chunk`]s while it runs.
        #[serde(default)]
        stream: bool,
    },
    /// Write a file into the work dir (a relative path; directories made).
    Upload {
        path: String,
        content_base64: String,
    },
    /// The regular files in the work dir.
    List,
    /// One file of the work dir.
    Download { path: String },
    /// End the session.
    Close,
}

/// A file in the session's work dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    /// The session could not start.
    SetupFailed,
    /// The request was wrong (a bad name, not base64).
    BadRequest,
    /// No regular file by that name (missing, a directory, a symlink).
    NotFound,
    /// The file is over the policy's output cap.
    TooLarge,
    /// The session is over.
    Ended,
}

/// One answer line of a session worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerAnswer {
    /// The session is ready: the layers in force and the limits it got.
    Started {
        layers: warden_jail::Layers,
        limits: AppliedLimits,
    },
    /// Output of the running cell, as it is produced (`name`: `stdout` or `stderr`).
    Chunk { name: String, text: String },
    /// A cell's record (`warden_gateway::session::CellRecord`, serialised as is).
    Cell(Value),
    /// A file was written.
    File(FileEntry),
    /// The work dir's regular files (`truncated`: there were more than the policy's
    /// `output_files`).
    Files {
        files: Vec<FileEntry>,
        truncated: bool,
    },
    /// A file's content.
    Content {
        path: String,
        content_base64: String,
    },
    /// The request failed.
    Failed { kind: FailKind, message: String },
    /// The session has ended (`usage`: the whole session's, when the jail reported it).
    Closed { usage: Option<warden_jail::Usage> },
}

/// The worker: starts the session of the job on standard input, then serves requests until
/// `close` or the end of standard input. `dir` is the session's private directory (the server
/// made it, points `WARDEN_RUN_DIR` at it, and removes it).
pub fn serve_session(dir: &Path) -> anyhow::Result<()> {
    job::arm_parent_death()?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(());
    }
    if crate::pool::template::is_template_job(&line) {
        return crate::pool::template::serve_template(&line, dir, &mut input, &mut out);
    }
    if crate::pool::worker::is_pool_job(&line) {
        return crate::pool::worker::serve_pooled(&line, dir, &mut input, &mut out);
    }
    let job: SessionJob =
        serde_json::from_str(&line).context("the session job on standard input is not valid")?;
    let (session, limits) = match start(&job, dir) {
        Ok(started) => started,
        Err(err) => {
            send(
                &mut out,
                &WorkerAnswer::Failed {
                    kind: FailKind::SetupFailed,
                    message: format!("{err:#}"),
                },
            )?;
            return Ok(());
        }
    };
    serve_started(session, &job.inputs, limits, &mut input, &mut out)
}

/// A started session: places its inputs, answers [`WorkerAnswer::Started`], then serves requests
/// until `close` or the end of `input` (a session started here, or a pooled jail claimed for one).
pub(crate) fn serve_started(
    mut session: Session,
    inputs: &[InputFile],
    limits: AppliedLimits,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut out = out;
    let mut line = String::new();
    // The inputs go in as uploads: the same path, caps and checks as a later upload.
    let inputs = job::decode_inputs(inputs, InputCaps::CHECKED).map_err(anyhow::Error::msg);
    let placed = inputs.and_then(|inputs| {
        for (name, bytes) in inputs {
            session
                .upload(&name, &bytes)
                .with_context(|| format!("input {name}"))?;
        }
        Ok(())
    });
    if let Err(err) = placed {
        drop(session.close());
        send(
            &mut out,
            &WorkerAnswer::Failed {
                kind: FailKind::SetupFailed,
                message: format!("{err:#}"),
            },
        )?;
        return Ok(());
    }
    send(
        &mut out,
        &WorkerAnswer::Started {
            layers: session.layers().clone(),
            limits,
        },
    )?;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        let request = match serde_json::from_str::<WorkerRequest>(&line) {
            Ok(request) => request,
            Err(err) => {
                send(
                    &mut out,
                    &WorkerAnswer::Failed {
                        kind: FailKind::BadRequest,
                        message: format!("not a request: {err}"),
                    },
                )?;
                continue;
            }
        };
        let answer = match request {
            WorkerRequest::Close => break,
            WorkerRequest::Execute { code, stream } => {
                let record = if stream {
                    let mut failed = None;
                    let record = session.execute_with(code.as_bytes(), &mut |name, text| {
                        if failed.is_none() {
                            let chunk = WorkerAnswer::Chunk {
                                name: name.to_owned(),
                                text: text.to_owned(),
                            };
                            failed = send(&mut out, &chunk).err();
                        }
                    });
                    if let Some(err) = failed {
                        return Err(err);
                    }
                    record
                } else {
                    session.execute(code.as_bytes())
                };
                WorkerAnswer::Cell(serde_json::to_value(&record)?)
            }
            WorkerRequest::Upload {
                path,
                content_base64,
            } => match base64::engine::general_purpose::STANDARD.decode(content_base64) {
                Err(err) => failed(FailKind::BadRequest, format!("not base64: {err}")),
                Ok(bytes) => match session.upload(&path, &bytes) {
                    Ok(file) => WorkerAnswer::File(FileEntry {
                        path: file.path,
                        size: file.size,
                    }),
                    Err(err) => classify(&session, &err),
                },
            },
            WorkerRequest::List => match session.files() {
                Ok((files, truncated)) => WorkerAnswer::Files {
                    files: files
                        .into_iter()
                        .map(|f| FileEntry {
                            path: f.path,
                            size: f.size,
                        })
                        .collect(),
                    truncated,
                },
                Err(err) => classify(&session, &err),
            },
            WorkerRequest::Download { path } => match session.download(&path) {
                Ok(bytes) => WorkerAnswer::Content {
                    path: warden_gateway::files::relative_name(&path).unwrap_or(path),
                    content_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
                },
                Err(err) => classify(&session, &err),
            },
        };
        send(&mut out, &answer)?;
    }
    let usage = session.close().map(|outcome| outcome.usage);
    send(&mut out, &WorkerAnswer::Closed { usage })?;
    Ok(())
}

fn start(job: &SessionJob, dir: &Path) -> anyhow::Result<(Session, AppliedLimits)> {
    let mut policy =
        warden_policy::Policy::from_toml(&job.policy_text, job.policy_base_dir.as_deref())
            .map_err(|err| anyhow::anyhow!("invalid policy: {err}"))?;
    if policy.sha256 != job.policy_sha256 {
        anyhow::bail!("the policy text does not match its digest");
    }
    warden_gateway::runtime_check::attach_index(&mut policy)?;
    let applied = AppliedLimits::of(&policy, &job.limits);
    policy.limits = warden_gateway::pipeline::effective_limits(&policy, &job.limits);
    anyhow::ensure!(dir.is_dir(), "the session's directory is missing");
    let options = SessionOptions {
        lifetime: Duration::from_millis(job.lifetime_ms.max(1)),
        ..SessionOptions::default()
    };
    let session = Session::start(&policy, &options)?;
    Ok((session, applied))
}

fn failed(kind: FailKind, message: String) -> WorkerAnswer {
    WorkerAnswer::Failed { kind, message }
}

/// A file request's error, as the client should see it. The driver's messages start with the
/// Python exception's name.
fn classify(session: &Session, err: &anyhow::Error) -> WorkerAnswer {
    let message = format!("{err:#}");
    let kind = if session.ended().is_some() {
        FailKind::Ended
    } else if message.contains("larger than the output cap") {
        FailKind::TooLarge
    } else if message.starts_with("FileNotFoundError")
        || message.starts_with("IsADirectoryError")
        || message.contains("not a regular file")
        || message.contains("Too many levels of symbolic links")
        || message.starts_with("NotADirectoryError")
    {
        FailKind::NotFound
    } else {
        FailKind::BadRequest
    };
    failed(kind, message)
}

fn send(out: &mut impl Write, answer: &WorkerAnswer) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, answer)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_are_one_json_line_each() {
        let request: WorkerRequest =
            serde_json::from_str(r#"{"op":"execute","code":"x = 1"}"#).unwrap();
        assert!(matches!(
            request,
            WorkerRequest::Execute { stream: false, .. }
        ));
        assert!(
            serde_json::from_str::<WorkerRequest>(r#"{"op":"download","path":"a","x":1}"#).is_err()
        );
        assert!(serde_json::from_str::<WorkerRequest>(r#"{"op":"rm","path":"a"}"#).is_err());
        let answer = serde_json::to_string(&WorkerAnswer::Chunk {
            name: "stdout".into(),
            text: "a\nb".into(),
        })
        .unwrap();
        assert!(!answer.contains('\n'));
        let back: WorkerAnswer = serde_json::from_str(&answer).unwrap();
        assert!(matches!(back, WorkerAnswer::Chunk { .. }));
    }
}
