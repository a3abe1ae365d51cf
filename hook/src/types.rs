//! Types that reach a sink with no audit event, whatever path reached the type: a guard on a module
//! attribute (`creators.rs`) does not hold there, since `object.__subclasses__()` and subclasses
//! reach the type itself. Each is patched at the native level, where every path to it goes.
//!
//! - `_multiprocessing.SemLock` creates a named semaphore (`/dev/shm/sem.NAME`) when an instance
//!   is made. Its `tp_new` slot (read at call time by `type.__call__` and by `SemLock.__new__`, the
//!   `tp_new_wrapper` in its dict) becomes [`semlock_new`], which raises `_multiprocessing.SemLock`
//!   (judged as a write of that file) and then calls the original; subclasses that copied the
//!   original slot are patched too, and later ones inherit the wrapper. `SemLock._rebuild` (which
//!   opens a semaphore that exists, for `multiprocessing`'s pickling) makes no new one and is left
//!   alone.
//! - `_pickle.Unpickler.load` (the C unpickler) and `pickle._Unpickler.load` (the pure-Python one)
//!   resolve every global through `self.find_class`. Only the base `find_class` raises
//!   `pickle.find_class`: a subclass (or an instance) with its own resolves references with no
//!   event. `load` is guarded: when the unpickler's `find_class` is not the base's at `load` (its
//!   class or an ancestor defines one, the instance holds one, or its class looks attributes up its
//!   own way), `load` first raises `pickle.Unpickler.find_class` (the resolver's name), which the
//!   hook judges as unpickling references (DES804 when the policy denies pickle). For the C type
//!   the method descriptor's `PyMethodDef` is swapped for one whose function is [`unpickler_load`]
//!   (the descriptor, and the interpreter's specialised call of it, read it at call time); the
//!   pure-Python class gets a [`GuardedLoad`] in its dict.
//!
//! What stays: a `find_class` swapped in while `load` runs (from the program's `read` or
//! `persistent_load`) is not seen; the pure-Python unpickler is Python code the program could copy
//! (what such a copy resolves runs at the sinks). The layout of 3.11's `PyTypeObject` and
//! `PyMethodDescrObject` is checked against the interpreter's own accessors before any write: a
//! mismatch fails the import.

use std::ffi::{c_char, c_ulong, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::python::{arg, text_of, PySys_Audit};

// CPython 3.11 API outside the limited API (the hook refuses other minor versions).
extern "C" {
    fn _PyType_Lookup(
        type_: *mut ffi::PyTypeObject,
        name: *mut ffi::PyObject,
    ) -> *mut ffi::PyObject;
    fn PyMethod_New(function: *mut ffi::PyObject, self_: *mut ffi::PyObject) -> *mut ffi::PyObject;
    static mut PyMethodDescr_Type: ffi::PyTypeObject;
}

/// 3.11's `PyTypeObject`, up to `tp_new` (`Include/cpython/object.h`). Checked against
/// `PyType_GetSlot` and `PyType_GetFlags` before a slot is written ([`checked_layout`]).
#[repr(C)]
struct TypeLayout {
    ob_refcnt: isize,
    ob_type: *mut c_void,
    ob_size: isize,
    tp_name: *const c_char,
    tp_basicsize: isize,
    tp_itemsize: isize,
    tp_dealloc: *mut c_void,
    tp_vectorcall_offset: isize,
    tp_getattr: *mut c_void,
    tp_setattr: *mut c_void,
    tp_as_async: *mut c_void,
    tp_repr: *mut c_void,
    tp_as_number: *mut c_void,
    tp_as_sequence: *mut c_void,
    tp_as_mapping: *mut c_void,
    tp_hash: *mut c_void,
    tp_call: *mut c_void,
    tp_str: *mut c_void,
    tp_getattro: *mut c_void,
    tp_setattro: *mut c_void,
    tp_as_buffer: *mut c_void,
    tp_flags: c_ulong,
    tp_doc: *const c_char,
    tp_traverse: *mut c_void,
    tp_clear: *mut c_void,
    tp_richcompare: *mut c_void,
    tp_weaklistoffset: isize,
    tp_iter: *mut c_void,
    tp_iternext: *mut c_void,
    tp_methods: *mut c_void,
    tp_members: *mut c_void,
    tp_getset: *mut c_void,
    tp_base: *mut c_void,
    tp_dict: *mut c_void,
    tp_descr_get: *mut c_void,
    tp_descr_set: *mut c_void,
    tp_dictoffset: isize,
    tp_init: *mut c_void,
    tp_alloc: *mut c_void,
    tp_new: *mut c_void,
}

/// 3.11's `PyMethodDescrObject` (`Include/descrobject.h`).
#[repr(C)]
struct MethodDescrLayout {
    ob_refcnt: isize,
    ob_type: *mut ffi::PyTypeObject,
    d_type: *mut ffi::PyTypeObject,
    d_name: *mut ffi::PyObject,
    d_qualname: *mut ffi::PyObject,
    d_method: *mut ffi::PyMethodDef,
    vectorcall: *mut c_void,
}

/// `type_`'s struct, when this layout reads the same slots and flags as the interpreter's own
/// accessors.
///
/// # Safety
/// GIL held; `type_` a valid type object.
unsafe fn checked_layout(type_: *mut ffi::PyTypeObject) -> PyResult<*mut TypeLayout> {
    let layout = type_.cast::<TypeLayout>();
    // SAFETY: `type_` is a live type object (caller), at least as large as `TypeLayout` if it is
    // 3.11's `PyTypeObject` (the hook installs only on 3.11); the fields read are compared with the
    // interpreter's accessors before anything is written.
    let same = unsafe {
        (*layout).tp_new == ffi::PyType_GetSlot(type_, ffi::Py_tp_new)
            && (*layout).tp_getattro == ffi::PyType_GetSlot(type_, ffi::Py_tp_getattro)
            && (*layout).tp_alloc == ffi::PyType_GetSlot(type_, ffi::Py_tp_alloc)
            && (*layout).tp_init == ffi::PyType_GetSlot(type_, ffi::Py_tp_init)
            && (*layout).tp_flags == ffi::PyType_GetFlags(type_)
    };
    if !same {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "warden: this interpreter's type objects do not have CPython 3.11's layout",
        ));
    }
    Ok(layout)
}

/// Raises `event` with one argument; `false` when a hook refused (the error is set).
///
/// # Safety
/// GIL held; `argument` a valid reference.
unsafe fn audit1(event: &std::ffi::CStr, argument: *mut ffi::PyObject) -> bool {
    // SAFETY: GIL held; "(O)" takes one borrowed object, kept alive across the call by the
    // reference taken here (a hook may run code that drops the caller's).
    unsafe {
        ffi::Py_INCREF(argument);
        let refused = PySys_Audit(event.as_ptr(), c"(O)".as_ptr(), argument) < 0;
        ffi::Py_DECREF(argument);
        !refused
    }
}

// ---------------------------------------------------------------------------------------------
// _multiprocessing.SemLock

/// `SemLock`'s own `tp_new` (0 until patched).
static SEMLOCK_NEW: AtomicUsize = AtomicUsize::new(0);

/// `SemLock`'s `tp_new` from now on: raises `_multiprocessing.SemLock` with the semaphore's name
/// (argument 3 or `name=`), then creates it with the original.
///
/// # Safety
/// Called by CPython as a `tp_new` slot: GIL held, `args` a tuple, `kwds` null or a dict.
unsafe extern "C" fn semlock_new(
    subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let original = SEMLOCK_NEW.load(Ordering::Acquire);
    // SAFETY: GIL held (CPython calls slots with it); `arg` checks the tuple and its size; the
    // dict item is borrowed and `audit1` holds its own reference across the hook; `original` was
    // read from this type's `tp_new` slot, which has `newfunc`'s signature.
    unsafe {
        if original == 0 {
            ffi::PyErr_SetString(
                ffi::PyExc_RuntimeError,
                c"warden: SemLock's constructor is not known".as_ptr(),
            );
            return std::ptr::null_mut();
        }
        let mut name = arg(args, 3);
        if name.is_null() && !kwds.is_null() && ffi::PyDict_Check(kwds) != 0 {
            name = ffi::PyDict_GetItemString(kwds, c"name".as_ptr());
        }
        if name.is_null() {
            name = ffi::Py_None();
        }
        if !audit1(c"_multiprocessing.SemLock", name) {
            return std::ptr::null_mut();
        }
        let original: ffi::newfunc = std::mem::transmute::<usize, ffi::newfunc>(original);
        original(subtype, args, kwds)
    }
}

/// Makes `_multiprocessing.SemLock` (the class `module` holds) raise its event on every instance
/// made: its `tp_new`, and that of every subclass which copied it. Idempotent.
pub fn guard_semlock(py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<()> {
    let Ok(class) = module.getattr("SemLock") else {
        return Ok(());
    };
    let class = class.downcast_into::<PyType>()?;
    let type_ = class.as_type_ptr();
    // SAFETY: GIL held (we hold `py`); `checked_layout` verified the struct before any access.
    let original = unsafe {
        let layout = checked_layout(type_)?;
        let current = (*layout).tp_new as usize;
        let wrapper = semlock_new as *const () as usize;
        if current != wrapper {
            match SEMLOCK_NEW.compare_exchange(0, current, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {}
                Err(known) if known == current => {}
                Err(_) => {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "warden: a second _multiprocessing.SemLock type",
                    ))
                }
            }
            (*layout).tp_new = wrapper as *mut c_void;
        }
        SEMLOCK_NEW.load(Ordering::Acquire)
    };
    patch_subclasses(py, &class, original)
}

/// Subclasses of `class` (all levels) whose `tp_new` is `original` get the wrapper.
fn patch_subclasses(py: Python<'_>, class: &Bound<'_, PyType>, original: usize) -> PyResult<()> {
    // `type.__subclasses__`, not the class's (a metaclass could answer otherwise).
    let subclasses = py
        .get_type::<PyType>()
        .getattr("__subclasses__")?
        .call1((class,))?;
    for subclass in subclasses.try_iter()? {
        let subclass = subclass?.downcast_into::<PyType>()?;
        // SAFETY: GIL held; `checked_layout` verified the struct before the write.
        unsafe {
            let layout = checked_layout(subclass.as_type_ptr())?;
            if (*layout).tp_new as usize == original {
                (*layout).tp_new = semlock_new as *const () as usize as *mut c_void;
            }
        }
        patch_subclasses(py, &subclass, original)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Unpicklers

/// The C `Unpickler` type and its `find_class` descriptor (both live as long as the interpreter:
/// a static type and its dict), null until patched.
static C_UNPICKLER: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(std::ptr::null_mut());
static C_FIND_CLASS: AtomicPtr<ffi::PyObject> = AtomicPtr::new(std::ptr::null_mut());
/// `_pickle.Unpickler.load`'s own function (0 until patched).
static C_LOAD: AtomicUsize = AtomicUsize::new(0);

/// Who resolves the references `obj` unpickles when that is not `base`'s `find_class`
/// (`base_find_class`, the object in `base`'s dict): `Some("module.Class.find_class")`, or the
/// instance's, or a class's own attribute lookup. `None`: the base's, which raises
/// `pickle.find_class` for each.
///
/// # Safety
/// GIL held; `obj`, `base` and `base_find_class` valid references.
unsafe fn custom_find_class(
    obj: *mut ffi::PyObject,
    base: *mut ffi::PyTypeObject,
    base_find_class: *mut ffi::PyObject,
) -> Option<String> {
    // SAFETY: GIL held (caller); every reference made here is released; `_PyType_Lookup` returns
    // a borrowed reference (or null with no error set) and runs no Python code; the instance dict
    // is read with `PyDict_GetItemWithError`.
    unsafe {
        let type_ = ffi::Py_TYPE(obj);
        let static_base = ffi::PyType_GetFlags(base) & ffi::Py_TPFLAGS_HEAPTYPE as c_ulong == 0;
        // The C type itself: no instance dict, and its dict cannot be changed.
        if type_ == base && static_base {
            return None;
        }
        let class = || class_name(type_);
        if ffi::PyType_GetSlot(type_, ffi::Py_tp_getattro)
            != ffi::PyType_GetSlot(base, ffi::Py_tp_getattro)
        {
            return Some(format!("{}.__getattribute__", class()));
        }
        let name = ffi::PyUnicode_InternFromString(c"find_class".as_ptr());
        if name.is_null() {
            ffi::PyErr_Clear();
            return Some(format!("{}.find_class", class()));
        }
        let found = _PyType_Lookup(type_, name);
        if found != base_find_class {
            ffi::Py_DECREF(name);
            return Some(format!("{}.find_class", class()));
        }
        let mut custom = None;
        let dict = ffi::PyObject_GenericGetDict(obj, std::ptr::null_mut());
        if dict.is_null() {
            ffi::PyErr_Clear();
        } else {
            if ffi::PyDict_Check(dict) != 0 {
                let item = ffi::PyDict_GetItemWithError(dict, name);
                if !item.is_null() {
                    custom = Some(format!("a {} instance's own find_class", class()));
                } else if !ffi::PyErr_Occurred().is_null() {
                    ffi::PyErr_Clear();
                    custom = Some(format!("a {} instance's own find_class", class()));
                }
            }
            ffi::Py_DECREF(dict);
        }
        ffi::Py_DECREF(name);
        custom
    }
}

/// `module.QualName` of a type, read from its struct and dict (no Python code runs).
///
/// # Safety
/// GIL held; `type_` a valid type.
unsafe fn class_name(type_: *mut ffi::PyTypeObject) -> String {
    // SAFETY: GIL held (caller); new references are released, borrowed ones read at once.
    unsafe {
        let qualname = ffi::PyType_GetQualName(type_);
        let qualname_text = if qualname.is_null() {
            ffi::PyErr_Clear();
            None
        } else {
            let text = text_of(qualname);
            ffi::Py_DECREF(qualname);
            text
        };
        let key = ffi::PyUnicode_InternFromString(c"__module__".as_ptr());
        let module = if key.is_null() {
            ffi::PyErr_Clear();
            None
        } else {
            let module = text_of(_PyType_Lookup(type_, key));
            ffi::Py_DECREF(key);
            module
        };
        let qualname = qualname_text.unwrap_or_else(|| "?".to_owned());
        match module {
            Some(module) if module != "builtins" => format!("{module}.{qualname}"),
            _ => qualname,
        }
    }
}

/// Raises `pickle.Unpickler.find_class` when `obj`'s references are resolved by another
/// `find_class` than `base`'s; `false` when a hook refused (the error is set).
///
/// # Safety
/// GIL held; valid references.
unsafe fn judge_unpickler(
    obj: *mut ffi::PyObject,
    base: *mut ffi::PyTypeObject,
    base_find_class: *mut ffi::PyObject,
) -> bool {
    // SAFETY: GIL held (caller); the string made is released after the event.
    unsafe {
        let Some(resolver) = custom_find_class(obj, base, base_find_class) else {
            return true;
        };
        let text = ffi::PyUnicode_FromStringAndSize(
            resolver.as_ptr().cast(),
            resolver.len() as ffi::Py_ssize_t,
        );
        if text.is_null() {
            return false;
        }
        let allowed = audit1(c"pickle.Unpickler.find_class", text);
        ffi::Py_DECREF(text);
        allowed
    }
}

/// `_pickle.Unpickler.load` from now on (`METH_NOARGS`): judges who resolves references, then
/// loads with the original.
///
/// # Safety
/// Called by CPython as a `METH_NOARGS` method: GIL held, `obj` an instance of the C `Unpickler`
/// (the method descriptor checks it).
unsafe extern "C" fn unpickler_load(
    obj: *mut ffi::PyObject,
    unused: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let original = C_LOAD.load(Ordering::Acquire);
    let base = C_UNPICKLER.load(Ordering::Acquire);
    let find_class = C_FIND_CLASS.load(Ordering::Acquire);
    // SAFETY: GIL held (CPython calls methods with it); `original` is the `PyCFunction` the
    // descriptor had, called as it would have been.
    unsafe {
        if original == 0 || base.is_null() || find_class.is_null() {
            ffi::PyErr_SetString(
                ffi::PyExc_RuntimeError,
                c"warden: Unpickler.load is not known".as_ptr(),
            );
            return std::ptr::null_mut();
        }
        if !judge_unpickler(obj, base, find_class) {
            return std::ptr::null_mut();
        }
        let original: ffi::PyCFunction = std::mem::transmute::<usize, ffi::PyCFunction>(original);
        original(obj, unused)
    }
}

/// Guards the C `Unpickler.load` (the class `module`, `_pickle`, holds). Idempotent.
pub fn guard_c_unpickler(_py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<()> {
    let Ok(class) = module.getattr("Unpickler") else {
        return Ok(());
    };
    let class = class.downcast_into::<PyType>()?;
    let type_ = class.as_type_ptr();
    let fail = |what: &str| {
        Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "warden: _pickle.Unpickler {what}"
        )))
    };
    // SAFETY: GIL held (we hold `_py`). The descriptor is checked (its type, its owner, its
    // method's name and flags) before its struct is read for a write; the new `PyMethodDef` is
    // leaked, so it lives as long as the descriptor that points to it; the static type and its
    // dict (which hold the descriptor and `find_class`) live until the interpreter ends.
    unsafe {
        if ffi::PyType_GetFlags(type_) & ffi::Py_TPFLAGS_HEAPTYPE as c_ulong != 0 {
            return fail("is not the interpreter's static type");
        }
        let load_name = ffi::PyUnicode_InternFromString(c"load".as_ptr());
        let find_name = ffi::PyUnicode_InternFromString(c"find_class".as_ptr());
        if load_name.is_null() || find_name.is_null() {
            return Err(PyErr::fetch(_py));
        }
        let load = _PyType_Lookup(type_, load_name);
        let find_class = _PyType_Lookup(type_, find_name);
        ffi::Py_DECREF(load_name);
        ffi::Py_DECREF(find_name);
        if load.is_null()
            || find_class.is_null()
            || ffi::Py_TYPE(load) != std::ptr::addr_of_mut!(PyMethodDescr_Type)
        {
            return fail("has no load method descriptor");
        }
        let descr = load.cast::<MethodDescrLayout>();
        let method = (*descr).d_method;
        if (*descr).d_type != type_
            || method.is_null()
            || std::ffi::CStr::from_ptr((*method).ml_name) != c"load"
            || (*method).ml_flags != ffi::METH_NOARGS
        {
            return fail("load is not the method this hook knows");
        }
        let current = (*method).ml_meth.PyCFunction as usize;
        let wrapper = unpickler_load as *const () as usize;
        if current == wrapper {
            return Ok(());
        }
        if C_LOAD
            .compare_exchange(0, current, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return fail("was seen twice");
        }
        C_UNPICKLER.store(type_, Ordering::Release);
        C_FIND_CLASS.store(find_class, Ordering::Release);
        let guarded = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: (*method).ml_name,
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: unpickler_load,
            },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: (*method).ml_doc,
        }));
        (*descr).d_method = guarded;
    }
    Ok(())
}

/// `pickle._Unpickler.load`, guarded: a descriptor (bound like a function) that judges who
/// resolves references, then calls the original (which no attribute of it leads to).
#[pyclass(name = "guarded_load", module = "warden", frozen)]
pub struct GuardedLoad {
    original: Py<PyAny>,
    base: Py<PyType>,
    find_class: Py<PyAny>,
}

#[pymethods]
impl GuardedLoad {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        if let Ok(unpickler) = args.get_item(0) {
            // SAFETY: GIL held (we hold `py`); the three references are alive (held by `args`
            // and `self`).
            let allowed = unsafe {
                judge_unpickler(
                    unpickler.as_ptr(),
                    self.base.as_ptr().cast(),
                    self.find_class.as_ptr(),
                )
            };
            if !allowed {
                return Err(PyErr::fetch(py));
            }
        }
        self.original.call(py, args, kwargs)
    }

    /// Bound to an instance as a function is: `unpickler.load()` passes it.
    fn __get__(
        slf: &Bound<'_, Self>,
        instance: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let py = slf.py();
        match instance {
            Some(instance) if !instance.is_none() => {
                // SAFETY: GIL held; both references are alive; `PyMethod_New` returns a new
                // reference or null with an error set.
                unsafe {
                    let method = PyMethod_New(slf.as_ptr(), instance.as_ptr());
                    Bound::from_owned_ptr_or_err(py, method).map(Bound::unbind)
                }
            }
            _ => Ok(slf.clone().into_any().unbind()),
        }
    }
}

/// Guards `pickle._Unpickler.load` when `pickle` is loaded. Idempotent.
pub fn guard_python_unpickler(py: Python<'_>) -> PyResult<()> {
    let Ok(pickle) = py.import("sys")?.getattr("modules")?.get_item("pickle") else {
        return Ok(());
    };
    let Ok(class) = pickle.getattr("_Unpickler") else {
        return Ok(());
    };
    let Ok(class) = class.downcast_into::<PyType>() else {
        return Ok(());
    };
    let dict = class.getattr("__dict__")?;
    let (Ok(load), Ok(find_class)) = (dict.get_item("load"), dict.get_item("find_class")) else {
        return Ok(());
    };
    if load.is_instance_of::<GuardedLoad>() {
        return Ok(());
    }
    let guard = Bound::new(
        py,
        GuardedLoad {
            original: load.unbind(),
            base: class.clone().unbind(),
            find_class: find_class.unbind(),
        },
    )?;
    class.setattr("load", guard)
}
