//! Per-process resource limits of the program.
//!
//! Owns: the list of rlimits (pure data, derived from the limits and from which cgroup controllers are
//! in force; queued signals and message queues kept low for every run, see `budgets.rs`) and setting
//! them (jail side, in the program's process before it drops privileges).
//! `RLIMIT_NPROC` and `RLIMIT_AS` are fallbacks for hosts where warden has no cgroup: NPROC counts the
//! program's processes per user namespace (a pids cap), AS turns memory exhaustion into a Python
//! `MemoryError` instead of an OOM kill.
//!
//! Does not own: tree-wide limits (`cgroup.rs`) or the wall-clock timeout (`supervise.rs`).

use nix::sys::resource::{setrlimit, Resource};
use serde::Serialize;

use crate::config::Limits;
use crate::error::SysError;

/// One rlimit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rlimit {
    /// `RLIMIT_*` name.
    pub name: &'static str,
    #[serde(skip)]
    pub resource: Resource,
    pub soft: u64,
    pub hard: u64,
    pub why: &'static str,
}

/// The rlimits of a run. `cgroup_memory`/`cgroup_pids`: whether a cgroup enforces those already.
pub fn plan(limits: &Limits, cgroup_memory: bool, cgroup_pids: bool) -> Vec<Rlimit> {
    let cpu_seconds = limits.cpu_time_ms.div_ceil(1000).max(1);
    let mut list = vec![
        Rlimit {
            name: "RLIMIT_CORE",
            resource: Resource::RLIMIT_CORE,
            soft: 0,
            hard: 0,
            why: "no core dumps of the program's memory",
        },
        Rlimit {
            name: "RLIMIT_FSIZE",
            resource: Resource::RLIMIT_FSIZE,
            soft: limits.file_size_bytes,
            hard: limits.file_size_bytes,
            why: "largest file the program may write",
        },
        Rlimit {
            name: "RLIMIT_NOFILE",
            resource: Resource::RLIMIT_NOFILE,
            soft: limits.open_files,
            hard: limits.open_files,
            why: "descriptors per process",
        },
        Rlimit {
            name: "RLIMIT_CPU",
            resource: Resource::RLIMIT_CPU,
            soft: cpu_seconds,
            hard: cpu_seconds + 1,
            why: "CPU seconds per process: SIGXCPU at the soft limit, SIGKILL one second later",
        },
        Rlimit {
            name: "RLIMIT_SIGPENDING",
            resource: Resource::RLIMIT_SIGPENDING,
            soft: crate::budgets::SIGNALS,
            hard: crate::budgets::SIGNALS,
            why: "queued signals (the namespace's ceiling is the same, see budgets.rs)",
        },
        Rlimit {
            name: "RLIMIT_MSGQUEUE",
            resource: Resource::RLIMIT_MSGQUEUE,
            soft: 0,
            hard: 0,
            why: "no POSIX message queues (charged to the namespace's owner, released late)",
        },
    ];
    if !cgroup_pids {
        list.push(Rlimit {
            name: "RLIMIT_NPROC",
            resource: Resource::RLIMIT_NPROC,
            soft: limits.pids,
            hard: limits.pids,
            why: "fallback pids cap without a pids cgroup (counted per user namespace)",
        });
    }
    if !cgroup_memory {
        list.push(Rlimit {
            name: "RLIMIT_AS",
            resource: Resource::RLIMIT_AS,
            soft: limits.memory_bytes,
            hard: limits.memory_bytes,
            why: "fallback memory cap without a memory cgroup (address space per process)",
        });
    }
    list
}

/// The limit `name` (an `RLIMIT_*` name of [`plan`]) with these values: how a forked run's
/// request carries its limits (`template.rs`).
pub fn named(name: &str, soft: u64, hard: u64) -> Option<Rlimit> {
    let (name, resource): (&'static str, Resource) = match name {
        "RLIMIT_CORE" => ("RLIMIT_CORE", Resource::RLIMIT_CORE),
        "RLIMIT_FSIZE" => ("RLIMIT_FSIZE", Resource::RLIMIT_FSIZE),
        "RLIMIT_NOFILE" => ("RLIMIT_NOFILE", Resource::RLIMIT_NOFILE),
        "RLIMIT_CPU" => ("RLIMIT_CPU", Resource::RLIMIT_CPU),
        "RLIMIT_SIGPENDING" => ("RLIMIT_SIGPENDING", Resource::RLIMIT_SIGPENDING),
        "RLIMIT_MSGQUEUE" => ("RLIMIT_MSGQUEUE", Resource::RLIMIT_MSGQUEUE),
        "RLIMIT_NPROC" => ("RLIMIT_NPROC", Resource::RLIMIT_NPROC),
        "RLIMIT_AS" => ("RLIMIT_AS", Resource::RLIMIT_AS),
        _ => return None,
    };
    Some(Rlimit {
        name,
        resource,
        soft,
        hard,
        why: "as the run's plan says",
    })
}

/// Sets every limit on the calling process; a failure names the limit.
pub fn apply(list: &[Rlimit]) -> Result<(), SysError> {
    for limit in list {
        setrlimit(limit.resource, limit.soft, limit.hard)
            .map_err(SysError::at("setrlimit", limit.name))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn fallbacks_appear_only_without_cgroups() {
        let limits = Limits::default();
        let names = |list: Vec<Rlimit>| list.into_iter().map(|l| l.name).collect::<Vec<_>>();
        let with = names(plan(&limits, true, true));
        assert_eq!(
            with,
            [
                "RLIMIT_CORE",
                "RLIMIT_FSIZE",
                "RLIMIT_NOFILE",
                "RLIMIT_CPU",
                "RLIMIT_SIGPENDING",
                "RLIMIT_MSGQUEUE"
            ]
        );
        let without = names(plan(&limits, false, false));
        assert!(without.contains(&"RLIMIT_NPROC") && without.contains(&"RLIMIT_AS"));
    }

    #[test]
    fn cpu_seconds_round_up() {
        let limits = Limits {
            cpu_time_ms: 1500,
            ..Limits::default()
        };
        let cpu = plan(&limits, true, true)
            .into_iter()
            .find(|l| l.name == "RLIMIT_CPU")
            .unwrap();
        assert_eq!((cpu.soft, cpu.hard), (2, 3));
    }
}
