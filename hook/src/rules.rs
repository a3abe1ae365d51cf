//! The pure half of the hook's decisions: rule ids, denial messages, module patterns and paths.
//!
//! Owns: what a denial says (the message format the gateway parses back into the result record's
//! `stopped_by`), module-pattern matching with the static layer's semantics, lexical path
//! normalisation and root checks. Does not own: reading Python objects (`audit.rs`).

/// One of the runtime layer's rules. Where the static layer has a rule for the same thing, the id is
/// the static rule's, so a model sees one name for one restriction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// An import the policy does not allow (static IMP101).
    Import,
    /// Code from strings: exec/eval/compile reached from the program (static DYN401).
    DynamicCode,
    /// Code objects and functions built by hand (static DYN401's code-object part).
    CodeObject,
    /// Frames, tracebacks' frames, code objects, gc and tracing (static ATTR303).
    Introspection,
    /// Reading outside the read roots (static FILE701).
    Read,
    /// Writing outside the write roots (static FILE702).
    Write,
    /// A path that is not a string (static FILE704's runtime half).
    PathType,
    /// Starting or signalling a process.
    Process,
    /// Sockets when the network is off.
    Network,
    /// ctypes and dlopen.
    Native,
    /// Unpickling and marshal.
    Deserialise,
    /// Adding audit hooks.
    AuditHook,
}

impl Rule {
    pub fn id(self) -> &'static str {
        match self {
            Rule::Import => "IMP101",
            Rule::DynamicCode | Rule::CodeObject => "DYN401",
            Rule::Introspection => "ATTR303",
            Rule::Read => "FILE701",
            Rule::Write => "FILE702",
            Rule::PathType => "FILE704",
            Rule::Process => "PROC801",
            Rule::Network => "NET802",
            Rule::Native => "NAT803",
            Rule::Deserialise => "DES804",
            Rule::AuditHook => "AUD805",
        }
    }

    /// What the program should do instead.
    pub fn hint(self) -> &'static str {
        match self {
            Rule::Import => "import only the modules the policy allows",
            Rule::DynamicCode => "write the code directly instead of running strings",
            Rule::CodeObject => "define functions with def",
            Rule::Introspection => "programs cannot inspect the interpreter's frames or objects",
            Rule::Read => "read only the input files in the work dir",
            Rule::Write => "write only inside the policy's write roots",
            Rule::PathType => "pass paths as plain strings",
            Rule::Process => "compute in Python; programs cannot start processes",
            Rule::Network => "the network is off; read the input files instead",
            Rule::Native => "native code is not available; use numpy",
            Rule::Deserialise => "exchange data as CSV, JSON or Parquet; unpickling runs code",
            Rule::AuditHook => "programs cannot add audit hooks",
        }
    }
}

/// A denied event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub rule: Rule,
    /// What was attempted, in words (`reading /etc/passwd, outside the read roots`).
    pub what: String,
}

impl Denial {
    pub fn new(rule: Rule, what: impl Into<String>) -> Self {
        Denial {
            rule,
            what: what.into(),
        }
    }

    /// The exception's message. Its start, `warden[RULE] EVENT: `, is what the gateway parses
    /// (`gateway/src/python_error.rs`); the rest is for the model. A write's hint names where the
    /// policy lets the program write (`write_roots`, absolute as the jail sees them).
    pub fn message(&self, event: &str, policy: &str, write_roots: &[String]) -> String {
        let hint = match self.rule {
            Rule::Write => write_hint(write_roots),
            rule => rule.hint().to_owned(),
        };
        format!(
            "warden[{}] {event}: {} (policy {policy}, runtime layer) — hint: {hint}",
            self.rule.id(),
            self.what,
        )
    }
}

/// Where the policy lets the program write, in words: `/work` is the work dir, where relative paths
/// lead; no roots at all means no file may be written.
pub fn write_hint(write_roots: &[String]) -> String {
    if write_roots.is_empty() {
        return "this policy lets the program write no files; print the results to standard output"
            .to_owned();
    }
    let roots: Vec<String> = write_roots
        .iter()
        .map(|root| {
            if root == WORKDIR {
                format!("{WORKDIR} (the work dir: relative paths)")
            } else {
                root.clone()
            }
        })
        .collect();
    format!(
        "this policy lets the program write only under {}",
        roots.join(", ")
    )
}

/// The work dir as the jail sees it.
const WORKDIR: &str = "/work";

/// Module patterns (`pkg` exactly, `pkg.*` its submodules) made ready for lookups: a module is
/// matched by its name and its dotted prefixes in two sets, not by walking the patterns (the
/// runtime judges every import this way).
#[derive(Debug, Clone, Default)]
pub struct Modules {
    exact: FastSet,
    packages: FastSet,
}

/// The hasher of the hook's own tables of names and paths (module names, directories): a word at a
/// time, rotate, xor and multiply (the scheme of rustc's FxHash), several times cheaper than the
/// standard library's SipHash on the short keys the hook looks up on every import and open. It does
/// not resist keys chosen to collide: a program that makes these lookups slow slows only its own
/// run, inside its own CPU limit.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut buffer = [0u8; 8];
            buffer.copy_from_slice(word);
            self.add(u64::from_le_bytes(buffer));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut buffer = [0u8; 8];
            buffer[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buffer));
        }
    }
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }
    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }
}

/// A set of strings hashed with [`FastHasher`].
pub type FastSet = std::collections::HashSet<String, std::hash::BuildHasherDefault<FastHasher>>;

/// A map from strings hashed with [`FastHasher`].
pub type FastMap<V> =
    std::collections::HashMap<String, V, std::hash::BuildHasherDefault<FastHasher>>;

impl Modules {
    pub fn new(patterns: &[String]) -> Modules {
        let mut modules = Modules::default();
        for pattern in patterns {
            match pattern.strip_suffix(".*") {
                Some(base) => modules.packages.insert(base.to_owned()),
                None => modules.exact.insert(pattern.clone()),
            };
        }
        modules
    }

    /// Whether a pattern matches `module`: `pkg` matches itself (and, with `submodules`, what is
    /// below it), `pkg.*` what is below `pkg`.
    pub fn matches(&self, module: &str, submodules: bool) -> bool {
        if self.exact.contains(module) {
            return true;
        }
        module.bytes().enumerate().any(|(index, byte)| {
            byte == b'.' && {
                let prefix = &module[..index];
                self.packages.contains(prefix) || (submodules && self.exact.contains(prefix))
            }
        })
    }

    /// Whether this denylist denies `module`: the module itself, its submodules, and its private
    /// twins by rule — a module whose name, with the leading underscore of one of its components
    /// removed, is denied (`_sqlite3` when `sqlite3` is, `_socket` for `socket`, `pyarrow._fs` for
    /// `pyarrow.fs`, `pyarrow._flight.x` for `pyarrow.flight`). A C extension behind a denied
    /// module does what the module does, and no list has to name it.
    pub fn denied(&self, module: &str) -> bool {
        if self.matches(module, true) {
            return true;
        }
        if !module.contains('_') {
            return false;
        }
        // A component starting with one `_` (not `__`): the name without that underscore.
        let mut start = 0;
        for part in module.split('.') {
            let at = start;
            start += part.len() + 1;
            let Some(public) = part.strip_prefix('_') else {
                continue;
            };
            if public.is_empty() || public.starts_with('_') {
                continue;
            }
            let twin = format!("{}{}", &module[..at], &module[at + 1..]);
            if self.matches(&twin, true) {
                return true;
            }
        }
        false
    }
}

/// Whether `path` is absolute and already normalised: no `.` or `..` component, no repeated or
/// trailing `/` (what [`normalise`] would give back unchanged).
pub fn is_plain_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'/') {
        return false;
    }
    if bytes.len() == 1 {
        return true;
    }
    // One pass: after each `/` comes a component that is not empty, `.` or `..`.
    let at = |index: usize| bytes.get(index).copied();
    bytes.iter().enumerate().all(|(index, &byte)| {
        byte != b'/'
            || !matches!(
                (at(index + 1), at(index + 2), at(index + 3)),
                (None | Some(b'/'), _, _)
                    | (Some(b'.'), None | Some(b'/'), _)
                    | (Some(b'.'), Some(b'.'), None | Some(b'/'))
            )
    })
}

/// `path` made absolute against `cwd` and normalised lexically (`.`, `..`, repeated `/`). Symlinks
/// are not followed: Landlock judges the real tree.
pub fn normalise(path: &str, cwd: &str) -> String {
    let joined;
    let full = if path.starts_with('/') {
        path
    } else {
        joined = format!("{cwd}/{path}");
        &joined
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in full.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The path with every symbolic link resolved, as far as it exists (`/work/link/new.txt` with
/// `/work/link` → `/root` is `/root/new.txt`); `None` when nothing of it exists or nothing was a link.
pub fn real_path(path: &str) -> Option<String> {
    let mut existing = std::path::Path::new(path);
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut real = real;
            for part in rest.iter().rev() {
                real.push(part);
            }
            let real = real.to_string_lossy().into_owned();
            return (real != path).then_some(real);
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// The process's own `/proc/<pid>` as `/proc/self` (what `/proc/self` resolves to), so that a
/// real path there is judged like the path the runtime reads by (`/proc/self/status`).
pub fn as_proc_self(path: String, pid: u32) -> String {
    if !path.starts_with("/proc/") {
        return path;
    }
    let own = format!("/proc/{pid}");
    match path.strip_prefix(&own) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("/proc/self{rest}"),
        _ => path,
    }
}

/// Where a symbolic link at the normalised path `link` points: `target` resolved against the link's
/// directory (`os.symlink("../etc", "/work/data")` points at `/etc`).
pub fn link_target(target: &str, link: &str) -> String {
    let base = match link.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((dir, _)) => dir,
    };
    normalise(target, base)
}

/// Whether the normalised `path` is one of `roots` or below one.
pub fn under(roots: &[String], path: &str) -> bool {
    roots.iter().any(|root| {
        let root = root.trim_end_matches('/');
        root.is_empty()
            || path == root
            || path
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Open flags that make an `open` a write.
pub const WRITE_FLAGS: i64 = (libc_flags::O_WRONLY
    | libc_flags::O_RDWR
    | libc_flags::O_CREAT
    | libc_flags::O_TRUNC
    | libc_flags::O_APPEND) as i64;

/// Whether an `open` mode string writes.
pub fn mode_writes(mode: &str) -> bool {
    mode.contains(['w', 'a', 'x', '+'])
}

/// Whether `os.mknod`'s `mode` makes a character or block device (the file type bits; a mode of
/// none or of a regular file, FIFO or socket makes no device).
pub fn makes_device(mode: i64) -> bool {
    const S_IFMT: i64 = 0o170000;
    const S_IFCHR: i64 = 0o020000;
    const S_IFBLK: i64 = 0o060000;
    matches!(mode & S_IFMT, S_IFCHR | S_IFBLK)
}

/// Linux's open flags (the same on every architecture warden supports).
mod libc_flags {
    pub const O_WRONLY: i32 = 0o1;
    pub const O_RDWR: i32 = 0o2;
    pub const O_CREAT: i32 = 0o100;
    pub const O_TRUNC: i32 = 0o1000;
    pub const O_APPEND: i32 = 0o2000;
}

/// The functions that hand out a frame (`sys._getframe` and the `inspect` helpers around it): a
/// library whose code names one of them calls `sys._getframe` for itself.
pub const FRAME_FUNCTIONS: [&str; 6] = [
    "_getframe",
    "currentframe",
    "stack",
    "trace",
    "getouterframes",
    "getframeinfo",
];

/// The other introspection functions a library may call for itself (`sys.settrace`, `gc.*`…).
pub const INTROSPECTION_FUNCTIONS: [&str; 8] = [
    "_current_frames",
    "_current_exceptions",
    "settrace",
    "setprofile",
    "get_objects",
    "get_referrers",
    "get_referents",
    "breakpoint",
];

/// Attributes whose reads CPython audits (`object.__getattr__`) and that lead to frames or code.
/// In 3.11, `f_back`, `f_globals`, `f_locals` and `f_builtins` raise no event: the choke points are
/// where frames are obtained.
pub const FRAME_ATTRIBUTES: [&str; 9] = [
    "tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_code", "gi_code", "cr_code", "ag_code",
    "__code__",
];

/// The path of a SQLite `file:` URI (`file:data.db?mode=ro`, `file:///work/x.db`, `file://localhost/x`),
/// as SQLite opens it; `None` for one SQLite would read differently from this (a percent escape, an
/// authority other than `localhost`).
pub fn sqlite_uri_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file:")?;
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = &rest[..end];
    if rest.contains('%') {
        return None;
    }
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let slash = authority_and_path
                .find('/')
                .unwrap_or(authority_and_path.len());
            let (authority, path) = authority_and_path.split_at(slash);
            if !(authority.is_empty() || authority == "localhost") {
                return None;
            }
            path
        }
        None => rest,
    };
    Some(path.to_owned())
}

/// Whether a SQLite `file:` URI opens its database only for reading (`mode=ro`, `immutable=1`).
pub fn sqlite_uri_reads_only(uri: &str) -> bool {
    let query = uri.split_once('?').map_or("", |(_, query)| query);
    let query = query.split_once('#').map_or(query, |(query, _)| query);
    query
        .split('&')
        .any(|option| option == "mode=ro" || option == "immutable=1")
}

/// Whether a name a code object uses (one of its `co_names`) is a code sink: `exec`, `eval`,
/// `compile`, or a library's alias of one with underscores around it (mpmath's `exec_`, `_compile`).
/// A library function that names a sink calls it for itself (a code generator); one that does not
/// and still reaches `exec` is running a callable the program handed it (`Series.map(eval)`).
pub fn names_code_sink(name: &str) -> bool {
    matches!(name.trim_matches('_'), "exec" | "eval" | "compile")
}

/// Text that cannot run anything of its own when evaluated: no call (an opening parenthesis
/// after a name, a closing bracket or a quote), no dunder, no `lambda`, no walrus, no statement
/// separator. Judged on the raw text, quotes included (an f-string's braces are code).
pub fn inert(text: &str) -> bool {
    if text.contains("__")
        || text.contains("lambda")
        || text.contains(":=")
        || text.contains(';')
        || text.contains('\n')
        || text.contains('\r')
        || text.contains('\\')
    {
        return false;
    }
    let bytes = text.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        if byte != b'(' {
            continue;
        }
        let before = bytes[..index]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace())
            .copied();
        if before.is_some_and(|b| {
            b.is_ascii_alphanumeric()
                || matches!(b, b'_' | b')' | b']' | b'}' | b'\'' | b'"')
                || !b.is_ascii()
        }) {
            return false;
        }
    }
    true
}
