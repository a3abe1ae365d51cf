//! The warm pool (issue 15) end to end: a real `warden serve` whose pool pre-starts real jails with
//! pandas imported; pooled runs judged from the host side against cold runs of the same programs on
//! the same server (a run that asks for less memory than the policy's cannot use a pooled jail,
//! whose memory limit was set when it started: it goes cold).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::support::{
    self, cgroups_of, descendants, post_json, request, session_workers, wait_until, Options, Server,
};

/// Fields of a record that say nothing about timing or about the pool.
const COMPARED: [&str; 15] = [
    "status",
    "exit_code",
    "signal",
    "stdout",
    "stderr",
    "stdout_truncated",
    "stderr_truncated",
    "check",
    "validation",
    "files",
    "layers",
    "error",
    "message",
    "limits_hit",
    "stopped_by",
];

/// The policy's static rules turned off (to prove the runtime layer and the jail alone), as
/// `warden run --no-policy` does for a cold run.
const NO_STATIC: &str = r#"extends = "default"
[policy]
name = "nostatic"
[actions]
ATTR301 = "off"
ATTR302 = "off"
ATTR303 = "off"
ATTR304 = "off"
DYN401 = "off"
DYN402 = "off"
DYN403 = "off"
DYN404 = "off"
FILE701 = "off"
FILE702 = "off"
FILE703 = "off"
FILE704 = "off"
IMP101 = "off"
IMP102 = "off"
IMP103 = "off"
REF201 = "off"
REF202 = "off"
REX501 = "off"
REX502 = "off"
STR601 = "off"
STR602 = "off"
"#;

fn pooled_server(pool: &str) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("nostatic.toml");
    std::fs::write(&rules, NO_STATIC).expect("write");
    let server = Server::start(Options {
        pool: Some(pool.to_owned()),
        extra_policies: vec![("nostatic".to_owned(), rules)],
        ..Options::default()
    });
    (server, dir)
}

fn metrics(server: &Server) -> String {
    request(&server.unix(), "GET", "/metrics", None, None).text()
}

fn ready(server: &Server, policy: &str) -> f64 {
    support::metric(
        &metrics(server),
        &format!("warden_pool_ready{{policy=\"{policy}\"}}"),
    )
    .unwrap_or(0.0)
}

/// Waits until a jail of `policy` is waiting in the pool.
fn await_ready(server: &Server, policy: &str) {
    assert!(
        wait_until(Duration::from_secs(120), || ready(server, policy) >= 1.0),
        "no pooled jail of {policy} became ready:\n{}\n{}",
        metrics(server),
        server.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    );
}

fn run(server: &Server, body: &Value) -> Value {
    let answer = post_json(&server.unix(), "/v1/run", None, body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    answer.json()
}

/// The program through a pooled jail (waiting for one first): the record says it was warm.
fn warm(server: &Server, policy: &str, code: &str) -> Value {
    await_ready(server, policy);
    let record = run(server, &json!({"policy": policy, "code": code}));
    assert_eq!(record["warm"], true, "not pooled: {record}");
    record
}

/// The program through a jail started for it (less memory than the pool's: never pooled).
fn cold(server: &Server, policy: &str, code: &str) -> Value {
    let record = run(
        server,
        &json!({"policy": policy, "code": code, "limits": {"memory_mib": 1000}}),
    );
    assert_eq!(record["warm"], false, "pooled: {record}");
    record
}

fn assert_same(warm: &Value, cold: &Value, what: &str) {
    for field in COMPARED {
        assert_eq!(
            warm[field], cold[field],
            "{what}: `{field}` differs between the pooled and the cold run\npooled: {warm}\ncold: {cold}"
        );
    }
}

const PANDAS: &str = "import json\nimport pandas as pd\n\
df = pd.DataFrame({'k': [i % 7 for i in range(10000)], 'v': range(10000)})\n\
print(json.dumps(df.groupby('k')['v'].sum().to_dict()))\n";

#[test]
fn a_pooled_run_gives_the_record_of_a_cold_run() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    let programs = [
        ("print", "print(1)\n"),
        ("pandas", PANDAS),
        (
            "traceback",
            "def f(xs):\n    return xs[3]\n\nprint('before')\nf([1, 2])\n",
        ),
        (
            "exit",
            "import sys\nprint('x', file=sys.stderr)\nsys.exit(3)\n",
        ),
        (
            "files",
            "import pandas as pd\nimport matplotlib.pyplot as plt\n\
pd.DataFrame({'a': [1, 2]}).to_csv('out.csv', index=False)\n\
plt.plot([1, 2, 3])\nplt.savefig('chart.png')\nplt.show()\n\
with open('notes.txt', 'w') as f:\n    f.write('hello')\n",
        ),
        (
            "unflushed",
            "f = open('left-open.txt', 'w')\nf.write('kept')\n",
        ),
        ("output cap", "print('y' * 3_000_000)\n"),
    ];
    for (what, code) in programs {
        let pooled = warm(&server, "default", code);
        let started = cold(&server, "default", code);
        assert_same(&pooled, &started, what);
    }
    // The traceback names the program's file and shows its lines, as a cold run's does.
    let record = warm(&server, "default", programs[2].1);
    let traceback = record["error"]["traceback"].as_str().unwrap_or("");
    assert!(
        traceback.contains("File \"main.py\", line 2, in f") && traceback.contains("return xs[3]"),
        "{record}"
    );
}

#[test]
fn the_runtime_layer_judges_a_pooled_run_as_it_judges_a_cold_one() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    // pandas, numpy and matplotlib loaded pickle, subprocess, ctypes… into the pooled interpreter
    // before the program came: the program's own import of them is still stopped at the import.
    for module in [
        "pickle",
        "subprocess",
        "ctypes",
        "socket",
        "multiprocessing",
    ] {
        let code = format!("import {module}\nprint('imported')\n");
        let pooled = warm(&server, "nostatic", &code);
        assert_eq!(pooled["status"], "error", "{module}: {pooled}");
        assert_eq!(
            pooled["stopped_by"]["layer"], "runtime",
            "{module}: {pooled}"
        );
        assert_eq!(pooled["stopped_by"]["rule"], "IMP101", "{module}: {pooled}");
        assert!(!pooled["stdout"].as_str().unwrap_or("").contains("imported"));
        let started = cold(&server, "nostatic", &code);
        assert_same(&pooled, &started, module);
    }
    // The sinks stay where they are, and what the program may import works as on a cold run.
    for (what, code) in [
        ("system", "import os\nos.system('id')\n"),
        ("allowed", "import numpy, pandas\nprint(numpy.__name__, pandas.__name__)\n"),
        (
            "modules",
            "import sys\nprint(sorted(m for m in ('pickle', 'pandas', 'numpy', 'ctypes') if m in sys.modules))\n",
        ),
        // pandas loads numpy, which the preload imported first (not pandas' own group): numpy
        // comes back because pandas' modules bind it, as a cold `import pandas` loads it.
        (
            "modules bound by an import",
            "import pandas, sys\n\
             print(sorted(m for m in ('numpy', 'numpy.linalg', 'numpy.random', 'pandas.core.frame') if m in sys.modules))\n",
        ),
    ] {
        let pooled = warm(&server, "nostatic", code);
        let started = cold(&server, "nostatic", code);
        assert_same(&pooled, &started, what);
    }
}

#[test]
fn no_state_crosses_pooled_runs() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 2\n");
    // Environment variables, fork and monkeypatching are outside the default policy: the static
    // rules are off here (the runtime layer and the jail are what keeps runs apart).
    let dirty = r#"import os, time
import pandas as pd
pd.DataFrame.sum = lambda self, *a, **k: 'patched'
os.environ['WARDEN_LEFT'] = 'yes'
open('/tmp/left.txt', 'w').write('x')
open('left-in-work.txt', 'w').write('x')
try:
    os.fork()
    print('forked')
except Exception as err:
    print('no fork:', type(err).__name__)
print(pd.DataFrame({'a': [1, 2]}).sum())
"#;
    let check = r#"import os
import pandas as pd
print(int(pd.DataFrame({'a': [1, 2]}).sum()['a']))
print(os.environ.get('WARDEN_LEFT'))
print(os.path.exists('/tmp/left.txt'), os.path.exists('left-in-work.txt'))
# The preload's own matplotlib cache (the same in every pooled jail) aside.
print(sorted(n for n in os.listdir('/tmp') if not n.startswith('matplotlib')), sorted(os.listdir('.')))
"#;
    for _ in 0..3 {
        await_ready(&server, "nostatic");
        let before = pooled_jails(&server);
        let record = warm(&server, "nostatic", dirty);
        assert_eq!(record["status"], "ok", "{record}");
        assert!(record["stdout"].as_str().unwrap_or("").contains("patched"));
        // Host side: the jail that ran it is gone, every process and cgroup of it (the record
        // goes out before the worker has ended the jail: it goes soon after).
        assert_claimed_jails_ended(&server, &before);
        // In the jail: the next pooled run sees none of it.
        let next = warm(&server, "nostatic", check);
        assert_eq!(next["status"], "ok", "{next}");
        assert_eq!(
            next["stdout"], "3\nNone\nFalse False\n[] []\n",
            "state crossed runs: {next}"
        );
        assert_eq!(next["files"], json!([]), "{next}");
    }
}

#[test]
fn every_pooled_run_draws_its_own_randomness() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 2\n");
    // `os.urandom` is outside the default policy's `os` members: the static rules are off here.
    let code = r#"import os, uuid, random, json, secrets
import numpy as np
print(json.dumps([os.urandom(16).hex(), secrets.token_hex(16), str(uuid.uuid4()),
                  random.random(), float(np.random.rand()),
                  float(np.random.default_rng().random())]))
"#;
    let mut seen: Vec<Vec<String>> = vec![Vec::new(); 6];
    let started = Instant::now();
    let mut runs = 0;
    while runs < 4 || (started.elapsed() < Duration::from_secs(30) && runs < 40) {
        let record = warm(&server, "nostatic", code);
        assert_eq!(record["status"], "ok", "{record}");
        let values: Vec<Value> =
            serde_json::from_str(record["stdout"].as_str().unwrap_or("")).expect("json");
        for (i, value) in values.iter().enumerate() {
            let value = value.to_string();
            assert!(
                !seen[i].contains(&value),
                "value {i} repeated across pooled runs: {value} ({record})"
            );
            seen[i].push(value);
        }
        runs += 1;
    }
    eprintln!("{runs} pooled runs drew distinct values");
}

#[test]
fn an_empty_or_disabled_pool_runs_cold() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\ntemplate = false\n");
    // The one jail goes to the first run; the next finds the pool empty (refilling takes
    // seconds without a template) and starts cold, successfully.
    let first = warm(&server, "default", "print(1)\n");
    assert_eq!(first["status"], "ok");
    let second = run(&server, &json!({"code": "print(2)\n"}));
    assert_eq!(second["status"], "ok", "{second}");
    assert_eq!(second["warm"], false, "{second}");
    let text = metrics(&server);
    assert!(
        support::metric(&text, "warden_pool_misses_total{policy=\"default\"}").unwrap_or(0.0)
            >= 1.0,
        "{text}"
    );
    assert!(
        support::metric(
            &text,
            "warden_pool_hits_total{policy=\"default\",kind=\"run\"}"
        )
        .unwrap_or(0.0)
            >= 1.0,
        "{text}"
    );
    drop(server);

    let (server, _rules) = pooled_server("enabled = false\n");
    std::thread::sleep(Duration::from_secs(2));
    assert!(session_workers(&server.state_dir).is_empty());
    let record = run(&server, &json!({"code": "print(3)\n"}));
    assert_eq!(record["status"], "ok", "{record}");
    assert_eq!(record["warm"], false, "{record}");
    assert_eq!(
        support::metric(&metrics(&server), "warden_pool_depth"),
        Some(0.0)
    );
}

/// With the policy's template up, a run that finds the pool empty gets a jail forked for it at
/// once (a fork, not a cold start that imports the preload again): a burst of runs larger than
/// the pool is served warm, and the misses are counted as forked.
#[test]
fn a_run_that_finds_the_pool_empty_is_forked_from_the_template() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    await_ready(&server, "default");
    let server = &server;
    let records = runs_at_once(server, 4, |i| format!("import pandas\nprint({i})\n"));
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["stdout"], format!("{i}\n"), "{record}");
        assert_eq!(record["warm"], true, "a miss went cold: {record}");
    }
    let text = metrics(server);
    let misses =
        support::metric(&text, "warden_pool_misses_total{policy=\"default\"}").unwrap_or(0.0);
    let forked = support::metric(
        &text,
        "warden_pool_forked_on_miss_total{policy=\"default\"}",
    )
    .unwrap_or(0.0);
    assert!(misses >= 1.0, "four runs at once, one jail waiting: {text}");
    assert_eq!(forked, misses, "every miss was forked: {text}");
}

#[test]
fn a_pooled_session_is_ready_at_once_with_pandas_imported() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    await_ready(&server, "default");
    let started = Instant::now();
    let created = post_json(&server.unix(), "/v1/sessions", None, &json!({}));
    assert_eq!(created.status, 200, "{}", created.text());
    let id = created.json()["id"].as_str().expect("id").to_owned();
    let cell = post_json(
        &server.unix(),
        &format!("/v1/sessions/{id}/execute"),
        None,
        &json!({"code": "import pandas as pd\nlen(pd.DataFrame({'a': [1, 2, 3]}))"}),
    )
    .json();
    let ready = started.elapsed();
    assert_eq!(cell["status"], "ok", "{cell}");
    assert_eq!(cell["result"]["text/plain"], "3", "{cell}");
    // pandas was imported before the session was asked for: the cell only looks it up.
    assert!(
        cell["usage"]["duration_ms"].as_u64().unwrap_or(u64::MAX) < 300,
        "{cell}"
    );
    eprintln!("pooled session: create and first cell in {ready:?}");
    let text = metrics(&server);
    assert_eq!(
        support::metric(
            &text,
            "warden_pool_hits_total{policy=\"default\",kind=\"session\"}"
        ),
        Some(1.0),
        "{text}"
    );
    // A denied module is still refused in the session (the preload hid what it loaded).
    let denied = post_json(
        &server.unix(),
        &format!("/v1/sessions/{id}/execute"),
        None,
        &json!({"code": "import pickle"}),
    )
    .json();
    assert_eq!(denied["status"], "denied", "{denied}");
    let gone = request(
        &server.unix(),
        "DELETE",
        &format!("/v1/sessions/{id}"),
        None,
        None,
    );
    assert_eq!(gone.status, 200, "{}", gone.text());
}

#[test]
fn attacks_through_the_pool_are_stopped_as_cold() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 2\n");
    let cases = [
        "a_bases_walk.py",
        "a_function_globals_builtins.py",
        "a_catch_warnings_module.py",
    ];
    let mut chosen: Vec<std::path::PathBuf> = cases
        .iter()
        .map(|c| support::repo().join("corpus/attacks").join(c))
        .collect();
    // And one of each other group whose case the static layer alone would not stop.
    let mut groups = std::collections::BTreeSet::new();
    let mut entries: Vec<_> = std::fs::read_dir(support::repo().join("corpus/attacks"))
        .expect("corpus")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(group) = text
            .lines()
            .find_map(|l| l.strip_prefix("# group: "))
            .map(str::to_owned)
        else {
            continue;
        };
        let contained =
            text.contains("# expect-jail: contained") || text.contains("# expect-runtime:");
        if contained && groups.insert(group) && !chosen.contains(&path) {
            chosen.push(path);
        }
        if chosen.len() >= 20 {
            break;
        }
    }
    assert!(chosen.len() >= 15, "{chosen:?}");
    for path in &chosen {
        let code = std::fs::read_to_string(path).expect("case");
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let pooled = warm(&server, "nostatic", &code);
        let started = cold(&server, "nostatic", &code);
        assert_ne!(pooled["status"], "setup_failed", "{name}: {pooled}");
        for field in ["status", "exit_code", "signal", "stopped_by", "limits_hit"] {
            assert_eq!(
                pooled[field], started[field],
                "{name}: `{field}` differs\npooled: {pooled}\ncold: {started}"
            );
        }
    }
}

#[test]
fn shutdown_ends_the_waiting_jails_and_leaves_nothing() {
    warden_test_support::require_root!();
    let (mut server, _rules) = pooled_server("depth = 2\n");
    assert!(
        wait_until(Duration::from_secs(120), || ready(&server, "default")
            >= 2.0),
        "{}",
        metrics(&server)
    );
    // Runs first: their workers come back idle (no jail), and must end at shutdown too.
    for i in 0..3 {
        let record = warm(&server, "default", &format!("print({i})"));
        assert_eq!(record["stdout"], format!("{i}\n"), "{record}");
    }
    assert!(
        wait_until(Duration::from_secs(20), || {
            support::metric(&metrics(&server), "warden_pool_busy") == Some(0.0)
                && ready(&server, "default") >= 2.0
        }),
        "{}",
        metrics(&server)
    );
    let workers = session_workers(&server.state_dir);
    assert!(workers.len() >= 2, "{workers:?}");
    assert!(
        support::metric(&metrics(&server), "warden_pool_idle_workers").is_some_and(|n| n >= 1.0),
        "no idle worker before the shutdown\n{}",
        metrics(&server)
    );
    server.stop();
    for pid in &workers {
        assert!(
            wait_until(Duration::from_secs(10), || cgroups_of(*pid).is_empty()),
            "the pooled jail of {pid} left its cgroups: {:?}",
            cgroups_of(*pid)
        );
    }
    assert!(
        session_workers(&server.state_dir).is_empty(),
        "{:?}",
        session_workers(&server.state_dir)
    );
    let left: Vec<_> = std::fs::read_dir(&server.state_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("session-") || name.starts_with("job-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_unprivileged_server_pools_too() {
    warden_test_support::require_root!();
    let (uid, gid) = super::jail::test_user();
    let mut server = Server::start(Options {
        user: Some((uid, gid)),
        pool: Some("depth = 1\n".to_owned()),
        ..Options::default()
    });
    for (what, code) in [("pandas", PANDAS), ("error", "1 / 0\n")] {
        let pooled = warm(&server, "default", code);
        let started = cold(&server, "default", code);
        assert_same(&pooled, &started, what);
    }
    let workers = session_workers(&server.state_dir);
    server.stop();
    assert!(
        wait_until(Duration::from_secs(10), || session_workers(
            &server.state_dir
        )
        .is_empty()),
        "pooled workers left: {workers:?}"
    );
}

#[test]
fn a_burst_of_pooled_runs_leaves_nothing_behind() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 2\n");
    // The record comes back before the worker has ended its jail; every claimed worker must
    // still end, with its jail: no process, cgroup, mount or directory of it is left.
    let mut claimed = 0;
    for i in 0..6 {
        await_ready(&server, "default");
        let waiting = pooled_jails(&server);
        let record = run(
            &server,
            &json!({"code": format!("open('f.txt', 'w').write('{i}')\nprint({i})\n")}),
        );
        assert_eq!(record["warm"], true, "{record}");
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["stdout"], format!("{i}\n"), "{record}");
        assert_eq!(record["files"][0]["path"], "f.txt", "{record}");
        claimed += assert_claimed_jails_ended(&server, &waiting);
    }
    assert!(claimed >= 6, "{claimed} jails ended for 6 runs");
    assert!(
        wait_until(Duration::from_secs(20), || {
            support::metric(&metrics(&server), "warden_pool_busy") == Some(0.0)
        }),
        "{}",
        metrics(&server)
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let state = server.state_dir.to_string_lossy().into_owned();
    assert!(!mounts.contains(&state), "a mount below {state}: {mounts}");
    // Only the live workers' directories are left (waiting with a jail, or back from a run and
    // idle: an idle worker's directory is empty); each ended worker's went with it.
    let waiting = session_workers(&server.state_dir).len();
    let dirs = support::session_dirs(&server.state_dir);
    assert!(dirs.len() <= waiting + 2, "{dirs:?} for {waiting} waiting");
    for dir in &dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let owner = session_workers(&server.state_dir).into_iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| name.as_deref().is_some_and(|n| c.contains(n)))
        });
        assert!(owner, "{} is left with no worker", dir.display());
    }
}

#[test]
fn a_denied_program_does_not_use_up_a_pooled_jail() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    await_ready(&server, "default");
    let hits = |server: &Server| {
        support::metric(
            &metrics(server),
            "warden_pool_hits_total{policy=\"default\",kind=\"run\"}",
        )
        .unwrap_or(0.0)
    };
    let before = hits(&server);
    let waiting = session_workers(&server.state_dir);
    let record = run(&server, &json!({"code": "import os\nos.system('id')\n"}));
    assert_eq!(record["status"], "denied", "{record}");
    assert_eq!(record["warm"], false, "{record}");
    assert_eq!(hits(&server), before, "{}", metrics(&server));
    assert_eq!(ready(&server, "default"), 1.0, "{}", metrics(&server));
    // The worker that was waiting is still there (a claimed one ends its jail); the pool may
    // have started others meanwhile (a template's refill), which is not this test's business.
    let now = session_workers(&server.state_dir);
    assert!(
        waiting.iter().all(|pid| now.contains(pid)),
        "waiting before: {waiting:?}, now: {now:?}"
    );
    // The jail it did not take serves the next program.
    let record = warm(&server, "default", "print(1)\n");
    assert_eq!(record["stdout"], "1\n", "{record}");
    assert_eq!(hits(&server), before + 1.0);
}

// Issue 15, point 2: the isolation and uniqueness of pooled runs, judged from the host side and
// through the HTTP contract only (records, `/metrics`, `/proc`, cgroups), so the tests hold for a
// pool of independently started interpreters and for jails forked from a template alike.

/// `NO_STATIC` under another name, with more tables after its `[actions]`.
/// The jails of `server`'s pooled workers (waiting, or running a program): each run cgroup (in
/// every hierarchy), with the processes in it and below it (pid and start time).
fn pooled_jails(
    server: &Server,
) -> std::collections::BTreeMap<std::path::PathBuf, Vec<(u32, String)>> {
    let mut jails = std::collections::BTreeMap::new();
    for worker in session_workers(&server.state_dir) {
        for cgroup in cgroups_of(worker) {
            let mut processes = Vec::new();
            let mut todo = vec![cgroup.clone()];
            while let Some(dir) = todo.pop() {
                let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
                for pid in procs.lines().filter_map(|p| p.trim().parse::<u32>().ok()) {
                    if let Some(start) = start_time(pid) {
                        processes.push((pid, start));
                    }
                }
                let below = std::fs::read_dir(&dir).into_iter().flatten().flatten();
                todo.extend(below.filter(|e| e.path().is_dir()).map(|e| e.path()));
            }
            jails.insert(cgroup, processes);
        }
    }
    jails
}

/// The start time of `pid` (field 22 of its stat).
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19).map(str::to_owned)
}

/// After a pooled run: the jail it claimed (of those in `before`, taken just before the run) has
/// ended, its cgroups removed and its processes gone, once the pool counts no worker busy.
/// Returns how many of `before`'s jails ended (the claimed one at least: its cgroup in every
/// hierarchy counts once per hierarchy, so this counts distinct cgroup names).
fn assert_claimed_jails_ended(
    server: &Server,
    before: &std::collections::BTreeMap<std::path::PathBuf, Vec<(u32, String)>>,
) -> usize {
    assert!(
        wait_until(Duration::from_secs(20), || {
            support::metric(&metrics(server), "warden_pool_busy") == Some(0.0)
        }),
        "{}",
        metrics(server)
    );
    let ended: Vec<_> = before.keys().filter(|cgroup| !cgroup.exists()).collect();
    assert!(
        !ended.is_empty(),
        "no jail of those waiting before the run has ended: {:?}",
        before.keys().collect::<Vec<_>>()
    );
    assert!(
        ended.iter().any(|cgroup| !before[*cgroup].is_empty()),
        "the ended jails had no process: {ended:?}"
    );
    for cgroup in &ended {
        for (pid, start) in &before[*cgroup] {
            assert!(
                wait_until(Duration::from_secs(10), || !support::alive(*pid, start)),
                "process {pid} of the ended jail {} is still there",
                cgroup.display()
            );
        }
    }
    let names: std::collections::BTreeSet<_> = ended.iter().filter_map(|c| c.file_name()).collect();
    names.len()
}

fn no_static_variant(name: &str, more: &str) -> String {
    let renamed = NO_STATIC.replacen("name = \"nostatic\"", &format!("name = \"{name}\""), 1);
    format!("{renamed}{more}")
}

/// The static rules and the runtime layer off, processes allowed: only the jail keeps runs apart
/// (what `warden run --no-policy --no-hooks` proves of a cold run), so a program can fork, exec,
/// bind sockets and call the C library through ctypes.
fn permissive_policy() -> String {
    no_static_variant(
        "permissive",
        "[processes]\nallow = true\n[runtime]\nhooks = \"off\"\n",
    )
}

/// `NO_STATIC` under its own name (the runtime layer on, as in production; `tempfile` is importable:
/// the default allows it since issue 26).
fn uniqueness_policy() -> String {
    no_static_variant("unique", "")
}

/// A pooled server with more policies (name, rules text) and `runs` run slots.
fn pooled_server_with(
    pool: &str,
    runs: usize,
    policies: &[(&str, String)],
) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut extra = Vec::new();
    for (name, text) in policies {
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, text).expect("write");
        extra.push(((*name).to_owned(), path));
    }
    let server = Server::start(Options {
        pool: Some(pool.to_owned()),
        max_concurrent_runs: runs,
        extra_policies: extra,
        ..Options::default()
    });
    (server, dir)
}

/// Waits until a jail of `policy` is waiting, then a while for `want` of them (refilling takes
/// seconds where each jail imports the preload itself); returns how many of the next requests
/// can go warm at once (at most `want`).
fn await_ready_for(server: &Server, policy: &str, want: usize) -> usize {
    await_ready(server, policy);
    wait_until(Duration::from_secs(30), || {
        ready(server, policy) >= want as f64
    });
    (ready(server, policy) as usize).clamp(1, want)
}

/// The programs through the pool at the same time, one client thread each; the records in order.
fn concurrently(server: &Server, policy: &str, codes: &[String]) -> Vec<Value> {
    std::thread::scope(|scope| {
        let clients: Vec<_> = codes
            .iter()
            .map(|code| scope.spawn(move || run(server, &json!({"policy": policy, "code": code}))))
            .collect();
        clients
            .into_iter()
            .map(|client| client.join().expect("client thread"))
            .collect()
    })
}

/// A marker a program can give its process as its name (`comm`: 15 bytes at most) and put in
/// the command lines of what it starts, for the host to find them.
fn process_marker() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mixed = nanos
        ^ (u64::from(std::process::id()) << 24)
        ^ COUNTER
            .fetch_add(1, Ordering::SeqCst)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    format!("wp-{:012x}", mixed & 0xffff_ffff_ffff)
}

/// One host process, as the host sees it.
#[derive(Debug, Clone)]
struct Seen {
    pid: u32,
    /// Field 22 of `/proc/<pid>/stat` (to tell a reused pid apart).
    start: String,
    comm: String,
    cmdline: String,
    /// `/proc/<pid>/status`.
    status: String,
    /// `/proc/<pid>/cgroup`.
    cgroup: String,
    /// `mnt`, `pid`, `ipc`, `uts`, `net`, `cgroup`, `user` → the link's target.
    ns: std::collections::BTreeMap<String, String>,
}

const NAMESPACES: [&str; 7] = ["mnt", "pid", "ipc", "uts", "net", "cgroup", "user"];
/// The namespaces every pooled run must have of its own.
const OWN_NAMESPACES: [&str; 5] = ["mnt", "pid", "ipc", "uts", "net"];

fn seen(pid: u32) -> Option<Seen> {
    let proc = format!("/proc/{pid}");
    let stat = std::fs::read_to_string(format!("{proc}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let start = (*after.split(' ').collect::<Vec<_>>().get(19)?).to_owned();
    let cmdline = std::fs::read(format!("{proc}/cmdline")).ok()?;
    Some(Seen {
        pid,
        start,
        comm: std::fs::read_to_string(format!("{proc}/comm"))
            .ok()?
            .trim_end()
            .to_owned(),
        cmdline: String::from_utf8_lossy(&cmdline).replace('\0', " "),
        status: std::fs::read_to_string(format!("{proc}/status")).ok()?,
        cgroup: std::fs::read_to_string(format!("{proc}/cgroup")).ok()?,
        ns: NAMESPACES
            .iter()
            .filter_map(|n| {
                let link = std::fs::read_link(format!("{proc}/ns/{n}")).ok()?;
                Some(((*n).to_owned(), link.to_string_lossy().into_owned()))
            })
            .collect(),
    })
}

/// Every host process whose name starts with `prefix` or whose command line contains it.
fn scan(prefix: &str) -> Vec<Seen> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if comm.starts_with(prefix) || String::from_utf8_lossy(&cmdline).contains(prefix) {
            found.extend(seen(pid));
        }
    }
    found
}

/// Runs `work` while a host thread scans `/proc` for `prefix` every few milliseconds; returns
/// what `work` returned and every scan.
fn watching<T>(prefix: &str, work: impl FnOnce() -> T) -> (T, Vec<Vec<Seen>>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut scans = Vec::new();
            while !done.load(Ordering::SeqCst) {
                scans.push(scan(prefix));
                std::thread::sleep(Duration::from_millis(20));
            }
            scans
        });
        let value = work();
        done.store(true, Ordering::SeqCst);
        (value, watcher.join().expect("watcher thread"))
    })
}

/// Whether the process seen then is still there (a zombie counts as gone).
fn still_alive(process: &Seen) -> bool {
    seen(process.pid).is_some_and(|now| {
        now.start == process.start
            && !now
                .status
                .lines()
                .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

/// A line of `/proc/<pid>/status` (`Uid`, `Seccomp`…), its value trimmed.
fn status_field<'a>(status: &'a str, key: &str) -> &'a str {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map_or("", str::trim)
}

/// The host directories of the cgroups in `cgroup` (a `/proc/<pid>/cgroup`) that are not the
/// server's own in the same hierarchy: the cgroups made for the run.
fn own_cgroup_dirs(cgroup: &str, server: &str) -> Vec<std::path::PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut dirs = Vec::new();
    for line in cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let prefix = format!("{id}:{controllers}:");
        let theirs = server
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or("/");
        if path == theirs || path == "/" {
            continue;
        }
        for mount in mountinfo.lines() {
            let Some((left, right)) = mount.split_once(" - ") else {
                continue;
            };
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let (Some(root), Some(point)) = (left.get(3), left.get(4)) else {
                continue;
            };
            let matches = match (right.first(), right.get(2)) {
                (Some(&"cgroup2"), _) => controllers.is_empty(),
                (Some(&"cgroup"), Some(options)) => {
                    !controllers.is_empty()
                        && controllers
                            .split(',')
                            .all(|c| options.split(',').any(|o| o == c))
                }
                _ => false,
            };
            if matches && *root == "/" {
                dirs.push(std::path::Path::new(point).join(path.trim_start_matches('/')));
            }
        }
    }
    dirs
}

/// Files and directories below `dir` whose name contains `marker` (symbolic links not followed).
fn names_containing(dir: &std::path::Path, marker: &str, depth: usize) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_name().to_string_lossy().contains(marker) {
            found.push(path.clone());
        }
        if depth > 0 && entry.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(names_containing(&path, marker, depth - 1));
        }
    }
    found
}

/// Each run prints its draws as one JSON line; `hash` and `pid` are reported, not required to
/// differ (the hash secret is the interpreter's: one per template generation by design).
const DRAWS: &str = r#"import os, json, random, secrets, uuid, tempfile
import numpy as np
fd, path = tempfile.mkstemp()
print(json.dumps({
    "urandom": os.urandom(16).hex(),
    "secrets": secrets.token_hex(16),
    "uuid4": str(uuid.uuid4()),
    "random": random.random(),
    "getrandbits": random.getrandbits(64),
    "numpy_global": float(np.random.rand()),
    "numpy_global_int": int(np.random.randint(1 << 62)),
    "numpy_default_rng": int(np.random.default_rng().integers(1 << 62)),
    "mkstemp": path,
    "mkdtemp": tempfile.mkdtemp(),
    "hash": hash("x"),
    "pid": os.getpid(),
}))
"#;

/// The draws that must differ in every pooled run.
const DRAWN: [&str; 10] = [
    "urandom",
    "secrets",
    "uuid4",
    "random",
    "getrandbits",
    "numpy_global",
    "numpy_global_int",
    "numpy_default_rng",
    "mkstemp",
    "mkdtemp",
];

#[test]
fn every_draw_differs_across_a_thousand_pooled_runs() {
    warden_test_support::require_root!();
    let runs: usize = match std::env::var("WARDEN_POOL_UNIQUENESS_RUNS") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("WARDEN_POOL_UNIQUENESS_RUNS is not a count: {text:?}")),
        Err(_) => 1000,
    };
    assert!(runs >= 2, "WARDEN_POOL_UNIQUENESS_RUNS must be at least 2");
    draws_differ("depth = 4\nmemory_mib = 4096\n", runs);
}

/// The same with jails that each imported the preload themselves (`pool.template = false`: about
/// a second of CPU per jail, so fewer runs).
#[test]
fn every_draw_differs_across_pooled_runs_without_a_template() {
    warden_test_support::require_root!();
    draws_differ("depth = 4\nmemory_mib = 4096\ntemplate = false\n", 24);
}

fn draws_differ(pool: &str, runs: usize) {
    const CLIENTS: usize = 4;
    let (server, _rules) = pooled_server_with(pool, CLIENTS, &[("unique", uniqueness_policy())]);
    let started = Instant::now();
    let mut records: Vec<Value> = Vec::with_capacity(runs);
    // Bursts of concurrent clients, never more than jails are waiting, so each run can go warm.
    while records.len() < runs {
        let n = await_ready_for(&server, "unique", CLIENTS.min(runs - records.len()));
        records.extend(concurrently(&server, "unique", &vec![DRAWS.to_owned(); n]));
    }
    let elapsed = started.elapsed();
    let mut first: std::collections::HashMap<(&str, String), usize> =
        std::collections::HashMap::new();
    let mut hashes = std::collections::BTreeSet::new();
    let mut pids = std::collections::BTreeSet::new();
    let mut warm_runs = 0;
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record["status"], "ok", "run {i}: {record}");
        if record["warm"] == true {
            warm_runs += 1;
        }
        let draws: Value = serde_json::from_str(record["stdout"].as_str().unwrap_or(""))
            .unwrap_or_else(|err| panic!("run {i}: not one JSON line ({err}): {record}"));
        for key in DRAWN {
            let value = draws[key].to_string();
            assert!(!draws[key].is_null(), "run {i}: no {key}: {record}");
            if let Some(earlier) = first.insert((key, value.clone()), i) {
                panic!(
                    "`{key}` repeated across pooled runs {earlier} and {i} ({value}; warm: {} and {})",
                    records[earlier]["warm"], record["warm"]
                );
            }
        }
        hashes.insert(draws["hash"].to_string());
        pids.insert(draws["pid"].to_string());
    }
    // Bursts never ask for more jails than are waiting: nearly every run is warm.
    assert!(
        warm_runs * 100 >= runs * 95,
        "only {warm_runs} of {runs} runs were pooled:\n{}",
        metrics(&server)
    );
    eprintln!(
        "{runs} runs ({warm_runs} pooled) in {elapsed:?}: every draw distinct; hash(\"x\") took {} \
         values, the program's pid {} ({pids:?})",
        hashes.len(),
        pids.len()
    );
}

/// Modules the preload loaded (pandas, numpy and matplotlib import them) that the nostatic policy
/// does not let a program import: a pooled program that never imported them must not hold them.
const HIDDEN_TARGETS: &str =
    "{'subprocess', '_posixsubprocess', 'pickle', 'ctypes', 'socket', 'multiprocessing', 'gc', 'inspect'}";

/// Walks everything reachable from the import system's state and every loaded module without a
/// frame or the gc (attributes, `__dict__`s, closures, `__self__`, `__func__`, `__wrapped__`,
/// `__globals__`, defaults, specs, loaders and their state) and prints the hidden targets it met.
const WALK: &str = r#"import sys
TARGETS = __TARGETS__
Module = type(sys)
proxy = type(type.__dict__)
seen, keep, found = set(), [], {}
todo = [("sys.meta_path", sys.meta_path), ("sys.path_hooks", sys.path_hooks),
        ("sys.path_importer_cache", sys.path_importer_cache), ("sys.modules", dict(sys.modules))]
steps = 0
while todo and steps < 300000:
    path, obj = todo.pop()
    steps += 1
    if id(obj) in seen:
        continue
    seen.add(id(obj))
    keep.append(obj)
    if isinstance(obj, Module):
        name = obj.__dict__.get("__name__")
        if name in TARGETS and sys.modules.get(name) is not obj:
            found.setdefault(name, path)
    if type(obj) is dict or type(obj) is proxy:
        kids = [(f"{path}[{k!r}]", v) for k, v in list(obj.items()) if isinstance(k, str)]
    elif type(obj) in (list, tuple, set, frozenset):
        kids = [(f"{path}[{i}]", v) for i, v in enumerate(list(obj))]
    else:
        kids = []
        for attr in ("__dict__", "__closure__", "cell_contents", "__self__", "__func__", "__wrapped__",
                     "__globals__", "__defaults__", "__kwdefaults__", "__spec__", "loader",
                     "loader_state", "__class__", "__mro__"):
            try:
                if isinstance(obj, type):
                    if attr not in ("__dict__", "__mro__"):
                        continue
                    value = type.__getattribute__(obj, attr)
                else:
                    value = object.__getattribute__(obj, attr)
            except Exception:
                continue
            kids.append((f"{path}.{attr}", value))
    todo.extend(k for k in kids if not isinstance(k[1], (str, int, float, bytes)) and id(k[1]) not in seen)
for name, path in sorted(found.items()):
    print("GOT", name, "via", path[:400])
print("walked", steps > 1000)
"#;

#[test]
fn a_pooled_program_cannot_reach_the_hidden_modules() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    let program = |text: &str| text.replace("__TARGETS__", HIDDEN_TARGETS);
    let walk = program(WALK);
    let closure = program(
        r#"import sys
TARGETS = __TARGETS__
got = set()
for finder in sys.meta_path:
    for name in ('find_spec', 'create_module', 'exec_module'):
        function = getattr(finder, name, None)
        function = getattr(function, '__func__', function)
        for cell in getattr(function, '__closure__', None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, dict):
                got |= {k for k, v in value.items() if k in TARGETS and isinstance(v, type(sys))}
print('GOT', sorted(got))
"#,
    );
    // Nothing reachable holds them: the program gets nothing and runs to its end.
    for (what, code, expected) in [
        ("the finder's closure", closure.as_str(), "GOT []\n"),
        (
            "a walk of the import state and the modules",
            walk.as_str(),
            "walked True\n",
        ),
    ] {
        let pooled = warm(&server, "nostatic", code);
        assert_eq!(pooled["status"], "ok", "{what}: {pooled}");
        assert_eq!(pooled["stdout"], expected, "{what}: {pooled}");
        let started = cold(&server, "nostatic", code);
        assert_same(&pooled, &started, what);
    }
    // Asking a finder on sys.meta_path for a hidden module directly (its spec, its loader's
    // `create_module`) is an import: judged as the program's, denied (IMP101) as `import` is.
    let direct = r#"import sys
for finder in list(sys.meta_path):
    find = getattr(finder, 'find_spec', None)
    spec = find('subprocess', None) if find else None
    loader = getattr(spec, 'loader', None)
    if loader is not None and hasattr(loader, 'create_module'):
        module = loader.create_module(spec)
        if module is not None:
            print('GOT', module.__name__, hasattr(module, 'Popen'))
print('done')
"#;
    let pooled = warm(&server, "nostatic", direct);
    assert!(
        !pooled["stdout"].as_str().unwrap_or("").contains("GOT"),
        "{pooled}"
    );
    assert_eq!(pooled["status"], "error", "{pooled}");
    assert_eq!(pooled["stopped_by"]["layer"], "runtime", "{pooled}");
    assert_eq!(pooled["stopped_by"]["rule"], "IMP101", "{pooled}");
    assert_eq!(
        pooled["error"]["name"], "warden.PolicyViolation",
        "{pooled}"
    );
    // A loader's `exec_module` given a module it did not hand out brings nothing back (a real
    // import of the preloaded `matplotlib` brings back `subprocess`, which it loaded).
    let forged = program(
        r#"import sys
TARGETS = __TARGETS__
for finder in list(sys.meta_path):
    find = getattr(finder, 'find_spec', None)
    spec = find('matplotlib', None) if find else None
    loader = getattr(spec, 'loader', None)
    # A spec of a hidden module (no file: the others would run matplotlib's file again).
    if loader is not None and spec.origin is None and hasattr(loader, 'exec_module'):
        fake = type(sys)('matplotlib')
        fake.__spec__ = spec
        try:
            loader.exec_module(fake)
        except Exception as err:
            print('refused')
# (`_posixsubprocess` is loaded on every run: the runtime layer stubs its `fork_exec`.)
print('GOT', sorted(m for m in TARGETS - {'_posixsubprocess'} if m in sys.modules))
"#,
    );
    let pooled = warm(&server, "nostatic", &forged);
    assert_eq!(pooled["status"], "ok", "{pooled}");
    assert_eq!(pooled["stdout"], "refused\nGOT []\n", "{pooled}");
    assert_eq!(pooled["stopped_by"], Value::Null, "{pooled}");
    // Only warden's bootstrap can hide modules (the finder is on sys.meta_path in a cold run too).
    let hide = r#"import sys
for finder in list(sys.meta_path):
    hide = getattr(finder, 'hide', None)
    if hide is not None:
        try:
            hide(set(), [])
            print('hidden')
        except RuntimeError:
            print('refused')
print('sys' in sys.modules)
"#;
    let pooled = warm(&server, "nostatic", hide);
    assert_eq!(pooled["stdout"], "refused\nTrue\n", "{pooled}");
    let started = cold(&server, "nostatic", hide);
    assert_same(&pooled, &started, "hiding");
    // The event raised by the program itself is judged as on a cold run.
    let forged_event =
        "import sys\nsys.audit('import', 'subprocess')\nprint(sys.modules.get('subprocess'))\n";
    let pooled = warm(&server, "nostatic", forged_event);
    assert_eq!(pooled["stopped_by"]["rule"], "IMP101", "{pooled}");
    let started = cold(&server, "nostatic", forged_event);
    assert_same(&pooled, &started, "a forged import event");
    // The gc would list every object: the program gets none, at the import (a pooled run's `gc`
    // is hidden) or at the call (a cold run's bootstrap imported `gc` itself).
    let gc = "import gc\nprint([o for o in gc.get_objects() if getattr(o, '__name__', None) == 'subprocess'])\n";
    for record in [warm(&server, "nostatic", gc), cold(&server, "nostatic", gc)] {
        assert_eq!(record["status"], "error", "{record}");
        assert_eq!(record["stdout"], "", "{record}");
        assert_eq!(record["stopped_by"]["layer"], "runtime", "{record}");
        let rule = record["stopped_by"]["rule"].as_str().unwrap_or("");
        assert!(rule == "IMP101" || rule == "ATTR303", "{record}");
    }
    // What the program may import still comes back whole: the preloaded module, its own spec.
    let allowed = "import sys\nimport matplotlib.pyplot as plt\nimport pandas\n\
print(plt.__spec__.name, type(plt.__spec__.loader).__name__, pandas.DataFrame({'a': [1]}).shape)\n";
    let pooled = warm(&server, "nostatic", allowed);
    let started = cold(&server, "nostatic", allowed);
    assert_same(&pooled, &started, "allowed imports");
}

/// A run that leaves everything it can behind (`{mark}`: the run's marker; `{key}`: its System V
/// IPC key): it names its process after the marker and puts the marker in the command lines of
/// the processes it leaves, so the host can find them while it sleeps at the end.
const DIRTY: &str = r#"import os, sys, json, time, signal, socket, ctypes, subprocess, threading, builtins
import pandas as pd
from multiprocessing import shared_memory, resource_tracker
MARK = '{mark}'
KEY = {key}
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, MARK.encode(), 0, 0, 0)
def call(f, *args):
    ctypes.set_errno(0)
    return [f(*args), ctypes.get_errno()]
left = {}
pd.DataFrame.sum = lambda self, *a, **k: 'patched'
os.environ['WARDEN_LEFT'] = MARK
builtins.warden_left = MARK
sys.modules['warden_left_module'] = type(sys)('warden_left_module')
sys.setrecursionlimit(4321)
sys.path.insert(0, '/tmp/' + MARK)
os.umask(0o077)
open(f'/tmp/left-{MARK}.txt', 'w').write(MARK)
open(f'left-{MARK}.txt', 'w').write(MARK)
os.mkdir(f'/tmp/dir-{MARK}')
memory = shared_memory.SharedMemory(create=True, size=4096, name='shm-' + MARK)
memory.buf[:4] = b'LEFT'
resource_tracker.unregister(memory._name, 'shared_memory')
left['posix_shm'] = sorted(os.listdir('/dev/shm'))
IPC_CREAT = 0o1000
left['sem'] = call(libc.semget, KEY, 1, IPC_CREAT | 0o666)
left['shm'] = call(libc.shmget, KEY, 4096, IPC_CREAT | 0o666)
left['msg'] = call(libc.msgget, KEY, IPC_CREAT | 0o666)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind('\0sock-' + MARK)
server.listen()
kept = os.open(f'/tmp/left-{MARK}.txt', os.O_RDONLY)
os.dup2(kept, 100, inheritable=True)
pipe = os.pipe()
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
SLEEPER = ['-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)', MARK]
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable] + SLEEPER)
    os._exit(0)
os.waitpid(child, 0)
subprocess.Popen([sys.executable] + SLEEPER, start_new_session=True)
os.chdir(f'/tmp/dir-{MARK}')
time.sleep(1.5)
print(json.dumps(left))
print(pd.DataFrame({'a': [1, 2]}).sum())
"#;

/// What a run finds of the state before it (`{mark}`, `{key}`: those of the dirty run before).
const CHECK: &str = r#"import os, sys, json, signal, socket, ctypes, threading, builtins
import pandas as pd
MARK = '{mark}'
KEY = {key}
libc = ctypes.CDLL(None, use_errno=True)
def call(f, *args):
    ctypes.set_errno(0)
    return [f(*args), ctypes.get_errno()]
def connect(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(name)
        return 'connected'
    except OSError as err:
        return type(err).__name__
def preload_aside(d):
    # The preload's caches (docs/pool.md): matplotlib's, and fontconfig's when the policy lets
    # matplotlib run fc-list.
    return sorted(n for n in os.listdir(d) if not (n.startswith('matplotlib') or (n == '.cache' and os.listdir(d + '/.cache') == ['fontconfig'])))
umask = os.umask(0o022)
os.umask(umask)
seen = {
    'sum': int(pd.DataFrame({'a': [1, 2]}).sum()['a']),
    'env': os.environ.get('WARDEN_LEFT'),
    'env_keys': sorted(os.environ),
    'raw_environ_has_mark': MARK.encode() in open('/proc/self/environ', 'rb').read(),
    'builtin': hasattr(builtins, 'warden_left'),
    'module': 'warden_left_module' in sys.modules,
    'modules_with_mark': [m for m in sys.modules if 'left' in m],
    'recursion_limit': sys.getrecursionlimit(),
    'sys_path': sys.path,
    'umask': umask,
    'cwd': os.getcwd(),
    'tmp': preload_aside('/tmp'),
    'dev_shm': preload_aside('/dev/shm'),
    'work': sorted(os.listdir('/work')),
    'left_files': [os.path.exists(p) for p in (f'/tmp/left-{MARK}.txt', f'/work/left-{MARK}.txt', f'/dev/shm/shm-{MARK}')],
    'fds': sorted(int(fd) for fd in os.listdir('/proc/self/fd')),
    'processes': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),
    'me': os.getpid(),
    'threads': threading.active_count(),
    'sigterm_default': signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
    'sigusr1_default': signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL,
    'sem': call(libc.semget, KEY, 0, 0),
    'shm': call(libc.shmget, KEY, 0, 0),
    'socket': connect('\0sock-' + MARK),
}
print(json.dumps(seen))
"#;

fn fill(template: &str, mark: &str, key: u32) -> String {
    template
        .replace("{mark}", mark)
        .replace("{key}", &key.to_string())
}

/// The System V IPC key of a marker (a positive `key_t`).
fn ipc_key(mark: &str) -> u32 {
    u32::from_str_radix(&mark[mark.len() - 7..], 16).expect("hex marker") | 0x1000_0000
}

#[test]
fn nothing_a_pooled_run_leaves_reaches_the_next_one() {
    warden_test_support::require_root!();
    nothing_left_reaches_the_next_run("depth = 2\n");
}

/// The same with jails that each imported the preload themselves (`pool.template = false`).
#[test]
fn nothing_a_pooled_run_leaves_reaches_the_next_one_without_a_template() {
    warden_test_support::require_root!();
    nothing_left_reaches_the_next_run("depth = 2\ntemplate = false\n");
}

fn nothing_left_reaches_the_next_run(pool: &str) {
    let (server, _rules) = pooled_server_with(pool, 2, &[("permissive", permissive_policy())]);
    let server_cgroup =
        std::fs::read_to_string(format!("/proc/{}/cgroup", server.pid())).expect("cgroup");
    let marks: Vec<String> = (0..3).map(|_| process_marker()).collect();
    let check = |mark: &str| -> Value {
        let record = warm(&server, "permissive", &fill(CHECK, mark, ipc_key(mark)));
        assert_eq!(record["status"], "ok", "{record}");
        serde_json::from_str(record["stdout"].as_str().unwrap_or("")).expect("one JSON line")
    };
    // What a pooled run finds when no run went before it in its jail (the dirty run's marker is
    // not used yet): the baseline every later run must find too.
    let baseline = check(&marks[0]);
    assert_eq!(baseline["sum"], 3, "{baseline}");
    assert_eq!(baseline["processes"], json!([baseline["me"]]), "{baseline}");
    for mark in &marks {
        let key = ipc_key(mark);
        await_ready(&server, "permissive");
        let (record, scans) = watching(mark, || {
            warm(&server, "permissive", &fill(DIRTY, mark, key))
        });
        assert_eq!(record["status"], "ok", "{record}");
        let stdout = record["stdout"].as_str().unwrap_or("");
        assert!(stdout.contains("patched"), "{record}");
        eprintln!(
            "the dirty run left: {}",
            stdout.lines().next().unwrap_or("")
        );
        // Host side: the run's processes (its interpreter and both sleepers) were seen, in
        // cgroups of their own. Every sighting is kept: a process seen before its exec is seen
        // again after it.
        let processes: Vec<Seen> = scans.into_iter().flatten().collect();
        assert!(
            processes.iter().any(|p| p.comm == *mark),
            "the dirty run's interpreter was not seen: {processes:?}"
        );
        let sleepers = processes
            .iter()
            .filter(|p| p.cmdline.contains(mark.as_str()) && p.cmdline.contains("time.sleep"))
            .map(|p| (p.pid, p.start.clone()))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        assert!(sleepers >= 2, "the sleepers were not seen: {processes:?}");
        let cgroups: std::collections::BTreeSet<std::path::PathBuf> = processes
            .iter()
            .flat_map(|p| own_cgroup_dirs(&p.cgroup, &server_cgroup))
            .collect();
        assert!(
            !cgroups.is_empty(),
            "the dirty run's processes were in the server's cgroups: {processes:?}"
        );
        // After the record: none of them is left, nor their cgroups.
        assert!(
            wait_until(Duration::from_secs(10), || {
                !processes.iter().any(still_alive)
                    && scan(mark).is_empty()
                    && cgroups.iter().all(|dir| !dir.exists())
            }),
            "the dirty run left processes {:?} or cgroups {:?}",
            scan(mark),
            cgroups.iter().filter(|d| d.exists()).collect::<Vec<_>>()
        );
        // Nothing it wrote is outside: not in the server's directories, the host's /tmp or
        // /dev/shm, nor in the host's System V IPC.
        let mut outside = names_containing(server.dir.path(), mark, 6);
        outside.extend(names_containing(std::path::Path::new("/tmp"), mark, 0));
        outside.extend(names_containing(std::path::Path::new("/dev/shm"), mark, 0));
        assert!(outside.is_empty(), "the dirty run left {outside:?}");
        for table in ["sem", "shm", "msg"] {
            let text =
                std::fs::read_to_string(format!("/proc/sysvipc/{table}")).unwrap_or_default();
            assert!(
                !text
                    .lines()
                    .filter_map(|l| l.split_whitespace().next())
                    .any(|k| k == key.to_string()),
                "a System V {table} of the jail is on the host: {text}"
            );
        }
        // In the jail: the next pooled run of the same policy finds what the first one found.
        let after = check(mark);
        for (field, value) in baseline.as_object().expect("object") {
            if field == "me" || field == "processes" {
                continue;
            }
            assert_eq!(
                &after[field], value,
                "`{field}` crossed from the dirty run\nbefore: {baseline}\nafter: {after}"
            );
        }
        assert_eq!(after["processes"], json!([after["me"]]), "{after}");
        assert_eq!(after["sum"], 3, "{after}");
        assert_eq!(after["env"], Value::Null, "{after}");
        assert_eq!(after["module"], false, "{after}");
        assert_eq!(after["builtin"], false, "{after}");
        assert_eq!(after["left_files"], json!([false, false, false]), "{after}");
        assert_eq!(after["tmp"], json!([]), "{after}");
        assert_eq!(after["work"], json!([]), "{after}");
        assert_eq!(after["cwd"], "/work", "{after}");
        assert_ne!(after["recursion_limit"], 4321, "{after}");
        assert_ne!(after["umask"], 0o077, "{after}");
        assert!(
            !after["fds"].as_array().expect("fds").contains(&json!(100)),
            "{after}"
        );
        assert_eq!(after["threads"], 1, "{after}");
        assert_eq!(after["sigterm_default"], true, "{after}");
        assert_eq!(after["sigusr1_default"], true, "{after}");
        assert_eq!(after["sem"][0], -1, "{after}");
        assert_eq!(after["shm"][0], -1, "{after}");
        assert_ne!(after["socket"], "connected", "{after}");
    }
}

/// What a run finds of its jail from its first statement on (`{mark}`: the run's marker): the
/// kernel's view of its ids, capabilities and seccomp mode, its namespaces and cgroup, its
/// `/tmp` and work dir; then Landlock and seccomp put to the test; then it names its process
/// after the marker and sleeps, for the host to look at it.
const CONFINED: &str = r#"status, cgroup = open('/proc/self/status').read(), open('/proc/self/cgroup').read()
import os, json, time, ctypes
fds = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))
def attempt(f):
    try:
        f()
        return 'ok'
    except OSError as err:
        return f'{type(err).__name__}:{err.errno}'
libc = ctypes.CDLL(None, use_errno=True)
def call(f, *args):
    ctypes.set_errno(0)
    return [f(*args), ctypes.get_errno()]
def preload_aside(d):
    # The preload's caches (docs/pool.md): matplotlib's, and fontconfig's when the policy lets
    # matplotlib run fc-list.
    return sorted(n for n in os.listdir(d) if not (n.startswith('matplotlib') or (n == '.cache' and os.listdir(d + '/.cache') == ['fontconfig'])))
FIELDS = ('Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp')
out = {
    'status': {k: v.strip() for k, v in (l.split(':', 1) for l in status.splitlines()) if k in FIELDS},
    'ids': [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
    'pid': os.getpid(),
    'fds': fds,
    'stdin': os.readlink('/proc/self/fd/0'),
    'processes': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),
    'ns': {n: os.readlink('/proc/self/ns/' + n) for n in ('mnt', 'pid', 'ipc', 'uts', 'net', 'cgroup', 'user')},
    'cgroup': cgroup,
    'tmp': preload_aside('/tmp'),
    'work': sorted(os.listdir('/work')),
    'cwd': os.getcwd(),
    'read_shadow': attempt(lambda: open('/etc/shadow').read()),
    # /proc/self/comm is the process's own to write (mode 0644, the same uid) on a read-write
    # proc: only Landlock (proc is read-only in the program's domain) refuses it.
    'write_proc': attempt(lambda: open('/proc/self/comm', 'w').write('x')),
    'write_usr': attempt(lambda: open('/usr/warden-left', 'w')),
    'write_root': attempt(lambda: open('/warden-left', 'w')),
    'write_etc': attempt(lambda: open('/etc/passwd', 'a')),
    'write_tmp': attempt(lambda: open('/tmp/allowed', 'w').close()),
    'write_work': attempt(lambda: open('/work/allowed', 'w').close()),
    'syscalls': {
        'unshare': call(libc.unshare, 0x00020000),
        'mount': call(libc.mount, b'none', b'/tmp', b'tmpfs', 0, None),
        'setns': call(libc.setns, 0, 0),
        'chroot': call(libc.chroot, b'/tmp'),
        'ptrace': call(libc.ptrace, 16, 1, 0, 0),
    },
}
libc.prctl(15, b'{mark}', 0, 0, 0)
time.sleep(2)
out['cgroup_at_end'] = open('/proc/self/cgroup').read()
print(json.dumps(out))
"#;

#[test]
fn every_pooled_run_has_its_own_namespaces_cgroup_and_confinement() {
    warden_test_support::require_root!();
    own_namespaces_cgroup_and_confinement("depth = 4\nmemory_mib = 4096\n");
}

/// The same with jails that each imported the preload themselves (`pool.template = false`).
#[test]
fn every_pooled_run_has_its_own_namespaces_cgroup_and_confinement_without_a_template() {
    warden_test_support::require_root!();
    own_namespaces_cgroup_and_confinement("depth = 4\nmemory_mib = 4096\ntemplate = false\n");
}

fn own_namespaces_cgroup_and_confinement(pool: &str) {
    const RUNS: usize = 20;
    const CLIENTS: usize = 4;
    let (server, _rules) =
        pooled_server_with(pool, CLIENTS, &[("permissive", permissive_policy())]);
    let server_pid = server.pid();
    let server_cgroup =
        std::fs::read_to_string(format!("/proc/{server_pid}/cgroup")).expect("cgroup");
    let server_ns: std::collections::BTreeMap<String, String> =
        seen(server_pid).expect("the server").ns;
    // Every run's record and marker, and the host's sightings of it (by its marker).
    let mut runs: Vec<(String, Value, Vec<Seen>)> = Vec::new();
    // Pairs of runs (indices) the host saw alive at the same moment.
    let mut together = std::collections::BTreeSet::new();
    let prefix = "wp-";
    while runs.len() < RUNS {
        let n = await_ready_for(&server, "permissive", CLIENTS.min(RUNS - runs.len()));
        let marks: Vec<String> = (0..n).map(|_| process_marker()).collect();
        let codes: Vec<String> = marks
            .iter()
            .map(|m| CONFINED.replace("{mark}", m))
            .collect();
        let (records, scans) = watching(prefix, || concurrently(&server, "permissive", &codes));
        let base = runs.len();
        for scan in &scans {
            let alive: Vec<usize> = (0..n)
                .filter(|i| scan.iter().any(|p| p.comm == marks[*i]))
                .collect();
            for a in &alive {
                for b in &alive {
                    if a < b {
                        together.insert((base + a, base + b));
                    }
                }
            }
        }
        for (mark, record) in marks.into_iter().zip(records) {
            let sightings: Vec<Seen> = scans
                .iter()
                .flatten()
                .filter(|p| p.comm == mark)
                .cloned()
                .collect();
            runs.push((mark, record, sightings));
        }
    }
    let mut cgroups: Vec<std::path::PathBuf> = Vec::new();
    let mut users = std::collections::BTreeSet::new();
    let mut cgroup_namespaces = std::collections::BTreeSet::new();
    for (i, (mark, record, sightings)) in runs.iter().enumerate() {
        assert_eq!(record["status"], "ok", "run {i}: {record}");
        assert_eq!(record["warm"], true, "run {i} was not pooled: {record}");
        let out: Value = serde_json::from_str(record["stdout"].as_str().unwrap_or(""))
            .unwrap_or_else(|err| panic!("run {i}: not one JSON line ({err}): {record}"));
        // In the jail, from the program's first statement: the unprivileged id, no capability,
        // no_new_privs, seccomp filtering.
        assert_eq!(
            out["ids"],
            json!([65534, 65534, 65534, 65534]),
            "run {i}: {out}"
        );
        let status = &out["status"];
        for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(status[cap], "0000000000000000", "run {i}: {cap}: {out}");
        }
        assert_eq!(status["NoNewPrivs"], "1", "run {i}: {out}");
        assert_eq!(status["Seccomp"], "2", "run {i}: {out}");
        // No descriptor but its standard streams (3: the listing's own), stdin `/dev/null`, and
        // no other process in sight (not the template's, not an earlier run's).
        assert_eq!(out["fds"], json!([0, 1, 2, 3]), "run {i}: {out}");
        assert_eq!(out["stdin"], "/dev/null", "run {i}: {out}");
        assert_eq!(out["processes"], json!([out["pid"]]), "run {i}: {out}");
        // A fresh /tmp and work dir (the preload's matplotlib cache aside: docs/pool.md).
        assert_eq!(out["tmp"], json!([]), "run {i}: {out}");
        assert_eq!(out["work"], json!([]), "run {i}: {out}");
        assert_eq!(out["cwd"], "/work", "run {i}: {out}");
        // Landlock and the read-only tree: nothing written outside /work and /tmp.
        assert_ne!(out["read_shadow"], "ok", "run {i}: {out}");
        assert_eq!(out["write_proc"], "PermissionError:13", "run {i}: {out}");
        for path in ["write_usr", "write_root", "write_etc"] {
            assert_ne!(out[path], "ok", "run {i}: {path}: {out}");
        }
        assert_eq!(out["write_tmp"], "ok", "run {i}: {out}");
        assert_eq!(out["write_work"], "ok", "run {i}: {out}");
        // seccomp: no new namespace, mount, setns, chroot or ptrace (EPERM).
        for (call, result) in out["syscalls"].as_object().expect("syscalls") {
            assert_eq!(result, &json!([-1, 1]), "run {i}: {call}: {out}");
        }
        // From its first statement to its end, the program is at the root of its cgroup
        // namespace in every hierarchy; the host sees it in a cgroup of its own (below): it was
        // in that cgroup before its first statement, not moved there later.
        let cgroup = out["cgroup"].as_str().unwrap_or("");
        assert!(
            !cgroup.is_empty() && cgroup.lines().all(|l| l.ends_with(":/")),
            "run {i}: not at its cgroup namespace's root at its first statement: {cgroup}"
        );
        assert_eq!(out["cgroup_at_end"], out["cgroup"], "run {i}: {out}");
        // Host side: the program's process, found by its marker, is the one that reported.
        // (A sighting as it exits can miss its namespaces and memory: the last whole one.)
        let process = sightings
            .iter()
            .rfind(|p| p.ns.len() == NAMESPACES.len() && p.status.contains("VmSize:"))
            .unwrap_or_else(|| panic!("run {i} ({mark}) was never seen on the host: {out}"));
        for ns in NAMESPACES {
            assert_eq!(
                process.ns.get(ns).map(String::as_str),
                out["ns"][ns].as_str(),
                "run {i}: the host sees another {ns} namespace than the program reported"
            );
        }
        for ns in OWN_NAMESPACES {
            assert_ne!(
                process.ns.get(ns),
                server_ns.get(ns),
                "run {i} shares the server's {ns} namespace"
            );
        }
        let host_uid = status_field(&process.status, "Uid");
        assert!(
            !host_uid.split_whitespace().any(|id| id == "0"),
            "run {i}: the program runs as host root: {host_uid}"
        );
        assert_eq!(status_field(&process.status, "Seccomp"), "2", "run {i}");
        assert_eq!(status_field(&process.status, "NoNewPrivs"), "1", "run {i}");
        assert_eq!(
            status_field(&process.status, "NSpid")
                .split_whitespace()
                .last()
                .and_then(|p| p.parse::<i64>().ok()),
            out["pid"].as_i64(),
            "run {i}: {}",
            process.status
        );
        // Its own cgroup, made for it: not the server's, and no other run's.
        let own = own_cgroup_dirs(&process.cgroup, &server_cgroup);
        assert!(
            !own.is_empty(),
            "run {i} is in the server's cgroups: {}",
            process.cgroup
        );
        for dir in &own {
            assert!(
                !cgroups.contains(dir),
                "run {i} shares the cgroup {} with an earlier run",
                dir.display()
            );
        }
        cgroups.extend(own);
        users.insert(out["ns"]["user"].to_string());
        cgroup_namespaces.insert(out["ns"]["cgroup"].to_string());
    }
    // Namespace ids are reused once a namespace is gone: two runs must differ in each of them
    // when the host saw both alive at once.
    assert!(
        together.len() >= RUNS / CLIENTS,
        "too few runs overlapped to compare their namespaces: {together:?}"
    );
    let mut shared: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (a, b) in &together {
        let ns = |i: usize| -> Value {
            serde_json::from_str::<Value>(runs[i].1["stdout"].as_str().unwrap_or(""))
                .map(|out| out["ns"].clone())
                .unwrap_or(Value::Null)
        };
        let (first, second) = (ns(*a), ns(*b));
        for kind in ["user", "cgroup"] {
            if first[kind] == second[kind] {
                *shared.entry(kind).or_insert(0) += 1;
            }
        }
        for kind in OWN_NAMESPACES {
            assert_ne!(
                first[kind], second[kind],
                "runs {a} and {b}, alive together, share their {kind} namespace"
            );
        }
    }
    // Nothing of them is left: their cgroups went with them.
    assert!(
        wait_until(Duration::from_secs(10), || cgroups
            .iter()
            .all(|dir| !dir.exists())),
        "cgroups left: {:?}",
        cgroups.iter().filter(|d| d.exists()).collect::<Vec<_>>()
    );
    eprintln!(
        "{RUNS} pooled runs, {} pairs alive together, each in namespaces and cgroups of its own; \
         user namespaces: {} distinct, cgroup namespaces: {} distinct; pairs alive together that \
         shared one (reported, not required): {shared:?}",
        together.len(),
        users.len(),
        cgroup_namespaces.len()
    );
}

fn pool_counter(server: &Server, name: &str, policy: &str) -> f64 {
    support::metric(&metrics(server), &format!("{name}{{policy=\"{policy}\"}}")).unwrap_or(0.0)
}

/// The template step (issue 15, point 2): pooled jails are forked from one template per policy
/// (which imported the preload once, and forks only while single-threaded: a fork it refuses is not
/// counted), and the template is replaced by a fresh process after `template_forks` jails, so the
/// hash secret (and with it the ASLR layout and stack canary of a new exec) changes between
/// generations while the runs of one generation share it.
#[test]
fn pooled_jails_are_forked_from_a_template_that_is_re_executed() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\ntemplate_forks = 3\n");
    let code = "print(hash('warden-template'), flush=True)\n";
    let mut hashes = Vec::new();
    for _ in 0..8 {
        let record = warm(&server, "nostatic", code);
        assert_eq!(record["status"], "ok", "{record}");
        hashes.push(record["stdout"].as_str().unwrap_or("").trim().to_owned());
    }
    let forked = pool_counter(&server, "warden_pool_forked_total", "nostatic");
    let refills = pool_counter(&server, "warden_pool_refills_total", "nostatic");
    let templates = pool_counter(&server, "warden_pool_templates_started_total", "nostatic");
    assert!(
        forked >= 8.0 && forked == refills,
        "every pooled jail must be forked from the template: {forked} forked of {refills}\n{}",
        server.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    );
    // 8 runs (+ the refills behind them) at 3 forks per template: at least 3 generations.
    assert!(templates >= 3.0, "templates started: {templates}");
    let distinct: std::collections::BTreeSet<&String> = hashes.iter().collect();
    assert!(
        distinct.len() >= 2,
        "the hash secret never changed across {templates} templates: {hashes:?}"
    );
    assert!(
        distinct.len() < hashes.len(),
        "every run had its own hash secret: not forked from a shared template? {hashes:?}"
    );
}

/// A pooled worker whose run was forked from the template is used again (issue 15, throughput):
/// it starts the next jail instead of a new worker process starting it. Every jail is still new:
/// what a run leaves in `/tmp`, in its work dir and in a module is not there for the next one.
/// Pooled workers killed while they wait (with a jail or idle) cost no run.
#[test]
fn a_pooled_worker_is_used_again_for_new_jails() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    let code = "import json, os\n\
        print('mark' in os.listdir('/tmp'), 'mark' in os.listdir('.'), hasattr(json, 'mark'))\n\
        open('/tmp/mark', 'w').write('x')\nopen('mark', 'w').write('x')\njson.mark = 1\n";
    for i in 0..8 {
        let record = warm(&server, "nostatic", code);
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(
            record["stdout"], "False False False\n",
            "run {i} saw what an earlier run left: {record}"
        );
    }
    let reused = pool_counter(&server, "warden_pool_workers_reused_total", "nostatic");
    assert!(
        reused >= 4.0,
        "8 pooled runs one after another, {reused} jails started by a worker used again\n{}\n{}",
        metrics(&server),
        server.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    );
    // A worker used again serves any policy: each jail has its own policy's limits (a worker
    // keeps its last policy only for a jail of the same rules).
    for i in 0..6 {
        let (policy, memory) = if i % 2 == 0 {
            ("strict", 256)
        } else {
            ("nostatic", 1024)
        };
        let record = warm(&server, policy, "print(1)\n");
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["limits"]["memory_mib"], memory, "{policy}: {record}");
    }
    let across = pool_counter(&server, "warden_pool_workers_reused_total", "strict");
    assert!(
        across >= 1.0,
        "no strict jail started by a worker used again\n{}",
        metrics(&server)
    );
    // Every pooled worker (waiting with a jail, or idle) dies: no run is lost to it.
    let workers = session_workers(&server.state_dir);
    assert!(!workers.is_empty(), "no pooled worker");
    for pid in &workers {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    for i in 0..4 {
        let record = run(
            &server,
            &json!({"policy": "nostatic", "code": format!("print({i})")}),
        );
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["stdout"], format!("{i}\n"), "{record}");
    }
}

/// The template's interpreter among the server's descendants (its forks show the same command
/// line: the one whose parent is not itself such a process).
/// Kills every template of `server` (one per registered policy) and returns their pids.
fn kill_templates(server: &Server) -> Vec<u32> {
    let templates = template_pids(server);
    assert!(!templates.is_empty(), "no template");
    for pid in &templates {
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
    }
    templates
}

/// `n` runs sent at once (the program of run `i`: `code(i)`), their records in that order.
fn runs_at_once(server: &Server, n: usize, code: impl Fn(usize) -> String + Sync) -> Vec<Value> {
    let code = &code;
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..n)
            .map(|i| scope.spawn(move || run(server, &json!({"code": code(i)}))))
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("client"))
            .collect()
    })
}

fn template_pids(server: &Server) -> Vec<u32> {
    let server_pid = server
        .child
        .as_ref()
        .map(|c| c.id())
        .expect("the server runs");
    let all: Vec<u32> = descendants(server_pid)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let is_template = |pid: u32| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| c.split(|b| *b == 0).any(|a| a == b"--template"))
            .unwrap_or(false)
    };
    let parent = |pid: u32| -> u32 {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    };
    all.iter()
        .copied()
        .filter(|pid| is_template(*pid) && !is_template(parent(*pid)))
        .collect()
}

/// A template that dies (here: killed) is replaced: the next pooled jails are forked from a fresh
/// one, and the runs stay warm.
#[test]
fn a_dead_template_is_replaced() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    let record = warm(&server, "nostatic", "print(1)\n");
    assert_eq!(record["stdout"], "1\n", "{record}");
    // One template per registered policy (this server has several): all of them die.
    let templates = kill_templates(&server);
    // The jail waiting in the pool died with it (its namespaces were below the template's); the
    // pool notices, and starts a fresh template for the next jail.
    for _ in 0..3 {
        let record = warm(&server, "nostatic", "print(2)\n");
        assert_eq!(record["stdout"], "2\n", "{record}");
    }
    let started = pool_counter(&server, "warden_pool_templates_started_total", "nostatic");
    assert!(started >= 2.0, "no fresh template: {started}");
    let now = template_pids(&server);
    assert!(
        !now.iter().any(|pid| templates.contains(pid)),
        "a killed template is still listed: {now:?}"
    );
    assert!(
        pool_counter(&server, "warden_pool_forked_total", "nostatic") >= 3.0,
        "{}",
        metrics(&server)
    );
}

/// A template that dies costs no run that had not started: the waiting jail that died with it
/// and the forks it can no longer make send their runs cold, and later runs are forked from a
/// fresh template. (A program already delivered when its jail dies is not run a second time: its
/// record says `setup_failed`.)
#[test]
fn runs_succeed_when_the_template_dies_under_them() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    await_ready(&server, "default");
    // The jails forked from the templates die with them (their init's parent-death signal).
    let doomed: Vec<(u32, String)> = template_pids(&server)
        .into_iter()
        .flat_map(descendants)
        .collect();
    assert!(!doomed.is_empty(), "no jail forked from a template");
    let templates = kill_templates(&server);
    assert!(
        wait_until(Duration::from_secs(10), || doomed
            .iter()
            .all(|(pid, start)| !support::alive(*pid, start))),
        "the jails forked from the killed templates outlived them"
    );
    // At once: more runs than the pool holds, while the pool finds out.
    let server = &server;
    let records = runs_at_once(server, 4, |i| format!("print({i})\n"));
    for (i, record) in records.iter().enumerate() {
        assert_eq!(
            record["status"], "ok",
            "run {i} failed with the template gone: {record}"
        );
        assert_eq!(record["stdout"], format!("{i}\n"), "{record}");
    }
    let record = warm(server, "default", "print(9)\n");
    assert_eq!(record["stdout"], "9\n", "{record}");
    let now = template_pids(server);
    assert!(
        !now.iter().any(|pid| templates.contains(pid)),
        "a killed template is still listed: {now:?}"
    );
}

/// A run with input files is not sent cold when the policy's template is up: a jail is forked for
/// it with the inputs copied into `/work` before the program starts, read-only as on a cold run,
/// and the record (output, files back, the inputs not among them) is the cold run's.
#[test]
fn a_run_with_input_files_is_forked_with_them() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    await_ready(&server, "default");
    let csv = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        "x,y\n1,a\n2,b\n3,a\n",
    );
    let notes = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "kept as is\n");
    let code = "import json, os, pandas as pd\n\
                df = pd.read_csv('data.csv')\n\
                try:\n    open('data.csv', 'a').write('x')\n    wrote = True\n\
                except OSError as err:\n    wrote = type(err).__name__\n\
                open('total.txt', 'w').write(str(int(df.x.sum())))\n\
                print(json.dumps({'rows': len(df), 'groups': df.groupby('y').x.sum().to_dict(), \
                'wrote': wrote, 'notes': open('in/notes.txt').read(), \
                'owner_is_me': os.stat('data.csv').st_uid == os.stat('total.txt').st_uid}))\n";
    let inputs = json!([
        {"name": "data.csv", "content_base64": csv},
        {"name": "in/notes.txt", "content_base64": notes},
    ]);
    let before = pool_counter(&server, "warden_pool_hits_total", "default");
    let _ = before;
    let warm_record = run(
        &server,
        &json!({"policy": "default", "code": code, "inputs": inputs, "return_files": true}),
    );
    let cold_record = run(
        &server,
        &json!({"policy": "default", "code": code, "inputs": inputs, "return_files": true,
                "limits": {"memory_mib": 1000}}),
    );
    assert_eq!(warm_record["warm"], true, "not forked: {warm_record}");
    assert_eq!(cold_record["warm"], false, "{cold_record}");
    assert_eq!(warm_record["status"], "ok", "{warm_record}");
    let out: Value =
        serde_json::from_str(warm_record["stdout"].as_str().unwrap_or("")).expect("json");
    assert_eq!(out["rows"], 3, "{warm_record}");
    assert_eq!(out["groups"], json!({"a": 4, "b": 2}));
    assert_eq!(
        out["wrote"], "PermissionError",
        "an input was writable: {warm_record}"
    );
    assert_eq!(
        out["owner_is_me"], false,
        "an input belongs to the program: {warm_record}"
    );
    assert_eq!(out["notes"], "kept as is\n");
    for field in [
        "status",
        "stdout",
        "stderr",
        "exit_code",
        "files",
        "files_refused",
    ] {
        assert_eq!(
            warm_record[field], cold_record[field],
            "`{field}` differs between the forked and the cold run\nforked: {warm_record}\ncold: {cold_record}"
        );
    }
    let files = warm_record["files"].as_array().expect("files");
    assert_eq!(
        files.len(),
        1,
        "only the new file comes back: {warm_record}"
    );
    assert_eq!(files[0]["path"], "total.txt");
    assert_eq!(files[0]["content_base64"], "Ng==");
}

/// A pooled run's CPU limit holds for its whole tree, as a cold run's: it is the run's cgroup
/// counter that is held to `cpu_time_ms` from the delivery (not each process's RLIMIT_CPU), so
/// three children that each burn 1.6 s stop at about 1 s with `cpu_time`, forked or cold.
#[test]
fn a_pooled_runs_cpu_limit_holds_for_every_process_of_the_run() {
    warden_test_support::require_root!();
    let (server, _rules) =
        pooled_server_with("depth = 1\n", 2, &[("permissive", permissive_policy())]);
    let code = r#"import os, time
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        end = time.process_time() + 1.6
        while time.process_time() < end:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print('all done')
"#;
    let limits = json!({"cpu_time_ms": 1000, "wall_time_ms": 30000});
    await_ready(&server, "permissive");
    let pooled = run(
        &server,
        &json!({"policy": "permissive", "code": code, "limits": limits}),
    );
    assert_eq!(pooled["warm"], true, "not pooled: {pooled}");
    let mut cold_limits = limits.clone();
    cold_limits["memory_mib"] = json!(1000);
    let started = run(
        &server,
        &json!({"policy": "permissive", "code": code, "limits": cold_limits}),
    );
    assert_eq!(started["warm"], false, "pooled: {started}");
    for (what, record) in [("pooled", &pooled), ("cold", &started)] {
        assert_eq!(record["status"], "timeout", "{what}: {record}");
        assert_eq!(
            record["limits_hit"],
            json!(["cpu_time"]),
            "{what}: {record}"
        );
        assert!(
            !record["stdout"].as_str().unwrap_or("").contains("all done"),
            "{what}: {record}"
        );
        let cpu = record["usage"]["cpu_ms"].as_u64().unwrap_or(u64::MAX);
        assert!(
            cpu < 2000,
            "{what}: {cpu} ms of CPU under a 1000 ms limit: {record}"
        );
    }
}

/// Issue 25, point 8: `/metrics` shows a token the series of the policies it may use, and the
/// server-wide ones; the other policies' names never appear.
#[test]
fn metrics_show_a_restricted_token_only_its_own_policies() {
    warden_test_support::require_root!();
    let (server, _rules) = pooled_server("depth = 1\n");
    await_ready(&server, "default");
    await_ready(&server, "strict");
    let all = metrics(&server);
    // (The other policies' jails may still be starting on a loaded host: "default" is the one
    // the restricted token must not see.)
    for policy in ["default", "strict"] {
        assert!(
            all.contains(&format!("policy=\"{policy}\"")),
            "{policy}: {all}"
        );
    }
    let strict = request(
        &server.unix(),
        "GET",
        "/metrics",
        Some(support::STRICT_TOKEN),
        None,
    );
    assert_eq!(strict.status, 200, "{}", strict.text());
    let strict = strict.text();
    assert!(
        strict.contains("warden_pool_ready{policy=\"strict\"} 1"),
        "{strict}"
    );
    for hidden in ["default", "nostatic", "review"] {
        assert!(
            !strict.contains(&format!("\"{hidden}\"")),
            "{hidden} shown: {strict}"
        );
    }
    // The server-wide series stay.
    assert!(strict.contains("warden_max_concurrent_runs"), "{strict}");
}

/// Takes what it can of the budgets the kernel counts per uid, holds it, and says when.
const BUDGET_HOG: &str = r#"
import ctypes, fcntl, json, os, signal, threading, time
libc = ctypes.CDLL(None, use_errno=True)
got = {"inotify": 0, "rt_signals": 0, "timers": 0, "grown_pipes": 0}
for _ in range(16):
    if libc.inotify_init1(0) < 0:
        break
    got["inotify"] += 1
signal.pthread_sigmask(signal.SIG_BLOCK, range(34, 60))
for _ in range(600):
    try:
        os.kill(os.getpid(), 40)
        got["rt_signals"] += 1
    except OSError:
        break
timers = []
for _ in range(600):
    timer = ctypes.c_void_p()
    if libc.timer_create(1, None, ctypes.byref(timer)) < 0:
        break
    timers.append(timer)
    got["timers"] += 1
pipes = []
for _ in range(100):
    r, w = os.pipe()
    pipes.append((r, w))
    try:
        fcntl.fcntl(w, 1031, 1 << 20)
        got["grown_pipes"] += 1
    except OSError:
        pass
got["held_from"] = time.time()
time.sleep(4)
got["held_until"] = time.time()
print(json.dumps(got))
"#;

/// Started beside the hog: a pipe of the default size and a queued signal, and when it asked.
const BUDGET_NEIGHBOUR: &str = r#"
import fcntl, json, os, signal, time
time.sleep(2)
r, w = os.pipe()
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
os.kill(os.getpid(), signal.SIGUSR1)
print(json.dumps({"pipe": fcntl.fcntl(w, 1032), "pending": signal.SIGUSR1 in signal.sigpending(),
                  "at": time.time()}))
"#;

/// Issue 25: runs forked from one template share its user namespace and host uid, so what the
/// kernel counts per uid — inotify instances, queued real-time signals (POSIX timers hold one
/// each), pipe buffers — would be one budget for every tenant whose run the template forks. Two
/// concurrent pooled runs of two clients and one policy (so one template), static rules and
/// runtime layer off:
/// the first takes all it can and holds it; the second, asking while the first holds, still gets
/// a full 64 KiB pipe and its signal. The kernel refuses the first every call that draws on those
/// budgets (seccomp), so it holds nothing.
#[test]
fn a_pooled_run_cannot_take_the_per_uid_budgets_a_concurrent_run_needs() {
    warden_test_support::require_root!();
    // Two clients: the hog over the socket without a token (its peer uid), the neighbour with a
    // token of its own.
    const NEIGHBOUR_TOKEN: &str = "neighbour-token-4d1f";
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("budgets.toml");
    std::fs::write(
        &rules,
        no_static_variant("budgets", "[runtime]\nhooks = \"off\"\n"),
    )
    .expect("write");
    let server = Server::start(Options {
        pool: Some("depth = 2\nmemory_mib = 4096\n".to_owned()),
        max_concurrent_runs: 2,
        extra_policies: vec![("budgets".to_owned(), rules)],
        extra_config: Some(format!(
            "[[tokens]]\nname = \"neighbour\"\nsha256 = \"{}\"\npolicies = [\"budgets\"]\n",
            support::sha256_hex(NEIGHBOUR_TOKEN)
        )),
        ..Options::default()
    });
    await_ready_for(&server, "budgets", 2);
    let records: Vec<Value> = std::thread::scope(|scope| {
        let hog = scope.spawn(|| run(&server, &json!({"policy": "budgets", "code": BUDGET_HOG})));
        let neighbour = scope.spawn(|| {
            let body = json!({"policy": "budgets", "code": BUDGET_NEIGHBOUR});
            let answer = post_json(&server.unix(), "/v1/run", Some(NEIGHBOUR_TOKEN), &body);
            assert_eq!(answer.status, 200, "{}", answer.text());
            answer.json()
        });
        vec![
            hog.join().expect("hog"),
            neighbour.join().expect("neighbour"),
        ]
    });
    for record in &records {
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["warm"], true, "both runs must be forked: {record}");
    }
    let parse = |record: &Value| -> Value {
        serde_json::from_str(record["stdout"].as_str().unwrap_or(""))
            .unwrap_or_else(|err| panic!("not one JSON line ({err}): {record}"))
    };
    let (hog, neighbour) = (parse(&records[0]), parse(&records[1]));
    for budget in ["inotify", "rt_signals", "timers", "grown_pipes"] {
        assert_eq!(hog[budget], 0, "the run took {budget}: {hog}");
    }
    let at = neighbour["at"].as_f64().expect("at");
    assert!(
        hog["held_from"].as_f64().expect("held_from") < at
            && at < hog["held_until"].as_f64().expect("held_until"),
        "the second run did not ask while the first held: {hog} {neighbour}"
    );
    assert_eq!(neighbour["pipe"], 65536, "{neighbour}");
    assert_eq!(neighbour["pending"], true, "{neighbour}");
}
