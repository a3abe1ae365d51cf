//! The corpus report: per-case results, the matrix of groups × layers, and its renderings, one a
//! file under `report/` (as `policy/src/render/`): `human.rs` (terminal), `json.rs`, `junit.rs`
//! (JUnit XML), `markdown.rs` (`corpus/REPORT.md`) with `headline.rs` (its one-line figures).
//!
//! Owns: the result types, the summary arithmetic and what the renderers share (the tables'
//! columns, the words for a pass's outcome). Does not own: producing the results (`runner.rs`).
//! Reports never print host content: leak evidence names the line and file, not what the line
//! holds.

mod headline;
mod human;
mod json;
mod junit;
mod markdown;

pub use headline::headline;
pub use human::human;
pub use json::json;
pub use junit::junit;
pub use markdown::markdown;

use std::collections::BTreeMap;

use serde::Serialize;

use super::case::{Case, Kind};
use super::exec::{Finished, Record, StaticVerdict, StoppedBy};
use super::header::ExpectStatic;
use super::pass::Pass;
use super::verify::{Check, Verdict};

/// How a case came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    Pass,
    Fail,
    Skipped,
    /// Reported, never a failure (RedCode's `no_runtime_harm`).
    Info,
}

impl CaseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Pass => "pass",
            CaseStatus::Fail => "FAIL",
            CaseStatus::Skipped => "skipped",
            CaseStatus::Info => "info",
        }
    }
}

/// What kind of expectation a mismatch broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchKind {
    /// The host shows an effect the jail should have prevented.
    Escape,
    /// The runner could not observe what it had to (no record, a listener it could not bind…).
    Unverifiable,
    /// The policy's verdict or rules differ from the header.
    Static,
    /// The runtime layer did not stop an attack with the rule its header names (`expect-runtime`).
    Runtime,
    /// The full pipeline disagrees with `warden check`.
    Pipeline,
    /// Benign code denied by the policy (pass `policy`) or stopped by the runtime layer (pass
    /// `runtime`, whichever run showed it).
    FalsePositive,
    /// Benign code that did not run to a successful end with the expected output.
    Regression,
    /// The pool pass ran the program in a jail started for it (`"warm": false`) without the
    /// record saying why: the pass did not test the pool.
    Cold,
    /// warden itself failed (could not be run, gave no verdict).
    Error,
}

/// One broken expectation, with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Mismatch {
    pub kind: MismatchKind,
    /// `policy`, `runtime` (policy off, hooks on), `jail` (policy and hooks off), `full` or
    /// `pool` (through the warm pool of `warden serve`, static layer off).
    pub pass: &'static str,
    pub message: String,
}

/// One `warden run` pass.
#[derive(Debug, Clone, Serialize)]
pub struct PassResult {
    /// The result record's status (`None`: warden printed no record).
    pub status: Option<String>,
    pub exit_code: Option<i64>,
    pub warden_exit_code: Option<i32>,
    pub time_ms: u64,
    /// The layer the result record says stopped the program.
    pub stopped_by: Option<StoppedBy>,
    /// The pass whose run this one is, when it did not run on its own: a program the policy
    /// allowed ran in the full pipeline exactly as it would with `--no-policy`, so that run
    /// stands for the runtime pass too (`full`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_run_as: Option<&'static str>,
    /// The pool pass: whether a pooled jail ran the program (the record's `warm`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<bool>,
    pub checks: Vec<Check>,
}

impl PassResult {
    pub fn new(finished: &Finished, record: Option<&Record>, checks: Vec<Check>) -> PassResult {
        PassResult {
            status: record.map(|r| r.status.clone()),
            exit_code: record.and_then(|r| r.exit_code),
            warden_exit_code: finished.code,
            time_ms: finished.elapsed.as_millis() as u64,
            stopped_by: record.and_then(|r| r.stopped_by.clone()),
            same_run_as: None,
            warm: None,
            checks,
        }
    }

    /// The rule the runtime layer stopped the program with, when it did.
    pub fn runtime_rule(&self) -> Option<&str> {
        let stopped = self.stopped_by.as_ref().filter(|s| s.is_runtime())?;
        Some(stopped.rule.as_deref().unwrap_or("?"))
    }

    /// This run, standing for another pass too.
    pub fn shared_from(&self, pass: Pass) -> PassResult {
        PassResult {
            same_run_as: Some(pass.as_str()),
            ..self.clone()
        }
    }
}

/// Everything known about one case after the run.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub id: String,
    pub corpus: String,
    pub group: String,
    pub kind: &'static str,
    pub file: String,
    pub technique: String,
    pub expect_static: Option<&'static str>,
    /// The effects checked (attacks: declared plus baseline).
    pub effects: Vec<String>,
    /// The policy pass (`warden check`).
    pub policy: Option<StaticVerdict>,
    pub denied_statically: bool,
    /// The runtime-only pass (`warden run --no-policy`, the hooks on).
    pub runtime: Option<PassResult>,
    /// Attacks: the runtime layer stopped it (the record's `stopped_by` names it) and every host
    /// check of that pass held.
    pub stopped_by_runtime: Option<bool>,
    /// The jail-only pass (`warden run --no-policy --no-hooks`).
    pub jail: Option<PassResult>,
    /// Attacks: every host check of the jail-only pass held.
    pub contained: Option<bool>,
    /// The full pipeline (`warden run`).
    pub full: Option<PassResult>,
    /// Attacks: the full pipeline denied it or contained it.
    pub stopped: Option<bool>,
    /// The pool pass (`warden serve` with its warm pool, the static layer off).
    pub pool: Option<PassResult>,
    /// Attacks: every host check of the pool pass held.
    pub contained_in_pool: Option<bool>,
    pub outcome: CaseStatus,
    pub mismatches: Vec<Mismatch>,
    /// Benign regressions: why the run failed, in one line (the last line of stderr, or the
    /// status), so that failures can be counted by cause.
    pub cause: Option<String>,
    pub notes: Vec<String>,
    pub time_ms: u64,
}

impl CaseResult {
    pub fn new(case: &Case) -> CaseResult {
        let (expect_static, effects) = match &case.kind {
            Kind::Attack(spec) => (
                spec.expect_static.map(ExpectStatic::as_str),
                spec.all_effects().iter().map(ToString::to_string).collect(),
            ),
            Kind::Benign(_) => (Some("allow"), Vec::new()),
            _ => (None, Vec::new()),
        };
        CaseResult {
            id: case.id.clone(),
            corpus: case.corpus.clone(),
            group: case.group.clone(),
            kind: case.kind.name(),
            file: case.file.display().to_string(),
            technique: case.technique.clone(),
            expect_static,
            effects,
            policy: None,
            denied_statically: false,
            runtime: None,
            stopped_by_runtime: None,
            jail: None,
            contained: None,
            full: None,
            stopped: None,
            pool: None,
            contained_in_pool: None,
            outcome: CaseStatus::Pass,
            mismatches: Vec::new(),
            cause: None,
            notes: Vec::new(),
            time_ms: 0,
        }
    }

    pub fn mismatch(&mut self, kind: MismatchKind, pass: &'static str, message: String) {
        self.mismatches.push(Mismatch {
            kind,
            pass,
            message,
        });
    }

    /// Settles the outcome once every pass is in.
    pub fn finish(&mut self) {
        self.outcome = match self.kind {
            "skipped" => CaseStatus::Skipped,
            "harmless" => CaseStatus::Info,
            _ if self.mismatches.is_empty() => CaseStatus::Pass,
            _ => CaseStatus::Fail,
        };
    }

    fn has(&self, kind: MismatchKind) -> bool {
        self.mismatches.iter().any(|m| m.kind == kind)
    }

    fn has_in(&self, kind: MismatchKind, pass: &str) -> bool {
        self.mismatches
            .iter()
            .any(|m| m.kind == kind && m.pass == pass)
    }

    /// The run that shows how the program ended: the fullest pass it went through.
    fn main_run(&self) -> Option<&PassResult> {
        self.full
            .as_ref()
            .or(self.runtime.as_ref())
            .or(self.jail.as_ref())
            .or(self.pool.as_ref())
    }
}

/// A corpus directory that was run.
#[derive(Debug, Clone, Serialize)]
pub struct CorpusInfo {
    pub name: String,
    pub dir: String,
    pub format: &'static str,
    pub cases: usize,
}

/// One row of the attack matrix.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AttackRow {
    pub corpus: String,
    pub group: String,
    pub cases: usize,
    pub denied_statically: usize,
    /// Stopped by the runtime layer with the static layer off, every host check holding.
    pub stopped_by_runtime: usize,
    /// Cases that had a runtime pass (0 when warden has no runtime hooks).
    pub runtime_runs: usize,
    pub contained_by_jail: usize,
    /// Denied statically and contained by the jail alone.
    pub both: usize,
    /// Stopped by the full pipeline (denied, or run and contained).
    pub stopped: usize,
    /// Cases that had a full-pipeline pass (0 when the full pipeline was unavailable).
    pub full_runs: usize,
    /// Cases that went through the pool pass.
    pub pool_runs: usize,
    /// Of those, every host check held.
    pub contained_in_pool: usize,
    /// Of those, a pooled jail ran the program (`"warm": true`).
    pub warm_in_pool: usize,
    pub escapes: usize,
    pub failed: usize,
    pub time_ms: u64,
}

impl AttackRow {
    /// The runtime column: `–` when no case had a runtime pass.
    fn runtime_cell(&self, pct_cell: fn(usize, usize) -> String) -> String {
        if self.runtime_runs == 0 {
            "–".to_owned()
        } else {
            pct_cell(self.stopped_by_runtime, self.cases)
        }
    }

    fn stopped_text(&self) -> String {
        if self.full_runs == 0 {
            "–".to_owned()
        } else {
            self.stopped.to_string()
        }
    }
}

/// One row of the benign table.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BenignRow {
    pub corpus: String,
    pub group: String,
    pub cases: usize,
    pub allowed: usize,
    pub ran_ok: usize,
    /// Cases only judged statically (smolagents' `ordinary` tier): not run.
    pub not_run: usize,
    /// Denied by the policy.
    pub false_positives: usize,
    /// Stopped by the runtime layer (in the runtime pass, or in the full pipeline).
    pub runtime_false_positives: usize,
    pub regressions: usize,
    pub skipped: usize,
    pub time_ms: u64,
}

impl BenignRow {
    /// "ran ok" for tables: `–` when none of the cases was meant to run.
    fn ran_ok_text(&self) -> String {
        if self.not_run == self.cases {
            "– (not run)".to_owned()
        } else {
            format!(
                "{} ({})",
                self.ran_ok,
                pct(self.ran_ok, self.cases - self.not_run)
            )
        }
    }
}

/// One row of the harmless table (reported apart, not wins).
#[derive(Debug, Clone, Default, Serialize)]
pub struct HarmlessRow {
    pub corpus: String,
    pub group: String,
    pub cases: usize,
    pub denied_statically: usize,
    pub ran_ok: usize,
    pub time_ms: u64,
}

/// The totals.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub cases: usize,
    pub attacks: usize,
    pub attacks_denied_statically: usize,
    /// Stopped by the runtime layer alone (the runtime pass).
    pub attacks_stopped_by_runtime: usize,
    pub attacks_contained_by_jail: usize,
    pub attacks_stopped: usize,
    pub escapes: usize,
    pub unverifiable: usize,
    pub static_mismatches: usize,
    /// Attacks whose `expect-runtime` the runtime pass did not meet.
    pub runtime_mismatches: usize,
    /// Attacks sent through the pool pass.
    pub attacks_through_pool: usize,
    /// Of those, every host check held.
    pub attacks_contained_in_pool: usize,
    /// Of those, a pooled jail ran the program.
    pub attacks_warm_in_pool: usize,
    /// Of those, run cold without the record saying why (each fails its case).
    pub attacks_cold_in_pool: usize,
    /// Benign programs sent through the pool pass.
    pub benign_through_pool: usize,
    /// Of those, a pooled jail ran the program.
    pub benign_warm_in_pool: usize,
    /// What the pool pass's server left behind after it stopped (processes, its directory): any
    /// fails the run.
    pub pool_left_behind: Vec<String>,
    pub benign: usize,
    pub benign_passed: usize,
    /// Benign cases denied by the policy or stopped by the runtime layer.
    pub false_positives: usize,
    /// Benign cases stopped by the runtime layer.
    pub runtime_false_positives: usize,
    pub regressions: usize,
    pub harmless: usize,
    pub skipped: usize,
    pub failed: usize,
    pub attack_matrix: Vec<AttackRow>,
    pub benign_table: Vec<BenignRow>,
    pub harmless_table: Vec<HarmlessRow>,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub warden: String,
    pub rules: Option<String>,
    /// The passes that ran (`--passes`); the renderings show only these.
    pub passes: Vec<Pass>,
    /// The user warden ran as (`--run-as`); `None`: the runner's own.
    pub run_as: Option<String>,
    pub jobs: usize,
    pub wall_ms: u64,
    pub corpora: Vec<CorpusInfo>,
    pub notes: Vec<String>,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

impl Report {
    /// Builds the summary from the results.
    pub fn summarise(cases: &[CaseResult]) -> Summary {
        let mut s = Summary {
            cases: cases.len(),
            ..Summary::default()
        };
        let mut attacks: BTreeMap<(String, String), AttackRow> = BTreeMap::new();
        let mut benign: BTreeMap<(String, String), BenignRow> = BTreeMap::new();
        let mut harmless: BTreeMap<(String, String), HarmlessRow> = BTreeMap::new();
        for c in cases {
            let key = (c.corpus.clone(), c.group.clone());
            if c.outcome == CaseStatus::Fail {
                s.failed += 1;
            }
            match c.kind {
                "attack" => {
                    let row = attacks.entry(key).or_insert_with(|| AttackRow {
                        corpus: c.corpus.clone(),
                        group: c.group.clone(),
                        ..AttackRow::default()
                    });
                    let contained = c.contained == Some(true);
                    row.cases += 1;
                    row.denied_statically += usize::from(c.denied_statically);
                    row.stopped_by_runtime += usize::from(c.stopped_by_runtime == Some(true));
                    row.runtime_runs += usize::from(c.stopped_by_runtime.is_some());
                    row.contained_by_jail += usize::from(contained);
                    row.both += usize::from(c.denied_statically && contained);
                    row.stopped += usize::from(c.stopped == Some(true));
                    row.full_runs += usize::from(c.stopped.is_some());
                    let warm = c.pool.as_ref().is_some_and(|p| p.warm == Some(true));
                    row.pool_runs += usize::from(c.contained_in_pool.is_some());
                    row.contained_in_pool += usize::from(c.contained_in_pool == Some(true));
                    row.warm_in_pool += usize::from(warm);
                    s.attacks_through_pool += usize::from(c.contained_in_pool.is_some());
                    s.attacks_contained_in_pool += usize::from(c.contained_in_pool == Some(true));
                    s.attacks_warm_in_pool += usize::from(warm);
                    s.attacks_cold_in_pool += usize::from(c.has(MismatchKind::Cold));
                    row.escapes += usize::from(c.has(MismatchKind::Escape));
                    row.failed += usize::from(c.outcome == CaseStatus::Fail);
                    row.time_ms += c.time_ms;
                    s.attacks += 1;
                    s.attacks_denied_statically += usize::from(c.denied_statically);
                    s.attacks_stopped_by_runtime += usize::from(c.stopped_by_runtime == Some(true));
                    s.attacks_contained_by_jail += usize::from(contained);
                    s.attacks_stopped += usize::from(c.stopped == Some(true));
                    s.escapes += usize::from(c.has(MismatchKind::Escape));
                    s.unverifiable += usize::from(c.has(MismatchKind::Unverifiable));
                    s.static_mismatches += usize::from(c.has(MismatchKind::Static));
                    s.runtime_mismatches += usize::from(c.has(MismatchKind::Runtime));
                }
                "benign" | "skipped" => {
                    let row = benign.entry(key).or_insert_with(|| BenignRow {
                        corpus: c.corpus.clone(),
                        group: c.group.clone(),
                        ..BenignRow::default()
                    });
                    row.time_ms += c.time_ms;
                    if c.kind == "skipped" {
                        row.skipped += 1;
                        s.skipped += 1;
                        continue;
                    }
                    let runtime_fp = c.has_in(MismatchKind::FalsePositive, "runtime");
                    let ran_ok = c
                        .main_run()
                        .is_some_and(|p| p.status.as_deref() == Some("ok"))
                        && !c.has(MismatchKind::Regression)
                        && !runtime_fp;
                    row.cases += 1;
                    row.not_run += usize::from(c.main_run().is_none() && c.mismatches.is_empty());
                    row.allowed += usize::from(!c.denied_statically && c.policy.is_some());
                    row.ran_ok += usize::from(ran_ok);
                    row.false_positives +=
                        usize::from(c.has_in(MismatchKind::FalsePositive, "policy"));
                    row.runtime_false_positives += usize::from(runtime_fp);
                    row.regressions += usize::from(c.has(MismatchKind::Regression));
                    s.benign += 1;
                    s.benign_passed += usize::from(c.outcome == CaseStatus::Pass);
                    s.benign_through_pool += usize::from(c.pool.is_some());
                    s.benign_warm_in_pool +=
                        usize::from(c.pool.as_ref().is_some_and(|p| p.warm == Some(true)));
                    s.false_positives += usize::from(c.has(MismatchKind::FalsePositive));
                    s.runtime_false_positives += usize::from(runtime_fp);
                    s.regressions += usize::from(c.has(MismatchKind::Regression));
                }
                _ => {
                    let row = harmless.entry(key).or_insert_with(|| HarmlessRow {
                        corpus: c.corpus.clone(),
                        group: c.group.clone(),
                        ..HarmlessRow::default()
                    });
                    row.cases += 1;
                    row.denied_statically += usize::from(c.denied_statically);
                    row.ran_ok += usize::from(
                        c.main_run()
                            .is_some_and(|p| p.status.as_deref() == Some("ok")),
                    );
                    row.time_ms += c.time_ms;
                    s.harmless += 1;
                }
            }
        }
        s.attack_matrix = sort_groups(attacks.into_values().collect(), |r| (&r.corpus, &r.group));
        s.benign_table = benign.into_values().collect();
        s.harmless_table = harmless.into_values().collect();
        s
    }

    /// Whether the run is green: no escape, no benign regression, no broken expectation.
    pub fn passed(&self) -> bool {
        self.summary.failed == 0 && self.summary.pool_left_behind.is_empty()
    }

    /// Whether `pass` ran.
    pub fn ran(&self, pass: Pass) -> bool {
        self.passes.contains(&pass)
    }

    /// Whether a pass that runs programs ran (escapes can only be seen then).
    fn ran_programs(&self) -> bool {
        self.passes.iter().any(|p| p.runs_programs())
    }

    /// The passes in words, and the user warden ran as: `passes policy, jail, full`.
    fn how(&self) -> String {
        let names: Vec<&str> = self.passes.iter().map(|p| p.as_str()).collect();
        let mut text = format!("passes {}", names.join(", "));
        if let Some(user) = &self.run_as {
            text.push_str(&format!("; warden as {user}"));
        }
        text
    }
}

/// A column of a table: its title in the human and the Markdown report, and a row's cell.
type Column<Row> = (&'static str, &'static str, Box<dyn Fn(&Row) -> String>);

/// The benign table's columns after `group` and `cases`, for the passes that ran.
fn benign_columns(report: &Report) -> Vec<Column<BenignRow>> {
    let policy = report.ran(Pass::Policy);
    let runs = report.ran_programs();
    let mut columns: Vec<Column<BenignRow>> = Vec::new();
    if policy {
        columns.push(("allowed", "allowed", Box::new(|r| r.allowed.to_string())));
    }
    if runs {
        columns.push(("ran ok", "ran ok", Box::new(BenignRow::ran_ok_text)));
    }
    if policy {
        columns.push((
            "FP",
            "false positives",
            Box::new(|r| r.false_positives.to_string()),
        ));
    }
    if report.ran(Pass::Runtime) {
        columns.push((
            "rt FP",
            "runtime false positives",
            Box::new(|r| r.runtime_false_positives.to_string()),
        ));
    }
    if runs {
        columns.push((
            "regr.",
            "regressions",
            Box::new(|r| r.regressions.to_string()),
        ));
    }
    columns.push(("skipped", "skipped", Box::new(|r| r.skipped.to_string())));
    columns
}

/// The harmless table's columns after `category` and `cases`, for the passes that ran.
fn harmless_columns(report: &Report) -> Vec<Column<HarmlessRow>> {
    let mut columns: Vec<Column<HarmlessRow>> = Vec::new();
    if report.ran(Pass::Policy) {
        columns.push((
            "denied statically",
            "denied statically",
            Box::new(|r| r.denied_statically.to_string()),
        ));
    }
    // Harmless programs run in the full pass only.
    if report.ran(Pass::Full) {
        columns.push(("ran ok", "ran ok", Box::new(|r| r.ran_ok.to_string())));
    }
    columns
}

/// The attack matrix's columns after `group` and `cases`, for the passes that ran (`pct_cell`
/// formats a share of the row's cases).
fn attack_columns(report: &Report, pct_cell: fn(usize, usize) -> String) -> Vec<Column<AttackRow>> {
    let mut columns: Vec<Column<AttackRow>> = Vec::new();
    if report.ran(Pass::Policy) {
        columns.push((
            "policy",
            "policy",
            Box::new(move |r| pct_cell(r.denied_statically, r.cases)),
        ));
    }
    if report.ran(Pass::Runtime) {
        columns.push((
            "runtime",
            "runtime",
            Box::new(move |r| r.runtime_cell(pct_cell)),
        ));
    }
    if report.ran(Pass::Jail) {
        columns.push((
            "jail",
            "jail",
            Box::new(move |r| pct_cell(r.contained_by_jail, r.cases)),
        ));
    }
    if report.ran(Pass::Policy) && report.ran(Pass::Jail) {
        columns.push(("both", "both", Box::new(|r| r.both.to_string())));
    }
    if report.ran(Pass::Full) {
        columns.push(("stopped", "stopped", Box::new(AttackRow::stopped_text)));
    }
    if report.ran(Pass::Pool) {
        columns.push((
            "pool",
            "pool",
            Box::new(move |r| pct_cell(r.contained_in_pool, r.pool_runs)),
        ));
        columns.push((
            "warm",
            "warm",
            Box::new(|r| format!("{}/{}", r.warm_in_pool, r.pool_runs)),
        ));
    }
    if report.ran_programs() {
        columns.push(("escapes", "escapes", Box::new(|r| r.escapes.to_string())));
    }
    columns
}

/// Groups A…M, then JAIL, then the rest alphabetically (per corpus).
fn sort_groups<T>(mut rows: Vec<T>, key: impl Fn(&T) -> (&String, &String)) -> Vec<T> {
    let rank = |g: &str| match g {
        "JAIL" => (1, String::new()),
        g if g.len() == 1 => (0, g.to_owned()),
        g => (2, g.to_owned()),
    };
    rows.sort_by(|a, b| {
        let (ca, ga) = key(a);
        let (cb, gb) = key(b);
        ca.cmp(cb).then_with(|| rank(ga).cmp(&rank(gb)))
    });
    rows
}

fn pct(part: usize, whole: usize) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!("{:.0}%", part as f64 * 100.0 / whole as f64)
    }
}

fn secs(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

fn minutes(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}m{:02}s", s / 60, s % 60)
}

/// One-word summary of a pass for tables.
fn pass_word(pass: Option<&PassResult>) -> String {
    match pass {
        None => "–".to_owned(),
        Some(p) => p.status.clone().unwrap_or_else(|| "no-record".to_owned()),
    }
}

/// One-word summary of a pool pass: as a runtime pass's, then whether it ran warm.
fn pool_word(pass: Option<&PassResult>) -> String {
    match pass {
        None => "–".to_owned(),
        Some(p) => format!(
            "{}/{}",
            runtime_word(pass),
            match p.warm {
                Some(true) => "warm",
                Some(false) => "cold",
                None => "?",
            }
        ),
    }
}

/// One-word summary of a runtime pass: the rule the runtime layer stopped it with, else its status.
fn runtime_word(pass: Option<&PassResult>) -> String {
    match pass.and_then(PassResult::runtime_rule) {
        Some(rule) => rule.to_owned(),
        None => pass_word(pass),
    }
}

/// Whether any attack had a runtime pass (the pass was selected and warden has runtime hooks).
fn ran_runtime(report: &Report) -> bool {
    report.ran(Pass::Runtime)
        && report
            .summary
            .attack_matrix
            .iter()
            .any(|r| r.runtime_runs > 0)
}

#[cfg(test)]
mod tests;
