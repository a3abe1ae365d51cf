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

/// The names of CPython 3.11's `builtins` module (`dir(builtins)`): what an unbound name in a module or
/// class body falls back to.
pub const BUILTIN_NAMES: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// True when `name` is one of [`BUILTIN_NAMES`].
pub fn is_builtin(name: &str) -> bool {
    BUILTIN_NAMES.binary_search(&name).is_ok()
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

/// Second paths to banned objects, found by identity: `warden runtime check` imports the allowed
/// packages inside the jail and records every attribute path under them that is the same object (`is`)
/// as a name the policy bans (`seaborn.utils.urlopen` is `urllib.request.urlopen`). The checker judges
/// such a path as the banned name. Empty unless an index for the policy and its runtime was loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aliases {
    /// Alias path → the banned name it is (looked up once per prefix of every reference: hashed).
    map: foldhash::HashMap<String, String>,
}

impl Aliases {
    /// An index from `(alias, banned name)` pairs (dotted paths).
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            map: pairs.into_iter().collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The banned name `path` reaches, when a prefix of it (the longest) is an alias:
    /// `numpy.lib.npyio.pickle.load` → `(numpy.lib.npyio.pickle, pickle.load)`.
    pub fn resolve(&self, path: &str) -> Option<(&str, String)> {
        if self.map.is_empty() {
            return None;
        }
        let mut end = path.len();
        loop {
            let prefix = &path[..end];
            if let Some((alias, banned)) = self.map.get_key_value(prefix) {
                return Some((alias.as_str(), format!("{banned}{}", &path[end..])));
            }
            end = prefix.rfind('.')?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_builtin, Aliases, BUILTIN_NAMES};

    #[test]
    fn an_alias_resolves_by_its_longest_prefix_and_keeps_the_rest() {
        let aliases = Aliases::new([
            ("numpy.lib.npyio.pickle".to_owned(), "pickle".to_owned()),
            (
                "seaborn.utils.urlopen".to_owned(),
                "urllib.request.urlopen".to_owned(),
            ),
        ]);
        assert_eq!(
            aliases.resolve("numpy.lib.npyio.pickle.load"),
            Some(("numpy.lib.npyio.pickle", "pickle.load".to_owned()))
        );
        assert_eq!(
            aliases.resolve("seaborn.utils.urlopen"),
            Some(("seaborn.utils.urlopen", "urllib.request.urlopen".to_owned()))
        );
        assert_eq!(aliases.resolve("seaborn.utils"), None);
        assert_eq!(aliases.resolve("seaborn.utils.urlopener"), None);
        assert_eq!(Aliases::default().resolve("numpy.lib.npyio.pickle"), None);
    }

    #[test]
    fn builtin_names_are_sorted_for_binary_search() {
        assert!(BUILTIN_NAMES.windows(2).all(|pair| pair[0] < pair[1]));
        for name in [
            "exec",
            "eval",
            "__import__",
            "open",
            "getattr",
            "ArithmeticError",
            "zip",
        ] {
            assert!(is_builtin(name), "{name}");
        }
        for name in ["helper", "builtins", "__builtins__", "os"] {
            assert!(!is_builtin(name), "{name}");
        }
    }
}
