//! `_warden_hook`: warden's in-interpreter layer, a native PEP 578 audit hook driven by the rules file.
//!
//! warden's bootstrap (`jail/src/bootstrap.py`, trusted, run before any untrusted code) imports this
//! module from `/run/warden/lib`, calls [`install`] once with the policy's settings (JSON written by
//! `gateway/src/hook_config.rs` from the same validated policy as the static checks and the jail) and,
//! when the policy allows no processes, [`ban_exec`]; then it runs the program.
//!
//! Why native: a hook added with `PySys_AddAuditHook` lives in the runtime's own list. No Python object
//! represents it, so `gc`, frame walks and `sys.modules` cannot find it, and there is no API to remove
//! it: it is cleared only when the interpreter finalises. It calls nothing the program can replace
//! (`sys.audit`, `sys.addaudithook` rebound in Python change nothing), and its state lives in Rust
//! statics. Once installed, the module removes itself from `sys.modules`, and a second `install`
//! fails. A Python hook (`sys.addaudithook(f)`) would be an object the program could reach.
//!
//! Owns: the module's two functions and the `_posixsubprocess.fork_exec` stub (that function raises
//! no audit event in 3.11). The decisions are in `audit.rs` (events) and `rules.rs` (pure parts); the
//! settings in `settings.rs`; the kernel half of the process ban in `kernel.rs`.
//!
//! Does not own: the policy (the gateway maps it), nor the jail (the boundary: the hook gives the
//! policy's intent with a message a model can act on; the jail holds when the hook is bypassed).

mod audit;
mod creators;
mod evaluators;
mod hidden;
mod kernel;
mod paths;
mod python;
mod rules;
mod settings;
mod template;
mod types;
mod watchdog;

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::rules::{Denial, Rule};
use crate::settings::{InterpreterFacts, Settings};

static INSTALLED: AtomicBool = AtomicBool::new(false);
/// importlib's own `_gcd_import`, which [`gcd_import`] replaces.
static GCD_IMPORT: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
static EXEC_BANNED: AtomicBool = AtomicBool::new(false);

/// Replaces `_posixsubprocess.fork_exec`: raises the process rule's `PolicyViolation`.
#[pyfunction]
#[pyo3(signature = (*_args, **_kwargs))]
fn fork_exec_denied(
    py: Python<'_>,
    _args: &Bound<'_, PyTuple>,
    _kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let policy = audit::SETTINGS
        .get()
        .map_or("?", |settings| settings.policy.policy.as_str());
    let denial = Denial::new(Rule::Process, "starting a process");
    // SAFETY: the GIL is held (we hold `py`).
    unsafe { audit::raise(&denial.message("_posixsubprocess.fork_exec", policy, &[])) };
    Err(PyErr::fetch(py))
}

/// The absolute module name `_gcd_import(name, package, level)` imports.
fn absolute_name(name: &str, package: Option<&str>, level: usize) -> String {
    match (level, package) {
        (0, _) | (_, None) => name.to_owned(),
        (level, Some(package)) => {
            let parts: Vec<&str> = package.split('.').collect();
            let base = parts[..parts.len().saturating_sub(level - 1)].join(".");
            if name.is_empty() {
                base
            } else {
                format!("{base}.{name}")
            }
        }
    }
}

/// Replaces `importlib._bootstrap._gcd_import`, through which every Python-level import goes
/// (`importlib.import_module`, `importlib.__import__`): it raises no `import` audit event in 3.11
/// (only the interpreter's own import statement does). This one raises it, as the interpreter
/// would (for a module not loaded yet), then imports.
#[pyfunction]
#[pyo3(signature = (name, package = None, level = 0))]
fn gcd_import(
    py: Python<'_>,
    name: &Bound<'_, PyAny>,
    package: Option<&Bound<'_, PyAny>>,
    level: usize,
) -> PyResult<PyObject> {
    let Some(original) = GCD_IMPORT.get() else {
        return Err(PyRuntimeError::new_err("importlib is not wrapped"));
    };
    if let Ok(text) = name.extract::<String>() {
        let package: Option<String> = package.and_then(|p| p.extract().ok());
        let absolute = absolute_name(&text, package.as_deref(), level);
        let loaded = py
            .import("sys")?
            .getattr("modules")?
            .contains(absolute.as_str())?;
        if !loaded {
            let module = pyo3::types::PyString::new(py, &absolute);
            // SAFETY: GIL held; "(O)" takes one borrowed object, alive for the call.
            let denied = unsafe {
                python::PySys_Audit(c"import".as_ptr(), c"(O)".as_ptr(), module.as_ptr())
            } < 0;
            if denied {
                return Err(PyErr::fetch(py));
            }
        }
    }
    original.call1(py, (name, package, level))
}

/// importlib's own `_find_and_load`, which [`find_and_load`] replaces.
static FIND_AND_LOAD: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();

/// Replaces `importlib._bootstrap._find_and_load`, which loads every module not loaded yet (the
/// interpreter's import looks it up on `_frozen_importlib` at each import): loads, then guards
/// what a Python module defined (`pickle._Unpickler`, see `types.rs`) before anyone can use it.
#[pyfunction]
fn find_and_load(
    py: Python<'_>,
    name: &Bound<'_, PyAny>,
    import_: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let Some(original) = FIND_AND_LOAD.get() else {
        return Err(PyRuntimeError::new_err("importlib is not wrapped"));
    };
    let module = original.call1(py, (name, import_))?;
    if name.extract::<&str>().is_ok_and(|name| name == "pickle") {
        types::guard_python_unpickler(py)?;
    }
    Ok(module)
}

/// `_imp.create_builtin` and `_imp.create_dynamic` as the interpreter had them, which
/// [`create_builtin`] and [`create_dynamic`] replace.
static CREATE_BUILTIN: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
static CREATE_DYNAMIC: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();

/// Raises the `import` audit event for the module a spec names, then builds it with `original`:
/// building a built-in or extension module is importing it, also when a copy is loaded already
/// (`module_from_spec(find_spec("_posixsubprocess"))` has the original `fork_exec`).
fn create_module(
    py: Python<'_>,
    original: &std::sync::OnceLock<Py<PyAny>>,
    spec: &Bound<'_, PyAny>,
    file: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let Some(original) = original.get() else {
        return Err(PyRuntimeError::new_err("_imp is not wrapped"));
    };
    let name = spec.getattr("name")?;
    let name = pyo3::types::PyString::new(py, &name.str()?.to_string_lossy());
    // SAFETY: GIL held; "(O)" takes one borrowed object, alive for the call.
    let denied =
        unsafe { python::PySys_Audit(c"import".as_ptr(), c"(O)".as_ptr(), name.as_ptr()) } < 0;
    if denied {
        return Err(PyErr::fetch(py));
    }
    let module = match file {
        Some(file) => original.call1(py, (spec, file))?,
        None => original.call1(py, (spec,))?,
    };
    creators::patch_built(py, module.bind(py))?;
    Ok(module)
}

/// `_imp.exec_dynamic` and `_imp.exec_builtin` as the interpreter had them.
static EXEC_DYNAMIC: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
static EXEC_BUILTIN: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();

/// Runs a module's initialisation with `original`, then guards what it defined (a class such as
/// `_multiprocessing.SemLock` is added there, not when the module is built).
fn exec_module(
    py: Python<'_>,
    original: &std::sync::OnceLock<Py<PyAny>>,
    module: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let Some(original) = original.get() else {
        return Err(PyRuntimeError::new_err("_imp is not wrapped"));
    };
    let result = original.call1(py, (module,))?;
    creators::patch_built(py, module)?;
    Ok(result)
}

/// Replaces `_imp.exec_dynamic` (see [`exec_module`]).
#[pyfunction]
fn exec_dynamic(py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    exec_module(py, &EXEC_DYNAMIC, module)
}

/// Replaces `_imp.exec_builtin` (see [`exec_module`]).
#[pyfunction]
fn exec_builtin(py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    exec_module(py, &EXEC_BUILTIN, module)
}

/// Replaces `_imp.create_builtin` (see [`create_module`]).
#[pyfunction]
fn create_builtin(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    create_module(py, &CREATE_BUILTIN, spec, None)
}

/// Replaces `_imp.create_dynamic` (see [`create_module`]).
#[pyfunction]
#[pyo3(signature = (spec, file = None))]
fn create_dynamic(
    py: Python<'_>,
    spec: &Bound<'_, PyAny>,
    file: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    create_module(py, &CREATE_DYNAMIC, spec, file)
}

/// Installs the audit hook. `settings`: the policy's JSON; `trusted_roots`: the interpreter's import
/// path at start-up; `prefixes`: its prefixes; `bootstrap`: the bootstrap's file name; `watch`:
/// start the thread that ends the run when the hook is removed (a pooled jail's template, which
/// must stay single-threaded to fork, passes `False`: each run's process starts it after its
/// fork). Once per process.
#[pyfunction]
#[pyo3(signature = (settings, trusted_roots, prefixes, bootstrap, watch = true))]
fn install(
    py: Python<'_>,
    settings: &str,
    trusted_roots: Vec<String>,
    prefixes: Vec<String>,
    bootstrap: String,
    watch: bool,
) -> PyResult<()> {
    let version: (u8, u8) = py
        .import("sys")?
        .getattr("version_info")?
        .call_method1("__getitem__", (pyo3::types::PySlice::new(py, 0, 2, 1),))?
        .extract()?;
    if version != (3, 11) {
        return Err(PyRuntimeError::new_err(format!(
            "the runtime layer supports CPython 3.11 (it reads 3.11's opcodes and frames); this is {}.{}",
            version.0, version.1
        )));
    }
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Err(PyRuntimeError::new_err(
            "the audit hook is already installed",
        ));
    }
    let facts = InterpreterFacts {
        trusted_roots,
        prefixes,
        bootstrap,
    };
    let mut settings = Settings::new(settings, facts).map_err(PyRuntimeError::new_err)?;
    // Paths are judged by their real target: a root that is a link (`/etc/localtime`) or lies
    // below one is also a root as the kernel names it.
    settings.add_real_roots();
    let allow_processes = settings.policy.allow_processes;
    let policy_name = settings.policy.policy.clone();
    audit::SETTINGS
        .set(settings)
        .map_err(|_| PyRuntimeError::new_err("the audit hook is already configured"))?;

    // SAFETY: GIL held; the new type is kept (one reference, never released) for every denial.
    unsafe {
        let class = ffi::PyErr_NewExceptionWithDoc(
            c"warden.PolicyViolation".as_ptr(),
            c"Raised by warden's runtime layer when the policy denies an event.".as_ptr(),
            ffi::PyExc_PermissionError,
            std::ptr::null_mut(),
        );
        if class.is_null() {
            return Err(PyErr::fetch(py));
        }
        audit::VIOLATION.store(class, Ordering::Release);
    }

    // `_posixsubprocess.fork_exec` raises no audit event in 3.11: replace it, in the shared module
    // object (a reload keeps the stub: the module is built in) and in `subprocess` if loaded.
    if !allow_processes {
        let stub = wrap_pyfunction!(fork_exec_denied, py)?;
        py.import("_posixsubprocess")?.setattr("fork_exec", &stub)?;
        if let Ok(subprocess) = py.import("sys")?.getattr("modules")?.get_item("subprocess") {
            subprocess.setattr("_fork_exec", &stub)?;
        }
    }

    // Python-level imports raise no `import` event: route them through one that does.
    let bootstrap_module = py.import("_frozen_importlib")?;
    let original = bootstrap_module.getattr("_gcd_import")?.unbind();
    if GCD_IMPORT.set(original).is_ok() {
        bootstrap_module.setattr("_gcd_import", wrap_pyfunction!(gcd_import, py)?)?;
    }

    // A Python module is complete when `_find_and_load` returns it: `pickle._Unpickler` is guarded
    // there (`pickle` imports `_pickle` before it defines the class).
    let original = bootstrap_module.getattr("_find_and_load")?.unbind();
    if FIND_AND_LOAD.set(original).is_ok() {
        bootstrap_module.setattr("_find_and_load", wrap_pyfunction!(find_and_load, py)?)?;
    }

    // Built-in and extension modules are built by `_imp`, which raises no `import` event either.
    let imp = py.import("_imp")?;
    if CREATE_BUILTIN
        .set(imp.getattr("create_builtin")?.unbind())
        .is_ok()
    {
        imp.setattr("create_builtin", wrap_pyfunction!(create_builtin, py)?)?;
    }
    if CREATE_DYNAMIC
        .set(imp.getattr("create_dynamic")?.unbind())
        .is_ok()
    {
        imp.setattr("create_dynamic", wrap_pyfunction!(create_dynamic, py)?)?;
    }
    if EXEC_DYNAMIC
        .set(imp.getattr("exec_dynamic")?.unbind())
        .is_ok()
    {
        imp.setattr("exec_dynamic", wrap_pyfunction!(exec_dynamic, py)?)?;
    }
    if EXEC_BUILTIN
        .set(imp.getattr("exec_builtin")?.unbind())
        .is_ok()
    {
        imp.setattr("exec_builtin", wrap_pyfunction!(exec_builtin, py)?)?;
    }
    // Creators of files, FIFOs, devices, shared memory, semaphores and socket pairs that raise no
    // event, and `os.open`'s `dir_fd`: guarded where they are loaded now, and in every module the
    // import system builds from here on.
    creators::patch_loaded(py)?;

    // The hook, and where its entry is, for the thread that watches it is not removed.
    let (added, located) = watchdog::Watch::locate(audit::hook as *const std::ffi::c_void, || {
        // SAFETY: GIL held; `audit::hook` has the signature CPython expects and lives forever.
        unsafe { python::PySys_AddAuditHook(audit::hook, std::ptr::null_mut()) == 0 }
    });
    if !added {
        return Err(PyErr::fetch(py));
    }
    // Fail closed: a hook whose removal could not be seen is not installed as if it could.
    let Some(located) = located else {
        return Err(PyRuntimeError::new_err(
            "cannot find the audit hook's entry in the interpreter's state (_PyRuntime) to watch it",
        ));
    };
    located.keep();
    if watch && !watchdog::start(policy_name.clone()) {
        return Err(PyRuntimeError::new_err(
            "cannot start the thread that watches the audit hook",
        ));
    }
    // The warm pool's hidden modules come back only through an import the hook allowed
    // (`hidden.rs`); its finder holds nothing and is empty until a pooled jail's bootstrap hides.
    py.import("sys")?
        .getattr("meta_path")?
        .call_method1("insert", (0, hidden::HiddenModules::new()))?;
    // Not importable again by name: the bootstrap drops its own reference next.
    let _ = py
        .import("sys")?
        .getattr("modules")?
        .del_item("_warden_hook");
    Ok(())
}

/// Forbids executing files and creating processes from now on (seccomp, and Landlock where the kernel
/// has it). Returns the mechanisms installed, e.g. `("seccomp", "landlock")`.
#[pyfunction]
fn ban_exec() -> PyResult<Vec<&'static str>> {
    if EXEC_BANNED.swap(true, Ordering::SeqCst) {
        return Err(PyRuntimeError::new_err("the exec ban is already installed"));
    }
    let installed = kernel::ban_exec()
        .map_err(|err| PyRuntimeError::new_err(format!("cannot ban exec: {err}")))?;
    let mut names = vec!["seccomp"];
    if installed.landlock {
        names.push("landlock");
    }
    Ok(names)
}

#[pymodule]
#[pyo3(name = "_warden_hook")]
fn warden_hook_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(install, module)?)?;
    module.add_function(wrap_pyfunction!(ban_exec, module)?)?;
    module.add_function(wrap_pyfunction!(template::template_serve, module)?)?;
    Ok(())
}
