//! Benign and harmless programs: judged by the policy, then run once, in the fullest selected
//! pass, where a benign program must end well and print its expected output and a harmless one is
//! only reported.
//!
//! Owns: which pass runs such a program and judging how a benign run ended (a regression, or a
//! false positive of the policy or of the runtime layer). Does not own: the pool pass
//! (`pool_pass.rs`) or the report (`report.rs`).

use super::{list_or_none, output_dir};
use crate::case::{BenignSpec, Case};
use crate::exec::{Finished, Record, StaticVerdict, Warden};
use crate::fixtures::Fixtures;
use crate::pass::{Pass, Passes, RunFlags};
use crate::report::{CaseResult, MismatchKind, PassResult};
use crate::verify;

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

/// A benign program: allowed by the policy, then run once in the fullest selected pass, where it
/// must end with status ok and print its `expect-output`. With the runtime pass selected it must
/// also get past the runtime layer: the run with the hooks on (the full pipeline's, or a runtime
/// pass of its own when no such run was made, e.g. because the policy denied it) is the runtime
/// pass's, and a program the runtime layer stopped is a false positive of that layer.
pub(super) fn benign(
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

/// Judges how a benign program's run ended (`pass` names the pass in mismatches): a record with
/// status ok, exit code 0 and the expected output, else a regression (or, when the runtime layer
/// stopped it, a false positive of that layer).
pub(super) fn judge_benign(
    spec: &BenignSpec,
    pass: &'static str,
    finished: &Finished,
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

pub(super) fn harmless(
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
                let survivors = crate::exec::reap_survivors(seen);
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_keeps_the_end() {
        assert_eq!(last_lines("a\nb\nc\nd\n", 2), "\nc\nd");
        assert_eq!(last_lines("one", 3), "one");
    }
}
