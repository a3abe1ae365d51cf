//! Sessions end to end (`warden repl --json`): one jailed interpreter keeps its state across cells;
//! each cell is checked in the context of the accepted cells; every status has its record; a cell
//! that tampers with warden's driver breaks only its own session; nothing is left behind. Effects
//! are judged from the host side: files delivered from the work dir, a canary outside the roots.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use warden_test_support::{both_modes, repo};

use super::support::{self, As, Canary, BASE_RULES};

/// A finished session: one record per cell, warden's exit code and stderr, and the delivered files.
struct Ran {
    records: Vec<Value>,
    exit_code: i32,
    stderr: String,
    delivered: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Ran {
    fn status(&self, index: usize) -> &str {
        self.records[index]["status"].as_str().unwrap_or("")
    }

    fn everything(&self) -> String {
        format!(
            "{}{}",
            self.stderr,
            self.records
                .iter()
                .map(Value::to_string)
                .collect::<String>()
        )
    }
}

/// Runs `cells` in one session as `who`: `warden repl --json --rules <rules> --output-dir <out>`
/// plus `extra`, then checks that nothing of the session is left on the host.
fn session(who: As, cells: &[&str], rules: &str, extra: &[&str]) -> Ran {
    use std::os::unix::fs::PermissionsExt;
    let dir = support::shared_tempdir();
    if who == As::User {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
    }
    let rules_path = dir.path().join("rules.toml");
    std::fs::write(&rules_path, support::rules_for(who, rules)).expect("rules");
    let cells_path = dir.path().join("cells.jsonl");
    let mut input = std::fs::File::create(&cells_path).expect("cells");
    for cell in cells {
        writeln!(input, "{}", serde_json::json!({ "code": cell })).expect("write");
    }
    drop(input);
    let out = dir.path().join("out");
    let mut args: Vec<String> = vec![
        "repl".into(),
        "--json".into(),
        "--rules".into(),
        rules_path.display().to_string(),
        "--output-dir".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let mut command = support::command_as(who, &args);
    command.stdin(Stdio::from(std::fs::File::open(&cells_path).expect("open")));
    command.env("WARDEN_DATA_DIR", "/var/lib/warden");
    let output = support::run_with_timeout(command, Duration::from_secs(180));
    support::assert_nothing_left(output.pid);
    let records: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON record per cell"))
        .collect();
    let mut delivered: Vec<String> = std::fs::read_dir(&out)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    delivered.sort();
    Ran {
        records,
        exit_code: output.status,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        delivered,
        _dir: dir,
    }
}

fn default_rules() -> String {
    std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules/default.toml")
}

/// Small limits: a 2 s cell, 128 MiB for the session, 4 KiB of stdout per cell.
const SESSION_RULES: &str = r#"
[policy]
name = "session-test"
[processes]
allow = true
[limits]
wall_time_ms = 2000
memory_mib = 128
stdout_bytes = 4096
stderr_bytes = 16384
"#;

fn png(bundle: &Value) -> Vec<u8> {
    let text = bundle["image/png"].as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}

both_modes! {
    /// State is kept across cells and each cell's record has Jupyter's shape: the value of the last
    /// expression, stdout, an error with the cell's own frames only, figures as PNG; the files the
    /// session wrote come back.
    fn state_is_kept_and_cells_have_jupyter_shaped_records(who: As) {
        let cells = [
            "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})",
            "df['a'].sum()",
            "print('hi')\ndf",
            "def f(x):\n    return 1 / x\nf(0)",
            "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
            "fig = plt.figure()\nplt.plot([3, 1])",
            "df.to_csv('out.csv', index=False)\nlen(df);",
        ];
        let ran = session(who, &cells, &default_rules(), &[]);
        assert_eq!(ran.records.len(), cells.len(), "{}", ran.stderr);
        let counts: Vec<u64> = ran.records.iter().filter_map(|r| r["execution_count"].as_u64()).collect();
        assert_eq!(counts, (1..=cells.len() as u64).collect::<Vec<_>>());
        assert_eq!(ran.records[0]["result"], Value::Null);
        assert_eq!(ran.records[1]["result"]["text/plain"], "6");
        assert_eq!(ran.records[2]["stdout"], "hi\n");
        assert!(ran.records[2]["result"]["text/html"].as_str().unwrap_or("").contains("<table"));
        assert_eq!(ran.status(3), "error");
        let error = &ran.records[3]["error"];
        assert_eq!(error["name"], "ZeroDivisionError");
        let traceback = error["traceback"].to_string();
        assert!(traceback.contains("Cell In[4], line 3") && traceback.contains("Cell In[4], line 2"), "{traceback}");
        assert!(!traceback.contains("/run/warden") && !traceback.contains("bootstrap"), "{traceback}");
        for index in [4, 5] {
            let display = ran.records[index]["display"].as_array().cloned().unwrap_or_default();
            assert_eq!(display.len(), 1, "cell {index}: {}", ran.records[index]);
            assert!(png(&display[0]).starts_with(b"\x89PNG\r\n\x1a\n"), "cell {index}");
        }
        // A trailing semicolon hides the value, as in Jupyter.
        assert_eq!(ran.status(6), "ok");
        assert_eq!(ran.records[6]["result"], Value::Null);
        // The files the session wrote, and the figures cells 5 and 6 showed (kept by `--output-dir`).
        assert_eq!(
            ran.delivered,
            vec!["figure-5-1.png".to_owned(), "figure-6-1.png".to_owned(), "out.csv".to_owned()]
        );
        assert_eq!(ran.exit_code, 0, "{}", ran.stderr);
    }
}

/// Evasions that spread over cells are judged as if the cells were one program; a denied cell
/// does not run and leaves the session as it was. Each attack tries to leave a file in the work
/// dir or read a canary outside the roots: the host sees neither.
#[test]
fn evasions_across_cells_are_denied_and_leave_the_session_as_it_was() {
    warden_test_support::require_root!();
    let canary = Canary::new();
    let secret_path = canary.file.display().to_string();
    let read_canary = format!("print(open({secret_path:?}).read())");
    let cells: Vec<String> = vec![
        // 0-1: a re-export reached through a module bound in an earlier cell.
        "import pandas as pd".into(),
        "pd.io.stata.os.system('touch /work/PWNED-a')".into(),
        // 2-3: an alias bound in one cell, used in the next.
        "import os as o".into(),
        "o.system('touch /work/PWNED-b')".into(),
        // 4-6: a builtin shadowed, then unshadowed in another cell.
        "exec = print".into(),
        "del exec".into(),
        "exec(\"open('/work/PWNED-c', 'w')\")".into(),
        // 7-8: a dunder reached through a name bound in an earlier cell.
        "fn = pd.read_csv".into(),
        "fn.__globals__['os'].system('touch /work/PWNED-d')".into(),
        // 9: a read outside the roots through the alias.
        format!("o.sys.modules['builtins'].open({secret_path:?}).read()"),
        // 10: the session kept its state through the denials.
        "pd.DataFrame({'a': [1, 2]})['a'].sum()".into(),
        // 11: the canary, read plainly, is denied too.
        read_canary,
    ];
    let refs: Vec<&str> = cells.iter().map(String::as_str).collect();
    let ran = session(As::Root, &refs, &default_rules(), &[]);
    assert_eq!(ran.records.len(), cells.len(), "{}", ran.stderr);
    for denied in [1, 3, 6, 8, 9, 11] {
        assert_eq!(
            ran.status(denied),
            "denied",
            "cell {denied}: {}",
            ran.records[denied]
        );
        assert_eq!(ran.records[denied]["execution_count"], Value::Null);
        assert!(!ran.records[denied]["check"]["findings"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    assert_eq!(
        ran.records[10]["result"]["text/plain"], "3",
        "{}",
        ran.records[10]
    );
    assert!(
        ran.delivered.iter().all(|f| !f.starts_with("PWNED")),
        "{:?}",
        ran.delivered
    );
    assert!(
        !ran.everything().contains(&canary.secret),
        "the canary leaked"
    );
}

/// Every cell status has its record: ok, error, denied, timeout (interrupted, state kept),
/// output_limit (truncated, state kept), memory_limit (the session is over).
#[test]
fn every_cell_status_has_its_record() {
    warden_test_support::require_root!();
    let cells = [
        "x = 5\nx",
        "undefined_name",
        "import socket",
        "while True:\n    pass",
        "x + 1",
        "print('y' * 10000)",
        "x + 2",
        "blocks = [bytearray(32 << 20) for _ in range(16)]",
        "x",
    ];
    // The session is over after the memory limit: the last cell is not sent.
    let ran = session(As::Root, &cells, SESSION_RULES, &[]);
    let statuses: Vec<&str> = (0..ran.records.len()).map(|i| ran.status(i)).collect();
    assert_eq!(
        statuses,
        [
            "ok",
            "error",
            "denied",
            "timeout",
            "ok",
            "output_limit",
            "ok",
            "memory_limit"
        ],
        "{}",
        ran.everything()
    );
    assert_eq!(ran.records[1]["error"]["name"], "NameError");
    assert_eq!(ran.records[3]["session_alive"], true);
    assert_eq!(ran.records[3]["error"]["name"], "KeyboardInterrupt");
    assert_eq!(ran.records[4]["result"]["text/plain"], "6");
    assert_eq!(ran.records[5]["stdout_truncated"], true);
    assert!(ran.records[5]["stdout"].as_str().unwrap().len() <= 4096);
    assert_eq!(ran.records[6]["result"]["text/plain"], "7");
    assert_eq!(ran.records[7]["session_alive"], false);
    assert_eq!(ran.exit_code, 1);
}

/// A cell that does not stop when interrupted ends its session, which says its state is lost; so
/// does an interpreter that exits.
#[test]
fn a_cell_that_ignores_the_interrupt_or_exits_ends_the_session() {
    warden_test_support::require_root!();
    // The driver arms its interrupt before each cell: this one disarms it in the cell itself.
    let hung = [
        "x = 1",
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass",
        "x",
    ];
    let ran = session(
        As::Root,
        &hung,
        SESSION_RULES,
        &["--no-policy", "--no-hooks"],
    );
    assert_eq!(ran.status(1), "timeout", "{}", ran.everything());
    assert_eq!(ran.records[1]["session_alive"], false);
    assert!(ran.records[1]["message"]
        .as_str()
        .unwrap()
        .contains("state is lost"));
    assert_eq!(ran.records.len(), 2, "no cell runs after the session ended");

    let exits = ["import os\nos._exit(3)"];
    let ran = session(
        As::Root,
        &exits,
        SESSION_RULES,
        &["--no-policy", "--no-hooks"],
    );
    assert_eq!(ran.status(0), "session_lost", "{}", ran.everything());
    assert!(
        ran.records[0]["message"]
            .as_str()
            .unwrap()
            .contains("exit code 3"),
        "{}",
        ran.records[0]
    );
}

both_modes! {
    /// A cell that forges answers, closes the driver's descriptors, monkeypatches the driver or
    /// kills the interpreter breaks only its own session: the session ends with `session_lost`
    /// (at that cell or the next), warden reports it, and nothing is left behind.
    fn tampering_with_the_driver_breaks_only_its_own_session(who: As) {
        let attacks: Vec<(&str, &str)> = vec![
            ("forged answers", "import os\nfor fd in range(0, 64):\n    try:\n        os.write(fd, b'{\"id\": 1, \"status\": \"ok\"}\\n')\n    except OSError:\n        pass"),
            ("closed descriptors", "import os\nos.closerange(0, 1024)"),
            ("patched driver", "import json\njson.dumps = lambda *a, **k: 'not json'"),
            ("killed interpreter", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"),
        ];
        for (name, cell) in &attacks {
            let ran = session(who, &[cell, "1 + 1", "2 + 2"], BASE_RULES, &["--no-policy", "--no-hooks"]);
            let statuses: Vec<&str> = (0..ran.records.len()).map(|i| ran.status(i)).collect();
            assert_eq!(statuses.last(), Some(&"session_lost"), "{name}: {}", ran.everything());
            assert!(statuses.len() <= 2, "{name}: a cell ran after the session was lost: {statuses:?}");
            let last = &ran.records[statuses.len() - 1];
            assert_eq!(last["session_alive"], false, "{name}");
            assert!(last["message"].as_str().is_some_and(|m| m.contains("state is lost")), "{name}: {last}");
            assert_eq!(ran.exit_code, 1, "{name}");
        }
    }
}

/// The driver compiles each cell with what it took before the first cell ran: a cell that rebinds
/// `ast.parse` (which the static layer allows) cannot hand the driver a tree of its own for the
/// next cell, which the static layer never saw. And a library string evaluator given a cell's
/// literal runs it, while a string a cell built at run time is code from a string (DYN401, the
/// runtime layer: the cells' literals are the program's).
#[test]
fn cells_cannot_steer_what_the_driver_compiles() {
    warden_test_support::require_root!();
    let steer = "import ast\nhidden = ast.parse('y = 1')\ndef crafted(source, filename='<unknown>', *args, **kwargs):\n    return hidden\nast.parse = crafted";
    let ran = session(As::Root, &[steer, "y = 41 + 1\ny"], &default_rules(), &[]);
    assert_eq!(ran.status(0), "ok", "{}", ran.everything());
    assert_eq!(ran.status(1), "ok", "{}", ran.everything());
    assert_eq!(
        ran.records[1]["result"]["text/plain"],
        "42",
        "{}",
        ran.everything()
    );

    let cells = [
        "import sympy",
        "sympy.sympify('x**2 + 1')",
        "s = 'x**' + str(len('abc'))\nsympy.sympify(s)",
    ];
    let ran = session(As::Root, &cells, &default_rules(), &["--no-policy"]);
    assert_eq!(
        ran.records[1]["result"]["text/plain"],
        "x**2 + 1",
        "{}",
        ran.everything()
    );
    assert_eq!(ran.status(2), "error", "{}", ran.everything());
    assert!(
        ran.records[2]["error"].to_string().contains("DYN401"),
        "{}",
        ran.everything()
    );
}

/// One-shot runs capture what `plt.show()` shows too: each shown figure comes back as
/// `figure-N.png` with the run's files, and the figure stays open for a later `savefig`.
#[test]
fn a_figure_shown_in_a_one_shot_run_is_not_lost() {
    warden_test_support::require_root!();
    let dir = support::shared_tempdir();
    let out = dir.path().join("out");
    let program = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\n\
                   plt.savefig('mine.png')\nplt.figure()\nplt.plot([2, 1])\nplt.show()\n";
    let run = support::run(
        As::Root,
        program,
        support::Options {
            hooks: true,
            extra_args: vec!["--output-dir".into(), out.display().to_string()],
            env: vec![("WARDEN_DATA_DIR", "/var/lib/warden".to_owned())],
            rules: Some(&default_rules()),
        },
    );
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    for name in ["figure-1.png", "figure-2.png", "mine.png"] {
        let bytes = std::fs::read(out.join(name)).unwrap_or_default();
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{name} missing or not a PNG"
        );
    }
}

/// As in Jupyter: `display()` adds a value's bundle to the cell's display, and a `;` after the last
/// expression hides its value even when a comment follows.
#[test]
fn display_and_a_trailing_semicolon_behave_as_in_jupyter() {
    warden_test_support::require_root!();
    let cells = [
        "x = 1",
        "x + 1;  # hidden",
        "x + 2  # shown",
        "display([1, 2], 'text')\nx",
    ];
    let ran = session(As::Root, &cells, &default_rules(), &[]);
    assert_eq!(ran.records[1]["result"], Value::Null, "{}", ran.records[1]);
    assert_eq!(ran.records[2]["result"]["text/plain"], "3");
    let display = ran.records[3]["display"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let shown: Vec<&str> = display
        .iter()
        .filter_map(|d| d["text/plain"].as_str())
        .collect();
    assert_eq!(shown, ["[1, 2]", "'text'"], "{}", ran.records[3]);
    assert_eq!(ran.records[3]["result"]["text/plain"], "1");
}

/// A `warden repl --json` the test talks to one cell at a time (to look at the host between
/// cells).
struct Live {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    records: std::sync::mpsc::Receiver<Value>,
    _dir: tempfile::TempDir,
}

impl Live {
    fn start(who: As, rules: &str, extra: &[&str]) -> Live {
        use std::io::BufRead;
        use std::os::unix::fs::PermissionsExt;
        let dir = support::shared_tempdir();
        if who == As::User {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
                .expect("chmod");
        }
        let rules_path = dir.path().join("rules.toml");
        std::fs::write(&rules_path, support::rules_for(who, rules)).expect("rules");
        let mut args: Vec<String> = vec![
            "repl".into(),
            "--json".into(),
            "--rules".into(),
            rules_path.display().to_string(),
        ];
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let mut command = support::command_as(who, &args);
        command
            .env("WARDEN_DATA_DIR", "/var/lib/warden")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().expect("warden repl");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (send, records) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send
                    .send(serde_json::from_str(&line).expect("a JSON record per cell"))
                    .is_err()
                {
                    break;
                }
            }
        });
        Live {
            child,
            stdin,
            records,
            _dir: dir,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn cell(&mut self, code: &str) -> Value {
        let stdin = self.stdin.as_mut().expect("the session is open");
        writeln!(stdin, "{}", serde_json::json!({ "code": code })).expect("write a cell");
        stdin.flush().expect("flush");
        self.records
            .recv_timeout(Duration::from_secs(60))
            .expect("a record for the cell")
    }

    /// Ends the session; warden's exit code (nothing of the session is left on the host).
    fn finish(mut self) -> i32 {
        self.stdin = None;
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "warden repl did not end"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        support::assert_nothing_left(self.child.id());
        status.code().unwrap_or(-1)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU time (user + system) of every process below `pid`, in seconds.
fn cpu_below(pid: u32) -> f64 {
    warden_test_support::serve::descendants(pid)
        .iter()
        .map(|(child, _)| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|stat| {
                    let after = stat[stat.rfind(')')? + 2..].to_owned();
                    let fields: Vec<&str> = after.split(' ').collect();
                    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()?
                        + fields.get(12)?.parse::<u64>().ok()?;
                    Some(ticks as f64 / 100.0)
                })
                .unwrap_or(0.0)
        })
        .sum()
}

/// A cell that leaves threads running: one writes to the jail's stderr as fast as it can, one
/// spins. Between cells the flood waits in the jail (the host holds at most
/// `warden_jail::TAP_BYTES` of it, then stops reading), and the jail is frozen where its cgroup has
/// a freezer (root here); the next cell thaws it and gets the waiting output as its stderr.
const BACKGROUND: &str = r#"import os, threading, time
quiet, stop = threading.Event(), threading.Event()
beats = [0]
def flood():
    chunk = b"x" * 65536
    quiet.wait(0.5)
    while not quiet.is_set():
        os.write(2, chunk)
        time.sleep(0.001)
def spin():
    while not stop.is_set():
        beats[0] += 1
threading.Thread(target=flood, daemon=True).start()
threading.Thread(target=spin, daemon=True).start()
"#;

both_modes! {
    /// Output a session's threads write between cells costs the host a bounded amount of memory
    /// (warden repl's RSS, measured from the host), frozen or not; as root (a cgroup freezer) the
    /// threads use no CPU between cells and run again during the next cell; the session lives on.
    fn background_output_between_cells_is_bounded_on_the_host(who: As) {
        let mut live = Live::start(who, SESSION_RULES, &["--no-policy", "--no-hooks"]);
        let first = live.cell(BACKGROUND);
        assert_eq!(first["session_alive"], true, "{first}");
        let pid = live.pid();
        std::thread::sleep(Duration::from_millis(200));
        let rss_before = warden_test_support::serve::memory_kib(pid, "VmRSS");
        let cpu_before = cpu_below(pid);
        std::thread::sleep(Duration::from_millis(2000));
        let rss_after = warden_test_support::serve::memory_kib(pid, "VmRSS");
        let cpu_after = cpu_below(pid);
        let grown_mib = rss_after.saturating_sub(rss_before) / 1024;
        eprintln!(
            "{who:?}: warden repl RSS {rss_before} KiB -> {rss_after} KiB; jail CPU between cells {:.2} s",
            cpu_after - cpu_before
        );
        assert!(grown_mib < 24, "warden repl grew by {grown_mib} MiB between cells");
        if who == As::Root {
            assert!(
                cpu_after - cpu_before < 0.3,
                "the session's threads used {:.2} s of CPU between cells",
                cpu_after - cpu_before
            );
        }
        let second = live.cell(
            "quiet.set()\nimport time\nb = beats[0]\ntime.sleep(0.3)\nprint(beats[0] > b)\nstop.set()",
        );
        assert_eq!(second["session_alive"], true, "{second}");
        assert_eq!(second["stdout"], "True\n", "{second}");
        let status = second["status"].as_str().unwrap_or("");
        assert!(status == "ok" || status == "output_limit", "{second}");
        if who == As::User {
            // Not frozen: what the threads wrote while nobody asked (more than the host holds)
            // comes with the next cell, within its cap.
            assert_eq!(status, "output_limit", "{second}");
            assert!(second["stderr"].as_str().unwrap_or("").starts_with("xxxx"), "{second}");
        }
        let third = live.cell("1 + 1");
        assert_eq!(third["result"]["text/plain"], "2", "{third}");
        assert_eq!(live.finish(), 0);
    }
}
