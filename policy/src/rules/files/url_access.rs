//! FILE703 url-access.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# FILE703 url-access

## What it does
Denies URLs (`http://`, `https://`, `ftp://`, `s3://`, `file://`…) given to file APIs such as
`pd.read_csv`, `np.loadtxt` or `open`.

## Why is this bad?
Data readers fetch URLs themselves: that is network access (exfiltration, server-side request forgery
against internal services) hidden in an innocent-looking call. The jail has no network, so the call
would fail anyway; denying it explains why.

## Example
```python
pd.read_csv("http://169.254.169.254/latest/meta-data/")
```
Pass data as input files; the program cannot use the network.

## Evasions handled
- Any scheme, through literals, variables bound to literals and f-string prefixes.

## Known gaps
- Computed URLs are reported as dynamic paths (FILE704); the network namespace blocks them.
"#;

pub(crate) fn report(checker: &mut Checker<'_>, url: &str, api: &str, range: TextRange) {
    let scheme = url.split("://").next().unwrap_or_default();
    checker.report(
        Rule::UrlAccess,
        range,
        format!("`{api}` is given a `{scheme}://` URL: that is network access"),
        "the program has no network; ask for the data to be provided as an input file",
    );
}
