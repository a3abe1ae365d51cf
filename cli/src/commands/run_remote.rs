//! `warden run --server ADDR`: the same run, sent to a running `warden serve` (its warm pool),
//! with the inputs sent along and the files it wrote delivered to `--output-dir` as a local run
//! delivers them. The record printed is the server's, without the files' contents.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde_json::{json, Map, Value};
use warden_gateway::pipeline::{RunRecord, RunStatus};

use super::super::http_client::{self, Address};
use super::super::out::outln;
use super::RunArgs;

/// The largest program sent (the server applies its policy's own, smaller, bound).
const MAX_PROGRAM_BYTES: usize = 16 << 20;
/// The most bytes of input files sent in one request (the server's `max_request_bytes` decides).
const MAX_INPUT_BYTES: u64 = 256 << 20;
/// How long to wait for the server's answer: runs are bounded by the server's policy; this only
/// guards against a server that never answers.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(15 * 60);

pub fn run(args: &RunArgs, server: &str) -> anyhow::Result<ExitCode> {
    let address = Address::parse(server).context("--server (or WARDEN_URL)")?;
    let refused = [
        (
            args.rules.rules.is_some(),
            "--rules (the server runs its own policies: name one with --policy)",
        ),
        (
            args.no_policy,
            "--no-policy (a client never weakens a server's policy)",
        ),
        (
            args.no_hooks,
            "--no-hooks (a client never weakens a server's policy)",
        ),
        (
            args.approve,
            "--approve (a server holds such programs for review: `warden review approve ID`)",
        ),
    ];
    if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
        bail!("{what} cannot be sent to a server; run without --server (and without WARDEN_URL) to run locally");
    }
    if let Some(dir) = &args.output_dir {
        warden_gateway::files::check_output_dir(dir)?;
    }
    let source = super::read_program(&args.program, MAX_PROGRAM_BYTES)?;
    if source.len() > MAX_PROGRAM_BYTES {
        bail!("the program is over {} MiB", MAX_PROGRAM_BYTES >> 20);
    }
    let code = String::from_utf8(source).map_err(|err| {
        anyhow::anyhow!(
            "the program is not UTF-8 (byte {}); the API takes programs as text",
            err.utf8_error().valid_up_to()
        )
    })?;
    let mut body = Map::new();
    body.insert("code".into(), Value::String(code));
    if let Some(policy) = &args.policy {
        body.insert("policy".into(), Value::String(policy.clone()));
    }
    let inputs = encode_inputs(&args.inputs)?;
    if !inputs.is_empty() {
        body.insert("inputs".into(), Value::Array(inputs));
    }
    if let Some(path) = &args.schema {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read schema {}", path.display()))?;
        let schema: Value = serde_json::from_str(&text)
            .with_context(|| format!("schema {} is not JSON", path.display()))?;
        body.insert("schema".into(), schema);
    }
    if let Some(result) = args.result {
        body.insert("result".into(), serde_json::to_value(result)?);
    }
    let mut limits = Map::new();
    for (name, value) in [
        ("wall_time_ms", args.wall_time_ms),
        ("cpu_time_ms", args.cpu_time_ms),
        ("memory_mib", args.memory_mib),
        ("stdout_bytes", args.stdout_bytes),
    ] {
        if let Some(value) = value {
            limits.insert(name.into(), json!(value));
        }
    }
    if !limits.is_empty() {
        body.insert("limits".into(), Value::Object(limits));
    }
    body.insert(
        "return_files".into(),
        Value::Bool(args.output_dir.is_some()),
    );
    let token = std::env::var("WARDEN_TOKEN").ok().filter(|t| !t.is_empty());
    let (status, mut answer) = http_client::call(
        &address,
        token.as_deref(),
        "POST",
        "/v1/run",
        Some(&Value::Object(body)),
        ANSWER_TIMEOUT,
    )?;
    if status != 200 {
        // Nothing was judged or run: the request itself was refused (or the server is overloaded).
        bail!(
            "the server refused the run: {}",
            http_client::error_text(status, &answer)
        );
    }
    let delivered = match &args.output_dir {
        Some(dir) => deliver_files(&mut answer, dir)?,
        None => {
            strip_contents(&mut answer);
            0
        }
    };
    let record: RunRecord = serde_json::from_value(answer.clone())
        .context("the server's answer is not a result record")?;
    if args.json {
        outln!("{}", serde_json::to_string(&answer)?);
    } else {
        super::report(args, &record)?;
        if let Some(dir) = &args.output_dir {
            eprintln!("warden: {delivered} file(s) delivered to {}", dir.display());
        }
        if record.status == RunStatus::ReviewRequired {
            if let Some(id) = answer["review"]["id"].as_str() {
                eprintln!("warden: the server holds the program for review as {id}: an approver runs `warden review approve {id}`, then its submitter may run it once (POST /v1/reviews/{id}/run)");
            }
        }
    }
    Ok(ExitCode::from(super::exit_code(&record)))
}

/// `--input` files and directories as the API's inputs, named as a local run places them: a file
/// by its name, a directory's files under the directory's name. Symlinks are refused.
fn encode_inputs(paths: &[PathBuf]) -> anyhow::Result<Vec<Value>> {
    let mut inputs = Vec::new();
    let mut total = 0u64;
    for path in paths {
        let name = path
            .file_name()
            .with_context(|| format!("input {} has no file name", path.display()))?
            .to_str()
            .with_context(|| format!("input {} is not a UTF-8 name", path.display()))?
            .to_owned();
        add_input(path, &name, &mut inputs, &mut total)?;
    }
    Ok(inputs)
}

fn add_input(
    path: &Path,
    name: &str,
    inputs: &mut Vec<Value>,
    total: &mut u64,
) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("cannot read input {}", path.display()))?;
    if meta.file_type().is_symlink() {
        bail!(
            "input {} is a symlink (refused, as for a local run)",
            path.display()
        );
    }
    if meta.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .with_context(|| format!("cannot read input {}", path.display()))?
            .collect::<Result<_, _>>()?;
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let child = entry
                .file_name()
                .to_str()
                .with_context(|| format!("a file in {} is not a UTF-8 name", path.display()))?
                .to_owned();
            add_input(&entry.path(), &format!("{name}/{child}"), inputs, total)?;
        }
        return Ok(());
    }
    if !meta.is_file() {
        bail!("input {} is not a regular file", path.display());
    }
    *total += meta.len();
    if *total > MAX_INPUT_BYTES {
        bail!(
            "the inputs are over {} MiB together; a server takes them in one request",
            MAX_INPUT_BYTES >> 20
        );
    }
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read input {}", path.display()))?;
    inputs.push(json!({ "name": name, "content_base64": BASE64.encode(bytes) }));
    Ok(())
}

/// Writes the record's files into `dir` (relative names only, never over a file), and takes their
/// contents out of the record. The number written.
fn deliver_files(answer: &mut Value, dir: &Path) -> anyhow::Result<usize> {
    let mut written = 0;
    let Some(files) = answer.get_mut("files").and_then(Value::as_array_mut) else {
        return Ok(0);
    };
    for file in files {
        let Some(content) = file
            .as_object_mut()
            .and_then(|f| f.remove("content_base64"))
        else {
            continue;
        };
        let name = file["path"].as_str().unwrap_or_default().to_owned();
        let relative = Path::new(&name);
        let safe = !name.is_empty()
            && relative
                .components()
                .all(|part| matches!(part, Component::Normal(_)));
        if !safe {
            bail!("the server returned a file named {name:?}, which is not a relative path in the work dir");
        }
        let bytes = BASE64
            .decode(content.as_str().unwrap_or_default())
            .with_context(|| format!("the server's content of {name} is not base64"))?;
        let target = dir.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .and_then(|mut out| std::io::Write::write_all(&mut out, &bytes))
            .with_context(|| format!("cannot write {}", target.display()))?;
        written += 1;
    }
    Ok(written)
}

fn strip_contents(answer: &mut Value) {
    if let Some(files) = answer.get_mut("files").and_then(Value::as_array_mut) {
        for file in files.iter_mut().filter_map(Value::as_object_mut) {
            file.remove("content_base64");
        }
    }
}
