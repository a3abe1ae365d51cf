//! Small facts about Python names.

/// `__x__` with at least one character between the underscores.
pub fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

/// `_x` or `__x` that is not a dunder.
pub fn is_private(name: &str) -> bool {
    name.starts_with('_') && !is_dunder(name)
}

/// Attributes of frames, tracebacks, generators, coroutines and code objects: the ways from any object
/// to the globals of running code.
pub const FRAME_ATTRIBUTES: &[&str] = &[
    "gi_frame",
    "gi_code",
    "gi_yieldfrom",
    "gi_running",
    "cr_frame",
    "cr_code",
    "cr_await",
    "cr_origin",
    "ag_frame",
    "ag_code",
    "ag_await",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "f_code",
    "f_trace",
    "f_lasti",
    "tb_frame",
    "tb_next",
    "tb_lasti",
    "co_code",
    "co_consts",
    "co_names",
    "co_varnames",
    "co_filename",
    "func_globals",
    "func_code",
    "func_closure",
    "im_func",
    "im_self",
];

pub fn is_frame_attribute(name: &str) -> bool {
    FRAME_ATTRIBUTES.contains(&name)
}

/// The identifier as CPython would see it: NFKC-normalised.
pub fn normalize_identifier(name: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::UnicodeNormalization;
    if name.is_ascii() {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(name.nfkc().collect())
    }
}
