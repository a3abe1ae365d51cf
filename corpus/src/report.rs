//! The corpus report: per-case results, the matrix of groups × layers, and its four renderings
//! (human, JSON, JUnit XML, Markdown).
//!
//! Owns: the result types, the summary arithmetic and the renderers. Does not own: producing the
//! results (`runner.rs`). Reports never print host content: leak evidence names the line and
//! file, not what the line holds.

use std::collections::BTreeMap;
use std::fmt::Write as _;

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

// ---------------------------------------------------------------------------------------------
// Human

/// The report for a terminal.
pub fn human(report: &Report) -> String {
    let mut out = String::new();
    for c in &report.cases {
        let mut passes = String::new();
        for pass in &report.passes {
            let _ = match pass {
                Pass::Policy => write!(
                    passes,
                    "policy:{:<6} ",
                    c.policy.as_ref().map_or("–", |v| v.decision.as_str())
                ),
                Pass::Runtime => {
                    write!(passes, "runtime:{:<8} ", runtime_word(c.runtime.as_ref()))
                }
                Pass::Jail => write!(passes, "jail:{:<13} ", pass_word(c.jail.as_ref())),
                Pass::Full => write!(passes, "full:{:<15} ", pass_word(c.full.as_ref())),
                Pass::Pool => write!(passes, "pool:{:<13} ", pool_word(c.pool.as_ref())),
            };
        }
        let _ = writeln!(
            out,
            "{:<7} {:<20} {:<8} {:<44} {passes}{}",
            c.outcome.as_str(),
            clip_to(&c.corpus, 20),
            clip_to(&c.group, 8),
            clip_to(&c.id, 44),
            secs(c.time_ms)
        );
    }
    let failed: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.outcome == CaseStatus::Fail)
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\nMismatches:");
        for c in failed {
            let _ = writeln!(out, "  {} ({}, {}): {}", c.id, c.corpus, c.group, c.file);
            for m in &c.mismatches {
                let _ = writeln!(out, "    [{}] {:?}: {}", m.pass, m.kind, m.message);
            }
        }
    }
    let s = &report.summary;
    if !s.attack_matrix.is_empty() {
        let columns = attack_columns(report, |part, whole| format!("{part} {}", pct(part, whole)));
        let mut head = format!("\nAttacks        {:<22} {:>5}", "group", "cases");
        for (title, _, _) in &columns {
            let _ = write!(head, " {title:>10}");
        }
        let _ = writeln!(out, "{head} {:>7}", "time");
        for r in &s.attack_matrix {
            let mut line = format!(
                "  {:<12} {:<22} {:>5}",
                clip_to(&r.corpus, 12),
                clip_to(&r.group, 22),
                r.cases
            );
            for (_, _, cell) in &columns {
                let _ = write!(line, " {:>10}", cell(r));
            }
            let _ = writeln!(out, "{line} {:>7}", secs(r.time_ms));
        }
    }
    if !s.benign_table.is_empty() {
        let columns = benign_columns(report);
        let width = |title: &str| match title {
            "ran ok" => 12,
            "allowed" => 8,
            "rt FP" => 6,
            "skipped" => 7,
            _ => 6,
        };
        let mut head = format!("\nBenign         {:<22} {:>5}", "group", "cases");
        for (title, _, _) in &columns {
            let _ = write!(head, " {title:>w$}", w = width(title));
        }
        let _ = writeln!(out, "{head} {:>7}", "time");
        for r in &s.benign_table {
            let mut line = format!(
                "  {:<12} {:<22} {:>5}",
                clip_to(&r.corpus, 12),
                clip_to(&r.group, 22),
                r.cases
            );
            for (title, _, cell) in &columns {
                let _ = write!(line, " {:>w$}", cell(r), w = width(title));
            }
            let _ = writeln!(out, "{line} {:>7}", secs(r.time_ms));
        }
    }
    if !s.harmless_table.is_empty() {
        let _ = writeln!(
            out,
            "\nHarmless (reported apart; stopping them is not a win)"
        );
        let columns = harmless_columns(report);
        for r in &s.harmless_table {
            let mut line = format!(
                "  {:<12} {:<40} {:>4} cases",
                clip_to(&r.corpus, 12),
                clip_to(&r.group, 40),
                r.cases
            );
            for (title, _, cell) in &columns {
                let _ = write!(line, ", {:>3} {title}", cell(r));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for left in &s.pool_left_behind {
        let _ = writeln!(out, "LEFT BEHIND by the pool pass's server: {left}");
    }
    let mut attack_figures = Vec::new();
    if report.ran(Pass::Policy) {
        attack_figures.push(format!("{} denied statically", s.attacks_denied_statically));
    }
    if ran_runtime(report) {
        attack_figures.push(format!(
            "{} stopped by the runtime layer alone",
            s.attacks_stopped_by_runtime
        ));
    }
    if report.ran(Pass::Jail) {
        attack_figures.push(format!(
            "{} contained by the jail alone",
            s.attacks_contained_by_jail
        ));
    }
    if report.ran(Pass::Full) {
        attack_figures.push(format!(
            "{} stopped by the full pipeline",
            s.attacks_stopped
        ));
    }
    if report.ran(Pass::Pool) {
        attack_figures.push(format!(
            "{} of {} contained through the warm pool ({} warm)",
            s.attacks_contained_in_pool, s.attacks_through_pool, s.attacks_warm_in_pool
        ));
    }
    if report.ran_programs() {
        attack_figures.push(format!("{} escapes", s.escapes));
    }
    let _ = writeln!(
        out,
        "\n{} cases in {} ({} jobs; {}): {} attacks ({}), \
         {} benign ({} false positives, {} regressions), {} harmless, {} skipped — {}",
        s.cases,
        minutes(report.wall_ms),
        report.jobs,
        report.how(),
        s.attacks,
        attack_figures.join(", "),
        s.benign,
        s.false_positives,
        s.regressions,
        s.harmless,
        s.skipped,
        if report.passed() {
            "PASSED".to_owned()
        } else {
            format!("FAILED ({} cases)", s.failed)
        }
    );
    out
}

fn clip_to(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let mut clipped: String = text.chars().take(width.saturating_sub(1)).collect();
        clipped.push('…');
        clipped
    }
}

// ---------------------------------------------------------------------------------------------
// Markdown

/// The most failing cases the Markdown report lists one by one.
const MARKDOWN_MISMATCHES: usize = 25;

/// The report as Markdown (what `corpus/REPORT.md` holds).
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let s = &report.summary;
    let _ = writeln!(out, "# warden corpus report\n");
    let names: Vec<String> = report
        .corpora
        .iter()
        .map(|c| format!("`{}` ({} cases, {})", c.name, c.cases, c.format))
        .collect();
    // Every pass as warden's own user is the default, and goes without saying.
    let how = if report.passes.len() == Pass::ALL.len() && report.run_as.is_none() {
        String::new()
    } else {
        format!("; {}", report.how())
    };
    let _ = writeln!(
        out,
        "{} cases from {} in {} with {} parallel jobs; policy: {}{how}. **{}**.\n",
        s.cases,
        names.join(", "),
        minutes(report.wall_ms),
        report.jobs,
        report
            .rules
            .as_deref()
            .map_or("the built-in default".to_owned(), |r| format!("`{r}`")),
        if report.passed() {
            "Passed: no escape, no benign regression, no broken expectation".to_owned()
        } else {
            format!(
                "Failed: {} case{}",
                s.failed,
                if s.failed == 1 { "" } else { "s" }
            )
        }
    );
    let _ = writeln!(out, "{}\n", headline(report));
    if !s.attack_matrix.is_empty() {
        let _ = writeln!(out, "## Attacks: which layer holds\n");
        let columns = attack_columns(report, |part, whole| {
            format!("{part} ({})", pct(part, whole))
        });
        let meanings: Vec<&str> = columns
            .iter()
            .filter_map(|(title, _, _)| match *title {
                "policy" => Some("*Policy*: denied by `warden check`."),
                "runtime" => Some(
                    "*Runtime*: the runtime layer alone (`warden run --no-policy`: warden's audit hook, \
                     in the jail): the result record's `stopped_by` names the runtime layer and every \
                     host-side check held (an attack the policy allows runs once with the hooks on, \
                     in the full pipeline, when that pass runs).",
                ),
                "jail" => Some(
                    "*Jail*: the jail alone (`warden run --no-policy`, and `--no-hooks` when warden has \
                     runtime hooks): every host-side check held.",
                ),
                "both" => Some("*Both*: denied statically and contained by the jail alone."),
                "stopped" => {
                    Some("*Stopped*: the full pipeline (`warden run`) denied it or contained it.")
                }
                "pool" => Some(
                    "*Pool*: through the warm pool of a `warden serve` the runner started (the \
                     static layer off, the runtime layer and the jail on, `POST /v1/run` over its \
                     Unix socket): every host-side check held.",
                ),
                "warm" => Some(
                    "*Warm*: of the cases sent through the pool, those a pre-started jail ran \
                     (`\"warm\": true`).",
                ),
                _ => None,
            })
            .collect();
        let _ = writeln!(out, "{}\n", meanings.join(" "));
        let titles: Vec<&str> = columns.iter().map(|(_, title, _)| *title).collect();
        let _ = writeln!(
            out,
            "| corpus | group | cases | {} | time (sum) |",
            titles.join(" | ")
        );
        let _ = writeln!(out, "|---|---|--:|{}--:|", "--:|".repeat(columns.len()));
        let mut total = AttackRow::default();
        for r in &s.attack_matrix {
            let cells: Vec<String> = columns.iter().map(|(_, _, cell)| cell(r)).collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                r.corpus,
                r.group,
                r.cases,
                cells.join(" | "),
                secs(r.time_ms)
            );
            total.cases += r.cases;
            total.denied_statically += r.denied_statically;
            total.stopped_by_runtime += r.stopped_by_runtime;
            total.runtime_runs += r.runtime_runs;
            total.contained_by_jail += r.contained_by_jail;
            total.both += r.both;
            total.stopped += r.stopped;
            total.full_runs += r.full_runs;
            total.pool_runs += r.pool_runs;
            total.contained_in_pool += r.contained_in_pool;
            total.warm_in_pool += r.warm_in_pool;
            total.escapes += r.escapes;
            total.time_ms += r.time_ms;
        }
        let cells: Vec<String> = columns
            .iter()
            .map(|(_, _, cell)| format!("**{}**", cell(&total)))
            .collect();
        let _ = writeln!(
            out,
            "| **all** | | **{}** | {} | {} |\n",
            total.cases,
            cells.join(" | "),
            secs(total.time_ms)
        );
    }
    if !s.benign_table.is_empty() {
        let _ = writeln!(out, "## Benign code\n");
        let columns = benign_columns(report);
        markdown_table(
            &mut out,
            &["corpus", "group", "cases"],
            &columns,
            "time",
            &s.benign_table,
            |r| vec![r.corpus.clone(), r.group.clone(), r.cases.to_string()],
            |r| secs(r.time_ms),
        );
        let _ = writeln!(out);
    }
    causes_table(&mut out, report);
    if !s.harmless_table.is_empty() {
        let _ = writeln!(
            out,
            "## Harmless code (reported apart: stopping it is not a win)\n"
        );
        let columns = harmless_columns(report);
        let titles: Vec<&str> = ["corpus", "category", "cases"]
            .into_iter()
            .chain(columns.iter().map(|(_, title, _)| *title))
            .collect();
        let _ = writeln!(out, "| {} |", titles.join(" | "));
        let _ = writeln!(out, "|---|---|--:|{}", "--:|".repeat(columns.len()));
        for r in &s.harmless_table {
            let cells: Vec<String> = [r.corpus.clone(), r.group.clone(), r.cases.to_string()]
                .into_iter()
                .chain(columns.iter().map(|(_, _, cell)| cell(r)))
                .collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(out);
    }
    let failed: Vec<&CaseResult> = report
        .cases
        .iter()
        .filter(|c| c.outcome == CaseStatus::Fail)
        .collect();
    let _ = writeln!(out, "## Mismatches\n");
    if failed.is_empty() {
        let _ = writeln!(out, "None.\n");
    } else {
        let total = failed.len();
        for c in failed.into_iter().take(MARKDOWN_MISMATCHES) {
            let _ = writeln!(
                out,
                "- **{}** ({} {}, `{}`)",
                c.id, c.corpus, c.group, c.file
            );
            for m in &c.mismatches {
                let _ = writeln!(
                    out,
                    "  - {} pass, {:?}: {}",
                    m.pass,
                    m.kind,
                    escape_md(&m.message)
                );
            }
        }
        if total > MARKDOWN_MISMATCHES {
            let _ = writeln!(
                out,
                "- … and {} more failing cases (every one is in the `--format json` and JUnit reports)",
                total - MARKDOWN_MISMATCHES
            );
        }
        let _ = writeln!(out);
    }
    let mut slow: Vec<&CaseResult> = report.cases.iter().collect();
    slow.sort_by_key(|c| std::cmp::Reverse(c.time_ms));
    let _ = writeln!(out, "## Slowest cases\n");
    let _ = writeln!(out, "| case | corpus | jail status | time |");
    let _ = writeln!(out, "|---|---|---|--:|");
    for c in slow.iter().take(10) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            c.id,
            c.corpus,
            pass_word(c.jail.as_ref().or(c.main_run())),
            secs(c.time_ms)
        );
    }
    let _ = writeln!(out);
    if !report.notes.is_empty() || !s.pool_left_behind.is_empty() {
        let _ = writeln!(out, "## Notes\n");
        for note in &report.notes {
            let _ = writeln!(out, "- {}", escape_md(note));
        }
        for left in &s.pool_left_behind {
            let _ = writeln!(
                out,
                "- **Left behind by the pool pass's server**: {}",
                escape_md(left)
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// A Markdown table: `first` columns (left-aligned but for the last, a count), then `columns`,
/// then a `last` column.
fn markdown_table<Row>(
    out: &mut String,
    first: &[&str],
    columns: &[Column<Row>],
    last: &str,
    rows: &[Row],
    first_cells: impl Fn(&Row) -> Vec<String>,
    last_cell: impl Fn(&Row) -> String,
) {
    let titles: Vec<&str> = first
        .iter()
        .copied()
        .chain(columns.iter().map(|(_, title, _)| *title))
        .chain([last])
        .collect();
    let _ = writeln!(out, "| {} |", titles.join(" | "));
    let _ = writeln!(
        out,
        "|{}--:|{}--:|",
        "---|".repeat(first.len().saturating_sub(1)),
        "--:|".repeat(columns.len())
    );
    for r in rows {
        let cells: Vec<String> = first_cells(r)
            .into_iter()
            .chain(columns.iter().map(|(_, _, cell)| cell(r)))
            .chain([last_cell(r)])
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// The run's figures in one line, starting with `Headline:` (scripts collect these).
pub fn headline(report: &Report) -> String {
    let s = &report.summary;
    let mut parts = Vec::new();
    if s.attacks > 0 {
        let mut figures = Vec::new();
        if report.ran(Pass::Jail) {
            figures.push(format!(
                "contained by the jail alone {} ({})",
                s.attacks_contained_by_jail,
                pct(s.attacks_contained_by_jail, s.attacks)
            ));
        }
        if report.ran(Pass::Policy) {
            figures.push(format!(
                "denied statically {} ({})",
                s.attacks_denied_statically,
                pct(s.attacks_denied_statically, s.attacks)
            ));
        }
        if ran_runtime(report) {
            figures.push(format!(
                "stopped by the runtime layer alone {} ({})",
                s.attacks_stopped_by_runtime,
                pct(s.attacks_stopped_by_runtime, s.attacks)
            ));
        }
        let full_runs: usize = s.attack_matrix.iter().map(|r| r.full_runs).sum();
        if full_runs > 0 {
            figures.push(format!(
                "stopped by the full pipeline {}",
                s.attacks_stopped
            ));
        }
        if report.ran(Pass::Pool) {
            figures.push(format!(
                "through the warm pool {} contained of {} ({} warm, {} cold)",
                s.attacks_contained_in_pool,
                s.attacks_through_pool,
                s.attacks_warm_in_pool,
                s.attacks_through_pool - s.attacks_warm_in_pool
            ));
        }
        if report.ran_programs() {
            figures.push(format!("escapes {}", s.escapes));
        }
        parts.push(format!("attacks {}: {}", s.attacks, figures.join(", ")));
    }
    if s.benign > 0 {
        let ran: usize = s.benign_table.iter().map(|r| r.ran_ok).sum();
        let to_run: usize = s.benign_table.iter().map(|r| r.cases - r.not_run).sum();
        let allowed: usize = s.benign_table.iter().map(|r| r.allowed).sum();
        let policy_fps: usize = s.benign_table.iter().map(|r| r.false_positives).sum();
        let mut figures = Vec::new();
        if report.ran(Pass::Policy) {
            figures.push(format!(
                "allowed {allowed} ({}), false positives {policy_fps}",
                pct(allowed, s.benign),
            ));
        }
        if report.ran(Pass::Runtime) {
            figures.push(format!(
                "runtime false positives {}",
                s.runtime_false_positives
            ));
        }
        if to_run > 0 {
            figures.push(format!("ran ok {ran}/{to_run} ({})", pct(ran, to_run)));
        }
        if s.benign_through_pool > 0 {
            figures.push(format!(
                "through the warm pool {} ({} warm)",
                s.benign_through_pool, s.benign_warm_in_pool
            ));
        }
        if s.skipped > 0 {
            figures.push(format!("skipped {}", s.skipped));
        }
        parts.push(format!("benign {}: {}", s.benign, figures.join(", ")));
    }
    if s.harmless > 0 {
        let mut text = format!("harmless {} (reported apart)", s.harmless);
        if report.ran(Pass::Policy) {
            let denied: usize = s.harmless_table.iter().map(|r| r.denied_statically).sum();
            text.push_str(&format!(": denied statically {denied}"));
        }
        parts.push(text);
    }
    format!("Headline: {}.", parts.join("; "))
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

/// Benign runs that failed, counted by cause (the last line of stderr, or the status).
fn causes_table(out: &mut String, report: &Report) {
    let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &report.cases {
        if let Some(cause) = &c.cause {
            *causes.entry(cause.as_str()).or_default() += 1;
        }
    }
    if causes.is_empty() {
        return;
    }
    let mut causes: Vec<(&str, usize)> = causes.into_iter().collect();
    causes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(out, "### Why benign runs failed (most common first)\n");
    let _ = writeln!(out, "| cases | last line of stderr (or status) |");
    let _ = writeln!(out, "|--:|---|");
    for (cause, count) in causes.iter().take(15) {
        let _ = writeln!(
            out,
            "| {count} | `{}` |",
            escape_md(cause).replace('`', "'")
        );
    }
    if causes.len() > 15 {
        let rest: usize = causes.iter().skip(15).map(|(_, n)| n).sum();
        let _ = writeln!(out, "| {rest} | ({} other causes) |", causes.len() - 15);
    }
    let _ = writeln!(out);
}

fn escape_md(text: &str) -> String {
    text.replace('|', "\\|").replace('<', "&lt;")
}

// ---------------------------------------------------------------------------------------------
// JUnit

/// The report as JUnit XML: one test suite per corpus and group, one test case per case.
pub fn junit(report: &Report) -> String {
    let mut suites: BTreeMap<(String, String), Vec<&CaseResult>> = BTreeMap::new();
    for c in &report.cases {
        suites
            .entry((c.corpus.clone(), c.group.clone()))
            .or_default()
            .push(c);
    }
    let s = &report.summary;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"warden corpus\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        s.cases,
        s.failed,
        s.skipped,
        report.wall_ms as f64 / 1000.0
    );
    for ((corpus, group), cases) in suites {
        let failures = cases
            .iter()
            .filter(|c| c.outcome == CaseStatus::Fail)
            .count();
        let skipped = cases
            .iter()
            .filter(|c| c.outcome == CaseStatus::Skipped)
            .count();
        let time: u64 = cases.iter().map(|c| c.time_ms).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">",
            xml(&format!("{corpus}.{group}")),
            cases.len(),
            time as f64 / 1000.0
        );
        let properties = suite_properties(report, &corpus, &group);
        if !properties.is_empty() {
            let _ = writeln!(out, "    <properties>");
            for (name, value) in properties {
                let _ = writeln!(
                    out,
                    "      <property name=\"{}\" value=\"{}\"/>",
                    xml(name),
                    xml(&value)
                );
            }
            let _ = writeln!(out, "    </properties>");
        }
        for c in cases {
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
                xml(&format!("warden.corpus.{corpus}.{group}")),
                xml(&c.id),
                xml(&c.file),
                c.time_ms as f64 / 1000.0
            );
            let detail = case_detail(c);
            match c.outcome {
                CaseStatus::Fail => {
                    let first = c
                        .mismatches
                        .first()
                        .map(|m| m.message.as_str())
                        .unwrap_or("failed");
                    let kind = c
                        .mismatches
                        .first()
                        .map(|m| format!("{:?}", m.kind))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                        xml(&kind),
                        xml(first),
                        xml(&detail)
                    );
                }
                CaseStatus::Skipped => {
                    let why = c.notes.first().map(String::as_str).unwrap_or("skipped");
                    let _ = writeln!(
                        out,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        xml(why)
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        ">\n      <system-out>{}</system-out>\n    </testcase>",
                        xml(&detail)
                    );
                }
            }
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    let _ = writeln!(out, "</testsuites>");
    out
}

/// The matrix figures of one suite (a corpus and group), for the passes that ran: the attack
/// matrix's columns (`denied_statically`, `stopped_by_runtime`, `contained_by_jail`, `stopped`,
/// `escapes`) or the benign table's.
fn suite_properties(report: &Report, corpus: &str, group: &str) -> Vec<(&'static str, String)> {
    let s = &report.summary;
    let mut properties = Vec::new();
    if let Some(r) = s
        .attack_matrix
        .iter()
        .find(|r| r.corpus == corpus && r.group == group)
    {
        properties.push(("cases", r.cases.to_string()));
        if report.ran(Pass::Policy) {
            properties.push(("denied_statically", r.denied_statically.to_string()));
        }
        if report.ran(Pass::Runtime) && r.runtime_runs > 0 {
            properties.push(("stopped_by_runtime", r.stopped_by_runtime.to_string()));
        }
        if report.ran(Pass::Jail) {
            properties.push(("contained_by_jail", r.contained_by_jail.to_string()));
        }
        if report.ran(Pass::Full) && r.full_runs > 0 {
            properties.push(("stopped", r.stopped.to_string()));
        }
        if report.ran(Pass::Pool) {
            properties.push(("contained_in_pool", r.contained_in_pool.to_string()));
            properties.push(("warm_in_pool", r.warm_in_pool.to_string()));
        }
        if report.ran_programs() {
            properties.push(("escapes", r.escapes.to_string()));
        }
    }
    if let Some(r) = s
        .benign_table
        .iter()
        .find(|r| r.corpus == corpus && r.group == group)
    {
        properties.push(("benign", r.cases.to_string()));
        if report.ran(Pass::Policy) {
            properties.push(("allowed", r.allowed.to_string()));
            properties.push(("false_positives", r.false_positives.to_string()));
        }
        if report.ran(Pass::Runtime) {
            properties.push((
                "runtime_false_positives",
                r.runtime_false_positives.to_string(),
            ));
        }
        if report.ran_programs() {
            properties.push(("ran_ok", r.ran_ok.to_string()));
            properties.push(("regressions", r.regressions.to_string()));
        }
    }
    properties
}

/// A plain-text account of one case: passes, checks, mismatches, notes.
fn case_detail(c: &CaseResult) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{} — {}", c.id, c.technique);
    if let Some(v) = &c.policy {
        let _ = writeln!(text, "policy: {} ({})", v.decision, v.rules.join(" "));
    }
    for (name, pass) in [
        ("runtime (policy off, hooks on)", &c.runtime),
        ("jail (policy and hooks off)", &c.jail),
        ("full pipeline", &c.full),
        ("pool (warden serve's warm pool, static layer off)", &c.pool),
    ] {
        let Some(p) = pass else { continue };
        let _ = write!(
            text,
            "{name}: status {} exit {:?} in {}",
            p.status.as_deref().unwrap_or("(no record)"),
            p.exit_code,
            secs(p.time_ms)
        );
        if let Some(stopped) = &p.stopped_by {
            let _ = write!(text, ", stopped by {stopped}");
        }
        if let Some(other) = p.same_run_as {
            let _ = write!(text, " (the {other} pass's run)");
        }
        if let Some(warm) = p.warm {
            let _ = write!(text, ", {}", if warm { "warm" } else { "cold" });
        }
        let _ = writeln!(text);
        if p.same_run_as.is_some() {
            continue;
        }
        for check in &p.checks {
            let mark = match check.verdict {
                Verdict::Held => "held",
                Verdict::Breached => "BREACHED",
                Verdict::Unverifiable => "UNVERIFIABLE",
                Verdict::NotApplicable => "n/a",
            };
            let _ = writeln!(text, "  {mark:<12} {} {}", check.effect, check.evidence);
        }
    }
    for m in &c.mismatches {
        let _ = writeln!(text, "mismatch [{}] {:?}: {}", m.pass, m.kind, m.message);
    }
    for n in &c.notes {
        let _ = writeln!(text, "note: {n}");
    }
    text
}

/// Escapes text for XML attributes and content, dropping characters XML 1.0 cannot carry.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn result(id: &str, kind: &'static str, group: &str) -> CaseResult {
        CaseResult {
            id: id.to_owned(),
            corpus: "corpus".to_owned(),
            group: group.to_owned(),
            kind,
            file: format!("corpus/{id}.py"),
            technique: "t".to_owned(),
            expect_static: None,
            effects: Vec::new(),
            policy: Some(StaticVerdict {
                decision: "deny".to_owned(),
                rules: vec!["IMP101".to_owned()],
            }),
            denied_statically: true,
            runtime: None,
            stopped_by_runtime: None,
            jail: None,
            contained: Some(true),
            full: None,
            stopped: Some(true),
            pool: None,
            contained_in_pool: None,
            outcome: CaseStatus::Pass,
            mismatches: Vec::new(),
            cause: None,
            notes: Vec::new(),
            time_ms: 1500,
        }
    }

    fn report(cases: Vec<CaseResult>) -> Report {
        Report {
            warden: "warden".to_owned(),
            rules: None,
            passes: Pass::ALL.to_vec(),
            run_as: None,
            jobs: 2,
            wall_ms: 61_000,
            corpora: Vec::new(),
            notes: vec!["a <note>".to_owned()],
            summary: Report::summarise(&cases),
            cases,
        }
    }

    #[test]
    fn the_matrix_counts_each_layer() {
        let mut escaped = result("j-escape", "attack", "J");
        escaped.denied_statically = false;
        escaped.contained = Some(false);
        escaped.stopped = Some(false);
        escaped.mismatch(
            MismatchKind::Escape,
            "jail",
            "no-connect tcp4:127.0.0.1:5758: 1 event(s)".to_owned(),
        );
        escaped.finish();
        let mut fp = result("pandas-x", "benign", "BENIGN");
        fp.mismatch(MismatchKind::FalsePositive, "policy", "denied".to_owned());
        fp.finish();
        let report = report(vec![result("a-one", "attack", "A"), escaped, fp]);
        let s = &report.summary;
        assert_eq!(
            (s.attacks, s.escapes, s.false_positives, s.failed),
            (2, 1, 1, 2)
        );
        assert_eq!(s.attack_matrix.len(), 2);
        assert_eq!(s.attack_matrix[0].group, "A");
        assert_eq!(s.attack_matrix[1].escapes, 1);
        assert!(!report.passed());
        let text = human(&report);
        assert!(text.contains("FAILED (2 cases)"), "{text}");
        assert!(
            text.contains("[jail] Escape: no-connect tcp4:127.0.0.1:5758"),
            "{text}"
        );
        let md = markdown(&report);
        assert!(
            md.contains("| corpus | A | 1 | 1 (100%) | – | 1 (100%) | 1 | 1 | 0 | 1.5s |"),
            "{md}"
        );
        assert!(md.contains("a &lt;note>"));
        // No case had a runtime pass (a warden without hooks): no runtime figure.
        assert!(!headline(&report).contains("runtime layer"), "{md}");
    }

    /// A runtime pass's result: stopped by the runtime layer with `rule`, or ended with `status`.
    fn runtime_run(status: &str, rule: Option<&str>) -> PassResult {
        PassResult {
            status: Some(status.to_owned()),
            exit_code: Some(1),
            warden_exit_code: Some(0),
            time_ms: 200,
            stopped_by: rule.map(|rule| StoppedBy {
                layer: "runtime".to_owned(),
                rule: Some(rule.to_owned()),
                event: Some("os.system".to_owned()),
                errno: None,
            }),
            same_run_as: None,
            warm: None,
            checks: Vec::new(),
        }
    }

    #[test]
    fn the_pool_pass_counts_contained_and_warm_runs_and_fails_cold_ones() {
        let pooled = |warm: bool| PassResult {
            warm: Some(warm),
            ..runtime_run("error", Some("PROC801"))
        };
        let mut warm = result("j-os-system", "attack", "J");
        warm.pool = Some(pooled(true));
        warm.contained_in_pool = Some(true);
        let mut cold = result("j-os-popen", "attack", "J");
        cold.pool = Some(pooled(false));
        cold.contained_in_pool = Some(true);
        cold.mismatch(MismatchKind::Cold, "pool", "ran cold".to_owned());
        let mut not_sent = result("l-latin1", "attack", "L");
        not_sent.notes.push("not sent through the pool".to_owned());
        let mut benign = result("pandas-groupby", "benign", "BENIGN");
        benign.denied_statically = false;
        benign.pool = Some(PassResult {
            warm: Some(true),
            ..runtime_run("ok", None)
        });
        for c in [&mut warm, &mut cold, &mut not_sent, &mut benign] {
            c.finish();
        }
        let mut report = report(vec![warm, cold, not_sent, benign]);
        report.passes = vec![Pass::Pool];
        let s = &report.summary;
        assert_eq!(
            (
                s.attacks_through_pool,
                s.attacks_contained_in_pool,
                s.attacks_warm_in_pool,
                s.attacks_cold_in_pool
            ),
            (2, 2, 1, 1)
        );
        assert!(!report.passed());
        let md = markdown(&report);
        assert!(
            md.contains("| corpus | group | cases | pool | warm | escapes |"),
            "{md}"
        );
        assert!(
            md.contains("| corpus | J | 2 | 2 (100%) | 1/2 | 0 |"),
            "{md}"
        );
        assert!(md.contains("| corpus | L | 1 | 0 (–) | 0/0 | 0 |"), "{md}");
        assert!(
            headline(&report)
                .contains("through the warm pool 2 contained of 2 (1 warm, 1 cold), escapes 0"),
            "{}",
            headline(&report)
        );
        assert!(
            headline(&report).contains("through the warm pool 1 (1 warm)"),
            "{}",
            headline(&report)
        );
        let human = human(&report);
        assert!(human.contains("pool:PROC801/warm"), "{human}");
        assert!(human.contains("pool:PROC801/cold"), "{human}");
        assert!(human.contains("[pool] Cold: ran cold"), "{human}");
        // What the server left behind fails the run, whatever the cases say.
        let mut clean = report.clone();
        clean.cases.retain(|c| c.outcome == CaseStatus::Pass);
        clean.summary = Report::summarise(&clean.cases);
        assert!(clean.passed());
        clean.summary.pool_left_behind = vec!["python3 (pid 7) outlived the server".to_owned()];
        assert!(!clean.passed());
        assert!(markdown(&clean).contains("**Left behind by the pool pass's server**"));
    }

    #[test]
    fn the_runtime_column_counts_attacks_the_hooks_stopped() {
        let mut stopped = result("j-os-system", "attack", "J");
        stopped.runtime = Some(runtime_run("error", Some("PROC801")));
        stopped.stopped_by_runtime = Some(true);
        let mut missed = result("j-rt-missed", "attack", "J");
        missed.runtime = Some(runtime_run("ok", None));
        missed.stopped_by_runtime = Some(false);
        missed.mismatch(
            MismatchKind::Runtime,
            "runtime",
            "expected the runtime layer to stop it with PROC801, but no layer stopped it"
                .to_owned(),
        );
        missed.finish();
        let mut shared = result("a-allowed", "attack", "A");
        shared.denied_statically = false;
        shared.runtime = Some(runtime_run("error", Some("ATTR303")).shared_from(Pass::Full));
        shared.stopped_by_runtime = Some(true);
        let mut fp = result("pandas-y", "benign", "BENIGN");
        fp.denied_statically = false;
        fp.runtime = Some(runtime_run("error", Some("IMP101")));
        fp.mismatch(
            MismatchKind::FalsePositive,
            "runtime",
            "benign code was stopped by the runtime layer".to_owned(),
        );
        fp.finish();
        let report = report(vec![stopped, missed, shared, fp]);
        let s = &report.summary;
        assert_eq!(
            (
                s.attacks_stopped_by_runtime,
                s.runtime_mismatches,
                s.false_positives,
                s.runtime_false_positives
            ),
            (2, 1, 1, 1)
        );
        let j = s.attack_matrix.iter().find(|r| r.group == "J").unwrap();
        assert_eq!((j.stopped_by_runtime, j.runtime_runs), (1, 2));
        assert_eq!(s.benign_table[0].false_positives, 0, "not the policy's");
        assert_eq!(s.benign_table[0].runtime_false_positives, 1);
        assert_eq!(s.benign_table[0].ran_ok, 0);

        let md = markdown(&report);
        assert!(
            md.contains("| corpus | group | cases | policy | runtime | jail | both | stopped | escapes | time (sum) |"),
            "{md}"
        );
        assert!(
            md.contains("| corpus | J | 2 | 2 (100%) | 1 (50%) | 2 (100%) | 2 | 2 | 0 | 3.0s |"),
            "{md}"
        );
        assert!(
            md.contains("| corpus | A | 1 | 0 (0%) | 1 (100%) |"),
            "{md}"
        );
        assert!(md.contains("*Runtime*: the runtime layer alone"), "{md}");
        assert!(md.contains("runtime false positives"), "{md}");
        assert!(
            md.contains(
                "runtime pass, Runtime: expected the runtime layer to stop it with PROC801"
            ),
            "{md}"
        );
        let line = headline(&report);
        assert!(
            line.contains("stopped by the runtime layer alone 2 (67%)")
                && line.contains("runtime false positives 1"),
            "{line}"
        );

        let text = human(&report);
        let case_line = text.lines().find(|l| l.contains("j-os-system")).unwrap();
        assert!(case_line.contains("runtime:PROC801"), "{case_line}");
        assert!(
            text.lines()
                .find(|l| l.contains("j-rt-missed") && l.starts_with("FAIL"))
                .is_some_and(|l| l.contains("runtime:ok")),
            "{text}"
        );
        assert!(
            text.contains("2 stopped by the runtime layer alone"),
            "{text}"
        );
        let head = text.lines().find(|l| l.starts_with("Attacks")).unwrap();
        assert!(head.contains("runtime"), "{head}");

        let xml_text = junit(&report);
        assert!(
            xml_text.contains("<property name=\"stopped_by_runtime\" value=\"1\"/>"),
            "{xml_text}"
        );
        assert!(
            xml_text.contains("<property name=\"runtime_false_positives\" value=\"1\"/>"),
            "{xml_text}"
        );
        assert!(
            xml_text.contains(
                "runtime (policy off, hooks on): status error exit Some(1) in 0.2s, stopped by runtime PROC801 (os.system)"
            ),
            "{xml_text}"
        );
        assert!(
            xml_text.contains("stopped by runtime ATTR303 (os.system) (the full pass&apos;s run)"),
            "{xml_text}"
        );
        assert_eq!(
            xml_text.matches("<properties>").count(),
            xml_text.matches("<testsuite ").count()
        );

        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["passes"][1], "runtime");
        assert_eq!(json["summary"]["attacks_stopped_by_runtime"], 2);
        assert_eq!(json["cases"][0]["runtime"]["stopped_by"]["rule"], "PROC801");
        assert_eq!(json["cases"][2]["runtime"]["same_run_as"], "full");
        assert!(json["cases"][0]["runtime"].get("same_run_as").is_none());

        // Without the runtime pass, nothing of it shows.
        let mut without = report.clone();
        without.passes = vec![Pass::Policy, Pass::Jail, Pass::Full];
        let md = markdown(&without);
        for absent in [
            "| runtime |",
            "*Runtime*",
            "runtime layer alone",
            "runtime false",
        ] {
            assert!(!md.contains(absent), "{absent} in {md}");
        }
        assert!(!human(&without).contains("runtime:"));
        assert!(!junit(&without).contains("stopped_by_runtime"));
    }

    #[test]
    fn junit_is_well_formed_and_carries_failures() {
        let mut bad = result("k-\"quoted\"<&>", "attack", "K");
        bad.mismatch(
            MismatchKind::Escape,
            "jail",
            "evil \u{1b}[31m text".to_owned(),
        );
        bad.finish();
        let mut skipped = result("ds-1", "skipped", "Pandas");
        skipped.notes.push("needs network".to_owned());
        skipped.finish();
        let xml_text = junit(&report(vec![bad, skipped, result("a-1", "attack", "A")]));
        assert!(
            xml_text.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
            "{xml_text}"
        );
        assert!(xml_text.contains("name=\"k-&quot;quoted&quot;&lt;&amp;&gt;\""));
        assert!(xml_text.contains("<failure type=\"Escape\""));
        assert!(xml_text.contains("<skipped message=\"needs network\"/>"));
        assert!(!xml_text.contains('\u{1b}'));
        let opens = xml_text.matches("<testcase ").count();
        let closes = xml_text.matches("</testcase>").count();
        assert_eq!(opens, closes);
    }
}
