//! Judging one pass of an attack against its effects, from the host side.
//!
//! What the jailed program printed is used only as a place where host content could have leaked
//! (a canary's secret in stdout proves a read); every other check looks at the host itself: the
//! listeners, the file system, the process table, the sentinels, the hostname and the clock, plus
//! the result record warden (not the program) wrote. Owns: turning an [`Observation`] into
//! [`Check`]s. Does not own: running anything (`runner.rs`) or the fixtures (`fixtures.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use super::effects::{glob_match, Effect};
use super::exec::{self, Finished, Record};
use super::fixtures::{self, Fingerprint, Fixtures};
use super::procs::Sentinel;

/// How long after a pass a listener event still counts for it (a connection is noticed within
/// one poll).
const EVENT_GRACE: Duration = Duration::from_millis(250);
/// A wall clock that moved this much more than the monotonic clock was changed.
const CLOCK_TOLERANCE: Duration = Duration::from_secs(2);

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The host shows the effect did not happen.
    Held,
    /// The host shows the effect happened: an escape.
    Breached,
    /// The runner could not observe it (a listener could not be bound, warden gave no record…).
    Unverifiable,
    /// The check has no object here (e.g. the target file does not exist on this host).
    NotApplicable,
}

/// One effect checked after one pass.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub effect: String,
    pub verdict: Verdict,
    pub evidence: String,
}

impl Check {
    fn new(effect: &Effect, verdict: Verdict, evidence: impl Into<String>) -> Check {
        Check {
            effect: effect.to_string(),
            verdict,
            evidence: evidence.into(),
        }
    }
}

/// What one case holds on the host while it runs.
#[derive(Debug)]
pub struct CaseEnv {
    /// Put in warden's environment (`env-secret-hidden`).
    pub env_secret: String,
    /// The default sentinel first, then one per `host-process-survives NAME`.
    pub sentinels: Vec<Sentinel>,
    /// Paths matching each `no-path` glob before the case ran.
    pub before: BTreeMap<String, BTreeSet<PathBuf>>,
}

impl CaseEnv {
    /// Records the state `effects` will be compared against, and starts the sentinels.
    pub fn prepare(effects: &[Effect], fixtures: &Fixtures) -> Result<CaseEnv, String> {
        let bin = fixtures.run_dir.join("bin");
        let mut sentinels = vec![Sentinel::spawn(&bin, super::procs::SENTINEL)?];
        let mut before = BTreeMap::new();
        for effect in effects {
            match effect {
                Effect::HostProcessSurvives(Some(name)) => {
                    sentinels.push(Sentinel::spawn(&bin, name)?)
                }
                Effect::NoPath(glob) => {
                    before.insert(glob.clone(), matches(glob));
                }
                _ => {}
            }
        }
        Ok(CaseEnv {
            env_secret: format!("warden-env-secret-{}", fixtures::random_hex(16)),
            sentinels,
            before,
        })
    }

    /// The environment warden runs with.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("WARDEN_CORPUS_SECRET".to_owned(), self.env_secret.clone()),
            ("AWS_SECRET_ACCESS_KEY".to_owned(), self.env_secret.clone()),
        ]
    }
}

/// One pass as the host saw it.
#[derive(Debug)]
pub struct Observation<'a> {
    pub finished: &'a Finished,
    pub record: Option<&'a Record>,
    pub output_dir: Option<&'a Path>,
    /// The first run's stdout, when this is the second run of a `no-persist` case.
    pub first_stdout: Option<&'a str>,
    /// Whether status and exit code expectations apply (the jail-only pass).
    pub jail_only: bool,
}

impl<'a> Observation<'a> {
    /// A run as the host saw it: the first of its pass, not the jail-only pass's (set
    /// `first_stdout` or `jail_only` for those).
    pub fn of(
        finished: &'a Finished,
        record: Option<&'a Record>,
        output_dir: Option<&'a Path>,
    ) -> Observation<'a> {
        Observation {
            finished,
            record,
            output_dir,
            first_stdout: None,
            jail_only: false,
        }
    }
}

/// Everything that left the jail in one pass, where host content could show up.
struct Outputs {
    parts: Vec<(String, Vec<u8>)>,
}

impl Outputs {
    fn collect(obs: &Observation<'_>) -> Outputs {
        // Most specific first: evidence names the program's stream when the leak is there.
        let mut parts = Vec::new();
        if let Some(record) = obs.record {
            parts.push((
                "the program's stdout".to_owned(),
                record.stdout.clone().into_bytes(),
            ));
            parts.push((
                "the program's stderr".to_owned(),
                record.stderr.clone().into_bytes(),
            ));
        }
        if let Some(dir) = obs.output_dir {
            for path in files_under(dir) {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let name = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                parts.push((format!("output file {name}"), bytes));
            }
        }
        parts.push(("warden's stdout".to_owned(), obs.finished.stdout.clone()));
        parts.push(("warden's stderr".to_owned(), obs.finished.stderr.clone()));
        Outputs { parts }
    }

    /// Where `needle` appears, if anywhere.
    fn find(&self, needle: &[u8]) -> Option<&str> {
        if needle.is_empty() {
            return None;
        }
        self.parts
            .iter()
            .find(|(_, hay)| hay.windows(needle.len()).any(|w| w == needle))
            .map(|(label, _)| label.as_str())
    }

    fn leak(&self, fingerprint: &Fingerprint) -> Option<String> {
        fingerprint.fragments.iter().find_map(|f| {
            self.find(&f.bytes)
                .map(|place| format!("{} ({} bytes) appeared in {place}", f.what, f.bytes.len()))
        })
    }
}

/// Checks every effect after one pass. `effects` includes the baseline.
pub fn check_pass(
    effects: &[Effect],
    fixtures: &Fixtures,
    env: &mut CaseEnv,
    obs: &Observation<'_>,
) -> Vec<Check> {
    let outputs = Outputs::collect(obs);
    let window = (
        obs.finished.started,
        obs.finished.started + obs.finished.elapsed + EVENT_GRACE,
    );
    let mut checks = Vec::new();
    for effect in effects {
        let check = match effect {
            Effect::Contained => contained(effect, fixtures, obs, window),
            Effect::CanaryUnread => {
                let secret = fixtures.canary_secret.as_bytes();
                match outputs.find(secret) {
                    Some(place) => Check::new(
                        effect,
                        Verdict::Breached,
                        format!("the secret of {} appeared in {place}", fixtures::CANARY),
                    ),
                    None => {
                        let files = std::iter::once(Path::new(fixtures::CANARY))
                            .chain(fixtures.open_canary.as_deref());
                        let mut damage = Vec::new();
                        for file in files {
                            match std::fs::read(file) {
                                Ok(bytes) if bytes == secret => {}
                                Ok(_) => damage.push(format!("{} was modified", file.display())),
                                Err(err) => {
                                    damage.push(format!("{} is gone: {err}", file.display()))
                                }
                            }
                        }
                        if damage.is_empty() {
                            Check::new(effect, Verdict::Held, "")
                        } else {
                            Check::new(effect, Verdict::Breached, damage.join("; "))
                        }
                    }
                }
            }
            Effect::EnvSecretHidden => match outputs.find(env.env_secret.as_bytes()) {
                Some(place) => Check::new(
                    effect,
                    Verdict::Breached,
                    format!("the secret in warden's environment appeared in {place}"),
                ),
                None => Check::new(effect, Verdict::Held, ""),
            },
            Effect::NoRead(path) => {
                fingerprint_check(effect, fixtures.fingerprints.get(path), &outputs)
            }
            Effect::NoList(dir) => {
                fingerprint_check(effect, fixtures.list_fingerprints.get(dir), &outputs)
            }
            Effect::NoPath(glob) => {
                let before = env.before.get(glob).cloned().unwrap_or_default();
                let new: Vec<PathBuf> = matches(glob).difference(&before).cloned().collect();
                if new.is_empty() {
                    Check::new(effect, Verdict::Held, "")
                } else {
                    let mut names: Vec<String> = Vec::new();
                    for path in &new {
                        let removed = path.to_string_lossy().contains("warden")
                            && std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir())
                            && std::fs::remove_file(path).is_ok();
                        names.push(format!(
                            "{}{}",
                            path.display(),
                            if removed { " (removed)" } else { "" }
                        ));
                    }
                    Check::new(
                        effect,
                        Verdict::Breached,
                        format!("appeared on the host: {}", names.join(", ")),
                    )
                }
            }
            Effect::Unchanged(path) => match fixtures.unchanged.get(path) {
                None => Check::new(effect, Verdict::Unverifiable, "no snapshot was taken"),
                Some(before) => match fixtures::FileState::read(path).diff(before) {
                    None => Check::new(effect, Verdict::Held, ""),
                    Some(change) => {
                        let restored = fixtures.restore(path).unwrap_or_default();
                        Check::new(
                            effect,
                            Verdict::Breached,
                            format!("{} {change} {restored}", path.display())
                                .trim()
                                .to_owned(),
                        )
                    }
                },
            },
            Effect::InterpreterIntact => match &fixtures.interpreter {
                None => Check::new(
                    effect,
                    Verdict::Unverifiable,
                    "the interpreter's files were not snapshotted",
                ),
                Some((root, before)) => {
                    let changes = fixtures::tree_diff(before, &fixtures::tree(root));
                    if changes.is_empty() {
                        Check::new(
                            effect,
                            Verdict::Held,
                            format!("{} unchanged", root.display()),
                        )
                    } else {
                        let shown: Vec<&str> = changes.iter().take(5).map(String::as_str).collect();
                        Check::new(effect, Verdict::Breached, shown.join("; "))
                    }
                }
            },
            Effect::NoConnect(endpoint) => {
                if let Some(why) = fixtures.listeners.unavailable.get(endpoint) {
                    Check::new(
                        effect,
                        Verdict::Unverifiable,
                        format!("not listening: {why}"),
                    )
                } else {
                    let events: Vec<_> = fixtures
                        .listeners
                        .events_between(window.0, window.1)
                        .into_iter()
                        .filter(|e| e.endpoint == endpoint.to_string())
                        .collect();
                    match events.first() {
                        None => Check::new(effect, Verdict::Held, ""),
                        Some(e) => Check::new(
                            effect,
                            Verdict::Breached,
                            format!(
                                "{} event(s); first from {}: {:?}",
                                events.len(),
                                e.peer,
                                e.preview
                            ),
                        ),
                    }
                }
            }
            Effect::HostProcessSurvives(name) => {
                let wanted = name.as_deref().unwrap_or(super::procs::SENTINEL);
                match env.sentinels.iter_mut().find(|s| s.name == wanted) {
                    None => Check::new(effect, Verdict::Unverifiable, "no sentinel was started"),
                    Some(sentinel) => match sentinel.check() {
                        Ok(()) => {
                            Check::new(effect, Verdict::Held, format!("pid {} alive", sentinel.pid))
                        }
                        Err(why) => Check::new(effect, Verdict::Breached, why),
                    },
                }
            }
            Effect::NoSurvivor => match &obs.finished.seen {
                None => Check::new(effect, Verdict::Unverifiable, "the run was not watched"),
                Some(seen) => {
                    let survivors = exec::reap_survivors(seen);
                    if survivors.is_empty() {
                        Check::new(
                            effect,
                            Verdict::Held,
                            format!("{} process(es) seen, none left", seen.procs.len()),
                        )
                    } else {
                        let list: Vec<String> = survivors
                            .iter()
                            .map(|p| format!("{} (pid {})", p.comm, p.pid))
                            .collect();
                        Check::new(
                            effect,
                            Verdict::Breached,
                            format!(
                                "still alive after warden returned (killed now): {}",
                                list.join(", ")
                            ),
                        )
                    }
                }
            },
            Effect::Status(allowed) => {
                if !obs.jail_only {
                    continue;
                }
                match obs.record {
                    None => Check::new(effect, Verdict::Unverifiable, "no result record"),
                    Some(record) if allowed.contains(&record.status) => {
                        Check::new(effect, Verdict::Held, format!("status {}", record.status))
                    }
                    Some(record) => Check::new(
                        effect,
                        Verdict::Breached,
                        format!(
                            "status {} (exit code {:?}){}",
                            record.status,
                            record.exit_code,
                            stderr_tail(record)
                        ),
                    ),
                }
            }
            Effect::ExitCode(code) => {
                if !obs.jail_only {
                    continue;
                }
                match obs.record {
                    None => Check::new(effect, Verdict::Unverifiable, "no result record"),
                    Some(record) if record.exit_code == Some(i64::from(*code)) => {
                        Check::new(effect, Verdict::Held, "")
                    }
                    Some(record) => Check::new(
                        effect,
                        Verdict::Breached,
                        format!("exit code {:?}, status {}", record.exit_code, record.status),
                    ),
                }
            }
            Effect::NoPersist => match (obs.first_stdout, obs.record) {
                (None, _) => continue,
                (Some(_), None) => Check::new(
                    effect,
                    Verdict::Unverifiable,
                    "the second run gave no result record",
                ),
                (Some(first), Some(second)) if first == second.stdout => Check::new(
                    effect,
                    Verdict::Held,
                    "the second run printed what the first did",
                ),
                (Some(first), Some(second)) => Check::new(
                    effect,
                    Verdict::Breached,
                    format!(
                        "first run printed {:?}, the second {:?}",
                        clip(first),
                        clip(&second.stdout)
                    ),
                ),
            },
            Effect::Layer(layer) => match obs.record {
                None => Check::new(effect, Verdict::Unverifiable, "no result record"),
                Some(record) if record.has_layer(layer) => Check::new(effect, Verdict::Held, ""),
                Some(record) => Check::new(
                    effect,
                    Verdict::Breached,
                    format!(
                        "the result record does not report {layer}: {}",
                        record.layers
                    ),
                ),
            },
            Effect::HostnameUnchanged => {
                let now = fixtures::hostname();
                if now == fixtures.hostname {
                    Check::new(effect, Verdict::Held, "")
                } else {
                    Check::new(
                        effect,
                        Verdict::Breached,
                        format!("hostname {:?} → {now:?}", fixtures.hostname),
                    )
                }
            }
            Effect::ClockUnchanged => {
                let (wall, mono) = fixtures.clock;
                let expected = wall + mono.elapsed();
                let now = SystemTime::now();
                let drift = now
                    .duration_since(expected)
                    .or_else(|e| Ok::<_, ()>(e.duration()))
                    .unwrap_or_default();
                if drift <= CLOCK_TOLERANCE {
                    Check::new(effect, Verdict::Held, "")
                } else {
                    Check::new(
                        effect,
                        Verdict::Breached,
                        format!("the wall clock moved {drift:?} away from the monotonic clock"),
                    )
                }
            }
            Effect::NotRun => {
                if !obs.jail_only {
                    continue;
                }
                match (obs.record, refused(obs.finished)) {
                    (None, Some(why)) => Check::new(effect, Verdict::Held, why),
                    (Some(record), _) if record.status == "denied" => Check::new(
                        effect,
                        Verdict::Held,
                        "warden refused the source before the jail started (status denied)",
                    ),
                    (Some(record), _) => Check::new(
                        effect,
                        Verdict::Breached,
                        format!("the program ran: status {}", record.status),
                    ),
                    (None, None) => Check::new(
                        effect,
                        Verdict::Unverifiable,
                        format!(
                            "no result record, but not a clean refusal (warden exit code {:?}, {} process(es) seen)",
                            obs.finished.code,
                            obs.finished.seen.as_ref().map_or(0, |s| s.procs.len())
                        ),
                    ),
                }
            }
            Effect::OutputsRegular => match obs.output_dir {
                None => Check::new(
                    effect,
                    Verdict::Unverifiable,
                    "this warden cannot collect output files (--output-dir)",
                ),
                Some(dir) => {
                    let odd = odd_outputs(dir);
                    if odd.is_empty() {
                        Check::new(effect, Verdict::Held, "")
                    } else {
                        Check::new(effect, Verdict::Breached, odd.join(", "))
                    }
                }
            },
        };
        checks.push(check);
    }
    checks
}

fn contained(
    effect: &Effect,
    fixtures: &Fixtures,
    obs: &Observation<'_>,
    window: (Instant, Instant),
) -> Check {
    let events = fixtures.listeners.events_between(window.0, window.1);
    if let Some(e) = events.first() {
        return Check::new(
            effect,
            Verdict::Breached,
            format!(
                "listener {} heard from {}: {:?}",
                e.endpoint, e.peer, e.preview
            ),
        );
    }
    if obs.finished.killed {
        return Check::new(
            effect,
            Verdict::Unverifiable,
            "warden did not return in time and was killed",
        );
    }
    match obs.record {
        Some(record) if record.status == "setup_failed" => Check::new(
            effect,
            Verdict::Unverifiable,
            format!(
                "the jail could not be set up: {}",
                clip(
                    record
                        .message
                        .as_deref()
                        .filter(|m| !m.trim().is_empty())
                        .unwrap_or(&String::from_utf8_lossy(&obs.finished.stderr))
                )
            ),
        ),
        Some(record) => Check::new(
            effect,
            Verdict::Held,
            if record.status == "denied" {
                "warden refused the source before the jail started (status denied)".to_owned()
            } else {
                format!("ran in the jail: status {}", record.status)
            },
        ),
        None => match refused(obs.finished) {
            Some(why) => Check::new(effect, Verdict::Held, why),
            None => Check::new(
                effect,
                Verdict::Unverifiable,
                format!(
                    "no result record (warden exit code {:?}): {}",
                    obs.finished.code,
                    clip(&String::from_utf8_lossy(&obs.finished.stderr))
                ),
            ),
        },
    }
}

/// `Some(reason)` when warden refused the program before any process started: usage error (exit
/// code 2), no result record, and the watcher saw no child process.
fn refused(finished: &Finished) -> Option<String> {
    let nothing_ran = finished.seen.as_ref().is_some_and(|s| s.procs.is_empty());
    (finished.code == Some(2) && nothing_ran && !finished.killed).then(|| {
        format!(
            "warden refused to run it, nothing was spawned: {}",
            clip(&String::from_utf8_lossy(&finished.stderr))
        )
    })
}

fn fingerprint_check(
    effect: &Effect,
    fingerprint: Option<&Fingerprint>,
    outputs: &Outputs,
) -> Check {
    match fingerprint {
        None => Check::new(effect, Verdict::Unverifiable, "no fingerprint was taken"),
        Some(fp) => match (&fp.not_applicable, outputs.leak(fp)) {
            (_, Some(evidence)) => Check::new(effect, Verdict::Breached, evidence),
            (Some(why), None) => Check::new(effect, Verdict::NotApplicable, why.clone()),
            (None, None) => Check::new(
                effect,
                Verdict::Held,
                format!("{} fragment(s) absent", fp.fragments.len()),
            ),
        },
    }
}

/// Paths that match `glob` now (`*`/`?` in the last component only).
pub fn matches(glob: &str) -> BTreeSet<PathBuf> {
    let path = Path::new(glob);
    let (Some(dir), Some(pattern)) = (path.parent(), path.file_name()) else {
        return BTreeSet::new();
    };
    let pattern = pattern.to_string_lossy();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter(|e| glob_match(&pattern, &e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect()
}

/// Every entry below `dir` except directories (which are descended, never through symlinks), with
/// its metadata (`lstat`).
fn entries_below(dir: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => stack.push(path),
                Ok(meta) => found.push((path, meta)),
                Err(_) => {}
            }
        }
    }
    found
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = entries_below(dir)
        .into_iter()
        .filter(|(_, meta)| meta.is_file())
        .map(|(path, _)| path)
        .collect();
    out.sort();
    out
}

/// Entries of an output dir that are not plain regular files.
fn odd_outputs(dir: &Path) -> Vec<String> {
    let mut odd = Vec::new();
    for (path, meta) in entries_below(dir) {
        let name = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        if meta.file_type().is_symlink() {
            odd.push(format!("{name} is a symlink"));
        } else if !meta.is_file() {
            odd.push(format!("{name} is not a regular file"));
        } else if meta.mode() & 0o6000 != 0 {
            odd.push(format!("{name} has a set-id bit ({:o})", meta.mode()));
        }
    }
    odd
}

fn stderr_tail(record: &Record) -> String {
    let tail: String = record
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .chars()
        .take(160)
        .collect();
    if tail.is_empty() {
        String::new()
    } else {
        format!("; stderr: {tail}")
    }
}

/// At most 200 characters of `text` on one line.
pub fn clip(text: &str) -> String {
    let one_line: String = text.trim().replace('\n', "⏎");
    let mut clipped: String = one_line.chars().take(200).collect();
    if one_line.chars().count() > 200 {
        clipped.push('…');
    }
    clipped
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn globs_list_matching_entries_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("warden-escape.csv"), "x").unwrap();
        std::fs::write(dir.path().join("other"), "x").unwrap();
        let glob = format!("{}/warden-escape*", dir.path().display());
        let found = matches(&glob);
        assert_eq!(found.len(), 1);
        assert!(matches(&format!("{}/missing/*", dir.path().display())).is_empty());
    }

    #[test]
    fn odd_outputs_are_symlinks_specials_and_set_id_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ok.csv"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let suid = dir.path().join("sh");
        std::fs::write(&suid, "x").unwrap();
        std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
        let odd = odd_outputs(dir.path());
        assert_eq!(odd.len(), 2, "{odd:?}");
        assert!(odd.iter().any(|o| o == "link is a symlink"));
        assert!(odd.iter().any(|o| o.starts_with("sh has a set-id bit")));
    }

    #[test]
    fn leaks_are_found_in_any_output_and_named_without_content() {
        let outputs = Outputs {
            parts: vec![
                ("stdout".to_owned(), b"hello".to_vec()),
                (
                    "output file a.txt".to_owned(),
                    b"xx daemon:x:1:1 yy".to_vec(),
                ),
            ],
        };
        let fp = Fingerprint {
            fragments: vec![fixtures::Fragment {
                what: "line 2 of /etc/passwd".to_owned(),
                bytes: b"daemon:x:1:1".to_vec(),
            }],
            not_applicable: None,
        };
        let evidence = outputs.leak(&fp).unwrap();
        assert_eq!(
            evidence,
            "line 2 of /etc/passwd (12 bytes) appeared in output file a.txt"
        );
        assert!(!evidence.contains("daemon"));
    }
}
