//! Prometheus metrics (text exposition format 0.0.4), kept by hand: a few counters, two gauges read
//! at scrape time, and one histogram.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Upper bounds of the run-duration histogram, in seconds.
const BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Default)]
struct Counters {
    runs: BTreeMap<String, u64>,
    checks: BTreeMap<String, u64>,
    denials: BTreeMap<String, u64>,
    rejected: BTreeMap<String, u64>,
    sessions_created: u64,
    sessions_ended: BTreeMap<String, u64>,
    cells: BTreeMap<String, u64>,
    bucket_counts: [u64; BUCKETS.len()],
    duration_sum: f64,
    duration_count: u64,
}

#[derive(Debug, Default)]
pub struct Metrics {
    counters: Mutex<Counters>,
}

/// Values read when the metrics are scraped.
#[derive(Debug, Clone, Copy)]
pub struct Gauges {
    pub queued: usize,
    pub running: usize,
    pub max_running: usize,
    pub sessions: usize,
    pub max_sessions: usize,
}

impl Metrics {
    /// A finished run: its status, its duration (admission to reply) and the rules that denied it.
    pub fn run(&self, status: &str, seconds: f64, denying_rules: &[String]) {
        if let Ok(mut c) = self.counters.lock() {
            *c.runs.entry(status.to_owned()).or_default() += 1;
            for (i, bound) in BUCKETS.iter().enumerate() {
                if seconds <= *bound {
                    c.bucket_counts[i] += 1;
                }
            }
            c.duration_sum += seconds;
            c.duration_count += 1;
            for rule in denying_rules {
                *c.denials.entry(rule.clone()).or_default() += 1;
            }
        }
    }

    /// A finished check and the rules behind a denial.
    pub fn check(&self, decision: &str, denying_rules: &[String]) {
        if let Ok(mut c) = self.counters.lock() {
            *c.checks.entry(decision.to_owned()).or_default() += 1;
            for rule in denying_rules {
                *c.denials.entry(rule.clone()).or_default() += 1;
            }
        }
    }

    /// A session started.
    pub fn session_created(&self) {
        if let Ok(mut c) = self.counters.lock() {
            c.sessions_created += 1;
        }
    }

    /// A session ended, and why (`closed`, `idle_timeout`, `max_lifetime`, `session_lost`…).
    pub fn session_ended(&self, reason: &str) {
        if let Ok(mut c) = self.counters.lock() {
            *c.sessions_ended.entry(reason.to_owned()).or_default() += 1;
        }
    }

    /// A session's cell judged (and run when allowed): its status and the rules that denied it.
    pub fn cell(&self, status: &str, denying_rules: &[String]) {
        if let Ok(mut c) = self.counters.lock() {
            *c.cells.entry(status.to_owned()).or_default() += 1;
            for rule in denying_rules {
                *c.denials.entry(rule.clone()).or_default() += 1;
            }
        }
    }

    /// A request turned away (`queue_full`, `queue_timeout`, `shutting_down`, `unauthorized`…).
    pub fn rejected(&self, reason: &str) {
        if let Ok(mut c) = self.counters.lock() {
            *c.rejected.entry(reason.to_owned()).or_default() += 1;
        }
    }

    /// The exposition text.
    pub fn render(&self, gauges: Gauges) -> String {
        let mut out = String::new();
        let Ok(c) = self.counters.lock() else {
            return out;
        };
        let family = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        family(
            &mut out,
            "warden_build_info",
            "gauge",
            "The running warden's version and the commit it was built from (always 1).",
        );
        let _ = writeln!(
            out,
            "warden_build_info{{version=\"{}\",commit=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION"),
            env!("WARDEN_COMMIT")
        );
        family(
            &mut out,
            "warden_runs_total",
            "counter",
            "Runs finished, by result status.",
        );
        for (status, n) in &c.runs {
            let _ = writeln!(out, "warden_runs_total{{status=\"{status}\"}} {n}");
        }
        family(
            &mut out,
            "warden_checks_total",
            "counter",
            "Checks finished, by decision.",
        );
        for (decision, n) in &c.checks {
            let _ = writeln!(out, "warden_checks_total{{decision=\"{decision}\"}} {n}");
        }
        family(
            &mut out,
            "warden_policy_denials_total",
            "counter",
            "Denying findings of checks and runs, by rule id.",
        );
        for (rule, n) in &c.denials {
            let _ = writeln!(out, "warden_policy_denials_total{{rule=\"{rule}\"}} {n}");
        }
        family(
            &mut out,
            "warden_requests_rejected_total",
            "counter",
            "Requests turned away before judgement, by reason.",
        );
        for (reason, n) in &c.rejected {
            let _ = writeln!(
                out,
                "warden_requests_rejected_total{{reason=\"{reason}\"}} {n}"
            );
        }
        family(
            &mut out,
            "warden_run_duration_seconds",
            "histogram",
            "Time from admission to result of each run.",
        );
        for (bound, n) in BUCKETS.iter().zip(c.bucket_counts.iter()) {
            let _ = writeln!(
                out,
                "warden_run_duration_seconds_bucket{{le=\"{bound}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "warden_run_duration_seconds_bucket{{le=\"+Inf\"}} {}\nwarden_run_duration_seconds_sum {}\nwarden_run_duration_seconds_count {}",
            c.duration_count, c.duration_sum, c.duration_count
        );
        family(
            &mut out,
            "warden_queue_depth",
            "gauge",
            "Run requests waiting for a slot.",
        );
        let _ = writeln!(out, "warden_queue_depth {}", gauges.queued);
        family(
            &mut out,
            "warden_runs_in_flight",
            "gauge",
            "Runs executing now.",
        );
        let _ = writeln!(out, "warden_runs_in_flight {}", gauges.running);
        family(
            &mut out,
            "warden_max_concurrent_runs",
            "gauge",
            "The configured run slots.",
        );
        let _ = writeln!(out, "warden_max_concurrent_runs {}", gauges.max_running);
        family(
            &mut out,
            "warden_sessions_created_total",
            "counter",
            "Sessions started.",
        );
        let _ = writeln!(out, "warden_sessions_created_total {}", c.sessions_created);
        family(
            &mut out,
            "warden_sessions_ended_total",
            "counter",
            "Sessions ended, by reason.",
        );
        for (reason, n) in &c.sessions_ended {
            let _ = writeln!(
                out,
                "warden_sessions_ended_total{{reason=\"{reason}\"}} {n}"
            );
        }
        family(
            &mut out,
            "warden_session_cells_total",
            "counter",
            "Session cells judged (and run when allowed), by status.",
        );
        for (status, n) in &c.cells {
            let _ = writeln!(out, "warden_session_cells_total{{status=\"{status}\"}} {n}");
        }
        family(
            &mut out,
            "warden_sessions_active",
            "gauge",
            "Sessions alive now (starting ones included).",
        );
        let _ = writeln!(out, "warden_sessions_active {}", gauges.sessions);
        family(
            &mut out,
            "warden_max_sessions",
            "gauge",
            "The configured session cap.",
        );
        let _ = writeln!(out, "warden_max_sessions {}", gauges.max_sessions);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_every_family() {
        let metrics = Metrics::default();
        metrics.run("ok", 0.07, &[]);
        metrics.run("denied", 0.01, &["IMP101".to_owned()]);
        metrics.check("deny", &["REF201".to_owned()]);
        metrics.rejected("queue_full");
        metrics.session_created();
        metrics.session_ended("idle_timeout");
        metrics.cell("denied", &["IMP101".to_owned()]);
        metrics.cell("ok", &[]);
        let text = metrics.render(Gauges {
            queued: 3,
            running: 2,
            max_running: 2,
            sessions: 1,
            max_sessions: 4,
        });
        for line in [
            "warden_runs_total{status=\"ok\"} 1",
            "warden_runs_total{status=\"denied\"} 1",
            "warden_policy_denials_total{rule=\"IMP101\"} 2",
            "warden_sessions_created_total 1",
            "warden_sessions_ended_total{reason=\"idle_timeout\"} 1",
            "warden_session_cells_total{status=\"denied\"} 1",
            "warden_session_cells_total{status=\"ok\"} 1",
            "warden_sessions_active 1",
            "warden_max_sessions 4",
            "warden_policy_denials_total{rule=\"REF201\"} 1",
            "warden_requests_rejected_total{reason=\"queue_full\"} 1",
            "warden_run_duration_seconds_bucket{le=\"0.05\"} 1",
            "warden_run_duration_seconds_bucket{le=\"0.1\"} 2",
            "warden_run_duration_seconds_count 2",
            "warden_queue_depth 3",
            "warden_runs_in_flight 2",
            concat!(
                "warden_build_info{version=\"",
                env!("CARGO_PKG_VERSION"),
                "\",commit=\"",
                env!("WARDEN_COMMIT"),
                "\"} 1"
            ),
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
        }
    }
}
