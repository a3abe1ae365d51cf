//! Names the commit warden was built from, for `warden_build_info{commit=…}` in `GET /metrics`:
//! `WARDEN_COMMIT` when set (a build outside a git checkout), else `git rev-parse --short=12 HEAD`,
//! else `unknown`. Rebuilt when the checked-out commit changes.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=WARDEN_COMMIT");
    let git_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.git");
    if git_dir.is_dir() {
        let head = git_dir.join("HEAD");
        println!("cargo:rerun-if-changed={}", head.display());
        // The branch's ref moves with every commit (packed refs when it has none of its own).
        if let Ok(text) = std::fs::read_to_string(&head) {
            if let Some(reference) = text.trim().strip_prefix("ref: ") {
                println!(
                    "cargo:rerun-if-changed={}",
                    git_dir.join(reference).display()
                );
            }
        }
        let packed = git_dir.join("packed-refs");
        if packed.exists() {
            println!("cargo:rerun-if-changed={}", packed.display());
        }
    }
    let commit = std::env::var("WARDEN_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            let out = Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .ok()?;
            let text = String::from_utf8(out.stdout).ok()?;
            (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=WARDEN_COMMIT={commit}");
}
