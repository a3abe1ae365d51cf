//! Detecting a removed hook: a program that can write memory (a ctypes `Union` of an integer and a
//! pointer raises no audit event) can unlink the hook from the interpreter's list. A native thread
//! checks, every [`PERIOD`], that the list still starts with the hook's entry and that the entry
//! still calls [`crate::audit::hook`]; when not, it writes the denial to standard error and ends the
//! process. What the program did between removing the hook and the next check is held by the
//! kernel alone (docs/enforcement.md, "Self-protection").
//!
//! Where the entry is: `PySys_AddAuditHook` links it at `_PyRuntime.audit_hook_head` (the runtime's
//! C hooks). [`Watch::locate`] snapshots `_PyRuntime` (its size from the symbol table) around the
//! call and takes the one word that changed, when it points to an entry calling the hook.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How often the thread looks.
pub const PERIOD: Duration = Duration::from_millis(10);

/// `_PyRuntime` is read up to this many bytes (3.11's `audit_hook_head` is within the first few
/// KiB; the state is larger).
const MAX_SCAN: usize = 1 << 20;

/// glibc's `dladdr1` flag asking for the symbol's ELF entry (`<dlfcn.h>`; not in the libc crate).
const RTLD_DL_SYMENT: libc::c_int = 1;

/// CPython 3.11's `_Py_AuditHookEntry`.
#[repr(C)]
struct Entry {
    next: *mut Entry,
    hook: *const c_void,
    user_data: *mut c_void,
}

/// The watched slot and the entry it must hold.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    slot: usize,
    entry: usize,
    hook: usize,
}

static WATCH: OnceLock<Watch> = OnceLock::new();

/// Set when the interpreter clears its hooks as it finalises: the list is emptied then, by the
/// interpreter, and the thread stops looking.
static FINALISING: AtomicBool = AtomicBool::new(false);

extern "C" {
    /// CPython's own "finalising" flag (set before it clears the audit hooks; no program sets it).
    fn _Py_IsFinalizing() -> std::ffi::c_int;
}

/// Called by the hook on `cpython._PySys_ClearAuditHooks`, which the interpreter raises right
/// before it empties the list at exit. A program can raise that event itself (`sys.audit`), so it
/// counts only while the interpreter is really finalising.
///
/// # Safety
/// GIL held.
pub unsafe fn clearing() {
    // SAFETY: a plain read of the runtime's flag, GIL held.
    if unsafe { _Py_IsFinalizing() } != 0 {
        FINALISING.store(true, Ordering::SeqCst);
    }
}

/// `_PyRuntime`'s address and size, from the dynamic symbol table.
fn runtime_state() -> Option<(*const u8, usize)> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; dladdr1 fills `info` and points
    // `symbol` at the ELF symbol entry, both valid for the process's life (libpython stays loaded).
    unsafe {
        let address = libc::dlsym(libc::RTLD_DEFAULT, c"_PyRuntime".as_ptr());
        if address.is_null() {
            return None;
        }
        let mut info: libc::Dl_info = std::mem::zeroed();
        let mut symbol: *mut c_void = std::ptr::null_mut();
        let found = libc::dladdr1(address, &mut info, &mut symbol, RTLD_DL_SYMENT);
        if found == 0 || symbol.is_null() {
            return None;
        }
        let size = (*(symbol as *const libc::Elf64_Sym)).st_size as usize;
        (size >= std::mem::size_of::<usize>()).then_some((address as *const u8, size.min(MAX_SCAN)))
    }
}

/// A copy of `_PyRuntime`'s words.
fn snapshot(state: (*const u8, usize)) -> Vec<usize> {
    let (address, size) = state;
    let words = size / std::mem::size_of::<usize>();
    // SAFETY: `_PyRuntime` is `size` bytes of the interpreter's data, aligned as its pointers are;
    // read with the GIL held (the caller's), as volatile words.
    (0..words)
        .map(|index| unsafe { std::ptr::read_volatile((address as *const usize).add(index)) })
        .collect()
}

impl Watch {
    /// Runs `add` (which adds the hook) between two snapshots of `_PyRuntime`, and finds the
    /// hook's entry. `None` when `_PyRuntime` cannot be found or the change is not one entry
    /// calling `hook`.
    pub fn locate(hook: *const c_void, add: impl FnOnce() -> bool) -> (bool, Option<Watch>) {
        let Some(state) = runtime_state() else {
            return (add(), None);
        };
        let before = snapshot(state);
        let added = add();
        let after = snapshot(state);
        let changed: Vec<usize> = (0..before.len())
            .filter(|index| before[*index] != after[*index])
            .collect();
        let [index] = changed.as_slice() else {
            return (added, None);
        };
        let entry = after[*index];
        if before[*index] != 0
            || entry < 0x10000
            || !entry.is_multiple_of(std::mem::align_of::<Entry>())
        {
            return (added, None);
        }
        // SAFETY: the word became non-null exactly while `PySys_AddAuditHook` ran with no other
        // code running (GIL held): it is the entry that call allocated and linked.
        let calls = unsafe { std::ptr::read_volatile(&(*(entry as *const Entry)).hook) };
        if calls != hook {
            return (added, None);
        }
        let slot = state.0 as usize + index * std::mem::size_of::<usize>();
        (
            added,
            Some(Watch {
                slot,
                entry,
                hook: hook as usize,
            }),
        )
    }

    /// Keeps `self` for [`start`].
    pub fn keep(self) -> bool {
        WATCH.set(self).is_ok()
    }

    /// Whether the hook is still the list's first entry and still calls the hook.
    fn intact(&self) -> bool {
        // SAFETY: `slot` is a word of `_PyRuntime` and `entry` the hook's entry, which CPython
        // never frees before finalisation (the thread ends with the process). Aligned volatile word
        // reads: a concurrent write is seen whole, before or after.
        unsafe {
            let head = std::ptr::read_volatile(self.slot as *const usize);
            let hook = std::ptr::read_volatile(&(*(self.entry as *const Entry)).hook) as usize;
            head == self.entry && hook == self.hook
        }
    }
}

/// Starts the watching thread (once per process; in a pooled run's process after its fork: a
/// template must stay single-threaded). `false` when nothing was located to watch.
pub fn start(policy: String) -> bool {
    let Some(watch) = WATCH.get().copied() else {
        return false;
    };
    let spawned = std::thread::Builder::new()
        .name("warden-watch".into())
        // It only reads two words: a small stack keeps it out of a tight address-space limit.
        .stack_size(64 * 1024)
        .spawn(move || loop {
            std::thread::sleep(PERIOD);
            if FINALISING.load(Ordering::SeqCst) {
                return;
            }
            // The flag is set before the interpreter empties the list: read again after a
            // change is seen, so an exit is never taken for a removal.
            if !watch.intact() && !FINALISING.load(Ordering::SeqCst) {
                removed(&policy);
            }
        });
    spawned.is_ok()
}

/// Ends the process: the runtime layer is gone, so nothing the program does from here is judged.
fn removed(policy: &str) -> ! {
    let denial = crate::rules::Denial::new(
        crate::rules::Rule::AuditHook,
        "the audit hook was removed from the interpreter (raw memory written); the run is ended",
    );
    let line = format!(
        "\nwarden.PolicyViolation: {}\n",
        denial.message("sys.addaudithook", policy, &[])
    );
    // SAFETY: write(2) on fd 2 with a valid buffer, then _exit: no Python state is touched.
    unsafe {
        libc::write(2, line.as_ptr().cast(), line.len());
        libc::_exit(1)
    }
}
