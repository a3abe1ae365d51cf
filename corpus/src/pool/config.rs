//! What a server of the pool pass is configured with: its `serve.toml` (one registered policy,
//! the pool on at [`DEPTH`]) and that policy, `corpus-pool`: the policy under test with every rule
//! of the static layer off that can be.
//!
//! Owns: the text of both files and the rules turned off. Does not own: writing them or starting
//! the server (`server.rs`).

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use super::{DEPTH, POLICY};
use crate::exec::Warden;

/// The policy under test with the static layer off, as a rules file extending it.
pub(super) fn no_static_policy(warden: &Warden) -> Result<String, String> {
    let output = Command::new(&warden.binary)
        .args(["rules", "explain"])
        .stdin(Stdio::null())
        .output()
        .map_err(|err| {
            format!(
                "cannot run {} rules explain: {err}",
                warden.binary.display()
            )
        })?;
    let listing = String::from_utf8_lossy(&output.stdout);
    let rules = rules_to_turn_off(&listing);
    if rules.is_empty() {
        return Err(format!(
            "`warden rules explain` listed no rule: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let base = match &warden.rules {
        Some(path) => std::fs::canonicalize(path)
            .map_err(|err| format!("{}: {err}", path.display()))?
            .display()
            .to_string(),
        None => "default".to_owned(),
    };
    let mut text = format!(
        "# The policy under test with the static layer off (warden corpus run --passes pool).\n\
         extends = {}\n[policy]\nname = \"{POLICY}\"\ntarget_python = \"3.13\"\n\
         [source]\nmax_bytes = 16777216\nmax_depth = 5000\nmax_nodes = 5000000\n[actions]\n",
        json!(base)
    );
    for rule in rules {
        text.push_str(&format!("{rule} = \"off\"\n"));
    }
    Ok(text)
}

/// The rule ids of `warden rules explain`'s listing (`ID name category severity action`), but the
/// source rules and the runtime layer's (their action cannot change).
fn rules_to_turn_off(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (id, category) = (fields.first()?, fields.get(2)?);
            let is_id = id.len() >= 4
                && id
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && id.chars().any(|c| c.is_ascii_digit());
            (is_id && !matches!(*category, "source" | "runtime")).then(|| (*id).to_owned())
        })
        .collect()
}

/// The server's `serve.toml`: its socket and state directory, the pool on, and one registered
/// policy, [`POLICY`], read from `policy`.
pub(super) fn serve_config(socket: &Path, state: &Path, policy: &Path) -> String {
    format!(
        "[server]\nsocket = {socket}\nsocket_mode = \"0600\"\nstate_dir = {state}\n\
         audit_log = \"off\"\ndefault_policy = \"{POLICY}\"\n\
         [admission]\nmax_concurrent_runs = 2\nshutdown_grace_ms = 10000\n\
         [sessions]\nmax_sessions = 2\n\
         [pool]\nenabled = true\ndepth = {DEPTH}\nmax_idle_ms = 3600000\n\
         [policies]\n\"{POLICY}\" = {policy}\n",
        socket = json!(socket.display().to_string()),
        state = json!(state.display().to_string()),
        policy = json!(policy.display().to_string()),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_but_the_source_and_runtime_rules_is_turned_off() {
        let listing = "SYN001   syntax-error           source      high     deny\n\
                       IMP101   import-not-allowed     imports     high     deny\n\
                       FILE704  dynamic-path           files       low      warn\n\
                       PROC801  process-start          runtime     high     deny\n\
                       something else\n";
        assert_eq!(rules_to_turn_off(listing), ["IMP101", "FILE704"]);
    }
}
