//! The pool pass of a case: an attack, or a benign program, sent to the runner's `warden serve`
//! (warm pool on, static layer off) and judged as the other passes judge `warden run`, and then on
//! whether a pooled jail ran it.
//!
//! Owns: the pool pass's outcome (contained in the pool, run warm, stopped by the expected runtime
//! rule) and when a cold run is excused. Does not own: the servers and their HTTP API (`pool.rs`)
//! or the checks (`verify.rs`).

use super::attack::{all_held, report_checks, runtime_outcome, Run};
use super::benign::judge_benign;
use super::output_dir;
use crate::case::{AttackSpec, BenignSpec, Case};
use crate::effects::Effect;
use crate::exec::Record;
use crate::pool::{Pool, PoolRun, Program};
use crate::report::{CaseResult, MismatchKind, PassResult};
use crate::verify::{CaseEnv, Observation};

/// The pool pass: the attack sent to the runner's `warden serve` (warm pool on, static layer
/// off), judged from the host side as the runtime pass judges `warden run --no-policy` — an
/// effect that happened is an escape — with the server's environment secret as the case's. The
/// record must say `"warm": true`; a cold run fails the case unless the record says why (the
/// static layer's source rules refused the program: nothing ran). A `no-persist` case runs twice,
/// both warm, and the second must print what the first did. A case's `expect-runtime` holds here
/// too: the runtime layer judges a pooled program as a cold one.
pub(super) fn pool_pass(
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
    let cells = crate::session::cells(&bytes);
    let program = match &cells {
        Some(cells) => Program::Session(cells),
        None => Program::Run(&text),
    };
    let own_secret = std::mem::replace(&mut env.env_secret, server.env_secret.clone());
    let out = output_dir(run.fixtures, run.warden, case, "pool");
    let first = server.run(program, out.as_deref());
    let mut checks = run.check(
        env,
        &Observation::of(
            &first.finished,
            first.record.as_ref(),
            first.output_dir.as_deref(),
        ),
    );
    let mut warm = vec![(first.warm, first.record.clone())];
    keep_notes(&first, result);
    if run.effects.contains(&Effect::NoPersist) {
        let out2 = output_dir(run.fixtures, run.warden, case, "pool-again");
        let second = server.run(program, out2.as_deref());
        run.check_again(
            env,
            &mut checks,
            first.record.as_ref(),
            Observation::of(
                &second.finished,
                second.record.as_ref(),
                second.output_dir.as_deref(),
            ),
        );
        keep_notes(&second, result);
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

/// A benign program through the pool pass (after the policy allowed it, when that pass ran): it
/// must run warm, end ok and print its `expect-output`, as in the other passes.
pub(super) fn benign_pool(case: &Case, spec: &BenignSpec, server: &Pool, result: &mut CaseResult) {
    let Ok(text) = std::fs::read_to_string(&case.file) else {
        result
            .notes
            .push("not sent through the pool: the file is not UTF-8".to_owned());
        return;
    };
    let done = server.run(Program::Run(&text), None);
    keep_notes(&done, result);
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

/// Carries a pooled run's notes over into the case's, as the pool pass's.
fn keep_notes(run: &PoolRun, result: &mut CaseResult) {
    result
        .notes
        .extend(run.notes.iter().map(|n| format!("pool: {n}")));
}
