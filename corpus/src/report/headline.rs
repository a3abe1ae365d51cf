//! The corpus report's figures in one line (`Headline: …`), which the Markdown report carries
//! and scripts collect.

use super::{pct, ran_runtime, Pass, Report};

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
