//! Capabilities: the program holds none.
//!
//! Owns: emptying the bounding, ambient, effective, permitted and inheritable sets (jail side). The
//! bounding set must be emptied while the process still has CAP_SETPCAP, i.e. before it changes to the
//! program's uid; the other sets are cleared explicitly afterwards because an unprivileged spawn keeps
//! the same uid and the kernel would not clear them on its own.
//!
//! Does not own: `no_new_privs` (set in `child.rs` right after) or uid changes (`child.rs`).

use crate::error::SysError;
use crate::sys;

/// The highest capability number the kernel knows (parent side, read before cloning).
pub fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(63)
}

/// Empties the bounding and ambient sets. A failure in the bounding set names the capability.
pub fn drop_bounding_and_ambient(last_cap: u32) -> Result<(), SysError> {
    sys::drop_bounding_set(last_cap)?;
    sys::clear_ambient_caps().map_err(SysError::at("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", ""))
}

/// Empties the effective, permitted and inheritable sets.
pub fn clear() -> Result<(), SysError> {
    sys::clear_capabilities().map_err(SysError::at("capset", "all empty"))
}
