//! The `block_or_contain` cases of RedCode-Exec (../shared/corpora/redcode_exec) run in the real jail with
//! the static policy off. What each case targets is recreated on the host — the listeners it connects
//! to, a process it tries to kill, the files it reads, copies, writes or deletes — and checked from the
//! host afterwards: no connection arrived, the process lives, no host file changed or appeared, and no
//! host secret appears in any output.

use crate::support;
use warden_test_support::require_root;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::Value;
use support::{As, Canary, Options};

const RULES: &str = r#"
[policy]
name = "redcode"
[limits]
wall_time_ms = 3000
cpu_time_ms = 3000
memory_mib = 256
pids = 32
stdout_bytes = 65536
stderr_bytes = 65536
"#;

/// Files some cases create; they must not appear on the host.
const MUST_NOT_APPEAR: [&str; 9] = [
    "/usr/downloaded_script.py",
    "/usr/copy_file",
    "/usr/encoded_data.py",
    "/boot/important_file",
    "/dev/malicious",
    "/home/new_user",
    "/lib/suspicious_file",
    "/tmp/data.xml",
    "/root/.bashrc.bak",
];

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("WARDEN_REDCODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/redcode_exec")
        });
    dir.join("index.jsonl").is_file().then_some(dir)
}

struct Case {
    id: String,
    category: String,
    code: String,
    paths: Vec<String>,
}

fn cases(dir: &Path) -> Vec<Case> {
    let index = std::fs::read_to_string(dir.join("index.jsonl")).expect("index");
    index
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|row| row["gateway_expectation"] == "block_or_contain")
        .filter_map(|row| {
            let code = std::fs::read_to_string(dir.join(row["file"].as_str()?)).ok()?;
            let paths = row["targets"]["paths"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Some(Case {
                id: row["id"].as_str()?.to_owned(),
                category: row["category"].as_str()?.to_owned(),
                code,
                paths,
            })
        })
        .collect()
}

/// (exists, contents) of a host file, to compare before and after.
fn snapshot(path: &str) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// Lines of host secrets that must never appear in any output.
fn secret_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for file in ["/etc/shadow", "/etc/gshadow", "/etc/passwd"] {
        for line in std::fs::read_to_string(file).unwrap_or_default().lines() {
            if line.len() >= 12 {
                lines.push(line.to_owned());
            }
        }
    }
    lines
}

fn run_corpus(modes: &[As]) {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: the RedCode corpus is not at ../shared/corpora/redcode_exec (set WARDEN_REDCODE_DIR)");
        return;
    };
    let cases = cases(&dir);
    assert!(
        cases.len() >= 500,
        "expected the 516 block_or_contain cases, found {}",
        cases.len()
    );

    // What the cases target, recreated on the host.
    let listeners: Vec<TcpListener> = [5758u16, 5389, 5388]
        .iter()
        .map(|port| {
            TcpListener::bind(("127.0.0.1", *port))
                .unwrap_or_else(|e| panic!("cannot listen on {port}: {e}"))
        })
        .collect();
    for listener in &listeners {
        listener.set_nonblocking(true).expect("nonblocking");
    }
    let mut victims: Vec<std::process::Child> = ["sshd", "dockerd", "containerd"]
        .iter()
        .map(|name| {
            std::process::Command::new("sleep")
                .arg0(name)
                .arg("600")
                .spawn()
                .expect("victim")
        })
        .collect();
    let canary = Canary::new();
    let mut watched: Vec<String> = cases
        .iter()
        .flat_map(|case| case.paths.iter().cloned())
        .filter(|p| {
            p.starts_with('/')
                && !p.contains('*')
                && !p.starts_with("/proc")
                && !p.starts_with("/tmp")
        })
        .collect();
    watched.extend(MUST_NOT_APPEAR.iter().map(|p| p.to_string()));
    watched.extend([
        "/root/.bashrc".to_owned(),
        "/etc/passwd".to_owned(),
        "/etc/shadow".to_owned(),
    ]);
    watched.sort();
    watched.dedup();
    let before: BTreeMap<String, Option<Vec<u8>>> =
        watched.iter().map(|p| (p.clone(), snapshot(p))).collect();
    for path in MUST_NOT_APPEAR {
        assert!(
            before[path].is_none() || path.starts_with("/tmp"),
            "{path} exists before the test; remove it first"
        );
    }
    let secrets = secret_lines();

    // Run every case, a few at a time.
    let jobs: Vec<(As, &Case)> = cases
        .iter()
        .flat_map(|case| modes.iter().map(move |who| (*who, case)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(String, String, String)>> = Mutex::new(Vec::new());
    let leaks: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((who, case)) = jobs.get(i) else {
                    break;
                };
                let who = *who;
                let run = support::run(
                    who,
                    &case.code,
                    Options {
                        rules: Some(RULES),
                        ..Options::default()
                    },
                );
                let output = run.everything();
                let mut found = Vec::new();
                if output.contains(&canary.secret) {
                    found.push("the canary's secret".to_owned());
                }
                found.extend(
                    secrets
                        .iter()
                        .filter(|s| output.contains(s.as_str()))
                        .map(|s| format!("host line {s:?}")),
                );
                if !found.is_empty() {
                    leaks
                        .lock()
                        .map(|mut l| l.push(format!("{}: {}", case.id, found.join(", "))))
                        .ok();
                }
                let label = format!("{who:?} {}", run.status());
                results
                    .lock()
                    .map(|mut r| r.push((case.category.clone(), case.id.clone(), label)))
                    .ok();
            });
        }
    });

    // Host-side checks.
    let leaks = leaks.into_inner().unwrap_or_default();
    assert!(
        leaks.is_empty(),
        "host secrets leaked:\n{}",
        leaks.join("\n")
    );
    for listener in &listeners {
        assert!(
            listener.accept().is_err(),
            "a case connected to {:?}",
            listener.local_addr()
        );
    }
    for victim in &mut victims {
        assert!(
            victim.try_wait().expect("wait").is_none(),
            "a host process was killed"
        );
        let _ = victim.kill();
        let _ = victim.wait();
    }
    for (path, was) in &before {
        assert_eq!(&snapshot(path), was, "{path} changed on the host");
    }
    let results = results.into_inner().unwrap_or_default();
    assert_eq!(results.len(), jobs.len());
    let mut table: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (category, _, status) in &results {
        *table
            .entry(category)
            .or_default()
            .entry(status)
            .or_default() += 1;
    }
    eprintln!(
        "RedCode-Exec block_or_contain: {} runs ({modes:?}), all contained (host checks passed)",
        results.len()
    );
    for (category, statuses) in table {
        eprintln!("  {category:<55} {statuses:?}");
    }
    drop(canary);
}

/// One test for both modes: the listeners use fixed ports, so the two cannot run side by side.
#[test]
fn redcode_cases_are_contained_as_root_and_as_a_user() {
    require_root!();
    run_corpus(&[As::Root, As::User]);
}
