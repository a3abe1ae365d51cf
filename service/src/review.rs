//! Programs the policy sends to review, held until a person approves or rejects them, then run
//! once by the client that submitted them.
//!
//! A run whose decision is `review` (over HTTP, or a cell over MCP) is stored here with a random
//! id: the program's text and SHA-256, the registered policy's name and SHA-256, the caller, the
//! findings, and the run's inputs, schema and limits. An approver (a token with `approve = true`,
//! or a peer on the Unix socket with the server's uid or root) approves or rejects it; its
//! submitter then runs it by id, once. The approval binds to the program's SHA-256 and to the
//! policy's: a policy whose text changed (a restart with edited rules) voids it. Everything
//! expires `review.ttl_ms` after submission.
//!
//! The store is a directory, `<state_dir>/reviews` (mode 0700): one small `<id>.json` (the
//! review's state) and one `<id>.program.json` (the program) per review, each written whole
//! (temporary file, then rename), every change made under an exclusive `flock` on its `lock`
//! file. So reviews survive a restart of the server, and a `warden mcp` process with the same
//! state directory shares them with `warden serve` (whose socket the operator uses to approve).
//! It is bounded: at most `review.max_reviews` reviews (finished and expired ones are removed
//! first to make room) of at most `review.max_bytes` each.
//!
//! What this module does not do: judge programs (the worker does, with the policy), or decide who
//! is calling (the front ends do).

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::bail;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use warden_gateway::pipeline::{Approval, CallerLimits, RunRecord, RunStatus};

use super::audit::AuditRecord;
use super::{sha256, Caller, RunBody, Service, ServiceError};
use warden_worker::wire::InputFile;

mod calls;

/// Default `review.ttl_ms` (1 hour).
pub const DEFAULT_TTL_MS: u64 = 3_600_000;
/// Default `review.max_reviews`.
pub const DEFAULT_MAX_REVIEWS: usize = 64;
/// Default `review.max_bytes` (1 MiB).
pub const DEFAULT_MAX_BYTES: usize = 1 << 20;
/// The most findings a review keeps (its state file stays small; the program is kept whole).
const MAX_FINDINGS: usize = 100;
/// The longest rejection reason kept.
const MAX_REASON_CHARS: usize = 1000;

/// `[review]`: where reviews are kept and how many, how large, for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewSettings {
    /// `<state_dir>/reviews`.
    pub dir: PathBuf,
    /// A review expires this long after it was submitted, approved or not.
    pub ttl: Duration,
    /// Reviews kept at once (0: programs are never held; a `review` decision stays a dead end).
    pub max_reviews: usize,
    /// The largest program held (its text, inputs and schema, as stored).
    pub max_bytes: usize,
    /// Reviews one client (its owner: a token, a peer uid, an MCP connection) may have waiting at
    /// once, pending or approved: no client fills the store for the others.
    pub max_per_client: usize,
}

impl ReviewSettings {
    pub fn new(
        dir: PathBuf,
        ttl_ms: Option<u64>,
        max_reviews: Option<usize>,
        max_bytes: Option<usize>,
        max_per_client: Option<usize>,
    ) -> anyhow::Result<Self> {
        if ttl_ms == Some(0) {
            bail!("review.ttl_ms must be at least 1");
        }
        if max_bytes == Some(0) {
            bail!("review.max_bytes must be at least 1 (turn reviews off with review.max_reviews = 0)");
        }
        if max_per_client == Some(0) {
            bail!("review.max_reviews_per_client must be at least 1 (turn reviews off with review.max_reviews = 0)");
        }
        let max_reviews = max_reviews.unwrap_or(DEFAULT_MAX_REVIEWS);
        Ok(Self {
            dir,
            ttl: Duration::from_millis(ttl_ms.unwrap_or(DEFAULT_TTL_MS)),
            max_reviews,
            max_bytes: max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
            // A quarter of the store by default: four clients can fill it, not one.
            max_per_client: max_per_client
                .unwrap_or(max_reviews / 4)
                .clamp(1, max_reviews.max(1)),
        })
    }
}

/// Where a review stands. `expired` is not stored: a pending or approved review past its time
/// reads as expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Approved,
    Rejected,
    /// Run once already.
    Used,
    /// The policy changed after it was submitted.
    Void,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
            Status::Used => "used",
            Status::Void => "void",
        }
    }
}

/// One review's state (`<id>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Review {
    pub id: String,
    pub status: Status,
    /// Who may run it: the submitter's owner (`token:<name>`, `uid:<uid>`, an MCP connection).
    pub owner: String,
    /// The submitter as the audit log names it.
    pub submitted_by: String,
    /// `run` (HTTP) or `run_python` (an MCP cell).
    pub endpoint: String,
    /// The registered name of the policy, and the digest of its text when it was submitted.
    pub policy: String,
    pub policy_sha256: String,
    pub program_sha256: String,
    /// The findings that sent it to review.
    pub findings: Value,
    /// The names of the inputs it carries.
    pub inputs: Vec<String>,
    pub bytes: u64,
    pub created_at: String,
    pub created_ms: u64,
    pub expires_at: String,
    pub expires_ms: u64,
    #[serde(default)]
    pub decided_by: Option<String>,
    #[serde(default)]
    pub decided_at: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    /// The status of its run, once run.
    #[serde(default)]
    pub run_status: Option<String>,
}

impl Review {
    /// Its status as clients see it: `expired` for a pending or approved review past its time.
    pub fn state(&self, now_ms: u64) -> &'static str {
        match self.status {
            Status::Pending | Status::Approved if now_ms >= self.expires_ms => "expired",
            status => status.as_str(),
        }
    }

    /// Its status as clients see it now.
    pub fn state_now(&self) -> &'static str {
        self.state(now_ms())
    }

    /// What lists and answers show of it (without the program).
    pub fn describe(&self, now_ms: u64) -> Value {
        json!({
            "id": self.id,
            "status": self.state(now_ms),
            "policy": {"name": self.policy, "sha256": self.policy_sha256},
            "program_sha256": self.program_sha256,
            "submitted_by": self.submitted_by,
            "endpoint": self.endpoint,
            "findings": self.findings,
            "inputs": self.inputs,
            "bytes": self.bytes,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at,
            "reason": self.reason,
            "run_status": self.run_status,
        })
    }

    /// The part a run's answer carries.
    fn brief(&self, now_ms: u64) -> Brief {
        Brief {
            id: self.id.clone(),
            status: self.state(now_ms),
            expires_at: self.expires_at.clone(),
            approved_by: if self.status == Status::Rejected {
                None
            } else {
                self.decided_by.clone()
            },
        }
    }
}

/// A review as a run's answer names it (`POST /v1/run`, `POST /v1/reviews/{id}/run`).
#[derive(Debug, Clone, Serialize)]
pub struct Brief {
    pub id: String,
    /// `pending`, `approved`, `rejected`, `used`, `void` or `expired`.
    pub status: &'static str,
    pub expires_at: String,
    /// Who approved it (`null` while pending and when rejected).
    pub approved_by: Option<String>,
}

/// A run's HTTP answer: the run's record and, for a run the policy sends to review, the review
/// it is held as (`null` when it could not be held; `message` then says why).
#[derive(Debug, Serialize)]
pub struct RunAnswer {
    #[serde(flatten)]
    pub record: RunRecord,
    /// Absent unless the run was held for review or ran as one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Option<Brief>>,
}

impl From<RunRecord> for RunAnswer {
    fn from(record: RunRecord) -> Self {
        Self {
            record,
            review: None,
        }
    }
}

/// The program a review holds (`<id>.program.json`): what its run gets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Program {
    pub code: String,
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    #[serde(default)]
    pub schema: Option<Value>,
    #[serde(default)]
    pub result: Option<warden_gateway::validate::ResultFrom>,
    #[serde(default)]
    pub limits: CallerLimits,
    #[serde(default)]
    pub return_files: bool,
}

impl Program {
    /// A run request's program, when it is small enough to be held (cheap to decide: the copy is
    /// only made for those).
    pub fn of(body: &RunBody, settings: &ReviewSettings) -> Option<Self> {
        let estimate = body.code.len()
            + body
                .inputs
                .iter()
                .map(|i| i.name.len() + i.content_base64.len())
                .sum::<usize>();
        (settings.max_reviews > 0 && estimate <= settings.max_bytes).then(|| Self {
            code: body.code.clone(),
            inputs: body.inputs.clone(),
            schema: body.schema.clone(),
            result: body.result,
            limits: body.limits,
            return_files: body.return_files,
        })
    }
}

/// A program run on an approval: the review's id and who approved it.
#[derive(Debug, Clone)]
pub struct Reviewed {
    pub id: String,
    pub approval: Approval,
}

/// `POST /v1/reviews/{id}/approve` and `/reject`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideBody {
    /// Why (kept with the review, at most 1000 characters).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `POST /v1/reviews/{id}/run`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunReviewBody {
    /// The program the caller means to run: refused (409) unless it is the approved one.
    #[serde(default)]
    pub code: Option<String>,
}

/// A new review, before it has an id.
struct NewReview<'a> {
    caller: &'a Caller,
    endpoint: &'a str,
    policy: &'a str,
    policy_sha256: &'a str,
    findings: Value,
}

/// The review directory, opened for one operation.
struct Store<'a> {
    settings: &'a ReviewSettings,
}

/// Held for the length of one change to the store.
struct Locked {
    _lock: nix::fcntl::Flock<fs::File>,
}

impl<'a> Store<'a> {
    fn new(settings: &'a ReviewSettings) -> Self {
        Self { settings }
    }

    fn lock(&self) -> Result<Locked, ServiceError> {
        let dir = &self.settings.dir;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|err| store_error(&format!("cannot create {}: {err}", dir.display())))?;
        let path = dir.join("lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|err| store_error(&format!("cannot open {}: {err}", path.display())))?;
        let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(
            |(_, errno)| store_error(&format!("cannot lock {}: {errno}", path.display())),
        )?;
        Ok(Locked { _lock: lock })
    }

    fn state_path(&self, id: &str) -> PathBuf {
        self.settings.dir.join(format!("{id}.json"))
    }

    fn program_path(&self, id: &str) -> PathBuf {
        self.settings.dir.join(format!("{id}.program.json"))
    }

    /// One review's state; `None` when there is none (or the id is not one warden makes).
    fn load(&self, id: &str) -> Option<Review> {
        if !valid_id(id) {
            return None;
        }
        let text = read_capped(&self.state_path(id), 1 << 20)?;
        serde_json::from_slice::<Review>(&text)
            .ok()
            .filter(|review| review.id == id)
    }

    fn program(&self, id: &str) -> Result<Program, ServiceError> {
        let cap = u64::try_from(self.settings.max_bytes)
            .unwrap_or(u64::MAX)
            .saturating_mul(2)
            .saturating_add(4096);
        let bytes = read_capped(&self.program_path(id), cap)
            .ok_or_else(|| store_error(&format!("the program of review {id} is missing")))?;
        serde_json::from_slice(&bytes)
            .map_err(|err| store_error(&format!("the program of review {id} is unreadable: {err}")))
    }

    /// Every review, oldest first.
    fn all(&self) -> Vec<Review> {
        let Ok(entries) = fs::read_dir(&self.settings.dir) else {
            return Vec::new();
        };
        let mut reviews: Vec<Review> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let id = name.strip_suffix(".json")?;
                self.load(id)
            })
            .collect();
        reviews.sort_by_key(|review| (review.created_ms, review.id.clone()));
        reviews
    }

    fn save(&self, review: &Review) -> Result<(), ServiceError> {
        let bytes = serde_json::to_vec(review)
            .map_err(|err| store_error(&format!("cannot encode review: {err}")))?;
        write_whole(&self.state_path(&review.id), &bytes)
    }

    fn remove(&self, id: &str) {
        let _ = fs::remove_file(self.state_path(id));
        let _ = fs::remove_file(self.program_path(id));
    }

    /// Removes the reviews that ended or expired more than a TTL ago (they stay visible that long).
    fn sweep(&self, now_ms: u64) {
        let ttl = millis(self.settings.ttl);
        for review in self.all() {
            if review.expires_ms.saturating_add(ttl) <= now_ms {
                self.remove(&review.id);
            }
        }
    }
}

/// The answer to a run of a review that is not approved (409), by its state.
fn conflict(state: &str, id: &str) -> ServiceError {
    let (code, message) = match state {
        "pending" => (
            "review_pending",
            format!("review {id} awaits a person's approval; nothing ran"),
        ),
        "approved" => (
            "review_approved",
            format!("review {id} is approved already"),
        ),
        "rejected" => (
            "review_rejected",
            format!("review {id} was rejected; it will not run"),
        ),
        "used" => (
            "review_used",
            format!("review {id} has run once already; an approval is good for one run"),
        ),
        "void" => (
            "review_void",
            format!(
                "review {id} is void: the policy changed since it was submitted; submit the \
                 program again"
            ),
        ),
        _ => (
            "review_expired",
            format!("review {id} has expired; submit the program again"),
        ),
    };
    ServiceError::Conflict(code, message)
}

/// The first [`MAX_FINDINGS`] findings, the review-sending ones first.
fn capped_findings(findings: Value) -> Value {
    match findings {
        Value::Array(mut list) if list.len() > MAX_FINDINGS => {
            list.sort_by_key(|f| f.get("action").and_then(Value::as_str) != Some("review"));
            list.truncate(MAX_FINDINGS);
            Value::Array(list)
        }
        other => other,
    }
}

fn no_review(id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no review {:?} for this client (it never existed, belongs to another client, or has \
         been removed)",
        id.chars().take(64).collect::<String>()
    ))
}

fn too_large(settings: &ReviewSettings) -> ServiceError {
    ServiceError::TooLarge(format!(
        "the program and its inputs are over the {} bytes a review may hold (review.max_bytes)",
        settings.max_bytes
    ))
}

fn store_error(message: &str) -> ServiceError {
    ServiceError::Internal(format!("review store: {message}"))
}

/// Ids are 32 lowercase hex digits: nothing else names a file in the store.
fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A review id: 128 random bits, hex. Fails closed when the kernel gives no randomness.
fn new_id() -> Result<String, ServiceError> {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|err| store_error(&format!("no randomness for an id: {err}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes a file whole (a temporary file, then rename), mode 0600.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), ServiceError> {
    let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
    let written = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| fs::rename(&temporary, path));
    written.map_err(|err| {
        let _ = fs::remove_file(&temporary);
        store_error(&format!("cannot write {}: {err}", path.display()))
    })
}

/// A regular file's bytes, at most `cap` of them (`None` when missing, not regular or larger).
fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > cap {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= cap).then_some(bytes)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Milliseconds since the epoch as RFC 3339, UTC, milliseconds.
fn rfc3339(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn settings_have_defaults_and_refuse_zero() {
        let settings = ReviewSettings::new(PathBuf::from("/x"), None, None, None, None).unwrap();
        assert_eq!(settings.ttl, Duration::from_secs(3600));
        assert_eq!(settings.max_reviews, 64);
        assert_eq!(settings.max_bytes, 1 << 20);
        assert!(ReviewSettings::new(PathBuf::from("/x"), Some(0), None, None, None).is_err());
        assert!(ReviewSettings::new(PathBuf::from("/x"), None, None, Some(0), None).is_err());
        let off = ReviewSettings::new(PathBuf::from("/x"), None, Some(0), None, None).unwrap();
        assert_eq!(off.max_reviews, 0);
        // A client's share: a quarter of the store by default, never more than the store.
        assert_eq!(settings.max_per_client, 16);
        assert!(ReviewSettings::new(PathBuf::from("/x"), None, None, None, Some(0)).is_err());
        let small = ReviewSettings::new(PathBuf::from("/x"), None, Some(2), None, Some(5)).unwrap();
        assert_eq!(small.max_per_client, 2);
        let tiny = ReviewSettings::new(PathBuf::from("/x"), None, Some(3), None, None).unwrap();
        assert_eq!(tiny.max_per_client, 1);
    }

    #[test]
    fn a_review_keeps_at_most_its_cap_of_findings_review_ones_first() {
        let mut many: Vec<Value> = (0..150)
            .map(|i| json!({"rule": i, "action": "warn"}))
            .collect();
        many.push(json!({"rule": "DYN403", "action": "review"}));
        let kept = capped_findings(Value::Array(many));
        let kept = kept.as_array().unwrap();
        assert_eq!(kept.len(), MAX_FINDINGS);
        assert_eq!(kept[0]["rule"], "DYN403");
        assert_eq!(capped_findings(json!([1, 2])), json!([1, 2]));
    }

    #[test]
    fn only_warden_ids_name_files() {
        assert!(valid_id(&new_id().unwrap()));
        for bad in [
            "",
            "../lock",
            "lock",
            &"A".repeat(32),
            &"a".repeat(33),
            "0123456789abcdef0123456789abcde/",
        ] {
            assert!(!valid_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn expiry_shows_in_the_state() {
        let review = Review {
            id: "a".repeat(32),
            status: Status::Approved,
            owner: "uid:1".to_owned(),
            submitted_by: "uid:1 pid:2".to_owned(),
            endpoint: "run".to_owned(),
            policy: "p".to_owned(),
            policy_sha256: String::new(),
            program_sha256: String::new(),
            findings: Value::Null,
            inputs: Vec::new(),
            bytes: 0,
            created_at: rfc3339(0),
            created_ms: 0,
            expires_at: rfc3339(1000),
            expires_ms: 1000,
            decided_by: None,
            decided_at: None,
            reason: None,
            run_status: None,
        };
        assert_eq!(review.state(999), "approved");
        assert_eq!(review.state(1000), "expired");
        assert_eq!(review.created_at, "1970-01-01T00:00:00.000Z");
        let used = Review {
            status: Status::Used,
            ..review
        };
        assert_eq!(used.state(5000), "used");
    }
}
