//! The hook's settings: the policy half comes from the rules file (warden's gateway writes it as JSON,
//! `gateway/src/hook_config.rs`), the interpreter half from the bootstrap (the interpreter's own import
//! path and prefixes, read inside the jail before any untrusted code runs).
//!
//! Owns: parsing and checking both halves, the matching of file names against caller lists, and
//! which paths are readable.
//! Pure: no Python, so `tests/pure.rs` covers it.

use serde::Deserialize;

use crate::rules::{under, Modules};

/// What the hook does with a denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Raise `warden.PolicyViolation` (a `PermissionError`).
    Enforce,
    /// Print a JSON line to stderr and allow: for finding which library files generate code.
    Log,
}

/// The policy half, as warden's gateway writes it. Unknown keys are errors.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySettings {
    /// The policy's name, quoted in every message.
    pub policy: String,
    pub mode: Mode,
    /// Import patterns for the program: `pkg` exactly, `pkg.*` any submodule. A deny wins.
    pub import_allow: Vec<String>,
    pub import_deny: Vec<String>,
    /// Whether the program may start processes (subprocess, os.system, exec, spawn, fork).
    pub allow_processes: bool,
    pub allow_network: bool,
    /// Roots the program may read and write (absolute, the jail's view).
    pub read_roots: Vec<String>,
    pub write_roots: Vec<String>,
    /// Files the interpreter and its libraries read on their own (besides the interpreter's
    /// prefixes, which the bootstrap adds).
    pub runtime_read_roots: Vec<String>,
    /// Deny `pickle.find_class` (every unpickling of a reference) and `marshal.loads`.
    pub deny_pickle: bool,
    pub deny_marshal: bool,
    /// Deny ctypes (dlopen, dlsym, calls, raw memory) outside `ctypes_callers`.
    pub deny_native: bool,
    /// Library files that may call `exec`/`compile` themselves (code generators), relative to a
    /// trusted root, or `<frozen …` names.
    pub code_callers: Vec<String>,
    /// Library files that may call `marshal.loads` (importlib's pyc loader).
    pub marshal_callers: Vec<String>,
    /// Library files that may use ctypes.
    pub ctypes_callers: Vec<String>,
    /// Modules the interpreter's C code imports on first use of a builtin the program calls
    /// (`_strptime` for `datetime.strptime`): allowed unless denied when the program's frame is
    /// calling, not running an import statement.
    pub runtime_imports: Vec<String>,
    /// Frames skipped when looking for who asked for an import, a ctypes call, a frame.
    pub import_machinery: Vec<String>,
    pub ctypes_machinery: Vec<String>,
    pub introspection_machinery: Vec<String>,
    /// Library functions that evaluate a string as code for whoever calls them (`sympify`,
    /// `DataFrame.query`, patsy's formulas, `typing.ForwardRef`, `dataclass` field names): a
    /// string the program built at run time is its code from a string (DYN401). See
    /// `evaluators.rs`.
    #[serde(default)]
    pub string_evaluators: Vec<Evaluator>,
    /// The name of the program's file: tracebacks read it back.
    pub program: String,
}

/// What a string evaluator's argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvaluatorKind {
    /// Code: only a literal of the program (or of the library calling it) is evaluated.
    Code,
    /// A type expression (`ForwardRef`): a literal, or text with no call, no dunder and no lambda
    /// (libraries' own annotations are strings too).
    Type,
    /// A class whose annotation names become generated code (`dataclass`): each must be an
    /// identifier.
    Fields,
}

/// One library function that evaluates its argument as code.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluator {
    /// Its file, relative to a trusted root (`sympy/core/sympify.py`).
    pub file: String,
    /// Its qualified name (`DataFrame.query`, `ForwardRef.__init__`).
    pub function: String,
    /// The argument holding the string (or class) it evaluates.
    pub argument: String,
    pub kind: EvaluatorKind,
    /// Judged only when the program calls it itself: a function the library also calls on its
    /// own files (jinja2's `Environment.compile` for a package's templates).
    #[serde(default)]
    pub direct: bool,
}

/// The interpreter half, from the bootstrap.
#[derive(Debug, Clone, Default)]
pub struct InterpreterFacts {
    /// The interpreter's import path at start-up (stdlib, lib-dynload, site-packages): code loaded
    /// from there is library code. Read-only in the jail.
    pub trusted_roots: Vec<String>,
    /// `sys.prefix`, `sys.base_prefix`, `sys.exec_prefix`: readable.
    pub prefixes: Vec<String>,
    /// The bootstrap's own file: library code, and an allowed code caller (it runs the program).
    pub bootstrap: String,
}

/// Everything the hook decides with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub policy: PolicySettings,
    pub interpreter: InterpreterFacts,
    /// The policy's module patterns, ready for lookups.
    pub allow: Modules,
    pub deny: Modules,
    pub runtime_imports: Modules,
}

impl Settings {
    /// Parses the policy half and joins the interpreter's facts; every path must be absolute.
    pub fn new(policy_json: &str, interpreter: InterpreterFacts) -> Result<Settings, String> {
        let policy: PolicySettings =
            serde_json::from_str(policy_json).map_err(|err| format!("bad settings: {err}"))?;
        let absolute = policy
            .read_roots
            .iter()
            .chain(&policy.write_roots)
            .chain(&policy.runtime_read_roots)
            .chain(&interpreter.trusted_roots)
            .chain(&interpreter.prefixes)
            .chain([&interpreter.bootstrap, &policy.program])
            .find(|path| !path.starts_with('/'));
        if let Some(path) = absolute {
            return Err(format!("bad settings: {path:?} is not an absolute path"));
        }
        if interpreter.trusted_roots.is_empty() {
            return Err("bad settings: no trusted roots (the interpreter's import path)".into());
        }
        Ok(Settings {
            allow: Modules::new(&policy.import_allow),
            deny: Modules::new(&policy.import_deny),
            runtime_imports: Modules::new(&policy.runtime_imports),
            policy,
            interpreter,
        })
    }

    /// Adds, for every root and prefix, the real path the kernel names it by when that differs
    /// (`/etc/localtime` → `/usr/share/zoneinfo/…`; a prefix below a link): paths are judged by
    /// their real target. A root that does not exist is left as it is.
    pub fn add_real_roots(&mut self) {
        fn real(roots: &mut Vec<String>) {
            let extra: Vec<String> = roots
                .iter()
                .filter_map(|root| std::fs::canonicalize(root).ok())
                .map(|real| real.to_string_lossy().into_owned())
                .filter(|real| !roots.contains(real))
                .collect();
            roots.extend(extra);
        }
        real(&mut self.policy.read_roots);
        real(&mut self.policy.write_roots);
        real(&mut self.policy.runtime_read_roots);
        real(&mut self.interpreter.prefixes);
    }

    /// Whether code from `filename` is library code: under the interpreter's import path, frozen,
    /// or the bootstrap. Everything else (the program, `<string>`, `<stdin>`) is the program's.
    pub fn is_trusted_file(&self, filename: &str) -> bool {
        filename.starts_with("<frozen ")
            || filename == self.interpreter.bootstrap
            || self
                .interpreter
                .trusted_roots
                .iter()
                .any(|root| relative_to(filename, root).is_some())
    }

    /// The module a library file is (`ftplib` for `<stdlib>/ftplib.py`, `nltk.downloader`,
    /// `xml.dom` for its `__init__.py`, `zipimport` for `<frozen zipimport>`), relative to the
    /// deepest trusted root holding it; `None` for other files and the import system's own.
    pub fn module_of_file(&self, filename: &str) -> Option<String> {
        if let Some(name) = filename
            .strip_prefix("<frozen ")
            .and_then(|rest| rest.strip_suffix('>'))
        {
            return (!name.starts_with("importlib.")).then(|| name.to_owned());
        }
        let relative = self
            .interpreter
            .trusted_roots
            .iter()
            .filter_map(|root| relative_to(filename, root))
            .min_by_key(|rel| rel.len())?;
        let stem = relative.strip_suffix(".py")?;
        let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
        (!stem.is_empty() && !stem.contains('.')).then(|| stem.replace('/', "."))
    }

    /// Whether the normalised `path` may be read: the read and write roots, the files the runtime
    /// reads on its own, the interpreter's prefixes, and the source files of the code the
    /// interpreter runs outside them: the program and warden's bootstrap. `linecache` reads those
    /// for whoever formats a stack (tracebacks, `warnings`, `traceback.extract_stack`, pandas'
    /// `query("… @name")` through `inspect.stack()`); the bootstrap is warden's public code, and
    /// the jail binds it read-only.
    pub fn readable(&self, path: &str) -> bool {
        let p = &self.policy;
        // A process's environment and memory are never the runtime's business, whatever root
        // holds them (`/proc/self` is one, for maps, status and cgroup).
        if path.starts_with("/proc/") && matches!(path.rsplit('/').next(), Some("environ" | "mem"))
        {
            return false;
        }
        // The prefixes first: the import system's files, most of what is opened, are there.
        under(&self.interpreter.prefixes, path)
            || under(&p.read_roots, path)
            || under(&p.write_roots, path)
            || under(&p.runtime_read_roots, path)
            || path == p.program
            || path == self.interpreter.bootstrap
    }

    /// The string evaluator a library code object is (its file and qualified name), if any.
    /// `qualname` is asked for only when the file holds one.
    pub fn evaluator(
        &self,
        filename: &str,
        qualname: impl FnOnce() -> Option<String>,
    ) -> Option<usize> {
        let evaluators = &self.policy.string_evaluators;
        if evaluators.is_empty() {
            return None;
        }
        let relative = self
            .interpreter
            .trusted_roots
            .iter()
            .filter_map(|root| relative_to(filename, root))
            .find(|rel| evaluators.iter().any(|e| e.file == *rel))?;
        let qualname = qualname()?;
        evaluators
            .iter()
            .position(|e| e.file == relative && e.function == qualname)
    }

    /// Whether a trusted `filename` is on `list`: `<frozen …` entries match by prefix, the bootstrap
    /// by name, others are paths relative to a trusted root (`dataclasses.py`, `ctypes/` for a
    /// whole package).
    pub fn listed(&self, list: &[String], filename: &str) -> bool {
        if filename == self.interpreter.bootstrap {
            return list.iter().any(|entry| entry == "<bootstrap>");
        }
        list.iter().any(|entry| {
            if entry.starts_with('<') {
                filename.starts_with(entry.as_str())
            } else {
                self.interpreter.trusted_roots.iter().any(|root| {
                    relative_to(filename, root).is_some_and(|rel| {
                        rel == entry || (entry.ends_with('/') && rel.starts_with(entry.as_str()))
                    })
                })
            }
        })
    }
}

/// `path` relative to the directory `root`, when it is below it.
pub fn relative_to<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    let root = root.trim_end_matches('/');
    path.strip_prefix(root)?.strip_prefix('/')
}
