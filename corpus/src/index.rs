//! External corpora in the `index.jsonl` format of `../shared/corpora`: one JSON row per case with
//! at least `id` and `file`. What a row expects is read from the fields it carries:
//!
//! - `gateway_expectation` (RedCode-Exec): `block_or_contain` is an attack whose host-side checks are
//!   derived from its `targets` (paths, URLs, ports) and category; `no_runtime_harm` is reported
//!   separately ([`Kind::Harmless`]).
//! - `tier` (smolagents escapes): `escape` and `probe` are attacks (the baseline checks), `ordinary`
//!   must be allowed statically.
//! - `expected: benign` (DS-1000, HumanEval): must be allowed and run to a successful end; rows with
//!   `verified_standalone` must print `DS1000_STANDALONE_OK`; rows with `needs_network: true` are
//!   skipped. A row may also give its own `expect_output`.
//!
//! Does not own: setting up the derived canaries and listeners (`fixtures.rs`).

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::case::{AttackSpec, BenignSpec, Case, Corpus, Kind};
use super::effects::{Effect, Endpoint};

/// The marker DS-1000's standalone scripts print when their own test passes.
pub const DS1000_OK: &str = "DS1000_STANDALONE_OK";

/// Loads `dir/index.jsonl`.
pub fn load(dir: &Path, name: &str) -> Result<Corpus, Vec<String>> {
    let index = dir.join("index.jsonl");
    let text = std::fs::read_to_string(&index)
        .map_err(|err| vec![format!("{}: cannot read: {err}", index.display())])?;
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", index.display(), number + 1);
        match serde_json::from_str::<Value>(line) {
            Ok(row) => match case_of(dir, name, &row) {
                Ok(case) => cases.push(case),
                Err(message) => errors.push(format!("{at}: {message}")),
            },
            Err(err) => errors.push(format!("{at}: not a JSON object: {err}")),
        }
    }
    if cases.is_empty() && errors.is_empty() {
        errors.push(format!("{}: no rows", index.display()));
    }
    if errors.is_empty() {
        Ok(Corpus {
            name: name.to_owned(),
            dir: dir.to_path_buf(),
            format: "index",
            cases,
        })
    } else {
        Err(errors)
    }
}

fn text<'a>(row: &'a Value, key: &str) -> Option<&'a str> {
    row.get(key).and_then(Value::as_str)
}

fn case_of(dir: &Path, corpus: &str, row: &Value) -> Result<Case, String> {
    let id = text(row, "id").ok_or("the row has no string `id`")?;
    let file = text(row, "file").ok_or("the row has no string `file`")?;
    let relative = Path::new(file);
    if relative.is_absolute() || relative.components().any(|c| c == Component::ParentDir) {
        return Err(format!("`file` must stay inside the corpus: {file}"));
    }
    let path = dir.join(relative);
    if !path.is_file() {
        return Err(format!("{}: no such file", path.display()));
    }
    let category = text(row, "category").unwrap_or(corpus).to_owned();
    let technique = text(row, "risky_behaviour")
        .or_else(|| text(row, "notes"))
        .unwrap_or_default()
        .to_owned();
    let (group, kind) = if let Some(expectation) = text(row, "gateway_expectation") {
        match expectation {
            "block_or_contain" => (category, Kind::Attack(redcode_attack(row))),
            "no_runtime_harm" => (category, Kind::Harmless),
            other => return Err(format!("unknown gateway_expectation `{other}`")),
        }
    } else if let Some(tier) = text(row, "tier") {
        match tier {
            "escape" | "probe" => (
                format!("tier {tier}"),
                Kind::Attack(AttackSpec {
                    expect_static: None,
                    expect_rules: Vec::new(),
                    expect_runtime: None,
                    effects: vec![Effect::Contained],
                    watched: Vec::new(),
                }),
            ),
            "ordinary" => (
                "tier ordinary".to_owned(),
                Kind::Benign(BenignSpec {
                    expect_output: None,
                    run: false,
                    static_file: None,
                    run_without_policy: false,
                }),
            ),
            other => return Err(format!("unknown tier `{other}`")),
        }
    } else if text(row, "expected") == Some("benign") {
        let kind = if row.get("needs_network").and_then(Value::as_bool) == Some(true) {
            Kind::Skipped("needs network downloads (needs_network: true)".to_owned())
        } else {
            let expect_output = text(row, "expect_output").map(str::to_owned).or_else(|| {
                row.get("verified_standalone")
                    .is_some()
                    .then(|| DS1000_OK.to_owned())
            });
            let static_file = text(row, "program_file").map(|p| dir.join(p));
            if let Some(file) = &static_file {
                if !file.is_file() || leaves_dir(file, dir) {
                    return Err(format!("{}: no such program_file", file.display()));
                }
            }
            Kind::Benign(BenignSpec {
                expect_output,
                run: true,
                run_without_policy: static_file.is_some(),
                static_file,
            })
        };
        (category, kind)
    } else {
        return Err(
            "cannot tell what the row expects (no gateway_expectation, tier or expected: benign)"
                .to_owned(),
        );
    };
    Ok(Case {
        id: id.to_owned(),
        corpus: corpus.to_owned(),
        file: path,
        group,
        technique,
        kind,
    })
}

/// Whether `file` leaves `dir` (through `..` parts).
fn leaves_dir(file: &Path, dir: &Path) -> bool {
    file.strip_prefix(dir)
        .map(|rest| rest.components().any(|c| c == Component::ParentDir))
        .unwrap_or(true)
}

/// Loopback ports RedCode's environment listens on.
const REDCODE_PORTS: [u16; 3] = [5758, 5389, 5388];

/// The checks for a RedCode `block_or_contain` case, recreated from its `targets` and category:
/// existing host files must not leak or change; absent ones must not appear (or, under `/root/`
/// and `/app/`, get a canary); directories get a canary name that must not leak; loopback URLs and
/// ports get listeners; other URLs need the network namespace; "Process management" cases get a
/// host process with the name they hunt for.
fn redcode_attack(row: &Value) -> AttackSpec {
    let mut effects = vec![Effect::Contained];
    let targets = row.get("targets");
    let list = |key: &str| -> Vec<String> {
        targets
            .and_then(|t| t.get(key))
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    for target in list("paths") {
        effects.extend(path_effects(&target));
    }
    for url in list("urls") {
        match loopback_port(&url) {
            Some(port) => effects.push(Effect::NoConnect(Endpoint::Tcp(
                ([127, 0, 0, 1], port).into(),
            ))),
            None => effects.push(Effect::Layer("ns:net".to_owned())),
        }
    }
    for ip_port in list("ip_ports") {
        if let Some(port) = loopback_port(&ip_port) {
            let addr = ([127, 0, 0, 1], port).into();
            effects.push(Effect::NoConnect(Endpoint::Tcp(addr)));
            effects.push(Effect::NoConnect(Endpoint::Udp(addr)));
        }
    }
    let category = text(row, "category").unwrap_or_default();
    if category == "Process management" {
        if let Some(name) = text(row, "redcode_oracle") {
            if let Ok(Effect::HostProcessSurvives(Some(name))) =
                Effect::parse(&format!("host-process-survives {name}"))
            {
                effects.push(Effect::HostProcessSurvives(Some(name)));
            }
        }
    }
    if category.starts_with("Creating a reverse shell") || category == "Amplification" {
        for port in REDCODE_PORTS {
            effects.push(Effect::NoConnect(Endpoint::Tcp(
                ([127, 0, 0, 1], port).into(),
            )));
            effects.push(Effect::NoConnect(Endpoint::Udp(
                ([127, 0, 0, 1], port).into(),
            )));
        }
    }
    effects.sort();
    effects.dedup();
    AttackSpec {
        expect_static: None,
        expect_rules: Vec::new(),
        expect_runtime: None,
        effects,
        watched: redcode_watched(),
    }
}

/// Host files every RedCode case is checked against, whatever its own targets: the secrets must
/// not leak (`no-read`) and the accounts and root's shell start-up file must not change
/// (`unchanged`). RedCode's cases read, copy, delete and append to these, and `targets` only
/// lists the paths written out in a case's code, not those it builds at run time. Watched, not
/// held: every case checks them without serialising the run.
const REDCODE_WATCHED: &str = "no-read /etc/shadow; no-read /etc/gshadow; no-read /etc/passwd; \
                               unchanged /etc/shadow; unchanged /etc/passwd; unchanged /root/.bashrc";

fn redcode_watched() -> Vec<Effect> {
    Effect::parse_list(REDCODE_WATCHED).unwrap_or_default()
}

/// `http://127.0.0.1:5758/x` or `127.0.0.1:5388` → the port.
fn loopback_port(text: &str) -> Option<u16> {
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))
        .unwrap_or(text);
    let authority = rest.split('/').next()?;
    let (host, port) = authority.rsplit_once(':')?;
    (host == "127.0.0.1" || host == "localhost").then_some(())?;
    port.parse().ok()
}

/// Effects for one target path of a RedCode case.
fn path_effects(target: &str) -> Vec<Effect> {
    // `../etc/passwd` is joined to some directory at run time: whichever, it reaches /etc/passwd.
    let trimmed = target.trim_start_matches("./").trim_start_matches("../");
    let path = if target.starts_with('/') {
        normalise(target)
    } else if target.starts_with("../") {
        normalise(&format!("/{trimmed}"))
    } else {
        None
    };
    let Some(mut path) = path else {
        return Vec::new();
    };
    let mut is_dir = false;
    if path.ends_with("/*") {
        path.truncate(path.len() - 2);
        is_dir = true;
    }
    if path.contains(['*', '?', '[']) || path == "/" || path.is_empty() {
        return Vec::new();
    }
    let host = Path::new(&path);
    let creatable = path.starts_with("/root/") || path.starts_with("/app/") || path == "/app";
    if is_dir || host.is_dir() {
        return Effect::parse(&format!("no-list {path}"))
            .into_iter()
            .collect();
    }
    let Ok(parsed) = Effect::parse(&format!("no-read {path}")) else {
        return Vec::new();
    };
    // Kernel files change by themselves (`/proc/meminfo`); only sysctls are stable enough to compare.
    let volatile = (path.starts_with("/proc/") && !path.starts_with("/proc/sys/"))
        || path.starts_with("/sys/")
        || path.starts_with("/dev/");
    if volatile && host.exists() {
        vec![parsed]
    } else if host.exists() || creatable {
        vec![parsed, Effect::Unchanged(PathBuf::from(&path))]
    } else {
        match Effect::parse(&format!("no-path {path}")) {
            Ok(effect) => vec![effect],
            Err(_) => Vec::new(),
        }
    }
}

/// `/a/./b/../c` → `/a/c`; `None` for anything odd.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.iter().any(|p| p.chars().any(char::is_whitespace)) {
        return None;
    }
    Some(format!("/{}", parts.join("/")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn loopback_ports_are_found_in_urls_and_pairs() {
        assert_eq!(loopback_port("http://127.0.0.1:5758/submit"), Some(5758));
        assert_eq!(loopback_port("127.0.0.1:5388"), Some(5388));
        assert_eq!(loopback_port("http://1mocat.github.io/a.py"), None);
        assert_eq!(loopback_port("10.0.0.1:80"), None);
    }

    #[test]
    fn redcode_targets_become_host_checks() {
        let row = json!({
            "category": "Copy sensitive files",
            "targets": {"paths": ["/etc/passwd", "/usr/warden-test-absent", "../etc/shadow", "/app/*"],
                        "urls": ["http://127.0.0.1:5758/submit", "https://1mocat.github.io/x.html"],
                        "ip_ports": ["127.0.0.1:5388"]}
        });
        let spec = redcode_attack(&row);
        let text = Effect::format_list(&spec.effects);
        for wanted in [
            "no-read /etc/passwd",
            "unchanged /etc/passwd",
            "no-path /usr/warden-test-absent",
            "no-read /etc/shadow",
            "no-list /app",
            "no-connect tcp4:127.0.0.1:5758",
            "no-connect tcp4:127.0.0.1:5388",
            "no-connect udp4:127.0.0.1:5388",
            "layer ns:net",
            "contained",
        ] {
            assert!(text.contains(wanted), "{wanted} missing from {text}");
        }
        let watched = Effect::format_list(&spec.watched);
        assert!(!text.contains("/root/.bashrc"), "declared: {text}");
        for wanted in [
            "no-read /etc/gshadow",
            "unchanged /etc/passwd",
            "unchanged /root/.bashrc",
        ] {
            assert!(watched.contains(wanted), "{wanted} missing from {watched}");
        }
        let all = Effect::format_list(&spec.all_effects());
        assert!(all.contains("unchanged /root/.bashrc"), "{all}");
    }

    #[test]
    fn process_hunts_get_a_named_host_process() {
        let row =
            json!({"category": "Process management", "redcode_oracle": "sshd", "targets": {}});
        assert!(redcode_attack(&row)
            .effects
            .contains(&Effect::HostProcessSurvives(Some("sshd".to_owned()))));
    }

    #[test]
    fn rows_are_classified_by_their_fields() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
        let rows = [
            (
                json!({"id": "r1", "file": "a.py", "gateway_expectation": "no_runtime_harm"}),
                "harmless",
            ),
            (
                json!({"id": "s1", "file": "a.py", "tier": "probe"}),
                "attack",
            ),
            (
                json!({"id": "s2", "file": "a.py", "tier": "ordinary"}),
                "benign",
            ),
            (
                json!({"id": "d1", "file": "a.py", "expected": "benign", "needs_network": true}),
                "skipped",
            ),
            (
                json!({"id": "h1", "file": "a.py", "expected": "benign"}),
                "benign",
            ),
        ];
        for (row, kind) in rows {
            let case = case_of(dir.path(), "x", &row).unwrap();
            assert_eq!(case.kind.name(), kind, "{row}");
        }
        let ds = case_of(
            dir.path(),
            "x",
            &json!({"id": "d2", "file": "a.py", "expected": "benign", "verified_standalone": "pass"}),
        )
        .unwrap();
        let Kind::Benign(spec) = ds.kind else {
            panic!()
        };
        assert_eq!(spec.expect_output.as_deref(), Some(DS1000_OK));
        assert!(case_of(
            dir.path(),
            "x",
            &json!({"id": "e", "file": "../a.py", "expected": "benign"})
        )
        .is_err());
        assert!(case_of(dir.path(), "x", &json!({"id": "e", "file": "a.py"})).is_err());
        assert!(case_of(
            dir.path(),
            "x",
            &json!({"id": "e", "file": "b.py", "expected": "benign"})
        )
        .is_err());
    }

    #[test]
    fn bad_rows_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
        std::fs::write(
            dir.path().join("index.jsonl"),
            "{\"id\": \"h\", \"file\": \"a.py\", \"expected\": \"benign\"}\n\nnot json\n",
        )
        .unwrap();
        let errors = load(dir.path(), "x").unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("index.jsonl:3: not a JSON object"),
            "{errors:?}"
        );
    }
}
