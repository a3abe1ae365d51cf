//! FILE701 path-not-readable.
//!
//! The readable roots are defined here. Whether a path is inside them is judged in `files/mod.rs`,
//! with the same normalisation as FILE702's writable roots, after the path has been computed there.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::settings::Policy;

pub(crate) const DOC: &str = r#"# FILE701 path-not-readable

## What it does
Denies a path outside the policy's read roots (`files.read`, plus the write roots) given to a file API
that reads: `open`, `pathlib.Path`, the pandas readers (`pd.read_csv`…), `np.loadtxt`, `np.fromfile`,
`np.load`, `linecache`, `fileinput`, image and SciPy readers, the source of a `shutil` copy
(`shutil.copy`, `copyfile`, `copytree`…), `shutil.make_archive`'s `root_dir`, the archive
`shutil.unpack_archive`, `tarfile.open` and `zipfile.ZipFile` read, `os.listdir`/`scandir`/`walk`/`chdir`.

## Why is this bad?
Host secrets (`/etc/shadow`, `~/.ssh/id_rsa`, `/proc/self/environ`) are read through ordinary file
APIs; data libraries read files without looking like it (`pd.read_csv('/etc/passwd', sep=':')`).

## Example
```python
open("/etc/passwd").read()
```
Read the input files from the work dir with relative paths (`open("data.csv")`).

## Evasions handled
- Normalisation before matching: `..` traversal, repeated slashes, `~` expansion (always outside).
- Paths built from literals: variables bound to literals, `os.path.join`, `Path("/etc") / "passwd"`,
  concatenation, and the literal prefix of f-strings (`f"/etc/{name}"`).

## Known gaps
- Fully computed paths are FILE704's business; the jail's Landlock ruleset enforces the same roots.
"#;

/// The roots a program may read: `files.read` and `files.write`, sorted, without repeats.
pub(crate) fn roots(policy: &Policy) -> Vec<&str> {
    let mut roots: Vec<&str> = policy
        .files
        .read
        .iter()
        .chain(policy.files.write.iter())
        .map(String::as_str)
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

pub(crate) fn report(checker: &mut Checker<'_>, path: &str, api: &str, range: TextRange) {
    let hint = super::roots_hint("read", &roots(checker.policy));
    checker.report(
        Rule::PathNotReadable,
        range,
        format!("`{api}` reads `{path}`, outside the readable roots"),
        hint,
    );
}
