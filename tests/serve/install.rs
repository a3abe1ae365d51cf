//! The operator's install: scripts/install.sh follows deploy/warden.service's documented steps in a
//! temporary root (a new group, the binary and its hook library, the configuration and the unit,
//! the directories systemd would make, the runtime, `--check-config`); then the server starts from
//! the installed configuration exactly as the unit starts it, and a program runs over its socket.
//! Configurations that would fail at start fail `--check-config` first, with a clear message.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use warden_test_support::repo;
use warden_test_support::serve::{post_json, request, signal, Endpoint};

/// A group made for the test, removed when it ends.
struct TempGroup(String);

impl Drop for TempGroup {
    fn drop(&mut self) {
        let _ = Command::new("groupdel").arg(&self.0).status();
    }
}

fn gid_of(group: &str) -> Option<u32> {
    let out = Command::new("getent")
        .args(["group", group])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split(':')
        .nth(2)?
        .trim()
        .parse()
        .ok()
}

fn show(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `warden serve --check-config` with `config`, as the unit's ExecStartPre runs it.
fn check_config(warden: &Path, config: &Path) -> Output {
    Command::new(warden)
        .args(["serve", "--config"])
        .arg(config)
        .arg("--check-config")
        .output()
        .unwrap()
}

/// `warden serve` with `config` until it exits on its own, or `limit` (then it is killed).
fn start_and_wait(warden: &Path, config: &Path, limit: Duration) -> Output {
    let mut child = Command::new(warden)
        .args(["serve", "--config"])
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("warden serve started with a configuration it should refuse");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn the_documented_install_starts_a_server_that_runs_programs() {
    warden_test_support::require_root!();
    let root = tempfile::Builder::new()
        .prefix("warden-install-")
        .tempdir()
        .unwrap();
    let root_path = root.path().to_path_buf();
    let group = format!("wdn-inst-{}", std::process::id());
    assert_eq!(gid_of(&group), None, "group {group} exists already");
    let _cleanup = TempGroup(group.clone());
    let built = warden_test_support::warden_bin();
    let from = built.parent().unwrap();

    // The documented steps, through the script that does them.
    let install = Command::new(repo().join("scripts/install.sh"))
        .arg("--root")
        .arg(&root_path)
        .args(["--group", &group])
        .arg("--from")
        .arg(from)
        .output()
        .unwrap();
    assert!(install.status.success(), "install: {}", show(&install));
    let gid = gid_of(&group).expect("the install created the socket's group");
    let warden = root_path.join("usr/local/bin/warden");
    let config = root_path.join("etc/warden/serve.toml");
    let unit = root_path.join("etc/systemd/system/warden.service");
    for path in [
        &warden,
        &root_path.join("usr/local/bin/libwarden_hook.so"),
        &config,
        &unit,
    ] {
        assert!(path.is_file(), "{} was not installed", path.display());
    }
    for dir in ["var/lib/warden", "var/log/warden", "run/warden"] {
        assert!(root_path.join(dir).is_dir(), "{dir} was not made");
    }
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(&format!("socket_group = \"{group}\"")),
        "{text}"
    );

    // The unit is valid as systemd reads it (its binary exists at the path it names).
    if let Ok(verify) = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
    {
        let unit_text = std::fs::read_to_string(&unit).unwrap();
        assert!(
            unit_text.contains(&format!("ExecStart={} serve", warden.display())),
            "{unit_text}"
        );
        assert!(
            verify.status.success() && verify.stderr.is_empty(),
            "systemd-analyze verify: {}",
            show(&verify)
        );
    }

    // As the unit runs it: --check-config first, then the server.
    let checked = check_config(&warden, &config);
    assert!(checked.status.success(), "{}", show(&checked));
    let mut server = Command::new(&warden)
        .args(["serve", "--config"])
        .arg(&config)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let socket = root_path.join("run/warden/warden.sock");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !socket.exists() {
        if let Some(status) = server.try_wait().unwrap() {
            panic!("the installed server exited: {status}");
        }
        assert!(Instant::now() < deadline, "no socket after 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let meta = std::fs::metadata(&socket).unwrap();
    assert_eq!(meta.gid(), gid, "the socket belongs to the installed group");
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
    let endpoint = Endpoint::Unix(socket.clone());
    let ran = post_json(
        &endpoint,
        "/v1/run",
        None,
        &json!({"code": "import json\nprint(json.dumps({'answer': 6 * 7}))\n"}),
    );
    assert_eq!(ran.status, 200, "{}", ran.text());
    assert_eq!(ran.json()["status"], "ok", "{}", ran.text());
    assert_eq!(ran.json()["stdout"], "{\"answer\": 42}\n");
    let health = request(&endpoint, "GET", "/healthz", None, None);
    assert_eq!(health.status, 200);
    signal(server.id(), "TERM");
    let status = server.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(!socket.exists(), "the socket was removed at shutdown");
    let audit = std::fs::read_to_string(root_path.join("var/log/warden/audit.jsonl")).unwrap();
    assert!(audit.contains("\"endpoint\":\"run\""), "{audit}");

    // Running the script again keeps the operator's configuration.
    std::fs::write(&config, format!("{text}\n# edited by the operator\n")).unwrap();
    let again = Command::new(repo().join("scripts/install.sh"))
        .arg("--root")
        .arg(&root_path)
        .args(["--group", &group])
        .arg("--from")
        .arg(from)
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", show(&again));
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("# edited by the operator"));
}

/// A copy of the shipped configuration with `edit` applied, in `dir`.
fn shipped_config_with(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("deploy/serve.toml")).unwrap();
    let text = text
        .replace("\"/run/warden/", &format!("\"{}/run/", dir.display()))
        .replace("\"/var/lib/warden/", &format!("\"{}/state/", dir.display()))
        .replace("\"/var/log/warden/", &format!("\"{}/log/", dir.display()))
        .replace("socket_group = \"warden\"", "socket_group = \"nogroup\"");
    std::fs::create_dir_all(dir.join("log")).unwrap();
    let path = dir.join("serve.toml");
    std::fs::write(&path, edit(text)).unwrap();
    path
}

#[test]
fn check_config_fails_on_what_would_stop_the_start() {
    warden_test_support::require_root!();
    let dir = tempfile::tempdir().unwrap();
    let warden = warden_test_support::warden_bin();

    // The shipped configuration, with an existing group and directories, passes.
    let good = shipped_config_with(dir.path(), |text| text);
    let checked = check_config(&warden, &good);
    assert!(checked.status.success(), "{}", show(&checked));

    // A socket group that does not exist: refused by --check-config, not only at start.
    let no_group = shipped_config_with(dir.path(), |text| {
        text.replace(
            "socket_group = \"nogroup\"",
            "socket_group = \"no-such-group-w16\"",
        )
    });
    for output in [
        check_config(&warden, &no_group),
        start_and_wait(&warden, &no_group, Duration::from_secs(60)),
    ] {
        assert_eq!(output.status.code(), Some(2), "{}", show(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("server.socket_group: no group is named \"no-such-group-w16\""),
            "{stderr}"
        );
    }
    assert!(
        !dir.path().join("run/warden.sock").exists(),
        "nothing listened"
    );

    // A mistyped audit log directory is an error, never a new directory tree.
    let typo = dir.path().join("lgo/warden");
    let bad_audit = shipped_config_with(dir.path(), |text| {
        text.replace(
            &format!("\"{}/log/audit.jsonl\"", dir.path().display()),
            &format!("\"{}/audit.jsonl\"", typo.display()),
        )
    });
    assert!(std::fs::read_to_string(&bad_audit)
        .unwrap()
        .contains("lgo/warden"));
    for output in [
        check_config(&warden, &bad_audit),
        start_and_wait(&warden, &bad_audit, Duration::from_secs(60)),
    ] {
        assert_eq!(output.status.code(), Some(2), "{}", show(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("server.audit_log: the directory")
                && stderr.contains("lgo/warden")
                && stderr.contains("does not exist"),
            "{stderr}"
        );
    }
    assert!(
        !dir.path().join("lgo").exists(),
        "the mistyped directory was created"
    );
}
