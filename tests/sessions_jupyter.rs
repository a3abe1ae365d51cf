//! The session corpus (corpus/sessions/) gives the same results in warden as in a real Jupyter kernel
//! (issue 14): scripts/jupyter-compare.py runs each session through ipykernel, driven by
//! jupyter_client from the venv scripts/jupyter-venv.sh makes (the default runtime's packages at their
//! locked versions), and through `warden repl --json`, and compares every cell: the `text/plain` of
//! its result, its stdout, its error name, the number of images it shows. Any difference fails.
//!
//! The corpus runs in shards (one test each, so each stays well inside nextest's time limit and the
//! shards share the machine's cores). As root, like the jail's end-to-end tests; the venv is made by
//! scripts/setup.sh, or by the comparison itself when missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use warden_test_support::{repo, require_root, warden_bin};

const SHARDS: usize = 6;

/// Runs one shard of the comparison; fails with its report on any difference.
fn compare(shard: usize) {
    require_root!();
    let output = Command::new("/usr/bin/python3")
        .arg(repo().join("scripts/jupyter-compare.py"))
        .arg("--warden")
        .arg(warden_bin())
        .arg("--shard")
        .arg(format!("{shard}/{SHARDS}"))
        .current_dir(repo())
        .output()
        .expect("run scripts/jupyter-compare.py");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "warden differs from Jupyter (exit {:?}):\n{stdout}\nstderr:\n{stderr}",
        output.status.code()
    );
    assert!(
        stdout.contains("0 differences"),
        "no summary line:\n{stdout}"
    );
}

#[test]
fn shard_0() {
    compare(0);
}

#[test]
fn shard_1() {
    compare(1);
}

#[test]
fn shard_2() {
    compare(2);
}

#[test]
fn shard_3() {
    compare(3);
}

#[test]
fn shard_4() {
    compare(4);
}

#[test]
fn shard_5() {
    compare(5);
}

/// The corpus is as large as issue 14 asks (30 sessions, 200 cells), every session is well formed,
/// and its input files are what corpus/sessions/make_inputs.py writes.
#[test]
fn the_corpus_is_complete_and_its_inputs_are_current() {
    let dir = repo().join("corpus/sessions");
    let mut sessions = 0;
    let mut cells = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus/sessions") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read a session");
        let session: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("{} is not JSON: {err}", path.display()));
        let name = session["name"].as_str().expect("a name");
        assert_eq!(
            Some(name),
            path.file_stem().and_then(|s| s.to_str()),
            "a session's name is its file's name"
        );
        let list = session["cells"].as_array().expect("cells");
        assert!(!list.is_empty(), "{name} has no cells");
        for cell in list {
            assert!(
                cell.is_string()
                    || cell
                        .as_array()
                        .is_some_and(|l| l.iter().all(|x| x.is_string())),
                "{name}: a cell is a string or a list of lines"
            );
        }
        for input in session["inputs"].as_array().into_iter().flatten() {
            let input = input.as_str().expect("an input path");
            assert!(
                dir.join(Path::new(input)).is_file(),
                "{name}: input {input} is missing"
            );
        }
        sessions += 1;
        cells += list.len();
    }
    assert!(
        sessions >= 30 && cells >= 200,
        "{sessions} sessions, {cells} cells"
    );
    let check = Command::new("/usr/bin/python3")
        .arg(dir.join("make_inputs.py"))
        .arg("--check")
        .output()
        .expect("run make_inputs.py --check");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}
