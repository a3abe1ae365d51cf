//! Maps the validated policy to the runtime layer's settings: the one place where rules-file settings
//! become the audit hook's (`warden_policy::Policy` → the JSON `_warden_hook.install` reads, see
//! `hook/src/settings.rs`), next to `jail_config.rs`, which does the same for the jail.
//!
//! Owns: which policy settings the hook enforces (imports, file roots, network, processes, pickle,
//! marshal, ctypes), the lists of library files that may generate code or use ctypes and of the
//! modules the interpreter imports for builtins (facts about the runtime, each with who needs it), finding warden's hook library, and failing closed
//! when the policy requires the layer and the library is missing. Does not own: installing the hook
//! (the jail's bootstrap does), nor the decisions (the hook does).

use std::path::{Path, PathBuf};

use serde::Serialize;
use warden_policy::settings::{Hooks, ModuleVerdict};
use warden_policy::Policy;

/// The hook library's file name, as cargo builds it next to the `warden` binary.
pub const LIBRARY_NAME: &str = "libwarden_hook.so";

/// What the bootstrap does before the program runs, decided from the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeLayer {
    /// warden's native module (host path).
    pub library: PathBuf,
    /// The hook's settings (JSON); `None`: no audit hook.
    pub hook_settings: Option<String>,
    /// Forbid execve and process creation once the interpreter runs (the policy allows no processes).
    pub ban_exec: bool,
}

/// The runtime layer for a run of `policy`. `hooks_off`: the caller turned the audit hook off to
/// prove the jail alone (`warden run --no-hooks`); the exec ban stays, it belongs to the kernel.
/// `Err` (a `setup_failed` message) when the policy needs warden's hook library and it is missing.
pub fn runtime_layer(policy: &Policy, hooks_off: bool) -> Result<Option<RuntimeLayer>, String> {
    let hooks = !hooks_off && policy.hooks != Hooks::Off;
    let ban_exec = !policy.processes;
    if !hooks && !ban_exec {
        return Ok(None);
    }
    let library = match find_library() {
        Ok(library) => library,
        Err(looked) if hooks && policy.hooks == Hooks::Required => {
            return Err(missing("the policy requires the runtime layer ([runtime] hooks = \"required\")", &looked))
        }
        Err(looked) if ban_exec => {
            return Err(missing(
                "the policy allows no processes ([processes] allow = false), and the kernel's exec ban is installed by warden's hook library",
                &looked,
            ))
        }
        Err(_) => return Ok(None),
    };
    let hook_settings = hooks.then(|| settings_json(policy));
    let library = staged_library(&library, &crate::runtime::data_dir())
        .or_else(|| staged_library(&library, &cache_dir()?))
        .unwrap_or(library);
    Ok(Some(RuntimeLayer {
        library,
        hook_settings,
        ban_exec,
    }))
}

/// A copy of the hook `library` in the data directory (or the user's cache directory when the data
/// directory is not theirs to write), `<dir>/lib/hook-<key>.so`, made once
/// per build of the library (the key digests its size, modification time and inode), for the jail
/// to bind instead of the original: `/proc/self/mountinfo` names a bind's host path, and the data
/// directory is visible inside anyway (the runtime's prefix), while warden's install directory
/// need not be (issue 25). `None` (bind the original) when the copy cannot be made.
pub fn staged_library(library: &Path, data_dir: &Path) -> Option<PathBuf> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(library).ok()?;
    let identity = format!(
        "{} {} {} {} {}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ino(),
        meta.dev()
    );
    let key: String = Sha256::digest(identity.as_bytes())
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = data_dir.join("lib");
    let staged = dir.join(format!("hook-{key}.so"));
    if let Ok(found) = std::fs::metadata(&staged) {
        if found.is_file() && found.len() == meta.len() {
            // In use: its time says so (at most once every ten minutes), so that the clean-up
            // below leaves it.
            if found
                .modified()
                .is_ok_and(|t| t.elapsed().unwrap_or_default() > RECENT)
            {
                let _ = std::fs::File::options()
                    .append(true)
                    .open(&staged)
                    .and_then(|f| f.set_modified(std::time::SystemTime::now()));
            }
            return Some(staged);
        }
    }
    std::fs::create_dir_all(&dir).ok()?;
    // Written under a name of its own, then renamed: a concurrent run binds either the whole
    // file or, until then, the original.
    let partial = dir.join(format!(".hook-{key}.{}", std::process::id()));
    let copied = std::fs::copy(library, &partial)
        .and_then(|_| std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o644)))
        .and_then(|()| std::fs::rename(&partial, &staged));
    if copied.is_err() {
        let _ = std::fs::remove_file(&partial);
        return None;
    }
    // Copies of other builds not used for a day go (a jail that bound one keeps its inode).
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let unused = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().unwrap_or_default() > UNUSED);
        if name.starts_with("hook-") && name.ends_with(".so") && entry.path() != staged && unused {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Some(staged)
}

/// How often a staged copy in use has its time refreshed.
const RECENT: std::time::Duration = std::time::Duration::from_secs(600);
/// How long a staged copy of another build is kept unused.
const UNUSED: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The user's cache directory for warden (`$XDG_CACHE_HOME/warden`, `~/.cache/warden`): where
/// the hook library is staged when the data directory is not the caller's to write (an ordinary
/// user running the runtime root installed).
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("warden"));
    }
    let home = std::env::var_os("HOME").filter(|d| !d.is_empty())?;
    Some(PathBuf::from(home).join(".cache/warden"))
}

fn missing(why: &str, looked: &[PathBuf]) -> String {
    let looked: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
    format!(
        "{why}, but warden's hook library was not found (looked for {}); build it with `cargo build -p warden-hook` (scripts/setup.sh does)",
        looked.join(", ")
    )
}

/// warden's hook library: next to the running `warden` binary (`target/<profile>/`), or in
/// `../lib/warden/` of an installed layout. `Err` lists where it looked.
pub fn find_library() -> Result<PathBuf, Vec<PathBuf>> {
    let exe = std::env::current_exe().map_err(|_| Vec::new())?;
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let candidates = vec![
        dir.join(LIBRARY_NAME),
        dir.join("../lib/warden").join(LIBRARY_NAME),
    ];
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .ok_or(candidates)
}

/// The hook's settings: field for field `hook/src/settings.rs`'s `PolicySettings`.
#[derive(Debug, Serialize)]
struct HookSettings<'a> {
    policy: &'a str,
    mode: &'static str,
    import_allow: Vec<String>,
    import_deny: Vec<String>,
    allow_processes: bool,
    allow_network: bool,
    read_roots: &'a [String],
    write_roots: &'a [String],
    runtime_read_roots: Vec<&'static str>,
    deny_pickle: bool,
    deny_marshal: bool,
    deny_native: bool,
    code_callers: Vec<&'static str>,
    marshal_callers: Vec<&'static str>,
    ctypes_callers: Vec<&'static str>,
    runtime_imports: Vec<&'static str>,
    import_machinery: Vec<&'static str>,
    ctypes_machinery: Vec<&'static str>,
    introspection_machinery: Vec<&'static str>,
    string_evaluators: Vec<StringEvaluator>,
    program: &'static str,
}

/// A library function that evaluates its argument as code (the hook's `evaluators.rs`).
#[derive(Debug, Clone, Copy, Serialize)]
struct StringEvaluator {
    file: &'static str,
    function: &'static str,
    argument: &'static str,
    kind: &'static str,
    direct: bool,
}

/// Functions of the shipped runtime that evaluate a string as code for their caller: a string the
/// program built at run time is its code from a string (DYN401, the static layer's DYN405), a
/// literal is not. `direct`: judged only when the program calls it itself (jinja2 compiles a
/// package's own template files through `Environment.compile`).
const STRING_EVALUATORS: [(&str, &str, &str, &str, bool); 23] = [
    ("sympy/core/sympify.py", "sympify", "a", "code", false),
    (
        "sympy/parsing/sympy_parser.py",
        "parse_expr",
        "s",
        "code",
        false,
    ),
    (
        "sympy/parsing/sympy_parser.py",
        "eval_expr",
        "code",
        "code",
        false,
    ),
    (
        "sympy/parsing/mathematica.py",
        "parse_mathematica",
        "s",
        "code",
        false,
    ),
    (
        "sympy/utilities/lambdify.py",
        "lambdify",
        "expr",
        "code",
        false,
    ),
    (
        "pandas/core/frame.py",
        "DataFrame.query",
        "expr",
        "code",
        false,
    ),
    (
        "pandas/core/frame.py",
        "DataFrame.eval",
        "expr",
        "code",
        false,
    ),
    (
        "pandas/core/computation/eval.py",
        "eval",
        "expr",
        "code",
        false,
    ),
    (
        "pandas/core/computation/expr.py",
        "Expr.__init__",
        "expr",
        "code",
        false,
    ),
    (
        "patsy/highlevel.py",
        "dmatrix",
        "formula_like",
        "code",
        false,
    ),
    (
        "patsy/highlevel.py",
        "dmatrices",
        "formula_like",
        "code",
        false,
    ),
    (
        "patsy/highlevel.py",
        "incr_dbuilder",
        "formula_like",
        "code",
        false,
    ),
    (
        "patsy/highlevel.py",
        "incr_dbuilders",
        "formula_like",
        "code",
        false,
    ),
    (
        "patsy/desc.py",
        "ModelDesc.from_formula",
        "tree_or_string",
        "code",
        false,
    ),
    (
        "patsy/eval.py",
        "EvalEnvironment.eval",
        "expr",
        "code",
        false,
    ),
    (
        "statsmodels/base/model.py",
        "Model.from_formula",
        "formula",
        "code",
        false,
    ),
    ("formulaic/sugar.py", "model_matrix", "spec", "code", false),
    (
        "formulaic/formula.py",
        "_FormulaMeta.from_spec",
        "spec",
        "code",
        false,
    ),
    (
        "jinja2/environment.py",
        "Environment.from_string",
        "source",
        "code",
        false,
    ),
    (
        "jinja2/environment.py",
        "Template.__new__",
        "source",
        "code",
        false,
    ),
    (
        "jinja2/environment.py",
        "Environment.compile",
        "source",
        "code",
        true,
    ),
    ("typing.py", "ForwardRef.__init__", "arg", "type", false),
    ("dataclasses.py", "_process_class", "cls", "fields", false),
];

/// Files the interpreter and its libraries read on their own, besides the interpreter's prefixes
/// (which the bootstrap adds) — each with who needs it.
const RUNTIME_READ_ROOTS: [(&str, &str); 9] = [
    (
        "/proc/self",
        "numpy, loky and threadpoolctl read maps, status, stat, cgroup",
    ),
    ("/proc/cpuinfo", "numpy's and loky's CPU detection"),
    ("/proc/meminfo", "psutil-like memory probes (joblib)"),
    ("/proc/sys/kernel/osrelease", "platform.release"),
    (
        "/sys/fs/cgroup",
        "loky and os.cpu_count wrappers read the CPU quota",
    ),
    (
        "/sys/devices/system/cpu",
        "numpy and threadpoolctl count CPUs",
    ),
    ("/dev/null", "everyone"),
    ("/dev/urandom", "random, secrets, uuid"),
    (
        "/etc/localtime",
        "time and datetime's local zone (TZ=UTC in the jail)",
    ),
];

/// Library files that may call exec/compile themselves (code generators), relative to the
/// interpreter's import path, besides those whose code names the sink it calls (`exec(…)`,
/// mpmath's `exec_(…)`: the hook sees that in the code object). Any other library file calling
/// exec is running a callback the program passed (`map(exec, …)`, `Series.map(eval)`) and is
/// denied. Found with the hook's log mode over the benign corpus and `warden runtime check`.
const CODE_CALLERS: [&str; 16] = [
    "<frozen importlib._bootstrap", // module bodies: every import
    "<bootstrap>",                  // warden's bootstrap runs the program
    "dataclasses.py",               // @dataclass generates __init__, __repr__, __eq__
    "collections/__init__.py",      // namedtuple generates __new__
    "typing.py",                    // NamedTuple, TypedDict, forward references
    "enum.py",                      // Enum's functional API
    "ast.py",                       // ast.literal_eval's parse step
    "numpy/f2py/auxfuncs.py",
    "scipy/_lib/_bunch.py", // scipy result types (a namedtuple-like generator)
    "scipy/_lib/array_api_compat/_internal.py",
    "scipy/optimize/_nonlin.py",
    "scipy/stats/_distn_infrastructure.py", // distributions' generated signatures
    "sklearn/externals/array_api_compat/_internal.py",
    "scipy/_lib/decorator.py", // scipy's copy of `decorator`: signature-preserving wrappers
    "matplotlib/rcsetup.py",   // rcParams validators generated per type
    "fontTools/ttLib/tables/otConverters.py", // OpenType table specs (matplotlib's PDF/PS fonts)
];

/// Library files that may use ctypes: ctypes itself (its module body), numpy's `ndarray.ctypes`
/// support, threadpoolctl (which finds the BLAS libraries numpy and scipy loaded), and the
/// packages that are ctypes bindings of their own native library (the runtime's gradient boosters),
/// and dateutil's Windows time zones, which import ctypes (whose module body opens the interpreter
/// itself, `PyDLL(None)`) and then give up on Linux (`from ctypes import wintypes` fails): without it,
/// `import dateutil.tz` (every `dateutil.parser`) fails when nothing imported ctypes before.
const CTYPES_CALLERS: [&str; 8] = [
    "ctypes/",
    "numpy/core/_internal.py",  // numpy 1.x
    "numpy/_core/_internal.py", // numpy 2.x
    "threadpoolctl.py",
    "lightgbm/",              // lib_lightgbm.so through ctypes.cdll
    "xgboost/",               // libxgboost.so through ctypes.cdll
    "sympy/external/gmpy.py", // probes for libgmp (sympy's integer backend)
    "dateutil/tz/win.py",     // `import ctypes` at import time (Windows time zones)
];

/// Modules the interpreter's own C code imports the first time the program calls a builtin, with
/// the builtins that do (CPython 3.11's `PyImport_Import` calls from C): no import statement of the
/// program runs, so they are not the program's imports. Each must be harmless to hand the
/// program (`__import__` of it is DYN402 statically anyway); the policy's denylist still wins.
const RUNTIME_IMPORTS: [(&str, &str); 1] = [(
    "_strptime",
    "datetime.datetime.strptime, time.strptime (a pure-Python date parser)",
)];

/// importlib's pyc loader reads marshalled code.
const MARSHAL_CALLERS: [&str; 1] = ["<frozen importlib._bootstrap_external>"];

/// Frames skipped when looking for who asked for an import: the import system itself.
const IMPORT_MACHINERY: [&str; 2] = ["<frozen importlib.", "importlib/"];

/// Frames skipped when looking for who asked for a ctypes call.
const CTYPES_MACHINERY: [&str; 3] = ["ctypes/", "<frozen importlib.", "importlib/"];

/// Frames skipped when looking for who asked for a frame: `inspect` on someone's behalf.
const INTROSPECTION_MACHINERY: [&str; 1] = ["inspect.py"];

/// The settings JSON for `policy`.
pub fn settings_json(policy: &Policy) -> String {
    let denied = |module: &str| {
        let segments: Vec<&str> = module.split('.').collect();
        policy.imports.verdict(&segments) == ModuleVerdict::Denied
    };
    let settings = HookSettings {
        policy: &policy.name,
        mode: "enforce",
        import_allow: policy
            .imports
            .allow
            .iter()
            .map(ToString::to_string)
            .collect(),
        import_deny: policy
            .imports
            .deny
            .iter()
            .map(ToString::to_string)
            .collect(),
        allow_processes: policy.processes,
        allow_network: policy.network,
        read_roots: &policy.files.read,
        write_roots: &policy.files.write,
        runtime_read_roots: RUNTIME_READ_ROOTS.iter().map(|(path, _)| *path).collect(),
        deny_pickle: denied("pickle"),
        deny_marshal: denied("marshal"),
        deny_native: denied("ctypes"),
        code_callers: CODE_CALLERS.to_vec(),
        marshal_callers: MARSHAL_CALLERS.to_vec(),
        ctypes_callers: CTYPES_CALLERS.to_vec(),
        runtime_imports: RUNTIME_IMPORTS.iter().map(|(module, _)| *module).collect(),
        import_machinery: IMPORT_MACHINERY.to_vec(),
        ctypes_machinery: CTYPES_MACHINERY.to_vec(),
        introspection_machinery: INTROSPECTION_MACHINERY.to_vec(),
        string_evaluators: STRING_EVALUATORS
            .iter()
            .map(
                |&(file, function, argument, kind, direct)| StringEvaluator {
                    file,
                    function,
                    argument,
                    kind,
                    direct,
                },
            )
            .collect(),
        program: warden_jail::PROGRAM_PATH,
    };
    serde_json::to_string(&settings).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_library_is_staged_once_per_build_and_old_copies_go() {
        let dir = std::env::temp_dir().join(format!("warden-stage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        let library = dir.join("libwarden_hook.so");
        std::fs::write(&library, b"build one").unwrap();
        let old = dir.join("lib/hook-000000000000000000000000.so");
        std::fs::write(&old, b"an old build").unwrap();
        let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 24 * 3600);
        std::fs::File::options()
            .append(true)
            .open(&old)
            .unwrap()
            .set_modified(day_ago)
            .unwrap();
        let staged = staged_library(&library, &dir).unwrap();
        assert!(staged.starts_with(dir.join("lib")), "{}", staged.display());
        assert_eq!(std::fs::read(&staged).unwrap(), b"build one");
        assert!(!old.exists(), "an unused copy of another build stays");
        // The same build: the same copy. Another build: another one, the first kept (in use).
        assert_eq!(staged_library(&library, &dir).unwrap(), staged);
        std::fs::write(&library, b"build two!").unwrap();
        let second = staged_library(&library, &dir).unwrap();
        assert_ne!(second, staged);
        assert_eq!(std::fs::read(&second).unwrap(), b"build two!");
        assert!(staged.exists());
        // Nowhere to write: none (the caller binds the original).
        assert!(staged_library(&library, Path::new("/proc/warden-nowhere")).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_default_policy_maps_its_imports_roots_and_sinks() {
        let policy = Policy::builtin_default().unwrap();
        let json: serde_json::Value = serde_json::from_str(&settings_json(&policy)).unwrap();
        assert_eq!(json["policy"], "default");
        let allow = json["import_allow"].as_array().unwrap();
        assert!(allow.iter().any(|m| m == "pandas.*"));
        let deny = json["import_deny"].as_array().unwrap();
        assert!(deny.iter().any(|m| m == "subprocess"));
        assert_eq!(json["read_roots"][0], "/work");
        assert_eq!(json["deny_pickle"], true);
        assert_eq!(json["deny_marshal"], true);
        assert_eq!(json["deny_native"], true);
        assert_eq!(json["allow_processes"], false);
        assert_eq!(json["allow_network"], false);
        let runtime_imports = json["runtime_imports"].as_array().unwrap();
        assert!(runtime_imports.iter().any(|m| m == "_strptime"));
        // A module the runtime imports for a builtin is never one the policy denies.
        assert!(!runtime_imports.iter().any(|m| deny.contains(m)));
    }

    #[test]
    fn hooks_off_keeps_the_exec_ban_when_processes_are_denied() {
        let policy = Policy::builtin_default().unwrap();
        match runtime_layer(&policy, true) {
            Ok(Some(layer)) => {
                assert!(layer.ban_exec);
                assert!(layer.hook_settings.is_none());
            }
            // No library built next to the test binary: the ban still needs it, so the run fails
            // closed with a message naming the library.
            Err(message) => assert!(message.contains(LIBRARY_NAME), "{message}"),
            Ok(None) => panic!("the exec ban was dropped"),
        }
    }

    #[test]
    fn a_policy_without_the_layer_and_with_processes_needs_nothing() {
        let policy = Policy::from_toml(
            "[policy]\nname = \"p\"\n[runtime]\nhooks = \"off\"\n[processes]\nallow = true\n",
            None,
        )
        .unwrap();
        assert_eq!(runtime_layer(&policy, false), Ok(None));
    }

    #[test]
    fn unknown_hook_modes_are_rules_file_errors() {
        let err = Policy::from_toml(
            "[policy]\nname = \"p\"\n[runtime]\nhooks = \"maybe\"\n",
            None,
        )
        .unwrap_err();
        assert_eq!(err.key.as_deref(), Some("runtime.hooks"));
    }
}
