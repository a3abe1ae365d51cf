//! The corpus report as Markdown: what `corpus/REPORT.md` holds.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{
    attack_columns, benign_columns, harmless_columns, headline, minutes, pass_word, pct, secs,
    AttackRow, CaseResult, CaseStatus, Column, Pass, Report,
};

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
