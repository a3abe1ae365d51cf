//! The bootstrap's host unit tests (`jail/tests/python/test_bootstrap.py`): its pretty printer, MIME
//! bundles, framing of answers, file operations and whole sessions, with the bootstrap imported or
//! run by the jail's interpreter (`/usr/bin/python3`) but no jail. Python's `unittest` runs them; any
//! failure or error fails this test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

/// The least number of tests the file holds (a discovery that finds none must not pass).
const AT_LEAST: usize = 30;

#[test]
fn the_bootstrap_s_python_unit_tests_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("/usr/bin/python3")
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(root.join("tests/python"))
        .env("WARDEN_BOOTSTRAP", root.join("src/bootstrap.py"))
        // Nothing written beside the sources (`__pycache__`).
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run /usr/bin/python3 -m unittest");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the bootstrap's unit tests failed:\n{stderr}"
    );
    let ran: usize = stderr
        .lines()
        .find_map(|line| line.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no `Ran N tests` line:\n{stderr}"));
    assert!(ran >= AT_LEAST, "only {ran} tests ran:\n{stderr}");
    assert!(
        stderr.lines().any(|line| line.starts_with("OK")),
        "{stderr}"
    );
}
