//! The pool's metrics in `GET /metrics`: jails waiting, hits and misses, refills, templates.
//!
//! Owns: the `warden_pool_*` families, their help and labels, written from the pool's state at
//! scrape time by the Prometheus project's client. Does not own: the counting (`pool.rs` keeps
//! [`Stats`] per policy) or the server's own families (`metrics.rs`).

use std::collections::BTreeSet;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::{Pool, Stats};
use crate::metrics::{encode, register, Label};

/// A counter family of the metrics: name (without `_total`), help, and its value in a policy's
/// [`Stats`].
type Counter3 = (&'static str, &'static str, fn(&Stats) -> u64);

/// A duration's sum and count.
#[derive(Debug, Clone, Copy)]
struct SumCount {
    sum: f64,
    count: u64,
}

/// The time the pool took to start its jails, per policy: a histogram with no bucket but `+Inf`
/// (its `_sum` and `_count`), as the pool keeps only those.
#[derive(Debug)]
struct RefillSeconds(Vec<(Label, SumCount)>);

impl EncodeMetric for RefillSeconds {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, value) in &self.0 {
            encoder
                .encode_family(labels)?
                .encode_histogram::<NoLabelSet>(
                    value.sum,
                    value.count,
                    &[(f64::INFINITY, value.count)],
                    None,
                )?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

fn policy(name: &str) -> Label {
    [("policy", name.to_owned())]
}

fn gauge_of(n: u64) -> Gauge {
    let gauge = Gauge::default();
    gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
    gauge
}

impl Pool {
    /// The pool's metrics, in the exposition format.
    pub fn render(&self) -> String {
        let Ok(state) = self.state.lock() else {
            return String::new();
        };
        let mut r = Registry::default();
        let mut names: BTreeSet<&String> = state.stats.keys().collect();
        names.extend(state.ready.keys());
        let ready: Family<Label, Gauge> = Family::default();
        for name in &names {
            let n = state.ready.get(*name).map_or(0, Vec::len);
            ready.get_or_create(&policy(name)).set(n as i64);
        }
        register(
            &mut r,
            "warden_pool_ready",
            "Pre-started jails waiting, by policy.",
            ready,
        );
        let depth = if self.config.enabled {
            self.config.depth
        } else {
            0
        };
        register(
            &mut r,
            "warden_pool_depth",
            "Jails the pool keeps waiting per policy (pool.depth; 0 when the pool is off).",
            gauge_of(depth as u64),
        );
        register(
            &mut r,
            "warden_pool_busy",
            "Claimed pooled workers not reaped yet (running a program, or ending its jail after the record was sent).",
            gauge_of(state.busy.len() as u64),
        );
        register(
            &mut r,
            "warden_pool_idle_workers",
            "Pooled workers back from a run, holding no jail, kept for the next jail the pool starts.",
            gauge_of(state.idle.len() as u64),
        );
        let memory: u64 = state.ready.values().flatten().map(|w| w.pss).sum();
        register(
            &mut r,
            "warden_pool_memory_bytes",
            "Proportional memory (PSS) of the waiting jails, measured when each became ready.",
            gauge_of(memory),
        );
        let hits: Family<[(&'static str, String); 2], Counter> = Family::default();
        for (name, s) in &state.stats {
            for (kind, n) in [("run", s.hits_runs), ("session", s.hits_sessions)] {
                hits.get_or_create(&[("policy", name.clone()), ("kind", kind.to_owned())])
                    .inc_by(n);
            }
        }
        register(
            &mut r,
            "warden_pool_hits",
            "Requests served by a pre-started jail, by policy and kind.",
            hits,
        );
        let counters: [Counter3; 8] = [
            (
                "warden_pool_forked",
                "Jails forked from the policy's template (which imported the preload once).",
                |s| s.forked,
            ),
            (
                "warden_pool_workers_reused",
                "Pooled jails started by a worker back from an earlier run (no new worker process).",
                |s| s.reused,
            ),
            (
                "warden_pool_templates_started",
                "Templates started (a fresh process replaces one that forked its share or aged).",
                |s| s.templates,
            ),
            (
                "warden_pool_misses",
                "Requests that found no jail waiting (or did not fit one).",
                |s| s.misses,
            ),
            (
                "warden_pool_forked_on_miss",
                "Runs that found no jail waiting and got one forked from the template at once \
                 (the other misses started cold).",
                |s| s.forked_on_miss,
            ),
            ("warden_pool_refills", "Jails started into the pool.", |s| {
                s.refills
            }),
            (
                "warden_pool_refill_failures",
                "Jails that failed to start into the pool.",
                |s| s.refill_failures,
            ),
            (
                "warden_pool_discarded",
                "Waiting jails discarded unused (too old, or found dead).",
                |s| s.discarded,
            ),
        ];
        for (name, help, get) in counters {
            let family: Family<Label, Counter> = Family::default();
            for (policy_name, s) in &state.stats {
                family.get_or_create(&policy(policy_name)).inc_by(get(s));
            }
            register(&mut r, name, help, family);
        }
        let refill = RefillSeconds(
            state
                .stats
                .iter()
                .map(|(name, s)| {
                    (
                        policy(name),
                        SumCount {
                            sum: s.refill_seconds,
                            count: s.refills,
                        },
                    )
                })
                .collect(),
        );
        register(
            &mut r,
            "warden_pool_refill_seconds",
            "Time to start a jail into the pool (interpreter up, preload imported).",
            refill,
        );
        encode(&r)
    }
}
