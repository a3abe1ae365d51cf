//! A path's real target, as the kernel will resolve it: every component's symbolic link followed
//! (a link before a `..` first), `/proc/<own pid>` read as `/proc/self`.
//!
//! The directories of the read-only tree do not change while the program runs: the real directory
//! of a path there is kept (per thread) and looked up again only for its last component. Paths that
//! lead through the write roots (where the program plants links) or `/proc` are resolved afresh.

use std::cell::RefCell;
use std::rc::Rc;

use crate::rules::{as_proc_self, is_plain_absolute, normalise, real_path, under, FastMap};

/// Directories kept at most (the import system opens a few thousand files in a few hundred).
const MAX_KEPT: usize = 4096;

/// Deepest directory resolved component by component (deeper ones are resolved afresh).
const MAX_COMPONENTS: usize = 64;

thread_local! {
    /// A directory as written (absolute, no `.` or `..` components) → its real path.
    static DIRECTORIES: RefCell<FastMap<Rc<str>>> = RefCell::new(FastMap::default());
}

/// The real target of the absolute path `written`, normalised.
pub fn resolved(write_roots: &[String], written: &str) -> String {
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
            if let Some(real) = real_directory(directory, &volatile, 0) {
                // The directory is most often its own real path: the path is then as written.
                let candidate = if *real == *directory {
                    None
                } else if &*real == "/" {
                    Some(format!("/{name}"))
                } else {
                    Some(format!("{real}/{name}"))
                };
                // The last component may itself be a link.
                let is_link = std::fs::symlink_metadata(candidate.as_deref().unwrap_or(&lexical))
                    .is_ok_and(|meta| meta.file_type().is_symlink());
                if !is_link {
                    return candidate.unwrap_or(lexical);
                }
            }
        }
    }
    let real = real_path(written)
        .map(|real| normalise(&real, "/"))
        .unwrap_or(lexical);
    as_proc_self(real, std::process::id())
}

/// The real path of the plain absolute `directory` of the read-only tree: its parent's real path
/// (kept) and its own name, followed when that is a link — one `lstat` for a directory not seen
/// before, not one `readlink` per component. `None` when it leads out of the read-only tree (the
/// write roots, `/proc`): such a path is resolved afresh each time.
fn real_directory(
    directory: &str,
    volatile: &dyn Fn(&str) -> bool,
    depth: usize,
) -> Option<Rc<str>> {
    if directory == "/" {
        return Some(Rc::from("/"));
    }
    if let Some(kept) = DIRECTORIES.with(|kept| kept.borrow().get(directory).cloned()) {
        return Some(kept);
    }
    if depth > MAX_COMPONENTS {
        return None;
    }
    let (parent, name) = directory.rsplit_once('/')?;
    let parent = if parent.is_empty() { "/" } else { parent };
    let real_parent = real_directory(parent, volatile, depth + 1)?;
    let candidate = if &*real_parent == "/" {
        format!("/{name}")
    } else {
        format!("{real_parent}/{name}")
    };
    let real = match std::fs::symlink_metadata(&candidate) {
        Ok(meta) if meta.file_type().is_symlink() => real_path(&candidate)
            .map(|real| normalise(&real, "/"))
            .unwrap_or(candidate),
        _ => candidate,
    };
    if volatile(&real) {
        return None;
    }
    let real: Rc<str> = Rc::from(real);
    DIRECTORIES.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() < MAX_KEPT {
            kept.insert(directory.to_owned(), Rc::clone(&real));
        }
    });
    Some(real)
}
