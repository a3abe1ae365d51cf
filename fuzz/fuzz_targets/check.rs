//! Feeds arbitrary bytes to the policy checker, as `warden check` and `warden run` do.
//!
//! A panic, a stack overflow or a broken invariant (a report whose decision is not the strictest
//! action of its findings, or a span outside the source) is a crash. See docs/fuzzing.md.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use warden_policy::{Decision, Policy};

fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"))
    })
}

fuzz_target!(|bytes: &[u8]| {
    let report = warden_policy::check_on_worker(bytes, policy());
    assert_eq!(report.decision, Decision::of(&report.findings));
    let len = report
        .decoded
        .as_ref()
        .map_or(bytes.len(), |decoded| decoded.text.len());
    for finding in &report.findings {
        let span = finding.span;
        assert!(span.line >= 1 && span.column >= 1, "{finding:?}");
        assert!(
            span.start_byte <= span.end_byte && span.end_byte <= len,
            "{finding:?}"
        );
    }
    // An internal failure is reported as a deny finding; for the fuzzer it is a crash.
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.message.contains("could not finish")),
        "the checker failed on this input"
    );
});
