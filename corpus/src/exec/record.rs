//! The records warden prints, as far as the runner reads them: the result record of `warden run
//! --json` (a session's cells summed up as one by `session.rs`), the lines of `warden check
//! --format json`, and the policy pass's verdict made of them.
//!
//! Owns: the serde views, lenient so that the record of an older or stand-in warden still parses
//! (a field of an unexpected type reads as absent), and finding the record in what warden printed.
//! Does not own: running warden (`exec.rs`) or judging a record (`verify.rs`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// Reads a field leniently: a value of an unexpected type reads as the default (absent), so that
/// one odd field of an older or stand-in warden does not make the whole record unreadable.
fn lenient<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// A `warden run --json` result record, as far as the runner reads it (see the README's "result
/// record"). Only `status` is required; every other field may be missing or of another type
/// (it then reads as absent), so an older warden's record, or a stand-in's, still parses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Record {
    pub status: String,
    #[serde(default, deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    pub signal: Option<i64>,
    #[serde(default, deserialize_with = "lenient")]
    pub stdout: String,
    #[serde(default, deserialize_with = "lenient")]
    pub stderr: String,
    /// What the static layer said (`decision` is `skipped` with `--no-policy`).
    #[serde(default, deserialize_with = "lenient")]
    pub check: Option<CheckSummary>,
    #[serde(default, deserialize_with = "lenient")]
    pub layers: Layers,
    #[serde(default, deserialize_with = "lenient")]
    pub usage: Usage,
    /// What went wrong outside the program (why the jail could not be set up…).
    #[serde(default, deserialize_with = "lenient")]
    pub message: Option<String>,
    /// The layer that stopped the program (older wardens give none).
    #[serde(default, deserialize_with = "lenient")]
    pub stopped_by: Option<StoppedBy>,
    /// Whether a pooled jail of `warden serve` ran it (`true`), or one started for it.
    #[serde(default, deserialize_with = "lenient")]
    pub warm: Option<bool>,
}

/// The record's `stopped_by`: `{"layer": "static", "rule"}`, `{"layer": "runtime", "rule",
/// "event"}` or `{"layer": "kernel", "errno"}` (docs/enforcement.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct StoppedBy {
    pub layer: String,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub rule: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub event: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub errno: Option<String>,
}

impl StoppedBy {
    /// Whether the runtime layer (warden's audit hook) stopped the program.
    pub fn is_runtime(&self) -> bool {
        self.layer == "runtime"
    }
}

impl std::fmt::Display for StoppedBy {
    /// `runtime PROC801 (os.system)`, `kernel EPERM`, `static IMP101`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.layer)?;
        if let Some(what) = self.rule.as_ref().or(self.errno.as_ref()) {
            write!(f, " {what}")?;
        }
        if let Some(event) = &self.event {
            write!(f, " ({event})")?;
        }
        Ok(())
    }
}

/// The record's `check`, and one line of `warden check --format json` (which adds `path`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CheckSummary {
    #[serde(default, deserialize_with = "lenient")]
    pub path: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub decision: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub findings: Vec<Finding>,
}

/// One finding; the runner only needs its rule id.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Finding {
    #[serde(default, deserialize_with = "lenient")]
    pub rule: Option<String>,
}

impl CheckSummary {
    /// The rule ids of the findings, sorted, without duplicates.
    pub fn rules(&self) -> Vec<String> {
        let mut rules: Vec<String> = self
            .findings
            .iter()
            .filter_map(|f| f.rule.clone())
            .collect();
        rules.sort();
        rules.dedup();
        rules
    }
}

/// The record's `usage`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Usage {
    #[serde(default, deserialize_with = "lenient")]
    pub wall_ms: Option<u64>,
}

/// The record's `layers`: the confinement the plan put in force.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Layers {
    #[serde(default, deserialize_with = "lenient")]
    pub namespaces: Vec<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub landlock: Option<Switch>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub seccomp: Option<Switch>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub cgroup: Option<Switch>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub rlimits: Option<Switch>,
}

/// How a record reports one layer: `true`/`false`, a version (`abi-6`, `v1`) or `none`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Switch {
    Flag(bool),
    Name(String),
    Number(serde_json::Number),
}

impl Switch {
    fn is_on(&self) -> bool {
        match self {
            Switch::Flag(on) => *on,
            Switch::Name(name) => !name.is_empty() && name != "none",
            Switch::Number(_) => true,
        }
    }
}

impl std::fmt::Display for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

impl Record {
    /// Parses warden's stdout; `None` when it is not a result record (no `status`).
    pub fn parse(stdout: &[u8]) -> Option<Record> {
        let text = String::from_utf8_lossy(stdout);
        serde_json::from_str(text.trim()).ok().or_else(|| {
            text.lines()
                .rev()
                .find_map(|l| serde_json::from_str(l).ok())
        })
    }

    /// The record as JSON, found where [`Record::parse`] finds it.
    pub fn parse_value(stdout: &[u8]) -> Option<serde_json::Value> {
        let text = String::from_utf8_lossy(stdout);
        let is_record = |v: &serde_json::Value| v["status"].is_string();
        serde_json::from_str(text.trim())
            .ok()
            .filter(is_record)
            .or_else(|| {
                text.lines()
                    .rev()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .find(is_record)
            })
    }

    /// The static layer's decision, when it ran.
    pub fn decision(&self) -> Option<&str> {
        self.check.as_ref()?.decision.as_deref()
    }

    /// The rule the runtime layer stopped the program with, when it did.
    pub fn runtime_rule(&self) -> Option<&str> {
        let stopped = self.stopped_by.as_ref().filter(|s| s.is_runtime())?;
        Some(stopped.rule.as_deref().unwrap_or("?"))
    }

    /// The rule ids the static layer reported.
    pub fn rules(&self) -> Vec<String> {
        self.check
            .as_ref()
            .map(CheckSummary::rules)
            .unwrap_or_default()
    }

    /// Whether the record says the layer is in force (`seccomp`, `landlock`, `cgroup`,
    /// `rlimits`, `ns:NAME`).
    pub fn has_layer(&self, layer: &str) -> bool {
        let layers = &self.layers;
        if let Some(ns) = layer.strip_prefix("ns:") {
            return layers.namespaces.iter().any(|n| n == ns);
        }
        let switch = match layer {
            "landlock" => &layers.landlock,
            "seccomp" => &layers.seccomp,
            "cgroup" => &layers.cgroup,
            "rlimits" => &layers.rlimits,
            _ => &None,
        };
        switch.as_ref().is_some_and(Switch::is_on)
    }
}

/// One `warden check --format json` result.
#[derive(Debug, Clone, Serialize)]
pub struct StaticVerdict {
    pub decision: String,
    pub rules: Vec<String>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_with_their_layers() {
        let stdout = br#"{"status":"timeout","exit_code":null,"signal":9,"stdout":"a","stderr":"",
            "check":{"decision":"allow","findings":[{"rule":"FILE704"}]},
            "usage":{"wall_ms":30001},
            "layers":{"namespaces":["user","net"],"landlock":"abi-6","seccomp":true,"cgroup":"v1","rlimits":true}}"#;
        let record = Record::parse(stdout).unwrap();
        assert_eq!(record.status, "timeout");
        assert_eq!(record.signal, Some(9));
        assert_eq!(record.decision(), Some("allow"));
        assert_eq!(record.rules(), ["FILE704"]);
        assert_eq!(record.usage.wall_ms, Some(30001));
        for layer in ["ns:net", "seccomp", "landlock", "cgroup", "rlimits"] {
            assert!(record.has_layer(layer), "{layer}");
        }
        assert!(!record.has_layer("ns:pid"));
        assert!(record.stopped_by.is_none() && record.runtime_rule().is_none());
        assert!(Record::parse(b"warden: error: boom").is_none());
    }

    #[test]
    fn stopped_by_names_the_layer_and_what_it_stopped() {
        let runtime = Record::parse(
            br#"{"status":"error","stopped_by":{"layer":"runtime","rule":"PROC801","event":"os.system"}}"#,
        )
        .unwrap();
        assert_eq!(runtime.runtime_rule(), Some("PROC801"));
        let stopped = runtime.stopped_by.unwrap();
        assert!(stopped.is_runtime());
        assert_eq!(stopped.to_string(), "runtime PROC801 (os.system)");
        let kernel =
            Record::parse(br#"{"status":"error","stopped_by":{"layer":"kernel","errno":"EPERM"}}"#)
                .unwrap();
        assert_eq!(kernel.runtime_rule(), None);
        assert_eq!(kernel.stopped_by.unwrap().to_string(), "kernel EPERM");
        // A stand-in's odd value reads as absent; the record still parses.
        let odd = Record::parse(br#"{"status":"ok","stopped_by":"runtime"}"#).unwrap();
        assert!(odd.stopped_by.is_none());
    }

    #[test]
    fn odd_and_partial_records_still_parse() {
        // A stand-in's record: few fields, some of unexpected types, after a line of logging.
        let stdout = b"starting\n{\"status\":\"ok\",\"exit_code\":\"0\",\"stdout\":null,\
            \"check\":[],\"usage\":{\"wall_ms\":-1},\
            \"layers\":{\"namespaces\":[],\"seccomp\":false,\"landlock\":{\"abi\":7},\"cgroup\":\"none\"}}\n";
        let record = Record::parse(stdout).unwrap();
        assert_eq!(record.status, "ok");
        assert_eq!(record.exit_code, None);
        assert_eq!(record.stdout, "");
        assert_eq!(record.decision(), None);
        assert_eq!(record.usage.wall_ms, None);
        for layer in ["seccomp", "landlock", "cgroup", "rlimits", "ns:user"] {
            assert!(!record.has_layer(layer), "{layer}");
        }
        assert_eq!(
            record.layers.to_string(),
            r#"{"namespaces":[],"seccomp":false,"cgroup":"none"}"#
        );
        // Without a status it is not a result record.
        assert!(Record::parse(br#"{"exit_code": 0}"#).is_none());
        assert!(Record::parse(br#"{"status": 3}"#).is_none());
    }

    #[test]
    fn check_lines_give_the_decision_and_sorted_rules() {
        let line = r#"{"path":"a.py","decision":"deny","policy":{"name":"default"},
            "findings":[{"rule":"REF201","span":{}},{"rule":"IMP101"},{"rule":"REF201"},{"name":"x"}]}"#;
        let summary: CheckSummary = serde_json::from_str(line).unwrap();
        assert_eq!(summary.path.as_deref(), Some("a.py"));
        assert_eq!(summary.decision.as_deref(), Some("deny"));
        assert_eq!(summary.rules(), ["IMP101", "REF201"]);
    }
}
