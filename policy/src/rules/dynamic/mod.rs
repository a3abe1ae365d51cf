//! Dynamic-code rules: running strings, importing by name, reflection and class-creation hooks.

pub(crate) mod class_hook;
pub(crate) mod computed_code_string;
pub(crate) mod dynamic_code;
pub(crate) mod dynamic_import;
pub(crate) mod reflection;

/// True when `path` is `pattern` or below it (`timeit` matches `timeit.timeit`).
pub(crate) fn under(path: &str, pattern: &str) -> bool {
    // Most names share not even the first byte with a given pattern: no comparison for them.
    if let (Some(first), Some(wanted)) = (path.as_bytes().first(), pattern.as_bytes().first()) {
        if first != wanted {
            return false;
        }
    }
    path == pattern
        || (path.starts_with(pattern) && path.as_bytes().get(pattern.len()) == Some(&b'.'))
}
