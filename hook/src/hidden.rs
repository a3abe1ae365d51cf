//! The warm pool's hidden modules, held out of Python's reach.
//!
//! A pooled interpreter imported the policy's preload (pandas, numpy, matplotlib) before any program
//! existed; a module already in `sys.modules` raises no `import` audit event, so before the program
//! starts, the bootstrap (`_preload` in `jail/src/bootstrap.py`) has every module a cold program would
//! not find there taken out of `sys.modules` and kept here, in a Rust static that no Python object
//! refers to. A module comes back only through an import the interpreter raised the `import` event
//! for and the audit hook allowed: the event is judged as on a cold run that has to load the module.
//!
//! How: [`HiddenModules`], a finder and loader with no state of its own, sits first on
//! `sys.meta_path` (put there by `install`). When the hook allows an `import` event for a hidden name
//! it records a grant ([`grant`]); the loader's `create_module` hands the module out against that
//! grant, or — called any other way (`find_spec` and `create_module` called by the program) — raises
//! the `import` event itself first, so the call is judged as the import it is. `exec_module` only
//! acts on the module object `create_module` just handed out: it gives the module its own spec back
//! and brings back what a cold import of it would have loaded (the preload group's modules and the
//! hidden modules the revealed ones bind by name, transitively).
//!
//! Attributes of the modules left in `sys.modules` that bind a hidden module (`mpl_toolkits.mplot3d`,
//! `collections.abc`, set when the preload imported those submodules) are taken out too, and put back
//! when that module comes back; a cold interpreter has neither the module nor the attribute.
//!
//! Does not own: what is hidden (the bootstrap decides: everything a cold program would not find),
//! nor the judgement (the audit hook, `audit.rs`). Every function needs the GIL.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::{PyImportError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyDict, PyString};

/// One hidden module: the object, its own `__spec__` (the import machinery replaces it with the
/// finder's while loading), and whether it is a package.
struct Entry {
    module: Py<PyAny>,
    spec: Py<PyAny>,
    package: bool,
}

/// An attribute of a module left in `sys.modules`: the module, the attribute's name.
type Binding = (Py<PyAny>, Py<PyString>);

#[derive(Default)]
struct Store {
    /// Name → the hidden module.
    modules: HashMap<String, Entry>,
    /// A hidden module's address → its name (identity, for the bindings of revealed modules).
    names: HashMap<usize, String>,
    /// Hidden names whose `import` event the hook allowed, not handed out yet.
    granted: HashSet<String>,
    /// Each preloaded name and what its own import loaded (brought back with it).
    groups: Vec<(String, Vec<String>)>,
    /// Hidden name → the attributes of modules left in `sys.modules` that bound it.
    bindings: HashMap<String, Vec<Binding>>,
    /// A module left in `sys.modules` (address) → the hidden names taken out of its namespace.
    stripped: HashMap<usize, Vec<String>>,
    /// A hidden module (address) → the addresses of the modules its namespace bound when it was
    /// hidden. Nothing runs a hidden module's code until it comes back, so this is what its
    /// namespace binds then, and what comes back with it is found without walking the namespace
    /// in every run (touching each value's type there cost a pandas run ~2 ms of cache misses).
    /// Each address is of a module the namespace holds a reference to: alive, never reused.
    refs: HashMap<usize, Vec<usize>>,
    /// Handed out by `create_module`, waiting for `exec_module`: name, module, its own spec.
    pending: Vec<(String, Py<PyAny>, Py<PyAny>)>,
    /// `importlib.machinery.ModuleSpec`.
    module_spec: Option<Py<PyAny>>,
}

/// Set once the store holds something (the hook's grants skip the store until then).
static FILLED: AtomicBool = AtomicBool::new(false);

static STORE: GILProtected<RefCell<Option<Store>>> = GILProtected::new(RefCell::new(None));

/// Runs `f` on the store. Never calls into Python while the store is borrowed (no Python object is
/// released inside `f`): a re-entrant call (a finaliser importing) gets an error, never a panic.
fn with_store<R>(py: Python<'_>, f: impl FnOnce(&mut Store) -> R) -> PyResult<R> {
    let cell = STORE.get(py);
    let mut guard = cell
        .try_borrow_mut()
        .map_err(|_| PyRuntimeError::new_err("warden's hidden modules are busy"))?;
    Ok(f(guard.get_or_insert_with(Store::default)))
}

/// Records that the hook allowed the `import` event for `args[0]` (a hidden module's name).
///
/// # Safety
/// GIL held; `args` the event's argument tuple.
pub unsafe fn grant(args: *mut ffi::PyObject) {
    if !FILLED.load(Ordering::Acquire) {
        return;
    }
    // SAFETY: GIL held (caller); the argument is read through the checked helpers.
    let Some(name) = (unsafe { crate::python::text_of(crate::python::arg(args, 0)) }) else {
        return;
    };
    // SAFETY: audit hooks are called with the GIL held (caller).
    let py = unsafe { Python::assume_gil_acquired() };
    let _ = with_store(py, |store| {
        if store.modules.contains_key(&name) {
            store.granted.insert(name);
        }
    });
}

/// Whether `object` is a module (or a module subclass's instance).
fn is_module(object: &Bound<'_, PyAny>) -> bool {
    // SAFETY: GIL held (we hold a bound reference); a type check on a valid object.
    unsafe { ffi::PyModule_Check(object.as_ptr()) != 0 }
}

/// The `__dict__` of `object` when it is a module (read without running its `__getattr__`).
fn namespace<'py>(object: &Bound<'py, PyAny>) -> Option<Bound<'py, PyDict>> {
    if !is_module(object) {
        return None;
    }
    // SAFETY: GIL held; `object` is a module, whose dict is returned borrowed (never null for a
    // module), and `from_borrowed_ptr_or_opt` takes a new reference.
    let own = unsafe {
        Bound::from_borrowed_ptr_or_opt(object.py(), ffi::PyModule_GetDict(object.as_ptr()))
    }?;
    own.downcast_into::<PyDict>().ok()
}

/// Calls `each(key, value)` for every entry of `dict` whose value is a module, with borrowed
/// references: no reference count of any value is touched. In a jail forked from a template, a
/// write to an object's count copies the page that holds it; a scan of every module's namespace
/// with new references would copy most of the preloaded data stack in every run.
fn each_module_entry<'py>(
    dict: &Bound<'py, PyDict>,
    mut each: impl FnMut(*mut ffi::PyObject, *mut ffi::PyObject),
) {
    let mut position: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: GIL held (we hold a bound reference to `dict`); PyDict_Next yields borrowed
    // references valid while the dict is not changed, and `each` changes nothing (callers collect,
    // then change the dicts after the walk).
    while unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut position, &mut key, &mut value) } != 0 {
        // SAFETY: `value` is a valid object (borrowed above); the check reads its type only.
        if unsafe { ffi::PyModule_Check(value) } != 0 {
            each(key, value);
        }
    }
}

/// The addresses of the modules `dict` binds (a namespace), read as [`each_module_entry`] reads.
fn module_addresses(dict: &Bound<'_, PyDict>) -> Vec<usize> {
    let mut addresses = Vec::new();
    each_module_entry(dict, |_, value| addresses.push(value as usize));
    addresses
}

/// The finder and loader of the hidden modules: first on `sys.meta_path`. It holds nothing; the
/// modules are in a Rust static.
#[pyclass(name = "HiddenModules", module = "warden", frozen)]
pub struct HiddenModules {}

impl HiddenModules {
    pub fn new() -> Self {
        Self {}
    }
}

#[pymethods]
impl HiddenModules {
    /// A spec whose loader is this object, for a hidden module; `None` for anything else. Gives no
    /// module: `create_module` decides.
    #[pyo3(signature = (name, path = None, target = None))]
    fn find_spec(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        path: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let _ = (path, target);
        let py = slf.py();
        let Ok(name) = name.extract::<String>() else {
            return Ok(py.None());
        };
        let found = with_store(py, |store| {
            let package = store.modules.get(&name).map(|entry| entry.package)?;
            Some((package, store.module_spec.as_ref()?.clone_ref(py)))
        })?;
        let Some((package, module_spec)) = found else {
            return Ok(py.None());
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("is_package", package)?;
        Ok(module_spec
            .bind(py)
            .call((name, slf), Some(&kwargs))?
            .unbind())
    }

    /// The hidden module `spec` names, once the interpreter raised its `import` event and the hook
    /// allowed it; called without that (by the program), it raises the event itself first.
    fn create_module(slf: &Bound<'_, Self>, spec: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        let name: String = spec
            .getattr("name")?
            .extract()
            .map_err(|_| PyTypeError::new_err("the spec's name must be a str"))?;
        let (held, granted) = with_store(py, |store| {
            (
                store.modules.contains_key(&name),
                store.granted.contains(&name),
            )
        })?;
        if !held {
            return Err(PyImportError::new_err(format!(
                "warden's pool holds no hidden module {name:?}"
            )));
        }
        if !granted {
            let text = PyString::new(py, &name);
            // SAFETY: GIL held; "(O)" takes one borrowed object, alive for the call.
            let denied = unsafe {
                crate::python::PySys_Audit(c"import".as_ptr(), c"(O)".as_ptr(), text.as_ptr())
            } < 0;
            if denied {
                return Err(PyErr::fetch(py));
            }
        }
        let entry = with_store(py, |store| {
            store.granted.remove(&name);
            let entry = store.modules.remove(&name)?;
            store.names.remove(&(entry.module.as_ptr() as usize));
            let module = entry.module.clone_ref(py);
            store.pending.push((name.clone(), entry.module, entry.spec));
            Some(module)
        })?;
        entry.ok_or_else(|| PyImportError::new_err(format!("{name:?} was imported meanwhile")))
    }

    /// Finishes the import of a module `create_module` handed out: its own spec back, and what a
    /// cold import of it would have loaded brought back. Any other module: an error.
    fn exec_module(slf: &Bound<'_, Self>, module: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let address = module.as_ptr() as usize;
        let found = with_store(py, |store| {
            let index = store
                .pending
                .iter()
                .position(|(_, held, _)| held.as_ptr() as usize == address)?;
            Some(store.pending.remove(index))
        })?;
        let Some((name, _module, spec)) = found else {
            return Err(PyImportError::new_err(
                "not a module warden's pool handed out",
            ));
        };
        module.setattr("__spec__", spec)?;
        reveal(py, &name, module)
    }

    /// Takes every module not in `keep` (a set of names) out of `sys.modules` into the store, and
    /// out of the namespaces of the modules left there; `groups`: each preloaded name with what its
    /// import loaded. Additive: a later call (with a smaller `keep`) adds to what is hidden, so a
    /// pooled jail hides the preloaded modules while it waits and the driver's own when it runs.
    fn hide(
        slf: &Bound<'_, Self>,
        keep: &Bound<'_, PyAny>,
        groups: Vec<(String, Vec<String>)>,
    ) -> PyResult<()> {
        let py = slf.py();
        // Only warden's bootstrap hides (a program could only hide more, but has no reason to).
        if let Some(settings) = crate::audit::SETTINGS.get() {
            // SAFETY: GIL held (we hold `py`); the frame walk reads the running frames only.
            let caller = unsafe { crate::python::asker(settings, &[]) };
            if *caller.filename != *settings.interpreter.bootstrap {
                return Err(PyRuntimeError::new_err(
                    "only warden's bootstrap hides the preloaded modules",
                ));
            }
        }
        let module_spec = py.import("_frozen_importlib")?.getattr("ModuleSpec")?;
        let modules = sys_modules(py)?;
        // What an earlier call hid stays hidden (the store the finder made before is empty).
        let earlier = STORE
            .get(py)
            .try_borrow_mut()
            .map(|mut cell| cell.take())
            .map_err(|_| PyRuntimeError::new_err("warden's hidden modules are busy"))?;
        let mut store = earlier.unwrap_or_default();
        if store.groups.is_empty() {
            store.groups = groups;
        }
        if store.module_spec.is_none() {
            store.module_spec = Some(module_spec.unbind());
        }
        // Put back even when the walk fails part-way: nothing hidden is ever lost.
        let filled = fill(py, &mut store, keep, &modules);
        let previous = STORE
            .get(py)
            .try_borrow_mut()
            .map(|mut cell| cell.replace(store));
        match previous {
            Ok(previous) => drop(previous),
            Err(_) => return Err(PyRuntimeError::new_err("warden's hidden modules are busy")),
        }
        FILLED.store(true, Ordering::Release);
        filled
    }

    fn __repr__(&self) -> &'static str {
        "<warden's hidden modules>"
    }
}

/// Moves every module of `modules` (`sys.modules`) not in `keep` into `store`, and takes the
/// bindings of what it hid out of the namespaces of the modules left there.
fn fill(
    py: Python<'_>,
    store: &mut Store,
    keep: &Bound<'_, PyAny>,
    modules: &Bound<'_, PyDict>,
) -> PyResult<()> {
    for (name, module) in modules.items().extract::<Vec<(PyObject, PyObject)>>()? {
        let (name, module) = (name.bind(py), module.bind(py));
        let Ok(text) = name.extract::<String>() else {
            continue;
        };
        if module.is_none() || keep.contains(name)? {
            continue;
        }
        let own = namespace(module);
        let spec = own
            .as_ref()
            .and_then(|d| d.get_item(pyo3::intern!(py, "__spec__")).ok().flatten())
            .map_or_else(|| py.None(), Bound::unbind);
        let package = own
            .as_ref()
            .is_some_and(|d| d.contains(pyo3::intern!(py, "__path__")).unwrap_or(false));
        let refs = own.as_ref().map(module_addresses).unwrap_or_default();
        store.refs.insert(module.as_ptr() as usize, refs);
        modules.del_item(name)?;
        store.names.insert(module.as_ptr() as usize, text.clone());
        store.modules.insert(
            text,
            Entry {
                module: module.clone().unbind(),
                spec,
                package,
            },
        );
    }
    // What stays in sys.modules must not bind what is hidden.
    let mut kept = Vec::new();
    each_module_entry(modules, |_, module| kept.push(module));
    for module in kept {
        // SAFETY: GIL held; `module` is a value of sys.modules, which nothing changed since
        // the walk; a new reference is taken for the modules kept (few pages).
        let module = unsafe { Bound::from_borrowed_ptr(py, module) };
        let Some(own) = namespace(&module) else {
            continue;
        };
        let mut found = Vec::new();
        each_module_entry(&own, |key, value| {
            if let Some(hidden) = store.names.get(&(value as usize)) {
                // SAFETY: GIL held; `key` is borrowed from the dict, unchanged so far.
                let key = unsafe { Bound::from_borrowed_ptr(py, key) };
                if let Ok(key) = key.downcast_into::<PyString>() {
                    found.push((key, hidden.clone()));
                }
            }
        });
        for (key, hidden) in found {
            own.del_item(&key)?;
            store
                .bindings
                .entry(hidden.clone())
                .or_default()
                .push((module.clone().unbind(), key.unbind()));
            store
                .stripped
                .entry(module.as_ptr() as usize)
                .or_default()
                .push(hidden);
        }
    }
    Ok(())
}

fn sys_modules(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    Ok(py
        .import("sys")?
        .getattr("modules")?
        .downcast_into::<PyDict>()?)
}

/// Brings back what a cold import of `name` (whose module is `module`, being imported) would have
/// loaded: its preload group's modules when it is a preloaded name or below one, and every hidden
/// module the revealed ones bind by name (directly, or through a module left in `sys.modules` whose
/// bindings were taken out), transitively.
fn reveal(py: Python<'_>, name: &str, module: &Bound<'_, PyAny>) -> PyResult<()> {
    let modules = sys_modules(py)?;
    let mut names: Vec<String> = with_store(py, |store| {
        let mut names: Vec<String> = store
            .groups
            .iter()
            .filter(|(preloaded, _)| {
                name == preloaded || name.starts_with(&format!("{preloaded}."))
            })
            .flat_map(|(_, group)| group.iter().cloned())
            .collect();
        // Its own bindings in the modules left in sys.modules.
        names.push(name.to_owned());
        names
    })?;
    let mut scanned: Vec<Py<PyAny>> = vec![module.clone().unbind()];
    let mut restored_own = false;
    loop {
        while let Some(current) = scanned.pop() {
            let current = current.bind(py);
            let known = with_store(py, |store| store.refs.remove(&(current.as_ptr() as usize)))?;
            let addresses = match known {
                Some(addresses) => addresses,
                None => match namespace(current) {
                    Some(own) => module_addresses(&own),
                    None => continue,
                },
            };
            let found = with_store(py, |store| {
                let mut found = Vec::new();
                for address in addresses {
                    if let Some(hidden) = store.names.get(&address) {
                        found.push(hidden.clone());
                    }
                    if let Some(stripped) = store.stripped.remove(&address) {
                        found.extend(stripped);
                    }
                }
                found
            })?;
            names.extend(found);
        }
        let Some(next) = names.pop() else {
            return Ok(());
        };
        // The module being imported is in the import machinery's hands: only its bindings.
        let own = next == name && !restored_own;
        if own {
            restored_own = true;
        }
        if !own && modules.contains(&next)? {
            // Imported meanwhile by another way (a copy loaded from its file): left as it is.
            continue;
        }
        let taken = with_store(py, |store| {
            let bindings = store.bindings.remove(&next).unwrap_or_default();
            if own {
                return Some((None, bindings));
            }
            let entry = store.modules.remove(&next)?;
            store.names.remove(&(entry.module.as_ptr() as usize));
            store.granted.remove(&next);
            Some((Some((entry.module, entry.spec)), bindings))
        })?;
        let Some((revealed, bindings)) = taken else {
            continue;
        };
        let target = match revealed {
            Some((revealed, _spec)) => {
                modules.set_item(&next, revealed.bind(py))?;
                scanned.push(revealed.clone_ref(py));
                revealed
            }
            None => module.clone().unbind(),
        };
        for (holder, key) in bindings {
            holder.bind(py).setattr(key.bind(py), target.bind(py))?;
        }
    }
}
