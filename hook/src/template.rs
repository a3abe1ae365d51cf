//! The template's side of the warm pool's fork step, for the interpreter: `template_serve(fd)`
//! runs the jail crate's fork loop (`warden_jail::template::serve`) with the interpreter's own
//! fork hooks around each fork, as `os.fork` would run them (without its audit event: the template
//! runs no untrusted code, and a run's process is confined before it returns from here).

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use warden_jail::template::{self, ForkHooks, Served};

/// `template_serve` runs once per process: a run's process never becomes a template.
static SERVED: AtomicBool = AtomicBool::new(false);

fn before() {
    // SAFETY: called with the GIL held (from `template_serve`), right before the clone.
    unsafe { ffi::PyOS_BeforeFork() }
}

fn parent() {
    // SAFETY: the parent side of the clone `before` preceded, GIL held.
    unsafe { ffi::PyOS_AfterFork_Parent() }
}

fn child() {
    // SAFETY: the child side of that clone (a run's program process, single-threaded), before
    // any Python code runs in it.
    unsafe { ffi::PyOS_AfterFork_Child() }
}

/// Serves fork requests on descriptor `fd` (the template's channel) until it closes. Returns
/// `True` in each run's program process (confined: namespaces, cgroup, ids, Landlock, seccomp;
/// its streams are the run's), `False` in the template once its channel closed and its runs ended.
#[pyfunction]
pub fn template_serve(fd: i32) -> PyResult<bool> {
    if SERVED.swap(true, Ordering::SeqCst) {
        return Err(PyRuntimeError::new_err("template_serve runs once"));
    }
    if fd < 0 {
        return Err(PyRuntimeError::new_err("not a descriptor"));
    }
    // SAFETY: the caller passes its channel's descriptor number, open for the whole call (the
    // template's standard input); it is only borrowed here.
    let channel = unsafe { BorrowedFd::borrow_raw(fd) };
    let hooks = ForkHooks {
        before,
        parent,
        child,
    };
    match template::serve(channel, &hooks) {
        Ok(Served::Child) => {
            // The run's process watches its hook (the template, single-threaded, did not).
            let policy = crate::audit::SETTINGS
                .get()
                .map(|settings| settings.policy.policy.clone());
            if let Some(policy) = policy {
                if !crate::watchdog::start(policy) {
                    return Err(PyRuntimeError::new_err(
                        "cannot start the thread that watches the audit hook",
                    ));
                }
            }
            Ok(true)
        }
        Ok(Served::End) => Ok(false),
        Err(err) => Err(PyRuntimeError::new_err(format!(
            "the template failed: {err}"
        ))),
    }
}
