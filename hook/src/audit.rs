//! The audit hook: one decision per event, whoever reached the sink and by whatever path.
//!
//! Owns: the table of events and what each is checked against ([`decide`]), and the C function
//! registered with `PySys_AddAuditHook` ([`hook`]). Events are attributed to whoever asked for them
//! (`python::asker`): library code running its own `import` statements and code generators
//! (dataclasses, namedtuple) keeps working, while the same sinks reached from the program, or from a
//! library calling back into something the program passed it (`map(exec, …)`), are denied.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use pyo3::ffi;

use crate::python::{
    arg, asker, demote, import_entry, int_of, module_code_file, path_arg, text_of,
};
use crate::rules::{
    link_target, mode_writes, normalise, under, Denial, Rule, FRAME_ATTRIBUTES, WRITE_FLAGS,
};
use crate::settings::{Mode, Settings};

/// The settings, set once by `install`.
pub static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// `warden.PolicyViolation` (one reference, never released), or null before `install`.
pub static VIOLATION: AtomicPtr<ffi::PyObject> = AtomicPtr::new(std::ptr::null_mut());

/// Sets `warden.PolicyViolation(message)` as the current Python error.
///
/// # Safety
/// GIL held.
pub unsafe fn raise(message: &str) {
    let text = CString::new(message.replace('\0', " "))
        .unwrap_or_else(|_| CString::from(c"warden: denied by the runtime layer"));
    let class = VIOLATION.load(Ordering::Acquire);
    // SAFETY: `class` is a live exception type (kept alive forever) or we fall back to a builtin.
    unsafe {
        ffi::PyErr_SetString(
            if class.is_null() {
                ffi::PyExc_PermissionError
            } else {
                class
            },
            text.as_ptr(),
        )
    };
}

/// Denials written to standard error so far (at most [`MAX_NOTICES`]).
static NOTICES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
const MAX_NOTICES: usize = 16;

/// Writes the denial to the process's standard error (fd 2, past Python's `sys.stderr`), as the
/// last line of a traceback would read: `warden.PolicyViolation: warden[RULE] event: …`. A library
/// that catches the exception and fails in its own words (sklearn's dataset cache, numpy's
/// `DataSource`, `linecache`) still leaves the denial where the result record's `stopped_by` reads
/// it, and the user sees what the runtime layer refused. (Not for processes: see the caller.)
fn notice(message: &str) {
    if NOTICES.fetch_add(1, Ordering::Relaxed) >= MAX_NOTICES {
        return;
    }
    use std::io::Write;
    let line = format!("warden.PolicyViolation: {}\n", message.replace('\n', " "));
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Events the hook never looks at, rejected before anything else (the most frequent ones).
fn ignored(event: &[u8]) -> bool {
    matches!(
        event,
        b"builtins.id"
            | b"os.putenv"
            | b"os.unsetenv"
            | b"os.walk"
            | b"sys._getframemodulename"
            | b"cpython.run_command"
            | b"cpython.run_file"
    )
}

/// The hook registered with `PySys_AddAuditHook`.
///
/// # Safety
/// Called by CPython with the GIL held, a NUL-terminated event name and its argument tuple.
pub unsafe extern "C" fn hook(
    event: *const c_char,
    args: *mut ffi::PyObject,
    _user_data: *mut c_void,
) -> c_int {
    // SAFETY: CPython passes a valid NUL-terminated name.
    let name = unsafe { CStr::from_ptr(event) }.to_bytes();
    if ignored(name) {
        return 0;
    }
    let (Some(settings), Ok(name)) = (SETTINGS.get(), std::str::from_utf8(name)) else {
        return 0;
    };
    if name == "cpython._PySys_ClearAuditHooks" {
        // SAFETY: GIL held (CPython calls hooks with it).
        unsafe { crate::watchdog::clearing() };
        return 0;
    }
    // An event can be raised while an exception is being handled: keep it, decide, restore it.
    let (mut kind, mut value, mut traceback) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    // SAFETY: GIL held; fetch/restore move the references in and out unchanged.
    let denial = unsafe {
        ffi::PyErr_Fetch(&mut kind, &mut value, &mut traceback);
        let denial = decide(settings, name, args);
        ffi::PyErr_Restore(kind, value, traceback);
        denial
    };
    let Some(denial) = denial else {
        if name == "import" {
            // SAFETY: GIL held; `args` is the event's tuple.
            unsafe { crate::hidden::grant(args) };
        }
        return 0;
    };
    match settings.policy.mode {
        Mode::Log => {
            if name == "import" {
                // SAFETY: GIL held; `args` is the event's tuple.
                unsafe { crate::hidden::grant(args) };
            }
            let line = serde_json::json!({
                "warden_hook": "would-deny", "rule": denial.rule.id(), "event": name,
                "what": denial.what,
            });
            eprintln!("{line}");
            0
        }
        Mode::Enforce => {
            let message =
                denial.message(name, &settings.policy.policy, &settings.policy.write_roots);
            // Libraries probe for programs (matplotlib's `fc-list`, loky's `lscpu`) and go on
            // without them: a refused process says nothing on standard error.
            if denial.rule != Rule::Process {
                notice(&message);
            }
            // SAFETY: GIL held.
            unsafe { raise(&message) };
            -1
        }
    }
}

/// The decision for one event (`None`: allowed).
///
/// # Safety
/// GIL held; `args` the event's argument tuple.
unsafe fn decide(s: &Settings, event: &str, args: *mut ffi::PyObject) -> Option<Denial> {
    let p = &s.policy;
    // SAFETY (whole body): GIL held; every argument is read through the checked helpers.
    unsafe {
        match event {
            // Processes: whoever asks. `_posixsubprocess.fork_exec` raises no event; `install`
            // replaces it with a stub that raises.
            "subprocess.Popen" | "os.system" | "os.exec" | "os.spawn" | "os.posix_spawn"
            | "pty.spawn" | "os.startfile" | "os.fork" | "os.forkpty" | "os.kill" | "os.killpg"
            | "os.pidfd_open" => {
                (!p.allow_processes).then(|| Denial::new(Rule::Process, process_words(event, args)))
            }
            // Files: whoever asks (a library reading /etc/passwd for the program still reads it).
            "open" => {
                let write = match (text_of(arg(args, 1)), int_of(arg(args, 2))) {
                    (Some(mode), _) => mode_writes(&mode),
                    (None, Some(flags)) => flags & WRITE_FLAGS != 0,
                    (None, None) => true,
                };
                // `os.open(…, dir_fd=N)`: its guard (`creators.rs`) said which descriptor.
                let path = arg(args, 0);
                let at = crate::creators::OPEN_AT.with(|at| at.get());
                let dir_fd = at.and_then(|(object, fd)| (object == path as usize).then_some(fd));
                planted_bytecode(s, path).or_else(|| check_path_at(s, path, dir_fd, write, "open"))
            }
            "os.listdir" | "os.scandir" | "glob.glob" | "pathlib.Path.glob"
            | "pathlib.Path.rglob" | "os.chdir" => {
                let path = arg(args, 0);
                if path.is_null() || path == ffi::Py_None() {
                    return None; // the working directory
                }
                check_path(s, path, false, event)
            }
            "os.truncate" | "os.setxattr" | "os.removexattr" | "shutil.chown" => {
                check_path(s, arg(args, 0), true, event)
            }
            // Archives: judged at their start (the files they read and write are judged again one
            // by one at `open` and the `os.*` events): `make_archive(base_name, format, root_dir,
            // base_dir)` writes beside `base_name` and reads `root_dir`; `unpack_archive(filename,
            // extract_dir, format)` reads the archive and writes `extract_dir` (None: the working
            // directory, judged by the events that follow).
            "shutil.make_archive" => check_path(s, arg(args, 0), true, event).or_else(|| {
                let root = arg(args, 2);
                (!root.is_null() && root != ffi::Py_None())
                    .then(|| check_path(s, root, false, event))
                    .flatten()
            }),
            "shutil.unpack_archive" => check_path(s, arg(args, 0), false, event).or_else(|| {
                let into = arg(args, 1);
                (!into.is_null() && into != ffi::Py_None())
                    .then(|| check_path(s, into, true, event))
                    .flatten()
            }),
            // A device node gives the device itself, wherever it is made (its guard passes the mode;
            // seccomp and Landlock refuse it too).
            "os.mknod" if int_of(arg(args, 2)).is_some_and(crate::rules::makes_device) => {
                Some(Denial::new(Rule::Write, "creating a device node"))
            }
            // Events that carry `dir_fd` (after the path's other arguments): a relative path is
            // judged against the directory the descriptor is, as the kernel resolves it. Creating a
            // FIFO or a device node is a write (their guards raise `os.mkfifo`, `os.mknod`).
            "os.remove" | "os.rmdir" | "os.mkdir" | "os.chmod" | "os.chown" | "os.utime"
            | "os.mkfifo" | "os.mknod" | "shutil.rmtree" => {
                let at = match event {
                    "os.remove" | "os.rmdir" | "os.mkfifo" | "os.mknod" | "shutil.rmtree" => 1,
                    "os.mkdir" | "os.chmod" => 2,
                    _ => 3,
                };
                check_path_at(s, arg(args, 0), int_of(arg(args, at)), true, event)
            }
            // A link is judged by where it points too: reading or writing through a link in the
            // work dir is reading or writing its target.
            "os.symlink" => check_path_at(s, arg(args, 1), int_of(arg(args, 2)), true, event)
                .or_else(|| check_link_target(s, arg(args, 0), arg(args, 1), event)),
            // A hard link is a second name of the file it links: writing through it writes that
            // file, so the file linked is judged as a write (a read-only file stays unlinkable).
            "os.rename" | "os.link" | "shutil.copyfile" | "shutil.copytree" | "shutil.move"
            | "shutil.copymode" | "shutil.copystat" => {
                let source_writes = matches!(event, "os.rename" | "os.link" | "shutil.move");
                let (from, to) = if matches!(event, "os.rename" | "os.link") {
                    (int_of(arg(args, 2)), int_of(arg(args, 3)))
                } else {
                    (None, None)
                };
                check_path_at(s, arg(args, 0), from, source_writes, event)
                    .or_else(|| check_path_at(s, arg(args, 1), to, true, event))
            }
            // Shared memory and named semaphores are files under `/dev/shm` (their guards raise
            // these events; 3.11 raises none).
            "_posixshmem.shm_open" => {
                let name = text_of(arg(args, 0))?;
                let write = int_of(arg(args, 1)).is_none_or(|flags| flags & WRITE_FLAGS != 0);
                let path = format!("/dev/shm/{}", name.trim_start_matches('/'));
                judge_path(s, &path, None, write, event)
            }
            "_multiprocessing.SemLock" => {
                let name = text_of(arg(args, 0)).unwrap_or_default();
                let path = format!("/dev/shm/sem.{}", name.trim_start_matches('/'));
                judge_path(s, &path, None, true, event)
            }
            // A database file is opened for writing (and made when missing); `:memory:` is no file.
            "sqlite3.connect" => {
                let database = match path_arg(arg(args, 0)) {
                    Ok(Some(database)) => database,
                    Ok(None) => return None,
                    Err(()) => {
                        return Some(Denial::new(
                            Rule::PathType,
                            "sqlite3.connect with a database that is neither str, bytes nor os.PathLike",
                        ))
                    }
                };
                if database.is_empty() || database == ":memory:" {
                    return None;
                }
                // A URI (`file:/path?mode=ro`): its path, a read when the URI says it only reads;
                // one warden cannot read for sure (percent escapes, another host) is refused.
                let (path, write) = if database.starts_with("file:") {
                    match crate::rules::sqlite_uri_path(&database) {
                        Some(path) => (path, !crate::rules::sqlite_uri_reads_only(&database)),
                        None => {
                            return Some(Denial::new(
                                Rule::Write,
                                format!("opening the SQLite database {database:?}, a URI warden does not read"),
                            ))
                        }
                    }
                } else {
                    (database.clone(), true)
                };
                if path.is_empty() || path == ":memory:" {
                    return None;
                }
                judge_path(s, &path, None, write, event)
            }
            "sqlite3.enable_load_extension" | "sqlite3.load_extension" if p.deny_native => {
                let enabling =
                    event == "sqlite3.load_extension" || ffi::PyObject_IsTrue(arg(args, 1)) != 0;
                enabling
                    .then(|| Denial::new(Rule::Native, "loading a native extension into SQLite"))
            }
            // Deserialisation.
            "pickle.find_class" if p.deny_pickle => {
                let module = text_of(arg(args, 0)).unwrap_or_default();
                let name = text_of(arg(args, 1)).unwrap_or_default();
                Some(Denial::new(
                    Rule::Deserialise,
                    format!("unpickling a reference to {module}.{name}"),
                ))
            }
            // An unpickler whose `find_class` is not pickle's own (a subclass's, an instance's):
            // the references it resolves raise no `pickle.find_class`. Raised at `load` by its
            // guard (`types.rs`), with the resolver's name.
            "pickle.Unpickler.find_class" if p.deny_pickle => {
                let resolver = text_of(arg(args, 0)).unwrap_or_default();
                Some(Denial::new(
                    Rule::Deserialise,
                    format!("unpickling references through {resolver}, which raises no pickle.find_class"),
                ))
            }
            "marshal.loads" | "marshal.load" if p.deny_marshal => {
                let who = asker(s, &[]);
                (!who.listed(s, &p.marshal_callers)).then(|| {
                    Denial::new(
                        Rule::Deserialise,
                        format!("marshal data is code (called from {})", who.filename),
                    )
                })
            }
            // Code from strings: the program may not; a library may when it is a code generator
            // (listed, or its code names the sink it calls), not when it runs a callable the
            // program handed it. What a library generates runs as the program's code.
            "exec" | "compile" => {
                let who = asker(s, &[]);
                if !who.library {
                    return Some(Denial::new(Rule::DynamicCode, "running code from a string"));
                }
                if !(who.names_sink() || who.listed(s, &p.code_callers)) {
                    return Some(Denial::new(
                        Rule::DynamicCode,
                        format!(
                            "running code from a string through {} (a callback such as map(exec, …)?)",
                            who.filename
                        ),
                    ));
                }
                // The code warden's bootstrap runs is the program (or a session's cell): its
                // string constants are the literals a library evaluator may evaluate.
                if event == "exec" && *who.filename == *s.interpreter.bootstrap {
                    crate::evaluators::record_literals(arg(args, 0));
                }
                // A library evaluating a string as code (sympify, DataFrame.query, a formula, a
                // forward reference, a dataclass's field names): the string must be a literal.
                if event == "compile" {
                    if let Some(denial) = crate::evaluators::check_compile(s) {
                        return Some(denial);
                    }
                }
                // What a library runs is judged as its author's code by file name: code it
                // compiled under a library file's name (a template file, or a name the program
                // chose) is judged as the program's from now on. The import system's is not.
                if event == "exec" && !who.filename.starts_with("<frozen importlib.") {
                    demote(s, arg(args, 0));
                }
                // A module body the import system runs is an import, however it was asked for
                // (`_find_and_load`, `module_from_spec` + `exec_module`, `load_module`): the
                // interpreter raises `import` only for its own import statement.
                // Called by the program through an internal (`exec_module`, `load_module`,
                // `_call_with_frames_removed`) rather than an import statement or a C import
                // (`_find_and_load`), the import system runs code the program chose (unmarshalled
                // from its bytes under any file name): it runs as the program's.
                if event == "exec" && who.filename.starts_with("<frozen importlib._bootstrap") {
                    let (who, entry) = import_entry(s, &p.import_machinery);
                    if !who.library && !who.importing() && !IMPORT_ENTRIES.contains(&entry.as_str())
                    {
                        demote(s, arg(args, 0));
                    }
                    return check_module_body(s, arg(args, 0), &who);
                }
                None
            }
            "code.__new__" | "function.__new__" => {
                let who = asker(s, &[]);
                (!who.library)
                    .then(|| Denial::new(Rule::CodeObject, "building code objects by hand"))
            }
            "import" => check_import(s, args),
            _ if event.starts_with("socket.") => {
                (!p.allow_network).then(|| Denial::new(Rule::Network, "opening or using a socket"))
            }
            _ if event.starts_with("ctypes.") && p.deny_native => {
                let who = asker(s, &p.ctypes_machinery);
                (!who.listed(s, &p.ctypes_callers)).then(|| {
                    Denial::new(
                        Rule::Native,
                        format!("native code through ctypes (from {})", who.filename),
                    )
                })
            }
            "sys._getframe"
            | "sys._current_frames"
            | "sys._current_exceptions"
            | "sys.settrace"
            | "sys.setprofile"
            | "gc.get_objects"
            | "gc.get_referrers"
            | "gc.get_referents"
            | "builtins.breakpoint" => introspection_call(s, event).or_else(|| {
                // The frames of warden's bootstrap, below the program's, hold its settings: no
                // one but the bootstrap reads them (pandas' `query(…, level=N)` reads the locals
                // of the frame `sys._getframe(N)` gives).
                (event == "sys._getframe")
                    .then(|| bootstrap_frame(s, arg(args, 0)))
                    .flatten()
            }),
            "object.__getattr__" => {
                let name = crate::python::str_ref(arg(args, 1))?;
                if !FRAME_ATTRIBUTES.contains(&name) {
                    return None;
                }
                // A library reading it itself names it (`traceback` reads `tb.tb_frame`,
                // `inspect` reads `func.__code__`); a C callable the program handed a library
                // (`Series.map(operator.attrgetter("tb_frame"))`) reads it from the library's frame.
                let names = [name];
                let (top, named) = crate::python::asker_naming(s, &[], &names);
                // Who reads, past the introspection machinery (`inspect`): the first frame, unless
                // that is the machinery (one walk, not two, for the library reads of every import).
                let reader_is_library = if top.listed(s, &p.introspection_machinery) {
                    asker(s, &p.introspection_machinery).library
                } else {
                    top.library
                };
                if !reader_is_library {
                    return Some(Denial::new(
                        Rule::Introspection,
                        format!("reading `.{name}` from the program"),
                    ));
                }
                (!named).then(|| {
                    Denial::new(
                        Rule::Introspection,
                        format!(
                            "reading `.{name}` through {} (a callback such as \
                             map(operator.attrgetter(\"tb_frame\"), …)?)",
                            top.filename
                        ),
                    )
                })
            }
            "object.__setattr__" | "object.__delattr__" => {
                let name = crate::python::str_ref(arg(args, 1))?;
                if name != "__code__" {
                    return None;
                }
                let who = asker(s, &[]);
                (!who.library)
                    .then(|| Denial::new(Rule::CodeObject, "replacing a function's `__code__`"))
            }
            // CPython drops a hook whose addition another hook refused (and returns None): the
            // new hook is never called. See docs/enforcement.md.
            "sys.addaudithook" => Some(Denial::new(Rule::AuditHook, "adding an audit hook")),
            _ => None,
        }
    }
}

/// A frame of warden's bootstrap handed to anyone but the bootstrap.
///
/// # Safety
/// GIL held; `frame` null or a valid reference.
unsafe fn bootstrap_frame(s: &Settings, frame: *mut ffi::PyObject) -> Option<Denial> {
    // SAFETY: the type is checked before the frame's code is read; references released.
    let file = unsafe {
        if frame.is_null()
            || ffi::Py_TYPE(frame) != std::ptr::addr_of_mut!(crate::python::PyFrame_Type)
        {
            return None;
        }
        let code = ffi::PyFrame_GetCode(frame.cast());
        let file = crate::python::get_attr(code.cast(), crate::python::Attribute::Filename);
        ffi::Py_DECREF(code.cast());
        if file.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let text = text_of(file);
        ffi::Py_DECREF(file);
        text?
    };
    if file != s.interpreter.bootstrap {
        return None;
    }
    // SAFETY: GIL held (caller).
    let who = unsafe { asker(s, &[]) };
    (*who.filename != *s.interpreter.bootstrap).then(|| {
        Denial::new(
            Rule::Introspection,
            "reading a frame of warden's bootstrap (sys._getframe past the program's first frame)",
        )
    })
}

fn process_words(event: &str, _args: *mut ffi::PyObject) -> String {
    match event {
        "os.fork" | "os.forkpty" => "forking the interpreter".to_owned(),
        "os.kill" | "os.killpg" | "os.pidfd_open" => "signalling a process".to_owned(),
        _ => "starting a process".to_owned(),
    }
}

/// A frame, the object graph or tracing asked for by calling a function (`sys._getframe`,
/// `gc.get_objects`, `sys.settrace`…): from the program, denied; from a library, allowed when the
/// library's code names the function itself (its own bookkeeping: typing, enum, logging, pandas'
/// scopes, patsy's `EvalEnvironment`), denied when it calls a callable the program handed it
/// (`Series.map(sys._getframe)`, `np.vectorize(gc.get_objects)`).
///
/// # Safety
/// GIL held.
unsafe fn introspection_call(s: &Settings, event: &str) -> Option<Denial> {
    let function = event.rsplit('.').next().unwrap_or(event);
    let names: &[&str] = if function == "_getframe" {
        &crate::rules::FRAME_FUNCTIONS
    } else {
        std::slice::from_ref(&function)
    };
    // SAFETY: GIL held (caller).
    let (who, named) =
        unsafe { crate::python::asker_naming(s, &s.policy.introspection_machinery, names) };
    if !who.library {
        return Some(Denial::new(
            Rule::Introspection,
            format!("{event} from the program"),
        ));
    }
    (!named).then(|| {
        Denial::new(
            Rule::Introspection,
            format!(
                "{event} through {} (a callback such as map(sys._getframe, …)?)",
                who.filename
            ),
        )
    })
}

/// An import: the program's are judged by the policy's patterns; a library's own `import`
/// statements are allowed (pandas imports subprocess, numpy imports ctypes), a library *calling* an
/// import function for someone (`Series.map(importlib.import_module)`) gets the denylist, and so
/// does a builtin the program calls importing a module the runtime lists (`runtime_imports`).
///
/// # Safety
/// GIL held.
unsafe fn check_import(s: &Settings, args: *mut ffi::PyObject) -> Option<Denial> {
    let p = &s.policy;
    // SAFETY: GIL held (caller).
    let module = unsafe { text_of(arg(args, 0)) }?;
    if let Some(denial) = interpreter_internal(&module) {
        return Some(denial);
    }
    // The frame running the event: a library's own `import` statement (the import system's too:
    // `<frozen importlib._bootstrap_external>` imports `importlib.readers` for itself).
    // SAFETY: GIL held (caller).
    let top = unsafe { asker(s, &[]) };
    if top.library && top.importing() {
        return None;
    }
    // Otherwise the import was asked for through the import system: judge whoever called it.
    // SAFETY: GIL held (caller).
    let who = unsafe { asker(s, &p.import_machinery) };
    if who.library && who.importing() {
        return None;
    }
    let denied = s.deny.denied(&module);
    if who.library {
        if !denied {
            return None;
        }
        return Some(Denial::new(
            Rule::Import,
            format!(
                "importing the denied module `{module}` through {}",
                who.filename
            ),
        ));
    }
    if denied {
        return Some(Denial::new(
            Rule::Import,
            format!("importing the denied module `{module}`"),
        ));
    }
    // The interpreter's own C code imports a few modules the first time the program calls a
    // builtin (`datetime.strptime` imports `_strptime`): the program's frame is calling, not
    // running an import statement, and the module is one the runtime lists as such.
    if !top.library && !top.importing() && s.runtime_imports.matches(&module, false) {
        return None;
    }
    (!s.allow.matches(&module, false)).then(|| {
        Denial::new(
            Rule::Import,
            format!("importing `{module}`, which the policy does not allow"),
        )
    })
}

/// A path read or write against the roots.
///
/// # Safety
/// GIL held; `object` null or a valid reference.
unsafe fn check_path(
    s: &Settings,
    object: *mut ffi::PyObject,
    write: bool,
    event: &str,
) -> Option<Denial> {
    // SAFETY: GIL held (caller).
    unsafe { check_path_at(s, object, None, write, event) }
}

/// A path read or write against the roots, relative to `dir_fd` when one is given (a negative
/// one is none: the events say `-1`).
///
/// # Safety
/// GIL held; `object` null or a valid reference.
unsafe fn check_path_at(
    s: &Settings,
    object: *mut ffi::PyObject,
    dir_fd: Option<i64>,
    write: bool,
    event: &str,
) -> Option<Denial> {
    // SAFETY: GIL held (caller).
    let path = match unsafe { path_arg(object) } {
        Ok(Some(path)) => path,
        Ok(None) => return None,
        Err(()) => {
            return Some(Denial::new(
                Rule::PathType,
                format!("{event} with a path that is neither str, bytes nor os.PathLike"),
            ))
        }
    };
    judge_path(s, &path, dir_fd.filter(|fd| *fd >= 0), write, event)
}

/// `path` judged by its real target: made absolute against `dir_fd`'s directory or the working
/// directory, every symbolic link resolved as far as the path exists (`/usr/bin/X11/../../etc/passwd`
/// is `/etc/passwd` when `/usr/bin/X11` is a link to `.`: the kernel follows a link before the `..`
/// after it), then checked against the roots.
fn judge_path(
    s: &Settings,
    path: &str,
    dir_fd: Option<i64>,
    write: bool,
    event: &str,
) -> Option<Denial> {
    let p = &s.policy;
    let rule = if write { Rule::Write } else { Rule::Read };
    let written = if path.starts_with('/') {
        path.to_owned()
    } else {
        let base = match dir_fd {
            Some(fd) => match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
                Ok(dir) => dir.to_string_lossy().into_owned(),
                Err(_) => {
                    return Some(Denial::new(
                        rule,
                        format!("{event} of {path} relative to descriptor {fd}, which is no directory the hook can name"),
                    ))
                }
            },
            None => std::env::current_dir()
                .map(|dir| dir.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "/".to_owned()),
        };
        format!("{base}/{path}")
    };
    let path = crate::paths::resolved(&p.write_roots, &written);
    if write {
        return (!under(&p.write_roots, &path)).then(|| {
            Denial::new(
                Rule::Write,
                format!("writing {path}, outside the write roots"),
            )
        });
    }
    (!s.readable(&path)).then(|| {
        Denial::new(
            Rule::Read,
            format!("reading {path}, outside the read roots"),
        )
    })
}

/// `os.symlink(target, link)`: the target, resolved against the link's directory, must be readable.
///
/// # Safety
/// GIL held; `target` and `link` null or valid references.
unsafe fn check_link_target(
    s: &Settings,
    target: *mut ffi::PyObject,
    link: *mut ffi::PyObject,
    event: &str,
) -> Option<Denial> {
    // SAFETY: GIL held (caller).
    let (Ok(Some(target)), Ok(Some(link))) =
        (unsafe { path_arg(target) }, unsafe { path_arg(link) })
    else {
        return None;
    };
    let cwd = std::env::current_dir()
        .map(|dir| dir.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_owned());
    let target = link_target(&target, &normalise(&link, &cwd));
    (!s.readable(&target)).then(|| {
        Denial::new(
            Rule::Read,
            format!("{event} to {target}, outside the read roots"),
        )
    })
}

/// A module body run by the import system: the module its file is (`ftplib.py` under the stdlib,
/// `nltk/downloader.py` under site-packages, `<frozen zipimport>`) is judged as an import by
/// whoever asked for it, as [`check_import`] judges the `import` event.
///
/// # Safety
/// GIL held; `code` null or a valid reference.
unsafe fn check_module_body(
    s: &Settings,
    code: *mut ffi::PyObject,
    who: &crate::python::Asker,
) -> Option<Denial> {
    // SAFETY: GIL held (caller).
    let filename = unsafe { module_code_file(code) }?;
    let module = s.module_of_file(&filename)?;
    judge_import(s, &module, who)
}

/// The import system reading a `.pyc` from outside the runtime (the work dir, `/tmp`): compiled
/// code the program could have written, under any file name (a runtime file's, to pass for
/// library code), which `sys.path` or a loader of its own would make the import system run.
///
/// # Safety
/// GIL held; `object` null or a valid reference.
unsafe fn planted_bytecode(s: &Settings, object: *mut ffi::PyObject) -> Option<Denial> {
    // SAFETY: GIL held (caller); the text is used while `object` (the event's) is alive.
    let path = unsafe { crate::python::str_ref(object) }?;
    if !path.ends_with(".pyc") {
        return None;
    }
    // SAFETY: GIL held (caller).
    let who = unsafe { asker(s, &[]) };
    if !who
        .filename
        .starts_with("<frozen importlib._bootstrap_external")
    {
        return None;
    }
    let path = if crate::rules::is_plain_absolute(path) {
        path.to_owned()
    } else {
        let cwd = std::env::current_dir()
            .map(|dir| dir.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/".to_owned());
        normalise(path, &cwd)
    };
    (!s.is_trusted_file(&path)).then(|| {
        Denial::new(
            Rule::Deserialise,
            format!("importing compiled code from {path}, outside the runtime"),
        )
    })
}

/// The interpreter's own test and internal modules, denied whoever imports them and whatever the
/// policy says: no library of a runtime needs them, and they reach past the hook (a
/// subinterpreter from `_xxsubinterpreters` or `_testcapi.run_in_subinterp` has its own
/// `_posixsubprocess` and `_imp`, which `install` did not wrap; `_testcapi`, `_testinternalcapi`
/// read and write raw memory).
fn interpreter_internal(module: &str) -> Option<Denial> {
    let top = module.split('.').next().unwrap_or(module);
    (top.starts_with("_test")
        || matches!(top, "_xxsubinterpreters" | "_xxtestfuzz" | "_ctypes_test"))
    .then(|| {
        Denial::new(
            Rule::Import,
            format!("importing `{module}`, one of the interpreter's internal test modules"),
        )
    })
}

/// The import system's functions that the interpreter's own import (an import statement, a C
/// import) or `importlib.import_module` enter it through.
const IMPORT_ENTRIES: [&str; 3] = ["_find_and_load", "_gcd_import", "_handle_fromlist"];

/// The policy's verdict on `module` imported for `who` (the first frame outside the import
/// system): a library's own import statement is allowed, a library calling an importer gets the
/// denylist, the program the denylist and the allowlist.
fn judge_import(s: &Settings, module: &str, who: &crate::python::Asker) -> Option<Denial> {
    if let Some(denial) = interpreter_internal(module) {
        return Some(denial);
    }
    if who.library && who.importing() {
        return None;
    }
    let denied = s.deny.denied(module);
    if who.library {
        return denied.then(|| {
            Denial::new(
                Rule::Import,
                format!(
                    "importing the denied module `{module}` through {}",
                    who.filename
                ),
            )
        });
    }
    if denied {
        return Some(Denial::new(
            Rule::Import,
            format!("importing the denied module `{module}`"),
        ));
    }
    if !who.importing() && s.runtime_imports.matches(module, false) {
        return None;
    }
    (!s.allow.matches(module, false)).then(|| {
        Denial::new(
            Rule::Import,
            format!("importing `{module}`, which the policy does not allow"),
        )
    })
}
