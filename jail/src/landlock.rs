//! Landlock: which files the program may read, write and execute, whatever the mounts show.
//!
//! Owns: the ruleset as data ([`LandlockPlan`], derived from the rules file's file roots plus the few
//! system paths the interpreter needs) and applying it to the program's process (jail side, after
//! pivot_root: a Landlock-restricted process can no longer change mounts). Uses the best ABI the
//! kernel offers, best effort: rights an older kernel does not know are left out, and the report says
//! which ABI was in force.
//!
//! Does not own: the mounts (`mounts.rs`) or the decision to refuse a run when Landlock is required
//! but missing (`plan.rs` does that before anything starts).

use std::path::PathBuf;

use ::landlock::{
    Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use nix::errno::Errno;
use serde::Serialize;

use crate::error::SysError;

/// The newest ABI whose rights this module was written and tested against. Newer kernels still
/// enforce these; an older kernel enforces the subset it knows.
const TARGET_ABI: ABI = ABI::V6;

/// A kind of access granted beneath a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// Read files and list directories.
    Read,
    /// Read, and execute binaries (the interpreter's installation).
    ReadExec,
    /// Read, create, write, truncate, rename and remove; never execute, never a FIFO or a device
    /// node (seccomp refuses them too, `seccomp::DEVICE_NODE_TYPES`).
    ReadWrite,
    /// Read a single file.
    ReadFile,
    /// List directories (nothing else).
    ListDir,
    /// Read, write and ioctl a device node.
    Device,
}

impl Grant {
    fn access(self) -> BitFlags<AccessFs> {
        let read = AccessFs::ReadFile | AccessFs::ReadDir;
        match self {
            Grant::Read => read,
            Grant::ReadExec => read | AccessFs::Execute,
            Grant::ReadWrite => {
                read | AccessFs::WriteFile
                    | AccessFs::Truncate
                    | AccessFs::RemoveDir
                    | AccessFs::RemoveFile
                    | AccessFs::MakeDir
                    | AccessFs::MakeReg
                    | AccessFs::MakeSock
                    | AccessFs::MakeSym
                    | AccessFs::Refer
            }
            Grant::ReadFile => AccessFs::ReadFile.into(),
            Grant::ListDir => AccessFs::ReadDir.into(),
            Grant::Device => {
                AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev
            }
        }
    }
}

/// One rule: `grant` beneath `path` (jail view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Rule {
    pub path: PathBuf,
    pub grant: Grant,
    pub why: String,
}

/// The Landlock part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LandlockPlan {
    /// The kernel's ABI at plan time; `None`: Landlock is unavailable and the layer is off.
    pub abi: Option<u32>,
    /// Refuse to start the program unless the ruleset is enforced.
    pub required: bool,
    pub rules: Vec<Rule>,
}

impl LandlockPlan {
    /// The layer as reports name it: `abi-N` or `none`.
    pub fn report(&self) -> String {
        match self.abi {
            Some(abi) => format!("abi-{abi}"),
            None => "none".into(),
        }
    }
}

fn errno_of(err: &(dyn std::error::Error + 'static)) -> Errno {
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Errno::from_raw(io.raw_os_error().unwrap_or(libc::EPERM));
        }
        current = err.source();
    }
    Errno::EPERM
}

/// Restricts the calling process (jail side: after pivot_root and no_new_privs, before seccomp).
/// Paths that do not exist in the jail are skipped: there is nothing beneath them to grant.
pub fn apply(plan: &LandlockPlan) -> Result<(), SysError> {
    if plan.abi.is_none() {
        return Ok(());
    }
    let fail = |call: &'static str, arg: String| {
        move |err: ::landlock::RulesetError| SysError::new(call, arg, errno_of(&err))
    };
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .and_then(|r| r.handle_access(AccessNet::from_all(TARGET_ABI)))
        .and_then(|r| r.scope(Scope::from_all(TARGET_ABI)))
        .and_then(|r| r.create())
        .map_err(fail("landlock_create_ruleset", "fs, tcp, scopes".into()))?;
    for rule in &plan.rules {
        let fd = match PathFd::new(&rule.path) {
            Ok(fd) => fd,
            Err(err) if errno_of(&err) == Errno::ENOENT => continue,
            Err(err) => {
                return Err(SysError::new(
                    "open(O_PATH)",
                    rule.path.display(),
                    errno_of(&err),
                ))
            }
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rule.grant.access()))
            .map_err(fail("landlock_add_rule", rule.path.display().to_string()))?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(fail("landlock_restrict_self", String::new()))?;
    if plan.required && status.ruleset == RulesetStatus::NotEnforced {
        return Err(SysError::new(
            "landlock_restrict_self",
            "not enforced",
            Errno::EOPNOTSUPP,
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn writable_roots_never_get_execute() {
        assert!(!Grant::ReadWrite.access().contains(AccessFs::Execute));
        assert!(!Grant::ReadWrite.access().contains(AccessFs::MakeChar));
        assert!(!Grant::ReadWrite.access().contains(AccessFs::MakeBlock));
        assert!(!Grant::ReadWrite.access().contains(AccessFs::MakeFifo));
        assert!(Grant::ReadExec.access().contains(AccessFs::Execute));
        assert!(!Grant::Read.access().contains(AccessFs::WriteFile));
    }

    #[test]
    fn the_report_names_the_abi() {
        let plan = LandlockPlan {
            abi: Some(7),
            required: true,
            rules: vec![],
        };
        assert_eq!(plan.report(), "abi-7");
        assert_eq!(LandlockPlan { abi: None, ..plan }.report(), "none");
    }
}
