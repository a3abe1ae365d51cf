//! `warden runtime check`: imports, inside the jail, every module the policy allows, and lists the
//! module objects that allowed packages expose as attributes (re-exports) which the policy's name
//! guards would not catch, and every attribute path under the allowed modules that is the same object
//! (`is`) as a name the policy bans: the identity index (`seaborn.utils.urlopen` is
//! `urllib.request.urlopen`), written beside the runtime and keyed by the policy's digest, which the
//! checker loads ([`attach_index`]) to judge such a path as the banned object.
//!
//! The probe is warden's own program; it runs through the normal pipeline with the static layer and the
//! audit hook off (it uses `importlib`), in the same jail and runtime as user programs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use warden_policy::names::Aliases;
use warden_policy::settings::InterpreterSource;
use warden_policy::{Decision, Policy};

use crate::pipeline::{self, RunRequest, RunStatus};

/// The probe: imports each module, then walks attributes of the imported modules (breadth-first, a
/// bounded number of modules) and reports module objects reachable by attribute; then resolves the
/// banned names it is given (`targets`, and the public callables each `families` module defines) and
/// reports every attribute path under the allowed modules (and the classes they define) that is one of
/// those objects.
const PROBE: &str = r#"
import importlib, json, sys, types
config = json.loads(CONFIG)
names = config["allowed"]
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

def resolve(dotted):
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:end]))
        except BaseException:
            continue
        for attribute in parts[end:]:
            value = getattr(value, attribute, None)
            if value is None:
                return None
        return value
    return None

banned = {}
def target(name, value):
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return
    # A banned name that is a module's second name (`pyarrow.lib.signal`) bans that path, not the module.
    if isinstance(value, types.ModuleType) and value.__name__ != name:
        return
    banned.setdefault(id(value), (name, value))
for name in config["targets"]:
    target(name, resolve(name))
for family in config["families"]:
    module = resolve(family)
    if not isinstance(module, types.ModuleType):
        continue
    target(family, module)
    for attribute, value in list(vars(module).items()):
        home = getattr(value, "__module__", None)
        if attribute.startswith("_") or not callable(value) or not isinstance(home, str):
            continue
        # Only what the module defines (`pickle.load` is `_pickle.load`), not what it imported.
        if home == family or home.startswith(family + ".") or home == "_" + family:
            target(family + "." + attribute, value)

aliases = {}
roots = {name.split(".")[0] for name in names}
walked = set()
queue = [(name, sys.modules[name]) for name in names if name in sys.modules]
budget = 20000
def visit(path, namespace, is_module):
    for attribute, value in list(namespace.items()):
        if not isinstance(attribute, str) or attribute.startswith("__"):
            continue
        child = path + "." + attribute
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        hit = banned.get(id(value))
        if hit is not None and hit[1] is value:
            if hit[0] != child:
                aliases.setdefault(child, hit[0])
            continue
        if not is_module:
            continue
        if isinstance(value, types.ModuleType):
            real = getattr(value, "__name__", None)
            if isinstance(real, str) and real.split(".")[0] in roots:
                queue.append((child, value))
        elif isinstance(value, type):
            home = getattr(value, "__module__", None)
            if isinstance(home, str) and home.split(".")[0] in roots and id(value) not in walked:
                walked.add(id(value))
                try:
                    visit(child, dict(vars(value)), False)
                except BaseException:
                    pass
while queue and budget > 0:
    path, module = queue.pop(0)
    if id(module) in walked:
        continue
    walked.add(id(module))
    budget -= 1
    try:
        namespace = dict(vars(module))
    except BaseException:
        continue
    visit(path, namespace, True)
print(json.dumps({"imports": results, "reexports": reexports, "aliases": aliases}))
"#;

/// Banned objects the probe looks for by identity besides the policy's `[references] deny`: the
/// importers, process starters, code runners and frame and hook functions the static rules name.
const KEY_FUNCTIONS: &[&str] = &[
    "builtins.eval",
    "builtins.exec",
    "builtins.compile",
    "builtins.__import__",
    "builtins.breakpoint",
    "builtins.globals",
    "builtins.vars",
    "os.system",
    "os.popen",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
    "os.spawnl",
    "os.spawnle",
    "os.spawnlp",
    "os.spawnlpe",
    "os.spawnv",
    "os.spawnve",
    "os.spawnvp",
    "os.spawnvpe",
    "os.posix_spawn",
    "os.posix_spawnp",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "os.environ",
    "os.putenv",
    "os.unsetenv",
    "sys._getframe",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "sys.modules",
    "joblib.load",
    "joblib.dump",
    "types.FunctionType",
    "types.CodeType",
];

/// Denied modules whose public callables (those each one defines) are looked for by identity:
/// importers, process starters, deserialisers, network clients, code runners and ctypes.
const KEY_MODULES: &[&str] = &[
    "subprocess",
    "pickle",
    "marshal",
    "shelve",
    "importlib",
    "importlib.util",
    "importlib.machinery",
    "runpy",
    "pkgutil",
    "pydoc",
    "code",
    "codeop",
    "timeit",
    "cProfile",
    "pdb",
    "urllib.request",
    "http.client",
    "socket",
    "ftplib",
    "smtplib",
    "ctypes",
    "pty",
    "multiprocessing",
    "webbrowser",
    "dill",
    "cloudpickle",
    "asyncio.subprocess",
];

/// What the probe found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuntimeFacts {
    /// Module → "ok", "missing: …" or "broken: …".
    pub imports: BTreeMap<String, String>,
    /// `[attribute path, real module name]` for every module reachable under another path.
    pub reexports: Vec<(String, String)>,
    /// Attribute path under an allowed module → the banned name of the same object.
    #[serde(default)]
    pub aliases: BTreeMap<String, String>,
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
    let mut targets: Vec<String> = KEY_FUNCTIONS
        .iter()
        .map(|name| (*name).to_owned())
        .collect();
    targets.extend(
        policy
            .denied_references
            .iter()
            .map(|pattern| pattern.to_string().trim_end_matches(".*").to_owned()),
    );
    let config = serde_json::json!({
        "allowed": modules_to_check(policy),
        "targets": targets,
        "families": KEY_MODULES,
    });
    // A Python string literal of the JSON text (Rust's `{:?}` escapes are valid Python escapes for it).
    let source = PROBE.replace(
        "json.loads(CONFIG)",
        &format!("json.loads({:?})", config.to_string()),
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

/// The identity index: the paths of `facts.aliases` whose banned name the policy denies (checked as
/// a program naming it would be) and that the policy does not already deny by name.
pub fn banned_aliases(policy: &Policy, facts: &RuntimeFacts) -> BTreeMap<String, String> {
    let mut verdicts: BTreeMap<String, bool> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (alias, banned) in &facts.aliases {
        let denied = *verdicts
            .entry(banned.clone())
            .or_insert_with(|| denied_by_name(policy, banned));
        if denied && !denied_by_name(policy, alias) {
            out.insert(alias.clone(), banned.clone());
        }
    }
    out
}

/// Whether the checker (without an index) denies a program that names `path` after importing its
/// first segment.
fn denied_by_name(policy: &Policy, path: &str) -> bool {
    let root = path.split('.').next().unwrap_or_default();
    let program = format!("import {root}\n{path}\n");
    warden_policy::check(program.as_bytes(), policy).decision == Decision::Deny
}

/// What an index file holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentityIndex {
    pub format: u32,
    /// The runtime the packages were imported from, and when it was installed (a reinstalled runtime
    /// replaces its directory, the index with it).
    pub runtime: String,
    pub runtime_installed_at_unix: u64,
    pub policy: String,
    pub policy_sha256: String,
    /// Alias path → the banned name of the same object.
    pub aliases: BTreeMap<String, String>,
}

const INDEX_FORMAT: u32 = 1;

/// Where the index of `policy` lives: `<runtime>/identity/<policy sha256>.json`, for a policy that
/// names a runtime (an interpreter given by path has no index).
pub fn index_path(policy: &Policy) -> anyhow::Result<Option<PathBuf>> {
    let InterpreterSource::Runtime(name) = &policy.interpreter else {
        return Ok(None);
    };
    let runtime = crate::runtime::Runtime::named(name)?;
    Ok(Some(
        runtime
            .root
            .join("identity")
            .join(format!("{}.json", policy.sha256)),
    ))
}

/// Writes the index of `policy` beside its runtime and returns where.
pub fn write_index(
    policy: &Policy,
    aliases: &BTreeMap<String, String>,
) -> anyhow::Result<Option<PathBuf>> {
    let Some(path) = index_path(policy)? else {
        return Ok(None);
    };
    let InterpreterSource::Runtime(name) = &policy.interpreter else {
        return Ok(None);
    };
    let manifest = crate::runtime::Runtime::named(name)?.manifest()?;
    let index = IdentityIndex {
        format: INDEX_FORMAT,
        runtime: name.clone(),
        runtime_installed_at_unix: manifest.installed_at_unix,
        policy: policy.name.clone(),
        policy_sha256: policy.sha256.clone(),
        aliases: aliases.clone(),
    };
    let dir = path.parent().context("index path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let staging = path.with_extension(format!("json.{}", std::process::id()));
    std::fs::write(&staging, serde_json::to_string_pretty(&index)?)
        .with_context(|| format!("cannot write {}", staging.display()))?;
    std::fs::rename(&staging, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Some(path))
}

/// Loads the index of `policy` and its runtime into `policy.aliases`, when `warden runtime check`
/// wrote one; returns its path. No index is not an error (the policy works without one); an index
/// that does not parse or that was made for another runtime installation or policy text is.
pub fn attach_index(policy: &mut Policy) -> anyhow::Result<Option<PathBuf>> {
    let Some(path) = index_path(policy)? else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let redo = "run `warden runtime check` with this policy to write it again";
    let index: IdentityIndex = serde_json::from_str(&text)
        .with_context(|| format!("identity index {} is not valid ({redo})", path.display()))?;
    let installed = match &policy.interpreter {
        InterpreterSource::Runtime(name) => crate::runtime::Runtime::named(name)?
            .manifest()
            .map(|manifest| manifest.installed_at_unix)
            .ok(),
        InterpreterSource::Path(_) => None,
    };
    if index.format != INDEX_FORMAT
        || index.policy_sha256 != policy.sha256
        || Some(index.runtime_installed_at_unix) != installed
    {
        anyhow::bail!(
            "identity index {} was written for another policy text or runtime installation ({redo})",
            path.display()
        );
    }
    policy.aliases = std::sync::Arc::new(Aliases::new(index.aliases));
    Ok(Some(path))
}
