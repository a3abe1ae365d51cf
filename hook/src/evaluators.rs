//! Library string evaluators: functions that run a string as code for whoever calls them
//! (`sympy.sympify`, `parse_expr`, `DataFrame.query`/`eval`, `pd.eval`, patsy's and formulaic's
//! formulas, statsmodels' `from_formula`, jinja2's templates, `lambdify` of a string,
//! `typing.ForwardRef`, `dataclass` field names). They are code generators, so the compile they
//! make is allowed by the caller rules of `audit.rs`; what is judged here is the string they were
//! given. A string the program built at run time is code from a string, the program's (DYN401),
//! however it reached the evaluator (a call, a library passing it on, a callback: `Series.map(sympify)`,
//! a thread); a string the static layer saw as a literal of the program is not.
//!
//! Owns: the program's literals (every string constant of the code warden's bootstrap runs as the
//! program or a session's cell, nested code included: what the static layer judged as literals,
//! after the compiler's constant folding), and the decision at a library's `compile`.
//!
//! The decision: the frames between the compile and the nearest program frame (or the whole stack
//! when none: a thread) are the library's call; the outermost of them that is a listed evaluator
//! with its argument a string (or a class, for field names) is what the program asked to
//! evaluate. Its string is allowed when it is a literal of the program (or part of one: patsy
//! evaluates a literal formula's terms), or a constant of a library code object in that call
//! (the library's own string: `sympy`'s `"from sympy import *"`); a type expression also when it
//! is inert text (no call, no dunder, no lambda: libraries' own annotations). Anything else is
//! DYN401 before the code runs.

use std::collections::HashSet;
use std::sync::Mutex;

use pyo3::ffi;

use crate::python::{
    code_info, evaluator_of, holds_any_in, is_module_body, text_of, PyCode_Type, PyFrame_GetBack,
    PyFrame_GetLocals,
};
use crate::rules::{Denial, Rule};
use crate::settings::{EvaluatorKind, Settings};

/// The program's string literals (and a session's cells').
static LITERALS: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Literals kept at most (a program's constants are bounded by its source's size: SYN004).
const MAX_LITERALS: usize = 200_000;

/// Deepest walk (as `python::asker`).
const MAX_DEPTH: usize = 256;

/// Nesting of code objects walked for constants.
const MAX_NESTING: usize = 64;

/// Records the string constants of `code` (a code object warden's bootstrap runs as the program or
/// a cell) and of the code nested in it.
///
/// # Safety
/// GIL held; `code` null or a valid reference.
pub unsafe fn record_literals(code: *mut ffi::PyObject) {
    let mut found = Vec::new();
    // SAFETY: the caller's guarantees.
    unsafe { constants(code, 0, &mut found) };
    let Ok(mut literals) = LITERALS.lock() else {
        return;
    };
    let literals = literals.get_or_insert_with(HashSet::new);
    for text in found {
        if literals.len() >= MAX_LITERALS {
            break;
        }
        literals.insert(text);
    }
}

/// # Safety
/// GIL held; `object` null or a valid reference.
unsafe fn constants(object: *mut ffi::PyObject, depth: usize, found: &mut Vec<String>) {
    // SAFETY: types are checked before members are read; new references are released.
    unsafe {
        if object.is_null() || depth > MAX_NESTING {
            return;
        }
        if ffi::PyUnicode_Check(object) != 0 {
            if let Some(text) = text_of(object) {
                found.push(text);
            }
            return;
        }
        // Constant tuples and frozensets (`x in ("a", "b")`) hold literals too.
        if ffi::PyTuple_Check(object) != 0 {
            for index in 0..ffi::PyTuple_Size(object) {
                constants(ffi::PyTuple_GetItem(object, index), depth + 1, found);
            }
            return;
        }
        if ffi::PyFrozenSet_Check(object) != 0 {
            let items = ffi::PySequence_Tuple(object);
            if items.is_null() {
                ffi::PyErr_Clear();
                return;
            }
            constants(items, depth + 1, found);
            ffi::Py_DECREF(items);
            return;
        }
        if ffi::Py_TYPE(object) != std::ptr::addr_of_mut!(PyCode_Type) {
            return;
        }
        let items = crate::python::get_attr(object, crate::python::Attribute::Consts);
        if items.is_null() {
            ffi::PyErr_Clear();
            return;
        }
        constants(items, depth + 1, found);
        ffi::Py_DECREF(items);
    }
}

/// Whether `text` is a literal of the program, or part of one.
fn program_literal(text: &str) -> bool {
    let Ok(literals) = LITERALS.lock() else {
        return false;
    };
    let Some(literals) = literals.as_ref() else {
        return false;
    };
    literals.contains(text) || (!text.is_empty() && literals.iter().any(|l| l.contains(text)))
}

/// Python's keywords: a field name that is one would be a syntax error in the generated code, or
/// change its meaning.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// One evaluator frame found on the stack.
struct Found {
    frame: *mut ffi::PyFrameObject,
    evaluator: usize,
    /// Its caller is the program (or no Python frame).
    called_by_program: bool,
}

/// The decision at a library's `compile` (already allowed as a code generator's): `Some` when
/// what it compiles comes from a string or class the program built at run time.
///
/// # Safety
/// GIL held.
pub unsafe fn check_compile(s: &Settings) -> Option<Denial> {
    if s.policy.string_evaluators.is_empty() {
        return None;
    }
    let mut found: Vec<Found> = Vec::new();
    let mut codes: Vec<*mut ffi::PyObject> = Vec::new();
    // SAFETY: PyEval_GetFrame returns a borrowed frame (or null) we take a reference to; each frame
    // and code reference taken is kept in `found`/`codes` or released once, and all are released
    // before returning.
    unsafe {
        let mut frame = ffi::PyEval_GetFrame();
        if frame.is_null() {
            return None;
        }
        ffi::Py_INCREF(frame.cast());
        // The evaluator frame just above, waiting to learn whether its caller is the program.
        let mut pending: Option<usize> = None;
        for _ in 0..MAX_DEPTH {
            let code = ffi::PyFrame_GetCode(frame);
            let info = code_info(s, code);
            if let Some(index) = pending.take() {
                found[index].called_by_program = !info.library;
            }
            if !info.library {
                // The program's frame: the call above it is what the program asked for.
                ffi::Py_DECREF(code.cast());
                ffi::Py_DECREF(frame.cast());
                frame = std::ptr::null_mut();
                break;
            }
            // A library module's body being imported: what it compiles from here up is its own
            // (a namedtuple or dataclass it defines); the program's string is compiled after the
            // import returns, with no module body between.
            if is_module_body(code, &info) {
                ffi::Py_DECREF(code.cast());
                ffi::Py_DECREF(frame.cast());
                release(found, codes);
                return None;
            }
            codes.push(code.cast());
            let back = PyFrame_GetBack(frame);
            match evaluator_of(s, code, &info) {
                Some(evaluator) => {
                    // No Python frame below: as the program's.
                    found.push(Found {
                        frame,
                        evaluator,
                        called_by_program: true,
                    });
                    pending = Some(found.len() - 1);
                }
                None => ffi::Py_DECREF(frame.cast()),
            }
            frame = back;
            if frame.is_null() {
                break;
            }
        }
        if !frame.is_null() {
            ffi::Py_DECREF(frame.cast());
        }
        if found.is_empty() {
            release(found, codes);
            return None;
        }
        let denial = judge(s, &found, &codes);
        release(found, codes);
        denial
    }
}

/// Releases the frame and code references a walk took.
///
/// # Safety
/// GIL held; each reference owned by the caller.
unsafe fn release(found: Vec<Found>, codes: Vec<*mut ffi::PyObject>) {
    // SAFETY: each is a reference the walk took and still owns.
    unsafe {
        for entry in found {
            ffi::Py_DECREF(entry.frame.cast());
        }
        for code in codes {
            ffi::Py_DECREF(code);
        }
    }
}

/// Judges the outermost evaluator frame whose argument is what it evaluates.
///
/// # Safety
/// GIL held; every frame in `found` and code in `codes` valid.
unsafe fn judge(s: &Settings, found: &[Found], codes: &[*mut ffi::PyObject]) -> Option<Denial> {
    for entry in found.iter().rev() {
        let evaluator = &s.policy.string_evaluators[entry.evaluator];
        if evaluator.direct && !entry.called_by_program {
            continue;
        }
        // SAFETY: a valid frame (caller); the locals dict is a new reference, released below.
        let locals = unsafe { PyFrame_GetLocals(entry.frame) };
        if locals.is_null() {
            // SAFETY: GIL held.
            unsafe { ffi::PyErr_Clear() };
            continue;
        }
        let name = std::ffi::CString::new(evaluator.argument.as_str()).unwrap_or_default();
        // SAFETY: `locals` is a valid mapping; the item is a new reference or null.
        let value = unsafe { ffi::PyMapping_GetItemString(locals, name.as_ptr()) };
        // SAFETY: as above.
        unsafe { ffi::Py_DECREF(locals) };
        if value.is_null() {
            // SAFETY: GIL held.
            unsafe { ffi::PyErr_Clear() };
            continue;
        }
        let what = format!("{} ({})", evaluator.function, evaluator.file);
        // SAFETY: `value` is a valid new reference, released after the judgement.
        let verdict = unsafe {
            let verdict = match evaluator.kind {
                EvaluatorKind::Fields => Some(fields(value, &what)),
                EvaluatorKind::Code | EvaluatorKind::Type => {
                    if ffi::PyUnicode_Check(value) != 0 {
                        let text = text_of(value).unwrap_or_default();
                        Some(string(&text, evaluator.kind, codes, &what))
                    } else {
                        None
                    }
                }
            };
            ffi::Py_DECREF(value);
            verdict
        };
        if let Some(verdict) = verdict {
            return verdict;
        }
    }
    None
}

/// A string given to an evaluator.
///
/// # Safety
/// GIL held; every code object in `codes` valid.
unsafe fn string(
    text: &str,
    kind: EvaluatorKind,
    codes: &[*mut ffi::PyObject],
    what: &str,
) -> Option<Denial> {
    if program_literal(text) || (kind == EvaluatorKind::Type && crate::rules::inert(text)) {
        return None;
    }
    // SAFETY: the caller's guarantees.
    if unsafe { library_constant(text, codes) } {
        return None;
    }
    let shown: String = text.chars().take(60).collect();
    let ellipsis = if text.chars().count() > 60 { "…" } else { "" };
    Some(Denial::new(
        Rule::DynamicCode,
        format!(
            "{what} evaluates a string built at run time as code ({shown:?}{ellipsis}; only the program's literals are evaluated)"
        ),
    ))
}

/// Whether `text` is one of the constants of a library code object in the call.
///
/// # Safety
/// GIL held; every code object in `codes` valid.
unsafe fn library_constant(text: &str, codes: &[*mut ffi::PyObject]) -> bool {
    codes.iter().any(|&code| {
        // SAFETY: the caller's guarantees.
        unsafe { holds_any_in(code.cast(), &[crate::python::Attribute::Consts], &[text]) }
    })
}

/// A class whose annotation names become generated code: every name must be an identifier and no
/// keyword (`dataclass` writes them into `__init__`'s source as they are).
///
/// # Safety
/// GIL held; `class` a valid reference.
unsafe fn fields(class: *mut ffi::PyObject, what: &str) -> Option<Denial> {
    let deny = |name: &str| {
        Some(Denial::new(
            Rule::DynamicCode,
            format!(
                "{what} writes the field name {name:?} into generated code (field names must be identifiers)"
            ),
        ))
    };
    // SAFETY: attribute and item reads on valid objects; new references released. A class with
    // no `__annotations__` of its own has no fields to write.
    unsafe {
        let namespace = crate::python::get_attr(class, crate::python::Attribute::Dict);
        if namespace.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let annotations = ffi::PyMapping_GetItemString(namespace, c"__annotations__".as_ptr());
        ffi::Py_DECREF(namespace);
        if annotations.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        // Only a plain dict is read (its keys run no code of the program's; a mapping of another
        // type could answer this read and dataclasses' differently).
        if ffi::PyDict_CheckExact(annotations) == 0 {
            ffi::Py_DECREF(annotations);
            return deny("<annotations that are not a dict>");
        }
        let keys = ffi::PyDict_Keys(annotations);
        ffi::Py_DECREF(annotations);
        if keys.is_null() {
            ffi::PyErr_Clear();
            return deny("<annotations that are not a dict>");
        }
        let mut verdict = None;
        let count = ffi::PyList_Size(keys);
        for index in 0..count.max(0) {
            let key = ffi::PyList_GetItem(keys, index);
            if key.is_null() || ffi::PyUnicode_Check(key) == 0 {
                ffi::PyErr_Clear();
                verdict = deny("<a name that is no str>");
                break;
            }
            let text = text_of(key).unwrap_or_default();
            let identifier = ffi::PyUnicode_IsIdentifier(key) == 1;
            if !identifier || KEYWORDS.contains(&text.as_str()) {
                verdict = deny(&text);
                break;
            }
        }
        ffi::Py_DECREF(keys);
        verdict
    }
}
