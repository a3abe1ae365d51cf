//! Running a corpus: the policy pass for every case at once, then each case's runtime-only,
//! jail-only and full passes on a pool of workers, with the host-side checks around them — of
//! these passes, those `--passes` selects.
//!
//! Parallel cases do not interfere: every case has its own environment secret, sentinel processes
//! and output directories; fixtures the host can only have once (fixed ports, `/root/warden-canary`,
//! files that must stay unchanged) are shared, read-only for the cases, and a case that *declares*
//! a shared target (`no-connect E`, `unchanged P`, `no-path G`, `hostname-unchanged`…) holds a
//! lock on it while it runs, so two cases aimed at the same target never overlap and an event on
//! it is charged to the right one. Events on targets a case did not declare are charged to every
//! case running at that moment. Owns: scheduling, the per-case flow and the outcome of each case.
//! Does not own: the checks themselves (`verify.rs`) or the report (`report.rs`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::case::{AttackSpec, BenignSpec, Case, Kind};
use super::effects::{Effect, ESCAPE_GLOBS};
use super::exec::{Record, StaticVerdict, Warden};
use super::fixtures::{Fixtures, Needs, Owner, PROBE_OUTPUT};
use super::header::ExpectStatic;
use super::pass::{Pass, Passes, RunFlags};
use super::pool::{Pool, Program};
use super::report::{CaseResult, CaseStatus, MismatchKind, PassResult};
use super::verify::{self, CaseEnv, Observation, Verdict};

/// How a run is carried out.
#[derive(Debug, Clone)]
pub struct Settings {
    pub warden: Warden,
    /// The passes to make (`--passes`).
    pub passes: Passes,
    pub jobs: usize,
    /// Print a line per finished case on stderr.
    pub progress: bool,
}

/// What a run gives back: one result per case (in the order given), the fixtures' notes, and
/// what the pool pass's server left behind once stopped.
pub type Outcome = (Vec<CaseResult>, Vec<String>, Vec<String>);

/// Runs `cases` and returns their results, the notes and what the pool pass's server left.
pub fn run(cases: &[Case], settings: &Settings) -> Result<Outcome, String> {
    let passes = &settings.passes;
    // Only runs need the host prepared: the policy pass alone judges files.
    let needs = if passes.runs_programs() {
        Needs::of(cases)
    } else {
        Needs::default()
    };
    let owner = settings.warden.run_as.as_ref().map(|user| Owner {
        uid: user.uid,
        gid: user.gid,
    });
    let mut fixtures = Fixtures::create(&needs, owner)?;
    let mut warden = settings.warden.clone();
    if let Some(user) = warden.run_as.as_mut() {
        user.home.clone_from(&fixtures.user_home);
    }
    if passes.contains(Pass::Full) {
        warden.full_pipeline = warden.probe_full_pipeline();
    }
    let warden = &warden;
    let probe = |program: &Path, out: &Path| probe(warden, program, out);
    fixtures.prepare(&needs, &probe)?;
    let verdicts = if passes.contains(Pass::Policy) {
        let files: Vec<&Path> = cases
            .iter()
            .filter(|c| !matches!(c.kind, Kind::Skipped(_)))
            .map(Case::static_file)
            .collect();
        // The policy is judged with its identity index, as `warden check` judges programs once
        // `warden runtime check` has run for the policy and its runtime.
        warden.write_identity_index();
        warden.check(&files)?
    } else {
        BTreeMap::new()
    };
    // The pool pass's server, started once its policy's jails can be made (after the probe).
    let mut server = if passes.contains(Pass::Pool) {
        Some(Pool::start(
            warden,
            &fixtures.run_dir,
            owner,
            settings.jobs,
        )?)
    } else {
        None
    };
    let pool = server.as_ref();

    let queue = Queue::new(schedule(cases).into_iter().map(|index| {
        let keys = match &cases[index].kind {
            // Only what the case declares is held: the baseline and watched effects are every case's.
            Kind::Attack(spec) if passes.runs_programs() => lock_keys(&spec.effects),
            _ => BTreeSet::new(),
        };
        (index, keys)
    }));
    let results: Mutex<BTreeMap<usize, CaseResult>> = Mutex::new(BTreeMap::new());
    let done = Mutex::new(0usize);
    let windows: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..settings.jobs.max(1) {
            scope.spawn(|| loop {
                let Some(next) = queue.take() else { break };
                let index = next.index;
                let case = &cases[index];
                let verdict = verdicts.get(case.static_file()).cloned();
                let start = Instant::now();
                let result = run_case(case, verdict, &fixtures, warden, passes, pool);
                drop(next);
                lock(&windows).push((start, Instant::now()));
                if settings.progress {
                    let mut done = lock(&done);
                    *done += 1;
                    eprintln!(
                        "[{}/{}] {:<8} {} {} ({:.1}s)",
                        *done,
                        cases.len(),
                        result.outcome.as_str(),
                        result.corpus,
                        result.id,
                        result.time_ms as f64 / 1000.0
                    );
                }
                lock(&results).insert(index, result);
            });
        }
    });
    let mut notes = fixtures.notes.clone();
    let windows = windows.into_inner().unwrap_or_else(|p| p.into_inner());
    let grace = Duration::from_millis(500);
    for event in fixtures.listeners.events() {
        if !windows
            .iter()
            .any(|(s, e)| event.at >= *s && event.at <= *e + grace)
        {
            notes.push(format!(
                "listener {} heard from {} while no case ran (another program on this host?): {:?}",
                event.endpoint, event.peer, event.preview
            ));
        }
    }
    if let (true, Err(why)) = (passes.contains(Pass::Full), &warden.full_pipeline) {
        notes.push(format!(
            "the full pipeline (`warden run` with the policy) gives no result record ({why}): \
             attacks had no full pass, benign programs ran with --no-policy after the policy pass \
             allowed them"
        ));
    }
    if passes.contains(Pass::Runtime) && !warden.supports(Pass::Runtime) {
        notes.push(
            "this warden has no runtime hooks (`warden run --help` lists no --no-hooks): \
             the runtime pass was skipped"
                .to_owned(),
        );
    }
    if passes.runs_programs() && !warden.output_dir {
        notes.push(
            "this warden has no `run --output-dir`: output files were not collected or checked"
                .to_owned(),
        );
    }
    let mut left = Vec::new();
    if let Some(server) = server.as_mut() {
        let (sent, warm) = server.counts();
        notes.push(format!(
            "the pool pass sent {sent} request(s) through the warm pool of {} warden serve \
             process(es) (depth {}); {warm} ran in a pooled jail",
            server.len(),
            super::pool::DEPTH
        ));
        left = server.stop();
    }
    drop(server);
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    drop(fixtures);
    Ok((results.into_values().collect(), notes, left))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Long cases first (those expecting a timeout), so the slowest do not end the run alone.
fn schedule(cases: &[Case]) -> Vec<usize> {
    let weight = |case: &Case| match &case.kind {
        Kind::Attack(spec) => {
            let slow = spec.effects.iter().any(|e| match e {
                Effect::Status(s) => s.contains("timeout"),
                Effect::NoPersist => true,
                _ => false,
            });
            if slow {
                0
            } else {
                1
            }
        }
        Kind::Benign(_) | Kind::Harmless => 2,
        Kind::Skipped(_) => 3,
    };
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|i| weight(&cases[*i]));
    order
}

/// Runs the fixtures' jail probe with the policy off and reads what it found: the file it wrote
/// (collected into `out`) or, from a warden that cannot collect files, what it printed.
fn probe(warden: &Warden, program: &Path, out: &Path) -> Result<serde_json::Value, String> {
    let done = warden.run(program, Pass::Jail, Some(out), &[], false)?;
    let record = Record::parse(&done.stdout).ok_or_else(|| {
        format!(
            "no result record: {}",
            verify::clip(&String::from_utf8_lossy(&done.stderr))
        )
    })?;
    let written = std::fs::read_to_string(out.join(PROBE_OUTPUT)).ok();
    if let Some(view) = written.and_then(|text| serde_json::from_str(text.trim()).ok()) {
        return Ok(view);
    }
    if record.status != "ok" {
        return Err(format!(
            "status {}: {}",
            record.status,
            verify::clip(record.message.as_deref().unwrap_or(&record.stderr))
        ));
    }
    serde_json::from_str(record.stdout.trim()).map_err(|err| format!("not JSON: {err}"))
}

/// The cases still to run, each with the named host targets it holds while it runs, and the
/// targets running cases hold. A worker takes the first case (in schedule order) whose targets are
/// all free, so a case waiting for a target (RedCode's 30 cases aimed at one port) never idles a
/// worker while another case could run.
#[derive(Debug, Default)]
struct Queue {
    state: Mutex<QueueState>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct QueueState {
    waiting: VecDeque<(usize, BTreeSet<String>)>,
    held: BTreeSet<String>,
}

/// A case taken from the [`Queue`]; its targets are freed when it is dropped.
#[derive(Debug)]
struct Taken<'a> {
    index: usize,
    keys: BTreeSet<String>,
    queue: &'a Queue,
}

impl Queue {
    fn new(cases: impl IntoIterator<Item = (usize, BTreeSet<String>)>) -> Queue {
        Queue {
            state: Mutex::new(QueueState {
                waiting: cases.into_iter().collect(),
                held: BTreeSet::new(),
            }),
            freed: Condvar::new(),
        }
    }

    /// The next case whose targets are free, now holding them; waits while every waiting case
    /// needs a held target; `None` when no case is left.
    fn take(&self) -> Option<Taken<'_>> {
        let mut state = lock(&self.state);
        loop {
            let QueueState { waiting, held } = &mut *state;
            if waiting.is_empty() {
                return None;
            }
            if let Some(at) = waiting.iter().position(|(_, keys)| keys.is_disjoint(held)) {
                let (index, keys) = waiting.remove(at)?;
                held.extend(keys.iter().cloned());
                return Some(Taken {
                    index,
                    keys,
                    queue: self,
                });
            }
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.queue.state);
        for key in &self.keys {
            state.held.remove(key);
        }
        self.queue.freed.notify_all();
    }
}

/// The shared targets a case declares (the baseline's shared escape globs excepted: every attack
/// has them).
fn lock_keys(effects: &[Effect]) -> BTreeSet<String> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::NoConnect(endpoint) => Some(format!("connect {endpoint}")),
            Effect::Unchanged(path) => Some(format!("file {}", path.display())),
            Effect::NoPath(glob) if !ESCAPE_GLOBS.contains(&glob.as_str()) => {
                Some(format!("path {glob}"))
            }
            Effect::HostnameUnchanged => Some("hostname".to_owned()),
            Effect::ClockUnchanged => Some("clock".to_owned()),
            Effect::InterpreterIntact => Some("interpreter".to_owned()),
            _ => None,
        })
        .collect()
}

fn run_case(
    case: &Case,
    verdict: Option<StaticVerdict>,
    fixtures: &Fixtures,
    warden: &Warden,
    passes: &Passes,
    pool: Option<&Pool>,
) -> CaseResult {
    let started = Instant::now();
    let mut result = CaseResult::new(case);
    result.policy = verdict.clone();
    match &case.kind {
        Kind::Skipped(why) => {
            result.outcome = CaseStatus::Skipped;
            result.notes.push(why.clone());
        }
        Kind::Attack(spec) => attack(
            case,
            spec,
            verdict.as_ref(),
            (fixtures, warden, pool),
            passes,
            &mut result,
        ),
        Kind::Benign(spec) => {
            benign(
                case,
                spec,
                verdict.as_ref(),
                fixtures,
                warden,
                passes,
                &mut result,
            );
            if let (Some(server), true, false) = (pool, spec.run, result.denied_statically) {
                benign_pool(case, spec, server, &mut result);
            }
        }
        Kind::Harmless => harmless(case, fixtures, warden, passes, &mut result),
    }
    result.time_ms = started.elapsed().as_millis() as u64;
    result.finish();
    result
}

/// The pass that runs a benign or harmless program (they run once, in the fullest selected pass):
/// the full pipeline when it is selected and usable, else the runtime layer (with the jail), else
/// the jail alone; `None` when no selected pass runs programs. A program that runs without the
/// policy by design (DS-1000's harness), or any program when the full pipeline gives no record,
/// runs within the full pass with `--no-policy` and the hooks on: it is reported as the runtime
/// pass when that pass is selected, else as the jail pass (as before passes could be chosen).
fn program_pass(
    passes: &Passes,
    warden: &Warden,
    without_policy: bool,
) -> Option<(Pass, RunFlags)> {
    let runtime = passes.contains(Pass::Runtime) && warden.supports(Pass::Runtime);
    let pass = if passes.contains(Pass::Full) {
        if without_policy || warden.full_pipeline.is_err() {
            let reported = if runtime { Pass::Runtime } else { Pass::Jail };
            return Some((reported, RunFlags::NO_POLICY));
        }
        Pass::Full
    } else if runtime {
        Pass::Runtime
    } else if passes.contains(Pass::Jail) {
        Pass::Jail
    } else {
        return None;
    };
    Some((pass, pass.run_flags()?))
}

/// Stores a benign or harmless program's run as the result of `pass`.
fn store(result: &mut CaseResult, pass: Pass, run: PassResult) {
    match pass {
        Pass::Runtime => result.runtime = Some(run),
        Pass::Jail => result.jail = Some(run),
        Pass::Full | Pass::Policy => result.full = Some(run),
        Pass::Pool => result.pool = Some(run),
    }
}

fn output_dir(fixtures: &Fixtures, warden: &Warden, case: &Case, pass: &str) -> Option<PathBuf> {
    warden.output_dir.then(|| {
        fixtures.run_dir.join("out").join(format!(
            "{}-{}-{pass}",
            sanitize(&case.corpus),
            sanitize(&case.id)
        ))
    })
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn static_expectations(
    spec: &AttackSpec,
    verdict: Option<&StaticVerdict>,
    result: &mut CaseResult,
) {
    let Some(verdict) = verdict else {
        result.mismatch(
            MismatchKind::Error,
            "policy",
            "warden check gave no verdict for this file".to_owned(),
        );
        return;
    };
    result.denied_statically = verdict.decision != "allow";
    let Some(expected) = spec.expect_static else {
        return;
    };
    let got_deny = verdict.decision != "allow";
    if got_deny != (expected == ExpectStatic::Deny) {
        result.mismatch(
            MismatchKind::Static,
            "policy",
            format!(
                "expected the policy to {} it, got `{}` (rules: {})",
                expected.as_str(),
                verdict.decision,
                list_or_none(&verdict.rules)
            ),
        );
        return;
    }
    if spec.expect_rules.is_empty() {
        return;
    }
    let missing: Vec<&String> = spec
        .expect_rules
        .iter()
        .filter(|r| !verdict.rules.contains(r))
        .collect();
    if missing.len() == spec.expect_rules.len() {
        result.mismatch(
            MismatchKind::Static,
            "policy",
            format!(
                "none of the expected rules {} was reported (got: {})",
                spec.expect_rules.join(" "),
                list_or_none(&verdict.rules)
            ),
        );
    } else if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        result.notes.push(format!(
            "expected rule(s) {} not reported (others were)",
            names.join(" ")
        ));
    }
}

fn list_or_none(rules: &[String]) -> String {
    if rules.is_empty() {
        "none".to_owned()
    } else {
        rules.join(" ")
    }
}

/// One attack: the static expectations, then its runs (its shared targets are held by the
/// [`Queue`] while it runs).
fn attack(
    case: &Case,
    spec: &AttackSpec,
    verdict: Option<&StaticVerdict>,
    (fixtures, warden, pool): (&Fixtures, &Warden, Option<&Pool>),
    passes: &Passes,
    result: &mut CaseResult,
) {
    if passes.contains(Pass::Policy) {
        static_expectations(spec, verdict, result);
    }
    if !passes.runs_programs() {
        return;
    }
    let effects = spec.all_effects();
    let env = CaseEnv::prepare(&effects, fixtures);
    match env {
        Err(err) => result.mismatch(
            MismatchKind::Error,
            "jail",
            format!("cannot prepare the host: {err}"),
        ),
        Ok(mut env) => {
            if passes.contains(Pass::Jail) {
                jail_pass(case, &effects, fixtures, warden, &mut env, result);
            }
            let mut ran_in_full = None;
            if passes.contains(Pass::Full) && warden.full_pipeline.is_ok() {
                ran_in_full = full_pass(case, &effects, fixtures, warden, &mut env, result);
            }
            if passes.contains(Pass::Runtime) && warden.supports(Pass::Runtime) {
                let run = Run {
                    effects: &effects,
                    fixtures,
                    warden,
                };
                runtime_pass(case, spec, &run, &mut env, ran_in_full, result);
            }
            if let Some(server) = pool {
                let run = Run {
                    effects: &effects,
                    fixtures,
                    warden,
                };
                pool_pass(case, spec, &run, server, &mut env, result);
            }
        }
    }
}

/// The pool pass: the attack sent to the runner's `warden serve` (warm pool on, static layer
/// off), judged from the host side as the runtime pass judges `warden run --no-policy` — an
/// effect that happened is an escape — with the server's environment secret as the case's. The
/// record must say `"warm": true`; a cold run fails the case unless the record says why (the
/// static layer's source rules refused the program: nothing ran). A `no-persist` case runs twice,
/// both warm, and the second must print what the first did. A case's `expect-runtime` holds here
/// too: the runtime layer judges a pooled program as a cold one.
fn pool_pass(
    case: &Case,
    spec: &AttackSpec,
    run: &Run<'_>,
    server: &Pool,
    env: &mut CaseEnv,
    result: &mut CaseResult,
) {
    let Ok(bytes) = std::fs::read(&case.file) else {
        result.mismatch(
            MismatchKind::Error,
            "pool",
            format!("cannot read {}", case.file.display()),
        );
        return;
    };
    let Ok(text) = String::from_utf8(bytes.clone()) else {
        // The API carries a program as a JSON string: these bytes cannot be sent unchanged.
        result.notes.push(
            "not sent through the pool: the file is not UTF-8, and `POST /v1/run` takes the \
             program as a JSON string"
                .to_owned(),
        );
        return;
    };
    let cells = super::session::cells(&bytes);
    let program = match &cells {
        Some(cells) => Program::Session(cells),
        None => Program::Run(&text),
    };
    let own_secret = std::mem::replace(&mut env.env_secret, server.env_secret.clone());
    let out = output_dir(run.fixtures, run.warden, case, "pool");
    let first = server.run(program, out.as_deref());
    let mut checks = verify::check_pass(
        run.effects,
        run.fixtures,
        env,
        &Observation {
            finished: &first.finished,
            record: first.record.as_ref(),
            output_dir: first.output_dir.as_deref(),
            first_stdout: None,
            jail_only: false,
        },
    );
    let mut warm = vec![(first.warm, first.record.clone())];
    result
        .notes
        .extend(first.notes.iter().map(|n| format!("pool: {n}")));
    if run.effects.contains(&Effect::NoPersist) {
        let out2 = output_dir(run.fixtures, run.warden, case, "pool-again");
        let second = server.run(program, out2.as_deref());
        let printed = first
            .record
            .as_ref()
            .map(|r| r.stdout.as_str())
            .unwrap_or_default();
        let again = verify::check_pass(
            run.effects,
            run.fixtures,
            env,
            &Observation {
                finished: &second.finished,
                record: second.record.as_ref(),
                output_dir: second.output_dir.as_deref(),
                first_stdout: Some(printed),
                jail_only: false,
            },
        );
        merge(&mut checks, again);
        result
            .notes
            .extend(second.notes.iter().map(|n| format!("pool: {n}")));
        warm.push((second.warm, second.record.clone()));
    }
    env.env_secret = own_secret;
    report_checks(&checks, "pool", result);
    result.contained_in_pool = Some(all_held(&checks));
    for (ran_warm, record) in &warm {
        if *ran_warm == Some(true) {
            continue;
        }
        match cold_reason(record.as_ref()) {
            Some(why) => result.notes.push(format!("pool: ran cold: {why}")),
            None => result.mismatch(
                MismatchKind::Cold,
                "pool",
                format!(
                    "the program did not run in a pooled jail ({}), and the record does not say why",
                    match (ran_warm, record) {
                        (Some(false), Some(r)) => format!("\"warm\": false, status {}", r.status),
                        (None, Some(r)) => format!("no `warm` in the record, status {}", r.status),
                        _ => "no result record".to_owned(),
                    }
                ),
            ),
        }
    }
    let mut pass = PassResult::new(&first.finished, first.record.as_ref(), checks);
    pass.warm = Some(warm.iter().all(|(w, _)| *w == Some(true)));
    if let Some(expected) = &spec.expect_runtime {
        if pass.runtime_rule() != Some(expected.as_str()) {
            result.mismatch(
                MismatchKind::Runtime,
                "pool",
                format!(
                    "expected the runtime layer to stop it with {expected} in a pooled jail, {}",
                    runtime_outcome(first.record.as_ref())
                ),
            );
        }
    }
    result.pool = Some(pass);
}

/// Why a record of the pool pass may say it ran cold: the static layer's source rules (which the
/// pass cannot turn off) refused the program, so no jail was claimed and nothing ran.
fn cold_reason(record: Option<&Record>) -> Option<String> {
    let record = record?;
    let source_rules: Vec<String> = record
        .rules()
        .into_iter()
        .filter(|r| r.starts_with("SYN"))
        .collect();
    (record.status == "denied" && !source_rules.is_empty()).then(|| {
        format!(
            "refused by the static layer's source rules ({}), which cannot be turned off: \
             nothing ran",
            source_rules.join(" ")
        )
    })
}

/// What every run of one attack shares.
struct Run<'a> {
    effects: &'a [Effect],
    fixtures: &'a Fixtures,
    warden: &'a Warden,
}

/// Records the checks that did not hold as mismatches of `pass`: escapes and unverifiable checks.
fn report_checks(checks: &[verify::Check], pass: &'static str, result: &mut CaseResult) {
    for check in checks {
        let kind = match check.verdict {
            Verdict::Breached => MismatchKind::Escape,
            Verdict::Unverifiable => MismatchKind::Unverifiable,
            Verdict::Held | Verdict::NotApplicable => continue,
        };
        result.mismatch(kind, pass, format!("{}: {}", check.effect, check.evidence));
    }
}

/// Whether every check held (or had nothing to observe).
fn all_held(checks: &[verify::Check]) -> bool {
    checks
        .iter()
        .all(|c| matches!(c.verdict, Verdict::Held | Verdict::NotApplicable))
}

/// The runtime layer alone: the attack runs with the static layer off and the hooks on
/// (`warden run --no-policy`). It is stopped by the runtime layer when the result record's
/// `stopped_by` names that layer and every host-side check held; an effect that happened is an
/// escape, as in the jail pass. A case with `expect-runtime: RULE` must be stopped by the runtime
/// layer with RULE. When the full pass ran the program (the policy allowed it), that run is the
/// same as one with `--no-policy` and stands for this pass (`ran_in_full`): its checks were
/// already reported as the full pass's.
fn runtime_pass(
    case: &Case,
    spec: &AttackSpec,
    run: &Run<'_>,
    env: &mut CaseEnv,
    ran_in_full: Option<(PassResult, Option<Record>)>,
    result: &mut CaseResult,
) {
    let (pass, record) = match ran_in_full {
        Some((full, record)) => (full.shared_from(Pass::Full), record),
        None => {
            let Some((finished, record, out)) = run_pass(
                case,
                run.fixtures,
                run.warden,
                Pass::Runtime,
                &env.env(),
                result,
            ) else {
                return;
            };
            let checks = verify::check_pass(
                run.effects,
                run.fixtures,
                env,
                &Observation {
                    finished: &finished,
                    record: record.as_ref(),
                    output_dir: out.as_deref(),
                    first_stdout: None,
                    jail_only: false,
                },
            );
            report_checks(&checks, "runtime", result);
            (PassResult::new(&finished, record.as_ref(), checks), record)
        }
    };
    let rule = pass.runtime_rule();
    result.stopped_by_runtime = Some(rule.is_some() && all_held(&pass.checks));
    if let Some(expected) = &spec.expect_runtime {
        if rule != Some(expected.as_str()) {
            result.mismatch(
                MismatchKind::Runtime,
                "runtime",
                format!(
                    "expected the runtime layer to stop it with {expected}, {}",
                    runtime_outcome(record.as_ref())
                ),
            );
        }
    }
    result.runtime = Some(pass);
}

/// How a run ended, for a runtime mismatch: what stopped it, or that nothing did.
fn runtime_outcome(record: Option<&Record>) -> String {
    let Some(record) = record else {
        return "but warden gave no result record".to_owned();
    };
    match &record.stopped_by {
        Some(stopped) => format!("but it was stopped by {stopped}"),
        None => {
            let last = record
                .stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| format!("; stderr: {}", verify::clip(l)))
                .unwrap_or_default();
            format!(
                "but no layer stopped it (status {}, exit code {:?}){last}",
                record.status, record.exit_code
            )
        }
    }
}

/// Runs the case once, watched, for `pass` (`jail`: static layer off; `full`: the whole gateway), with
/// its output dir. Warden failing to run at all is an error mismatch of that pass (`None`).
fn run_pass(
    case: &Case,
    fixtures: &Fixtures,
    warden: &Warden,
    pass: Pass,
    env: &[(String, String)],
    result: &mut CaseResult,
) -> Option<(super::exec::Finished, Option<Record>, Option<PathBuf>)> {
    let out = output_dir(fixtures, warden, case, pass.as_str());
    match warden.run(&case.file, pass, out.as_deref(), env, true) {
        Ok(finished) => {
            let record = Record::parse(&finished.stdout);
            Some((finished, record, out))
        }
        Err(err) => {
            result.mismatch(MismatchKind::Error, pass.as_str(), err);
            None
        }
    }
}

fn jail_pass(
    case: &Case,
    effects: &[Effect],
    fixtures: &Fixtures,
    warden: &Warden,
    env: &mut CaseEnv,
    result: &mut CaseResult,
) {
    let Some((finished, record, out)) =
        run_pass(case, fixtures, warden, Pass::Jail, &env.env(), result)
    else {
        return;
    };
    let mut checks = verify::check_pass(
        effects,
        fixtures,
        env,
        &Observation {
            finished: &finished,
            record: record.as_ref(),
            output_dir: out.as_deref(),
            first_stdout: None,
            jail_only: true,
        },
    );
    if effects.contains(&Effect::NoPersist) {
        let out2 = output_dir(fixtures, warden, case, "jail-again");
        match warden.run(&case.file, Pass::Jail, out2.as_deref(), &env.env(), true) {
            Ok(second) => {
                let record2 = Record::parse(&second.stdout);
                let first = record
                    .as_ref()
                    .map(|r| r.stdout.as_str())
                    .unwrap_or_default();
                let again = verify::check_pass(
                    effects,
                    fixtures,
                    env,
                    &Observation {
                        finished: &second,
                        record: record2.as_ref(),
                        output_dir: out2.as_deref(),
                        first_stdout: Some(first),
                        jail_only: false,
                    },
                );
                merge(&mut checks, again);
            }
            Err(err) => result.mismatch(MismatchKind::Error, "jail", err),
        }
    }
    let pass = PassResult::new(&finished, record.as_ref(), checks);
    report_checks(&pass.checks, "jail", result);
    result.contained = Some(all_held(&pass.checks));
    result.jail = Some(pass);
}

/// Keeps the worse verdict of two checks of the same effect (the second run of `no-persist`).
fn merge(checks: &mut Vec<verify::Check>, again: Vec<verify::Check>) {
    for check in again {
        match checks.iter_mut().find(|c| c.effect == check.effect) {
            Some(existing)
                if check.verdict == Verdict::Breached
                    || existing.verdict == Verdict::Held
                        && check.verdict == Verdict::Unverifiable =>
            {
                *existing = check;
            }
            Some(_) => {}
            None => checks.push(check),
        }
    }
}

/// The full pipeline. Returns the run and its record when the program ran (the policy let it
/// through): that run is what the runtime pass would make, and stands for it.
fn full_pass(
    case: &Case,
    effects: &[Effect],
    fixtures: &Fixtures,
    warden: &Warden,
    env: &mut CaseEnv,
    result: &mut CaseResult,
) -> Option<(PassResult, Option<Record>)> {
    let (finished, record, out) = run_pass(case, fixtures, warden, Pass::Full, &env.env(), result)?;
    let stopped_by_policy = record
        .as_ref()
        .is_some_and(|r| r.status == "denied" || r.status == "review_required");
    if stopped_by_policy != result.denied_statically && result.policy.is_some() {
        result.mismatch(
            MismatchKind::Pipeline,
            "full",
            format!(
                "`warden check` said {}, the full pipeline's status is {}",
                result
                    .policy
                    .as_ref()
                    .map(|v| v.decision.as_str())
                    .unwrap_or("?"),
                record
                    .as_ref()
                    .map(|r| r.status.as_str())
                    .unwrap_or("(no record)")
            ),
        );
    }
    let checks = if stopped_by_policy {
        Vec::new()
    } else {
        verify::check_pass(
            effects,
            fixtures,
            env,
            &Observation {
                finished: &finished,
                record: record.as_ref(),
                output_dir: out.as_deref(),
                first_stdout: None,
                jail_only: false,
            },
        )
    };
    report_checks(&checks, "full", result);
    let held = all_held(&checks);
    result.stopped = Some(stopped_by_policy || (record.is_some() && held));
    let pass = PassResult::new(&finished, record.as_ref(), checks);
    result.full = Some(pass.clone());
    // The program ran as it would with --no-policy when the policy allowed it.
    let ran = record
        .as_ref()
        .is_some_and(|r| r.decision() == Some("allow"));
    ran.then_some((pass, record))
}

/// A benign program: allowed by the policy, then run once in the fullest selected pass, where it
/// must end with status ok and print its `expect-output`. With the runtime pass selected it must
/// also get past the runtime layer: the run with the hooks on (the full pipeline's, or a runtime
/// pass of its own when no such run was made, e.g. because the policy denied it) is the runtime
/// pass's, and a program the runtime layer stopped is a false positive of that layer.
fn benign(
    case: &Case,
    spec: &BenignSpec,
    verdict: Option<&StaticVerdict>,
    fixtures: &Fixtures,
    warden: &Warden,
    passes: &Passes,
    result: &mut CaseResult,
) {
    match verdict {
        _ if !passes.contains(Pass::Policy) => {}
        None => result.mismatch(
            MismatchKind::Error,
            "policy",
            "warden check gave no verdict for this file".to_owned(),
        ),
        Some(v) if v.decision != "allow" => {
            result.denied_statically = true;
            result.mismatch(
                MismatchKind::FalsePositive,
                "policy",
                format!(
                    "benign code was {} by the policy (rules: {})",
                    v.decision,
                    list_or_none(&v.rules)
                ),
            );
        }
        Some(_) => {}
    }
    if !spec.run {
        return;
    }
    let runtime = passes.contains(Pass::Runtime) && warden.supports(Pass::Runtime);
    let mut judged_with_hooks = false;
    if !result.denied_statically {
        if let Some((run, flags)) = program_pass(passes, warden, spec.run_without_policy) {
            let ran = benign_run(case, spec, fixtures, warden, (run, flags), result);
            if let (true, Some(ran)) = (runtime, ran) {
                // The hooks were on unless the run was the jail's alone; a program the full
                // pipeline ran went through the runtime layer as with --no-policy.
                if run == Pass::Runtime {
                    judged_with_hooks = true;
                } else if !flags.if_known.contains(&"--no-hooks") {
                    result.runtime = Some(ran.shared_from(run));
                    judged_with_hooks = true;
                }
            }
        }
    }
    if runtime && !judged_with_hooks {
        if let Some(flags) = Pass::Runtime.run_flags() {
            benign_run(case, spec, fixtures, warden, (Pass::Runtime, flags), result);
        }
    }
}

/// Runs a benign program once, reported as `pass`, and judges how it ended. Returns the run when
/// warden ran the program (a record whose status is not `denied` or `review_required`).
fn benign_run(
    case: &Case,
    spec: &BenignSpec,
    fixtures: &Fixtures,
    warden: &Warden,
    (run, flags): (Pass, RunFlags),
    result: &mut CaseResult,
) -> Option<PassResult> {
    let pass = run.as_str();
    let out = output_dir(fixtures, warden, case, pass);
    let finished = match warden.run_with(&case.file, flags, out.as_deref(), &[], false) {
        Ok(finished) => finished,
        Err(err) => {
            result.mismatch(MismatchKind::Error, pass, err);
            return None;
        }
    };
    let record = Record::parse(&finished.stdout);
    judge_benign(spec, pass, &finished, record.as_ref(), result);
    let ran = record
        .as_ref()
        .is_some_and(|r| r.status != "denied" && r.status != "review_required");
    let pass_result = PassResult::new(&finished, record.as_ref(), Vec::new());
    store(result, run, pass_result.clone());
    ran.then_some(pass_result)
}

/// A benign program through the pool pass (after the policy allowed it, when that pass ran): it
/// must run warm, end ok and print its `expect-output`, as in the other passes.
fn benign_pool(case: &Case, spec: &BenignSpec, server: &Pool, result: &mut CaseResult) {
    let Ok(text) = std::fs::read_to_string(&case.file) else {
        result
            .notes
            .push("not sent through the pool: the file is not UTF-8".to_owned());
        return;
    };
    let done = server.run(Program::Run(&text), None);
    result
        .notes
        .extend(done.notes.iter().map(|n| format!("pool: {n}")));
    judge_benign(spec, "pool", &done.finished, done.record.as_ref(), result);
    if done.warm != Some(true) {
        result.mismatch(
            MismatchKind::Cold,
            "pool",
            format!(
                "the program did not run in a pooled jail (status {})",
                done.record
                    .as_ref()
                    .map_or("(no record)", |r| r.status.as_str())
            ),
        );
    }
    let mut pass = PassResult::new(&done.finished, done.record.as_ref(), Vec::new());
    pass.warm = done.warm;
    result.pool = Some(pass);
}

/// Judges how a benign program's run ended (`pass` names the pass in mismatches): a record with
/// status ok, exit code 0 and the expected output, else a regression (or, when the runtime layer
/// stopped it, a false positive of that layer).
fn judge_benign(
    spec: &BenignSpec,
    pass: &'static str,
    finished: &super::exec::Finished,
    record: Option<&Record>,
    result: &mut CaseResult,
) {
    match record {
        None => result.mismatch(
            MismatchKind::Regression,
            pass,
            format!(
                "no result record (warden exit code {:?}): {}",
                finished.code,
                verify::clip(&String::from_utf8_lossy(&finished.stderr))
            ),
        ),
        Some(r) if r.status != "ok" || r.exit_code.is_some_and(|c| c != 0) => {
            match r.stopped_by.as_ref().filter(|s| s.is_runtime()) {
                Some(stopped) => result.mismatch(
                    MismatchKind::FalsePositive,
                    if pass == "pool" { "pool" } else { "runtime" },
                    format!(
                        "benign code was stopped by the runtime layer ({stopped}) in the {pass} \
                         pass; stderr: {}",
                        verify::clip(last_lines(&r.stderr, 3))
                    ),
                ),
                None => result.mismatch(
                    MismatchKind::Regression,
                    pass,
                    format!(
                        "status {} (exit code {:?}); stderr: {}",
                        r.status,
                        r.exit_code,
                        verify::clip(last_lines(&r.stderr, 3))
                    ),
                ),
            }
            let last = r.stderr.lines().rev().find(|l| !l.trim().is_empty());
            result.cause = Some(match last {
                Some(line) if r.status == "error" => line.trim().chars().take(120).collect(),
                _ => format!("status {}", r.status),
            });
        }
        Some(r) => {
            if let Some(wanted) = &spec.expect_output {
                if !r.stdout.contains(wanted.as_str()) {
                    result.cause = Some(format!("status ok, but stdout lacks {wanted:?}"));
                    result.mismatch(
                        MismatchKind::Regression,
                        pass,
                        format!(
                            "stdout lacks {wanted:?}; it was {:?}",
                            verify::clip(&r.stdout)
                        ),
                    );
                }
            }
        }
    }
}

fn harmless(
    case: &Case,
    fixtures: &Fixtures,
    warden: &Warden,
    passes: &Passes,
    result: &mut CaseResult,
) {
    let denied = result
        .policy
        .as_ref()
        .is_some_and(|v| v.decision != "allow");
    result.denied_statically = denied;
    // What a harmless program measures is whether warden as a whole lets it through: it runs in
    // the full pass only (in the jail alone when the full pipeline gives no record).
    if !passes.contains(Pass::Full) {
        return;
    }
    let Some((run, flags)) = program_pass(passes, warden, false) else {
        return;
    };
    let out = output_dir(fixtures, warden, case, run.as_str());
    match warden.run_with(&case.file, flags, out.as_deref(), &[], true) {
        Ok(finished) => {
            let record = Record::parse(&finished.stdout);
            if let Some(seen) = &finished.seen {
                let survivors = super::exec::reap_survivors(seen);
                if !survivors.is_empty() {
                    result.notes.push(format!(
                        "{} process(es) outlived the run and were killed",
                        survivors.len()
                    ));
                }
            }
            store(
                result,
                run,
                PassResult::new(&finished, record.as_ref(), Vec::new()),
            );
        }
        Err(err) => result.notes.push(err),
    }
}

fn last_lines(text: &str, n: usize) -> &str {
    let trimmed = text.trim_end();
    let mut start = trimmed.len();
    for _ in 0..n {
        match trimmed[..start].rfind('\n') {
            Some(i) => start = i,
            None => return trimmed,
        }
    }
    &trimmed[start..]
}

/// Guard timeout for one warden call: the policy's wall-clock limit plus set-up margin.
pub fn default_guard() -> Duration {
    Duration::from_secs(180)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn declared_shared_targets_become_lock_keys() {
        let effects = Effect::parse_list(
            "no-connect tcp4:127.0.0.1:5758; unchanged /root/.bashrc; no-path /tmp/warden-escape*; \
             no-path /usr/copy_file; hostname-unchanged; no-read /etc/shadow; contained",
        )
        .unwrap();
        let keys = lock_keys(&effects);
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            [
                "connect tcp4:127.0.0.1:5758",
                "file /root/.bashrc",
                "hostname",
                "path /usr/copy_file"
            ]
        );
    }

    #[test]
    fn a_case_whose_target_is_held_is_passed_over_for_one_that_can_run() {
        let keys = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
        let queue = Queue::new([
            (0, keys(&["x"])),
            (1, keys(&["x"])),
            (2, keys(&["y"])),
            (3, keys(&[])),
        ]);
        let first = queue.take().unwrap();
        assert_eq!(first.index, 0);
        // 1 needs x, which 0 holds: 2 and 3 run first.
        let second = queue.take().unwrap();
        assert_eq!(second.index, 2);
        let third = queue.take().unwrap();
        assert_eq!(third.index, 3);
        let waited = std::thread::scope(|s| {
            let handle = s.spawn(|| {
                let start = Instant::now();
                let fourth = queue.take().unwrap();
                (fourth.index, start.elapsed())
            });
            std::thread::sleep(Duration::from_millis(100));
            drop(first);
            handle.join().unwrap()
        });
        assert_eq!(waited.0, 1);
        assert!(waited.1 >= Duration::from_millis(90), "{waited:?}");
        assert!(queue.take().is_none());
        drop((second, third));
    }

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\nd\n", 2), "\nc\nd");
        assert_eq!(last_lines("one", 3), "one");
    }
}
