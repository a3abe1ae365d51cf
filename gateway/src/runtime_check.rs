//! `warden runtime check`: imports, inside the jail, every module the policy allows, and lists the
//! module objects that allowed packages expose as attributes (re-exports) which the policy's name
//! guards would not catch.
//!
//! The probe is warden's own program; it runs through the normal pipeline with the static layer and the
//! audit hook off (it uses `importlib`), in the same jail and runtime as user programs.

use serde::{Deserialize, Serialize};
use warden_policy::Policy;

use crate::pipeline::{self, RunRequest, RunStatus};

/// The probe: imports each module, then walks attributes of the imported modules (breadth-first, a
/// bounded number of modules) and reports module objects reachable by attribute.
const PROBE: &str = r#"
import importlib, json, sys, types
names = json.loads(sys.argv[1]) if len(sys.argv) > 1 else json.loads(NAMES)
results = {}
for name in names:
    try:
        importlib.import_module(name)
        results[name] = "ok"
    except ModuleNotFoundError as error:
        results[name] = "missing: " + str(error)
    except BaseException as error:
        results[name] = "broken: " + type(error).__name__ + ": " + str(error)[:200]
reexports = []
seen = set()
queue = [(name, sys.modules[name]) for name in names if name in sys.modules]
budget = 4000
while queue and budget > 0:
    path, module = queue.pop(0)
    if id(module) in seen:
        continue
    seen.add(id(module))
    budget -= 1
    for attribute, value in list(vars(module).items()):
        if not isinstance(value, types.ModuleType) or attribute.startswith("__"):
            continue
        real = value.__name__
        child = path + "." + attribute
        if real != child:
            reexports.append([child, real])
        if real.startswith(path.split(".")[0] + "."):
            queue.append((child, value))
print(json.dumps({"imports": results, "reexports": reexports}))
"#;

/// What the probe found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuntimeFacts {
    /// Module → "ok", "missing: …" or "broken: …".
    pub imports: std::collections::BTreeMap<String, String>,
    /// `[attribute path, real module name]` for every module reachable under another path.
    pub reexports: Vec<(String, String)>,
}

/// The modules to import: every exact allow pattern, and the package of every `pkg.*` pattern
/// (importing `pkg.sub` imports `pkg`), unless the policy denies it.
pub fn modules_to_check(policy: &Policy) -> Vec<String> {
    let mut names: Vec<String> = policy
        .imports
        .allow
        .iter()
        .map(|pattern| pattern.to_string().trim_end_matches(".*").to_owned())
        .filter(|name| {
            let segments: Vec<&str> = name.split('.').collect();
            policy.imports.verdict(&segments) != warden_policy::settings::ModuleVerdict::Denied
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Runs the probe in the jail.
pub fn probe(policy: &Policy) -> anyhow::Result<RuntimeFacts> {
    let names = modules_to_check(policy);
    let source = PROBE.replace(
        "json.loads(NAMES)",
        &format!("json.loads({:?})", serde_json::to_string(&names)?),
    );
    let mut generous = policy.clone();
    // The probe is warden's own program and imports what it needs (`importlib`, `sys`), which the
    // runtime layer would judge as the program's imports: it runs without the audit hook. What it
    // measures is whether the runtime's libraries import, as they do under the hook (which judges only
    // the program's own imports, by the same allow list).
    generous.hooks = warden_policy::settings::Hooks::Off;
    generous.limits.wall_time_ms = generous.limits.wall_time_ms.max(120_000);
    generous.limits.cpu_time_ms = generous.limits.cpu_time_ms.max(120_000);
    generous.limits.stdout_bytes = generous.limits.stdout_bytes.max(8 * 1024 * 1024);
    let request = RunRequest {
        source: source.into_bytes(),
        no_policy: true,
        // warden's own probe walks the packages by introspection: the audit hook would refuse it.
        no_hooks: true,
        ..RunRequest::default()
    };
    let record = pipeline::execute(&generous, &request)?;
    if record.status != RunStatus::Ok {
        anyhow::bail!(
            "the runtime probe did not finish in the jail (status {}): {}{}",
            record.status.as_str(),
            record.message.unwrap_or_default(),
            record.stderr
        );
    }
    serde_json::from_str(record.stdout.trim())
        .map_err(|err| anyhow::anyhow!("unexpected probe output: {err}"))
}

/// Re-exports the policy does not guard by name: reachable modules that are not allowed imports and
/// whose attribute name is not in `attributes.deny_names` or the guarded module roots.
pub fn unguarded_reexports(policy: &Policy, facts: &RuntimeFacts) -> Vec<(String, String)> {
    facts
        .reexports
        .iter()
        .filter(|(path, real)| {
            let real_segments: Vec<&str> = real.split('.').collect();
            let allowed = policy.imports.verdict(&real_segments)
                == warden_policy::settings::ModuleVerdict::Allowed;
            let attribute = path.rsplit('.').next().unwrap_or_default();
            let bare = attribute.trim_start_matches('_');
            let guarded = policy.denied_attribute_names.contains(bare)
                || policy.imports.guarded_roots().contains(bare)
                || attribute.starts_with('_');
            !allowed && !guarded
        })
        .cloned()
        .collect()
}

/// "Allowed means importable": imports every module the policy allows inside the jail, with the
/// policy's runtime, and returns the number that imported; an error lists the ones that did not (and
/// how to fix it). Runs a jail from this process: call it while the process has one thread.
pub fn require_importable(policy: &Policy) -> anyhow::Result<usize> {
    let facts = probe(policy)?;
    let failed: Vec<String> = facts
        .imports
        .iter()
        .filter(|(_, result)| *result != "ok")
        .map(|(name, result)| format!("  {name}: {result}"))
        .collect();
    if failed.is_empty() {
        return Ok(facts.imports.len());
    }
    let runtime = match &policy.interpreter {
        warden_policy::settings::InterpreterSource::Runtime(name) => format!("runtime `{name}`"),
        warden_policy::settings::InterpreterSource::Path(path) => format!("interpreter {path}"),
    };
    anyhow::bail!(
        "policy `{}` allows {} module(s) that do not import in the jail with {runtime}:\n{}\n\
         install them in the runtime (`warden runtime install`) or remove them from `imports.allow`",
        policy.name,
        failed.len(),
        failed.join("\n")
    )
}
