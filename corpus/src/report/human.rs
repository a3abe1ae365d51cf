//! The corpus report for a terminal (`warden corpus run`, the default format).

use std::fmt::Write as _;

use super::{
    attack_columns, benign_columns, harmless_columns, minutes, pass_word, pct, pool_word,
    ran_runtime, runtime_word, secs, CaseResult, CaseStatus, Pass, Report,
};

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
