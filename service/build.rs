//! Names the commit warden was built from, for `warden --version` and `warden_build_info{commit=…}`
//! in `GET /metrics`: `WARDEN_COMMIT` when set (a build outside a git checkout), else
//! `git rev-parse --short=12 HEAD`, else
//! `unknown`. Rebuilt when the checked-out commit changes, in a clone or a worktree.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=WARDEN_COMMIT");
    // HEAD lives in the worktree's own git dir; branch refs and packed refs in the common one.
    if let (Some(git_dir), Some(common)) = (
        git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from),
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]).map(PathBuf::from),
    ) {
        let head = git_dir.join("HEAD");
        println!("cargo:rerun-if-changed={}", head.display());
        // The branch's ref moves with every commit (packed refs when it has none of its own).
        if let Ok(text) = std::fs::read_to_string(&head) {
            if let Some(reference) = text.trim().strip_prefix("ref: ") {
                println!(
                    "cargo:rerun-if-changed={}",
                    common.join(reference).display()
                );
            }
        }
        let packed = common.join("packed-refs");
        if packed.exists() {
            println!("cargo:rerun-if-changed={}", packed.display());
        }
    }
    let commit = std::env::var("WARDEN_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=WARDEN_COMMIT={commit}");
}

/// One line git prints in the crate's directory, or `None` (no git, not a checkout).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_owned())
}
