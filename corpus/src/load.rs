//! Finding the cases under the directories given to `warden corpus run`.
//!
//! A directory with an `index.jsonl` is an external corpus (`index.rs`); any other directory is
//! searched recursively for `*.py` files in warden's header format (`header.rs`), except that a
//! subdirectory with an `index.jsonl` is loaded as an index corpus of its own, and a subdirectory
//! none of whose `*.py` files has a `warden-case:` line holds no cases (`corpus/sessions/`, whose
//! script generates the session corpus's inputs) and is passed over. Does not own: what a
//! case expects once loaded (`case.rs`) or running it (`runner.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::case::{AttackSpec, BenignSpec, Case, Corpus, Kind};
use super::header::{self, CaseSpec};
use super::index;

/// Loads every corpus under `dirs`. All problems are collected (one message per file and line)
/// rather than stopping at the first.
pub fn load(dirs: &[PathBuf]) -> Result<Vec<Corpus>, Vec<String>> {
    let mut corpora = Vec::new();
    let mut errors = Vec::new();
    for dir in dirs {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => load_dir(dir, &mut corpora, &mut errors),
            Ok(_) => errors.push(format!("{}: not a directory", dir.display())),
            Err(err) => errors.push(format!("{}: {err}", dir.display())),
        }
    }
    check_unique_ids(&corpora, &mut errors);
    if errors.is_empty() {
        Ok(corpora)
    } else {
        Err(errors)
    }
}

fn load_dir(dir: &Path, corpora: &mut Vec<Corpus>, errors: &mut Vec<String>) {
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    if dir.join("index.jsonl").is_file() {
        match index::load(dir, &name) {
            Ok(corpus) => corpora.push(corpus),
            Err(mut errs) => errors.append(&mut errs),
        }
        return;
    }
    let mut files = Vec::new();
    let mut index_dirs = Vec::new();
    walk(dir, &mut files, &mut index_dirs, errors);
    let mut files = without_caseless_subdirs(dir, files);
    for sub in index_dirs {
        load_dir(&sub, corpora, errors);
    }
    if files.is_empty() {
        if corpora.is_empty() && errors.is_empty() {
            errors.push(format!(
                "{}: no *.py case and no index.jsonl found",
                dir.display()
            ));
        }
        return;
    }
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        match load_file(&file, &name) {
            Ok(case) => cases.push(case),
            Err(err) => errors.push(err),
        }
    }
    corpora.push(Corpus {
        name,
        dir: dir.to_path_buf(),
        format: "headers",
        cases,
    });
}

/// `files` without those of subdirectories of `dir` where no file has a `warden-case:` header
/// line: such a directory holds helper scripts, not cases. A file without a header beside cases
/// (or in `dir` itself) stays, and is reported as malformed.
fn without_caseless_subdirs(dir: &Path, files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for file in files {
        let parent = file.parent().unwrap_or(dir).to_path_buf();
        by_dir.entry(parent).or_default().push(file);
    }
    by_dir
        .into_iter()
        .filter(|(parent, files)| {
            parent == dir
                || files.iter().any(|file| {
                    std::fs::read(file).is_ok_and(|bytes| {
                        header::fields(file, &bytes)
                            .map_or(true, |fields| fields.contains_key("warden-case"))
                    })
                })
        })
        .flat_map(|(_, files)| files)
        .collect()
}

/// Collects `*.py` files; directories holding an `index.jsonl` are set aside, not entered.
fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    index_dirs: &mut Vec<PathBuf>,
    errors: &mut Vec<String>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            errors.push(format!("{}: cannot list: {err}", dir.display()));
            return;
        }
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden || path.is_symlink() {
            continue;
        }
        if path.is_dir() {
            if path.join("index.jsonl").is_file() {
                index_dirs.push(path);
            } else {
                walk(&path, files, index_dirs, errors);
            }
        } else if path.extension().is_some_and(|e| e == "py") {
            files.push(path);
        }
    }
}

fn load_file(file: &Path, corpus: &str) -> Result<Case, String> {
    let bytes =
        std::fs::read(file).map_err(|err| format!("{}: cannot read: {err}", file.display()))?;
    let header = header::parse(file, &bytes).map_err(|err| err.to_string())?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().replace('_', "-"))
        .unwrap_or_default();
    if stem != header.id {
        return Err(format!(
            "{}:1: warden-case is `{}` but the file name says `{stem}` (the id is the stem with `_` → `-`)",
            file.display(),
            header.id
        ));
    }
    let kind = match header.spec {
        CaseSpec::Attack {
            expect_static,
            expect_rules,
            expect_jail,
            expect_runtime,
        } => Kind::Attack(AttackSpec {
            expect_static: Some(expect_static),
            expect_rules,
            expect_runtime,
            effects: expect_jail,
            watched: Vec::new(),
        }),
        CaseSpec::Benign { expect_output } => Kind::Benign(BenignSpec {
            expect_output: Some(expect_output),
            run: true,
            static_file: None,
            run_without_policy: false,
        }),
    };
    Ok(Case {
        id: header.id,
        corpus: corpus.to_owned(),
        file: file.to_path_buf(),
        group: header.group,
        technique: header.technique,
        kind,
    })
}

fn check_unique_ids(corpora: &[Corpus], errors: &mut Vec<String>) {
    let mut seen: BTreeMap<(&str, &str), &Path> = BTreeMap::new();
    for corpus in corpora {
        for case in &corpus.cases {
            if let Some(first) = seen.insert((&corpus.name, &case.id), &case.file) {
                errors.push(format!(
                    "{}: case id `{}` is also used by {}",
                    case.file.display(),
                    case.id,
                    first.display()
                ));
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const BENIGN: &str = "# warden-case: stats-mean\n# group: BENIGN\n# technique: t\n\
        # expect-static: allow\n# expect-output: OK\nprint('OK')\n";

    #[test]
    fn header_dirs_are_searched_recursively() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "benign/stats_mean.py", BENIGN);
        write(dir.path(), "benign/notes.txt", "not a case");
        let corpora = load(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(corpora.len(), 1);
        assert_eq!(corpora[0].cases.len(), 1);
        assert_eq!(corpora[0].cases[0].id, "stats-mean");
    }

    #[test]
    fn problems_are_all_reported_with_their_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "stats_mean.py", BENIGN);
        write(dir.path(), "wrong_name.py", BENIGN);
        write(dir.path(), "no_header.py", "print(1)\n");
        let errors = load(&[dir.path().to_path_buf(), dir.path().join("missing")]).unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(errors
            .iter()
            .any(|e| e.contains("no_header.py:1: the header has no `warden-case:`")));
        assert!(errors
            .iter()
            .any(|e| e.contains("wrong_name.py:1: warden-case is `stats-mean`")));
        assert!(errors.iter().any(|e| e.contains("missing: ")));
    }

    #[test]
    fn subdirectories_without_cases_are_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "benign/stats_mean.py", BENIGN);
        write(
            dir.path(),
            "sessions/make_inputs.py",
            "#!/usr/bin/env python3\n# writes inputs\nprint(1)\n",
        );
        let corpora = load(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(corpora[0].cases.len(), 1);
        // Beside cases, a file without a header is still a mistake.
        write(dir.path(), "benign/helper.py", "print(1)\n");
        let errors = load(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(
            errors.len() == 1 && errors[0].contains("helper.py:1: the header has no"),
            "{errors:?}"
        );
        // A directory given as the corpus is never passed over.
        let errors = load(&[dir.path().join("sessions")]).unwrap_err();
        assert!(errors[0].contains("make_inputs.py:1:"), "{errors:?}");
    }

    #[test]
    fn an_empty_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let errors = load(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(errors[0].contains("no *.py case"), "{errors:?}");
    }
}
