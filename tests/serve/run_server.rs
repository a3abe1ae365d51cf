//! `warden run --server ADDR` (and `WARDEN_URL`): the CLI's run sent to a running server — the same
//! record as a local run, inputs sent along, files delivered to `--output-dir`, the server's
//! policies named with `--policy`, and clear refusals for what a client may not send.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use warden_test_support::{require_root, warden};

use super::support::{Options, Server, TOKEN};

fn run_json(command: &mut Command) -> (Option<i32>, Value, String) {
    let out = command.output().expect("warden run");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let record = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), record, err)
}

fn workspace(dir: &Path) {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/sales.csv"), "region,n\nnorth,3\nsouth,4\n").unwrap();
    std::fs::write(dir.join("rate.txt"), "2\n").unwrap();
    std::fs::write(
        dir.join("prog.py"),
        "import csv, json\n\
         rows = list(csv.DictReader(open('data/sales.csv')))\n\
         rate = int(open('rate.txt').read())\n\
         total = sum(int(r['n']) for r in rows) * rate\n\
         open('summary.txt', 'w').write(f'total {total}\\n')\n\
         print(json.dumps({'total': total}))\n",
    )
    .unwrap();
}

#[test]
fn a_run_sent_to_a_server_gives_the_local_record_and_files() {
    require_root!();
    let server = Server::start(Options::default());
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path());
    let args = |out: &str| {
        let mut command = warden();
        command.current_dir(dir.path()).args([
            "run",
            "--json",
            "--input",
            "data",
            "--input",
            "rate.txt",
            "--output-dir",
            out,
            "prog.py",
        ]);
        command
    };
    let (local_code, local, err) = run_json(&mut args("local-out"));
    assert_eq!(local_code, Some(0), "{err}");
    let address = format!("unix:{}", server.socket.display());
    let (code, remote, err) = run_json(args("remote-out").args(["--server", &address]));
    assert_eq!(code, Some(0), "{err}");
    for field in ["status", "stdout", "exit_code", "check", "validation"] {
        assert_eq!(remote[field], local[field], "{field}: {remote} vs {local}");
    }
    assert_eq!(remote["stdout"], "{\"total\": 14}\n");
    assert_eq!(remote["files"][0]["path"], "summary.txt", "{remote}");
    assert_eq!(remote["files"][0]["sha256"], local["files"][0]["sha256"]);
    assert!(
        remote["files"][0].get("content_base64").is_none(),
        "contents are delivered, not printed"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("remote-out/summary.txt")).unwrap(),
        "total 14\n"
    );

    // WARDEN_URL does the same; a denied program is a record with exit 1, as locally.
    std::fs::write(dir.path().join("bad.py"), "import os\nos.system('id')\n").unwrap();
    let (code, record, err) = run_json(
        warden()
            .current_dir(dir.path())
            .env("WARDEN_URL", &address)
            .args(["run", "--json", "bad.py"]),
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(record["status"], "denied", "{record}");
    // The human summary of a served run is the local one's.
    let out = warden()
        .current_dir(dir.path())
        .args([
            "run", "--server", &address, "prog.py", "--input", "data", "--input", "rate.txt",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{\"total\": 14}\n");
    assert!(
        err.contains("warden: ok in") && err.contains("warden exits 0"),
        "{err}"
    );
}

#[test]
fn a_server_run_refuses_what_a_client_may_not_send_and_says_why() {
    require_root!();
    let server = Server::start(Options {
        tcp: true,
        ..Options::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.py"), "print(1)\n").unwrap();
    let address = format!("unix:{}", server.socket.display());
    for (flag, word) in [
        ("--no-policy", "--no-policy"),
        ("--no-hooks", "--no-hooks"),
        ("--approve", "warden review"),
    ] {
        let out = warden()
            .current_dir(dir.path())
            .args(["run", "--server", &address, flag, "p.py"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(word),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // An unknown policy is the server's 400, said as such, exit 2 (nothing ran).
    let out = warden()
        .current_dir(dir.path())
        .args([
            "run",
            "--server",
            &address,
            "--policy",
            "no-such-policy",
            "p.py",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("400"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Over TCP the token comes from WARDEN_TOKEN; without it, 401.
    let tcp = format!("http://{}", server.tcp.unwrap());
    let out = warden()
        .current_dir(dir.path())
        .env_remove("WARDEN_TOKEN")
        .args(["run", "--server", &tcp, "p.py"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("401"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = warden()
        .current_dir(dir.path())
        .env("WARDEN_TOKEN", TOKEN)
        .args(["run", "--server", &tcp, "p.py"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    // No server there: exit 2 and where it looked.
    let out = warden()
        .current_dir(dir.path())
        .args(["run", "--server", "unix:/nonexistent/warden.sock", "p.py"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("cannot connect to warden serve at unix:/nonexistent/warden.sock"));
}
