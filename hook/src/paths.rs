//! A path's real target, as the kernel will resolve it: every component's symbolic link followed
//! (a link before a `..` first), `/proc/<own pid>` read as `/proc/self`.
//!
//! The directories of the read-only tree do not change while the program runs: the real directory
//! of a path there is kept (per thread) and looked up again only for its last component. Paths that
//! lead through the write roots (where the program plants links) or `/proc` are resolved afresh.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::rules::{as_proc_self, is_plain_absolute, normalise, real_path, under};

/// Directories kept at most (the import system opens a few thousand files in a few hundred).
const MAX_KEPT: usize = 4096;

thread_local! {
    /// A directory as written (absolute, no `.` or `..` components) → its real path.
    static DIRECTORIES: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// The real target of the absolute path `written`, normalised.
pub fn resolved(write_roots: &[String], written: &str) -> String {
    let pid = std::process::id();
    let already = is_plain_absolute(written);
    let lexical = if already {
        written.to_owned()
    } else {
        normalise(written, "/")
    };
    let plain = already || !written.split('/').any(|part| part == ".." || part == ".");
    let volatile = |path: &str| under(write_roots, path) || path.starts_with("/proc");
    if plain && !volatile(&lexical) {
        if let Some((directory, name)) = lexical.rsplit_once('/') {
            let directory = if directory.is_empty() { "/" } else { directory };
            let with_name = |real: &str| {
                if real == "/" {
                    format!("/{name}")
                } else {
                    format!("{real}/{name}")
                }
            };
            // The path under its directory's real path (kept, or found and kept when it stays in
            // the read-only tree).
            let kept =
                DIRECTORIES.with(|kept| kept.borrow().get(directory).map(|real| with_name(real)));
            let candidate = kept.or_else(|| {
                let real = real_path(directory)
                    .map(|real| normalise(&real, "/"))
                    .unwrap_or_else(|| directory.to_owned());
                (!volatile(&real)).then(|| {
                    DIRECTORIES.with(|kept| {
                        let mut kept = kept.borrow_mut();
                        if kept.len() < MAX_KEPT {
                            kept.insert(directory.to_owned(), real.clone());
                        }
                    });
                    with_name(&real)
                })
            });
            if let Some(candidate) = candidate {
                // The last component may itself be a link.
                let is_link = std::fs::symlink_metadata(&candidate)
                    .is_ok_and(|meta| meta.file_type().is_symlink());
                if !is_link {
                    return as_proc_self(candidate, pid);
                }
            }
        }
    }
    let real = real_path(written)
        .map(|real| normalise(&real, "/"))
        .unwrap_or(lexical);
    as_proc_self(real, pid)
}
