//! The raw CPython calls the hook makes, each wrapped once: reading strings and tuple items, finding
//! who asked for an event by walking frames. All `unsafe` of the audit path lives here.
//!
//! Every function requires the GIL (audit hooks are called with it held, and so is `install`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_int;
use std::rc::Rc;

use pyo3::ffi;

use crate::rules::{names_code_sink, FRAME_ATTRIBUTES, FRAME_FUNCTIONS, INTROSPECTION_FUNCTIONS};
use crate::settings::Settings;

// CPython 3.11 API outside the limited API (pyo3-ffi declares them only for non-abi3 builds). The
// hook refuses to install on another minor version (`install` checks `sys.version_info`).
extern "C" {
    pub(crate) fn PyFrame_GetBack(frame: *mut ffi::PyFrameObject) -> *mut ffi::PyFrameObject;
    /// A new reference to the frame's locals (a dict in 3.11), or null with an error set.
    pub(crate) fn PyFrame_GetLocals(frame: *mut ffi::PyFrameObject) -> *mut ffi::PyObject;
    fn PyFrame_GetLasti(frame: *mut ffi::PyFrameObject) -> c_int;
    fn PyCode_GetCode(code: *mut ffi::PyCodeObject) -> *mut ffi::PyObject;
    pub(crate) static mut PyCode_Type: ffi::PyTypeObject;
    pub(crate) static mut PyFrame_Type: ffi::PyTypeObject;
    /// Variadic: a format and its objects, as `Py_BuildValue`.
    pub(crate) fn PySys_Audit(
        event: *const std::ffi::c_char,
        format: *const std::ffi::c_char,
        ...
    ) -> c_int;
    pub(crate) fn PySys_AddAuditHook(
        hook: unsafe extern "C" fn(
            *const std::ffi::c_char,
            *mut ffi::PyObject,
            *mut std::ffi::c_void,
        ) -> c_int,
        user_data: *mut std::ffi::c_void,
    ) -> c_int;
}

/// 3.11's import opcodes: a library frame executing one of these is running its own `import`.
const IMPORT_NAME: u8 = 108;
const IMPORT_FROM: u8 = 109;
const IMPORT_STAR: u8 = 84;

/// Deepest frame walk (a deeper stack is judged by its first 256 frames).
const MAX_DEPTH: usize = 256;

thread_local! {
    /// Code object address → what the hook knows of it. Every cached code object is kept alive (one
    /// reference, never released), so an address is never reused by another code object.
    static CODE_INFO: RefCell<AddressMap<CodeInfo>> = RefCell::new(AddressMap::default());
}

/// Attribute names the hook reads, made once as interned strings: a lookup by one skips making,
/// hashing and releasing a new string each time (the hook reads a code object's file name on
/// every module it judges).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Attribute {
    /// A code object's `co_name`.
    CodeName,
    /// `co_filename`.
    Filename,
    /// `co_consts`.
    Consts,
    /// `co_names`.
    Names,
    /// `co_qualname`.
    Qualname,
    /// A class's `__dict__`.
    Dict,
}

const NAME_TEXTS: [&std::ffi::CStr; 6] = [
    c"co_name",
    c"co_filename",
    c"co_consts",
    c"co_names",
    c"co_qualname",
    c"__dict__",
];

/// The interned names (addresses; 0 where interning failed: that name is then made each time).
static NAMES: std::sync::OnceLock<[usize; 6]> = std::sync::OnceLock::new();

/// `getattr(object, name)`: a new reference, or null with an error set.
///
/// # Safety
/// GIL held; `object` a valid reference.
pub(crate) unsafe fn get_attr(object: *mut ffi::PyObject, name: Attribute) -> *mut ffi::PyObject {
    let names = NAMES.get_or_init(|| {
        NAME_TEXTS.map(|text| {
            // SAFETY: GIL held (caller); the new reference is kept for the process's life.
            let interned = unsafe { ffi::PyUnicode_InternFromString(text.as_ptr()) };
            if interned.is_null() {
                // SAFETY: GIL held.
                unsafe { ffi::PyErr_Clear() };
            }
            interned as usize
        })
    });
    let interned = names[name as usize];
    // SAFETY: GIL held; `object` valid (caller); `interned` a live str kept by `NAMES`.
    unsafe {
        if interned == 0 {
            ffi::PyObject_GetAttrString(object, NAME_TEXTS[name as usize].as_ptr())
        } else {
            ffi::PyObject_GetAttr(object, interned as *mut ffi::PyObject)
        }
    }
}

/// A `str` or `bytes` object's text (lossy for bytes), else `None`.
///
/// # Safety
/// GIL held; `object` null or a valid borrowed reference.
pub unsafe fn text_of(object: *mut ffi::PyObject) -> Option<String> {
    if object.is_null() {
        return None;
    }
    // SAFETY: `object` is a valid reference (caller), the GIL is held.
    unsafe {
        if ffi::PyUnicode_Check(object) != 0 {
            let mut size: ffi::Py_ssize_t = 0;
            let data = ffi::PyUnicode_AsUTF8AndSize(object, &mut size);
            if data.is_null() {
                // Lone surrogates: not a path or name anything can open or import.
                ffi::PyErr_Clear();
                return None;
            }
            // SAFETY: CPython returns `size` valid bytes at `data`, alive as long as `object`.
            let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
            // SAFETY: what `PyUnicode_AsUTF8AndSize` returns is UTF-8 (it fails on what is not).
            return Some(std::str::from_utf8_unchecked(bytes).to_owned());
        }
        if ffi::PyBytes_Check(object) != 0 {
            let data = ffi::PyBytes_AsString(object);
            let size = ffi::PyBytes_Size(object);
            if data.is_null() || size < 0 {
                ffi::PyErr_Clear();
                return None;
            }
            // SAFETY: a bytes object holds `size` bytes at `data`.
            let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
            // Any bytes at all (a program's `open(b"\xff…")`): read lossily, never as UTF-8.
            return Some(String::from_utf8_lossy(bytes).into_owned());
        }
    }
    None
}

/// A `str` object's text, borrowed (no copy), else `None`.
///
/// # Safety
/// GIL held; `object` null or a valid borrowed reference that outlives the returned text (CPython
/// keeps a str's UTF-8 form as long as the str).
pub unsafe fn str_ref<'a>(object: *mut ffi::PyObject) -> Option<&'a str> {
    // SAFETY: `object` is a valid reference (caller); CPython returns `size` bytes of valid UTF-8
    // at `data`, alive as long as `object`.
    unsafe {
        if object.is_null() || ffi::PyUnicode_Check(object) == 0 {
            return None;
        }
        let mut size: ffi::Py_ssize_t = 0;
        let data = ffi::PyUnicode_AsUTF8AndSize(object, &mut size);
        if data.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        std::str::from_utf8(std::slice::from_raw_parts(data.cast::<u8>(), size as usize)).ok()
    }
}

/// Item `index` of the event's argument tuple (borrowed), or null.
///
/// # Safety
/// GIL held; `args` null or a valid reference.
pub unsafe fn arg(args: *mut ffi::PyObject, index: isize) -> *mut ffi::PyObject {
    // SAFETY: type and bounds are checked before the (borrowed) item is read.
    unsafe {
        if args.is_null() || ffi::PyTuple_Check(args) == 0 || ffi::PyTuple_Size(args) <= index {
            return std::ptr::null_mut();
        }
        ffi::PyTuple_GetItem(args, index)
    }
}

/// A path argument: `Ok(None)` for descriptors and `None`, the text of `str`/`bytes`, and for any other
/// object the text its `__fspath__` gives (`Err` when it gives none).
///
/// # Safety
/// GIL held; `object` null or a valid reference. May run the object's `__fspath__`.
pub unsafe fn path_arg(object: *mut ffi::PyObject) -> Result<Option<String>, ()> {
    // SAFETY: checks on a valid reference; PyOS_FSPath returns a new reference or null.
    unsafe {
        if object.is_null() || object == ffi::Py_None() || ffi::PyLong_Check(object) != 0 {
            return Ok(None);
        }
        if let Some(text) = text_of(object) {
            return Ok(Some(text));
        }
        let path = ffi::PyOS_FSPath(object);
        if path.is_null() {
            ffi::PyErr_Clear();
            return Err(());
        }
        let text = text_of(path);
        ffi::Py_DECREF(path);
        text.map(Some).ok_or(())
    }
}

/// Judges `code` (a code object a library is about to run) and the code objects nested in it
/// (functions, classes, comprehensions) as the program's, whatever file name they carry: a library
/// that compiles a string under a library file's name (`patsy`'s `eval(…, source_name=…)`, a
/// template file) does not make the string library code. Code with other names (`<string>`) is the
/// program's already and is left alone (nothing is kept for it).
///
/// # Safety
/// GIL held; `code` null or a valid reference.
pub unsafe fn demote(settings: &Settings, code: *mut ffi::PyObject) {
    // SAFETY: the caller's guarantees; `demote_nested` checks types before reading members.
    unsafe { demote_nested(settings, code, 0) }
}

/// Nesting deeper than this is judged by its first levels (a compiled string nests rarely past 3).
const MAX_NESTING: usize = 32;

/// # Safety
/// GIL held; `object` null or a valid reference.
unsafe fn demote_nested(settings: &Settings, object: *mut ffi::PyObject, depth: usize) {
    // SAFETY: type checked before the code object's members are read (plain member reads); new
    // references are released; a demoted code object is kept alive as `code_info` keeps its own.
    unsafe {
        if depth > MAX_NESTING
            || object.is_null()
            || ffi::Py_TYPE(object) != std::ptr::addr_of_mut!(PyCode_Type)
        {
            return;
        }
        let mut info = code_info(settings, object.cast());
        if !info.library {
            return;
        }
        info.library = false;
        CODE_INFO.with(|cache| cache.borrow_mut().insert(object as usize, info));
        let constants = get_attr(object, Attribute::Consts);
        if constants.is_null() {
            ffi::PyErr_Clear();
            return;
        }
        if ffi::PyTuple_Check(constants) != 0 {
            for index in 0..ffi::PyTuple_Size(constants) {
                demote_nested(settings, ffi::PyTuple_GetItem(constants, index), depth + 1);
            }
        }
        ffi::Py_DECREF(constants);
    }
}

/// The file name of `object` when it is a module's code object (`co_name` `<module>`), else `None`.
///
/// # Safety
/// GIL held; `object` null or a valid reference.
pub unsafe fn module_code_file(object: *mut ffi::PyObject) -> Option<String> {
    // SAFETY: the type is checked before the code object's members are read (plain member reads,
    // no user code); new references are released.
    unsafe {
        if object.is_null() || ffi::Py_TYPE(object) != std::ptr::addr_of_mut!(PyCode_Type) {
            return None;
        }
        let name = get_attr(object, Attribute::CodeName);
        if name.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let is_module = str_ref(name) == Some("<module>");
        ffi::Py_DECREF(name);
        if !is_module {
            return None;
        }
        let file = get_attr(object, Attribute::Filename);
        if file.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let text = text_of(file);
        ffi::Py_DECREF(file);
        text
    }
}

/// An integer argument, when it is one.
///
/// # Safety
/// GIL held; `object` null or a valid reference.
pub unsafe fn int_of(object: *mut ffi::PyObject) -> Option<i64> {
    // SAFETY: checks on a valid reference.
    unsafe {
        if object.is_null() || ffi::PyLong_Check(object) == 0 {
            return None;
        }
        let value = ffi::PyLong_AsLongLong(object);
        if value == -1 && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(value)
    }
}

/// What the hook keeps of a code object.
#[derive(Debug, Clone)]
pub(crate) struct CodeInfo {
    /// Library code (the interpreter's import path, frozen modules, the bootstrap).
    pub library: bool,
    pub filename: Rc<str>,
    /// One of its `co_names` is a code sink (`rules::names_code_sink`), read the first time an
    /// event asks.
    names_sink: Option<bool>,
    /// The string evaluator it is (an index into the settings' `string_evaluators`), read the
    /// first time a walk asks.
    evaluator: Option<Option<usize>>,
    /// Which of [`named`]'s names its `co_names` or string constants hold (read the first time a walk
    /// asks).
    named: Option<u32>,
    /// Which of the settings' caller and machinery lists ([`list_index`]) name its file: `lists`
    /// for those in `lists_known`.
    lists_known: u8,
    lists: u8,
    /// A module's body (`co_name` `<module>`), read the first time a walk asks.
    module_body: Option<bool>,
    /// The byte offsets of its import opcodes, read the first time a walk asks.
    imports: Option<Rc<[u32]>>,
}

/// The settings' file lists whose verdict is kept per code object (by the list's identity).
fn list_index(settings: &Settings, list: &[String]) -> Option<usize> {
    if list.is_empty() {
        return None;
    }
    let p = &settings.policy;
    [
        &p.import_machinery,
        &p.ctypes_machinery,
        &p.introspection_machinery,
        &p.code_callers,
        &p.marshal_callers,
        &p.ctypes_callers,
    ]
    .iter()
    .position(|known| std::ptr::eq(known.as_ptr(), list.as_ptr()) && known.len() == list.len())
}

/// Whether `info`'s code (a library's, at `code`) is from a file on `list`, kept per code object
/// for the settings' own lists.
fn listed_code(
    settings: &Settings,
    code: *mut ffi::PyCodeObject,
    info: &CodeInfo,
    list: &[String],
) -> bool {
    if !info.library {
        return false;
    }
    let Some(index) = list_index(settings, list) else {
        return settings.listed(list, &info.filename);
    };
    let bit = 1u8 << index;
    if info.lists_known & bit != 0 {
        return info.lists & bit != 0;
    }
    let listed = settings.listed(list, &info.filename);
    update(code, |entry| {
        entry.lists_known |= bit;
        if listed {
            entry.lists |= bit;
        }
    });
    listed
}

/// The names a library's code may name itself ([`asker_naming`]), one bit each in
/// `CodeInfo::named`: the audited frame attributes and the introspection functions. A name asked
/// for that is not here is looked up in the code.
fn named() -> impl Iterator<Item = &'static str> {
    FRAME_ATTRIBUTES
        .into_iter()
        .chain(FRAME_FUNCTIONS)
        .chain(INTROSPECTION_FUNCTIONS)
}

/// The bits of `names` among [`named`]'s; `None` when one is not there.
fn name_mask(names: &[&str]) -> Option<u32> {
    names.iter().try_fold(0u32, |mask, name| {
        named()
            .position(|known| known == *name)
            .map(|index| mask | (1 << index))
    })
}

/// A hasher for code object addresses (already well spread but for their low bits).
#[derive(Default, Clone, Copy)]
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, value: usize) {
        self.0 = ((value as u64) >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type AddressMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<AddressHasher>>;

/// Who asked for an event: the first frame outside the machinery that carried the request.
#[derive(Debug, Clone)]
pub struct Asker {
    /// Library code (the interpreter's import path, frozen modules, the bootstrap).
    pub library: bool,
    pub filename: Rc<str>,
    /// Whether the frame is executing an `import` statement (an import opcode): known, or the
    /// frame's last instruction, looked up when asked ([`Asker::importing`]).
    importing: Importing,
    /// The frame's code (kept alive by the cache; null for the program with no frame).
    code: *mut ffi::PyCodeObject,
}

#[derive(Debug, Clone, Copy)]
enum Importing {
    Known(bool),
    /// The frame's last instruction's offset: most events never ask, and the first question costs
    /// a copy of the code's bytecode.
    At(c_int),
}

impl Asker {
    /// Whether the frame's code names `exec`, `eval` or `compile` itself.
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn names_sink(&self) -> bool {
        // SAFETY: the code object is kept alive by the cache (or null).
        unsafe { names_sink_of(self.code) }
    }

    /// Whether the frame's code is a library's from a file on `list`, one of the settings' lists
    /// (the verdict kept per code object, as the walks keep it).
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn listed(&self, settings: &Settings, list: &[String]) -> bool {
        if !self.library || self.code.is_null() {
            return false;
        }
        // SAFETY: the code object is kept alive by the cache; GIL held (caller).
        unsafe {
            let info = code_info(settings, self.code);
            listed_code(settings, self.code, &info, list)
        }
    }

    /// Whether the frame was executing an `import` statement (an import opcode). Safe to call:
    /// an `Asker` is made only by the hook's functions that hold the GIL, for the event being
    /// decided, and cannot leave the thread (`Rc`); its code object is kept alive by the cache.
    pub fn importing(&self) -> bool {
        match self.importing {
            Importing::Known(known) => known,
            Importing::At(lasti) => {
                let Some(info) =
                    CODE_INFO.with(|cache| cache.borrow().get(&(self.code as usize)).cloned())
                else {
                    return false;
                };
                // SAFETY: the code object is kept alive by the cache; the GIL is held while an
                // `Asker` lives (above).
                unsafe { import_at(self.code, &info, lasti) }
            }
        }
    }
}

/// What asked when no frame outside the machinery can be named: the program. A callable run with no
/// Python frame (`_thread.start_new_thread(list, (map(exec, …),))`, an `atexit` or finaliser
/// callback that is a builtin, a C-level `map`/`list` chain), a walk that ends inside the
/// machinery (`start_new_thread(importlib.import_module, …)`) or runs past [`MAX_DEPTH`] frames is
/// judged as the program's: the hook fails closed.
pub const NO_FRAME: &str = "<no Python frame>";

fn program_asker() -> Asker {
    Asker {
        library: false,
        filename: Rc::from(NO_FRAME),
        importing: Importing::Known(false),
        code: std::ptr::null_mut(),
    }
}

/// The asker of the current event: frames whose file is on `machinery` are skipped. The program
/// ([`NO_FRAME`]) when no frame outside the machinery is running.
///
/// # Safety
/// GIL held.
pub unsafe fn asker(settings: &Settings, machinery: &[String]) -> Asker {
    // SAFETY: GIL held (this function's contract); no names to look for, so no names are read.
    unsafe { asker_naming(settings, machinery, &[]) }.0
}

/// Who asked for a module body the import system runs: the first frame that executes an `import`
/// statement (a library's own, the import system's included: `get_resource_reader` imports
/// `importlib.readers`), or else the first frame outside `machinery` (a call: `_find_and_load`,
/// `exec_module`, `import_module`); with the name of the function through which it entered the
/// import system (the outermost `machinery` frame skipped: `_find_and_load` for an import
/// statement or a C import, `exec_module` or `_call_with_frames_removed` for a program calling
/// importlib's internals; empty when none was skipped). The program ([`NO_FRAME`]) when no frame
/// outside the machinery is running.
///
/// # Safety
/// GIL held.
pub unsafe fn import_entry(settings: &Settings, machinery: &[String]) -> (Asker, String) {
    let mut entry = String::new();
    // SAFETY: as in `asker`: a borrowed frame we take a reference to; every frame and code
    // reference taken is released once.
    unsafe {
        let mut frame = ffi::PyEval_GetFrame();
        if frame.is_null() {
            return (program_asker(), entry);
        }
        ffi::Py_INCREF(frame.cast());
        // The last frame skipped (a code reference), whose name is the entry.
        let mut skipped_code: *mut ffi::PyCodeObject = std::ptr::null_mut();
        let name_of = |code: *mut ffi::PyCodeObject| -> String {
            if code.is_null() {
                return String::new();
            }
            let name = get_attr(code.cast(), Attribute::CodeName);
            let text = if name.is_null() {
                ffi::PyErr_Clear();
                String::new()
            } else {
                let text = text_of(name).unwrap_or_default();
                ffi::Py_DECREF(name);
                text
            };
            ffi::Py_DECREF(code.cast());
            text
        };
        for _ in 0..MAX_DEPTH {
            let code = ffi::PyFrame_GetCode(frame);
            let info = code_info(settings, code);
            let importing = at_import(frame, code, &info);
            let skipped = listed_code(settings, code, &info, machinery);
            if importing || !skipped {
                ffi::Py_DECREF(code.cast());
                ffi::Py_DECREF(frame.cast());
                entry = name_of(skipped_code);
                return (
                    Asker {
                        library: info.library,
                        filename: info.filename,
                        importing: Importing::Known(importing),
                        code,
                    },
                    entry,
                );
            }
            if !skipped_code.is_null() {
                ffi::Py_DECREF(skipped_code.cast());
            }
            skipped_code = code;
            let back = PyFrame_GetBack(frame);
            ffi::Py_DECREF(frame.cast());
            if back.is_null() {
                entry = name_of(skipped_code);
                return (program_asker(), entry);
            }
            frame = back;
        }
        ffi::Py_DECREF(frame.cast());
        entry = name_of(skipped_code);
        (program_asker(), entry)
    }
}

/// [`asker`], and whether the asker's code names one of `names` itself (one of its `co_names`
/// or string constants; not read when `names` is empty):
/// a library that calls `sys._getframe` for its own bookkeeping names it, one that calls a
/// callable the program handed it (`Series.map(sys._getframe)`) does not.
///
/// # Safety
/// GIL held.
pub unsafe fn asker_naming(
    settings: &Settings,
    machinery: &[String],
    names: &[&str],
) -> (Asker, bool) {
    // SAFETY: PyEval_GetFrame returns a borrowed frame of the running thread (or null), which we
    // own a reference to from here on; every frame, code and tuple reference taken is released
    // once.
    unsafe {
        let mut frame = ffi::PyEval_GetFrame();
        if frame.is_null() {
            return (program_asker(), false);
        }
        ffi::Py_INCREF(frame.cast());
        for _ in 0..MAX_DEPTH {
            let code = ffi::PyFrame_GetCode(frame);
            let info = code_info(settings, code);
            let skipped = listed_code(settings, code, &info, machinery);
            if !skipped {
                let importing = Importing::At(PyFrame_GetLasti(frame));
                let named = !names.is_empty() && names_any(code, &info, names);
                ffi::Py_DECREF(code.cast());
                ffi::Py_DECREF(frame.cast());
                let who = Asker {
                    library: info.library,
                    filename: info.filename,
                    importing,
                    code,
                };
                return (who, named);
            }
            ffi::Py_DECREF(code.cast());
            let back = PyFrame_GetBack(frame);
            ffi::Py_DECREF(frame.cast());
            if back.is_null() {
                return (program_asker(), false);
            }
            frame = back;
        }
        ffi::Py_DECREF(frame.cast());
        (program_asker(), false)
    }
}

/// Whether `code` names one of `names` in its `co_names` or string constants (`sys._getframe`,
/// `tb.tb_frame`, `getattr(sys, "_getframe")`), from the bits kept for it (one scan) when the
/// names are [`named`]'s.
///
/// # Safety
/// GIL held; `code` a valid code object, `info` its cached entry.
unsafe fn names_any(code: *mut ffi::PyCodeObject, info: &CodeInfo, names: &[&str]) -> bool {
    let Some(mask) = name_mask(names) else {
        // SAFETY: the caller's guarantees.
        return unsafe { holds_any(code, names) };
    };
    let bits = match info.named {
        Some(bits) => bits,
        None => {
            let mut bits = 0u32;
            // SAFETY: the caller's guarantees.
            unsafe {
                each_string(code, &[Attribute::Names, Attribute::Consts], |text| {
                    if let Some(index) = named().position(|known| known == text) {
                        bits |= 1 << index;
                    }
                    false
                })
            };
            update(code, |entry| entry.named = Some(bits));
            bits
        }
    };
    bits & mask != 0
}

/// Whether `code`'s `co_names` or string constants hold one of `names`.
///
/// # Safety
/// GIL held; `code` a valid code object.
unsafe fn holds_any(code: *mut ffi::PyCodeObject, names: &[&str]) -> bool {
    // SAFETY: the caller's guarantees.
    unsafe { holds_any_in(code, &[Attribute::Names, Attribute::Consts], names) }
}

/// Whether one of the tuples `members` of `code` (`co_names`, `co_consts`) holds one of `names`
/// as a string.
///
/// # Safety
/// GIL held; `code` a valid code object.
pub(crate) unsafe fn holds_any_in(
    code: *mut ffi::PyCodeObject,
    members: &[Attribute],
    names: &[&str],
) -> bool {
    // SAFETY: the caller's guarantees.
    unsafe { each_string(code, members, |text| names.contains(&text)) }
}

/// Calls `visit` with each string of the tuples `members` of `code` until it answers `true`;
/// whether one did.
///
/// # Safety
/// GIL held; `code` a valid code object.
unsafe fn each_string(
    code: *mut ffi::PyCodeObject,
    members: &[Attribute],
    mut visit: impl FnMut(&str) -> bool,
) -> bool {
    // SAFETY: plain member reads of a code object; the tuples' items are borrowed while the
    // tuple is held; every new reference is released.
    unsafe {
        for member in members {
            let items = get_attr(code.cast(), *member);
            if items.is_null() {
                ffi::PyErr_Clear();
                continue;
            }
            let mut hit = false;
            if ffi::PyTuple_Check(items) != 0 {
                for index in 0..ffi::PyTuple_Size(items) {
                    if str_ref(ffi::PyTuple_GetItem(items, index)).is_some_and(&mut visit) {
                        hit = true;
                        break;
                    }
                }
            }
            ffi::Py_DECREF(items);
            if hit {
                return true;
            }
        }
        false
    }
}

/// Updates the cached entry of `code`.
fn update(code: *mut ffi::PyCodeObject, change: impl FnOnce(&mut CodeInfo)) {
    CODE_INFO.with(|cache| {
        if let Some(entry) = cache.borrow_mut().get_mut(&(code as usize)) {
            change(entry);
        }
    });
}

/// The string evaluator `code` is (a library's function listed in the settings), if any.
///
/// # Safety
/// GIL held; `code` a valid code object, `info` its cached entry.
pub(crate) unsafe fn evaluator_of(
    settings: &Settings,
    code: *mut ffi::PyCodeObject,
    info: &CodeInfo,
) -> Option<usize> {
    if let Some(known) = info.evaluator {
        return known;
    }
    let evaluator = if info.library {
        settings.evaluator(&info.filename, || {
            // SAFETY: a plain member read of a valid code object; the reference is released.
            unsafe {
                let name = get_attr(code.cast(), Attribute::Qualname);
                if name.is_null() {
                    ffi::PyErr_Clear();
                    return None;
                }
                let text = text_of(name);
                ffi::Py_DECREF(name);
                text
            }
        })
    } else {
        None
    };
    update(code, |entry| entry.evaluator = Some(evaluator));
    evaluator
}

/// Whether one of `code`'s `co_names` is a code sink (it calls `exec`, `eval` or `compile`
/// itself).
///
/// # Safety
/// GIL held; `code` a valid code object (kept alive by the cache) or null.
unsafe fn names_sink_of(code: *mut ffi::PyCodeObject) -> bool {
    if code.is_null() {
        return false;
    }
    let cached = CODE_INFO.with(|cache| {
        cache
            .borrow()
            .get(&(code as usize))
            .and_then(|info| info.names_sink)
    });
    if let Some(known) = cached {
        return known;
    }
    // SAFETY: a plain member read; the tuple's items are borrowed while it is held; released.
    let names_sink = unsafe {
        let names = get_attr(code.cast(), Attribute::Names);
        let mut found = false;
        if names.is_null() {
            ffi::PyErr_Clear();
        } else {
            if ffi::PyTuple_Check(names) != 0 {
                for index in 0..ffi::PyTuple_Size(names) {
                    if str_ref(ffi::PyTuple_GetItem(names, index)).is_some_and(names_code_sink) {
                        found = true;
                        break;
                    }
                }
            }
            ffi::Py_DECREF(names);
        }
        found
    };
    update(code, |entry| entry.names_sink = Some(names_sink));
    names_sink
}

/// Whether `code` (with its cached `info`) is a module's body.
///
/// # Safety
/// GIL held; `code` a valid code object.
pub(crate) unsafe fn is_module_body(code: *mut ffi::PyCodeObject, info: &CodeInfo) -> bool {
    if let Some(known) = info.module_body {
        return known;
    }
    // SAFETY: a plain member read of a valid code object; the reference is released.
    let body = unsafe {
        let name = get_attr(code.cast(), Attribute::CodeName);
        if name.is_null() {
            ffi::PyErr_Clear();
            false
        } else {
            let body = str_ref(name) == Some("<module>");
            ffi::Py_DECREF(name);
            body
        }
    };
    update(code, |entry| entry.module_body = Some(body));
    body
}

/// Whether `frame` is executing an import opcode. The offsets of `code`'s import opcodes are read
/// once per code object, not looked up in its bytecode at every event.
///
/// # Safety
/// GIL held; `frame` and `code` valid, `code` the frame's code, `info` its cached entry.
unsafe fn at_import(
    frame: *mut ffi::PyFrameObject,
    code: *mut ffi::PyCodeObject,
    info: &CodeInfo,
) -> bool {
    // SAFETY: lasti is read from a valid frame (caller); the rest is `import_at`'s contract.
    unsafe { import_at(code, info, PyFrame_GetLasti(frame)) }
}

/// Whether the instruction at byte offset `lasti` of `code` is an import opcode (the offsets of
/// a code object's import opcodes are found once and kept).
///
/// # Safety
/// GIL held; `code` a valid code object, `info` its cached entry.
unsafe fn import_at(code: *mut ffi::PyCodeObject, info: &CodeInfo, lasti: c_int) -> bool {
    // SAFETY: the bytecode is a new reference, released.
    unsafe {
        let offsets = match &info.imports {
            Some(offsets) => offsets.clone(),
            None => {
                let bytes = PyCode_GetCode(code);
                let mut found = Vec::new();
                if bytes.is_null() {
                    ffi::PyErr_Clear();
                } else {
                    let size = ffi::PyBytes_Size(bytes);
                    let data = ffi::PyBytes_AsString(bytes);
                    if !data.is_null() && size > 0 {
                        // SAFETY: a bytes object holds `size` bytes at `data`.
                        let code_bytes =
                            std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
                        // 3.11's instructions are two bytes (opcode, argument).
                        for (index, pair) in code_bytes.chunks_exact(2).enumerate() {
                            if matches!(pair[0], IMPORT_NAME | IMPORT_FROM | IMPORT_STAR) {
                                found.push((index * 2) as u32);
                            }
                        }
                    }
                    ffi::Py_DECREF(bytes);
                }
                let offsets: Rc<[u32]> = Rc::from(found);
                update(code, |entry| entry.imports = Some(offsets.clone()));
                offsets
            }
        };
        lasti >= 0 && offsets.binary_search(&(lasti as u32)).is_ok()
    }
}

/// What the hook knows of a code object, cached by address.
///
/// # Safety
/// GIL held; `code` a valid code object.
pub(crate) unsafe fn code_info(settings: &Settings, code: *mut ffi::PyCodeObject) -> CodeInfo {
    let key = code as usize;
    if let Some(info) = CODE_INFO.with(|cache| cache.borrow().get(&key).cloned()) {
        return info;
    }
    // SAFETY: `co_filename` is a plain member read (no audit event, no user code); the new
    // reference is released.
    let filename: Rc<str> = unsafe {
        let name = get_attr(code.cast(), Attribute::Filename);
        if name.is_null() {
            ffi::PyErr_Clear();
            Rc::from("")
        } else {
            let text = str_ref(name).map(Rc::from).unwrap_or_else(|| Rc::from(""));
            ffi::Py_DECREF(name);
            text
        }
    };
    let library = settings.is_trusted_file(&filename);
    let info = CodeInfo {
        library,
        filename,
        names_sink: None,
        evaluator: None,
        named: None,
        lists_known: 0,
        lists: 0,
        module_body: None,
        imports: None,
    };
    // SAFETY: one extra reference, never released: the address stays this code object's.
    unsafe { ffi::Py_INCREF(code.cast()) };
    CODE_INFO.with(|cache| cache.borrow_mut().insert(key, info.clone()));
    info
}
