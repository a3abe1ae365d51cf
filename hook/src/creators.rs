//! Functions that create files, FIFOs, devices, shared memory or sockets and raise no audit event
//! in 3.11 (`os.mkfifo`, `os.mknod`, `_posixshmem.shm_open`, `_socket.socketpair`), and `os.open`,
//! whose `open` event leaves out `dir_fd`: each is replaced, in its module and wherever the module
//! lists it (`os.supports_dir_fd`…), by a [`Guarded`] callable that raises an event the hook judges
//! (a write of the path it creates; a socket), then calls the original. `os.open(…, dir_fd=N)`
//! tells the hook the descriptor its `open` event is relative to. Types that reach a sink
//! (`_multiprocessing.SemLock`, the unpicklers) are guarded in the type itself (`types.rs`), since
//! `object.__subclasses__()` reaches a type whatever its module holds.
//!
//! The modules are patched when `install` runs (`posix`, and any already loaded) and whenever the
//! import system builds one (`_imp.create_dynamic`, `exec_dynamic`, `create_builtin`): a fresh copy
//! of a module is patched too.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::python::PySys_Audit;

/// What a guarded function creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `os.open(path, flags, mode, *, dir_fd)`: its own `open` event, told the descriptor.
    Open,
    /// `os.mkfifo(path, mode, *, dir_fd)`.
    Mkfifo,
    /// `os.mknod(path, mode, device, *, dir_fd)`.
    Mknod,
    /// `_posixshmem.shm_open(path, flags, mode)`: a file under `/dev/shm`.
    ShmOpen,
    /// `_socket.socketpair(…)`: a pair of connected sockets.
    Socketpair,
}

/// The functions guarded, by module and attribute.
const GUARDED: [(&str, &str, Kind); 8] = [
    ("posix", "open", Kind::Open),
    ("posix", "mkfifo", Kind::Mkfifo),
    ("posix", "mknod", Kind::Mknod),
    ("os", "open", Kind::Open),
    ("os", "mkfifo", Kind::Mkfifo),
    ("os", "mknod", Kind::Mknod),
    ("_posixshmem", "shm_open", Kind::ShmOpen),
    ("_socket", "socketpair", Kind::Socketpair),
];

thread_local! {
    /// The descriptor the next `open` event's path is relative to: (the path object's address,
    /// `dir_fd`), set by a guarded `os.open` for the call's duration.
    pub static OPEN_AT: Cell<Option<(usize, i64)>> = const { Cell::new(None) };
}

/// A guarded function: raises its event, then calls the original (which the program cannot reach
/// through it: no attribute leads there).
#[pyclass(name = "guarded", module = "warden", frozen)]
pub struct Guarded {
    original: Py<PyAny>,
    kind: Kind,
}

/// Argument `index` or keyword `name` of a call.
fn argument<'py>(
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
    index: usize,
    name: &str,
) -> Option<Bound<'py, PyAny>> {
    if let Ok(value) = args.get_item(index) {
        return Some(value);
    }
    kwargs.and_then(|kwargs| kwargs.get_item(name).ok().flatten())
}

/// Raises `event` with `args` through the audit hooks; `Err` when one refused.
fn audit(py: Python<'_>, event: &std::ffi::CStr, args: &Bound<'_, PyTuple>) -> PyResult<()> {
    // SAFETY: GIL held (we hold `py`); "O" takes one borrowed tuple, alive for the call (the
    // event's arguments are the tuple's items).
    let refused = unsafe { PySys_Audit(event.as_ptr(), c"O".as_ptr(), args.as_ptr()) } < 0;
    if refused {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

/// `dir_fd` as an int (`-1`: none given).
fn dir_fd(value: Option<Bound<'_, PyAny>>) -> PyResult<i64> {
    match value {
        None => Ok(-1),
        Some(value) if value.is_none() => Ok(-1),
        Some(value) => value.extract(),
    }
}

#[pymethods]
impl Guarded {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let none = || py.None().into_bound(py);
        match self.kind {
            Kind::Open => {
                let fd = dir_fd(kwargs.and_then(|k| k.get_item("dir_fd").ok().flatten()))?;
                let path = argument(args, kwargs, 0, "path");
                if let (Some(path), true) = (path, fd >= 0) {
                    OPEN_AT.with(|at| at.set(Some((path.as_ptr() as usize, fd))));
                    let result = self.original.call(py, args, kwargs);
                    OPEN_AT.with(|at| at.set(None));
                    return result;
                }
            }
            Kind::Mkfifo => {
                let path = argument(args, kwargs, 0, "path").unwrap_or_else(none);
                let fd = dir_fd(kwargs.and_then(|k| k.get_item("dir_fd").ok().flatten()))?;
                audit(
                    py,
                    c"os.mkfifo",
                    &PyTuple::new(py, [path, fd.into_pyobject(py)?.into_any()])?,
                )?;
            }
            Kind::Mknod => {
                // (path, dir_fd, mode): the mode says whether it makes a device.
                let path = argument(args, kwargs, 0, "path").unwrap_or_else(none);
                let fd = dir_fd(kwargs.and_then(|k| k.get_item("dir_fd").ok().flatten()))?;
                let mode = argument(args, kwargs, 1, "mode").unwrap_or_else(none);
                audit(
                    py,
                    c"os.mknod",
                    &PyTuple::new(py, [path, fd.into_pyobject(py)?.into_any(), mode])?,
                )?;
            }
            Kind::ShmOpen => {
                let path = argument(args, kwargs, 0, "path").unwrap_or_else(none);
                let flags = argument(args, kwargs, 1, "flags").unwrap_or_else(none);
                audit(
                    py,
                    c"_posixshmem.shm_open",
                    &PyTuple::new(py, [path, flags])?,
                )?;
            }
            Kind::Socketpair => {
                audit(py, c"socket.socketpair", &PyTuple::empty(py))?;
            }
        }
        self.original.call(py, args, kwargs)
    }
}

/// Replaces the guarded functions of `module` (named `name`), and the originals in the sets `os`
/// lists them in. Idempotent: a guarded function is left as it is.
pub fn patch(py: Python<'_>, name: &str, module: &Bound<'_, PyAny>) -> PyResult<()> {
    let guarded = py.get_type::<Guarded>();
    let entries: Vec<(&str, Kind)> = GUARDED
        .iter()
        .filter(|(owner, _, _)| *owner == name)
        .map(|(_, attribute, kind)| (*attribute, *kind))
        .collect();
    match name {
        "_multiprocessing" => crate::types::guard_semlock(py, module)?,
        // `pickle._Unpickler` is guarded when `pickle` is loaded (`find_and_load` in lib.rs).
        "_pickle" => crate::types::guard_c_unpickler(py, module)?,
        _ => {}
    }
    let posix = py.import("sys")?.getattr("modules")?.get_item("posix").ok();
    for (attribute, kind) in entries {
        let Ok(original) = module.getattr(attribute) else {
            continue;
        };
        if original.is_instance(guarded.as_any())? {
            continue;
        }
        // `os.open` is `posix.open`: one guard for both, so `os.supports_dir_fd` holds it.
        if name == "os" {
            if let Some(guard) = posix
                .as_ref()
                .and_then(|posix| posix.getattr(attribute).ok())
            {
                if let Ok(guard) = guard.downcast::<Guarded>() {
                    if guard.get().original.bind(py).is(&original) {
                        module.setattr(attribute, guard)?;
                        continue;
                    }
                }
            }
        }
        let wrapper = Bound::new(
            py,
            Guarded {
                original: original.clone().unbind(),
                kind,
            },
        )?;
        module.setattr(attribute, &wrapper)?;
        if name == "os" || name == "posix" {
            replace_in_sets(py, &original, wrapper.as_any())?;
        }
    }
    Ok(())
}

/// `os.supports_dir_fd` and its kind hold the functions themselves: the originals go, the guards
/// take their place (so `shutil` still sees `os.open` there).
fn replace_in_sets(
    py: Python<'_>,
    original: &Bound<'_, PyAny>,
    wrapper: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let Ok(os) = py.import("sys")?.getattr("modules")?.get_item("os") else {
        return Ok(());
    };
    for set in [
        "supports_dir_fd",
        "supports_fd",
        "supports_follow_symlinks",
        "supports_effective_ids",
    ] {
        let Ok(set) = os.getattr(set) else { continue };
        if set.is_instance_of::<pyo3::types::PySet>() && set.contains(original)? {
            set.call_method1("discard", (original,))?;
            set.call_method1("add", (wrapper,))?;
        }
    }
    Ok(())
}

/// Patches every module of [`GUARDED`] loaded now, and the types of `types.rs` (`install`).
pub fn patch_loaded(py: Python<'_>) -> PyResult<()> {
    let modules = py.import("sys")?.getattr("modules")?;
    for name in [
        "posix",
        "os",
        "_posixshmem",
        "_socket",
        "_multiprocessing",
        "_pickle",
    ] {
        if let Ok(module) = modules.get_item(name) {
            patch(py, name, &module)?;
        }
    }
    crate::types::guard_python_unpickler(py)
}

/// Patches a module the import system just built or executed, when it is one of [`GUARDED`]'s.
pub fn patch_built(py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<()> {
    let Ok(name) = module.getattr("__name__") else {
        return Ok(());
    };
    let Ok(name) = name.extract::<String>() else {
        return Ok(());
    };
    if matches!(
        name.as_str(),
        "posix" | "_posixshmem" | "_socket" | "_multiprocessing" | "_pickle"
    ) {
        patch(py, &name, module)?;
    }
    Ok(())
}
