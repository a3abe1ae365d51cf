//! Load test of `warden serve`: 500 run requests from 16 concurrent clients against a server with 2
//! run slots, over the Unix socket. Every request must get a result record (200) or a 429/503 with
//! `Retry-After`; none may be lost or hang; the server's memory must stay bounded; nothing may be
//! left behind. Prints throughput and latency percentiles (bench/serve/load.sh records them).

use super::support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{post_json, Options, Server};

const REQUESTS: usize = 500;
const CLIENTS: usize = 16;
const SLOTS: usize = 2;
/// The server's resident memory may not exceed this (it holds at most 2 runs and a bounded queue).
const MAX_SERVER_RSS_KIB: u64 = 128 * 1024;

/// The programs clients send, in turn: mostly ordinary, some denied, some failing.
fn program(i: usize) -> serde_json::Value {
    match i % 10 {
        0 => json!({"code": "import subprocess\nsubprocess.run(['id'])\n"}),
        1 => json!({"code": "values = [1, 2]\nprint(values[5])\n"}),
        _ => json!({
            "code": format!("import json, statistics\nxs = list(range({}))\nprint(json.dumps({{'n': len(xs), 'mean': statistics.mean(xs)}}))\n", 10 + i),
            "schema": {"type": "object", "required": ["n", "mean"]},
        }),
    }
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[test]
fn five_hundred_runs_at_concurrency_16_with_2_slots() {
    if !support::is_root() {
        eprintln!("skipped: the server tests run as root (real cgroups)");
        return;
    }
    let mut server = Server::start(Options {
        max_concurrent_runs: SLOTS,
        queue_size: 10,
        queue_timeout_ms: 20_000,
        ..Options::default()
    });
    let socket = server.unix();
    let pid = server.pid();

    let sent = Arc::new(AtomicUsize::new(0));
    let codes: Arc<Mutex<BTreeMap<u16, usize>>> = Arc::default();
    let statuses: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<f64>>> = Arc::default();
    let problems: Arc<Mutex<Vec<String>>> = Arc::default();
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let peak_rss = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (sampling, peak_rss) = (sampling.clone(), peak_rss.clone());
        std::thread::spawn(move || {
            while sampling.load(Ordering::SeqCst) {
                let rss = rss_kib(pid, "VmRSS:") as usize;
                peak_rss.fetch_max(rss, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };

    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (socket, sent, codes, statuses, latencies, problems) = (
                socket.clone(),
                sent.clone(),
                codes.clone(),
                statuses.clone(),
                latencies.clone(),
                problems.clone(),
            );
            std::thread::spawn(move || loop {
                let i = sent.fetch_add(1, Ordering::SeqCst);
                if i >= REQUESTS {
                    return;
                }
                let body = program(i);
                let begun = Instant::now();
                let response = post_json(&socket, "/v1/run", None, &body);
                let seconds = begun.elapsed().as_secs_f64();
                *codes.lock().unwrap().entry(response.status).or_default() += 1;
                match response.status {
                    200 => {
                        let record = response.json();
                        let status = record["status"].as_str().unwrap_or("?").to_owned();
                        let expected = match i % 10 {
                            0 => "denied",
                            1 => "error",
                            _ => "ok",
                        };
                        if status != expected {
                            problems.lock().unwrap().push(format!(
                                "request {i}: {status}, expected {expected}: {record}"
                            ));
                        }
                        *statuses.lock().unwrap().entry(status).or_default() += 1;
                        latencies.lock().unwrap().push(seconds);
                    }
                    429 | 503 => {
                        let retry: u64 = response
                            .header("retry-after")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or_else(|| {
                                problems.lock().unwrap().push(format!(
                                    "request {i}: {} without Retry-After",
                                    response.status
                                ));
                                1
                            });
                        // Clients honour Retry-After, as agents should.
                        std::thread::sleep(Duration::from_secs(retry.min(5)));
                    }
                    other => problems
                        .lock()
                        .unwrap()
                        .push(format!("request {i}: HTTP {other}: {}", response.text())),
                }
            })
        })
        .collect();
    for client in clients {
        client
            .join()
            .expect("a client thread panicked (a request hung or was lost)");
    }
    let elapsed = started.elapsed().as_secs_f64();
    sampling.store(false, Ordering::SeqCst);
    sampler.join().unwrap();
    let hwm = rss_kib(pid, "VmHWM:");

    let codes = codes.lock().unwrap().clone();
    let statuses = statuses.lock().unwrap().clone();
    let mut latencies = latencies.lock().unwrap().clone();
    latencies.sort_by(f64::total_cmp);
    let answered: usize = codes.values().sum();
    let results = codes.get(&200).copied().unwrap_or(0);
    let summary = json!({
        "requests": answered,
        "clients": CLIENTS,
        "run_slots": SLOTS,
        "http": codes.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
        "statuses": statuses,
        "seconds": elapsed,
        "results_per_second": results as f64 / elapsed,
        "latency_ms": {
            "p50": percentile(&latencies, 50.0) * 1000.0,
            "p90": percentile(&latencies, 90.0) * 1000.0,
            "p99": percentile(&latencies, 99.0) * 1000.0,
            "max": latencies.last().copied().unwrap_or(0.0) * 1000.0,
        },
        "server_peak_rss_kib": peak_rss.load(Ordering::SeqCst),
        "server_vm_hwm_kib": hwm,
    });
    println!("warden-load {summary}");
    if let Some(path) = std::env::var_os("WARDEN_LOAD_REPORT") {
        std::fs::write(path, summary.to_string()).unwrap();
    }

    let problems = problems.lock().unwrap().clone();
    assert!(
        problems.is_empty(),
        "{} problems, first: {:?}",
        problems.len(),
        &problems[..problems.len().min(5)]
    );
    assert_eq!(answered, REQUESTS, "every request got an answer: {codes:?}");
    assert!(results >= REQUESTS / 2, "most requests ran: {codes:?}");
    assert!(
        hwm > 0 && hwm < MAX_SERVER_RSS_KIB,
        "server memory peaked at {hwm} KiB"
    );

    // The metrics agree with what the clients saw.
    let metrics = support::request(&socket, "GET", "/metrics", None, None).text();
    let counted: f64 = statuses
        .keys()
        .filter_map(|s| support::metric(&metrics, &format!("warden_runs_total{{status=\"{s}\"}}")))
        .sum();
    assert_eq!(counted as usize, results);
    assert_eq!(support::metric(&metrics, "warden_queue_depth"), Some(0.0));
    assert_eq!(
        support::metric(&metrics, "warden_runs_in_flight"),
        Some(0.0)
    );

    let tree = support::descendants(pid);
    assert!(tree.is_empty(), "processes outlived their runs: {tree:?}");
    assert!(server.stop().success());
    assert!(support::job_dirs(&server.state_dir).is_empty());
    assert!(!server.socket.exists());
    let audit = server.audit_lines();
    assert_eq!(audit.len(), REQUESTS, "one audit line per request");
}
