//! The command line as a user meets it around the runs: `--version` with its commit, shell
//! completions and manual pages from the grammar, output into a pipe its reader closes, the
//! summary's exit code, `warden doctor`'s runtime-layer line, and `warden repl`'s Ctrl-C, magics
//! and figures.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use warden_test_support::require_root;
use warden_test_support::{repo, warden, warden_bin};

use super::support;

/// `warden --version` names the commit it was built from: the checkout's HEAD.
#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let out = warden()
        .arg("--version")
        .output()
        .expect("warden --version");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    match (
        std::env::var("WARDEN_COMMIT")
            .ok()
            .filter(|c| !c.is_empty()),
        head,
    ) {
        (Some(commit), _) | (None, Some(commit)) => assert_eq!(
            text.trim(),
            format!("warden {} (commit {commit})", env!("CARGO_PKG_VERSION")),
            "{text}"
        ),
        (None, None) => assert!(text.contains("(commit unknown)"), "{text}"),
    }
}

/// Completions for bash, zsh and fish come from the grammar: they name the subcommands and
/// their flags, and bash's parses.
#[test]
fn completions_for_bash_zsh_and_fish_cover_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = warden()
            .args(["completions", shell])
            .output()
            .expect("completions");
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = String::from_utf8_lossy(&out.stdout);
        for word in [
            "warden",
            "check",
            "run",
            "repl",
            "rules",
            "explain",
            "--output-dir",
            "--server",
        ] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
        if shell == "bash" {
            let mut check = Command::new("bash")
                .arg("-n")
                .stdin(Stdio::piped())
                .spawn()
                .expect("bash -n");
            check
                .stdin
                .take()
                .unwrap()
                .write_all(script.as_bytes())
                .unwrap();
            assert!(
                check.wait().unwrap().success(),
                "the bash completion does not parse"
            );
        }
    }
    let out = warden().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

/// `warden man` prints the roff page of warden; `--dir` writes one page per command.
#[test]
fn manual_pages_are_made_for_every_command() {
    let out = warden().arg("man").output().expect("warden man");
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(".TH warden 1"),
        "{}",
        &page[..page.len().min(400)]
    );
    assert!(
        page.contains("check") && page.contains("run"),
        "the page lists the commands"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = warden()
        .arg("man")
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in [
        "warden.1",
        "warden-run.1",
        "warden-check.1",
        "warden-rules-explain.1",
        "warden-serve.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(name))
            .unwrap_or_else(|_| panic!("{name} written"));
        assert!(text.contains(".TH"), "{name} is a manual page");
    }
    assert!(
        !dir.path().join("warden-worker.1").exists(),
        "internal commands get no page"
    );
}

/// Reads the first line of `command`'s standard output, then closes the pipe (what `| head -1`
/// does) and returns the exit status and standard error.
fn first_line_then_close(mut command: Command) -> (Option<i32>, String, String) {
    let (code, first, err, _) = first_line_then_close_pid(&mut command);
    (code, first, err)
}

fn first_line_then_close_pid(command: &mut Command) -> (Option<i32>, String, String, u32) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    // The reader is dropped here: the pipe is closed while warden still has output to write.
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), first, err, pid)
}

/// Output into a pipe whose reader left is dropped quietly: no "Broken pipe", no panic, and the
/// command's own exit code — for `check`, `rules explain` and a `run` (whose jail is still torn
/// down: nothing is left behind).
#[test]
fn a_reader_that_leaves_early_gets_no_broken_pipe_noise() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..400 {
        std::fs::write(
            dir.path().join(format!("p{i:03}.py")),
            "import os\nos.system('ls')\n",
        )
        .unwrap();
    }
    let mut check = warden();
    check.args(["check", "--format", "json"]).arg(dir.path());
    let (code, first, err) = first_line_then_close(check);
    assert!(first.contains("\"decision\""), "{first}");
    assert_eq!(
        code,
        Some(1),
        "the verdict's exit code (denied), not a crash: {err}"
    );
    assert!(
        !err.contains("Broken pipe") && !err.contains("panicked"),
        "{err}"
    );

    let mut explain = warden();
    explain.args(["rules", "explain"]);
    let (code, _, err) = first_line_then_close(explain);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !err.contains("Broken pipe") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn a_run_whose_reader_leaves_still_ends_cleanly() {
    require_root!();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("many.py");
    std::fs::write(&program, "for i in range(50000):\n    print('row', i)\n").unwrap();
    let mut run = warden();
    run.arg("run").arg(&program);
    let (code, first, err, pid) = first_line_then_close_pid(&mut run);
    assert_eq!(first, "row 0\n");
    assert_eq!(code, Some(0), "the run succeeded; warden says so: {err}");
    assert!(
        !err.contains("Broken pipe") && !err.contains("panicked"),
        "{err}"
    );
    assert!(
        err.contains("warden: ok"),
        "the summary still goes to stderr: {err}"
    );
    support::assert_nothing_left(pid);
}

/// The summary says warden's exit code, which is not the program's when the output is invalid.
#[test]
fn the_summary_gives_warden_s_exit_code_beside_the_program_s() {
    require_root!();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("p.py");
    std::fs::write(&program, "print('{\"n\": \"seven\"}')\n").unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"n": {"type": "integer"}}}"#,
    )
    .unwrap();
    let out = warden()
        .arg("run")
        .arg("--schema")
        .arg(&schema)
        .arg(&program)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("warden: output_invalid"), "{err}");
    assert!(
        err.contains("the program exited 0; warden exits 1"),
        "{err}"
    );
    assert!(err.contains("output invalid at `/n`"), "{err}");
}

/// `warden doctor` has a line for the runtime layer: the hook loads in the jail and stops a
/// process start the static layer never saw; without the hook library it fails.
#[test]
fn doctor_reports_the_runtime_layer_and_fails_without_it() {
    require_root!();
    let out = warden().args(["doctor", "--json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    let layer = &report["runtime_layer"];
    assert_eq!(layer["ok"], true, "{report}");
    assert_eq!(layer["in_force"], true, "{report}");
    assert!(
        layer["probe"].as_str().unwrap_or("").contains("PROC801"),
        "{report}"
    );
    let human = warden().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("ok      runtime layer: warden's audit hook"),
        "{text}"
    );

    // The same binary without its hook library beside it: the default policy requires the layer.
    let dir = support::shared_tempdir();
    let copy = dir.path().join("warden");
    std::fs::copy(warden_bin(), &copy).unwrap();
    let out = Command::new(&copy)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    assert_eq!(report["runtime_layer"]["ok"], false, "{report}");
    assert!(
        report["runtime_layer"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("hook library was not found"),
        "{report}"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// `warden repl` on a terminal (a pty from `script`): Ctrl-C (SIGINT to warden, as the terminal
/// sends it) interrupts the running cell and the session keeps its state; `%`/`!` lines get a
/// note and are not run; figures are kept in `--output-dir`.
#[test]
fn the_repl_interrupts_a_cell_on_ctrl_c_and_keeps_its_state() {
    require_root!();
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is needed for a pty");
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let figures = out_dir.path().join("out");
    let line = format!(
        "{} repl --output-dir {}",
        warden_bin().display(),
        figures.display()
    );
    let mut script = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script");
    let mut input = script.stdin.take().unwrap();
    let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let output = std::sync::Arc::clone(&output);
        let mut stdout = script.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                output
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let seen = |needle: &str, limit: Duration| {
        let start = Instant::now();
        while start.elapsed() < limit {
            if output.lock().unwrap().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    assert!(
        seen("In [1]:", Duration::from_secs(60)),
        "{}",
        output.lock().unwrap()
    );
    input.write_all(b"x = 41\n").unwrap();
    input.write_all(b"%timeit x\n").unwrap();
    assert!(
        seen("IPython magics", Duration::from_secs(20)),
        "{}",
        output.lock().unwrap()
    );
    input
        .write_all(b"import time\nwhile True: time.sleep(0.05)\n\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // The terminal's Ctrl-C: SIGINT to the foreground process, warden (script's child).
    let bin = warden_bin().display().to_string();
    let warden_pid = super::support::processes_with(&figures.display().to_string())
        .into_iter()
        .find(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).next() == Some(bin.as_bytes()))
        })
        .expect("warden repl's pid");
    warden_test_support::serve::signal(warden_pid, "INT");
    assert!(
        seen("KeyboardInterrupt", Duration::from_secs(20)),
        "{}",
        output.lock().unwrap()
    );
    input.write_all(b"print(x + 1)\n").unwrap();
    assert!(
        seen("42", Duration::from_secs(20)),
        "the state survived: {}",
        output.lock().unwrap()
    );
    input
        .write_all(b"import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\n\n")
        .unwrap();
    assert!(
        seen("kept as figure-", Duration::from_secs(60)),
        "{}",
        output.lock().unwrap()
    );
    input.write_all(b"\x04").unwrap();
    drop(input);
    let status = script.wait().unwrap();
    reader.join().unwrap();
    let text = output.lock().unwrap().clone();
    assert!(status.success(), "{text}");
    let kept: Vec<_> = std::fs::read_dir(&figures)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("figure-") && name.ends_with(".png"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?} {text}");
    let png = std::fs::read(figures.join(&kept[0])).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    super::support::assert_nothing_left(warden_pid);
}
