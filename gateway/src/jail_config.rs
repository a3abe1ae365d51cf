//! Maps the validated policy to the jail's configuration: the one place where rules-file settings
//! become jail settings (`warden_policy::Policy` → `warden_jail::Config`).
//!
//! Knows the names of both sides; decides nothing about enforcement (the jail's `Plan` does).

use std::path::PathBuf;

use anyhow::Context;
use warden_jail::{Bootstrap, Config, Intents, Layer, Limits, MemoryEnforcement};
use warden_policy::settings::{
    InterpreterSource, Layer as PolicyLayer, MemoryEnforcement as PolicyMemory, PolicyLimits,
};
use warden_policy::Policy;

/// The jail configuration for `policy` with its own limits.
pub fn from_policy(policy: &Policy) -> anyhow::Result<Config> {
    with_limits(policy, &policy.limits)
}

/// The jail configuration for `policy`, with `limits` (the policy's, tightened by a caller) in
/// place of the policy's own. The jail's plan validates it.
pub fn with_limits(policy: &Policy, l: &PolicyLimits) -> anyhow::Result<Config> {
    warden_jail::trace("jail config");
    let interpreter = match &policy.interpreter {
        InterpreterSource::Path(path) => PathBuf::from(path),
        InterpreterSource::Runtime(name) => {
            let runtime = crate::runtime::Runtime::named(name)?;
            runtime
                .manifest()
                .with_context(|| format!("runtime `{name}` named by the rules file"))?;
            runtime.python()
        }
    };
    let limits = Limits {
        wall_time_ms: l.wall_time_ms,
        cpu_time_ms: l.cpu_time_ms,
        memory_bytes: l.memory_bytes,
        pids: l.pids,
        stdout_bytes: l.stdout_bytes,
        stderr_bytes: l.stderr_bytes,
        file_size_bytes: l.file_size_bytes,
        open_files: l.open_files,
        tmp_bytes: l.tmp_bytes,
        // Everything the program leaves in its work dir is output: the work dir holds at most that.
        work_bytes: l.output_bytes,
        // ... and only the files the caller may receive come back from it.
        work_files: l.output_files,
        cpu_cores: None,
    };
    let required_layers = policy
        .required_layers
        .iter()
        .map(|layer| match layer {
            PolicyLayer::Namespaces => Layer::Namespaces,
            PolicyLayer::Seccomp => Layer::Seccomp,
            PolicyLayer::Landlock => Layer::Landlock,
            PolicyLayer::Cgroup => Layer::Cgroup,
            PolicyLayer::Rlimits => Layer::Rlimits,
        })
        .collect();
    Ok(Config {
        interpreter,
        limits,
        read_roots: policy.files.read.iter().map(PathBuf::from).collect(),
        write_roots: policy.files.write.iter().map(PathBuf::from).collect(),
        read_only_binds: policy.read_only_binds.iter().map(PathBuf::from).collect(),
        required_layers,
        inputs: Vec::new(),
        cgroup_parent: None,
        memory_enforcement: match policy.memory_enforcement {
            PolicyMemory::Strict => MemoryEnforcement::Strict,
            PolicyMemory::BestEffort => MemoryEnforcement::BestEffort,
        },
        bootstrap: Bootstrap::default(),
        // The same rules file's processes and network: the kernel mirrors what they refuse
        // (`warden_jail::Intents`), so it still holds when the runtime layer is gone.
        intents: Intents {
            processes: policy.processes,
            network: policy.network,
        },
    })
}

/// What the jail's bootstrap installs, from the runtime layer `hook_config::runtime_layer` decided.
pub fn bootstrap(layer: Option<crate::hook_config::RuntimeLayer>) -> Bootstrap {
    match layer {
        Some(layer) => Bootstrap {
            native_module: Some(layer.library),
            hook_settings: layer.hook_settings,
            ban_exec: layer.ban_exec,
            session: false,
            template: false,
            program_name: None,
        },
        None => Bootstrap::default(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_maps_to_a_valid_jail_config() {
        let policy = Policy::builtin_default().unwrap();
        let config = from_policy(&policy).unwrap();
        assert_eq!(config.limits.wall_time_ms, policy.limits.wall_time_ms);
        assert_eq!(config.limits.work_bytes, policy.limits.output_bytes);
        assert!(config.read_roots.contains(&PathBuf::from("/work")));
        assert!(config.required_layers.contains(&Layer::Landlock));
        assert_eq!(config.intents, Intents::default());
        let text = "[policy]\nname = \"x\"\n[processes]\nallow = true\n";
        let processes = from_policy(&Policy::from_toml(text, None).unwrap()).unwrap();
        assert!(processes.intents.processes && !processes.intents.network);
        assert!(processes.intents.local_sockets());
    }

    #[test]
    fn memory_enforcement_is_strict_unless_the_rules_accept_the_best_effort() {
        let strict = Policy::from_toml("[policy]\nname = \"x\"\n", None).unwrap();
        assert_eq!(
            from_policy(&strict).unwrap().memory_enforcement,
            MemoryEnforcement::Strict
        );
        let text = "[policy]\nname = \"x\"\n[limits]\nmemory_enforcement = \"best-effort\"\n";
        let lenient = Policy::from_toml(text, None).unwrap();
        assert_eq!(
            from_policy(&lenient).unwrap().memory_enforcement,
            MemoryEnforcement::BestEffort
        );
        let bad = "[policy]\nname = \"x\"\n[limits]\nmemory_enforcement = \"loose\"\n";
        let err = Policy::from_toml(bad, None).unwrap_err().to_string();
        assert!(err.contains("limits.memory_enforcement"), "{err}");
    }
}
