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
        traceback.contains("File \"/run/warden/main.py\", line 2, in f")
            && traceback.contains("return xs[3]"),
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
        let before = session_workers(&server.state_dir);
        let record = warm(&server, "nostatic", dirty);
        assert_eq!(record["status"], "ok", "{record}");
        assert!(record["stdout"].as_str().unwrap_or("").contains("patched"));
        // Host side: the worker that ran it is gone, with every process and cgroup of its jail.
        let used: Vec<u32> = before
            .iter()
            .copied()
            .filter(|pid| !session_workers(&server.state_dir).contains(pid))
            .collect();
        assert_eq!(used.len(), 1, "one pooled worker was used: {before:?}");
        let pid = used[0];
        assert!(
            wait_until(Duration::from_secs(10), || cgroups_of(pid).is_empty()
                && descendants(pid).is_empty()),
            "the pooled jail of {pid} left {:?} {:?}",
            cgroups_of(pid),
            descendants(pid)
        );
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
    let (server, _rules) = pooled_server("depth = 1\n");
    // The one jail goes to the first run; the next finds the pool empty (refilling takes
    // seconds) and starts cold, successfully.
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
    let workers = session_workers(&server.state_dir);
    assert!(workers.len() >= 2, "{workers:?}");
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
    let mut claimed: Vec<u32> = Vec::new();
    for i in 0..6 {
        await_ready(&server, "default");
        let waiting = session_workers(&server.state_dir);
        let record = run(
            &server,
            &json!({"code": format!("open('f.txt', 'w').write('{i}')\nprint({i})\n")}),
        );
        assert_eq!(record["warm"], true, "{record}");
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["stdout"], format!("{i}\n"), "{record}");
        assert_eq!(record["files"][0]["path"], "f.txt", "{record}");
        let left = session_workers(&server.state_dir);
        claimed.extend(waiting.iter().filter(|pid| !left.contains(pid)));
    }
    assert!(!claimed.is_empty());
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
    for pid in &claimed {
        assert!(
            std::fs::metadata(format!("/proc/{pid}")).is_err()
                || std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| !c.contains("session-worker")),
            "the claimed worker {pid} is still there"
        );
        assert!(
            descendants(*pid).is_empty(),
            "{pid}: {:?}",
            descendants(*pid)
        );
        assert!(cgroups_of(*pid).is_empty(), "{pid}: {:?}", cgroups_of(*pid));
    }
    // Only the waiting jails' directories are left (each claimed worker's went with it).
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
    assert_eq!(session_workers(&server.state_dir), waiting);
    // The jail it did not take serves the next program.
    let record = warm(&server, "default", "print(1)\n");
    assert_eq!(record["stdout"], "1\n", "{record}");
    assert_eq!(hits(&server), before + 1.0);
}
