//! A run's input files: their names, number and size checked, decoded, written below a directory.
//!
//! Owns: the rules for an input's name (relative, in the work dir, no `..`), the caps on their
//! number and bytes (the server applies the configured ones before a job leaves it; a worker
//! applies [`InputCaps::CHECKED`]), and writing them out for the pipeline to place.
//!
//! Does not own: the work dir and placing files in it (`warden_gateway::files`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine;

use crate::wire::InputFile;

/// Checks an input file name and normalises it: a path relative to the work dir, possibly in
/// subdirectories (`inputs/sales.csv`; `.` and empty segments dropped), never `..`, absolute or
/// with NUL ([`warden_gateway::files::relative_name`]), at most 255 bytes a segment.
pub fn check_input_name(name: &str) -> Result<String, String> {
    if name.is_empty() || name.len() > 4096 {
        return Err(format!("input name {name:?} must be 1 to 4096 bytes long"));
    }
    warden_gateway::files::relative_name(name).map_err(|err| format!("input name: {err}"))
}

/// How many input files a run may carry, and their decoded bytes in total
/// (`admission.max_input_files`, `admission.max_input_bytes`): the worker writes each one before
/// the jail's clocks start, so their number is bounded like their size.
#[derive(Debug, Clone, Copy)]
pub struct InputCaps {
    pub max_files: usize,
    pub max_bytes: u64,
}

impl InputCaps {
    /// For the worker: the server applied the configured caps already.
    pub const CHECKED: Self = Self {
        max_files: usize::MAX,
        max_bytes: u64::MAX,
    };
}

/// Decodes the inputs and checks their number, names and sizes (the number and an estimate of the
/// size before decoding anything).
pub fn decode_inputs(
    inputs: &[InputFile],
    caps: InputCaps,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    if inputs.len() > caps.max_files {
        return Err(format!(
            "{} input files; a run may carry at most {} (admission.max_input_files)",
            inputs.len(),
            caps.max_files
        ));
    }
    let too_big = || {
        format!(
            "inputs exceed {} bytes in total (admission.max_input_bytes)",
            caps.max_bytes
        )
    };
    // Base64 is 4 characters per 3 bytes (less padding).
    let estimate = inputs
        .iter()
        .map(|input| input.content_base64.len() as u64 / 4 * 3)
        .fold(0u64, u64::saturating_add);
    if estimate > caps.max_bytes.saturating_add(2 * inputs.len() as u64) {
        return Err(too_big());
    }
    let mut seen = std::collections::BTreeSet::new();
    for input in inputs {
        let name = check_input_name(&input.name)?;
        if !seen.insert(name.clone()) {
            return Err(format!("two inputs are named {name:?}"));
        }
    }
    // A file cannot also be a directory of another input (`a` and `a/b`).
    for name in &seen {
        let mut prefix = name.as_str();
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            if seen.contains(parent) {
                return Err(format!(
                    "input {parent:?} is a file, so {name:?} cannot be placed below it"
                ));
            }
            prefix = parent;
        }
    }
    let mut total = 0u64;
    let mut decoded = Vec::with_capacity(inputs.len());
    for input in inputs {
        let name = check_input_name(&input.name)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(input.content_base64.as_bytes())
            .map_err(|err| format!("input {:?} is not valid base64: {err}", input.name))?;
        total = total.saturating_add(bytes.len() as u64);
        if total > caps.max_bytes {
            return Err(too_big());
        }
        decoded.push((name, bytes));
    }
    Ok(decoded)
}

/// Writes decoded inputs below `dir` (made here) at their relative paths, and returns the
/// top-level entries (files and directories) to place in the work dir: each is copied in by its
/// name, directories with what they hold.
pub fn write_inputs(inputs: &[(String, Vec<u8>)], dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tops: Vec<PathBuf> = Vec::new();
    for (name, bytes) in inputs {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create the directory of input {name}"))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write input {name}"))?;
        let top = dir.join(name.split('/').next().unwrap_or(name));
        if !tops.contains(&top) {
            tops.push(top);
        }
    }
    Ok(tops)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn input_names_must_stay_in_the_work_dir() {
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/../../x",
            "a/..",
            "/etc/passwd",
            "a\0b",
            &"x".repeat(256),
        ] {
            assert!(check_input_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "data.csv",
            ".hidden",
            "a b.txt",
            "ü.csv",
            "inputs/sales.csv",
        ] {
            assert_eq!(check_input_name(good).unwrap(), good);
        }
        assert_eq!(check_input_name("./a//b.csv").unwrap(), "a/b.csv");
    }

    #[test]
    fn inputs_in_subdirectories_are_written_below_their_top_entries() {
        let input = |name: &str, text: &str| InputFile {
            name: name.to_owned(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(text),
        };
        let caps = InputCaps {
            max_files: 8,
            max_bytes: 1000,
        };
        let decoded = decode_inputs(
            &[
                input("inputs/sales.csv", "a"),
                input("./inputs/2024/q1.csv", "b"),
                input("top.txt", "c"),
            ],
            caps,
        )
        .unwrap();
        assert_eq!(decoded[1].0, "inputs/2024/q1.csv");
        let dir = tempfile::tempdir().unwrap();
        let tops = write_inputs(&decoded, &dir.path().join("in")).unwrap();
        assert_eq!(
            tops,
            vec![dir.path().join("in/inputs"), dir.path().join("in/top.txt")]
        );
        assert_eq!(
            std::fs::read(dir.path().join("in/inputs/2024/q1.csv")).unwrap(),
            b"b"
        );
        let err = decode_inputs(&[input("a", "x"), input("a/b", "y")], caps).unwrap_err();
        assert!(err.contains("is a file"), "{err}");
        let err = decode_inputs(&[input("a/b", "x"), input("a//b", "y")], caps).unwrap_err();
        assert!(err.contains("two inputs"), "{err}");
    }

    #[test]
    fn inputs_are_decoded_and_capped() {
        let input = |name: &str, text: &str| InputFile {
            name: name.to_owned(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(text),
        };
        let caps = InputCaps {
            max_files: 3,
            max_bytes: 100,
        };
        let decoded = decode_inputs(&[input("a.csv", "x,y\n1,2\n")], caps).unwrap();
        assert_eq!(decoded[0].1, b"x,y\n1,2\n");
        assert!(decode_inputs(&[input("a", "x"), input("a", "y")], caps)
            .unwrap_err()
            .contains("two inputs"));
        assert!(decode_inputs(&[input("a", &"x".repeat(101))], caps)
            .unwrap_err()
            .contains("exceed"));
        // Exactly at the cap is fine, one byte over is not (whatever the padding).
        for size in 97..=100 {
            assert!(decode_inputs(&[input("a", &"x".repeat(size))], caps).is_ok());
        }
        // Too many files, refused before any is decoded (the last one is not even base64).
        let mut many: Vec<InputFile> = (0..3).map(|i| input(&format!("f{i}"), "")).collect();
        many.push(InputFile {
            name: "f3".to_owned(),
            content_base64: "!!".to_owned(),
        });
        let err = decode_inputs(&many, caps).unwrap_err();
        assert!(
            err.contains("at most 3") && err.contains("max_input_files"),
            "{err}"
        );
        // Far over the byte cap: refused from the base64 length alone.
        let err = decode_inputs(&[input("a", &"x".repeat(10_000))], caps).unwrap_err();
        assert!(err.contains("max_input_bytes"), "{err}");
        let bad = InputFile {
            name: "a".to_owned(),
            content_base64: "not base64!".to_owned(),
        };
        assert!(decode_inputs(&[bad], caps).unwrap_err().contains("base64"));
    }
}
