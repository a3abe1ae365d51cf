//! The corpus report as JUnit XML, for CI systems that show test results.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{secs, CaseResult, CaseStatus, Pass, Report, Verdict};

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
