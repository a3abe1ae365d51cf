//! The registered policies as the server shows and checks them: each one's entry in
//! `GET /v1/policies` (and MCP's `describe_policy`), its jail planned on this host, and its allowed
//! modules imported in a jail (`serve --check-config`).
//!
//! Owns: those three. Does not own: loading and validating the policies (`config.rs`), which a
//! caller may use (`lib.rs`).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::config::{RegisteredPolicy, ServerConfig};

/// Plans every policy's jail on this host; a policy whose required layers cannot be enforced here is
/// an error (the server does not start with it).
pub fn plan_policies(config: &ServerConfig) -> anyhow::Result<BTreeMap<String, warden_jail::Plan>> {
    let mut plans = BTreeMap::new();
    for (name, registered) in &config.policies {
        let mut jail = warden_gateway::jail_config::from_policy(&registered.policy)
            .map_err(|err| anyhow::anyhow!("policy {name}: {err:#}"))?;
        // The layers a listing reports are the ones runs get: with the runtime layer a run of
        // this policy installs (a policy that needs it where it is missing fails here, as its
        // runs would).
        let layer = warden_gateway::hook_config::runtime_layer(&registered.policy, false)
            .map_err(|err| anyhow::anyhow!("policy {name}: {err}"))?;
        jail.bootstrap = warden_gateway::jail_config::bootstrap(layer);
        let plan = warden_jail::Plan::new(&jail)
            .map_err(|err| anyhow::anyhow!("policy {name} cannot run on this host: {err}"))?;
        plans.insert(name.clone(), plan);
    }
    Ok(plans)
}

/// "Allowed means importable": imports, in the jail, every module each policy allows, with the
/// policy's runtime; a policy whose allowed modules do not all import is an error. Returns the number
/// of modules checked per policy. Runs jails from this process, so it is for `serve --check-config`
/// (single-threaded), not for a running server.
pub fn check_policy_imports(config: &ServerConfig) -> anyhow::Result<BTreeMap<String, usize>> {
    let mut counts = BTreeMap::new();
    for (name, registered) in &config.policies {
        let count = warden_gateway::runtime_check::require_importable(&registered.policy)
            .map_err(|err| anyhow::anyhow!("policy {name}: {err:#}"))?;
        counts.insert(name.clone(), count);
    }
    Ok(counts)
}

/// One entry of `GET /v1/policies`.
pub fn describe_policy(name: &str, registered: &RegisteredPolicy, is_default: bool) -> Value {
    let policy = &registered.policy;
    let limits = &policy.limits;
    let members: serde_json::Map<String, Value> = policy
        .imports
        .members
        .iter()
        .map(|(module, members)| (module.clone(), json!(members)))
        .collect();
    json!({
        "name": name,
        "rules_name": policy.name,
        "description": policy.description,
        "sha256": policy.sha256,
        "source": registered.source,
        "default": is_default,
        "python": format!("3.{}", policy.target_minor),
        "allowed_imports": policy.imports.allowed_list(),
        "denied_imports": policy.imports.deny.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "partial_modules": members,
        "network": policy.network,
        "files": {
            "workdir": warden_policy::settings::WORKDIR,
            "read": policy.files.read,
            "write": policy.files.write,
        },
        "limits": {
            "wall_time_ms": limits.wall_time_ms,
            "cpu_time_ms": limits.cpu_time_ms,
            "memory_bytes": limits.memory_bytes,
            "pids": limits.pids,
            "stdout_bytes": limits.stdout_bytes,
            "stderr_bytes": limits.stderr_bytes,
            "output_files": limits.output_files,
            "output_bytes": limits.output_bytes,
            "source_bytes": policy.source.max_bytes,
        },
    })
}
