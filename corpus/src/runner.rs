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
//! case running at that moment.
//!
//! Layout: the order cases run in and the shared targets they hold are `runner/queue.rs`; an
//! attack's passes `runner/attack.rs`, and its pool pass (a benign program's too)
//! `runner/pool_pass.rs`; a benign or harmless program's run `runner/benign.rs`.
//!
//! Owns: scheduling, the per-case flow and the outcome of each case. Does not own: the checks
//! themselves (`verify.rs`) or the report (`report.rs`).

mod attack;
mod benign;
mod pool_pass;
mod queue;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::case::{Case, Kind};
use super::exec::{Record, StaticVerdict, Warden};
use super::fixtures::{Fixtures, Needs, Owner, PROBE_OUTPUT};
use super::pass::{Pass, Passes};
use super::pool::Pool;
use super::report::{CaseResult, CaseStatus};
use super::verify;
use queue::{lock_keys, schedule, Queue};

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
        Kind::Attack(spec) => attack::attack(
            case,
            spec,
            verdict.as_ref(),
            (fixtures, warden, pool),
            passes,
            &mut result,
        ),
        Kind::Benign(spec) => {
            benign::benign(
                case,
                spec,
                verdict.as_ref(),
                fixtures,
                warden,
                passes,
                &mut result,
            );
            if let (Some(server), true, false) = (pool, spec.run, result.denied_statically) {
                pool_pass::benign_pool(case, spec, server, &mut result);
            }
        }
        Kind::Harmless => benign::harmless(case, fixtures, warden, passes, &mut result),
    }
    result.time_ms = started.elapsed().as_millis() as u64;
    result.finish();
    result
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

fn list_or_none(rules: &[String]) -> String {
    if rules.is_empty() {
        "none".to_owned()
    } else {
        rules.join(" ")
    }
}

/// Guard timeout for one warden call: the policy's wall-clock limit plus set-up margin.
pub fn default_guard() -> Duration {
    Duration::from_secs(180)
}
