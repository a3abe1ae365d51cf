//! A session's worker: the worker side of a `warden session-worker` given a [`SessionJob`].
//!
//! A session's jail must be created by a single-threaded process, as a run's is (`run.rs`), so the
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
use warden_gateway::pipeline::AppliedLimits;
use warden_gateway::session::{Session, SessionOptions};

use crate::handoff::Handoff;
use crate::inputs::{decode_inputs, InputCaps};
use crate::send;
use crate::wire::{FailKind, FileEntry, InputFile, SessionJob, WorkerAnswer, WorkerRequest};

/// A session's worker, after its first line: starts the session and serves it until `close` or
/// the end of `input`. `dir` is the session's private directory.
pub fn serve_session(
    job: &SessionJob,
    dir: &Path,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let (session, limits) = match start(job, dir) {
        Ok(started) => started,
        Err(err) => {
            return send(
                out,
                &WorkerAnswer::Failed {
                    kind: FailKind::SetupFailed,
                    message: format!("{err:#}"),
                },
            );
        }
    };
    serve_started(session, &job.inputs, limits, input, out)
}

/// A started session: places its inputs, answers [`WorkerAnswer::Started`], then serves requests
/// until `close` or the end of `input` (a session started here, or a pooled jail claimed for one).
pub fn serve_started(
    mut session: Session,
    inputs: &[InputFile],
    limits: AppliedLimits,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut out = out;
    let mut line = String::new();
    // The inputs go in as uploads: the same path, caps and checks as a later upload.
    let inputs = decode_inputs(inputs, InputCaps::CHECKED).map_err(anyhow::Error::msg);
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
                WorkerAnswer::Cell(Box::new(record))
            }
            WorkerRequest::Upload { path, staged } => match open_staged(&staged) {
                Err(err) => failed(
                    FailKind::Internal,
                    format!("the upload's staged file: {err}"),
                ),
                Ok(mut file) => match session.upload_from(&path, &mut file) {
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
    let mut policy = Handoff::from(job).policy()?;
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

/// The server's staged upload: a regular file, never through a symbolic link.
fn open_staged(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}
