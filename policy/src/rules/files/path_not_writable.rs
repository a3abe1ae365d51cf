//! FILE702 path-not-writable.
//!
//! The writable roots are defined here. Whether a path is inside them is judged in `files/mod.rs`,
//! with the same normalisation as FILE701's readable roots, after the path has been computed there.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::settings::Policy;

pub(crate) const DOC: &str = r#"# FILE702 path-not-writable

## What it does
Denies a path outside the policy's write roots (`files.write`) given to a file API that writes:
`open(..., "w"/"a"/"x"/"+")`, `DataFrame.to_csv` and the other `to_*` writers, `savefig`, `np.save*`,
`tofile`, `extractall`/`extract`, and `pathlib.Path(...).write_text` and friends; the destination of a
`shutil` copy, both ends of `shutil.move` and `os.rename`/`replace`, `shutil.rmtree`, `shutil.chown`,
`shutil.make_archive`'s archive, `shutil.unpack_archive`'s `extract_dir`, `tempfile`'s `dir=`, and
`os.remove`/`unlink`/`rmdir`/`mkdir`/`makedirs`.

## Why is this bad?
Writing outside the work dir can plant files for other programs or poison the interpreter for later
runs (`/usr/lib/python3/json.py`).

## Example
```python
df.to_csv("/tmp/../etc/cron.d/job")
```
Write outputs with relative paths (`df.to_csv("result.csv")`): files in the work dir are collected.

## Evasions handled
- The same normalisation and literal tracking as FILE701; a mode that is not a literal counts as writing.

## Known gaps
- Fully computed paths are FILE704's business; the jail's Landlock ruleset enforces the same roots.
"#;

/// The roots a program may write: `files.write`, in the rules file's order.
pub(crate) fn roots(policy: &Policy) -> Vec<&str> {
    policy.files.write.iter().map(String::as_str).collect()
}

pub(crate) fn report(checker: &mut Checker<'_>, path: &str, api: &str, range: TextRange) {
    let hint = super::roots_hint("write", &roots(checker.policy));
    checker.report(
        Rule::PathNotWritable,
        range,
        format!("`{api}` writes `{path}`, outside the writable roots"),
        hint,
    );
}
