//! The server's metrics in `GET /metrics` (Prometheus text exposition format 0.0.4), kept and
//! written by the Prometheus project's client (`prometheus-client`): counters of runs, checks,
//! denials, rejections, sessions and cells; the run-duration histogram; gauges read at scrape
//! time; the build's info.
//!
//! Owns: the `warden_*` families of the server, their help and labels. Does not own: the pool's
//! (`pool/metrics.rs`), or when something is counted (the service).

use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Metric, Registry};

/// Upper bounds of the run-duration histogram, in seconds.
const BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// A label set of one label (`status`, `rule`, …) and its value.
pub(crate) type Label = [(&'static str, String); 1];

/// Registers `metric` under `name`; `help` as written (the client adds the final full stop).
pub(crate) fn register(registry: &mut Registry, name: &str, help: &str, metric: impl Metric) {
    registry.register(name, help.trim_end_matches('.'), metric);
}

/// `registry` in the exposition format.
pub(crate) fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String does not fail.
    let _ = prometheus_text::encode(&mut out, registry);
    out
}

pub struct Metrics {
    registry: Registry,
    runs: Family<Label, Counter>,
    checks: Family<Label, Counter>,
    denials: Family<Label, Counter>,
    rejected: Family<Label, Counter>,
    run_duration: Histogram,
    sessions_created: Counter,
    sessions_ended: Family<Label, Counter>,
    cells: Family<Label, Counter>,
    queued: Gauge,
    running: Gauge,
    max_running: Gauge,
    sessions: Gauge,
    max_sessions: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let metrics = Metrics {
            registry: Registry::default(),
            runs: Family::default(),
            checks: Family::default(),
            denials: Family::default(),
            rejected: Family::default(),
            run_duration: Histogram::new(BUCKETS),
            sessions_created: Counter::default(),
            sessions_ended: Family::default(),
            cells: Family::default(),
            queued: Gauge::default(),
            running: Gauge::default(),
            max_running: Gauge::default(),
            sessions: Gauge::default(),
            max_sessions: Gauge::default(),
        };
        metrics.registered()
    }
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

fn label(name: &'static str, value: &str) -> Label {
    [(name, value.to_owned())]
}

fn gauge_value(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Metrics {
    /// The families in the order `/metrics` shows them (each metric is shared with the registry).
    fn registered(mut self) -> Self {
        let r = &mut self.registry;
        let info: Info<Vec<(&'static str, &'static str)>> = Info::new(vec![
            ("version", env!("CARGO_PKG_VERSION")),
            ("commit", env!("WARDEN_COMMIT")),
        ]);
        register(
            r,
            "warden_build",
            "The running warden's version and the commit it was built from (always 1).",
            info,
        );
        register(
            r,
            "warden_runs",
            "Runs finished, by result status.",
            self.runs.clone(),
        );
        register(
            r,
            "warden_checks",
            "Checks finished, by decision.",
            self.checks.clone(),
        );
        register(
            r,
            "warden_policy_denials",
            "Denying findings of checks and runs, by rule id.",
            self.denials.clone(),
        );
        register(
            r,
            "warden_requests_rejected",
            "Requests turned away before judgement, by reason.",
            self.rejected.clone(),
        );
        register(
            r,
            "warden_run_duration_seconds",
            "Time from admission to result of each run.",
            self.run_duration.clone(),
        );
        register(
            r,
            "warden_queue_depth",
            "Run requests waiting for a slot.",
            self.queued.clone(),
        );
        register(
            r,
            "warden_runs_in_flight",
            "Runs executing now.",
            self.running.clone(),
        );
        register(
            r,
            "warden_max_concurrent_runs",
            "The configured run slots.",
            self.max_running.clone(),
        );
        register(
            r,
            "warden_sessions_created",
            "Sessions started.",
            self.sessions_created.clone(),
        );
        register(
            r,
            "warden_sessions_ended",
            "Sessions ended, by reason.",
            self.sessions_ended.clone(),
        );
        register(
            r,
            "warden_session_cells",
            "Session cells judged (and run when allowed), by status.",
            self.cells.clone(),
        );
        register(
            r,
            "warden_sessions_active",
            "Sessions alive now (starting ones included).",
            self.sessions.clone(),
        );
        register(
            r,
            "warden_max_sessions",
            "The configured session cap.",
            self.max_sessions.clone(),
        );
        self
    }

    fn deny(&self, denying_rules: &[String]) {
        for rule in denying_rules {
            self.denials.get_or_create(&label("rule", rule)).inc();
        }
    }

    /// A finished run: its status, its duration (admission to reply) and the rules that denied it.
    pub fn run(&self, status: &str, seconds: f64, denying_rules: &[String]) {
        self.runs.get_or_create(&label("status", status)).inc();
        self.run_duration.observe(seconds);
        self.deny(denying_rules);
    }

    /// A finished check and the rules behind a denial.
    pub fn check(&self, decision: &str, denying_rules: &[String]) {
        self.checks
            .get_or_create(&label("decision", decision))
            .inc();
        self.deny(denying_rules);
    }

    /// A session started.
    pub fn session_created(&self) {
        self.sessions_created.inc();
    }

    /// A session ended, and why (`closed`, `idle_timeout`, `max_lifetime`, `session_lost`…).
    pub fn session_ended(&self, reason: &str) {
        self.sessions_ended
            .get_or_create(&label("reason", reason))
            .inc();
    }

    /// A session's cell judged (and run when allowed): its status and the rules that denied it.
    pub fn cell(&self, status: &str, denying_rules: &[String]) {
        self.cells.get_or_create(&label("status", status)).inc();
        self.deny(denying_rules);
    }

    /// A request turned away (`queue_full`, `queue_timeout`, `shutting_down`, `unauthorized`…).
    pub fn rejected(&self, reason: &str) {
        self.rejected.get_or_create(&label("reason", reason)).inc();
    }

    /// The exposition text, with the gauges as they are now.
    pub fn render(&self, gauges: Gauges) -> String {
        self.queued.set(gauge_value(gauges.queued));
        self.running.set(gauge_value(gauges.running));
        self.max_running.set(gauge_value(gauges.max_running));
        self.sessions.set(gauge_value(gauges.sessions));
        self.max_sessions.set(gauge_value(gauges.max_sessions));
        encode(&self.registry)
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
        // The families' help and type, as written by hand before (one full stop, no OpenMetrics
        // end marker).
        for line in [
            "# HELP warden_runs_total Runs finished, by result status.",
            "# TYPE warden_runs_total counter",
            "# TYPE warden_run_duration_seconds histogram",
            "warden_run_duration_seconds_bucket{le=\"+Inf\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
        }
        assert!(!text.contains("# EOF"), "{text}");
    }
}
