//! The pool's metrics in `GET /metrics`: jails waiting, hits and misses, refills, templates.
//!
//! Owns: the `warden_pool_*` families, their help and labels. Does not own: the counting
//! (`pool.rs` keeps [`Stats`] per policy) or the server's own families (`metrics.rs`).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Pool, Stats};

/// A counter family of the metrics: name, help, and its value in a policy's [`Stats`].
type Counter = (&'static str, &'static str, fn(&Stats) -> u64);

impl Pool {
    /// The pool's metrics, in the exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(state) = self.state.lock() else {
            return out;
        };
        let family = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        let mut names: BTreeSet<&String> = state.stats.keys().collect();
        names.extend(state.ready.keys());
        family(
            &mut out,
            "warden_pool_ready",
            "gauge",
            "Pre-started jails waiting, by policy.",
        );
        for name in &names {
            let n = state.ready.get(*name).map_or(0, Vec::len);
            let _ = writeln!(out, "warden_pool_ready{{policy=\"{name}\"}} {n}");
        }
        family(
            &mut out,
            "warden_pool_depth",
            "gauge",
            "Jails the pool keeps waiting per policy (pool.depth; 0 when the pool is off).",
        );
        let depth = if self.config.enabled {
            self.config.depth
        } else {
            0
        };
        let _ = writeln!(out, "warden_pool_depth {depth}");
        family(
            &mut out,
            "warden_pool_busy",
            "gauge",
            "Claimed pooled workers not reaped yet (running a program, or ending its jail after the record was sent).",
        );
        let _ = writeln!(out, "warden_pool_busy {}", state.busy.len());
        family(
            &mut out,
            "warden_pool_idle_workers",
            "gauge",
            "Pooled workers back from a run, holding no jail, kept for the next jail the pool starts.",
        );
        let _ = writeln!(out, "warden_pool_idle_workers {}", state.idle.len());
        family(
            &mut out,
            "warden_pool_memory_bytes",
            "gauge",
            "Proportional memory (PSS) of the waiting jails, measured when each became ready.",
        );
        let memory: u64 = state.ready.values().flatten().map(|w| w.pss).sum();
        let _ = writeln!(out, "warden_pool_memory_bytes {memory}");
        family(
            &mut out,
            "warden_pool_hits_total",
            "counter",
            "Requests served by a pre-started jail, by policy and kind.",
        );
        for (name, s) in &state.stats {
            let _ = writeln!(
                out,
                "warden_pool_hits_total{{policy=\"{name}\",kind=\"run\"}} {}",
                s.hits_runs
            );
            let _ = writeln!(
                out,
                "warden_pool_hits_total{{policy=\"{name}\",kind=\"session\"}} {}",
                s.hits_sessions
            );
        }
        let counters: [Counter; 8] = [
            (
                "warden_pool_forked_total",
                "Jails forked from the policy's template (which imported the preload once).",
                |s| s.forked,
            ),
            (
                "warden_pool_workers_reused_total",
                "Pooled jails started by a worker back from an earlier run (no new worker process).",
                |s| s.reused,
            ),
            (
                "warden_pool_templates_started_total",
                "Templates started (a fresh process replaces one that forked its share or aged).",
                |s| s.templates,
            ),
            (
                "warden_pool_misses_total",
                "Requests that found no jail waiting (or did not fit one).",
                |s| s.misses,
            ),
            (
                "warden_pool_forked_on_miss_total",
                "Runs that found no jail waiting and got one forked from the template at once \
                 (the other misses started cold).",
                |s| s.forked_on_miss,
            ),
            (
                "warden_pool_refills_total",
                "Jails started into the pool.",
                |s| s.refills,
            ),
            (
                "warden_pool_refill_failures_total",
                "Jails that failed to start into the pool.",
                |s| s.refill_failures,
            ),
            (
                "warden_pool_discarded_total",
                "Waiting jails discarded unused (too old, or found dead).",
                |s| s.discarded,
            ),
        ];
        for (name, help, get) in counters {
            family(&mut out, name, "counter", help);
            for (policy, s) in &state.stats {
                let _ = writeln!(out, "{name}{{policy=\"{policy}\"}} {}", get(s));
            }
        }
        family(
            &mut out,
            "warden_pool_refill_seconds",
            "summary",
            "Time to start a jail into the pool (interpreter up, preload imported).",
        );
        for (policy, s) in &state.stats {
            let _ = writeln!(
                out,
                "warden_pool_refill_seconds_sum{{policy=\"{policy}\"}} {:.6}\nwarden_pool_refill_seconds_count{{policy=\"{policy}\"}} {}",
                s.refill_seconds, s.refills
            );
        }
        out
    }
}
