//! One attack through the passes that run it: the policy pass's expectations, then its jail-only,
//! full and runtime-only runs, each judged from the host side (a `no-persist` case twice).
//!
//! Owns: the order of the passes, what each one's outcome is (contained by the jail, stopped by the
//! pipeline, stopped by the runtime layer) and turning the checks that did not hold into mismatches.
//! Does not own: the checks (`verify.rs`), the pool pass (`pool_pass.rs`) or the shared targets a
//! case holds while it runs (`queue.rs`).

use std::path::PathBuf;

use super::{list_or_none, output_dir, pool_pass::pool_pass};
use crate::case::{AttackSpec, Case};
use crate::effects::Effect;
use crate::exec::{Finished, Record, StaticVerdict, Warden};
use crate::fixtures::Fixtures;
use crate::header::ExpectStatic;
use crate::pass::{Pass, Passes};
use crate::pool::Pool;
use crate::report::{CaseResult, MismatchKind, PassResult};
use crate::verify::{self, CaseEnv, Observation, Verdict};

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

/// One attack: the static expectations, then its runs (its shared targets are held by the
/// [`Queue`](super::queue::Queue) while it runs).
pub(super) fn attack(
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
            let run = Run {
                effects: &effects,
                fixtures,
                warden,
            };
            if passes.contains(Pass::Jail) {
                jail_pass(case, &run, &mut env, result);
            }
            let mut ran_in_full = None;
            if passes.contains(Pass::Full) && warden.full_pipeline.is_ok() {
                ran_in_full = full_pass(case, &run, &mut env, result);
            }
            if passes.contains(Pass::Runtime) && warden.supports(Pass::Runtime) {
                runtime_pass(case, spec, &run, &mut env, ran_in_full, result);
            }
            if let Some(server) = pool {
                pool_pass(case, spec, &run, server, &mut env, result);
            }
        }
    }
}

/// What every run of one attack shares.
pub(super) struct Run<'a> {
    pub(super) effects: &'a [Effect],
    pub(super) fixtures: &'a Fixtures,
    pub(super) warden: &'a Warden,
}

impl Run<'_> {
    /// The host-side checks of one run of the attack.
    pub(super) fn check(
        &self,
        env: &mut CaseEnv,
        observation: &Observation<'_>,
    ) -> Vec<verify::Check> {
        verify::check_pass(self.effects, self.fixtures, env, observation)
    }

    /// Checks the second run of a `no-persist` case (`second`), which must not print what the
    /// first (`first`, its record) printed, and keeps in `checks` the worse verdict of each effect.
    pub(super) fn check_again(
        &self,
        env: &mut CaseEnv,
        checks: &mut Vec<verify::Check>,
        first: Option<&Record>,
        second: Observation<'_>,
    ) {
        let printed = first.map(|r| r.stdout.as_str()).unwrap_or_default();
        let again = self.check(
            env,
            &Observation {
                first_stdout: Some(printed),
                ..second
            },
        );
        merge(checks, again);
    }
}

/// Records the checks that did not hold as mismatches of `pass`: escapes and unverifiable checks.
pub(super) fn report_checks(checks: &[verify::Check], pass: &'static str, result: &mut CaseResult) {
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
pub(super) fn all_held(checks: &[verify::Check]) -> bool {
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
            let Some((finished, record, out)) =
                run_pass(case, run, Pass::Runtime, &env.env(), result)
            else {
                return;
            };
            let checks = run.check(
                env,
                &Observation::of(&finished, record.as_ref(), out.as_deref()),
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
pub(super) fn runtime_outcome(record: Option<&Record>) -> String {
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
    run: &Run<'_>,
    pass: Pass,
    env: &[(String, String)],
    result: &mut CaseResult,
) -> Option<(Finished, Option<Record>, Option<PathBuf>)> {
    let out = output_dir(run.fixtures, run.warden, case, pass.as_str());
    match run.warden.run(&case.file, pass, out.as_deref(), env, true) {
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

fn jail_pass(case: &Case, run: &Run<'_>, env: &mut CaseEnv, result: &mut CaseResult) {
    let Some((finished, record, out)) = run_pass(case, run, Pass::Jail, &env.env(), result) else {
        return;
    };
    let mut checks = run.check(
        env,
        &Observation {
            jail_only: true,
            ..Observation::of(&finished, record.as_ref(), out.as_deref())
        },
    );
    if run.effects.contains(&Effect::NoPersist) {
        let out2 = output_dir(run.fixtures, run.warden, case, "jail-again");
        match run
            .warden
            .run(&case.file, Pass::Jail, out2.as_deref(), &env.env(), true)
        {
            Ok(second) => {
                let record2 = Record::parse(&second.stdout);
                run.check_again(
                    env,
                    &mut checks,
                    record.as_ref(),
                    Observation::of(&second, record2.as_ref(), out2.as_deref()),
                );
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
    run: &Run<'_>,
    env: &mut CaseEnv,
    result: &mut CaseResult,
) -> Option<(PassResult, Option<Record>)> {
    let (finished, record, out) = run_pass(case, run, Pass::Full, &env.env(), result)?;
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
        run.check(
            env,
            &Observation::of(&finished, record.as_ref(), out.as_deref()),
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
